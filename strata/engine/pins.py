"""Pins and join cardinality, checked in SQL on the engine before anything publishes.

Semantics:
- `pin unique [cols]`: no two rows share the values of `cols`, NULL counted as a value
  (two rows whose `id` is NULL share it). This is the stricter reading, the one an
  upsert merge (null-safe key equality) and the join exemption below rely on. Add
  `pin not_null [cols]` to forbid the NULL itself.
- Join fan-out (`join`/`join_left` without `many`): no left row may match two right
  rows. Right rows with a NULL key never match (`=` on NULL is not true), so they
  cannot fan out; duplicated right keys no left row matches are harmless.
- The fan-out check is skipped when the right side is a model whose `pin unique` on
  exactly the join's key columns was verified (in this run, or recorded with the
  snapshot being read), or proven by the plan (one row per `group` key).

Cost (SPEC: "in SQL on the engine"): no rows reach Python except a sample of
offenders after a violation. `pin rows` reads the row count the run has anyway and
`pin columns` the table's DESCRIBE. Every `not_null` pin shares one query the engine
answers from column statistics when nothing is NULL. Every `unique` pin on integer
columns shares one scan: a unique integer key maps each row to a slot of a bitmap
(`bitstring_agg`), and the key is unique iff as many slots are set as there are rows. Other unique pins cost one hash aggregate each, grouping by the key. Only
after a violation do the slower queries run that count offenders and fetch a sample.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from functools import lru_cache, reduce

import sqlglot
from sqlglot import exp

from dialects import duckdb as duck
from dialects.base import Dialect
from strata.diagnostics import Diagnostic, Span, StrataError
from strata.engine.adapters.base import Adapter
from strata.plan import (
    AggregateStage,
    Col,
    ColRef,
    DeriveStage,
    FilterStage,
    JoinStage,
    PinSpec,
    Plan,
    RelationRef,
    SelectStage,
)
from strata.semantics.checks import types_fit
from strata.semantics.types import Type
from strata.sqlgen.build import Relations, bind, model_query
from strata.sqlgen.clock import bind_clock
from strata.sqlgen.names import column

SAMPLE = 5
BITMAP_BITS = 1 << 28  # at most 32 MB of bitmap per uniqueness scan
NOTHING_PUBLISHED = "nothing was published"


# ---------------------------------------------------------------- results
@dataclass
class CheckLog:
    """What was checked and what was skipped (and why), for --json and the display;
    every statement run, with its time, for tests and the benchmark.

    Statements are SQLGlot trees, rendered here for the warehouse's engine: `dialect`
    (DuckDB's unless a caller says otherwise), and `bitmaps` says whether that engine
    has DuckDB's `bitstring_agg`/`bit_count` for the one-scan uniqueness check (an
    engine without them groups by the key instead)."""

    ran: list[str] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)
    statements: list[str] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    dialect: Dialect = duck.DIALECT
    bitmaps: bool = True
    # the run's Relations where the model reads the run's clock: a check built from
    # the model's own expressions (a join condition) binds run_date() as its SQL does
    clock: Relations | None = None

    def render(self, statement: exp.Expression) -> str:
        if self.clock is not None:
            statement = bind_clock(statement, self.clock)
        # a statement's own nodes are built for it; the nodes it shares with the
        # check's other statements are only copied for an engine whose rewrites edit
        # the tree in place (DuckDB has none)
        return self.dialect.render(statement, pretty=False, copy=bool(self.dialect.rewrites))

    def sql(self, wh, statement: exp.Expression) -> None:
        self.rows(wh, statement)

    def rows(self, wh, statement: exp.Expression) -> list[tuple]:
        """The statement's rows from `wh`: an engine adapter (which renders for its
        engine: `dialect` should be its dialect), or a DuckDB warehouse/connection."""
        text = self.render(statement)
        started = time.perf_counter()
        # an adapter runs the text rendered here (its dialect is the log's): one render
        rows = wh.rows_text(text) if isinstance(wh, Adapter) else wh.execute(text).fetchall()
        self.statements.append(text)
        self.seconds.append(time.perf_counter() - started)
        return rows

    def skip(self, check: str, reason: str) -> None:
        self.skipped.append({"check": check, "reason": reason})


@dataclass(frozen=True)
class Violation:
    """One failed check: its code (E060–E064), the model, the check, how many rows (or
    key values) offend, and a sample of them."""

    code: str
    model: str
    check: str
    count: int
    message: str
    sample: tuple[dict, ...] = ()
    span: Span | None = None
    hint: str = NOTHING_PUBLISHED

    def diagnostic(self) -> Diagnostic:
        notes = (f"sample: {_sample_text(self.sample)}",) if self.sample else ()
        return Diagnostic(self.code, f"model `{self.model}`: {self.check} violated: "
                          f"{self.message}", self.span, self.hint, notes=notes)

    def to_json(self) -> dict:
        return {"code": self.code, "model": self.model, "check": self.check,
                "count": self.count, "message": self.message,
                "sample": [{k: _json_value(v) for k, v in row.items()} for row in self.sample]}


class PinError(StrataError):
    """Pins or join cardinality violated: the run fails and publishes nothing."""

    def __init__(self, violations: list[Violation], note: str | None = None):
        self.violations = list(violations)
        diagnostics = [v.diagnostic() for v in self.violations]
        if note and diagnostics:  # e.g. the models a failing model kept from being built
            last = diagnostics[-1]
            diagnostics[-1] = replace(last, notes=(*last.notes, note))
        super().__init__(diagnostics)


# ---------------------------------------------------------------- SQL helpers
# Every statement is built as a tree from the nodes below; a column name is only ever
# a quoted identifier. A relation arrives as a tree (a table, or a subquery), or as
# the text a caller rendered it to, parsed once (a run checks each snapshot once,
# and the join checks read the same dimensions again and again).
# A check's statements share its relation, key and condition nodes instead of copying
# them (copies were a third of the checks' Python time on small tables): rendering
# reads a node's arguments, never its parent, and CheckLog.render copies the whole
# statement first for an engine whose rewrites edit trees in place.
def _col(name: str, table: str | None = None) -> exp.Column:
    """A quoted column, optionally qualified by one of the checks' own aliases."""
    return exp.Column(this=exp.to_identifier(name, quoted=True),
                      table=exp.to_identifier(table) if table else None)


