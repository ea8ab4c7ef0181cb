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

from strata.plan import Col, ColRef, OrderKey, Plan, colref
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
    """lag/lead(x [, offset [, default]]): x's type (DuckDB casts the default to it:
    lag(int, 1, 2.5) is an int, 3 where there is no row), or the default's for an
    untyped NULL x."""
    if len(args) > 1 and args[1].kind not in ("int", "null"):
        return "expects a whole number offset as second argument"
    if len(args) > 2:
        if T.unify(args[0], args[2]) is None:
            return "expects a default of the value's type"
        return args[2] if args[0].kind == "null" else args[0]
    return args[0]


def _value(args: list[T.Type]):
    return args[0]


def _lag_lead(cls):
    def build(args: list[exp.Expression], types: list[T.Type]) -> exp.Expression:
        node = cls(this=args[0])
        if len(args) > 1:
            node.set("offset", args[1])
        if len(args) > 2:
            node.set("default", _as_value_type(args[2], types[2], types[0]))
        return node
    return build


def _as_value_type(default: exp.Expression, given: T.Type, value: T.Type) -> exp.Expression:
    """The default cast to the value's type, as DuckDB casts it: written out, so every
    engine casts it the same way (with its own cast's rewrites) instead of picking a
    common type of its own (PostgreSQL: numeric 2.5, Spark: 2)."""
    if given == value or "null" in (given.kind, value.kind):
        return default
    node = exp.Cast(this=default, to=value.to_sqlglot())
    node.type = value.to_sqlglot()
    return node


# aggregate=True: like an aggregate, a window function may not nest in another.
# signature and doc: as docs/LANGUAGE.md's table has them (a test holds them equal);
# the language server's hover and completion show them.
WINDOW_FUNCTIONS: dict[str, Function] = {f.name: f for f in (
    Function("row_number", 0, 0, _int, lambda a: exp.RowNumber(), aggregate=True,
             signature='row_number() -> int',
             doc="the row's position in its partition, 1 for the first"),
    Function("rank", 0, 0, _int, lambda a: exp.Rank(), aggregate=True,
             signature='rank() -> int',
             doc='1 + the rows ordered before it; ties share a rank and leave a gap after'),
    Function("dense_rank", 0, 0, _int, lambda a: exp.DenseRank(), aggregate=True,
             signature='dense_rank() -> int',
             doc='like `rank`, without gaps'),
    Function("percent_rank", 0, 0, _double, lambda a: exp.PercentRank(), aggregate=True,
             signature='percent_rank() -> double',
             doc='`(rank - 1) / (rows - 1)`, 0 for a partition of one row'),
    Function("cume_dist", 0, 0, _double, lambda a: exp.CumeDist(), aggregate=True,
             signature='cume_dist() -> double',
             doc="the share of the partition's rows ordered before it or tied with it"),
    Function("ntile", 1, 1, _ntile, lambda a: exp.Ntile(this=a[0]), aggregate=True,
             signature='ntile(n: int) -> int',
             doc='the bucket, 1 to `n`, of `n` buckets as equal as can be'),
    Function("lag", 1, 3, _offset, None, build_typed=_lag_lead(exp.Lag), aggregate=True,
             signature='lag(x: T[, offset: int[, default: T]]) -> T',
             doc='`x` of the row `offset` (default 1) rows before, `default` (cast to '
                 "x's type; or `null`) when there is none"),
    Function("lead", 1, 3, _offset, None, build_typed=_lag_lead(exp.Lead), aggregate=True,
             signature='lead(x: T[, offset: int[, default: T]]) -> T',
             doc='`x` of the row `offset` (default 1) rows after, `default` (cast to '
                 "x's type; or `null`) when there is none"),
    Function("first_value", 1, 1, _value, lambda a: exp.FirstValue(this=a[0]), aggregate=True,
             signature='first_value(x: T) -> T',
             doc='`x` of the first row of the frame'),
    Function("last_value", 1, 1, _value, lambda a: exp.LastValue(this=a[0]), aggregate=True,
             signature='last_value(x: T) -> T',
             doc="`x` of the last row of the frame (with no frame: the current row's last tie)"),
)}

# need an order; ignore (and must not carry) a frame
RANKING = (exp.RowNumber, exp.Rank, exp.DenseRank, exp.PercentRank, exp.CumeDist, exp.Ntile,
           exp.Lag, exp.Lead)
