"""What keeps `strata check` / `strata compile` fast (figures in bench/README.md,
## Compile): the compile path loads no engine, no DuckDB and no rich, commands load
lazily, and the shortcuts taken on copies give the same trees and SQL."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlglot import exp

from strata.sqlgen.build import copy
from strata.sqlgen.names import column

MODULE = """\
source orders { id: int, amount: decimal(12, 2), updated_at: timestamp }
model big {
  from orders
  filter amount > 10
  incremental
  merge_strategy: upsert
  merge_keys: [id]
  cdc_column: updated_at
}
"""


def test_compile_imports_neither_the_engine_nor_duckdb_nor_rich(tmp_path: Path) -> None:
    path = tmp_path / "m.strata"
    path.write_text(MODULE)
    probe = (
        "import sys\n"
        f"sys.argv = ['strata', 'compile', {str(path)!r}, '--show-sql']\n"
        "from strata.cli.main import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "loaded = [m for m in ('duckdb', 'rich', 'strata.engine') if m in sys.modules]\n"
        "print('LOADED', loaded, file=sys.stderr)\n")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=False)
    assert "-- model big (incremental: upsert, pushdown)" in proc.stdout
    assert "LOADED []" in proc.stderr, proc.stderr


def test_every_command_is_still_found() -> None:
    from strata.cli.main import cli

    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    for name in ("check", "compile", "build", "run", "plan", "history", "replay", "verify",
                 "rollback", "branch", "backfill", "gc", "test"):
        assert f"  {name}" in result.output, name
    # a command with no entry in the lazy map is found by loading every module
    assert CliRunner().invoke(cli, ["history", "--help"]).exit_code == 0


@pytest.mark.parametrize("node", [
    column("amount", "base"), column("select", "base"), column("odd name"),
    column("id"), column("x", "__full"),
    exp.Column(this=exp.Identifier(this="a", quoted=True), table=exp.Identifier(this="T")),
    exp.Column(this=exp.Identifier(this="a"), table=exp.Identifier(this="t"), db=exp.to_identifier("d")),
    exp.Alias(this=column("a", "t"), alias=exp.to_identifier("b")),
    exp.Add(this=column("a"), expression=exp.Literal.number(1)),
], ids=str)
def test_the_cheap_copy_is_a_copy(node: exp.Expression) -> None:
    copied = copy(node)
    assert copied is not node and copied == node and copied.sql() == node.sql()
    assert all(a is not b for a, b in zip(copied.walk(), node.walk()))
