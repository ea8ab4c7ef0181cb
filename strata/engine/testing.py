"""`strata test`: every `test` block run in its own in-memory DuckDB (SPEC §1.7, §3.8).

A test computes the models its `expect` blocks name (and what they read) in full, as
a first run would: no warehouse, no snapshots, no incremental saving. `given` rows
replace a source, or a model's whole output (its downstream reads the rows); a
source not given is an empty table of its declared columns. Pins and the join
fan-out check run on every computed model, as in a run; a violation fails the test.

Expectations compare the listed columns as multisets. Expected values are cast to
the type the engine gave the column (so `7.5` meets a DECIMAL and `'2024-01-01'` a
DATE), and doubles are compared to 12 significant digits.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from decimal import Decimal

import duckdb
from sqlglot import exp

from dialects import duckdb as duck
from strata.compiler import require_ok, select_models
from strata.engine.pins.checks import check_pins, check_pins_after, unique_key
from strata.engine.pins.joins import check_joins
from strata.engine.pins.results import CheckLog, PinError
from strata.plan import RelationRef
from strata.semantics.expressions import constant_value
from strata.semantics.module import Module
from strata.semantics.types import Type
from strata.sqlgen.build import model_query
from strata.sqlgen.literals import lit
from strata.sqlgen.names import ident, table
from strata.syntax import ast
from strata.textsafe import first_line

SOURCES, MODELS = "given_sources", "models"
DIGITS = 12  # doubles agree when they agree to this many significant digits
ENGINE = duck.DIALECT  # a test runs in an in-memory DuckDB: its SQL is DuckDB's


def _sql(tree: exp.Expression) -> str:
    """A statement built for this test alone, rendered for the test's engine."""
    return ENGINE.render(tree, pretty=False, copy=False)


def _create_schema(name: str) -> exp.Create:
    return exp.Create(this=exp.Table(db=ident(name)), kind="SCHEMA")


def _create_table_as(target: exp.Table, query: exp.Expression) -> exp.Create:
    return exp.Create(this=target, kind="TABLE", expression=query)


def _select_from(items: list[exp.Expression], relation: exp.Table) -> exp.Select:
    query = exp.Select(expressions=items)
    query.set("from_" if "from_" in exp.Select.arg_types else "from", exp.From(this=relation))
    return query


@dataclass
class Failure:
    kind: str  # expect | pin | error
    message: str
    model: str | None = None
    columns: list[str] = field(default_factory=list)
    missing: list[tuple] = field(default_factory=list)  # expected, not in the result
    extra: list[tuple] = field(default_factory=list)  # in the result, not expected
    expected_rows: int = 0
    actual_rows: int = 0
    notes: list[str] = field(default_factory=list)
    line: int | None = None

    def to_json(self) -> dict:
        out = {"kind": self.kind, "message": self.message, "model": self.model}
        if self.kind == "expect":
            out.update(columns=self.columns, missing=[list(map(_json, r)) for r in self.missing],
                       extra=[list(map(_json, r)) for r in self.extra],
                       expected_rows=self.expected_rows, actual_rows=self.actual_rows)
        if self.notes:
            out["notes"] = self.notes
        return out


@dataclass
class TestResult:
    name: str
    file: str | None
    line: int | None
    failures: list[Failure] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    skipped_checks: list[dict] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return not self.failures

    def to_json(self) -> dict:
        return {"name": self.name, "status": "passed" if self.passed else "failed",
                "file": self.file, "line": self.line, "seconds": round(self.seconds, 4),
                "failures": [f.to_json() for f in self.failures],
                "checks": self.checks, "skipped_checks": self.skipped_checks}


@dataclass
class TestReport:
    results: list[TestResult] = field(default_factory=list)

    @property
    def passed(self) -> int:
        return sum(r.passed for r in self.results)

    @property
    def failed(self) -> int:
        return len(self.results) - self.passed

    @property
    def summary(self) -> str:
        return f"{self.passed} passed, {self.failed} failed"

    def to_json(self) -> dict:
        return {"tests": [r.to_json() for r in self.results], "passed": self.passed,
                "failed": self.failed}


def run_tests(module: Module, models: list[str] | None = None) -> TestReport:
    """Run every test of the module; with `models`, only tests expecting one of them."""
    require_ok(module)
    wanted = set(select_models(module, models)) if models else None
    report = TestReport()
    for test in module.tests.values():
        expected = {b.relation for b in test.blocks if b.kind == "expect"}
        if wanted is not None and not expected & wanted:
            continue
        report.results.append(run_test(module, test))
    return report


