"""`strata show MODEL -o WAREHOUSE` and `strata sql -o WAREHOUSE "SELECT ..."`: read
rows on any engine without knowing how it names the views (strata.engine.reads),
printed as a table, or as JSON with --json."""

from __future__ import annotations

import click

from strata.cli.compile_cmds import json_option
from strata.cli.main import cli, console, handled, print_json
from strata.cli.run_cmds import warehouse_option
from strata.diagnostics import fail
from strata.engine.reads import DEFAULT_LIMIT, Rows, model_rows, query_rows
from strata.engine.warehouse import MAIN_BRANCH, Warehouse

limit_option = click.option("--limit", default=DEFAULT_LIMIT, show_default=True, type=int,
                            help="At most this many rows.")


@cli.command(name="show")
@click.argument("model")
@warehouse_option
@limit_option
@click.option("--branch", default=MAIN_BRANCH, show_default=True,
              help="The branch whose live view to read.")
@json_option
@handled
def show_cmd(model: str, warehouse: str, limit: int, branch: str, as_json: bool) -> None:
    """Print the rows of MODEL's live view (found by the model's name on any engine)."""
    _check_limit(limit)
    wh = Warehouse.open(warehouse, read_only=True, create=False)
    try:
        found = model_rows(wh, model, branch, limit)
    finally:
        wh.close()
    _print(found, as_json, f"{model} ({found.source} on {wh.label})")


@cli.command(name="sql")
@click.argument("query")
@warehouse_option
@limit_option
@json_option
@handled
def sql_cmd(query: str, warehouse: str, limit: int, as_json: bool) -> None:
    """Run one read-only QUERY, in the warehouse's own SQL, and print its rows."""
    _check_limit(limit)
    wh = Warehouse.open(warehouse, read_only=True, create=False)
    try:
        found = query_rows(wh, query, limit)
    finally:
        wh.close()
    _print(found, as_json, None)


def _check_limit(limit: int) -> None:
    if limit < 1:
        raise fail("E084", f"--limit must be 1 or more, not {limit}", None,
                   f"leave it out to see the first {DEFAULT_LIMIT} rows")


def _print(found: Rows, as_json: bool, title: str | None) -> None:
    if as_json:
        print_json(found.to_json())
        return
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for name, kind in found.columns:
        table.add_column(_cell(f"{name}\n{str(kind).lower()}"), overflow="fold")
    for row in found.rows:
        table.add_row(*(_cell(value) for value in row))
    out = console()
    out.print(table)
    shown = f"{len(found.rows)} row{'s' if len(found.rows) != 1 else ''}"
    more = f" (the first {len(found.rows)}: --limit shows more)" if found.truncated else ""
    out.print(f"{shown}{more}", markup=False)


def _cell(value) -> str:
    """A value as text; rich markup in data stays text (rich.markup.escape)."""
    from rich.markup import escape

    return "null" if value is None else escape(str(value))