# need an order; take the frame
FRAMED_VALUES = (exp.FirstValue, exp.LastValue)
WINDOWED = (*RANKING, *FRAMED_VALUES, exp.AggFunc)


def over(node: exp.Expression, partition: list[exp.Expression], order: list[exp.Ordered],
         frame: exp.WindowSpec | None, total: list[exp.Ordered] | None = None,
         ) -> tuple[exp.Expression, list[exp.Expression]]:
    """`node` with each outermost window function or aggregate call wrapped in an
    OVER clause; also returns the calls wrapped (for the caller's checks).

    `total` is `order` with the tie-breakers after it: what an order-sensitive call
    (ORDER_SENSITIVE, or an aggregate over a ROWS frame) is ordered by. Ranks, and
    aggregates over a RANGE frame, take tied rows together and keep `order`."""
    calls = [n for n in node.walk() if isinstance(n, WINDOWED)
             and not any(isinstance(a, WINDOWED) for a in _ancestors(n, node))]
    wrapped = []
    for call in calls:
        call_partition, call_order = partition, order
        call_frame = None if isinstance(call, RANKING) else frame
        if total is not None and order and (
                isinstance(call, ORDER_SENSITIVE)
                or (call_frame is not None and call_frame.args["kind"] == "ROWS")):
            tied = tie_free(call, partition, order, call_frame, total)
            if tied is not None:
                call_partition, call_order, call_frame = tied
        wrapped_call = _with_filter(call)
        window = exp.Window(this=wrapped_call.copy(),
                            partition_by=[p.copy() for p in call_partition], over="OVER")
        if call_order:
            window.set("order", exp.Order(expressions=[o.copy() for o in call_order]))
        if call_frame is not None:
            window.set("spec", call_frame.copy())
        wrapped.append(call)
        if wrapped_call is node:
            return window, wrapped
        wrapped_call.replace(window)
    return node, wrapped


def _with_filter(call: exp.Expression) -> exp.Expression:
    """The call with its FILTER clause (`list_agg` is `ARRAY_AGG(..) FILTER (WHERE ..)`):
    SQL puts the clause before OVER, `agg FILTER (WHERE ..) OVER (..)`; wrapped alone,
    the call would read `agg OVER (..) FILTER (..)`, which no engine runs."""
    parent = call.parent
    if isinstance(parent, exp.Filter) and call.arg_key == "this":
        return parent
    return call


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


def is_arg_extreme(call: exp.Expression) -> bool:
    """arg_min/arg_max: a FILTER clause (and PostgreSQL's array) that OVER cannot wrap."""
    return isinstance(call, (exp.ArgMin, exp.ArgMax))


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


# ------------------------------------------------------------ ties (issue 16)
# Which rows `take` keeps, which row `distinct by ... order` keeps, and what an
# order-sensitive window function gives a row must not depend on how the engine
# happens to read rows that tie on the user's order: content identity (and the
# differential guarantee) would break. Strata orders such ties itself, by the
# remaining columns in scope: ascending, NULLs last, text by code point (the
# dialects collate), a double's -0.0 before 0.0 (DuckDB, PostgreSQL and Spark take
# them as equal and order NaN after every number, so a sign key follows the value).

# whose value a row gets depends on the rows' order even among ties
ORDER_SENSITIVE = (exp.RowNumber, exp.Ntile, exp.Lag, exp.Lead, *FRAMED_VALUES)


def tie_breakers(cols: list[Col], defs: dict[int, exp.Expression],
                 known: set[int]) -> list[OrderKey]:
    """Order keys over `cols` (the scope, in its order) that break every tie of an
    order. `known` are the columns the user's keys (or partition) already hold. A
    column computed from columns already ordered (and by no window) adds nothing and
    is left out, so the SQL does not grow with every `derive`. A list column has no
    order every engine agrees on and is left out too: rows that differ only in a list
    stay in the engine's order (docs/LANGUAGE.md, Ties)."""
    settled = set(known)
    keys: list[OrderKey] = []
    for col in cols:
        if col.id in settled or col.type.kind == "error":
            continue
        node = defs.get(col.id)
        if node is not None and node.find(exp.Window) is None and \
                {r.col_id for r in node.find_all(ColRef)} <= settled:
            settled.add(col.id)
            continue
        if col.type.kind == "list":
            continue
        settled.add(col.id)
        keys.append(OrderKey(_typed_ref(col), desc=False, nulls_first=False))
        if col.type.kind == "double":
            sign = exp.Atan2(this=_typed_ref(col), expression=exp.Literal.number(-1))
            sign.type = col.type.to_sqlglot()
            keys.append(OrderKey(sign, desc=False, nulls_first=False))
    return keys


