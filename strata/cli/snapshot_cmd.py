"""`strata snapshot MODULE [--dialect D ...] [--dir DIR] [--check] [--json]`: lock every
model's SQL as .sql files for review in pull requests (strata/review.py)."""

from __future__ import annotations

import sys

import click

import dialects
from strata.cli.compile_cmds import json_option, load_checked
from strata.cli.main import cli, console, handled, print_json
from strata.review import DEFAULT_DIR, Review, choose_dialects, review, snapshot_place


@cli.command(name="snapshot")
@click.argument("module", type=click.Path())
@click.option("--dialect", "dialect_names", multiple=True, metavar="D",
              help=f"Lock the SQL for this engine (repeatable; default: the dialect folders "
                   f"already in DIR, else {dialects.DEFAULT}): {', '.join(dialects.DIALECTS)}.")
@click.option("--dir", "directory", default=None, type=click.Path(),
              help=f"Where the files go (default: {DEFAULT_DIR}/ in the module's directory); "
                   "one folder per dialect, one .sql file per model.")
@click.option("--check", is_flag=True,
              help="Write nothing; exit 1 listing each model whose SQL differs from its "
                   "file, with a unified diff (for CI).")
@json_option
@handled
def snapshot_cmd(module: str, dialect_names: tuple[str, ...], directory: str | None,
                 check: bool, as_json: bool) -> None:
    """Write each model's SQL of MODULE to DIR/<dialect>/<model>.sql, so a pull request
    shows how the generated SQL changed; with --check, verify the files are current."""
    for name in dialect_names:
        dialects.get(name)
    checked = load_checked(module)  # a path the OS refuses is E005 before it is used
    names = choose_dialects(list(dialect_names), snapshot_place(module, directory))
    result = review(checked, module, names, directory, check=check)
    if as_json:
        print_json(result.to_json())
    elif check:
        _print_check(result)
    else:
        console().print(f"{len(result.written)} files written or removed under "
                        f"{result.directory} ({result.models} models, "
                        f"{', '.join(result.dialects)})", markup=False)
    sys.exit(1 if check and result.changes else 0)


def _print_check(result: Review) -> None:
    out = console()
    if not result.changes:
        out.print(f"ok: the SQL of {result.models} models matches {result.directory} "
                  f"({', '.join(result.dialects)})", markup=False)
        return
    for change in result.changes:
        what = change.model if change.model is not None else "(no model)"
        out.print(f"{change.kind}: {what} [{change.dialect}] {change.path}", markup=False,
                  highlight=False)
        sys.stdout.flush()
        out.print(change.diff, markup=False, highlight=False, end="")
    out.print(f"\n{len(result.changes)} snapshot files differ from the module's SQL; run "
              f"`strata snapshot` (without --check) and commit them", markup=False)

