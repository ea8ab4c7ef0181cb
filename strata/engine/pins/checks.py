"""The pins of one model (`pin unique`, `not_null`, `rows`, `columns`, `references`,
`accepted`, `holds`), checked in SQL on its built table; a sample of offenders is
fetched only after a violation.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from dialects import duckdb as duck
from strata.engine.pins.contracts import contract_problems_engine
from strata.engine.pins.distinct import (
    Key,
    bitmap_distinct,
    bitmap_slot,
    has_duplicates,
    key_bounds,
)
from strata.engine.pins.proofs import proven_unique
from strata.engine.pins.results import NOTHING_PUBLISHED, CheckLog, PinError, Violation
from strata.engine.pins.trees import (
    any_null,
    count_star,
    descending,
    fresh_name,
    grouped_having_many,
    int_literal,
    is_null,
    limited,
    quoted_column,
    quoted_columns,
    relation_columns,
    relation_tree,
    select_from,
)
from strata.plan import (
    PinSpec,
    Plan,
    RelationRef,
)
from strata.sqlgen.build import bind
from strata.sqlgen.names import column


def check_pins(wh, relation_sql: str, plan: Plan, row_count: int, log: CheckLog,
               upstream_unique=None, relation_sql_of=None) -> list[str]:
    """Check every pin of `plan` against the materialized relation. Raises PinError with
    every violation (in the order the pins are written); returns the verified pins
    (e.g. `unique:id`), which the join exemption reads. `upstream_unique(ref, columns)`
    (as for check_joins) lets a `pin unique` be inherited instead of scanned;
    `relation_sql_of(ref)` is where a `pin references` finds the referenced relation."""
    if all(p.after for p in plan.pins):  # none, or all checked after their relation
        return []
    relation = relation_tree(relation_sql)
    columns = relation_columns(wh, relation, log)
    types = dict(columns)
    found: dict[int, Violation] = {}
    ran: dict[int, str] = {}  # pin index -> label, reported in the order pins are written
    verified: list[str] = []
    uniques: list[tuple[int, PinSpec]] = []
    not_nulls: list[tuple[int, PinSpec]] = []
    for i, pin in enumerate(plan.pins):
        label = pin.describe()
        if pin.after:
            continue  # its relation reads this model: check_pins_after, once it is built
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
        (count,) = log.rows(wh, select_from([count_star()], relation, any_null(null_cols)))[0]
        if count:
            counts = log.rows(wh, select_from([
                exp.Filter(this=count_star(), expression=exp.Where(this=is_null(quoted_column(c))))
                for c in null_cols], relation))[0]
            nulls = dict(zip(null_cols, counts))
    # one scan: a bitmap per integer unique pin
    keys = {i: Key(tuple(quoted_columns(pin.columns)), log.bitmaps and all(
                    types.get(c, "").upper() in duck.INTEGER_TYPES for c in pin.columns),
                    null_is_value=True) for i, pin in uniques}
    bitmap_pins = [i for i, _ in uniques if keys[i].integer]
    bounds = dict(zip(bitmap_pins, key_bounds(wh, relation, [keys[i] for i in bitmap_pins],
                                               None, log)))
    slots = {i: s for i in bitmap_pins
             if (s := bitmap_slot(keys[i], bounds[i], row_count)) is not None}
    total, distinct = row_count, {}
    if slots:
        items = [count_star()] + [bitmap_distinct(slot, size) for slot, size in slots.values()]
        scan = log.rows(wh, select_from(items, relation))[0]
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
            suspect = has_duplicates(wh, relation, keys[i], None, log)
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


def check_pins_after(wh, relation_sql: str, plan: Plan, log: CheckLog,
                     relation_sql_of) -> list[Violation]:
    """The model's `pin references` whose relation reads the model (`PinSpec.after`),
    checked on its built table once that relation is built too (as dbt runs a
    relationships test after both models); the violations, in the order written.
    Before publication, like every pin: a violation fails the run."""
    pins = [p for p in plan.pins if p.after]
    if not pins:
        return []
    relation = relation_tree(relation_sql)
    columns = relation_columns(wh, relation, log)
    found = []
    for pin in pins:
        log.ran.append(pin.describe())
        violation = _row_violation(wh, relation, plan, pin, columns, log, relation_sql_of)
        if violation is not None:
            found.append(replace(violation, hint="the pin is checked after "
                                 f"`{pin.relation.name}`, which reads `{plan.model}`, is "
                                 "built; " + NOTHING_PUBLISHED))
    return found


def pin_reads(plan: Plan) -> list[RelationRef]:
    """The relations a model's pins read besides its own table: each `pin references`
    to another relation. Its check reads that relation, so a run treats it as an
    input of the model, as it treats what the model's query reads: built, committed
    and checked first (resolve puts it in the model's `models_read`, so staleness
    and the code fingerprint follow it; the build lanes place the model by it). Not
    a pin checked after its relation (`PinSpec.after`): that relation reads the model."""
    out: list[RelationRef] = []
    for pin in plan.pins:
        if (pin.kind == "references" and pin.relation is not None and not pin.after
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
    n = fresh_name("rows", [c for c, _ in columns])

    def dupes() -> exp.Select:
        items = [*quoted_columns(pin.columns), exp.alias_(count_star(), n, quoted=True, copy=False)]
        return grouped_having_many(select_from(items, relation), quoted_columns(pin.columns))

    total = exp.Coalesce(this=exp.Sum(this=quoted_column(n)), expressions=[int_literal(0)])
    keys, rows = log.rows(wh, select_from([count_star(), total],
                                      dupes().subquery("__d", copy=False)))[0]
    if not keys:
        return None  # defensive: the first pass said otherwise
    sample = log.rows(wh, limited(dupes(), [descending(quoted_column(n)), *quoted_columns(pin.columns)]))
    return Violation("E061", model, pin.describe(), int(rows),
                     f"{keys} value(s) of [{', '.join(pin.columns)}] are shared by {rows} rows",
                     tuple(dict(zip([*pin.columns, n], r)) for r in sample), pin.span)


def _not_null_violation(wh, relation: exp.Expression, model: str, pin: PinSpec, columns,
                        nulls: dict[str, int], log: CheckLog) -> Violation:
    cond = any_null(pin.columns)
    (count,) = log.rows(wh, select_from([count_star()], relation, cond))[0]
    names = [c for c, _ in columns]
    sample = log.rows(wh, limited(select_from([exp.Star()], relation, cond)))
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
                       log.rows(wh, limited(select_from([exp.Star()], relation))))
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
        inner = select_from([int_literal(1)], relation_tree(parent, "__p"))
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
    (count,) = log.rows(wh, select_from([count_star()], aliased, cond))[0]
    if not count:
        return None
    names = [c for c, _ in columns]
    sample = log.rows(wh, limited(select_from([exp.Star()], aliased, cond)))
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
