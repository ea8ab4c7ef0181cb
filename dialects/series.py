"""Rows from nothing: how each engine spells a series of ints, for `range(a, b, step)`.

Strata's `range` (strata/semantics/ranges.py) is always a series of ints in the
half-open [start, stop) by a literal step, as DuckDB's `RANGE(start, stop, step)` gives
it (a date or timestamp range adds these ints to its first bound). The canonical tree
is DuckDB's table function, `RANGE(start, stop, step) AS alias(column)`, tagged with
SERIES; each engine below spells the same rows its way, readable as `alias.column`:

- PostgreSQL: GENERATE_SERIES, whose end is inclusive: stop - 1 (stop + 1 going down),
  the bounds BIGINT (GENERATE_SERIES of two integers is an integer series).
- Spark: its RANGE table function, half-open like DuckDB's and empty when the step
  goes away from the stop (SEQUENCE raises there instead).
- Snowflake: ARRAY_GENERATE_RANGE (half-open), flattened.
- BigQuery: GENERATE_ARRAY (inclusive, empty away from the stop), unnested.
- Trino: SEQUENCE (inclusive; it raises away from the stop: an empty array there),
  unnested. A SEQUENCE holds at most 10,000 items: a longer range fails on Trino.
"""

from __future__ import annotations

from sqlglot import exp

from dialects.base import Rewrite, cast, num

SERIES = "strata_series"  # node meta key: a Table that is an int series


def series(start: exp.Expression, stop: exp.Expression, step: int) -> exp.Table:
    """The canonical int series [start, stop) by `step` (not 0), aliased by the caller."""
    node = exp.Table(this=exp.Anonymous(this="RANGE", expressions=[start, stop, num(step)]))
    node.meta[SERIES] = True
    return node


def is_series(node: exp.Expression) -> bool:
    return isinstance(node, exp.Table) and bool(node.meta_get(SERIES))


def _parts(node: exp.Table) -> tuple[exp.Expression, exp.Expression, int]:
    """(start, stop, step) of a series node."""
    start, stop, step = (e.copy() for e in node.this.expressions)
    return start, stop, int(step.to_py())


def _names(node: exp.Table) -> tuple[exp.Identifier, exp.Identifier]:
    """The alias and the column name a series node is read by, as written (quoted where
    Strata quoted them)."""
    alias = node.args["alias"]
    return alias.this.copy(), alias.columns[0].copy()


def _alias(node: exp.Table) -> exp.TableAlias:
    return node.args["alias"].copy()


def _last(stop: exp.Expression, step: int) -> exp.Expression:
    """The inclusive end of [start, stop): stop - 1 going up, stop + 1 going down."""
    cls = exp.Sub if step > 0 else exp.Add
    return cls(this=_term(stop), expression=num(1))


def _term(x: exp.Expression) -> exp.Expression:
    if isinstance(x, (exp.Column, exp.Literal, exp.Func, exp.Paren, exp.Cast)):
        return x
    return exp.Paren(this=x)


def _column_of(value: exp.Select, alias: exp.Identifier) -> exp.Subquery:
    """`(SELECT ... AS column FROM ...) AS alias`: for an engine whose unnested items
    cannot be read as `alias.column`."""
    return exp.Subquery(this=value, alias=exp.TableAlias(this=alias))


def spelled(spell) -> Rewrite:
    """The rewrite spelling every series node by `spell`."""
    def rewrite(node: exp.Expression) -> exp.Expression:
        return spell(node) if is_series(node) else node
    return rewrite


def generate_series(node: exp.Table) -> exp.Expression:
    """PostgreSQL: GENERATE_SERIES(start, last, step) of BIGINTs."""
    start, stop, step = _parts(node)
    call = exp.Anonymous(this="GENERATE_SERIES", expressions=[
        cast(start, "BIGINT"), cast(_last(stop, step), "BIGINT"), num(step)])
    return exp.Table(this=call, alias=_alias(node))


def range_function(node: exp.Table) -> exp.Expression:
    """Spark: the RANGE table function, half-open and of BIGINTs."""
    start, stop, step = _parts(node)
    call = exp.Anonymous(this="RANGE", expressions=[cast(start, "BIGINT"), cast(stop, "BIGINT"),
                                                    num(step)])
    return exp.Table(this=call, alias=_alias(node))


def flatten_range(node: exp.Table) -> exp.Expression:
    """Snowflake: (SELECT CAST(value AS BIGINT) AS column FROM
    TABLE(FLATTEN(INPUT => ARRAY_GENERATE_RANGE(start, stop, step)))) AS alias."""
    start, stop, step = _parts(node)
    alias, column = _names(node)
    generated = exp.Anonymous(this="ARRAY_GENERATE_RANGE", expressions=[start, stop, num(step)])
    flat = exp.Table(this=exp.Anonymous(this="TABLE", expressions=[exp.Anonymous(
        this="FLATTEN", expressions=[exp.Kwarg(this=exp.var("INPUT"), expression=generated)])]))
    value = exp.select(exp.alias_(cast(exp.column("value"), "BIGINT"), column)).from_(flat)
    return _column_of(value, alias)


def generate_array(node: exp.Table) -> exp.Expression:
    """BigQuery: (SELECT column FROM UNNEST(GENERATE_ARRAY(start, last, step)) AS
    column) AS alias."""
    start, stop, step = _parts(node)
    alias, column = _names(node)
    generated = exp.Anonymous(this="GENERATE_ARRAY", expressions=[
        cast(start, "BIGINT"), cast(_last(stop, step), "BIGINT"), num(step)])
    unnest = exp.Unnest(expressions=[generated], alias=exp.TableAlias(columns=[column]))
    value = exp.select(exp.Column(this=column.copy())).from_(unnest)
    return _column_of(value, alias)


def sequence_or_empty(node: exp.Table) -> exp.Expression:
    """Trino: UNNEST(IF(start <= last, SEQUENCE(start, last, step), ARRAY[])) AS
    alias(column) (>= going down)."""
    start, stop, step = _parts(node)
    last = _last(stop, step)
    start, last = cast(start, "BIGINT"), cast(last, "BIGINT")
    ahead = (exp.LTE if step > 0 else exp.GTE)(this=start.copy(), expression=last.copy())
    listed = exp.If(this=ahead, true=exp.Anonymous(this="SEQUENCE", expressions=[
        start, last, num(step)]), false=exp.Array(expressions=[]))
    return exp.Unnest(expressions=[listed], alias=_alias(node))
