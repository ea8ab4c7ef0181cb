"""`strata fmt [PATH ...] [--check] [--json]`: put .strata files in the canonical
layout (the library: strata/fmt.py)."""

from __future__ import annotations

import sys

import click

from strata.cli.compile_cmds import json_option
from strata.cli.main import cli, handled, print_diagnostics, print_json


@cli.command(name="fmt")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--check", is_flag=True,
              help="Write nothing; exit 1 if a file would change (for CI).")
@json_option
@handled
def fmt_cmd(paths: tuple[str, ...], check: bool, as_json: bool) -> None:
    """Format the .strata files of PATHS (files, or module folders; default: the
    current folder) in one layout: indentation, spacing, blank lines. Comments and
    meaning are kept; a file that does not parse is left as it is."""
    from strata.fmt import format_paths

    report = format_paths(list(paths) or ["."], check=check)
    failed = report.failed or (check and bool(report.changed))
    if as_json:
        print_json({"status": "error" if report.failed else "ok", "check": check,
                    "changed": report.changed, "unchanged": report.unchanged,
                    "diagnostics": [d.to_json() for d in report.diagnostics]})
        sys.exit(1 if failed else 0)
    if report.diagnostics:
        print_diagnostics(report.diagnostics, report.texts)
    verb = "would reformat" if check else "reformatted"
    for shown in report.changed:
        click.echo(f"{verb} {shown}", err=True)
    files = len(report.changed) + len(report.unchanged)
    click.echo(f"{len(report.changed)} of {files} file(s) {verb}", err=True)
    if failed:
        sys.exit(1)
