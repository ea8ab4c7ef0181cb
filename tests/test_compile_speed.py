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


def run_and_list_modules(argv: list[str], loaded: str) -> subprocess.CompletedProcess:
    """`strata argv` in a fresh interpreter, which then prints `LOADED <loaded>` (an
    expression over `sys.modules`) on stderr."""
    probe = ("import sys\n"
             f"sys.argv = ['strata', *{argv!r}]\n"
             "from strata.cli.main import main\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\n"
             f"print('LOADED', {loaded}, file=sys.stderr)\n")
    return subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=False)


def test_compile_imports_neither_the_engine_nor_duckdb_nor_rich(tmp_path: Path) -> None:
    path = tmp_path / "m.strata"
    path.write_text(MODULE)
    proc = run_and_list_modules(
        ["compile", str(path), "--show-sql"],
        "[m for m in ('duckdb', 'rich', 'strata.engine') if m in sys.modules]")
    assert "-- model big (incremental: upsert, pushdown)" in proc.stdout
    assert "LOADED []" in proc.stderr, proc.stderr


def test_every_command_is_still_found() -> None:
    from strata.cli.main import cli

    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    for name in ("check", "compile", "build", "run", "plan", "history", "replay", "verify",
                 "rollback", "branch", "backfill", "gc", "test"):
        assert f"  {name}" in result.output, name


def test_each_command_loads_only_the_module_that_defines_it() -> None:
    """`strata run` imported every command module (lineage, graph, lsp...) before the
    map named it: ~0.05 s of each run's start-up."""
    from strata.cli.main import _COMMAND_MODULES, _load_commands, cli

    _load_commands()
    for name, command in cli.commands.items():
        assert _COMMAND_MODULES.get(name) == command.callback.__module__.split(".")[-1], name
    proc = run_and_list_modules(
        ["history", "--help"], "sorted(m for m in sys.modules if m.startswith('strata.cli.'))")
    assert "LOADED ['strata.cli.compile_cmds', 'strata.cli.main', 'strata.cli.render', " \
           "'strata.cli.run_cmds']" in proc.stderr, proc.stderr


def test_a_command_missing_from_the_lazy_map_is_still_found() -> None:
    probe = ("import sys\n"
             "from strata.cli import main as m\n"
             "del m._COMMAND_MODULES['history']\n"
             "sys.argv = ['strata', 'history', '--help']\n"
             "m.main()\n")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0 and "Usage: strata history" in proc.stdout, proc.stderr


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
