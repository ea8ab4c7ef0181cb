"""Wall-clock time, injectable for tests: STRATA_NOW='2026-01-31 12:00:00'."""

from __future__ import annotations

import datetime as dt
import os


def now() -> dt.datetime:
    fixed = os.environ.get("STRATA_NOW")
    if fixed:
        return dt.datetime.fromisoformat(fixed)
    return dt.datetime.now().replace(microsecond=0)


def now_text() -> str:
    return now().isoformat(sep=" ")
