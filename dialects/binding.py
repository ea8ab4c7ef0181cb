"""Naming a value once, so an emulation never copies its operands' text.

An emulation of DuckDB's meaning often reads an operand several times (a zero test,
a sign, then the division itself). Copied as text, an operand that is itself
emulated is copied again, and the SQL grows exponentially with nesting: four nested
`round(a / b, 2)` were 55 kB on PostgreSQL. Here an operand read more than once is
computed once and named, in the way the engine allows:

- `bind_by_subquery`: (SELECT body(__v) FROM (SELECT x AS __v) AS __r), a scalar
  subquery whose x reads the outer row (PostgreSQL);
- `bind_by_lambda`: ELEMENT_AT(TRANSFORM(ARRAY(x), __v -> body(__v)), 1) (Spark).

`evaluate_once` applies either to a rewrite's result: every operand of the
rewritten node that the result repeats is bound, so the text of x appears once per
place the user wrote it, whatever rewrites did to it.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

Body = Callable[[exp.Expression], exp.Expression]
Bind = Callable[[exp.Expression, Body], exp.Expression]

# Strata's own names start with two underscores; a user's cannot
VALUE, ROW = "__v", "__r"
PLACEHOLDER = "__strata_bound__"
CHEAP = (exp.Column, exp.Literal, exp.Null, exp.Boolean, exp.DataType, exp.Identifier,
         exp.Var, exp.Star, exp.Placeholder)


def _simple(x: exp.Expression) -> bool:
    """Cheap to repeat: a column or a constant (in a cast, a sign, parentheses)."""
    while isinstance(x, (exp.Cast, exp.Paren, exp.Neg)):
        x = x.this
    return isinstance(x, CHEAP)


def _cheap(x: exp.Expression) -> bool:
    """As cheap to read twice as to name: simple, or an aggregate of simple operands
    (SUM(price), COUNT(*)): engines compute identical aggregate calls once."""
    x = x.unnest()
    return _simple(x) or (isinstance(x, exp.AggFunc)
                          and all(_simple(c) for c in x.iter_expressions()))


def _belongs_to_its_query(x: exp.Expression) -> bool:
    """Does x hold an aggregate or a window function? Moved into a scalar subquery,
    PostgreSQL evaluates such a call in the subquery, over its one row, whenever it
    reads no outer column (COUNT(*): 1; ROW_NUMBER() OVER (): 1), so it must stay
    in the query it was written in."""
    return any(isinstance(node, (exp.AggFunc, exp.Window)) for node in x.walk())


def _fresh(base: str, *trees: exp.Expression) -> str:
    """`base`, or base1, base2, ...: the first that no identifier in `trees` uses, so
    a value bound around another bound value never hides it."""
    taken = {i.name for tree in trees for i in tree.find_all(exp.Identifier)}
    n = 0
    while (name := base + (str(n) if n else "")) in taken:
        n += 1
    return name


def _named(body: Body, x: exp.Expression) -> tuple[exp.Expression, str, str]:
    """body applied to a placeholder, then the placeholder renamed to a fresh name."""
    built = body(exp.column(PLACEHOLDER))
    value, row = _fresh(VALUE, built, x), _fresh(ROW, built, x)

    def rename(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column) and node.name == PLACEHOLDER:
            return exp.column(value)
        return node

    return built.transform(rename, copy=False), value, row


def bind_by_subquery(x: exp.Expression, body: Body) -> exp.Expression:
    """`body` of x with x computed once: (SELECT body(__v) FROM (SELECT x AS __v) AS
    __r), a scalar subquery whose x may read the outer row's columns. An x holding an
    aggregate or window function is repeated instead (`_belongs_to_its_query`): the
    same value each time, computed once anyway (PostgreSQL shares identical
    aggregate calls and identical windows)."""
    if _simple(x) or _belongs_to_its_query(x):
        return body(x)
    built, value, row = _named(body, x)
    inner = exp.select(exp.alias_(x, value)).subquery(row)
    return exp.Subquery(this=exp.select(built).from_(inner))


def bind_by_lambda(x: exp.Expression, body: Body) -> exp.Expression:
    """`body` of x with x computed once: ELEMENT_AT(TRANSFORM(ARRAY(x), __v -> ..), 1)."""
    if _simple(x):
        return body(x)
    built, value, _ = _named(body, x)
    lam = exp.Lambda(this=built, expressions=[exp.to_identifier(value)])
    return exp.Anonymous(this="ELEMENT_AT", expressions=[
        exp.Anonymous(this="TRANSFORM", expressions=[exp.Array(expressions=[x]), lam]),
        exp.Literal.number(1)])


# ---------------------------------------------------------------- after a rewrite

def evaluate_once(node: exp.Expression, rewritten: exp.Expression,
                  bind: Bind) -> exp.Expression:
    """`rewritten` (a rewrite's spelling of `node`) with every operand of `node` that
    it reads more than once bound by `bind`. An operand read inside an aggregate or a
    window of the rewritten text stays as it is: bound outside, the aggregate would
    run over the binding's one row."""
    for operand in _operands(node):
        places = _places(rewritten, operand)
        if len(places) < 2 or any(_inside_a_call(p, rewritten) for p in places):
            continue
        for place in places:
            marker = exp.column(PLACEHOLDER)
            if place is rewritten:
                rewritten = marker
            else:
                place.replace(marker)
        template = rewritten
        rewritten = bind(operand, lambda v, t=template: _filled(t, v))
    return rewritten


def _operands(node: exp.Expression) -> list[exp.Expression]:
    """The node's direct operands worth naming (out of their parentheses, which a
    rewrite may drop), each once: equal operands are one."""
    found: list[exp.Expression] = []
    for child in node.iter_expressions():
        child = child.unnest()
        if not _cheap(child) and all(child != seen for seen in found):
            found.append(child)
    return found


def _places(tree: exp.Expression, operand: exp.Expression) -> list[exp.Expression]:
    """The subtrees of `tree` equal to `operand`, outermost only."""
    kind, places = type(operand), []
    for sub in tree.dfs(prune=lambda n: any(n is p for p in places)):
        if type(sub) is kind and sub == operand:
            places.append(sub)
    return places


def _inside_a_call(place: exp.Expression, root: exp.Expression) -> bool:
    node = place.parent if place is not root else None
    while node is not None:
        if isinstance(node, (exp.AggFunc, exp.Window)):
            return True
        if node is root:
            return False
        node = node.parent
    return False


def _filled(template: exp.Expression, value: exp.Expression) -> exp.Expression:
    def fill(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column) and node.name == PLACEHOLDER:
            return value.copy()
        return node

    return template.copy().transform(fill, copy=False)