def _cols(names) -> list[exp.Column]:
    return [_col(n) for n in names]


def _count() -> exp.Count:
    return exp.Count(this=exp.Star())


def _num(value: int) -> exp.Literal:
    return exp.Literal.number(value)


def _more_than_one() -> exp.GT:
    return exp.GT(this=_count(), expression=_num(1))


def _is_null(node: exp.Expression) -> exp.Is:
    return exp.Is(this=node, expression=exp.Null())


def _any_null(names) -> exp.Expression:
    return exp.or_(*[_is_null(_col(c)) for c in names], copy=False)


_FROM = "from_" if "from_" in exp.Select.arg_types else "from"  # its name by SQLGlot version
_WITH = "with_" if "with_" in exp.Select.arg_types else "with"


@lru_cache(maxsize=4096)
def _parsed_relation(text: str) -> exp.Expression:
    return sqlglot.parse_one("SELECT * FROM " + text, read="duckdb").find(exp.From).this


def relation_tree(relation: str | exp.Expression, alias: str | None = None) -> exp.Expression:
    """`relation` (a tree, or a FROM item's DuckDB text) as a tree; with an alias, a
    private copy carrying it."""
    node = _parsed_relation(relation) if isinstance(relation, str) else relation
    if alias is not None:
        node = node.copy()
        node.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
    return node


def _named(name: str, alias: str | None = None) -> exp.Table:
    """One of the checks' own CTEs (`__left`, `__d`), optionally aliased."""
    node = exp.Table(this=exp.to_identifier(name))
    if alias is not None:
        node.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
    return node


def _select(items, relation: exp.Expression, where: exp.Expression | None = None
            ) -> exp.Select:
    """SELECT items FROM relation [WHERE where] (relation and condition shared)."""
    query = exp.Select(expressions=list(items))
    query.set(_FROM, exp.From(this=relation))
    if where is not None:
        query.set("where", exp.Where(this=where))
    return query


def _limited(query: exp.Select, order: list[exp.Expression] | None = None) -> exp.Select:
    """The query's first SAMPLE rows (in `order`)."""
    if order:
        query.set("order", exp.Order(expressions=order))
    query.set("limit", exp.Limit(expression=_num(SAMPLE)))
    return query


def _desc(node: exp.Expression) -> exp.Ordered:
    return exp.Ordered(this=node, desc=True)


def _grouped_having_many(query: exp.Select, keys: list[exp.Expression]) -> exp.Select:
    query.set("group", exp.Group(expressions=keys))
    query.set("having", exp.Having(this=_more_than_one()))
    return query


def _fresh(wanted: str, taken) -> str:
    """An alias no column of the relation uses (`rows`, else `rows_2`, ...)."""
    taken = set(taken)
    name, n = wanted, 1
    while name in taken:
        n += 1
        name = f"{wanted}_{n}"
    return name


def _json_value(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    return str(value)


def _sample_text(sample) -> str:
    return "; ".join("(" + ", ".join(f"{k}={_shown(v)}" for k, v in row.items()) + ")"
                     for row in sample)


def _shown(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, str):
        if len(value) > 60:  # a sample is to recognise rows, not to dump them
            value = value[:57] + "..."
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_shown(v) for v in value[:10]) + (", ...]" if len(value) > 10
                                                                  else "]")
    return str(value)


def _columns(wh, relation: exp.Expression, log: CheckLog) -> list[tuple[str, str]]:
    """(column, engine type) of a relation, without reading its rows."""
    everything = _select([exp.Star()], relation)
    if isinstance(wh, Adapter):
        return wh.query_columns(everything)
    return [(r[0], r[1]) for r in wh.execute(log.render(exp.Describe(this=everything)))
            .fetchall()]


# ---------------------------------------------------------------- uniqueness, fast
_HUGEINT = exp.DataType.build("HUGEINT", dialect="duckdb")


@dataclass(frozen=True)
class _Key:
    """A key to test for duplicates: expressions over one relation."""

    exprs: tuple[exp.Expression, ...]
    integer: bool  # every expression is of an integer type (bitmap-able)
    null_is_value: bool  # pins: NULL is a value; joins: NULL rows are left out


