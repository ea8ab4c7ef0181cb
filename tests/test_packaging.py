"""The distribution is `strata-models` (issue 38: `strata` on the package index is an
unrelated project): pyproject, the code's own messages and every install line of the
docs say so; the command and the import name stay `strata`."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import strata

ROOT = Path(__file__).resolve().parent.parent
# an install of the other project: `pip install strata`, `'strata[review]'`, `strata==1`
FOREIGN_INSTALL = re.compile(r"pip install [^\n`]*?(?<![\w/.-])['\"]?strata(?![\w-])(?!/)")


def test_the_distribution_name_is_ours_everywhere():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["name"] == strata.DISTRIBUTION == "strata-models"
    assert project["scripts"] == {"strata": "strata.cli.main:main"}
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
            *sorted(ROOT.glob("strata/**/*.py"))]
    for path in docs:
        text = path.read_text()
        assert not FOREIGN_INSTALL.search(text), f"{path}: {FOREIGN_INSTALL.search(text)}"
        assert "'strata[" not in text, path


def test_version_reads_the_distribution():
    strata_cmd = str(Path(sys.executable).with_name("strata"))
    ran = subprocess.run([strata_cmd, "--version"], capture_output=True, text=True, check=True)
    assert ran.stdout.strip() == "strata, version 0.1.0"
