"""The code is ruff-clean (STYLE: "type hints everywhere; ruff clean"), checked like
any other property so it cannot drift: ruff is pinned to a minor version in the test
extras because its default rules change between versions."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_the_repository_is_ruff_clean():
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "."],
                          cwd=REPO, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