def _bitmap_slot(key: _Key, bounds: list[tuple], rows: int
                 ) -> tuple[exp.Expression, int] | None:
    """An integer slot per row, equal for two rows iff their keys are equal, and the
    bitmap size; None when the key's range is too wide for a bitmap."""
    parts: list[tuple[exp.Expression | None, int]] = []
    size = 1
    for expr, (low, high) in zip(key.exprs, bounds):
        if low is None:  # only NULLs: every row in slot 0 of this part
            parts.append((None, 1))
            continue
        span = int(high) - int(low) + (2 if key.null_is_value else 1)
        size *= span
        if size > min(BITMAP_BITS, max(1 << 20, 64 * rows)):
            return None
        offset = exp.Sub(this=exp.Cast(this=expr, to=_HUGEINT.copy()),
                         expression=exp.Paren(this=_num(int(low))))
        if key.null_is_value:  # NULL takes slot 0, the values 1 and up
            offset = exp.Coalesce(this=exp.Add(this=offset, expression=_num(1)),
                                  expressions=[_num(0)])
        parts.append((exp.Paren(this=offset) if not key.null_is_value else offset, span))
    slot, stride = [], 1
    for part, span in parts:
        if part is not None:
            slot.append(part if stride == 1 else exp.Mul(this=part, expression=_num(stride)))
        stride *= span
    total = reduce(lambda a, b: exp.Add(this=a, expression=b), slot) if slot else _num(0)
    return total, size


def _bitmap_distinct(slot: exp.Expression, size: int) -> exp.Expression:
    """How many distinct values an integer `slot` in [0, size) takes, in one pass over a
    bitmap of `size` bits (0 on no rows): DuckDB's bitstring_agg and bit_count."""
    bitmap = exp.Anonymous(this="bitstring_agg", expressions=[slot, _num(0), _num(size - 1)])
    return exp.Coalesce(this=exp.Anonymous(this="bit_count", expressions=[bitmap]),
                        expressions=[_num(0)])


def _key_bounds(wh, relation: exp.Expression, keys: list[_Key], where: exp.Expression | None,
                log: CheckLog) -> list:
    """min/max of every integer key expression (answered from table statistics on a
    fresh snapshot table)."""
    exprs = [e for k in keys for e in k.exprs]
    if not exprs:
        return []
    items = [agg(this=e) for e in exprs for agg in (exp.Min, exp.Max)]
    row = log.rows(wh, _select(items, relation, where))[0]
    flat = [(row[2 * i], row[2 * i + 1]) for i in range(len(exprs))]
    out, i = [], 0
    for k in keys:
        out.append(flat[i:i + len(k.exprs)])
        i += len(k.exprs)
    return out


def _has_duplicates(wh, relation: exp.Expression, key: _Key, where: exp.Expression | None,
                    log: CheckLog) -> bool:
    """One aggregate grouping by the key itself: any group of two is a duplicate.
    (Grouping by `hash(key)` instead was measured slower on text keys: the engine
    hashes the key to group it anyway.)"""
    groups = _grouped_having_many(_select([_num(1)], relation, where), list(key.exprs))
    (n,) = log.rows(wh, _select([_count()], groups.subquery("__g", copy=False)))[0]
    return bool(n)


# ---------------------------------------------------------------- pins
def check_pins(wh, relation_sql: str, plan: Plan, row_count: int, log: CheckLog,
               upstream_unique=None, relation_sql_of=None) -> list[str]:
    """Check every pin of `plan` against the materialized relation. Raises PinError with
    every violation (in the order the pins are written); returns the verified pins
    (e.g. `unique:id`), which the join exemption reads. `upstream_unique(ref, columns)`
    (as for check_joins) lets a `pin unique` be inherited instead of scanned;
    `relation_sql_of(ref)` is where a `pin references` finds the referenced relation."""
    if not plan.pins:
        return []
    relation = relation_tree(relation_sql)
    columns = _columns(wh, relation, log)
    types = dict(columns)
    found: dict[int, Violation] = {}
    ran: dict[int, str] = {}  # pin index -> label, reported in the order pins are written
    verified: list[str] = []
    uniques: list[tuple[int, PinSpec]] = []
    not_nulls: list[tuple[int, PinSpec]] = []
    for i, pin in enumerate(plan.pins):
        label = pin.describe()
        if pin.kind == "rows":
            ran[i] = label
            low, high = _bounds(pin)
            if low <= row_count <= high:
                verified.append(label)
            else:
                found[i] = _rows_violation(wh, relation, plan.model, pin, row_count,
                                           columns, log)
        elif pin.kind == "columns":
            ran[i] = label
            problems = contract_problems_engine(pin.contract, columns, log.dialect)
            if problems:
                found[i] = Violation("E060", plan.model, label, len(problems),
                                     "the materialized table " + "; ".join(problems),
                                     span=pin.span,
                                     hint="fix the model or the contract; " + NOTHING_PUBLISHED)
            else:
                verified.append(label)
        elif pin.kind == "unique":
            proof = proven_unique(plan, pin.columns, upstream_unique)
            if proof is not None:
                log.skip(label, proof)
                verified.append(unique_key(pin.columns))
            else:
                uniques.append((i, pin))
        elif pin.kind == "not_null":
            not_nulls.append((i, pin))
        else:  # references, accepted, holds: rows that fail a condition
            ran[i] = label
            violation = _row_violation(wh, relation, plan, pin, columns, log,
                                       relation_sql_of) if row_count else None
            if violation is None:
                verified.append(label)
            else:
                found[i] = violation

    if row_count == 0:  # nothing can be NULL or shared
        for i, pin in [*uniques, *not_nulls]:
            ran[i] = pin.describe()
            verified.append(_verified_name(pin))
        uniques, not_nulls = [], []

    # NULLs: one query for every not_null pin, written as a WHERE so that on a fresh
    # table the engine answers from column statistics (no NULL anywhere: no scan);
    # per-column counts only when some NULL exists
    null_cols = list(dict.fromkeys(c for _, pin in not_nulls for c in pin.columns))
    nulls = dict.fromkeys(null_cols, 0)
    if null_cols:
        (count,) = log.rows(wh, _select([_count()], relation, _any_null(null_cols)))[0]
        if count:
            counts = log.rows(wh, _select([
                exp.Filter(this=_count(), expression=exp.Where(this=_is_null(_col(c))))
                for c in null_cols], relation))[0]
            nulls = dict(zip(null_cols, counts))
    # one scan: a bitmap per integer unique pin
    keys = {i: _Key(tuple(_cols(pin.columns)), log.bitmaps and all(
                    types.get(c, "").upper() in duck.INTEGER_TYPES for c in pin.columns),
                    null_is_value=True) for i, pin in uniques}
    bitmap_pins = [i for i, _ in uniques if keys[i].integer]
    bounds = dict(zip(bitmap_pins, _key_bounds(wh, relation, [keys[i] for i in bitmap_pins],
                                               None, log)))
    slots = {i: s for i in bitmap_pins
             if (s := _bitmap_slot(keys[i], bounds[i], row_count)) is not None}
    total, distinct = row_count, {}
    if slots:
        items = [_count()] + [_bitmap_distinct(slot, size) for slot, size in slots.values()]
        scan = log.rows(wh, _select(items, relation))[0]
        total, distinct = scan[0], dict(zip(slots, scan[1:]))

    for i, pin in not_nulls:
        ran[i] = pin.describe()
        if not any(nulls[c] for c in pin.columns):
            verified.append(_verified_name(pin))
            continue
        found[i] = _not_null_violation(wh, relation, plan.model, pin, columns, nulls, log)
    for i, pin in uniques:
        ran[i] = pin.describe()
        if i in distinct:
            suspect = distinct[i] != total
        else:
            suspect = _has_duplicates(wh, relation, keys[i], None, log)
        violation = _unique_violation(wh, relation, plan.model, pin, columns, log) \
            if suspect else None
        if violation is None:
            verified.append(unique_key(pin.columns))
        else:
            found[i] = violation
    log.ran.extend(ran[i] for i in sorted(ran))
    if found:
        raise PinError([found[i] for i in sorted(found)])
    return verified


