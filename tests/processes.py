"""A child process with a hard time bound that holds even when the child leaves
children of its own behind.

`subprocess.run(..., capture_output=True, timeout=T)` kills only the direct child on
timeout and then reads its pipes to the end: a grandchild that inherited them (a
browser's renderer, a JVM an engine client started) keeps them open and the read
never returns, so the test hangs past every bound. Here the child leads a process
group of its own, its output goes to files (no pipe for a straggler to hold), and a
timeout kills the whole group.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
from pathlib import Path


def run_bounded(cmd: list[str], *, timeout: float, **popen) -> subprocess.CompletedProcess:
    """Run `cmd` to its end, or kill its whole process group after `timeout` seconds
    and raise `subprocess.TimeoutExpired`. Output is captured as text."""
    with tempfile.TemporaryDirectory() as tmp:
        out_path, err_path = Path(tmp, "out"), Path(tmp, "err")
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                    start_new_session=True, **popen)
            try:
                code = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                _kill_group(proc.pid)
                proc.wait()
                raise
        stdout = out_path.read_text(errors="replace")
        stderr = err_path.read_text(errors="replace")
    return subprocess.CompletedProcess(cmd, code, stdout, stderr)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
