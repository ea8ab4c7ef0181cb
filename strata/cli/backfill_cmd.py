"""`strata backfill`: thin. Parse flags, call `engine.backfill`, print the report."""

from __future__ import annotations

import click

from strata.cli.compile_cmds import (
    at_option,
    chosen_models,
    json_option,
    load_checked,
    selection_options,
)
from strata.cli.main import cli, console, handled, print_json
from strata.cli.run_cmds import print_report, progress_printer, warehouse_option, workers_option
from strata.clock import run_clock
from strata.engine.backfill import backfill


@cli.command(name="backfill")
@click.argument("module", type=click.Path())
@click.argument("run_id")
@click.option("--source", "sources", multiple=True, metavar="SOURCE=TABLE",
              help="Point a source at its corrected table (repeatable; wins over the "
                   "run's override).")
@selection_options
@click.option("--reason", default=None, metavar="TEXT",
              help="Why the run is corrected (required; recorded in the history).")
@warehouse_option
@workers_option
@at_option
@json_option
@handled
def backfill_cmd(module: str, run_id: str, sources: tuple[str, ...], models: str | None,
                 select: tuple[str, ...], exclude: tuple[str, ...], reason: str | None,
                 warehouse: str, workers: int, at: str | None, as_json: bool) -> None:
    """Re-run RUN_ID with corrected sources under an audited reason: only the models
    downstream of a corrected source are rebuilt; RUN_ID stays intact."""
    mod = load_checked(module)
    chosen = chosen_models(mod, models, select, exclude, code="E085")
    report = backfill(mod, warehouse, run_id, sources, chosen, reason,
                      module_path=module, progress=progress_printer(as_json), workers=workers,
                      clock=run_clock(at) if at is not None else None)
    if as_json:
        print_json(report.to_json())
        return
    out = console()
    if report.status == "up_to_date":
        for note in report.notes:
            out.print(note, markup=False, highlight=False)
        return
    print_report(report, as_json=False)
    entry = report.entry  # its notes were printed with the report
    out.print(f"  backfill of run {entry.backfill_of}, reason: {entry.reason!r}", markup=False,
              highlight=False)
