"""`strata check | compile | build`: the compile side; nothing here executes models."""

from __future__ import annotations

import sys

import click

import dialects
from dialects import routines
from strata.buildfiles import write_files
from strata.cachedirs import default_dir
from strata.cli.main import (
    cli,
    console,
    handled,
    print_diagnostics,
    print_json,
    remember_files,
    settle,
)
from strata.compiler import compile_statements, format_statements
from strata.diagnostics import StrataError, fail
from strata.semantics.module import Module
from strata.semantics.resolve import load_module


def split_names(value: str | None, code: str = "E079") -> list[str] | None:
    """`m1,m2` -> names; None when --models was not given. Given but naming nothing
    (`--models ''`) is an error (E079; backfill's E085), not every model."""
    if value is None:
        return None
    names = [n.strip() for n in value.split(",") if n.strip()]
    if not names:
        raise fail(code, "--models names no model", None,
                   "give model names, e.g. --models orders,daily_sales; or leave --models "
                   "out for every model")
    return names


def load_checked(path: str) -> Module:
    """Load a module; raise its errors (rendered with their source lines)."""
    module = load_module(path, parse_cache=default_dir())
    settle()
    remember_files(module.files)
    if module.errors:
        raise StrataError(module.diagnostics)
    return module


dialect_option = click.option("--dialect", "dialect", default=dialects.DEFAULT, show_default=True,
                              help=f"Target engine: {', '.join(dialects.DIALECTS)}.")
models_option = click.option("--models", "models", default=None, metavar="M1,M2",
                             help="Only these models (comma-separated).")
select_option = click.option(
    "--select", "select", multiple=True, metavar="SELECTOR",
    help="Only the models these selectors pick (repeatable; space- or comma-separated): "
         "`name`, `name+` (and downstream), `+name` (and upstream), `+name+`, depth "
         "limits `2+name+1`, `path:models/staging` (models defined under that path). "
         "Not with --models.")
exclude_option = click.option(
    "--exclude", "exclude", multiple=True, metavar="SELECTOR",
    help="Leave out the models these selectors pick (same forms as --select).")


def selection_options(command):
    """--models, --select and --exclude, in that order on the command."""
    return models_option(select_option(exclude_option(command)))


def chosen_models(module: Module, models: str | None, select: tuple[str, ...] = (),
                  exclude: tuple[str, ...] = (), code: str = "E079") -> list[str] | None:
    """What a command hands its library call as `models`: --models as it always was
    (`code`: the error for a --models naming nothing), or what --select/--exclude pick
    (strata/selection.py); None for every model."""
    from strata.selection import resolve

    if models is not None and (select or exclude):
        given = "--select" if select else "--exclude"
        raise fail("E194", f"--models and {given} cannot be used together", None,
                   f"--select takes model names too: --select {' '.join(split_names(models) or [])}"
                   if select else "write the selection with --select and --exclude")
    if models is not None:
        return split_names(models, code=code)
    return resolve(module, select, exclude)


json_option = click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
at_option = click.option("--at", "at", default=None, metavar="DATETIME",
                         help="The run's date and time that run_date() and run_timestamp() "
                              "read (default: now).")


@cli.command()
@click.argument("module", type=click.Path())
@json_option
@handled
def check(module: str, as_json: bool) -> None:
    """Parse and check MODULE (a .strata file or a directory); report every problem."""
    mod = load_module(module, parse_cache=default_dir())
    remember_files(mod.files)
    if as_json:
        print_json([d.to_json() for d in mod.diagnostics])
    elif mod.diagnostics:
        print_diagnostics(mod.diagnostics, mod.files)
    else:
        console().print(f"ok: {len(mod.sources)} sources, {len(mod.models)} models, "
                        f"{len(mod.tests)} tests", markup=False)
    sys.exit(1 if mod.errors else 0)


@cli.command(name="compile")
@click.argument("module", type=click.Path())
@click.option("--show-sql", is_flag=True, help="Print the SQL of each model.")
@dialect_option
@selection_options
@click.option("--watermark", default=None, metavar="VALUE",
              help="Embed this watermark in incremental SQL instead of a placeholder.")
@at_option
@json_option
@handled
def compile_(module: str, show_sql: bool, dialect: str, models: str | None,
             select: tuple[str, ...], exclude: tuple[str, ...], watermark: str | None, at: str | None, as_json: bool) -> None:
    """Compile MODULE to SQL; with --show-sql print it (full and incremental)."""
    from strata.clock import run_clock

    dialects.get(dialect)
    mod = load_checked(module)
    statements = compile_statements(mod, dialect, chosen_models(mod, models, select, exclude),
                                    watermark,
                                    keep_trees=False, clock=run_clock(at))
    if as_json:
        print_json([{"model": s.model, "label": s.label, "sql": s.sql,
                     "functions": [r.definition for r in routines.used_in([s.sql])]}
                    for s in statements])
    elif show_sql:
        sys.stdout.write(format_statements(statements))
    else:
        console().print(f"ok: compiled {len({s.model for s in statements})} models "
                        f"({len(statements)} statements) for {dialect}; --show-sql prints them",
                        markup=False)


@cli.command()
@click.argument("module", type=click.Path())
@click.option("-o", "--output", "out_dir", required=True, type=click.Path(),
              help="Directory to write one .sql file per model into.")
@dialect_option
@selection_options
@json_option
@handled
def build(module: str, out_dir: str, dialect: str, models: str | None,
          select: tuple[str, ...], exclude: tuple[str, ...], as_json: bool) -> None:
    """Write the SQL of each model of MODULE as files under DIR (nothing executes)."""
    dialects.get(dialect)
    mod = load_checked(module)
    statements = compile_statements(mod, dialect, chosen_models(mod, models, select, exclude),
                                    keep_trees=False)
    by_model: dict[str, list] = {}
    for s in statements:
        by_model.setdefault(s.model, []).append(s)
    written = write_files({m: format_statements(st) for m, st in by_model.items()}, out_dir)
    if as_json:
        print_json({"dialect": dialect, "files": list(written.values()), "models": written})
    else:
        console().print(f"wrote {len(written)} files to {out_dir}", markup=False)
