"""The per-model plan: base scope (from + lets + preds), then the later stages.

Expressions in a plan are SQLGlot trees whose column references are `ColRef`
nodes naming a `Col` by id; sqlgen binds them to the physical column of whatever
CTE holds the column at that point. Plans are plain data: resolve builds them,
sqlgen and the engine read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from sqlglot import exp

from strata.diagnostics import Span
from strata.semantics.types import Type


class ColRef(exp.Expression):
    """A reference to a plan column by id; never rendered (sqlgen replaces it)."""

    arg_types = {"this": True}  # noqa: RUF012 (sqlglot's node protocol)

    @property
    def col_id(self) -> int:
        return self.args["this"]


@dataclass(frozen=True)
class Col:
    id: int
    name: str
    type: Type
    qualifier: str | None = None  # the relation alias it came from; None when computed


@dataclass(frozen=True)
class RelationRef:
    # "source" | "model" | "inline" (a sub-pipeline or a range: its own plan) | "series"
    # (the ints a range counts, the base of its plan)
    kind: str
    name: str
    # an inline relation's plan; not part of its identity (it is never in `reads`:
    # the relations it reads are)
    plan: Plan | None = field(default=None, compare=False, hash=False, repr=False)
    # a series' FROM item (dialects/series.py), aliased where it is read
    series: exp.Expression | None = field(default=None, compare=False, hash=False, repr=False)
    # an inline relation named by `with`: every read of it is one CTE of that name
    shared: bool = field(default=False, compare=False, hash=False)


@dataclass
class BaseScope:
    relation: RelationRef
    alias: str
    columns: list[Col]  # the relation's columns, read as alias.name
    lets: list[tuple[Col, exp.Expression]] = field(default_factory=list)
    preds: list[exp.Expression] = field(default_factory=list)


@dataclass
class JoinStage:
    relation: RelationRef
    alias: str
    on: exp.Expression
    left: bool
    many: bool
    columns: list[Col]
    # equality keys of `on`: (left-side expression, right column) pairs, for the
    # many-to-one check; empty when `on` is not a conjunction of equalities.
    keys: list[tuple[exp.Expression, Col]]
    span: Span
    kind: str = "inner"  # inner | left | full | cross (cross: `on` is TRUE, `many`)


@dataclass
class ExpandStage:
    source: exp.Expression
    item: Col
    alias: str


@dataclass
class FilterStage:
    predicate: exp.Expression


@dataclass
class AggregateStage:
    keys: list[tuple[Col, exp.Expression]]  # output col, the expression it groups by
    aggregates: list[tuple[Col, exp.Expression]]
    # rollup | cube: the rows of every prefix (every subset) of the keys too, the keys
    # left out NULL (`grouping(k)` tells them apart)
    sets: str | None = None


@dataclass
class DeriveStage:
    items: list[tuple[Col, exp.Expression]]


@dataclass
class SelectStage:
    items: list[tuple[Col, exp.Expression]]


@dataclass
class SetOpStage:
    op: str  # union, union_distinct, except, intersect
    relation: RelationRef
    left: list[Col]  # the current output, in order
    right: list[Col]  # the other relation's columns, matched by name to `left`
    output: list[Col]  # fresh columns holding the combined rows


@dataclass
class SemiJoinStage:
    """`join_semi` / `join_anti`: keep the rows with (without) a match; the right side
    adds no column and never repeats a row. Rendered as [NOT] EXISTS, null-safe as
    NOT EXISTS is (never NOT IN)."""

    relation: RelationRef
    alias: str
    on: exp.Expression
    anti: bool
    columns: list[Col]  # the right side's columns, readable in `on` only


@dataclass
class OrderKey:
    expr: exp.Expression
    desc: bool
    nulls_first: bool  # always explicit: DuckDB's default is nulls last both ways

    def node(self, expr: exp.Expression) -> exp.Ordered:
        return exp.Ordered(this=expr, desc=self.desc, nulls_first=self.nulls_first)


@dataclass
class SortStage:
    """`sort`: the order of the rows from here (the output's, and what `take` keeps)."""

    keys: list[OrderKey]


@dataclass
class TakeStage:
    """`take N` (first N rows in `order`), or `take N by k` (first N per group)."""

    count: int
    order: list[OrderKey]
    by: list[exp.Expression]


@dataclass
class DistinctStage:
    """`distinct` (no two equal rows), or `distinct by k order o` (the first row per
    key in that order: the latest-row-per-key dedup)."""

    by: list[exp.Expression]
    order: list[OrderKey]
    columns: list[Col] = field(default_factory=list)  # plain distinct: the rows compared


@dataclass
class WindowStage(DeriveStage):
    """The `derive` after a `window` step: its items hold `exp.Window` nodes (partition,
    order, frame over ColRefs). A derive for every other purpose."""


Stage = (JoinStage | ExpandStage | FilterStage | AggregateStage | DeriveStage | SelectStage
         | SetOpStage | SemiJoinStage | SortStage | TakeStage | DistinctStage)


@dataclass(frozen=True)
class Incremental:
    strategy: str  # replace | append | upsert
    cdc_column: str | None
    merge_keys: tuple[str, ...]
    compact_layers: int = 8
    compact_ratio: float = 0.2
    # issue 17: what a run does when its merge would differ from a full refresh
    # (warn | recompute | fail | ignore: not checked); warn merges as the delivery note
    # defines a merge and says so (issue 33: acting on drift is opt-in)
    on_drift: str = "warn"
    # re-read this far below the watermark: an int for a number cdc column, else
    # (count, unit) with unit one of seconds, minutes, hours, days, weeks
    lookback: int | float | tuple[int, str] | None = None
    # upsert: a bool over output columns (ColRef ids); a delta row where it holds
    # removes its key. The full computation drops those rows (the plan's last stage)
    delete_when: exp.Expression | None = None
    delete_text: str = ""
    # whether the model wrote `on_drift`: only a written value is part of its code, so
    # the default's change (recompute -> warn) recomputes no model on upgrade
    on_drift_written: bool = False


@dataclass(frozen=True)
class PinSpec:
    kind: str  # unique, not_null, rows, columns
    columns: tuple[str, ...] = ()
    op: str | None = None
    bounds: tuple[int, ...] = ()
    contract: tuple[tuple[str, Type], ...] = ()
    span: Span | None = None
    relation: RelationRef | None = None  # references: the relation holding the key
    ref_columns: tuple[str, ...] = ()  # references: its key columns
    values: tuple[exp.Expression, ...] = ()  # accepted: literal nodes
    expr: exp.Expression | None = None  # holds: a bool condition over ColRef(output id)
    text: str = ""  # accepted/holds: the values or condition as SQL, for messages
    # references: the relation reads this model, so the pin is checked after both are
    # built (resolve.py, ModelInfo.pins_after), not before the model's readers
    after: bool = False

    def describe(self) -> str:
        if self.kind == "references":
            return (f"pin references [{', '.join(self.columns)}] -> {self.relation.name} "
                    f"[{', '.join(self.ref_columns)}]")
        if self.kind == "accepted":
            return f"pin accepted {self.columns[0]} in ({self.text})"
        if self.kind == "holds":
            return f"pin holds {self.text}"
        if self.kind in ("unique", "not_null"):
            return f"pin {self.kind} [{', '.join(self.columns)}]"
        if self.kind == "rows":
            if self.op == "between":
                return f"pin rows between {self.bounds[0]} and {self.bounds[1]}"
            return f"pin rows {self.op} {self.bounds[0]}"
        return "pin columns { " + ", ".join(f"{n}: {t}" for n, t in self.contract) + " }"


@dataclass
class Plan:
    model: str
    base: BaseScope
    stages: list[Stage]
    output: list[Col]
    reads: list[RelationRef]  # every relation read, in order, without duplicates
    incremental: Incremental | None = None
    pins: list[PinSpec] = field(default_factory=list)
    # run_date()/run_timestamp() read by the model itself (strata/sqlgen/clock.py)
    clock: frozenset[str] = frozenset()
    # those whose new value makes the model stale, when not all of `clock`: a history
    # stamps its versions with run_timestamp(), but rows that did not change make none
    clock_stale: frozenset[str] | None = None

    @property
    def has_join_setop_or_expand(self) -> bool:
        return any(isinstance(s, (JoinStage, ExpandStage, SetOpStage)) for s in self.stages)

    @property
    def pushdown_safe(self) -> bool:
        """May a predicate on base columns move into the base scope? Not past a join,
        set operation or expand (they bring rows the predicate never saw), nor past a
        window, `distinct`, `take` or semi/anti join: which rows they keep, and what
        a window computes, depend on every row of the base, not on the kept ones."""
        return not any(isinstance(s, (JoinStage, ExpandStage, SetOpStage, WindowStage,
                                      DistinctStage, TakeStage, SemiJoinStage))
                       for s in self.stages)

    def with_preds(self, extra: list[exp.Expression]) -> Plan:
        base = replace(self.base, preds=[*self.base.preds, *extra])
        return replace(self, base=base)


def colref(col: Col) -> ColRef:
    return ColRef(this=col.id)