def pin_reads(plan: Plan) -> list[RelationRef]:
    """The relations a model's pins read besides its own table: each `pin references`
    to another relation. Its check reads that relation, so a run treats it as an
    input of the model, as it treats what the model's query reads: built, committed
    and checked first (resolve puts it in the model's `models_read`, so staleness
    and the code fingerprint follow it; the build lanes place the model by it)."""
    out: list[RelationRef] = []
    for pin in plan.pins:
        if (pin.kind == "references" and pin.relation is not None
                and pin.relation.name != plan.model and pin.relation not in out):
            out.append(pin.relation)
    return out


def unique_key(columns) -> str:
    """How a verified `pin unique` is recorded: `unique:a,b` (sorted)."""
    return "unique:" + ",".join(sorted(columns))


def _verified_name(pin: PinSpec) -> str:
    if pin.kind in ("unique", "not_null"):
        return f"{pin.kind}:" + ",".join(sorted(pin.columns))
    return pin.describe()


def _unique_violation(wh, relation: exp.Expression, model: str, pin: PinSpec, columns,
                      log: CheckLog) -> Violation | None:
    n = _fresh("rows", [c for c, _ in columns])

    def dupes() -> exp.Select:
        items = [*_cols(pin.columns), exp.alias_(_count(), n, quoted=True, copy=False)]
        return _grouped_having_many(_select(items, relation), _cols(pin.columns))

    total = exp.Coalesce(this=exp.Sum(this=_col(n)), expressions=[_num(0)])
    keys, rows = log.rows(wh, _select([_count(), total],
                                      dupes().subquery("__d", copy=False)))[0]
    if not keys:
        return None  # defensive: the first pass said otherwise
    sample = log.rows(wh, _limited(dupes(), [_desc(_col(n)), *_cols(pin.columns)]))
    return Violation("E061", model, pin.describe(), int(rows),
                     f"{keys} value(s) of [{', '.join(pin.columns)}] are shared by {rows} rows",
                     tuple(dict(zip([*pin.columns, n], r)) for r in sample), pin.span)


def _not_null_violation(wh, relation: exp.Expression, model: str, pin: PinSpec, columns,
                        nulls: dict[str, int], log: CheckLog) -> Violation:
    cond = _any_null(pin.columns)
    (count,) = log.rows(wh, _select([_count()], relation, cond))[0]
    names = [c for c, _ in columns]
    sample = log.rows(wh, _limited(_select([exp.Star()], relation, cond)))
    per = ", ".join(f"{c}: {nulls[c]}" for c in pin.columns if nulls[c])
    return Violation("E062", model, pin.describe(), int(count),
                     f"{count} row(s) with NULL ({per})",
                     tuple(dict(zip(names, r)) for r in sample), pin.span)


def _rows_violation(wh, relation: exp.Expression, model: str, pin: PinSpec, rows: int,
                    columns, log: CheckLog) -> Violation:
    """`pin rows` failed: too many rows show a sample of them (the rows the bound did not
    expect, as `pin rows = 0` on a check model expects none); too few have none."""
    _, high = _bounds(pin)
    sample = ()
    if rows > high:
        names = [c for c, _ in columns]
        sample = tuple(dict(zip(names, r)) for r in
                       log.rows(wh, _limited(_select([exp.Star()], relation))))
    return Violation("E063", model, pin.describe(), rows,
                     f"the model has {rows} rows", sample, pin.span)


_ROW_CODES = {"references": "E067", "accepted": "E068", "holds": "E069"}


