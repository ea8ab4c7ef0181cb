"""Window functions (issue 16): the functions only a `window` step computes, and how
the derive after a `window` turns its calls into `exp.Window` nodes.

`window by k order t [rows between ...]` then `derive n = row_number(), s = sum(x)`:
every window function and every aggregate of that derive is computed over the
window (partition by k, order by t, the frame). Anywhere else a window function is
E097. Ranking and offset functions need an order (E099): without one their result
depends on how the engine happens to read the rows, and content identity would
break. The frame applies to aggregates and first_value/last_value only: ranking
and offset functions ignore it in DuckDB, and Spark refuses one on them.
"""

from __future__ import annotations

from sqlglot import exp

from strata.semantics import types as T
from strata.semantics.functions import Function

OUTSIDE_HINT = ("window functions are computed by the `derive` right after a `window` step: "
                "`window by customer_id order ordered_at` then `derive n = row_number()`")


def _int(args: list[T.Type]):
    return T.INT


def _double(args: list[T.Type]):
    return T.DOUBLE


def _ntile(args: list[T.Type]):
    if args[0].kind not in ("int", "null"):
        return "expects a whole number of buckets"
    return T.INT


def _offset(args: list[T.Type]):
    """lag/lead(x [, offset [, default]]): x's type, unified with the default's."""
    if len(args) > 1 and args[1].kind not in ("int", "null"):
        return "expects a whole number offset as second argument"
    if len(args) > 2:
        unified = T.unify(args[0], args[2])
        if unified is None:
            return "expects a default of the value's type"
        return unified
    return args[0]


def _value(args: list[T.Type]):
    return args[0]


def _lag_lead(cls):
    def build(args: list[exp.Expression]) -> exp.Expression:
        node = cls(this=args[0])
        if len(args) > 1:
            node.set("offset", args[1])
        if len(args) > 2:
            node.set("default", args[2])
        return node
    return build


# aggregate=True: like an aggregate, a window function may not nest in another
WINDOW_FUNCTIONS: dict[str, Function] = {f.name: f for f in (
    Function("row_number", 0, 0, _int, lambda a: exp.RowNumber(), aggregate=True),
    Function("rank", 0, 0, _int, lambda a: exp.Rank(), aggregate=True),
    Function("dense_rank", 0, 0, _int, lambda a: exp.DenseRank(), aggregate=True),
    Function("percent_rank", 0, 0, _double, lambda a: exp.PercentRank(), aggregate=True),
    Function("cume_dist", 0, 0, _double, lambda a: exp.CumeDist(), aggregate=True),
    Function("ntile", 1, 1, _ntile, lambda a: exp.Ntile(this=a[0]), aggregate=True),
    Function("lag", 1, 3, _offset, _lag_lead(exp.Lag), aggregate=True),
    Function("lead", 1, 3, _offset, _lag_lead(exp.Lead), aggregate=True),
    Function("first_value", 1, 1, _value, lambda a: exp.FirstValue(this=a[0]), aggregate=True),
    Function("last_value", 1, 1, _value, lambda a: exp.LastValue(this=a[0]), aggregate=True),
)}

# need an order; ignore (and must not carry) a frame
RANKING = (exp.RowNumber, exp.Rank, exp.DenseRank, exp.PercentRank, exp.CumeDist, exp.Ntile,
           exp.Lag, exp.Lead)
# need an order; take the frame
FRAMED_VALUES = (exp.FirstValue, exp.LastValue)
WINDOWED = (*RANKING, *FRAMED_VALUES, exp.AggFunc)


def over(node: exp.Expression, partition: list[exp.Expression], order: list[exp.Ordered],
         frame: exp.WindowSpec | None) -> tuple[exp.Expression, list[exp.Expression]]:
    """`node` with each outermost window function or aggregate call wrapped in an
    OVER clause; also returns the calls wrapped (for the caller's checks)."""
    calls = [n for n in node.walk() if isinstance(n, WINDOWED)
             and not any(isinstance(a, WINDOWED) for a in _ancestors(n, node))]
    wrapped = []
    for call in calls:
        window = exp.Window(this=call.copy(), partition_by=[p.copy() for p in partition],
                            over="OVER")
        if order:
            window.set("order", exp.Order(expressions=[o.copy() for o in order]))
        if frame is not None and not isinstance(call, RANKING):
            window.set("spec", frame.copy())
        wrapped.append(call)
        if call is node:
            return window, wrapped
        call.replace(window)
    return node, wrapped


def _ancestors(node: exp.Expression, root: exp.Expression):
    parent = node.parent
    while parent is not None and node is not root:
        yield parent
        if parent is root:
            return
        node, parent = parent, parent.parent


def needs_order(call: exp.Expression) -> bool:
    return isinstance(call, (*RANKING, *FRAMED_VALUES))


def is_distinct_aggregate(call: exp.Expression) -> bool:
    """count_distinct(x): no DISTINCT aggregate over a window in PostgreSQL or Spark."""
    return isinstance(call, exp.AggFunc) and isinstance(call.this, exp.Distinct)


def frame_spec(kind: str, start: tuple[str, str | None, int | None],
               end: tuple[str, str | None, int | None]) -> exp.WindowSpec:
    """`rows between 2 preceding and current row` as SQLGlot's WindowSpec."""
    spec = exp.WindowSpec(kind=kind.upper())
    for (bound, side, offset), (value_key, side_key) in ((start, ("start", "start_side")),
                                                         (end, ("end", "end_side"))):
        if bound == "unbounded":
            spec.set(value_key, "UNBOUNDED")
            spec.set(side_key, side.upper())
        elif bound == "current":
            spec.set(value_key, "CURRENT ROW")
        else:
            spec.set(value_key, exp.Literal.number(offset))
            spec.set(side_key, side.upper())
    return spec


def bound_position(bound: str, side: str | None, offset: int | None) -> float:
    """Where a frame bound lies relative to the current row (preceding < 0), so a
    frame whose start lies after its end is refused (E105)."""
    if bound == "current":
        return 0
    sign = -1 if side == "preceding" else 1
    return sign * (float("inf") if bound == "unbounded" else offset)
