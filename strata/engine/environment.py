"""What a strata process reads from its environment beyond its arguments: named crash
and pause points for the crash and lock tests, and settings given in seconds. Below
every engine module, which all may stop at a crash point.
"""

from __future__ import annotations

import os
import signal
import time

from strata.diagnostics import fail


def crash_point(step: str) -> None:
    """Named steps for crash and lock tests. STRATA_CRASH_AT=step (or step:model) kills
    the process there with SIGKILL. STRATA_PAUSE_AT=step says `paused at STEP` on
    stderr and waits STRATA_PAUSE_SECONDS (default 60), or until the file named by
    STRATA_RESUME_FILE exists, so a test can act (or kill it) meanwhile."""
    if os.environ.get("STRATA_CRASH_AT") == step:
        os.kill(os.getpid(), signal.SIGKILL)
    if os.environ.get("STRATA_PAUSE_AT") == step:
        import sys

        print(f"paused at {step}", file=sys.stderr, flush=True)
        until = time.monotonic() + float(os.environ.get("STRATA_PAUSE_SECONDS", "60"))
        resume = os.environ.get("STRATA_RESUME_FILE")
        while time.monotonic() < until and not (resume and os.path.exists(resume)):
            time.sleep(0.05)


def env_seconds(name: str, default: float, maximum: float, meaning: str) -> float:
    """A number of seconds from 0 to `maximum` in environment variable `name`, or
    `default` when it is unset; anything else is E084 saying `meaning`. `nan` compared
    false with every deadline and waited forever; `inf`, a negative or a huge value is
    no wait anyone means either."""
    text = os.environ.get(name)
    if text is None:
        return default
    try:
        seconds = float(text)
    except ValueError:
        seconds = None
    if seconds is None or not 0 <= seconds <= maximum:  # False for nan
        shown = "empty" if not text.strip() else f"`{text}`"
        raise fail("E084", f"{name} is {shown}: not a number of seconds from 0 to "
                   f"{maximum:g}", None, f"{meaning}; unset it for the default ({default:g})")
    return seconds
