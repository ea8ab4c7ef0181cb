"""Incremental tree rewrites: watermark pushdown, the delta, append and upsert merges.

pushdown (plan-level, the same mechanism as `filter`): when `cdc_column` is a base
column (a source column passed through, or a `let`) and the model has no join,
set operation, expand, window, distinct, take or semi/anti join (`Plan.pushdown_safe`:
a window or `take` over only the new rows would mean something else),

    WITH base AS (SELECT ... FROM orders AS orders)            -- full
    WITH base AS (SELECT ... FROM orders AS orders
                  WHERE orders.updated_at > <watermark>)       -- delta, pushed down

otherwise the full result is filtered after the fact:

    WITH <the model's CTEs>, __full AS (<final select>),
         __delta AS (SELECT * FROM __full WHERE updated_at > <watermark>)
    SELECT ... FROM __delta

append:  SELECT cols FROM <previous> UNION ALL SELECT cols FROM __delta
upsert:  SELECT cols FROM <previous> AS __prev WHERE NOT EXISTS (
             SELECT 1 FROM __delta WHERE __delta.k IS NOT DISTINCT FROM __prev.k ...)
         UNION ALL SELECT cols FROM __delta
(null-safe key equality; never NOT IN, whose NULL semantics drop rows).

delete_when (upsert): the model's plan ends in `filter (cond) IS NOT TRUE`, so a full
computation drops the deleted rows; a delta is computed without that filter, so the
layer keeps its deletion rows, whose keys hide every earlier row and which a layered
snapshot never shows:

    SELECT cols FROM layer_1 AS __t WHERE NOT EXISTS (...later keys...)
                                      AND NOT COALESCE(__t.op = 'd', FALSE)

settled (drift detection, issue 17): the rows of the full result at or below the
boundary (the watermark, less the lookback), NULL cdc values included, the
complement of the delta; pushed down as `NOT COALESCE(cdc > <boundary>, FALSE)` when the
delta would be, else filtered after the full result.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, replace

from sqlglot import exp

from strata.plan import ColRef, DeriveStage, FilterStage, Plan, SelectStage, SortStage
from strata.semantics.precedence import precedence
from strata.sqlgen.build import Relations, bind, model_query
from strata.sqlgen.names import column, ident, table

FULL = "__full"
DELTA = "__delta"
PREV = "__prev"


@dataclass(frozen=True)
class DeltaQuery:
    tree: exp.Select
    path: str  # "pushdown" | "full-then-filter"


def base_expression(plan: Plan, col_id: int) -> exp.Expression | None:
    """The base-scope expression of an output column, when it is a pure passthrough
    of a base column (source column or let) through derive/select renames."""
    items: dict[int, exp.Expression] = {}
    for stage in plan.stages:
        if isinstance(stage, (DeriveStage, SelectStage)):
            for col, node in stage.items:
                items[col.id] = node
    seen = set()
    while col_id in items and col_id not in seen:
        seen.add(col_id)
        node = items[col_id]
        if not isinstance(node, ColRef):
            return None
        col_id = node.col_id
    base = plan.base
    env = {c.id: column(c.name, base.alias) for c in base.columns}
    for col, node in base.lets:
        env[col.id] = bind(node, env)
    return env.get(col_id)


def merge_plan(plan: Plan) -> Plan:
    """The plan a delta is computed with: without the delete_when filter the model's
    plan ends in (a delta's deletion rows are what removes keys)."""
    inc = plan.incremental
    if inc is None or inc.delete_when is None or not plan.stages or \
            not isinstance(plan.stages[-1], FilterStage):
        return plan
    return replace(plan, stages=plan.stages[:-1])


def not_true(condition: exp.Expression) -> exp.Expression:
    """`NOT COALESCE(condition, FALSE)`: true for false and for NULL (spelled so every
    engine reads it: `IS TRUE` is not everyone's)."""
    return exp.Not(this=exp.Coalesce(this=condition, expressions=[exp.false()]))


def deleted_condition(plan: Plan, alias: str | None = None) -> exp.Expression | None:
    """delete_when over the output column names (qualified by `alias`), or None."""
    inc = plan.incremental
    if inc is None or inc.delete_when is None:
        return None
    return bind(inc.delete_when, {c.id: column(c.name, alias) for c in plan.output})


def pushdown_predicate(plan: Plan, watermark: exp.Expression) -> exp.Expression | None:
    """`cdc > watermark` in base-scope terms, or None when pushdown is not allowed."""
    inc = plan.incremental
    if inc is None or inc.cdc_column is None or not plan.pushdown_safe:
        return None
    out = next(c for c in plan.output if c.name == inc.cdc_column)
    base = base_expression(plan, out.id)
    if base is None:
        return None
    return past_watermark(plan, _paren(base), watermark)


def past_watermark(plan: Plan, cdc: exp.Expression, watermark: exp.Expression) -> exp.GT:
    """`cdc > watermark`, the cdc side carrying its column's type: the dialects order
    text by DuckDB's code points where the engine's collation orders otherwise
    (PostgreSQL in en_US: 'B' < 'a' is false), so a delta takes DuckDB's rows."""
    out = next(c for c in plan.output if c.name == plan.incremental.cdc_column)
    cdc.type = out.type.to_sqlglot()
    return exp.GT(this=cdc, expression=watermark)


def _paren(node: exp.Expression) -> exp.Expression:
    return exp.Paren(this=node) if precedence(node) <= 4 else node


def settled_query(plan: Plan, relations: Relations, boundary: exp.Expression) -> DeltaQuery:
    """Rows of the model's full result NOT past the boundary (NULL cdc included): what
    the previous snapshot must still hold for a merge to equal a full refresh."""
    pred = pushdown_predicate(plan, boundary)
    if pred is not None:
        return DeltaQuery(model_query(plan.with_preds([not_true(pred)]), relations),
                          "pushdown")
    full = model_query(plan, relations)
    sub = exp.Subquery(this=full, alias=exp.TableAlias(this=ident(FULL)))
    past = past_watermark(plan, column(plan.incremental.cdc_column, FULL), boundary)
    out = exp.Select(expressions=[column(c.name, FULL) for c in plan.output])
    out.set("from_", exp.From(this=sub))
    out.set("where", exp.Where(this=not_true(past)))
    return DeltaQuery(out, "full-then-filter")


def delta_query(plan: Plan, relations: Relations, watermark: exp.Expression) -> DeltaQuery:
    """Rows of the model's result with cdc_column > watermark (deletion rows kept)."""
    plan = merge_plan(plan)
    pred = pushdown_predicate(plan, watermark)
    if pred is not None:
        # Written in base terms (alias.column), it joins plan.preds like any filter.
        pushed = plan.with_preds([pred])
        return DeltaQuery(model_query(pushed, relations), "pushdown")
    full = model_query(plan, relations)
    ctes = list(full.args["with_"].expressions) if full.args.get("with_") else []
    full.set("with_", None)
    ctes.append(exp.CTE(this=full, alias=exp.TableAlias(this=ident(FULL))))
    cdc = column(plan.incremental.cdc_column, FULL)
    # built as nodes: SQLGlot's builder methods (.from_, .where) copy and re-parse
    # their arguments, a twentieth of a whole compile
    delta = exp.Select(expressions=[exp.Star()])
    delta.set("from_", exp.From(this=table(FULL)))
    delta.set("where", exp.Where(this=past_watermark(plan, cdc, watermark)))
    ctes.append(exp.CTE(this=delta, alias=exp.TableAlias(this=ident(DELTA))))
    final = exp.Select(expressions=[column(c.name) for c in plan.output])
    final.set("from_", exp.From(this=table(DELTA)))
    final.set("with_", exp.With(expressions=ctes))
    return DeltaQuery(final, "full-then-filter")


def merge_query(strategy: str, columns: list[str], previous: exp.Expression,
                delta: exp.Expression, keys: tuple[str, ...] = (),
                deleted: exp.Expression | None = None) -> exp.Expression:
    """Compose the previous snapshot with the delta. `previous` and `delta` are FROM
    items (tables); when `delta` is a query, it becomes the `__delta` CTE. The delta's
    rows where `deleted` holds remove their keys and are not added."""
    with_ctes: list[exp.CTE] = []
    if isinstance(delta, exp.Select):
        with_ = delta.args.get("with_")
        ctes = list(with_.expressions) if with_ else []
        # Copy the delta's final SELECT without its CTEs (they move into the result
        # as they are): deep-copying them only to drop the copies was most of the cost.
        delta.set("with_", None)
        body = delta.copy()
        delta.set("with_", with_)
        delta = body
        if ctes and isinstance(delta.args["from_"].this, exp.Table) and \
                delta.args["from_"].this.name == DELTA and not delta.args.get("where"):
            with_ctes = ctes  # already ends in a __delta CTE
        else:
            with_ctes = [*ctes, exp.CTE(this=delta, alias=exp.TableAlias(this=ident(DELTA)))]
        delta = table(DELTA)
    delta_alias = delta.alias_or_name
    prev = previous.copy()
    prev.set("alias", exp.TableAlias(this=ident(PREV)))
    kept = exp.Select(expressions=[column(c, PREV) for c in columns])
    kept.set("from_", exp.From(this=prev))
    if strategy == "upsert":
        probe = exp.Select(expressions=[exp.Literal.number(1)])
        probe.set("from_", exp.From(this=delta.copy()))
        probe.set("where", exp.Where(this=keys_match(keys, delta_alias, PREV)))
        kept.set("where", exp.Where(this=exp.Not(this=exp.Exists(this=probe))))
    elif strategy != "append":
        raise ValueError(f"no merge for strategy {strategy}")
    fresh = exp.Select(expressions=[column(c) for c in columns])
    fresh.set("from_", exp.From(this=delta.copy()))
    if deleted is not None:
        fresh.set("where", exp.Where(this=not_true(deleted.copy())))
    union = exp.Union(this=kept, expression=fresh, distinct=False)
    if with_ctes:
        union.set("with_", exp.With(expressions=with_ctes))
    return union


# how two rows' values of a key column match (NULL matching NULL): (left, right, key)
KeyMatch = Callable[[exp.Expression, exp.Expression, str], exp.Expression]


def null_safe(left: exp.Expression, right: exp.Expression, key: str) -> exp.Expression:
    """IS NOT DISTINCT FROM: the key match an engine without a faster one gets."""
    return exp.NullSafeEQ(this=left, expression=right)


def keys_match(keys: tuple[str, ...], left: str, right: str,
               match: KeyMatch = null_safe) -> exp.Expression:
    """Every key of the row aliased `left` matches the row aliased `right`'s."""
    out = None
    for key in keys:
        eq = match(column(key, left), column(key, right), key)
        out = eq if out is None else exp.And(this=out, expression=eq)
    return out


def layered_query(strategy: str, columns: list[str], tables: list[exp.Expression],
                  keys: tuple[str, ...] = (),
                  deleted: exp.Expression | None = None,
                  match: KeyMatch = null_safe) -> exp.Expression:
    """A layered snapshot: a base table composed with delta layers, flat.

    append: base UNION ALL layer_1 UNION ALL ... layer_k
    upsert: each table keeps the rows whose keys no LATER layer holds, e.g. for two
    layers
        SELECT cols FROM base AS __t WHERE NOT EXISTS (SELECT 1 FROM (SELECT k FROM l1
            UNION ALL SELECT k FROM l2) AS __later WHERE __later.k IS NOT DISTINCT FROM __t.k)
        UNION ALL SELECT cols FROM l1 AS __t WHERE NOT EXISTS (... l2 ...)
        UNION ALL SELECT cols FROM l2
    One anti-join per table against the keys of later layers (small), never a chain
    of nested merges, so reading stays one pass over the base. `deleted` (delete_when
    over unqualified column names) hides a layer's deletion rows; their keys still
    hide earlier rows.
    """
    parts: list[exp.Select] = []
    for i, source in enumerate(tables):
        node = source.copy()
        node.set("alias", exp.TableAlias(this=ident("__t")))
        part = exp.Select(expressions=[column(c, "__t") for c in columns])
        part.set("from_", exp.From(this=node))
        later = tables[i + 1:]
        if strategy == "upsert" and later:
            union: exp.Expression | None = None
            for layer in later:
                sel = exp.Select(expressions=[column(k) for k in keys])
                sel.set("from_", exp.From(this=layer.copy()))
                union = sel if union is None else exp.Union(this=union, expression=sel,
                                                           distinct=False)
            sub = exp.Subquery(this=union, alias=exp.TableAlias(this=ident("__later")))
            probe = exp.Select(expressions=[exp.Literal.number(1)])
            probe.set("from_", exp.From(this=sub))
            probe.set("where", exp.Where(this=keys_match(keys, "__later", "__t", match)))
            part.set("where", exp.Where(this=exp.Not(this=exp.Exists(this=probe))))
        if deleted is not None and i > 0:
            hide = not_true(_qualified(deleted, "__t"))
            where = part.args.get("where")
            part.set("where", exp.Where(this=hide if where is None else
                                        exp.And(this=where.this, expression=hide)))
        parts.append(part)
    out: exp.Expression = parts[0]
    for part in parts[1:]:
        out = exp.Union(this=out, expression=part, distinct=False)
    return out


def _qualified(condition: exp.Expression, alias: str) -> exp.Expression:
    """A copy of a condition over bare column names, each read from `alias`."""
    out = condition.copy()
    for col in out.find_all(exp.Column):
        if not col.table:
            col.set("table", ident(alias))
    return out


@dataclass(frozen=True)
class SettledRows:
    """The model's rows at or below a boundary, as expressions over one source row:
    `rows` the output columns, `keep` the condition a source row must meet (the
    model's filters and `NOT COALESCE(cdc > boundary, FALSE)`), over `alias.column`."""

    alias: str
    rows: list[exp.Expression]
    keep: exp.Expression
    filters: int  # how many of the model's own filters `keep` holds
    past: exp.Expression  # `cdc > boundary` over the source row


def settled_rows(plan: Plan, boundary: exp.Expression) -> SettledRows | None:
    """`settled_query` flattened onto the source scan, so the source fingerprint's
    scan can hash the model's settled rows too (one pass over the source instead of
    two). Only for a model reading one relation whose steps are all row by row
    (filter, derive, select, sort) with a pushed-down watermark; None otherwise.

        WITH base AS (SELECT o.id, o.amount * 2 AS a FROM orders AS o WHERE o.ok)
        SELECT id, a FROM base            -- with cdc o.t, boundary B, becomes
        rows: o.id, o.amount * 2    keep: o.ok AND NOT COALESCE(o.t > B, FALSE)
    """
    past = pushdown_predicate(plan, boundary)
    if past is None or len(plan.reads) != 1:
        return None
    base = plan.base
    env = {c.id: column(c.name, base.alias) for c in base.columns}
    for col, node in base.lets:
        env[col.id] = bind(node, env)
    keep = [bind(pred, env) for pred in base.preds]
    for stage in plan.stages:
        if isinstance(stage, FilterStage):
            keep.append(bind(stage.predicate, env))
        elif type(stage) in (DeriveStage, SelectStage):  # not a WindowStage
            for col, node in stage.items:
                env[col.id] = bind(node, env)
        elif not isinstance(stage, SortStage):
            return None
    cond: exp.Expression = not_true(past)
    for pred in reversed(keep):
        cond = exp.And(this=exp.Paren(this=pred.copy()), expression=cond)
    return SettledRows(base.alias, [env[c.id] for c in plan.output], cond, len(keep), past)


SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 604800}


def lookback_boundary(watermark, lookback):
    """The watermark less the lookback (the watermark itself without one), as a value
    of the watermark's own type; None when that falls out of the type's range."""
    if lookback is None:
        return watermark
    try:
        if isinstance(lookback, tuple):
            count, unit = lookback
            return watermark - dt.timedelta(seconds=count * SECONDS[unit])
        return watermark - type(watermark)(lookback)
    except (OverflowError, ValueError, TypeError):
        return None
