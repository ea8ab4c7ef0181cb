"""The `strata` command: thin. Parse flags, call the library, print."""

from __future__ import annotations

import gc
import importlib
import json
import os
import pkgutil
import sys
from dataclasses import replace
from functools import wraps
from typing import TYPE_CHECKING

import click

from strata.cli.render import render_all, safe_console
from strata.diagnostics import Diagnostic, StrataError
from strata.distribution import DISTRIBUTION

if TYPE_CHECKING:
    from rich.console import Console

_FILES: dict[str, str] = {}  # sources shown under diagnostics; set by commands that load


def console(stderr: bool = False) -> Console:
    # rich is imported on the first call: ~0.1 s that `compile --show-sql` never needs.
    # emoji off: a location like `m.strata:100:11` is not the `:100:` emoji code;
    # safe: user text (a name holding ESC) reaches the terminal escaped
    return safe_console(stderr=stderr, highlight=False, soft_wrap=True, emoji=False)


def remember_files(files: dict[str, str]) -> None:
    _FILES.update(files)


def print_diagnostics(diags: list[Diagnostic], files: dict[str, str] | None = None) -> None:
    out = console(stderr=True)
    text = render_all(diags, files if files is not None else _FILES, colour=out.is_terminal)
    out.print(text, markup=out.is_terminal, highlight=False)
    errors = sum(1 for d in diags if d.severity == "error")
    if errors > 1:
        out.print(f"\n{errors} errors", markup=False)


def print_json(data) -> None:
    click.echo(json.dumps(data, indent=2, default=str))


def handled(fn):
    """Every StrataError becomes rendered diagnostics and exit 1; the warehouse file
    failing (no space, not writable, truncated) is E070 naming it, exit 1; anything
    else is E000, exit 3, never a traceback (STRATA_DEBUG=1 shows it). With --json,
    every failure is also a document on stdout: {"status": "error", "error": [...]}."""

    @wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except StrataError as err:
            _fail(err.diagnostics, 1, err.failed_entry)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)
        except Exception as err:
            if os.environ.get("STRATA_DEBUG"):
                raise
            failed = _warehouse_failure(err)
            if failed is not None:
                _fail(failed.diagnostics, 1)
            _fail([Diagnostic(  # a bug in strata, said plainly
                "E000", f"internal error: {type(err).__name__}: {err}", None,
                "this is a bug in strata; rerun with STRATA_DEBUG=1 for details")], 3)

    return wrapper


def _fail(diags: list[Diagnostic], status: int, failed_entry: str | None = None) -> None:
    """Report and exit. --json: the diagnostics as a document on stdout (a script
    parses stdout; an empty one told it nothing), with the history entry that records
    a failed run when one was written, and an internal error also as text on stderr,
    for the person who reports it."""
    diags = _without_secrets(diags)
    if click.get_current_context().params.get("as_json"):
        print_json({"status": "error", "error": [d.to_json() for d in diags],
                    **({"failed_entry": failed_entry} if failed_entry else {})})
        if status == 1:
            sys.exit(status)
    print_diagnostics(diags)
    sys.exit(status)


def _without_secrets(diags: list[Diagnostic]) -> list[Diagnostic]:
    """The last guard before a failure is shown: a message quoting what an engine said
    may hold a secret of `-o` (strata.engine.locations decides what is one): ***."""
    where = click.get_current_context().params.get("warehouse")
    if not where:
        return diags
    from strata.engine.locations import scrub, secrets_of

    secrets = secrets_of(str(where))
    if not secrets:
        return diags
    return [replace(d, message=scrub(d.message, secrets),
                    hint=d.hint and scrub(d.hint, secrets),
                    notes=tuple(scrub(note, secrets) for note in d.notes)) for d in diags]


def _warehouse_failure(err: Exception) -> StrataError | None:
    """E070 when a command's warehouse file failed under it (the engine's one
    classifier, strata.engine.adapters.duckdb_file.file_failure). Only a command with
    `-o WAREHOUSE` that has loaded the engine can have one: `check` never imports DuckDB."""
    path = click.get_current_context().params.get("warehouse")
    engine = sys.modules.get("strata.engine.adapters.duckdb_file")
    if not path or engine is None:
        return None
    from strata.engine.locations import redact

    return engine.file_failure(redact(str(path)), err)  # a file path is shown as is


# The module that defines a command, so a process imports only what it runs: `check`
# and `compile` never load the engine (nor DuckDB). A command not listed here is
# still found: an unknown name imports every module of strata/cli.
_COMMAND_MODULES = {"check": "compile_cmds", "compile": "compile_cmds", "build": "compile_cmds",
                    "run": "run_cmds", "plan": "run_cmds", "history": "run_cmds",
                    "replay": "run_cmds", "verify": "run_cmds", "rollback": "run_cmds",
                    "branch": "run_cmds", "backfill": "backfill_cmd", "gc": "gc_cmd", "test": "test_cmd",
                    "lsp": "lsp_cmd",
                    "init": "init_cmd", "snapshot": "snapshot_cmd", "lineage": "lineage_cmd",
                    "graph": "graph_cmd", "diff": "diff_cmd", "show": "show_cmd", "fmt": "fmt_cmd",
                    "sql": "show_cmd"}


def _load_commands(module: str | None = None) -> None:
    import strata.cli

    names = [module] if module else [m.name for m in pkgutil.iter_modules(strata.cli.__path__)
                                     if m.name not in ("main", "render")]
    for name in names:
        importlib.import_module(f"strata.cli.{name}")


class _LazyGroup(click.Group):
    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        command = super().get_command(ctx, name)
        if command is None and name in _COMMAND_MODULES:
            _load_commands(_COMMAND_MODULES[name])
            command = super().get_command(ctx, name)
        if command is None:
            _load_commands()
            command = super().get_command(ctx, name)
        return command

    def list_commands(self, ctx: click.Context) -> list[str]:
        _load_commands()
        return super().list_commands(ctx)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name=DISTRIBUTION)
def cli() -> None:
    """Strata: declarative data models compiled to SQL, materialized as immutable,
    content-addressed snapshots behind views."""


def main() -> None:
    # A short-lived process that builds many small trees (Lark, SQLGlot): the default
    # collector (a pass every 700 allocations) took about a third of a 1,000-model
    # compile. Rarer young-generation passes keep memory flat at a fraction of the
    # cost (mypy tunes its collector the same way).
    global _OWN_PROCESS
    _OWN_PROCESS = True
    gc.set_threshold(GC_THRESHOLD, 50, 100)
    cli(prog_name="strata")


GC_THRESHOLD = 10_000
_OWN_PROCESS = False  # set by main(): the process is `strata`, not a library caller


def settle() -> None:
    """Call once the module is loaded: what is alive now (imports, the syntax tree,
    the plans) lives until the process ends, so the collector need not scan it again
    (gc.freeze; about 0.2 s of a 1,000-model compile). Only in the `strata` process:
    a library caller's objects are left alone."""
    if _OWN_PROCESS:
        gc.freeze()
