"""Readable SQL on every dialect (issue 34): an emulation of DuckDB's meaning computes
each operand once, so the text of an operand appears once per place the user wrote
it and the SQL grows linearly with nesting.

Each function of the catalogue is tried through its documented example, with each
literal argument replaced by an expression that reads the marker column `zz` once;
the operators and casts that dialects emulate are tried the same way. On every
dialect `zz` must appear as often as in DuckDB's SQL, where nothing is emulated.
Whether the bound SQL still means DuckDB's is the differential suite's part
(tests/test_differential.py, tests/test_dialect_meaning.py on PostgreSQL and Spark).
"""

from __future__ import annotations

import contextlib
import gc
import math
import re
import time
from functools import cache
from pathlib import Path

import pytest

import dialects
import strata
from strata.compiler import compile_statements, format_statements
from strata.diagnostics import StrataError
from strata.semantics import functions as F
from strata.semantics.resolve import load_text

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ("source s { id: int, amount: decimal(10, 2), status: text,\n"
          "  zz: int, zd: double, zn: decimal(10, 2), zt: text }\n")
OTHERS = tuple(d for d in dialects.DIALECTS if d != "duckdb")
# a literal, or a column of the examples' table (tests/test_functions_catalogue.py)
OPERAND = re.compile(r"(?:date|timestamp) '[^']*'|-?\d+\.\d+|-?\d+|'[^']*'|\b(?:id|amount|status)\b")
OPERATORS = ["(zd + 1) / (zz + 2)", "(zn + 1) / (zn + 2)", "(zd + 1) % (zd + 2)",
             "(zz + 1) % (zz + 2)", "cast((zt || 'a') as int)", "cast((zt || 'a') as bool)",
             "cast((zd + 1) as text)", "cast((zd + 1) as int)", "cast((zd + 1) as decimal(10, 2))",
             "-(zd + 1)", "(zt || 'a') like 'b%'", "round((zd + 1) / 3, 2)"]


def _reading_the_marker(operand: str) -> str:
    """An expression of the operand's type that reads a marker column once."""
    if operand.startswith(("date", "timestamp")):
        return f"date_add('day', zz * 0, {operand})"
    if operand.startswith("'") or operand == "status":
        return f"(zt || {operand})"
    if "." in operand or operand == "amount":
        return f"(zn * 0 + {operand})"
    return f"(zz * 0 + {operand})"


def _examples() -> list[tuple[str, str, bool]]:
    """(function, expression, is an aggregate): each example with one operand made
    non-simple."""
    found = []
    for name, function in sorted(F.CATALOGUE.items()):
        example = function.example[0]
        for m in OPERAND.finditer(example):
            expr = example[:m.start()] + _reading_the_marker(m.group(0)) + example[m.end():]
            found.append((name, expr, function.aggregate))
    return found + [(op, op, False) for op in OPERATORS]


@cache
def _sql(expr: str, aggregate: bool, dialect: str) -> str | None:
    """The model's SQL, or None where the expression does not check (a literal the
    function requires) or the dialect refuses it (E091)."""
    step = f"aggregate v = {expr}" if aggregate else f"select {expr} as v"
    module = load_text(SOURCE + f"model m {{\n  from s\n  {step}\n}}\n")
    if module.diagnostics:
        return None
    try:
        return strata.model_sql(module, "m", dialect)
    except StrataError:
        return None


def _reads(sql: str) -> int:
    return len(re.findall(r"\bz[zdnt]\b", sql))


EXAMPLES = _examples()


# functions whose example has no operand a marker can stand for
NO_OPERAND = {"count", "row_number", "rank", "dense_rank", "run_date", "run_timestamp"}


def test_every_function_and_emulated_operator_is_tried() -> None:
    tried = {name for name, expr, aggregate in EXAMPLES if _sql(expr, aggregate, "duckdb")}
    assert set(F.CATALOGUE) - tried <= NO_OPERAND
    assert set(OPERATORS) <= tried