def pinned_unique(upstream: Plan | None, cols: list[Col]) -> list[frozenset[int]]:
    """The keys of a model read (its `pin unique`s, as ids of `cols`, its columns read
    in order): verified before it publishes, so no two of its rows share one."""
    if upstream is None:
        return []
    by_name = {c.name: c.id for c in cols}
    return [frozenset(by_name[n] for n in pin.columns) for pin in upstream.pins
            if pin.kind == "unique" and all(n in by_name for n in pin.columns)]


def key_columns(cols: list[Col], known: set[int], unique: list[frozenset[int]],
                defs: dict[int, exp.Expression]) -> list[Col] | None:
    """The columns of `cols` that complete the shortest unique key of the scope not
    already held by `known` (an order's keys and partition): ordering by them breaks
    every tie, so the other columns would only slow the sort (issue 40). [] when the
    order holds a key already (rows never tie); None when no key is in scope. A key
    column is followed through the bare copies (`select id`) made of it."""

    def root(col_id: int) -> int:
        seen = set()
        while isinstance(defs.get(col_id), ColRef) and col_id not in seen:
            seen.add(col_id)
            col_id = defs[col_id].col_id
        return col_id

    held = {root(i) for i in known}
    by_root: dict[int, Col] = {}
    for col in cols:
        by_root.setdefault(root(col.id), col)
    best = None
    for key in unique:
        missing = {root(i) for i in key} - held
        if missing <= by_root.keys() and (best is None or len(missing) < len(best)) and \
                all(by_root[r].type.kind != "list" for r in missing):  # no order of lists
            best = missing
    if best is None:
        return None
    return [c for c in cols if c.id in {by_root[r].id for r in best}]


def _typed_ref(col: Col) -> ColRef:
    ref = colref(col)
    ref.type = col.type.to_sqlglot()  # text keys are collated by code point where needed
    return ref


def plain_keys(nodes: list[exp.Expression]) -> set[int]:
    """Columns an order or partition holds as a whole key (`order id`, not `order -id`
    -- which orders the same, but a plain column is all this looks for)."""
    return {n.col_id for n in nodes if isinstance(n, ColRef)}


Over = tuple[list[exp.Expression], list[exp.Ordered], "exp.WindowSpec | None"]


def tie_free(call: exp.Expression, partition: list[exp.Expression], order: list[exp.Ordered],
             frame: exp.WindowSpec | None, total: list[exp.Ordered]) -> Over | None:
    """(partition, order, frame) that give an order-sensitive call one value whatever
    the engine's order of tied rows; None when no such spelling exists (E111).

    A ROWS frame just takes the total order. first_value/last_value over a RANGE frame
    (the default) read the frame's edge row, and a RANGE frame's edges are whole groups
    of tied rows (peers): an edge at the partition's end is the partition's edge row in
    the total order (the same rows frame); an edge at the current row is the current
    row's peer group's edge row, i.e. the edge of a partition by the order's keys too,
    ordered by the tie-breakers. An edge an offset away has no such spelling."""
    if not isinstance(call, FRAMED_VALUES) or (frame is not None and frame.args["kind"] == "ROWS"):
        return partition, total, frame
    spec = frame or exp.WindowSpec(kind="RANGE", start="UNBOUNDED", start_side="PRECEDING",
                                   end="CURRENT ROW")
    first = isinstance(call, exp.FirstValue)
    edge = (spec.args["start"], spec.args.get("start_side")) if first else \
        (spec.args["end"], spec.args.get("end_side"))
    other = spec.args["end"] if first else spec.args["start"]
    if isinstance(other, exp.Expression) or isinstance(edge[0], exp.Expression):
        return None  # an offset: the frame may hold no row, or end inside a peer group
    whole = exp.WindowSpec(kind="ROWS", start="UNBOUNDED", start_side="PRECEDING",
                           end="UNBOUNDED", end_side="FOLLOWING")
    if edge[0] == "UNBOUNDED":
        return partition, total, whole
    peers = [*partition, *(o.this.copy() for o in order)]
    return peers, total[len(order):], whole
