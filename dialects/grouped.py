"""A grouped query whose emulations would copy an aggregate computes its aggregates
in an inner query, and the rest over their names.

`binding.py` names an operand once, but not one holding an aggregate: moved into a
scalar subquery, PostgreSQL runs the aggregate over the subquery's one row. So in
`round(sum(x) / count(*), 2)` each emulation copied SUM(x) and COUNT(*) into every
branch it spells (examples/shop `region_sales`: 331 lines on PostgreSQL for DuckDB's
25, and twice as much per nesting level). Here such a query

    SELECT k, ROUND(SUM(x) / COUNT(*), 2) AS v FROM t GROUP BY k

becomes

    SELECT __g.k, ROUND(__g.__a1 / __g.__a2, 2) AS v
    FROM (SELECT k, SUM(x) AS __a1, COUNT(*) AS __a2 FROM t GROUP BY k) AS __g

and the emulations read columns, which they copy or bind freely. The rows are the
same: the outer query computes per group what the grouped one computed after
grouping. Its ORDER BY, LIMIT and DISTINCT move out with it; a HAVING stays inside
unless it would copy an aggregate too (then it is the outer WHERE).

Only where it pays (`_copies`): each post-aggregate expression is adapted once with
its aggregates as typed stand-in columns, and the query splits when the engine's
spelling reads a stand-in more than once. A query whose spelling copies nothing
(SUM(x) * 2, HAVING COUNT(*) > 1) renders as on DuckDB.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp

from dialects.binding import AGGREGATE_STAND_IN, BOUND_AN_AGGREGATE

Adapt = Callable[[exp.Expression], exp.Expression]  # the engine's rewrites of a tree

GROUPED = "__g"  # Strata's own names start with two underscores; a user's cannot
STAND_IN = "__strata_aggregate_"
SETS = (exp.Rollup, exp.Cube, exp.GroupingSets)


def aggregates_first(tree: exp.Expression, adapt: Adapt) -> exp.Expression:
    """`tree` with each grouped SELECT whose spelling would copy an aggregate split in
    two (the module's docstring); the rest untouched, not yet adapted."""
    for select in list(tree.find_all(exp.Select)):
        shape = _shape(select)
        if shape is None:
            continue
        parent, key, index = select.parent, select.arg_key, select.index
        split = _split(select, shape, adapt)  # the select is inside it now
        if split is None:
            continue
        if parent is None:
            tree = split
        else:
            parent.set(key, split, index)
    return tree


# ---------------------------------------------------------------- what is an aggregate

def _window_function(node: exp.Expression) -> bool:
    """The function a window computes (SUM in SUM(..) OVER (..)), which runs over the
    grouped rows, not within a group."""
    parent = node.parent
    if node.arg_key != "this" or parent is None:
        return False
    return isinstance(parent, exp.Window) or (
        isinstance(parent, (exp.Filter, exp.WithinGroup)) and _window_function(parent))


def _call(node: exp.Expression) -> bool:
    """An aggregate call of this query's groups: an aggregate function, with its
    FILTER or WITHIN GROUP, that no window computes."""
    if _window_function(node):
        return False
    if isinstance(node, (exp.Filter, exp.WithinGroup)):
        return isinstance(node.this, exp.AggFunc)
    return isinstance(node, exp.AggFunc) and not isinstance(node.parent, (exp.Filter,
                                                                          exp.WithinGroup))


def _calls(node: exp.Expression) -> list[exp.Expression]:
    """The aggregate calls in `node`, outermost only, none of a subquery's."""
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        if current is not node and isinstance(current, (exp.Select, exp.Subquery)):
            continue  # its aggregates are its own query's
        if _call(current):
            found.append(current)
        else:
            stack.extend(reversed(list(current.iter_expressions())))
    return found


def _post_aggregate(select: exp.Select) -> list[exp.Expression]:
    """What a grouped query computes after grouping: its projection (without the
    aliases), HAVING and ORDER BY keys."""
    out = [e.unalias() for e in select.expressions]
    having = select.args.get("having")
    if having is not None:
        out.append(having.this)
    order = select.args.get("order")
    if order is not None:
        out.extend(o.this for o in order.expressions)
    return out


@dataclass(frozen=True)
class _Shape:
    """What the inner query computes (`unit`: aggregate calls, or windows) and which
    other values it hands out (`keys`: the group keys, or the columns read beside the
    windows); `kind` starts the names of units without one (__a1, __w1)."""

    unit: Callable[[exp.Expression], bool]
    keys: list[exp.Expression]
    kind: str


def _shape(select: exp.Select) -> _Shape | None:
    """A grouped SELECT's, a windowed one's, or None (nothing an emulation copies
    that a binding could not name)."""
    after = _post_aggregate(select)
    if select.args.get("group") is not None or any(_calls(e) for e in after):
        return _Shape(_call, _keys(select), "a")
    if any(_windows(e) for e in after):
        return _Shape(_window, _beside_windows(after), "w")
    return None


def _window(node: exp.Expression) -> bool:
    return isinstance(node, exp.Window)


def _windows(node: exp.Expression) -> list[exp.Window]:
    return [w for w in node.find_all(exp.Window)]


def _beside_windows(expressions: list[exp.Expression]) -> list[exp.Expression]:
    """The distinct columns read outside the windows."""
    found: list[exp.Expression] = []
    for expression in expressions:
        stack = [expression]
        while stack:
            current = stack.pop()
            if isinstance(current, (exp.Window, exp.Select, exp.Subquery)):
                continue
            if isinstance(current, exp.Column) and not any(current == f for f in found):
                found.append(current)
            stack.extend(current.iter_expressions())
    return found


def _keys(select: exp.Select) -> list[exp.Expression]:
    """The GROUP BY expressions, those inside ROLLUP / CUBE / GROUPING SETS too."""
    group = select.args.get("group")
    if group is None:
        return []
    keys = []
    for key in group.expressions:
        keys.extend(key.expressions if isinstance(key, SETS) else [key])
    for name in ("rollup", "cube", "grouping_sets"):
        for item in group.args.get(name) or []:
            keys.extend(item.expressions if isinstance(item, SETS) else [item])
    return keys


# ---------------------------------------------------------------- whether to split

def _simple(node: exp.Expression) -> bool:
    return isinstance(node.unnest(), (exp.Column, exp.Literal, exp.Null, exp.Boolean))


def _copies(expression: exp.Expression, shape: _Shape, adapt: Adapt,
            ordering: bool = False) -> bool:
    """Would the engine's spelling of `expression` read one of its aggregate calls (or
    computed group keys) more than once? Tried on a copy where each is a typed
    stand-in column: the work of adapting the expression once, whatever its nesting.
    `ordering`: tried as an ORDER BY key, where an engine may spell it otherwise
    (Spark refuses a function of Strata's there: dialects/routines.py)."""
    trial = expression.copy()
    computed = _Shape(shape.unit, [k for k in shape.keys if not _simple(k)], shape.kind)
    places = [p for p in _places(trial, computed) if p is not trial]
    if not places:
        return False
    for n, place in enumerate(places):
        stand_in = exp.column(f"{STAND_IN}{n}")
        stand_in.type = place.type
        stand_in.meta[AGGREGATE_STAND_IN] = True
        place.replace(stand_in)
    if ordering:
        holder = exp.Ordered(this=trial)
        adapt(exp.Select(expressions=[exp.Star()], order=exp.Order(expressions=[holder])))
        adapted = holder.this
    else:
        adapted = adapt(trial)
    reads = Counter(c.name for c in adapted.find_all(exp.Column)
                    if c.name.startswith(STAND_IN))
    # a binding around a stand-in (BigQuery's round names `x * 100.0` once) would
    # copy the aggregate instead in the real tree: no binding can name one
    return any(n > 1 for n in reads.values()) or \
        any(node.meta_get(BOUND_AN_AGGREGATE) for node in adapted.walk())


def _places(node: exp.Expression, shape: _Shape) -> list[exp.Expression]:
    """The aggregate calls and group keys in `node`, outermost only, none of a
    subquery's and none a window computes."""
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        if current is not node and isinstance(current, (exp.Select, exp.Subquery)):
            continue
        if shape.unit(current) or (shape.keys and not _window_function(current)
                                   and any(current == k for k in shape.keys)):
            found.append(current)
        else:
            stack.extend(reversed(list(current.iter_expressions())))
    return found


# ---------------------------------------------------------------- the split

def _split(select: exp.Select, shape: _Shape, adapt: Adapt) -> exp.Select | None:
    """The outer query over `select` made the inner grouped one, or None when no
    post-aggregate spelling copies an aggregate, or the outer query would read a
    column the grouped one does not give it (then the query stays as it is)."""
    if any(_star(e) for e in select.expressions):
        return None  # the inner query names each value it hands out: no `*` to split
    having = select.args.get("having")
    order = select.args.get("order")
    moved_having = having is not None and _copies(having.this, shape, adapt)
    keys = [o.this for o in order.expressions] if order is not None else []
    if not moved_having and not any(_copies(e.unalias(), shape, adapt)
                                    for e in select.expressions) \
            and not any(_copies(k, shape, adapt, ordering=True) for k in keys):
        return None
    names = _Names({e.alias_or_name for e in select.expressions})
    projection = []
    for item in select.expressions:
        value = _over(item.unalias(), shape, names, hint=item.alias_or_name)
        projection.append(value if value.alias_or_name == item.alias_or_name
                          else exp.Alias(this=value, alias=exp.to_identifier(
                              item.alias_or_name, quoted=_quoted(item))))
    where = _over(having.this, shape, names) if moved_having else None
    ordered = None if order is None else [_over(o, shape, names) for o in order.expressions]
    reads = [*projection, *(ordered or []), *([where] if where is not None else [])]
    if any(c.table != GROUPED for e in reads for c in _columns(e)):
        return None  # an ungrouped column (PostgreSQL's functional dependence): kept
    return _assemble(select, names, projection, where, ordered)


def _star(item: exp.Expression) -> bool:
    """Does a projection item read `*` or `t.*` (COUNT(*), in a window too, aside)?"""
    return any(not any(isinstance(a, (exp.AggFunc, exp.Window)) for a in _ancestors(n, item))
               for n in item.find_all(exp.Star))


def _ancestors(node: exp.Expression, root: exp.Expression) -> list[exp.Expression]:
    out = []
    while node is not root and node.parent is not None:
        node = node.parent
        out.append(node)
    return out


def _quoted(item: exp.Expression) -> bool:
    name = item.args.get("alias") if isinstance(item, exp.Alias) else item.args.get("this")
    return isinstance(name, exp.Identifier) and name.quoted


def _columns(node: exp.Expression) -> list[exp.Column]:
    """Columns `node` reads from its FROM (not a subquery's own)."""
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        if isinstance(current, (exp.Select, exp.Subquery)):
            continue
        if isinstance(current, exp.Column):
            found.append(current)
        stack.extend(current.iter_expressions())
    return found


class _Names:
    """The inner query's columns: one per distinct aggregate call and group key, named
    as the projection names it where it is a whole item (`SUM(x) AS revenue` gives
    `revenue`), else __a1, __a2, .. (aggregates) and __k1, .. (keys)."""

    def __init__(self, outputs: set[str]):
        self.items: list[tuple[exp.Expression, exp.Identifier]] = []
        self.outputs = outputs
        self.taken: set[str] = set()
        self.count: Counter[str] = Counter()

    def of(self, node: exp.Expression, kind: str, hint: exp.Identifier | None) -> exp.Identifier:
        for known, name in self.items:
            if known == node:
                return name
        if hint is not None and hint.name not in self.taken:
            name = hint.copy()
        else:
            text = ""
            while not text or text in self.taken or text in self.outputs:
                self.count[kind] += 1
                text = f"__{kind}{self.count[kind]}"
            name = exp.to_identifier(text)
        self.taken.add(name.name)
        self.items.append((node.copy(), name))
        return name


def _over(node: exp.Expression, shape: _Shape, names: _Names,
          hint: str | None = None) -> exp.Expression:
    """A copy of `node` reading each aggregate call and group key from the inner
    query's columns (`__g.name`, typed as what it replaces); `hint` names the column
    of a node that is one whole."""
    copied = node.copy()
    for place in _places(copied, shape):
        whole = place is copied
        name = names.of(place, shape.kind if shape.unit(place) else "k",
                        _identifier(hint, node) if whole and hint else None)
        column = exp.Column(this=name.copy(), table=exp.to_identifier(GROUPED))
        if place.type is not None:
            column.type = place.type.copy()
        if whole:
            return column
        place.replace(column)
    return copied


def _identifier(hint: str, node: exp.Expression) -> exp.Identifier:
    """The output name `hint` as an identifier, quoted as the item's was."""
    parent = node.parent
    if isinstance(parent, exp.Alias):
        return parent.args["alias"]
    if isinstance(node, exp.Column):
        return node.this
    return exp.to_identifier(hint)


def _assemble(select: exp.Select, names: _Names, projection: list[exp.Expression],
              where: exp.Expression | None, ordered: list[exp.Expression] | None) -> exp.Select:
    """The outer SELECT, and `select` reduced to the grouped columns `names` lists."""
    outer = exp.Select(expressions=projection)
    for key in ("with_", "distinct", "limit", "offset"):
        value = select.args.get(key)
        if value is not None:
            select.set(key, None)
            outer.set(key, value)
    if ordered is not None:
        select.set("order", None)
        outer.set("order", exp.Order(expressions=ordered))
    if where is not None:
        select.set("having", None)
        outer.set("where", exp.Where(this=where))
    select.set("expressions", [
        node if isinstance(node, exp.Column) and node.name == name.name
        else exp.Alias(this=node, alias=name) for node, name in names.items])
    outer.set("from_", exp.From(this=exp.Subquery(
        this=select, alias=exp.TableAlias(this=exp.to_identifier(GROUPED)))))
    return outer
