"""Uniqueness proven by the plan, so its check can be skipped: one row per `group`
key, or a key a model upstream pins unique and nothing since fans out.
"""

from __future__ import annotations

from strata.plan import (
    AggregateStage,
    ColRef,
    DeriveStage,
    FilterStage,
    JoinStage,
    Plan,
    SelectStage,
)


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