def _offending(plan: Plan, pin: PinSpec, relation_sql_of, own: exp.Expression
               ) -> exp.Expression:
    """The condition a row of the model (aliased `__c`) fails the pin by. NULL passes,
    as in dbt: a NULL key references nothing, a NULL is no unaccepted value, and a
    condition that is NULL is not false."""
    if pin.kind == "references":
        parent = own if relation_sql_of is None or pin.relation.name == plan.model \
            else relation_sql_of(pin.relation)
        inner = _select([_num(1)], relation_tree(parent, "__p"))
        inner.set("where", exp.Where(this=exp.and_(*[
            exp.EQ(this=column(k, "__p"), expression=column(c, "__c"))
            for c, k in zip(pin.columns, pin.ref_columns)], copy=False)))
        present = [exp.Not(this=exp.Is(this=column(c, "__c"), expression=exp.Null()))
                   for c in pin.columns]
        return exp.and_(*present, exp.Not(this=exp.Exists(this=inner)))
    if pin.kind == "accepted":
        col = column(pin.columns[0], "__c")
        return exp.and_(exp.Not(this=exp.Is(this=col.copy(), expression=exp.Null())),
                        exp.Not(this=exp.In(this=col, expressions=[v.copy()
                                                                   for v in pin.values])))
    env = {c.id: column(c.name, "__c") for c in plan.output}
    return exp.Not(this=exp.Paren(this=bind(pin.expr.copy(), env)))


def _row_violation(wh, relation: exp.Expression, plan: Plan, pin: PinSpec, columns,
                   log: CheckLog, relation_sql_of) -> Violation | None:
    """One count of the rows failing a references/accepted/holds pin; a sample only
    when there are some."""
    cond = _offending(plan, pin, relation_sql_of, relation)
    aliased = relation_tree(relation, "__c")
    (count,) = log.rows(wh, _select([_count()], aliased, cond))[0]
    if not count:
        return None
    names = [c for c, _ in columns]
    sample = log.rows(wh, _limited(_select([exp.Star()], aliased, cond)))
    if pin.kind == "references":
        what = (f"row(s) whose [{', '.join(pin.columns)}] is no [{', '.join(pin.ref_columns)}]"
                f" of `{pin.relation.name}`")
    elif pin.kind == "accepted":
        what = f"row(s) whose `{pin.columns[0]}` is not an accepted value"
    else:
        what = "row(s) for which the condition is false"
    return Violation(_ROW_CODES[pin.kind], plan.model, pin.describe(), int(count),
                     f"{count} {what}", tuple(dict(zip(names, r)) for r in sample), pin.span)


def _bounds(pin: PinSpec) -> tuple[int, int]:
    big = 1 << 62
    if pin.op == "between":
        return pin.bounds[0], pin.bounds[1]
    value = pin.bounds[0]
    return {">=": (value, big), "<=": (0, value), "=": (value, value)}[pin.op]


def contract_problems_engine(contract, actual: list[tuple[str, str]],
                             dialect: Dialect = duck.DIALECT) -> list[str]:
    """`pin columns` against the real schema (names and the engine's types)."""
    have = dict(actual)
    want = dict(contract)
    problems = [f"lacks `{n}`" for n in want if n not in have]
    problems += [f"has `{n}`, which is not in the contract" for n in have if n not in want]
    for name, declared in want.items():
        if name in have and not _kind_fits(declared, have[name], dialect):
            problems.append(f"has `{name}` as {have[name]}, the contract says {declared}")
    return problems


def _kind_fits(declared: Type, engine_type: str, dialect: Dialect = duck.DIALECT) -> bool:
    """Does a column of this engine type hold the declared type? (Type names are the
    engine's: `dialect` reads them.)"""
    kind = dialect.type_kind(engine_type)
    if declared.kind == "list":
        element = dialect.element_type(engine_type)
        return (kind.startswith("list<") and element is not None
                and _kind_fits(declared.element, element, dialect))
    if kind.startswith(("other", "list")):
        return False
    if declared.kind == "decimal" and kind == "decimal":
        return dialect.keeps_scale(engine_type, declared.scale)
    return types_fit(declared, Type(kind))


# ---------------------------------------------------------------- proofs from the plan
def proven_unique(plan: Plan, columns, upstream_unique=None) -> str | None:
    """Why `columns` are unique by construction, or None. Two proofs:

    - grouped: after a `group k...`/`aggregate` followed only by filters, derives and
      selects, each output row is one group, so columns carrying every group key are
      unique (GROUP BY puts NULLs in one group, as `pin unique` counts them); an
      aggregate without `group` gives at most one row.
    - inherited: the model reads a model whose `pin unique` on those columns is verified
      (`upstream_unique(ref, columns)`), passes them through unchanged, and every later
      step keeps at most one row per row read: filters, derives, selects, and
      many-to-one joins whose fan-out check runs (or is itself exempt) before the
      model is built. No `join many`, expand, aggregate or set operation.
    """
    last = max((i for i, s in enumerate(plan.stages) if isinstance(s, AggregateStage)),
               default=None)
    if last is not None:
        return _grouped(plan, last, columns)
    if upstream_unique is None or plan.base.relation.kind != "model":
        return None
    for stage in plan.stages:
        if isinstance(stage, JoinStage):
            if stage.many:  # every other join's fan-out is checked before the build
                return None
        elif not isinstance(stage, (FilterStage, DeriveStage, SelectStage)):
            return None
    base = {c.id: c.name for c in plan.base.columns}
    origin = _origins(plan, plan.stages)
    by_name = {c.name: origin(c.id) for c in plan.output}
    upstream = [base.get(by_name.get(n)) for n in columns]
    if None in upstream or not upstream_unique(plan.base.relation, upstream):
        return None
    name = plan.base.relation.name
    return (f"inherited: `{name}` pins unique [{', '.join(upstream)}], verified, and each row "
            f"of `{plan.model}` comes from a different row of `{name}`")


