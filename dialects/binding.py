"""Naming a value once, so an emulation never copies its operands' text.

An emulation of DuckDB's meaning often reads an operand several times (a zero test,
a sign, then the division itself). Copied as text, an operand that is itself
emulated is copied again, and the SQL grows exponentially with nesting: four nested
`round(a / b, 2)` were 55 kB on PostgreSQL. Here an operand read more than once is
computed once and named, in the way the engine allows:

- `bind_by_subquery`: (SELECT body(__v) FROM (SELECT x AS __v) AS __r), a scalar
  subquery whose x reads the outer row (PostgreSQL);
- `bind_by_lambda`: ELEMENT_AT(TRANSFORM(ARRAY(x), __v -> body(__v)), 1) (Spark).

`rewrite_once` runs a node's rewrites with its operands set aside and binds each
operand the spelling reads more than once, so the text of x appears once per place
the author wrote it, whatever the rewrites did, and the work stays linear in the
tree however deep the nesting.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from dialects.routines import AGGREGATE_STAND_IN, RoutineStyle, type_of

Body = Callable[[exp.Expression], exp.Expression]
Bind = Callable[..., exp.Expression]  # (x, body[, name]) -> body of x, x computed once;
# a Bind calls its body exactly once

# Strata's own names start with two underscores; a user's cannot
VALUE, ROW = "__v", "__r"
PLACEHOLDER = "__strata_bound__"
HOLDS_AGGREGATE = "strata_holds_aggregate"  # node meta: a bound value, and whether it does
# grouped.py's trial: a column standing for an aggregate, and a binding made around one
# (in the real tree the aggregate could not be bound: the spelling would copy it)
BOUND_AN_AGGREGATE = "strata_bound_an_aggregate"
CHEAP = (exp.Column, exp.Literal, exp.Null, exp.Boolean, exp.DataType, exp.Identifier,
         exp.Var, exp.Star, exp.Placeholder)


def _simple(x: exp.Expression) -> bool:
    """Cheap to repeat: a column or a constant (in a cast, a sign, parentheses)."""
    while isinstance(x, (exp.Cast, exp.Paren, exp.Neg)):
        x = x.this
    return isinstance(x, CHEAP)


def cheap(x: exp.Expression) -> bool:
    """As cheap to read twice as to name: simple, or an aggregate of simple operands
    (SUM(price), COUNT(*)): engines compute identical aggregate calls once."""
    x = x.unnest()
    return _simple(x) or (isinstance(x, exp.AggFunc)
                          and all(_simple(c) for c in x.iter_expressions()))


def _belongs_to_its_query(x: exp.Expression) -> bool:
    """Does x hold an aggregate or a window function? Moved into a scalar subquery,
    PostgreSQL evaluates such a call in the subquery, over its one row, whenever it
    reads no outer column (COUNT(*): 1; ROW_NUMBER() OVER (): 1), so it must stay
    in the query it was written in. A value bound before says what it holds
    (HOLDS_AGGREGATE): the walk stops there, so a nesting is walked once, not once
    per level."""
    for node in x.walk(prune=lambda n: n is not x and HOLDS_AGGREGATE in n.meta):
        known = node.meta.get(HOLDS_AGGREGATE) if node is not x else None
        if known is not None:
            if known:
                return True
        elif isinstance(node, (exp.AggFunc, exp.Window)):
            return True
    return False


def _stands_for_an_aggregate(x: exp.Expression) -> bool:
    """Does x hold one of grouped.py's trial stand-ins for an aggregate (outside values
    bound before, which said so themselves)?"""
    return any(node.meta_get(AGGREGATE_STAND_IN) for node in
               x.walk(prune=lambda n: n is not x and HOLDS_AGGREGATE in n.meta))


def _fresh(base: str, *trees: exp.Expression) -> str:
    """`base`, or base1, base2, ...: the first that no identifier in `trees` uses, so
    a value bound around another bound value never hides it."""
    taken = {i.name for tree in trees for i in tree.find_all(exp.Identifier)}
    n = 0
    while (name := base + (str(n) if n else "")) in taken:
        n += 1
    return name


def _named(body: Body, name: str | None) -> tuple[exp.Expression, str, str]:
    """body applied to the column `name`; without a name, to a placeholder renamed
    to the first of __v, __v1, .. that the body does not use (a walk of the whole
    body, which a given name spares: the body may hold a deeply nested operand)."""
    if name is not None:
        return body(exp.column(name)), name, _row_of(name)
    built = body(exp.column(PLACEHOLDER))
    value = _fresh(VALUE, built)

    def rename(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column) and node.name == PLACEHOLDER:
            return exp.column(value)
        return node

    return built.transform(rename, copy=False), value, _row_of(value)


def _row_of(value: str) -> str:
    """The derived table's alias that goes with a value's name: __v -> __r, __o1 -> __r1."""
    return ROW if value == VALUE else "__r" + value[2:]


def bind_by_subquery(x: exp.Expression, body: Body, name: str | None = None,
                     fence: bool = False) -> exp.Expression:
    """`body` of x with x computed once: (SELECT body(__v) FROM (SELECT x AS __v) AS
    __r), a scalar subquery whose x may read the outer row's columns. An x holding an
    aggregate or window function is repeated instead (`_belongs_to_its_query`): the
    same value each time, computed once anyway (PostgreSQL shares identical
    aggregate calls and identical windows)."""
    if _simple(x) or _belongs_to_its_query(x):
        return body(x)
    built, value, row = _named(body, name)
    # built node by node: SQLGlot's builders copy their arguments, and x is the
    # whole nested operand (a copy per level made the work quadratic in the depth)
    named = exp.Select(expressions=[exp.Alias(this=x, alias=exp.to_identifier(value))])
    if fence:
        named.set("offset", exp.Offset(expression=exp.Literal.number(0)))
    inner = exp.Subquery(this=named, alias=exp.TableAlias(this=exp.to_identifier(row)))
    bound = exp.Subquery(this=exp.Select(expressions=[built], from_=exp.From(this=inner)))
    bound.meta[HOLDS_AGGREGATE] = _belongs_to_its_query(built)  # x holds none
    if _stands_for_an_aggregate(x):
        bound.meta[BOUND_AN_AGGREGATE] = True
    return bound


def bind_by_fenced_subquery(x: exp.Expression, body: Body,
                            name: str | None = None) -> exp.Expression:
    """`bind_by_subquery` with OFFSET 0 on the derived table, which PostgreSQL does not
    pull up into the query around it. Pulled up, each read of __v is x again in the
    planner: the text was linear but the plan was not (round nested 8 over 20,000 rows
    ran out of 3 GB, and of 21 GB unlimited; 12 divisions ran past a minute); fenced,
    0.22 s and 0.09 s (bench/README.md, SQL size)."""
    return bind_by_subquery(x, body, name, fence=True)


def bind_by_lambda(x: exp.Expression, body: Body, name: str | None = None) -> exp.Expression:
    """`body` of x with x computed once: ELEMENT_AT(TRANSFORM(ARRAY(x), __v -> ..), 1)."""
    if _simple(x):
        return body(x)
    built, value, _ = _named(body, name)
    lam = exp.Lambda(this=built, expressions=[exp.to_identifier(value)])
    return exp.Anonymous(this="ELEMENT_AT", expressions=[
        exp.Anonymous(this="TRANSFORM", expressions=[exp.Array(expressions=[x]), lam]),
        exp.Literal.number(1)])


# ---------------------------------------------------------------- around a rewrite

STAND_IN = "__strata_operand_"
# nodes computing a value from operands: a rewrite of one reads its operands' types,
# never their insides, so a stand-in may take an operand's place while it runs
VALUE_NODES = (exp.Func, exp.Binary, exp.Unary, exp.Between, exp.In)
NOT_VALUE_NODES = (exp.UDTF, exp.Unnest, exp.Window, exp.Lambda, exp.Paren)
# a node's parts, not its operands: a CASE's arms (json_text's spelling reads its first
# arm), an ORDER BY, a filter
PARTS = (exp.If, exp.Order, exp.Ordered, exp.Where, exp.Filter)
ATOMIC = (exp.Column, exp.Literal, exp.Func, exp.Paren, exp.Subquery)


def rewrite_once(node: exp.Expression, rewrites, bind: Bind,
                 routines: RoutineStyle | None = None) -> exp.Expression:
    """The first of `rewrites` that changes `node`, each operand computed once.

    Each operand worth naming stands aside while the rewrites run (a typed
    stand-in column takes its place), so a spelling that reads it three times
    copies a name, not the operand: the work is linear in the tree, however deep
    the nesting. Then each operand goes back: in its one place, or bound by
    `bind` where the spelling reads it more than once (copied where it is read
    inside an aggregate or a window of the spelling: bound outside, the aggregate
    would run over the binding's one row). With `routines`, a spelling that reads an
    operand more than once, or is long, becomes a call of a function Strata owns
    (dialects/routines.py), every operand that reads a column standing aside."""
    operands = _stand_aside(node, every=routines is not None)
    for rewrite in rewrites:
        new = rewrite(node)
        if new is not node:
            called = routines.call(node, new, operands) if routines and operands else None
            return called if called is not None else _put_back(new, operands, bind)
    for column in list(node.find_all(exp.Column)):  # unchanged: each back where it was
        if column.name in operands and not column.table:
            column.replace(operands[column.name])
    return node


def _reads_its_operands_insides(node: exp.Expression) -> bool:
    """Spellings that look into an operand: an aggregate's (its order, its filter;
    read there, an operand is copied anyway) and a catalogue function the checker
    wrapped in a cast (date_add is CAST(DateAdd(..) AS DATE): the spelling of the
    cast reads the DateAdd's unit)."""
    return isinstance(node, exp.AggFunc) or (
        isinstance(node, exp.Cast) and node.meta_get("strata_fn") is not None)


def _stand_aside(node: exp.Expression, every: bool = False) -> dict[str, exp.Expression]:
    """Each operand worth naming, by its stand-in's name; `every`: each operand that
    reads a column (a function's argument), cheap or not."""
    if not isinstance(node, VALUE_NODES) or isinstance(node, NOT_VALUE_NODES) or \
            _reads_its_operands_insides(node):
        return {}
    operands = {}
    for child in list(node.iter_expressions()):
        if isinstance(child, PARTS) or (_constant(child) if every else cheap(child)):
            continue
        name = f"{STAND_IN}{len(operands)}"
        stand_in = exp.column(name)
        stand_in.type = type_of(child)  # a bound operand (a subquery) carries its own
        child.replace(stand_in)
        operands[name] = child
    return operands


def _constant(x: exp.Expression) -> bool:
    """Reads no row: a literal, a type, a unit (a rewrite may read its value)."""
    return not any(isinstance(n, (exp.Column, exp.AggFunc, exp.Window, exp.Query))
                   for n in x.walk())


def _put_back(tree: exp.Expression, operands: dict[str, exp.Expression],
              bind: Bind) -> exp.Expression:
    if not operands:
        return tree
    places: dict[str, list[exp.Expression]] = {name: [] for name in operands}
    for column in tree.find_all(exp.Column):
        if column.name in places and not column.table:
            places[column.name].append(column)
    bound = []
    for name, operand in operands.items():
        found = places[name]
        if len(found) == 1 or any(_inside_a_call(p, tree) for p in found):
            for i, place in enumerate(found):
                tree = _replace(tree, place, operand if i == 0 else operand.copy())
        elif found:
            bound.append(name)
    for k, name in enumerate(bound):
        value_name = "__o" + (str(k) if k else "")
        tree = bind(operands[name], _body(tree, name, places[name]), value_name)
    return tree


def _replace(tree: exp.Expression, place: exp.Expression,
             operand: exp.Expression) -> exp.Expression:
    """`operand` where the stand-in `place` is (the new root if it was the root)."""
    operand = _parenthesized(place, operand)
    if place is tree:
        return operand
    place.replace(operand)
    return tree


def _parenthesized(place: exp.Expression, value: exp.Expression) -> exp.Expression:
    """`value` in parentheses where an operator holds `place` and `value` is not
    atomic: an operand kept its own node's precedence, not the spelling's."""
    if _holds_by_precedence(place.parent) and not isinstance(value, ATOMIC):
        return exp.Paren(this=value)
    return value


def _holds_by_precedence(parent: exp.Expression | None) -> bool:
    """An operator, whose operand needs parentheses unless it is atomic."""
    return isinstance(parent, (exp.Binary, exp.Unary, exp.Between, exp.In)) and \
        not isinstance(parent, exp.Paren)


def _body(template: exp.Expression, name: str, places: list[exp.Expression]) -> Body:
    """The template with `value` where the stand-in `name` is: its known places in
    the template itself are filled, no copy and no walk, since the template
    may hold operands bound or put back before, as deep as the user's nesting (a
    copy per level made compiling quadratic in the depth). Every `Bind` calls its
    body once, which is what makes filling the template itself safe."""
    filled = []

    def body(value: exp.Expression) -> exp.Expression:
        if filled:
            raise RuntimeError(f"the body binding `{name}` was filled already")
        filled.append(value)
        root = template
        for place in places:
            root = _replace(root, place, value.copy())
        return root

    return body


def _inside_a_call(place: exp.Expression, root: exp.Expression) -> bool:
    node = place.parent if place is not root else None
    while node is not None:
        if isinstance(node, (exp.AggFunc, exp.Window)):
            return True
        if node is root:
            return False
        node = node.parent
    return False
