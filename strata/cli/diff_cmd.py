"""`strata diff MODULE --base REF [-o WAREHOUSE]`, `strata diff BRANCH_A BRANCH_B -o
WAREHOUSE`, `strata diff --runs ID1 ID2 -o WAREHOUSE`: what a change breaks, what it
reaches downstream, and (with a warehouse) how the rows differ (strata/impact/)."""

from __future__ import annotations

import sys

import click

from strata.cli.compile_cmds import at_option, json_option
from strata.cli.main import cli, console, handled, print_diagnostics, print_json, remember_files
from strata.diagnostics import StrataError, fail


@cli.command(name="diff")
@click.argument("targets", nargs=-1, metavar="MODULE | BRANCH_A BRANCH_B")
@click.option("--base", "base", default=None, metavar="REF",
              help="What MODULE is compared with: a git revision of its repository "
                   "(origin/main, HEAD~1, a commit) or another module folder.")
@click.option("-o", "--warehouse", "warehouse", default=None, metavar="WAREHOUSE",
              help="Also compare the data: build what changed on a branch of its own in "
                   "WAREHOUSE and compare it with the base's published snapshots.")
@click.option("--runs", "runs", nargs=2, default=None, metavar="ID1 ID2",
              help="Compare the snapshots of two runs of the history (with -o).")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown"]), default="text",
              show_default=True, help="markdown: a table, then details (a PR comment).")
@click.option("--max-rows", "max_rows", type=click.IntRange(0, 1000), default=5,
              show_default=True, help="Sample rows shown of each kind (added, removed, changed).")
@click.option("--keep-branch", is_flag=True,
              help="Keep the branch the changed models were built on (default: dropped).")
@click.option("--base-branch", "base_branch", default="main", show_default=True,
              help="The branch holding the base's published snapshots (with -o).")
@at_option
@json_option
@handled
def diff_cmd(targets: tuple[str, ...], base: str | None, warehouse: str | None,
             runs: tuple[str, str] | None, fmt: str, max_rows: int, keep_branch: bool,
             base_branch: str, at: str | None, as_json: bool) -> None:
    """Review a change by its impact: per model whether its code changed, breaking or
    not and by which rule, every downstream model and column it reaches; with -o, the
    rows added, removed and changed."""
    if runs or (len(targets) == 2 and base is None):
        _data_only(targets, runs, warehouse, fmt, max_rows, as_json)
        return
    if len(targets) != 1 or base is None:
        raise fail("E154", "strata diff takes MODULE --base REF, BRANCH_A BRANCH_B -o "
                   "WAREHOUSE, or --runs ID1 ID2 -o WAREHOUSE", None,
                   "e.g. strata diff models --base origin/main")
    from strata.cachedirs import default_dir
    from strata.impact.base import open_base
    from strata.impact.classify import classify
    from strata.semantics.resolve import load_module

    module = targets[0]
    head = load_module(module, parse_cache=default_dir())
    found = open_base(module, base, head.imported)
    try:
        base_mod = load_module(found.path, parse_cache=default_dir())
        if base_mod.errors:
            remember_files(base_mod.files)
            raise StrataError([fail(
                "E153", f"the base `{found.label}` does not compile", None,
                "strata diff compares with a base that compiles; its errors follow").diagnostics[0],
                *base_mod.errors])
        remember_files(head.files)
        if not head.models and head.errors:
            raise StrataError(head.errors)
        impact = classify(base_mod, head, found.label)
        data = None
        if warehouse is not None:
            if head.errors:
                print_diagnostics(head.errors, head.files)
                raise fail("E155", "the data of a module that does not compile cannot be "
                           "compared", None, "fix the errors above, or leave out -o to see "
                           "what the change breaks")
            from strata.clock import run_clock
            from strata.impact.datadiff import diff_module

            data = diff_module(base_mod, head, impact, module, warehouse, base_branch,
                               max_rows, keep_branch, run_clock(at))
    finally:
        found.close()
    _show(impact, data, fmt, as_json)
    if impact.errors and not as_json:
        print_diagnostics(impact.errors, head.files)
    sys.exit(1 if impact.errors else 0)


def _show(impact, data, fmt: str, as_json: bool) -> None:
    from strata.impact import report

    found = {m: d.to_json() for m, d in data.models.items()} if data is not None else None
    if as_json:
        print_json({"status": "broken" if impact.errors else "ok", **impact.to_json(),
                    **({"data": data.to_json()} if data is not None else {})})
    elif fmt == "markdown":
        click.echo(report.markdown(impact, found), nl=False)
    else:
        out = console()
        for line in report.text_lines(impact, found):
            out.print(line, markup=False, highlight=False)
        if data is not None:
            for note in data.notes:
                out.print(f"note: {note}", markup=False, highlight=False)


def _data_only(targets, runs, warehouse, fmt, max_rows, as_json) -> None:
    if warehouse is None:
        raise fail("E154", "comparing branches or runs needs the warehouse: -o WAREHOUSE")
    if runs and targets:
        raise fail("E154", "give --runs ID1 ID2 or two branches, not both")
    from strata.impact import report
    from strata.impact.datadiff import diff_branches

    data = diff_branches(warehouse, runs=runs, branches=None if runs else targets,
                         max_rows=max_rows)
    if as_json:
        print_json({"status": "ok", "data": data.to_json()})
        return
    label = f"runs {runs[0]} and {runs[1]}" if runs else f"branches {targets[0]} and {targets[1]}"
    if fmt == "markdown":
        lines = [f"### Strata: data of {label}", "", "| model | data |", "|---|---|"]
        lines += [f"| `{m}` | {report.data_cell(d.to_json())} |" for m, d in data.models.items()]
        lines += ["", "<details><summary>Details</summary>", ""]
        for m, d in data.models.items():
            lines += [f"#### `{m}`", "", "```", *report.data_lines(d.to_json()), "```", ""]
        click.echo("\n".join([*lines, "</details>"]))
        return
    out = console()
    out.print(f"data of {label}", markup=False)
    for model, found in data.models.items():
        out.print(f"{model}:", markup=False, highlight=False)
        for line in report.data_lines(found.to_json()):
            out.print("  " + line, markup=False, highlight=False)
    for note in data.notes:
        out.print(f"note: {note}", markup=False, highlight=False)
