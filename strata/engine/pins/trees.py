"""The SQLGlot trees every pin and join check is built from: a column is only ever
a quoted identifier, a relation a tree (or the text a caller rendered, parsed once).
"""

from __future__ import annotations

from functools import lru_cache

import sqlglot
from sqlglot import exp

from strata.engine.adapters.base import Adapter
from strata.engine.pins.results import SAMPLE, CheckLog


# ---------------------------------------------------------------- SQL helpers
# Every statement is built as a tree from the nodes below; a column name is only ever
# a quoted identifier. A relation arrives as a tree (a table, or a subquery), or as
# the text a caller rendered it to, parsed once (a run checks each snapshot once,
# and the join checks read the same dimensions again and again).
# A check's statements share its relation, key and condition nodes instead of copying
# them (copies were a third of the checks' Python time on small tables): rendering
# reads a node's arguments, never its parent, and CheckLog.render copies the whole
# statement first for an engine whose rewrites edit trees in place.
def quoted_column(name: str, table: str | None = None) -> exp.Column:
    """A quoted column, optionally qualified by one of the checks' own aliases."""
    return exp.Column(this=exp.to_identifier(name, quoted=True),
                      table=exp.to_identifier(table) if table else None)


def quoted_columns(names) -> list[exp.Column]:
    return [quoted_column(n) for n in names]


def count_star() -> exp.Count:
    return exp.Count(this=exp.Star())


def int_literal(value: int) -> exp.Literal:
    return exp.Literal.number(value)


def _more_than_one() -> exp.GT:
    return exp.GT(this=count_star(), expression=int_literal(1))


def is_null(node: exp.Expression) -> exp.Is:
    return exp.Is(this=node, expression=exp.Null())


def any_null(names) -> exp.Expression:
    return exp.or_(*[is_null(quoted_column(c)) for c in names], copy=False)


_FROM = "from_" if "from_" in exp.Select.arg_types else "from"  # its name by SQLGlot version
WITH_ARG = "with_" if "with_" in exp.Select.arg_types else "with"


@lru_cache(maxsize=4096)
def _parsed_relation(text: str) -> exp.Expression:
    return sqlglot.parse_one("SELECT * FROM " + text, read="duckdb").find(exp.From).this


def relation_tree(relation: str | exp.Expression, alias: str | None = None) -> exp.Expression:
    """`relation` (a tree, or a FROM item's DuckDB text) as a tree; with an alias, a
    private copy carrying it."""
    node = _parsed_relation(relation) if isinstance(relation, str) else relation
    if alias is not None:
        node = node.copy()
        node.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
    return node


def named_table(name: str, alias: str | None = None) -> exp.Table:
    """One of the checks' own CTEs (`__left`, `__d`), optionally aliased."""
    node = exp.Table(this=exp.to_identifier(name))
    if alias is not None:
        node.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
    return node


def select_from(items, relation: exp.Expression, where: exp.Expression | None = None
            ) -> exp.Select:
    """SELECT items FROM relation [WHERE where] (relation and condition shared)."""
    query = exp.Select(expressions=list(items))
    query.set(_FROM, exp.From(this=relation))
    if where is not None:
        query.set("where", exp.Where(this=where))
    return query


def limited(query: exp.Select, order: list[exp.Expression] | None = None) -> exp.Select:
    """The query's first SAMPLE rows (in `order`)."""
    if order:
        query.set("order", exp.Order(expressions=order))
    query.set("limit", exp.Limit(expression=int_literal(SAMPLE)))
    return query


def descending(node: exp.Expression) -> exp.Ordered:
    return exp.Ordered(this=node, desc=True)


def grouped_having_many(query: exp.Select, keys: list[exp.Expression]) -> exp.Select:
    query.set("group", exp.Group(expressions=keys))
    query.set("having", exp.Having(this=_more_than_one()))
    return query


def fresh_name(wanted: str, taken) -> str:
    """An alias no column of the relation uses (`rows`, else `rows_2`, ...)."""
    taken = set(taken)
    name, n = wanted, 1
    while name in taken:
        n += 1
        name = f"{wanted}_{n}"
    return name


def relation_columns(wh, relation: exp.Expression, log: CheckLog) -> list[tuple[str, str]]:
    """(column, engine type) of a relation, without reading its rows."""
    everything = select_from([exp.Star()], relation)
    if isinstance(wh, Adapter):
        return wh.query_columns(everything)
    return [(r[0], r[1]) for r in wh.execute(log.render(exp.Describe(this=everything)))
            .fetchall()]
