"""Strata's bytecode, compiled before anything is timed, as `pip install` leaves a package.

The bench venvs install Strata editable: the repository's `strata/` and `dialects/`
are the package. Python writes a module's bytecode on its first import, unless
PYTHONDONTWRITEBYTECODE is set, as it is on the shared bench machines: then every
timed Strata process compiled its ~60 modules from source, ~0.1 s a process that an
installed tool never pays (pip compiles dbt's and SQLMesh's bytecode when it installs
them). `compileall` writes the bytecode whatever that variable says; a module edited
afterwards is compiled again on import, so each harness calls this at its start.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def compile_strata(python: str | Path, tree: Path = REPO) -> None:
    """Compile `tree`'s strata/ and dialects/ for the interpreter that will run them
    (bytecode files are per Python version)."""
    subprocess.run([str(python), "-m", "compileall", "-q", "-j", "0",
                    str(tree / "strata"), str(tree / "dialects")],
                   check=True, capture_output=True)