@pytest.mark.parametrize("dialect", OTHERS)
def test_an_emulation_reads_each_operand_once(dialect: str) -> None:
    """Aggregates aside: an aggregate spelled as several calls reads its operand in
    each (avg as sum / count, string_agg's order), and cannot nest to copy it again."""
    copied = {}
    for _, expr, aggregate in EXAMPLES:
        if aggregate:
            continue
        duckdb_sql = _sql(expr, aggregate, "duckdb")
        sql = _sql(expr, aggregate, dialect)
        if duckdb_sql is None or sql is None:
            continue
        if _reads(sql) > _reads(duckdb_sql):
            copied[expr] = (_reads(duckdb_sql), _reads(sql))
    assert copied == {}


def _nested(depth: int, inner: str, outer: str) -> str:
    expr = inner
    for _ in range(depth):
        expr = outer.format(expr)
    return expr


NESTINGS = {
    "round of a division": ("zd", "round({} / zz, 2)"),
    "division chain": ("zd", "{} / zz"),
    "round": ("zd", "round({}, 2)"),
    "decimal division": ("zn", "{} / zn"),
    "remainder of doubles": ("zd", "({} % zd)"),
    "substr": ("zt", "substr({}, zz + 1, zz + 2)"),
    "power": ("zd", "power({}, zd + 1)"),
    "right": ("zt", "right({}, zz + 1)"),
    "text to bool to text": ("zt", "cast(cast({} as bool) as text)"),
}


@pytest.mark.parametrize("dialect", dialects.DIALECTS)
@pytest.mark.parametrize("nesting", NESTINGS)
def test_sql_grows_linearly_with_nesting(dialect: str, nesting: str) -> None:
    """Twice the nesting, about twice the text (a copied operand made it 2.3x per
    level: four nested round(a / b, 2) were 55 kB on PostgreSQL, twelve divisions
    2.6 MB). Text is counted without its indentation, which deepens with nesting."""
    inner, outer = NESTINGS[nesting]
    sizes = []
    for depth in (4, 8):
        sql = _sql(_nested(depth, inner, outer), False, dialect)
        if sql is None:
            pytest.skip(f"{dialect} refuses {nesting} (E091)")  # PostgreSQL: % of doubles
        sizes.append(len(re.sub(r"\s+", " ", sql)))
    assert sizes[1] < 2.2 * sizes[0], sizes


def _script(expr: str, dialect: str) -> str:
    """What `compile --show-sql` prints for a model deriving `expr`: the functions of
    Strata's it calls (dialects/routines.py), then its statement."""
    module = load_text(SOURCE + f"model m {{\n  from s\n  select {expr} as v\n}}\n")
    return format_statements(compile_statements(module, dialect, clock=None))


THE_ISSUES_DEEP = {"round(round(..) / b, 2) 8 deep": _nested(8, "zd", "round({} / zz, 2)"),
                   "round 8 deep": _nested(8, "zd", "round({}, 2)"),
                   "12 divisions": _nested(12, "zd", "{} / zz"),
                   "12 divisions of doubles": _nested(12, "zd", "{} / zd")}


@pytest.mark.parametrize("dialect", dialects.DIALECTS)
@pytest.mark.parametrize("label", THE_ISSUES_DEEP)
def test_the_issues_deep_expressions_print_under_10_kb_in_well_under_a_second(
        dialect: str, label: str) -> None:
    """Issue 34's bar, functions included: depth 8 and 12 divisions were 1.57 MB (21 s)
    and 2.65 MB (14 s) on PostgreSQL. CPU seconds, the least of three tries."""
    expr = THE_ISSUES_DEEP[label]
    assert len(_script(expr, dialect)) < 10_000
    assert _compile_cpu(expr, dialect) < 0.5


