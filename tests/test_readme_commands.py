"""The README's compile commands run as shown (one once failed: its --watermark was a
timestamp for a model whose cdc column is a date)."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
STRATA = str(Path(sys.executable).with_name("strata"))


def compile_block_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    block = text.split("## Compile", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    return [re.sub(r"\s+#.*$", "", line).strip() for line in block.splitlines()
            if line.startswith(".venv/bin/strata ")]


@pytest.mark.parametrize("command", compile_block_commands())
def test_a_readme_compile_command_runs(command, tmp_path):
    # not a staging folder of TPC-H data that another test process is generating
    # (tests/tpch_data.py): its files move away while the copy runs
    shutil.copytree(REPO / "examples", tmp_path / "examples",
                    ignore=shutil.ignore_patterns(".generating-*"))
    argv = shlex.split(command)
    proc = subprocess.run([STRATA, *argv[1:]], cwd=tmp_path, capture_output=True, text=True,
                          check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout or (tmp_path / "build").exists()
