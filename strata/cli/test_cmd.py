"""`strata test MODULE [--models m1,m2 | --select S] [--exclude S] [--json]`: run the module's `test` blocks."""

from __future__ import annotations

import sys

import click

from strata.cli.compile_cmds import chosen_models, json_option, load_checked, selection_options
from strata.cli.main import cli, console, handled, print_json
from strata.engine.testing import Failure, TestReport, run_tests, show_value


@cli.command(name="test")
@click.argument("module", type=click.Path())
@selection_options
@json_option
@handled
def test_cmd(module: str, models: str | None, select: tuple[str, ...],
             exclude: tuple[str, ...], as_json: bool) -> None:
    """Run every `test` block of MODULE in an isolated in-memory DuckDB (with --models
    or --select, only tests expecting those models). Exit 1 when any fails."""
    mod = load_checked(module)
    report = run_tests(mod, chosen_models(mod, models, select, exclude))
    if as_json:
        print_json(report.to_json())
    else:
        print_report(report)
    sys.exit(1 if report.failed else 0)


def print_report(report: TestReport) -> None:
    out = console()
    colour = out.is_terminal
    for result in report.results:
        where = f"  ({result.file}:{result.line})" if result.file and not result.passed else ""
        if result.passed:
            word = "[green]ok[/]" if colour else "ok"
        else:
            word = "[bold red]FAILED[/]" if colour else "FAILED"
        head = f"test {result.name} ... "
        if colour:  # a test named `[/]x` is text, not markup
            from rich.markup import escape
            head, where = escape(head), escape(where)
        out.print(f"{head}{word}{where}", markup=colour, highlight=False)
        for failure in result.failures:
            for line in failure_lines(failure):
                out.print("  " + line, markup=False, highlight=False)
    if any(not r.passed for r in report.results):
        out.print("", markup=False)
    out.print(report.summary, markup=False, highlight=False)


def failure_lines(failure: Failure) -> list[str]:
    """The failure's message, then for an expectation a table of the rows that differ:
    `-` expected but missing from the result, `+` in the result but not expected."""
    lines = [failure.message]
    lines += [f"  {note}" for note in failure.notes]
    if failure.kind == "expect" and (failure.missing or failure.extra):
        rows = [[show_value(v) for v in r] for r in [*failure.missing, *failure.extra]]
        widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(failure.columns)]

        def line(mark: str, cells) -> str:
            return f"  {mark} " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()

        lines.append(line(" ", failure.columns))
        marks = ["-"] * len(failure.missing) + ["+"] * len(failure.extra)
        lines += [line(m, r) for m, r in zip(marks, rows)]
        lines.append("  (- expected but missing, + in the result but not expected)")
    return lines