def test_region_sales_reads_on_postgresql_as_on_duckdb() -> None:
    """examples/shop `region_sales` (330 lines on PostgreSQL against DuckDB's 24): its
    statement is as long as DuckDB's, the functions it calls printed once beside it."""
    with contextlib.chdir(ROOT):
        module = strata.load_module("examples/shop")
    lines = {}
    for dialect in ("duckdb", "postgres", "spark"):
        statements = compile_statements(module, dialect, ["region_sales"], clock=None)
        lines[dialect] = format_statements(statements, functions=False).count("\n")
        assert format_statements(statements).count("\n") <= 5 * lines["duckdb"]
    assert lines["postgres"] <= 2 * lines["duckdb"], lines


def test_the_issues_expressions_stay_small() -> None:
    """The expressions the issue measured (55 kB to 2.6 MB on PostgreSQL and Spark)."""
    exprs = {"round(revenue / order_count, 2)": "round(zd / zz, 2)",
             "round(.. / c, 2) nested 4": "round(round(round(round(zd / zz, 2) / zn, 2) / zz, 2) / zn, 2)",
             "round nested 8": _nested(8, "zd", "round({}, 2)"),
             "12 divisions": _nested(12, "zd", "{} / zz")}
    for label, expr in exprs.items():
        sizes = {d: len(_sql(expr, False, d) or "") for d in ("duckdb", "postgres", "spark")}
        assert sizes["postgres"] < 40_000 and sizes["spark"] < 40_000, (label, sizes)


# bytes a dialect may add per emulated call beyond 3x DuckDB's text: the largest
# spellings are substr's (DuckDB's negative start and length rules, ~2 kB) and the
# exact round of a double (~1.1 kB); a copied operand grew 2.3x per level instead
PER_CALL = 2_500
DEPTHS = (1, 2, 4, 8, 16, 30)


def _flat(sql: str) -> int:
    """Bytes without indentation, which deepens with nesting in any dialect."""
    return len(re.sub(r"\s+", " ", sql))


@pytest.mark.parametrize("dialect", OTHERS)
@pytest.mark.parametrize("nesting", NESTINGS)
def test_sql_is_at_most_three_times_duckdbs_plus_a_fixed_cost_per_call(dialect: str,
                                                                       nesting: str) -> None:
    """Depth 1 to 30: every emulated call adds a bounded spelling around operands that
    appear once, whatever the depth (no E092: deep trees render)."""
    inner, outer = NESTINGS[nesting]
    for depth in DEPTHS:
        expr = _nested(depth, inner, outer)
        sql = _sql(expr, False, dialect)
        if sql is None:
            pytest.skip(f"{dialect} refuses {nesting} (E091)")
        duckdb_size = _flat(_sql(expr, False, "duckdb"))
        assert _flat(sql) <= 3 * duckdb_size + PER_CALL * depth, (depth, _flat(sql), duckdb_size)


def _compile_cpu(expr: str, dialect: str) -> float:
    """CPU seconds of rendering the model, the least of three tries."""
    return _compile_cpu_in("select {} as v", expr, dialect)


def _compile_cpu_in(step: str, expr: str, dialect: str) -> float:
    """CPU seconds of rendering `step` (with `expr` in its place), the least of three."""
    module = load_text(SOURCE + f"model m {{\n  from s\n  {step.format(expr)}\n}}\n")
    best = math.inf
    for _ in range(3):
        gc.collect()
        gc.disable()  # the collector's passes scale with the whole heap of the test
        try:  # process (other tests' objects), not with the work of this rendering
            start = time.process_time()
            strata.model_sql(module, "m", dialect)
            best = min(best, time.process_time() - start)
        finally:
            gc.enable()
    return best


@pytest.mark.parametrize("dialect", ["postgres", "spark"])
@pytest.mark.parametrize("nesting", ["substr", "round of a division", "power"])
def test_compile_work_grows_linearly_with_depth(dialect: str, nesting: str) -> None:
    """Three times the depth, about three times the CPU, far from the nine times of
    work quadratic in the depth (each level copied or walked what it held: substr
    nested 30 deep took 6 s). A growth ratio measured in one process, not a time
    bound; the least of three tries each."""
    inner, outer = NESTINGS[nesting]
    shallow = _compile_cpu(_nested(10, inner, outer), dialect)
    deep = _compile_cpu(_nested(30, inner, outer), dialect)
    assert deep < 6.0 * shallow + 0.05, (shallow, deep)


