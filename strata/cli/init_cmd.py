"""`strata init DIR [--json]`: write a new module that runs as it is (strata/scaffold.py)."""

from __future__ import annotations

import click

from strata.cli.compile_cmds import json_option
from strata.cli.main import cli, console, handled, print_json
from strata.scaffold import init_module


@cli.command(name="init")
@click.argument("directory", type=click.Path())
@json_option
@handled
def init_cmd(directory: str, as_json: bool) -> None:
    """Create a new module in DIRECTORY (missing or empty): a CSV source, two models,
    pins and a test. Then: strata run DIRECTORY -o w.duckdb; strata test DIRECTORY."""
    made = init_module(directory)
    if as_json:
        print_json(made.to_json())
        return
    out = console()
    out.print(f"created a Strata module in {made.directory}:", markup=False)
    for name in made.files:
        out.print(f"  {name}", markup=False)
    out.print(f"next: strata run {made.directory} -o warehouse.duckdb && "
              f"strata test {made.directory}", markup=False)
