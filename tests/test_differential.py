"""Every dialect executed (issue 15): the SQL `strata build` writes for each model runs on
PostgreSQL and Spark, loaded with the same data as DuckDB, and returns DuckDB's rows.

Strata's meaning is DuckDB's (SPEC §2), so DuckDB's result is the expected one. The
modules are every example under examples/ and each corner-case module under
tests/differential/ (one per language feature, with its data in `data.py` there).

How a statement runs, as the build output expects: a model reads its sources by
their table name (or, where the engine reads files, the file itself, relative to the
repository root where `build` ran) and the models upstream of it as the views
`v_<model>`. Every engine gets the same `v_<model>` tables: DuckDB's rows for that
model, with the model's declared column types. So each test checks one statement
alone, and a difference upstream does not show again in every model downstream.
Incremental statements (an upsert's or append's delta merged with `v_<model>`) run
too, with the watermark WATERMARK.

Results are compared as multisets of values: doubles to a relative tolerance of
real_engines.REL_TOL (1e-9), decimals, integers, text, dates and timestamps exactly.
An integer and a decimal of the same value are equal (PostgreSQL's SUM of bigints is
numeric): the values are compared, not the drivers' Python types.

A statement whose outermost SELECT ends in ORDER BY (a `sort`, `take`) is compared as
an ordered list: Strata's sort keys break every tie, so the order is DuckDB's too.

A model a dialect refuses with a coded error (SPEC §2: what an engine cannot express
faithfully) is skipped for that engine, naming the code. Spark runs with its own
default, ANSI mode on; PostgreSQL with C collation (tests/real_engines.py), and the
corner modules that order or compare text (ICU_MODULES) again on a database of the
same server collated by ICU's en-US (`postgres_icu`), as most installs are.

Run only this suite: `.venv/bin/python -m pytest -q tests/test_differential.py`;
one model: `-k 'shop/region_sales'`.
The TPC-H example (examples/tpch) runs only with STRATA_DIFFERENTIAL_TPCH=1 set: its
generated tables are loaded into each engine row by row, which takes minutes.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
import runpy
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from functools import cache
from pathlib import Path

import pytest
import tpch_data
from real_engines import REL_TOL, ROOT, multiset_difference, same_row, same_value
from sqlglot import exp

import dialects
from strata.compiler import Statement, compile_statements, view_name
from strata.diagnostics import StrataError
from strata.semantics.functions import CATALOGUE, EXTRACT_PARTS
from strata.semantics.module import Module
from strata.semantics.resolve import load_module
from strata.semantics.types import Type
from strata.sqlgen.clock import RunClock

CORNERS_DIR = Path(__file__).resolve().parent / "differential"
ENGINES = ("postgres", "postgres_icu", "spark")
# the modules whose text comparisons, orders, extremes and text cdc columns a non-C
# collation would change: run on postgres_icu too (the others would only repeat
# postgres's rows there, at CI time's cost)
ICU_MODULES = frozenset({"differential/round3", "differential/sort_take",
                         "differential/functions2", "differential/round2",
                         "differential/windows", "differential/functions4"})
WATERMARK = "2024-02-01"  # splits the examples' data: a real delta, a real previous view
CLOCK = RunClock(dt.datetime(2024, 2, 29, 13, 45, 30))  # run_date()/run_timestamp(), fixed
SHOWN = 12  # rows of a difference shown in a failure


def _modules() -> dict[str, tuple[Path, Path | None]]:
    """name -> (module folder, data file): each example (its sources are files), and
    each corner-case folder once per data file (`data.py`, `data_<variant>.py`)."""
    out: dict[str, tuple[Path, Path | None]] = {}
    for p in sorted((ROOT / "examples").iterdir()):
        if p == tpch_data.TPCH_DIR and not os.environ.get("STRATA_DIFFERENTIAL_TPCH"):
            continue  # opt-in: its 200,000 rows load row by row into each engine (~15 min)
        if p.is_dir() and any(p.rglob("*.strata")):
            out[f"examples/{p.name}"] = (p, None)
    for p in sorted(CORNERS_DIR.iterdir()):
        for data in sorted(p.glob("data*.py")) if p.is_dir() else ():
            variant = data.stem.removeprefix("data").removeprefix("_")
            out[f"differential/{p.name}" + (f"~{variant}" if variant else "")] = (p, data)
    return out


MODULES = _modules()


@cache
def module(name: str) -> Module:
    with contextlib.chdir(ROOT):
        loaded = load_module(MODULES[name][0].relative_to(ROOT))
    assert loaded.ok, [d.message for d in loaded.errors]
    return loaded


def _merges(mod: Module, model: str) -> bool:
    inc = mod.plan(model).incremental
    return inc is not None and inc.strategy in ("append", "upsert")


@cache
def statements(name: str, dialect: str) -> dict[tuple[str, str], Statement | StrataError]:
    """The module's statements for `dialect`, by (model, label), as `build` writes them;
    a model the dialect refuses (a coded error, SPEC §2) maps to that error."""
    mod = module(name)
    out: dict[tuple[str, str], Statement | StrataError] = {}
    for model in mod.order:
        try:
            with contextlib.chdir(ROOT):
                stmts = compile_statements(mod, dialect, models=[model],
                                           watermark=WATERMARK if _merges(mod, model) else None,
                                           clock=CLOCK)
        except StrataError as err:
            out[(model, "full")] = err
            continue
        out.update({(s.model, s.label): s for s in stmts})
    return out


def engines_of(name: str) -> tuple[str, ...]:
    return tuple(e for e in ENGINES if e != "postgres_icu" or name in ICU_MODULES)


CASES = [(name, model, label, engine) for name in MODULES
         for model, label in statements(name, "duckdb") for engine in engines_of(name)]


def _id(case: tuple[str, str, str, str]) -> str:
    name, model, label, engine = case
    suffix = "" if label == "full" else f"[{label}]"
    return f"{name}/{model}{suffix}-{engine}"


# ---------------------------------------------------------------------------
# The data every engine gets


def type_name(t: Type) -> str:
    """A column type as real_engines.load takes it (an untyped NULL column is text)."""
    if t.kind == "null":
        return "text"
    if t.kind == "decimal" and t.precision is None:
        return f"decimal(18, {t.scale or 0})"
    if t.kind == "list":
        return f"list<{type_name(t.element)}>"
    return str(t)


@dataclass
class Table:
    columns: dict[str, str]
    rows: list[tuple]


@dataclass
class Reference:
    """DuckDB's results: each statement's rows (or its error), and the tables every
    engine is loaded with (sources, then `v_<model>` for every model)."""

    tables: dict[str, Table] = field(default_factory=dict)
    rows: dict[tuple[str, str], list[tuple]] = field(default_factory=dict)
    errors: dict[tuple[str, str], str] = field(default_factory=dict)


def _source_tables(name: str, duck) -> dict[str, Table]:
    """Each source's rows: from the module's data.py, or read from its file by DuckDB
    as Strata reads it (the declared types, via the DuckDB dialect's reader)."""
    mod = module(name)
    data_file = MODULES[name][1]
    given = runpy.run_path(str(data_file))["TABLES"] if data_file else {}
    out: dict[str, Table] = {}
    for source in mod.sources.values():
        columns = {c: type_name(t) for c, t in source.columns}
        table = ".".join(source.physical)
        if source.file is not None:
            out[table] = Table(columns, _file_rows(source, duck))
        else:
            assert source.name in given, f"{data_file} has no rows for source {source.name}"
            out[table] = Table(columns, list(given[source.name]))
    return out


def _file_rows(source, duck) -> list[tuple]:
    from sqlglot import exp

    reader = dialects.get("duckdb").file_source(
        str(source.file.relative_to(ROOT)), source.name, source.file_types())
    query = exp.select(*[exp.column(c, quoted=True) for c, _ in source.columns]).from_(reader)
    return duck.rows(query.sql(dialect="duckdb"))


_REFERENCES: dict[str, Reference] = {}
_LOADED: dict[str, str] = {}  # engine name -> the module whose tables it holds


def reference(name: str, duck) -> Reference:
    """DuckDB runs the module once: each model in dependency order, its rows becoming
    the `v_<model>` the models downstream read; then the incremental statements."""
    if name in _REFERENCES:
        return _REFERENCES[name]
    mod = module(name)
    if MODULES[name][0] == tpch_data.TPCH_DIR:
        tpch_data.ensure()  # the TPC-H example's data is generated, not committed
    ref = Reference(tables=_source_tables(name, duck))
    for table, data in ref.tables.items():
        duck.load(table, data.columns, data.rows)
    stmts = statements(name, "duckdb")
    for model in mod.order:
        key = (model, "full")
        columns = {c.name: type_name(c.type) for c in mod.plan(model).output}
        try:
            ref.rows[key] = duck.rows(_sql(stmts[key]))
            duck.load(view_name(model), columns, ref.rows[key])
        except Exception as err:  # noqa: BLE001 -- any failure is the test's to report
            ref.errors[key] = f"{type(err).__name__}: {err}"
            ref.rows[key] = []
            duck.load(view_name(model), columns, [])
        ref.tables[view_name(model)] = Table(columns, ref.rows[key])
    for key, stmt in stmts.items():
        if key[1] != "full":
            try:
                ref.rows[key] = duck.rows(_sql(stmt))
            except Exception as err:  # noqa: BLE001 -- reported by the statement's tests
                ref.errors[key] = f"{type(err).__name__}: {err}"
    _REFERENCES[name] = ref
    _LOADED["duckdb"] = name
    return ref


def _sql(stmt: Statement | StrataError) -> str:
    if isinstance(stmt, StrataError):
        raise stmt
    return stmt.sql


def prepare(engine, name: str, ref: Reference) -> None:
    """Load the module's tables into `engine`, unless it holds them already."""
    if _LOADED.get(engine.name) == name:
        return
    for table, data in ref.tables.items():
        engine.load(table, data.columns, data.rows)
    _LOADED[engine.name] = name


# ---------------------------------------------------------------------------
# The test


def _show(rows: list[tuple]) -> str:
    lines = [f"    {r!r}" for r in rows[:SHOWN]]
    if len(rows) > SHOWN:
        lines.append(f"    ... {len(rows) - SHOWN} more")
    return "\n".join(lines) or "    (none)"


@pytest.mark.parametrize(("name", "model", "label", "engine_name"), CASES,
                         ids=[_id(c) for c in CASES])
def test_engine_returns_duckdbs_rows(name, model, label, engine_name, duckdb_engine, request):
    """The statement `build` writes for `engine_name` returns DuckDB's rows."""
    engine = request.getfixturevalue(f"{engine_name}_engine")
    ref = reference(name, duckdb_engine)
    key = (model, label)
    assert key not in ref.errors, f"DuckDB itself fails: {ref.errors[key]}"
    stmt = statements(name, engine.dialect)[key]
    if isinstance(stmt, StrataError):
        # SPEC §2: what an engine cannot express faithfully is a coded compile error
        codes = [d.code for d in stmt.diagnostics]
        assert codes and all(codes), f"refused without a code: {stmt}"
        pytest.skip(f"{engine.name} refuses {model}: {codes}")
    prepare(engine, name, ref)
    sql = stmt.sql
    try:
        got = engine.rows(sql)
    except Exception as err:  # noqa: BLE001 -- each driver has its own error classes
        failure = f"{engine.name} fails: {type(err).__name__}: {str(err)[:800]}"
    else:
        failure = None
    if failure:  # outside the except block: the report is the error, not its traceback
        pytest.fail(f"{failure}\nSQL:\n{sql}", pytrace=False)
    missing, extra = multiset_difference(ref.rows[key], got)
    assert not missing and not extra, (
        f"{engine.name} differs from DuckDB on {len(ref.rows[key])} expected rows\n"
        f"  DuckDB only:\n{_show(missing)}\n  {engine.name} only:\n{_show(extra)}\n"
        f"SQL:\n{sql}")
    if ends_sorted(statements(name, "duckdb")[key]):
        at = first_out_of_order(ref.rows[key], got)
        assert at is None, (f"{engine.name} returns DuckDB's rows in another order, from row "
                            f"{at}:\n  DuckDB:\n{_show(ref.rows[key][at:])}\n  {engine.name}:"
                            f"\n{_show(got[at:])}\nSQL:\n{sql}")


def ends_sorted(stmt: Statement) -> bool:
    """Does the statement's outermost SELECT order its rows (a sort, a take)?"""
    return isinstance(stmt.tree, exp.Select) and stmt.tree.args.get("order") is not None


def first_out_of_order(expected: list[tuple], got: list[tuple]) -> int | None:
    """The first position where two lists of the same rows differ, or None."""
    return next((i for i, (a, b) in enumerate(zip(expected, got, strict=True))
                 if not same_row(a, b)), None)


ALL_TYPES = {"id": "int", "x": "double", "d": "decimal(10, 2)", "t": "text", "b": "bool",
             "day": "date", "ts": "timestamp", "tags": "list<text>"}
ALL_TYPES_ROWS = [
    (1, 1.5, Decimal("2.25"), "it's ü 😀", True, date(2024, 2, 29),
     datetime(2024, 3, 31, 23, 59, 59, 500000), ["a", None]),
    (2, None, None, None, None, None, None, None),
    (3, -0.0, Decimal("-3.00"), "", False, date(1969, 12, 31), datetime(1970, 1, 1), []),
]


@pytest.mark.parametrize("engine_name", ("duckdb", *ENGINES))
def test_an_engine_returns_what_it_was_loaded_with(engine_name, request):
    """Every Strata type goes into each engine and comes back as the same Python value
    (a table loaded twice is replaced): the ground the comparisons stand on."""
    engine = request.getfixturevalue(f"{engine_name}_engine")
    _LOADED.pop(engine.name, None)  # the next differential test reloads its module
    engine.load("__roundtrip", ALL_TYPES, [ALL_TYPES_ROWS[0]])
    engine.load("__roundtrip", ALL_TYPES, ALL_TYPES_ROWS)
    got = sorted(engine.rows("SELECT * FROM __roundtrip"), key=lambda r: r[0])
    assert got == ALL_TYPES_ROWS
    assert [type(v) for v in got[0]] == [int, float, Decimal, str, bool, date, datetime, list]


def test_the_postgres_server_is_private_and_throwaway(postgres_engine):
    """The server the tests start listens on no TCP address, only on a Unix socket in
    its own temporary directory, and runs without fsync (it is thrown away)."""
    settings = dict(postgres_engine.rows(
        "SELECT name, setting FROM pg_settings WHERE name IN "
        "('listen_addresses', 'unix_socket_directories', 'fsync', 'lc_collate')"))
    assert settings == {"listen_addresses": "", "fsync": "off", "lc_collate": "C",
                        "unix_socket_directories": str(postgres_engine.server.root)}


def test_rows_compare_as_multisets_with_doubles_to_a_tolerance():
    assert multiset_difference([(1,), (1,), (2,)], [(2,), (1,), (1,)]) == ([], [])
    assert multiset_difference([(1,), (1,)], [(1,), (2,)]) == ([(1,)], [(2,)])
    assert same_value(0.1 + 0.2, 0.3) and same_value(1e300, 1e300 * (1 + REL_TOL / 2))
    assert not same_value(2.75, 2.76) and not same_value(1.0, 1.0 + 1e-6)
    assert same_value(float("nan"), float("nan")) and same_value(-0.0, 0.0)
    # decimals and integers exactly, by value; timestamps exactly; NULL only equals NULL
    assert same_value(Decimal("1.50"), Decimal("1.5")) and same_value(Decimal(2), 2)
    assert not same_value(Decimal("2.755"), Decimal("2.76"))
    assert not same_value(datetime(2024, 1, 1), datetime(2024, 1, 1, 0, 0, 0, 1))
    assert not same_value(None, 0) and not same_value("", None) and same_value(None, None)
    assert not same_value(True, 1) and not same_value("1", 1)
    assert same_value(["a", None], ["a", None]) and not same_value(["a"], ["a", None])


def test_every_model_of_every_module_is_executed_on_every_engine():
    for name in MODULES:
        for engine in engines_of(name):
            assert {m for n, m, _, e in CASES if n == name and e == engine} == \
                set(module(name).order), (name, engine)
    assert any(n.startswith("examples/") for n in MODULES)
    assert ICU_MODULES <= set(MODULES)


def test_the_icu_database_orders_text_otherwise(postgres_icu_engine):
    """postgres_icu is a database of the same server whose collation is ICU's en-US:
    uncollated, '_' and '~' sort before digits and 'a' before 'B' there (in C after)."""
    (row,) = postgres_icu_engine.rows(
        "SELECT d.datlocprovider, d.daticulocale, '_' < '2', '~' < '2', 'a' < 'B', "
        "'a' COLLATE \"C\" < 'B' FROM pg_database AS d WHERE d.datname = current_database()")
    assert row == ("i", "en-US", True, True, True, False)


def test_a_sorted_result_is_compared_in_order():
    rows = [(1, "a"), (2, "B")]
    assert first_out_of_order(rows, list(rows)) is None
    assert first_out_of_order(rows, rows[::-1]) == 0
    take = statements("differential/sort_take", "duckdb")[("t_take", "full")]
    plain = statements("differential/steps", "duckdb")[("st_from", "full")]
    assert ends_sorted(take) and not ends_sorted(plain)


STEPS = ("from", "let", "filter", "join", "join_left", "join many", "join_left many",
         "expand", "group", "aggregate", "derive", "select", "union", "union_distinct",
         "except", "intersect")
OPERATORS = ("+", "-", "*", "/", "%", "||", "=", "!=", "<>", "<", "<=", ">", ">=", " and ",
             " or ", "not ", " is null", " is not null", " in (", " not in (", " between ",
             " not between ", " like ", " not like ", "case when", "cast(")


# aggregates the checker refuses over a window (a windowed DISTINCT, the pick of a row
# among ties): the test below checks that it does
NOT_WINDOWED = ("count_distinct", "arg_min", "arg_max")
WINDOW_DERIVES = re.compile(
    r"^\s*window\b[^\n]*\n(?:\s*(?:rows|range) between[^\n]*\n)?\s*derive\b(.*?)"
    r"(?=^\s*(?:select|filter|derive|window|sort|take|group|join|let|from|incremental)\b|^\})",
    re.MULTILINE | re.DOTALL)


def test_the_corner_modules_use_every_aggregate_over_a_window(tmp_path):
    """An aggregate of the catalogue with no windowed corner case fails this test (LANGUAGE.md
    allows every aggregate after `window`), like the one below for functions."""
    code = re.sub(r"--[^\n]*", "", "\n".join(
        p.read_text() for p in sorted(CORNERS_DIR.rglob("*.strata"))))
    windowed = "\n".join(m.group(1) for m in WINDOW_DERIVES.finditer(code))
    aggregates = [n for n, f in CATALOGUE.items() if f.aggregate and n not in NOT_WINDOWED]
    assert [a for a in aggregates if not re.search(rf"\b{a}\(", windowed)] == []
    for name in NOT_WINDOWED:
        (tmp_path / "m.strata").write_text(
            f"source t {{\n  id: int\n  g: int\n}}\nmodel m {{\n  from t\n  window by g\n"
            f"  derive n = {name}(id{', g' if name.startswith('arg') else ''})\n  select id, n\n}}\n")
        refused = load_module(tmp_path)
        assert not refused.ok and any(name in d.message for d in refused.errors), name


def test_the_corner_modules_use_every_function_extract_part_step_and_operator():
    """A function, extract part or step added to the language without a corner case
    here fails this test: the differential suite must reach all of them."""
    code = re.sub(r"--[^\n]*", "", "\n".join(
        p.read_text() for p in sorted(CORNERS_DIR.rglob("*.strata"))))
    assert [f for f in CATALOGUE if not re.search(rf"\b{f}\(", code)] == []
    assert [p for p in EXTRACT_PARTS if f"extract({p} from" not in code] == []
    assert [s for s in STEPS if not re.search(rf"^\s*{s}\b", code, re.MULTILINE)] == []
    assert [o for o in OPERATORS if o not in code] == []