def _grouped(plan: Plan, last: int, columns) -> str | None:
    after = plan.stages[last + 1:]
    if not all(isinstance(s, (FilterStage, DeriveStage, SelectStage)) for s in after):
        return None
    agg: AggregateStage = plan.stages[last]
    if not agg.keys:
        return "proven by the plan: `aggregate` without `group` gives at most one row"
    origin = _origins(plan, after)
    by_name = {c.name: origin(c.id) for c in plan.output}
    have = {by_name[n] for n in columns if n in by_name}
    if {c.id for c, _ in agg.keys} <= have:
        names = ", ".join(c.name for c, _ in agg.keys)
        return f"proven by the plan: one row per `group {names}`"
    return None


def _origins(plan: Plan, stages):
    """column id -> the id of the column it passes through unchanged (a bare column
    in a `let`, `derive` or `select`), followed to the end."""
    carried: dict[int, int] = {}
    items = [*plan.base.lets]
    for stage in stages:
        if isinstance(stage, (DeriveStage, SelectStage)):
            items += stage.items
    for col, node in items:
        if isinstance(node, ColRef):
            carried[col.id] = node.col_id

    def origin(col_id: int) -> int:
        seen = set()
        while col_id in carried and col_id not in seen:
            seen.add(col_id)
            col_id = carried[col_id]
        return col_id

    return origin


# ---------------------------------------------------------------- join cardinality
@dataclass
class JoinKeys:
    """A join condition split for the fan-out check."""

    keys: list[tuple[exp.Expression, exp.Expression]]  # (left expr, right expr) equalities
    right_filters: list[exp.Expression]  # conjuncts reading only the right side
    left_filters: list[exp.Expression]  # conjuncts reading only the left side
    mixed: list[exp.Expression]  # anything else reading both sides (a range, an `or`)

    def names(self, stage: JoinStage) -> list[str]:
        """The right keys as the author reads them: column names, or the expression."""
        env = {c.id: column(c.name) for c in stage.columns}
        by_id = {c.id: c.name for c in stage.columns}
        return [by_id[r.col_id] if isinstance(r, ColRef) and r.col_id in by_id
                else bind(r, env).sql("duckdb") for _, r in self.keys]

    def plain_columns(self, stage: JoinStage) -> list[str] | None:
        """The right key columns when every right key is a bare column."""
        by_id = {c.id: c.name for c in stage.columns}
        if all(isinstance(r, ColRef) and r.col_id in by_id for _, r in self.keys):
            return [by_id[r.col_id] for _, r in self.keys]
        return None


def split_join(stage: JoinStage) -> JoinKeys:
    """Equalities between a left-side expression and a right-side one are keys;
    conjuncts on one side only filter that side; the rest (a range condition, an `or`
    across both sides) is `mixed`."""
    right_ids = {c.id for c in stage.columns}
    on = stage.on
    conjuncts = list(on.flatten()) if isinstance(on, exp.And) else [on]
    out = JoinKeys([], [], [], [])
    for conj in conjuncts:
        while isinstance(conj, exp.Paren):
            conj = conj.this
        refs = _refs(conj)
        if not refs & right_ids:
            out.left_filters.append(conj)
            continue
        if refs <= right_ids:
            out.right_filters.append(conj)
            continue
        if isinstance(conj, exp.EQ):
            a, b = conj.this, conj.expression
            ra, rb = _refs(a), _refs(b)
            if rb and rb <= right_ids and not ra & right_ids:
                out.keys.append((a, b))
                continue
            if ra and ra <= right_ids and not rb & right_ids:
                out.keys.append((b, a))
                continue
        out.mixed.append(conj)
    return out


def _refs(node: exp.Expression) -> set[int]:
    return {n.col_id for n in node.find_all(ColRef)}


def join_label(plan: Plan, stage: JoinStage) -> str:
    """`join customers as c on customer_id = c.id`: the join as the author wrote it."""
    word = "join_left" if stage.left else "join"
    many = " many" if stage.many else ""
    alias = f" as {stage.alias}" if stage.alias != stage.relation.name else ""
    env = {i: column(n) for i, n in _col_names(plan).items()}
    env.update({c.id: column(c.name, stage.alias) for c in stage.columns})
    on = bind(stage.on, env).sql("duckdb")
    return f"{word}{many} {stage.relation.name}{alias} on {on}"


def _col_names(plan: Plan) -> dict[int, str]:
    """Every column id of the plan -> its name, to show expressions as written."""
    out = {c.id: c.name for c in plan.base.columns}
    out.update({c.id: c.name for c, _ in plan.base.lets})
    for stage in plan.stages:
        if isinstance(stage, JoinStage):
            out.update({c.id: c.name for c in stage.columns})
        elif isinstance(stage, AggregateStage):
            out.update({c.id: c.name for c, _ in [*stage.keys, *stage.aggregates]})
        elif isinstance(stage, (DeriveStage, SelectStage)):
            out.update({c.id: c.name for c, _ in stage.items})
        elif hasattr(stage, "item"):
            out[stage.item.id] = stage.item.name
        elif hasattr(stage, "output"):
            out.update({c.id: c.name for c in stage.output})
    return out


