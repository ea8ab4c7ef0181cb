"""Wall-clock time, injectable for tests: STRATA_NOW='2026-01-31 12:00:00'."""

from __future__ import annotations

import datetime as dt
import os

from strata.diagnostics import fail


def now() -> dt.datetime:
    """STRATA_NOW when set: a value that is no date and time is E084, as a bad
    STRATA_LOCK_TIMEOUT is (a ValueError here was E000 on every run and gc)."""
    fixed = os.environ.get("STRATA_NOW")
    if fixed:
        try:
            return dt.datetime.fromisoformat(fixed)
        except ValueError:
            raise fail("E084", f"STRATA_NOW is `{fixed}`: not a date and time", None,
                       "write it as 2026-01-31 12:00:00 (ISO 8601), or unset it for the "
                       "real time") from None
    return dt.datetime.now().replace(microsecond=0)


def now_text() -> str:
    return now().isoformat(sep=" ")
