"""The `strata` command: thin. Parse flags, call the library, print."""

from __future__ import annotations

import json
import os
import sys
from functools import wraps

import click
from rich.console import Console

from strata.cli.render import render_all
from strata.diagnostics import Diagnostic, StrataError

_FILES: dict[str, str] = {}  # sources shown under diagnostics; set by commands that load


def console(stderr: bool = False) -> Console:
    return Console(stderr=stderr, highlight=False, soft_wrap=True)


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
    """Every StrataError becomes rendered diagnostics and exit 1; nothing else escapes
    as a traceback (STRATA_DEBUG=1 shows it)."""

    @wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except StrataError as err:
            ctx = click.get_current_context()
            if ctx.params.get("as_json"):
                print_json({"error": [d.to_json() for d in err.diagnostics]})
            else:
                print_diagnostics(err.diagnostics)
            sys.exit(1)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)
        except Exception as err:  # a bug in strata, said plainly
            if os.environ.get("STRATA_DEBUG"):
                raise
            print_diagnostics([Diagnostic(
                "E000", f"internal error: {type(err).__name__}: {err}", None,
                "this is a bug in strata; rerun with STRATA_DEBUG=1 for details")])
            sys.exit(3)

    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="strata")
def cli() -> None:
    """Strata: declarative data models compiled to SQL, materialized as immutable,
    content-addressed snapshots behind views."""


def main() -> None:
    from strata.cli import backfill_cmd, compile_cmds, run_cmds  # noqa: F401  (registers commands)
    from strata.cli import gc_cmd  # noqa: F401
    from strata.cli import test_cmd  # noqa: F401

    cli(prog_name="strata")