def check_joins(wh, plan: Plan, relations: Relations, relation_sql_of,
                verified_unique, log: CheckLog, unique_rights: set | None = None) -> None:
    """Every `join`/`join_left` without `many`: no left row may match two right rows.

    `verified_unique(ref, columns)` tells whether the right side's uniqueness on exactly
    those columns is pinned and verified (then the check is skipped, and says why).
    `unique_rights`, kept by a run, remembers right sides already found unique on a
    key: the tables a run reads do not change, and many models join the same
    dimension on the same key.
    """
    found: list[Violation] = []
    for index, stage in enumerate(plan.stages):
        if not isinstance(stage, JoinStage):
            continue
        label = join_label(plan, stage)
        if stage.many:
            log.skip(label, "`many`: the join may match several rows")
            continue
        split = split_join(stage)
        plain = split.plain_columns(stage) if split.keys else None
        inline = stage.relation.kind == "inline"  # a sub-pipeline: no pins of its own
        if plain is not None and not inline and verified_unique(stage.relation, plain):
            log.skip(label, f"`{stage.relation.name}` pins unique [{', '.join(plain)}], "
                     "verified")
            continue
        log.ran.append(label)
        right = (exp.Subquery(this=model_query(stage.relation.plan, relations))
                 if inline else relation_tree(relation_sql_of(stage.relation)))
        violation = _fan_out(wh, plan, index, stage, split, label, relations,
                             right, log, unique_rights)
        if violation is not None:
            found.append(violation)
    if found:
        raise PinError(found)


def _fan_out(wh, plan: Plan, index: int, stage: JoinStage, split: JoinKeys, label: str,
             relations: Relations, right: exp.Expression, log: CheckLog,
             unique_rights: set | None = None) -> Violation | None:
    """Unique right keys (after the right-only conditions) cannot fan out: one cheap
    pass on the right side settles most joins. Otherwise the duplicated keys some left
    row matches are the violation; with conditions across both sides besides the keys,
    the join itself is counted per left row."""
    if not split.keys:
        return _fan_out_exact(wh, plan, index, stage, label, relations, right, log)
    env = {c.id: column(c.name, "__r") for c in stage.columns}
    rights = [bind(r, env) for _, r in split.keys]
    conds = [exp.Not(this=_is_null(exp.Paren(this=r))) for r in rights]
    conds += [exp.Paren(this=bind(f, env)) for f in split.right_filters]
    where = exp.and_(*conds, copy=False)
    relation = relation_tree(right, "__r")
    # what this run found unique already, by the text of the right keys' query
    settled = log.render(_select(rights, relation, where))
    if unique_rights is not None and settled in unique_rights:
        return None  # this run found these right keys unique already
    keys_only = exp.Subquery(this=_select(rights, relation),  # PostgreSQL: an alias
                             alias=exp.TableAlias(this=exp.to_identifier("__k")))
    types = [t for _, t in _columns(wh, keys_only, log)]
    key = _Key(tuple(rights), log.bitmaps and all(t.upper() in duck.INTEGER_TYPES
                                                  for t in types), null_is_value=False)
    suspect = True
    if key.integer:
        (bounds,) = _key_bounds(wh, relation, [key], where, log)
        (total,) = log.rows(wh, _select([_count()], relation, where))[0]
        slot = _bitmap_slot(key, bounds, total)
        if slot is not None:
            (distinct,) = log.rows(wh, _select([_bitmap_distinct(*slot)], relation, where))[0]
            suspect = distinct != total
        else:
            suspect = _has_duplicates(wh, relation, key, where, log)
    else:
        suspect = _has_duplicates(wh, relation, key, where, log)
    if not suspect:
        if unique_rights is not None:
            unique_rights.add(settled)
        return None
    if split.mixed:
        return _fan_out_exact(wh, plan, index, stage, label, relations, right, log)
    # Duplicated right keys only matter when some left row matches them.
    names = [f"__k{i}" for i in range(len(rights))]
    n = "__rows"
    left = _left_keys_query(plan, index, split, relations)

    def with_ctes(query: exp.Select) -> exp.Select:
        items = [exp.alias_(r, k, quoted=True, copy=False) for r, k in zip(rights, names)]
        items.append(exp.alias_(_count(), n, copy=False))
        dupes = _grouped_having_many(_select(items, relation, where), list(rights))
        query.set(_WITH, exp.With(
            expressions=[exp.CTE(this=left, alias=exp.TableAlias(
                this=exp.to_identifier("__left"))),
                exp.CTE(this=dupes, alias=exp.TableAlias(this=exp.to_identifier("__d")))]))
        return query

    def match() -> exp.Expression:
        return exp.and_(*[exp.EQ(this=_col(k, "__l"), expression=_col(k, "__d"))
                          for k in names], copy=False)

    def exists(relation: exp.Expression) -> exp.Exists:
        return exp.Exists(this=_select([_num(1)], relation, match()))

    matched = _select([exp.Column(this=exp.Star(), table=exp.to_identifier("__d"))],
                      _named("__d"), exists(_named("__left", "__l")))
    sample = log.rows(wh, with_ctes(_limited(matched, [_desc(exp.column(n))])))
    if not sample:
        return None
    counts = exp.Select(expressions=[
        exp.Subquery(this=_select([_count()], _named("__d"), exists(_named("__left", "__l")))),
        exp.Subquery(this=_select([_count()], _named("__left", "__l"), exists(_named("__d"))))])
    keys, left_rows = log.rows(wh, with_ctes(counts))[0]
    shown = split.names(stage)
    return Violation(
        "E064", plan.model, f"many-to-one `{label}`", int(left_rows),
        f"{keys} key value(s) of `{stage.alias}` match several rows; {left_rows} left row(s) "
        f"would be repeated",
        tuple(dict(zip([*shown, "rows"], r)) for r in sample), stage.span,
        "fix the data, or write `join many` if the fan-out is intended; " + NOTHING_PUBLISHED)


