"""What a run of a model will check and skip, decided without executing (`strata plan`).
"""

from __future__ import annotations

from strata.engine.pins.joins import join_label, split_join
from strata.engine.pins.proofs import proven_unique
from strata.plan import (
    JoinStage,
    Plan,
    RelationRef,
)


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
