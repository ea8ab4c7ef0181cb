"""Keeps docs/LANGUAGE.md's examples true: every output block in it is generated.

The language reference shows each construct as a ```strata example followed by what
Strata makes of it, and that output is never written by hand:

- a ```sql block: the DuckDB SQL `strata compile --show-sql` prints for the models the
  example declares (the example compiled after the doc's shared sources, the block
  under `<!-- prelude -->`);
- a ```text block: what `strata check` prints for an example Strata rejects, or, for
  an example that declares `test` blocks, what `strata test` prints;
- the function tables: a row of the catalogue (strata/semantics/functions.py) is
  written whole from its entry (signature, doc, example and DuckDB's result), and
  every row's last cell is the DuckDB SQL of its example expression (in a `select`,
  in an `aggregate` for an aggregate, in the `derive` after a `window` for a window
  function). Window functions carry no docs in their catalogue
  (strata/semantics/windows.py): their rows are written here, and only their SQL
  cell is generated.

tests/test_language_doc.py asserts the doc equals what this module regenerates from
it. After a change of the language or of its SQL, regenerate and review the diff:

    .venv/bin/python tests/language_doc.py --write
"""

from __future__ import annotations

import argparse
import datetime as dt
import difflib
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: the project's packages
    sys.path.insert(0, str(ROOT))

from sqlglot import exp

import dialects
from strata.cli.render import render_all
from strata.cli.test_cmd import failure_lines
from strata.compiler import compile_statements, format_statements
from strata.diagnostics import StrataError
from strata.engine.testing import run_test
from strata.semantics import functions as F
from strata.semantics import windows as W
from strata.semantics.resolve import load_text
from strata.syntax import ast
from strata.syntax.parser import parse_text

DOC = ROOT / "docs" / "LANGUAGE.md"
FILE = "example.strata"  # the name diagnostics show for an example
DIALECT = "duckdb"
# Fenced blocks are matched line by line: a block's lines never start with ```, so an
# example cannot run on into the next block.
_LINES = r"(?:(?!```)[^\n]*\n)*?"
PRELUDE = re.compile(rf"^<!-- prelude -->\n```strata\n({_LINES})```$", re.MULTILINE)
# an example and the output block right under it (blank lines between are allowed)
EXAMPLE = re.compile(rf"^```strata\n(?P<body>{_LINES})```\n+```(?P<kind>sql|text)\n"
                     rf"(?P<out>{_LINES})```$", re.MULTILINE)
STRATA_BLOCK = re.compile(rf"^```strata\n({_LINES})```$", re.MULTILINE)
FUNCTIONS_SECTION = re.compile(r"^## Functions\n(.*?)(?=^## |\Z)", re.DOTALL | re.MULTILINE)
# a row of a function table: | `sig` | returns | meaning | `example` | `sql` |
# a row of a function table: | `name(...` ... |, the name first in its first cell
FUNCTION_ROW = re.compile(r"^\| `(?P<name>[a-z_][a-z0-9_]*)\((?P<params>[^`]*)` \|.*$",
                          re.MULTILINE)
CELL_SPLIT = re.compile(r"(?<!\\)\|")
EXAMPLE_ALIAS = "example"


@dataclass(frozen=True)
class FunctionRow:
    """One row of a function table, as written: for a catalogue function
    | `signature` | doc | `example` | `DuckDB's result` | `SQL` |, for a window
    function | `signature` | meaning | `example` | `SQL` |."""

    name: str
    params: str  # the first cell after `name(`
    cells: list[str]  # every cell, stripped, `\|` unescaped
    line: str

    @property
    def example(self) -> str:
        return _code(self.cells[2])

    @property
    def sql(self) -> str:
        return _code(self.cells[-1])


def _code(cell: str) -> str:
    return cell[1:-1] if cell.startswith("`") and cell.endswith("`") else cell


def prelude(text: str) -> str:
    found = PRELUDE.search(text)
    if found is None:
        raise ValueError("docs/LANGUAGE.md has no `<!-- prelude -->` block of sources")
    return found.group(1)


@contextmanager
def _at_root() -> Iterator[None]:
    """File sources are shown relative to the working directory: compile from the
    project root, so `data/orders.csv` reads the same for everyone."""
    before = Path.cwd()
    os.chdir(ROOT)
    try:
        yield
    finally:
        os.chdir(before)


def _declared(body: str) -> list[ast.Declaration] | None:
    try:
        return list(parse_text(body, FILE).declarations)
    except StrataError:
        return None  # a syntax error: the output is its diagnostic


def output(prelude_text: str, body: str) -> tuple[str, str]:
    """(fence kind, text) Strata shows for the example `body`: ("sql", ...) or ("text", ...)."""
    with _at_root():
        module = load_text(prelude_text + body, FILE)
        if module.diagnostics:
            return "text", _diagnostics(prelude_text, body, module)
        decls = _declared(body) or []
        models = [d.name for d in decls if isinstance(d, ast.ModelDecl)]
        tests = [d.name for d in decls if isinstance(d, ast.TestDecl)]
        if tests:
            return "text", _test_output(module, tests, prelude_text.count("\n"))
        if not models:
            raise ValueError(f"this example declares no model or test:\n{body}")
        statements = compile_statements(module, DIALECT, models, clock=None)
        return "sql", format_statements(statements).rstrip("\n") + "\n"


