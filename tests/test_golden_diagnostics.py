"""Diagnostics as golden text (STYLE §4): what `strata check` prints for each module
in tests/golden/diagnostics/*.strata is locked in the .txt file beside it, so a
change in a message, a span or a hint is reviewed like a change in SQL.

To accept new output after an intended change:

    STRATA_UPDATE_GOLDEN=1 .venv/bin/pytest tests/test_golden_diagnostics.py

then read the diff of tests/golden/diagnostics/*.txt before committing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

import strata.cli.compile_cmds  # noqa: F401  (registers the commands on `cli`)
from strata.cli.main import cli

GOLDEN = Path(__file__).parent / "golden" / "diagnostics"
UPDATE = bool(os.environ.get("STRATA_UPDATE_GOLDEN"))
MODULES = sorted(GOLDEN.glob("*.strata"))


def check_output(module: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Exactly what a user sees on stderr, with the path as given on the command line."""
    monkeypatch.chdir(module.parent)
    for var in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        monkeypatch.delenv(var, raising=False)
    result = CliRunner().invoke(cli, ["check", module.name], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    return result.stderr


@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.stem)
def test_diagnostics_match_the_golden_text(module: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    actual = check_output(module, monkeypatch)
    golden = module.with_suffix(".txt")
    if UPDATE:
        golden.write_text(actual)
        return
    assert golden.exists(), f"no {golden.name}: run with STRATA_UPDATE_GOLDEN=1 to create it"
    assert actual == golden.read_text(), (
        f"{module.name}: output changed; if intended, rerun with STRATA_UPDATE_GOLDEN=1 "
        "and review the diff")


def test_no_golden_text_without_its_module() -> None:
    orphans = [p.name for p in GOLDEN.glob("*.txt") if not p.with_suffix(".strata").exists()]
    assert orphans == []


def test_the_spec_example_renders_as_the_spec_shows() -> None:
    """SPEC §4's example, line for line (our module has a comment line above it)."""
    text = (GOLDEN / "unknown_column.txt").read_text()
    assert text.startswith(
        "error[E011]: unknown column `amont` in model `paid_orders`\n"
        "  --> unknown_column.strata:14:10\n"
        "   |\n"
        "14 |   filter amont > 0\n"
        "   |          ^^^^^ did you mean `amount`?\n")