def _fan_out_exact(wh, plan: Plan, index: int, stage: JoinStage, label: str,
                   relations: Relations, right: exp.Expression, log: CheckLog
                   ) -> Violation | None:
    """Any condition: number the left rows, join them to the right side with the
    model's own condition, and count the left rows matched more than once."""
    right_ids = {c.id for c in stage.columns}
    left_ids = sorted(_refs(stage.on) - right_ids)
    names = _col_names(plan)
    cols = [(Col(-(k + 1), f"__c{k}", Type("null")), colref_of(i)) for k, i in enumerate(left_ids)]
    if not cols:  # the condition reads only the right side: every left row matches alike
        cols = [(Col(-1, "__c0", Type("null")), exp.Literal.number(1))]
    cut = Plan(plan.model, plan.base, [*plan.stages[:index], DeriveStage(cols)],
               [c for c, _ in cols], plan.reads)
    left = model_query(cut, relations)
    env = {i: column(f"__c{k}", "__l") for k, i in enumerate(left_ids)}
    env.update({c.id: column(c.name, "__r") for c in stage.columns})
    on = bind(stage.on, env)
    row = exp.column("__row", "__l")
    numbered = _select([exp.alias_(exp.Window(this=exp.RowNumber()), "__row", copy=False),
                        exp.Star()], exp.Subquery(this=left, alias=exp.TableAlias(
                            this=exp.to_identifier("__x"))))
    matches = _select([exp.alias_(row.copy(), "__row", copy=False),
                       exp.alias_(_count(), "__n", copy=False)], _named("__left", "__l"))
    matches.set("joins", [exp.Join(this=relation_tree(right, "__r"), on=on)])
    matches = _grouped_having_many(matches, [row.copy()])
    shown = [_col(c.name, "__l") for c, _ in cols]
    query = _select([*shown, exp.column("__n", "__m"), exp.Window(this=_count())],
                    _named("__m"))
    query.set("joins", [exp.Join(this=_named("__left", "__l"), on=exp.EQ(
        this=row.copy(), expression=exp.column("__row", "__m")))])
    query.set(_WITH, exp.With(expressions=[
        exp.CTE(this=numbered, alias=exp.TableAlias(this=exp.to_identifier("__left"))),
        exp.CTE(this=matches, alias=exp.TableAlias(this=exp.to_identifier("__m")))]))
    sample = log.rows(wh, _limited(query, [_desc(exp.column("__n", "__m"))]))
    if not sample:
        return None
    left_rows = sample[0][-1]
    keys = [names.get(i, f"__c{k}") for k, i in enumerate(left_ids)] or ["row"]
    return Violation(
        "E064", plan.model, f"many-to-one `{label}`", int(left_rows),
        f"{left_rows} left row(s) match several rows of `{stage.alias}`",
        tuple(dict(zip([*keys, "matches"], r[:-1])) for r in sample), stage.span,
        "fix the data, or write `join many` if the fan-out is intended; " + NOTHING_PUBLISHED)


def colref_of(col_id: int) -> ColRef:
    return ColRef(this=col_id)


def _left_keys_query(plan: Plan, index: int, split: JoinKeys, relations: Relations
                     ) -> exp.Select:
    """The left side's join key values, as a query: the plan cut before the join."""
    keys = [(Col(-(i + 1), f"__k{i}", Type("null")), node.copy())
            for i, (node, _) in enumerate(split.keys)]
    filters = [FilterStage(f.copy()) for f in split.left_filters]
    cut = Plan(plan.model, plan.base, [*plan.stages[:index], *filters, DeriveStage(keys)],
               [c for c, _ in keys], plan.reads)
    return model_query(cut, relations)


# ---------------------------------------------------------------- what a run will check
def planned_checks(plan: Plan, pinned_unique) -> tuple[list[str], list[dict]]:
    """The checks a run of this model will do and those it will skip, decided without
    executing: `pinned_unique(ref, columns)` says whether the right side of a join pins
    unique exactly those columns (verified when it is built, or with its snapshot)."""
    ran: list[str] = []
    skipped: list[dict] = []
    for stage in plan.stages:
        if not isinstance(stage, JoinStage):
            continue
        label = join_label(plan, stage)
        if stage.many:
            skipped.append({"check": label,
                            "reason": "`many`: the join may match several rows"})
            continue
        split = split_join(stage)
        plain = split.plain_columns(stage) if split.keys else None
        if plain is not None and stage.relation.kind != "inline" and \
                pinned_unique(stage.relation, plain):
            skipped.append({"check": label, "reason": f"`{stage.relation.name}` pins unique "
                            f"[{', '.join(plain)}] (verified when it is built; a snapshot "
                            "without that record is checked)"})
        else:
            ran.append(label)
    for pin in plan.pins:
        proof = proven_unique(plan, pin.columns, pinned_unique) if pin.kind == "unique" \
            else None
        if proof:
            skipped.append({"check": pin.describe(), "reason": proof})
        else:
            ran.append(pin.describe())
    return ran, skipped


def declared_unique(plans: dict[str, Plan]):
    """`pinned_unique` for planned_checks: a model declares `pin unique` on exactly these
    columns."""

    def pinned(ref: RelationRef, columns: list[str]) -> bool:
        plan = plans.get(ref.name) if ref.kind == "model" else None
        if plan is None:
            return False
        want = sorted(columns)
        return any(p.kind == "unique" and sorted(p.columns) == want for p in plan.pins)

    return pinned