def _diagnostics(prelude_text: str, body: str, module) -> str:
    """As `strata check` prints them, lines counted from the start of the example."""
    shift = prelude_text.count("\n")
    diags = []
    for d in module.diagnostics:
        if d.span is not None:
            if d.span.line <= shift:
                raise ValueError(f"the prelude itself fails: {d.message}")
            d = replace(d, span=replace(d.span, line=d.span.line - shift,
                                        end_line=d.span.end_line - shift))
        diags.append(d)
    return render_all(diags, {FILE: body}) + "\n"


def _test_output(module, names: list[str], shift: int) -> str:
    """As `strata test` prints the example's tests (without colour), lines counted
    from the start of the example."""
    lines, failed = [], 0
    for name in names:
        result = run_test(module, module.tests[name])
        where = f"{result.file}:{result.line - shift}"
        lines.append(f"test {name} ... " + ("ok" if result.passed else f"FAILED  ({where})"))
        for failure in result.failures:
            lines += ["  " + line for line in failure_lines(failure)]
        failed += not result.passed
    if failed:
        lines.append("")
    lines.append(f"{len(names) - failed} passed, {failed} failed")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- function tables
def function_rows(text: str) -> list[FunctionRow]:
    section = FUNCTIONS_SECTION.search(text)
    if section is None:
        return []
    rows = []
    for m in FUNCTION_ROW.finditer(section.group(1)):
        cells = [c.strip().replace("\\|", "|") for c in CELL_SPLIT.split(m.group(0))[1:-1]]
        rows.append(FunctionRow(m.group("name"), m.group("params"), cells, m.group(0)))
    return rows


def expression_sql(prelude_text: str, name: str, example: str) -> str:
    """The DuckDB SQL of `example` as one column of a model over the prelude's
    `orders`: in `aggregate` for an aggregate, in the `derive` after `window order id`
    for a window function, else in `select`."""
    fn = F.CATALOGUE.get(name)
    if name in W.WINDOW_FUNCTIONS:
        step = f"window order id\n  derive {EXAMPLE_ALIAS} = {example}"
    elif fn is not None and fn.aggregate:
        step = f"aggregate {EXAMPLE_ALIAS} = {example}"
    else:
        step = f"select {example} as {EXAMPLE_ALIAS}"
    body = f"model function_example {{\n  from orders\n  {step}\n}}\n"
    with _at_root():
        module = load_text(prelude_text + body, FILE)
        if module.diagnostics:
            raise ValueError(f"the example of `{name}` fails: `{example}`: "
                             + "; ".join(d.message for d in module.diagnostics))
        statement = compile_statements(module, DIALECT, ["function_example"], clock=None)[0]
    for alias in statement.tree.find_all(exp.Alias):
        if alias.alias == EXAMPLE_ALIAS:
            return dialects.get(DIALECT).render(alias.this, pretty=False)
    raise ValueError(f"the example of `{name}` left no `{EXAMPLE_ALIAS}` column")


def shown_value(value) -> str:
    """DuckDB's result of an example, written as Strata writes the value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        return f"timestamp '{value.isoformat(sep=' ')}'"
    if isinstance(value, dt.date):
        return f"date '{value.isoformat()}'"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, list):
        return "[" + ", ".join(shown_value(v) for v in value) + "]"
    return str(value)


def catalogue_row(prelude_text: str, fn: F.Function) -> str:
    """The whole table row of a catalogue function, from its entry."""
    expression, result = fn.example
    if not (fn.signature and fn.doc and expression):
        raise ValueError(f"catalogue function `{fn.name}` has no signature, doc or example "
                         "in strata/semantics/functions.py")
    sql = expression_sql(prelude_text, fn.name, expression)
    return _row([f"`{fn.signature}`", fn.doc, f"`{expression}`", f"`{shown_value(result)}`",
                 f"`{sql}`"])


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def _fixed_row(prelude_text: str, row: FunctionRow) -> str:
    fn = F.CATALOGUE.get(row.name)
    if fn is not None:
        return catalogue_row(prelude_text, fn)
    return _row([*row.cells[:-1], "`" + expression_sql(prelude_text, row.name, row.example)
                 + "`"])


# ---------------------------------------------------------------- the whole doc
def regenerate(text: str) -> str:
    """The doc with every output block and function-table SQL cell recomputed."""
    pre = prelude(text)

    def example(m: re.Match) -> str:
        kind, out = output(pre, m.group("body"))
        return f"```strata\n{m.group('body')}```\n\n```{kind}\n{out}```"

    text = EXAMPLE.sub(example, text)
    for row in function_rows(text):
        text = text.replace(row.line, _fixed_row(pre, row), 1)
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true",
                        help="rewrite docs/LANGUAGE.md with the regenerated outputs")
    args = parser.parse_args(argv)
    text = DOC.read_text()
    fresh = regenerate(text)
    if args.write:
        if fresh != text:
            DOC.write_text(fresh)
        return 0
    diff = list(difflib.unified_diff(text.splitlines(), fresh.splitlines(), "docs/LANGUAGE.md",
                                     "regenerated", lineterm=""))
    print("\n".join(diff) if diff else "docs/LANGUAGE.md is up to date")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