def run_test(module: Module, test: ast.TestDecl) -> TestResult:
    started = time.perf_counter()
    result = TestResult(test.name, test.span.file if test.span else None,
                        test.span.line if test.span else None)
    con = duckdb.connect(":memory:")
    try:
        _Test(module, test, con, result).run()
    except _Stop:
        pass
    finally:
        con.close()
    result.seconds = time.perf_counter() - started
    return result


class _Stop(Exception):
    """A failure that ends the test (the rest would only repeat it)."""


class _Test:
    def __init__(self, module: Module, test: ast.TestDecl, con, result: TestResult):
        self.module, self.test, self.con, self.result = module, test, con, result
        self.given = {b.relation: b for b in test.blocks if b.kind == "given"}
        self.verified: dict[str, list[str]] = {}
        self.log = CheckLog()

    # ------------------------------------------------------------ the test
    def run(self) -> None:
        con = self.con
        con.execute(_sql(_create_schema(SOURCES)))
        con.execute(_sql(_create_schema(MODELS)))
        needed = self._needed()
        for name in sorted({s for m in needed for s in self.module.models[m].sources_read}):
            columns = self.module.sources[name].columns
            self._create(table(SOURCES, name), columns, self.given.get(name), name)
        try:
            for name in needed:
                self._model(name)
            for name in needed:
                self._pins_after(name, needed)
        finally:
            self.result.checks = self.log.ran
            self.result.skipped_checks = self.log.skipped
        for block in self.test.blocks:
            if block.kind == "expect":
                self._expect(block)

    def _needed(self) -> list[str]:
        """The expected models and what they read, up to the given ones. A test without
        `expect` computes every model reading a given relation (to check its pins)."""
        targets = [b.relation for b in self.test.blocks if b.kind == "expect"]
        if not targets:
            targets = sorted(self.module.downstream(
                {g for g in self.given if g in self.module.models},
                {g for g in self.given if g in self.module.sources}))
        seen: set[str] = set()
        stack = list(targets)
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            if name not in self.given:
                stack.extend(self.module.models[name].models_read)
        return [m for m in self.module.order if m in seen]

    # ------------------------------------------------------------ relations
    def relations(self, ref: RelationRef, alias: str | None) -> exp.Expression:
        return table(SOURCES if ref.kind == "source" else MODELS, ref.name, alias=alias)

    def relation_sql(self, ref: RelationRef) -> exp.Expression:
        """Where a pin or a join check reads `ref`: the tree itself."""
        return self.relations(ref, None)

    def verified_unique(self, ref: RelationRef, columns: list[str]) -> bool:
        return ref.kind == "model" and unique_key(columns) in self.verified.get(ref.name, [])

    def _create(self, target: exp.Table, columns: list[tuple[str, Type]],
                block: ast.RowsBlock | None, name: str) -> None:
        """A table of these typed columns holding the block's rows (none without one)."""
        rows = _typed_rows(block, [(n, t.to_sqlglot()) for n, t in columns])
        query = _union(rows, [(n, t.to_sqlglot()) for n, t in columns])
        try:
            self.con.execute(_sql(_create_table_as(target, query)))
        except duckdb.Error as err:
            self._stop("error", f"given `{name}`: {_first_line(err)}",
                       line=block.span.line if block else None)

    def _model(self, name: str) -> None:
        info = self.module.models[name]
        plan = info.plan
        if name in self.given:
            self._create(table(MODELS, name), [(c.name, c.type) for c in plan.output],
                         self.given[name], name)
            return
        target = table(MODELS, name)
        try:
            check_joins(self.con, plan, self.relations, self.relation_sql, self.verified_unique,
                        self.log)
            self.con.execute(_sql(_create_table_as(target.copy(),
                                                   model_query(plan, self.relations))))
            (rows,) = self.con.execute(_sql(_select_from(
                [exp.Count(this=exp.Star())], target.copy()))).fetchone()
            self.verified[name] = check_pins(self.con, target, plan, rows, self.log,
                                             self.verified_unique, self.relation_sql)
        except PinError as err:
            for v in err.violations:
                self.result.failures.append(Failure(
                    "pin", f"error[{v.code}]: model `{v.model}`: {v.check} violated: "
                    f"{v.message}", v.model, notes=[d for d in v.diagnostic().notes],
                    line=v.span.line if v.span else None))
            raise _Stop from None
        except duckdb.Error as err:
            self._stop("error", f"model `{name}` failed in the engine: {_first_line(err)}",
                       model=name)

    def _pins_after(self, name: str, needed: list[str]) -> None:
        """A computed model's pins whose relation reads it (`PinSpec.after`), once
        every model is, as a run checks them; those whose relation the test does not
        compute are skipped."""
        plan = self.module.plan(name)
        after = [p for p in plan.pins if p.after]
        if name in self.given or not after:
            return
        checked = [p for p in after if p.relation.name in needed]
        for pin in after:
            if pin not in checked:
                self.log.skip(pin.describe(), f"the test computes no `{pin.relation.name}`")
        found = check_pins_after(self.con, table(MODELS, name), replace(plan, pins=checked),
                                 self.log, self.relation_sql)
        for v in found:
            self.result.failures.append(Failure(
                "pin", f"error[{v.code}]: model `{v.model}`: {v.check} violated: "
                f"{v.message}", v.model, notes=list(v.diagnostic().notes),
                line=v.span.line if v.span else None))
        if found:
            raise _Stop

    def _stop(self, kind: str, message: str, model: str | None = None,
              line: int | None = None) -> None:
        self.result.failures.append(Failure(kind, message, model, line=line))
        raise _Stop

    # ------------------------------------------------------------ expectations
    def _expect(self, block: ast.RowsBlock) -> None:
        source = table(MODELS, block.relation)
        described = exp.Describe(this=_select_from([exp.Star()], source.copy()))
        engine = {r[0]: r[1] for r in self.con.execute(_sql(described)).fetchall()}
        types = [(c, exp.DataType.build(engine[c], dialect=ENGINE.sqlglot))
                 for c in block.columns]
        listed = _select_from([exp.column(ident(c)) for c in block.columns], source)
        actual = self.con.execute(_sql(listed)).fetchall()
        try:
            expected = self.con.execute(_sql(_union(_typed_rows(block, types), types))
                                        ).fetchall()
        except duckdb.Error as err:
            self.result.failures.append(Failure(
                "expect", f"expect `{block.relation}`: the expected rows do not fit the "
                f"model's columns: {_first_line(err)}", block.relation, line=block.span.line))
            return
        want = Counter(_canon(r) for r in expected)
        have = Counter(_canon(r) for r in actual)
        if want == have:
            return
        shown = {_canon(r): r for r in [*actual, *expected]}
        missing = sorted((shown[k] for k in (want - have).elements()), key=_order)
        extra = sorted((shown[k] for k in (have - want).elements()), key=_order)
        parts = [f"{len(missing)} missing"] if missing else []
        parts += [f"{len(extra)} extra"] if extra else []
        self.result.failures.append(Failure(
            "expect", f"expect `{block.relation}` ({', '.join(block.columns)}): "
            f"{', '.join(parts)} (expected {_rows(len(expected))}, got {_rows(len(actual))})",
            block.relation, list(block.columns), missing, extra, len(expected), len(actual),
            line=block.span.line))


