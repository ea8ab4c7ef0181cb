"""Wall-clock time, injectable for tests: STRATA_NOW='2026-01-31 12:00:00'; and the moment
a run binds run_date()/run_timestamp() to."""

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


def run_clock(at: str | None = None):
    """The moment run_date()/run_timestamp() are bound to: `--at` when given (a date,
    or a date and time), else now (STRATA_NOW when set). A value that is neither is
    E084."""
    from strata.sqlgen.clock import RunClock

    if at is None:
        return RunClock(now())
    found = RunClock.parse(at)
    if found is None:
        raise fail("E084", f"--at `{at}` is not a date or a date and time", None,
                   "write it as 2026-01-31 or 2026-01-31 12:00:00 (ISO 8601)")
    return found