# ---------------------------------------------------------------- after grouping, in windows
# No binding can name an aggregate or a window (moved into PostgreSQL's scalar subquery it
# would aggregate its one row): such a query computes them in an inner query and the rest
# over their names (dialects/grouped.py). `{}` nests; sa, n and sc are the group's.
GROUPED = "group id\n  aggregate sa = sum(zd), n = count(), sc = sum(zn)\n  derive v = {}"
WINDOWED = "window by status order id\n  derive v = {}"
CONTEXTS = {
    "round of a division of aggregates": (GROUPED, "sa", "round({} / n, 2)"),
    "division chain of aggregates": (GROUPED, "sa", "{} / n"),
    "round of aggregates, decimal divisor": (GROUPED, "sa", "round({} / sc, 2)"),
    "an aggregate item nesting its own calls": ("aggregate v = {}", "sum(zd)",
                                                "round({} / count(), 2)"),
    "round of a division of windows": (WINDOWED, "sum(zd)", "round({} / count(), 2)"),
}


@cache
def _sql_in(step: str, expr: str, dialect: str) -> str:
    module = load_text(SOURCE + f"model m {{\n  from s\n  {step.format(expr)}\n}}\n")
    assert not module.diagnostics, module.diagnostics
    return strata.model_sql(module, "m", dialect)


def _calls(sql: str) -> int:
    """Aggregate and window calls in the text: each is a place an operand's text is."""
    return len(re.findall(r"\b(?:SUM|COUNT)\(", sql, re.IGNORECASE))


@pytest.mark.parametrize("dialect", dialects.DIALECTS)
@pytest.mark.parametrize("context", CONTEXTS)
def test_after_grouping_and_in_windows_sql_is_bounded_and_reads_each_call_once(
        dialect: str, context: str) -> None:
    """Depth 1 to 30 over aggregates or windows: the same bound as over columns, and an
    aggregate's or window's text appears no more often than in DuckDB's SQL (copied,
    four nested round(sum(x) / count(), 2) were 330 lines on PostgreSQL for DuckDB's 24)."""
    step, inner, outer = CONTEXTS[context]
    for depth in DEPTHS:
        expr = _nested(depth, inner, outer)
        sql, duckdb_sql = _sql_in(step, expr, dialect), _sql_in(step, expr, "duckdb")
        assert _calls(sql) <= _calls(duckdb_sql), (depth, _calls(sql), _calls(duckdb_sql))
        assert _flat(sql) <= 3 * _flat(duckdb_sql) + PER_CALL * depth, \
            (depth, _flat(sql), _flat(duckdb_sql))


def test_a_query_whose_spelling_copies_no_aggregate_renders_as_on_duckdb() -> None:
    """The inner query only where an emulation would copy an aggregate: a product and a
    HAVING of plain comparisons keep DuckDB's one SELECT on every dialect."""
    step = "group id\n  aggregate sa = sum(zd), n = count()\n  filter n > 1\n  derive v = sa * 2"
    for dialect in dialects.DIALECTS:
        sql = _sql_in(step, "", dialect)
        assert "__g" not in sql and "HAVING" in sql, dialect


@pytest.mark.parametrize("dialect", ["postgres", "spark"])
def test_compile_work_after_grouping_grows_linearly_with_depth(dialect: str) -> None:
    """The trial that decides the split adapts each expression once more: still linear
    (copied aggregates made it exponential: 21 s at depth 8)."""
    step, inner, outer = CONTEXTS["round of a division of aggregates"]
    shallow = _compile_cpu_in(step, _nested(10, inner, outer), dialect)
    deep = _compile_cpu_in(step, _nested(30, inner, outer), dialect)
    assert deep < 6.0 * shallow + 0.05, (shallow, deep)