# ---------------------------------------------------------------- rows as SQL
def _typed_rows(block: ast.RowsBlock | None, columns: list[tuple[str, exp.DataType]]
                ) -> list[list[exp.Expression]]:
    """Each row of the block as one cast literal per column (NULL for columns the block
    does not list)."""
    if block is None:
        return []
    out = []
    for row in block.rows:
        values = dict(zip(block.columns, row))
        out.append([exp.Cast(this=lit(constant_value(values[n])) if n in values else exp.Null(),
                             to=t.copy()) for n, t in columns])
    return out


def _union(rows: list[list[exp.Expression]], columns: list[tuple[str, exp.DataType]]
           ) -> exp.Expression:
    def select(values):
        return exp.Select(expressions=[exp.Alias(this=v, alias=ident(n))
                                       for v, (n, _) in zip(values, columns)])

    if not rows:
        empty = select([exp.Cast(this=exp.Null(), to=t.copy()) for _, t in columns])
        return empty.limit(0)
    query = select(rows[0])
    for values in rows[1:]:
        query = exp.Union(this=query, expression=select(values), distinct=False)
    return query


# ---------------------------------------------------------------- comparing values
def _canon(value):
    """A hashable value equal for values a reader calls equal."""
    if isinstance(value, (tuple, list)):
        return tuple(_canon(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _canon(v)) for k, v in value.items()))
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        return float(f"{value:.{DIGITS}g}")
    if isinstance(value, Decimal):
        return value.normalize() if value.is_finite() else str(value)
    return value


def _rows(n: int) -> str:
    return f"{n} row" + ("" if n == 1 else "s")


def _order(row) -> tuple:
    return tuple((v is None, str(v)) for v in row)


def show_value(value) -> str:
    """A value as a Strata literal: 'text', null, true, date '2024-01-01', [1, 2]."""
    import datetime as dt

    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, dt.datetime):
        return f"timestamp '{value.isoformat(sep=' ')}'"
    if isinstance(value, dt.date):
        return f"date '{value.isoformat()}'"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(show_value(v) for v in value) + "]"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _json(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    return show_value(value) if not isinstance(value, Decimal) else str(value)


def _first_line(err: Exception) -> str:
    return first_line(str(err), type(err).__name__)
