"""Uniqueness, fast: every unique key over integer columns of one relation tested in
one scan, each row mapped to a slot of a bitmap (`bitstring_agg`): the key is unique
iff as many slots are set as there are rows. Other keys group by the key.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce

from sqlglot import exp

from strata.engine.pins.results import CheckLog
from strata.engine.pins.trees import count_star, grouped_having_many, int_literal, select_from

BITMAP_BITS = 1 << 28  # at most 32 MB of bitmap per uniqueness scan
_HUGEINT = exp.DataType.build("HUGEINT", dialect="duckdb")


@dataclass(frozen=True)
class Key:
    """A key to test for duplicates: expressions over one relation."""

    exprs: tuple[exp.Expression, ...]
    integer: bool  # every expression is of an integer type (bitmap-able)
    null_is_value: bool  # pins: NULL is a value; joins: NULL rows are left out


def bitmap_slot(key: Key, bounds: list[tuple], rows: int
                ) -> tuple[exp.Expression, int] | None:
    """An integer slot per row, equal for two rows iff their keys are equal, and the
    bitmap size; None when the key's range is too wide for a bitmap."""
    parts: list[tuple[exp.Expression | None, int]] = []
    size = 1
    for expr, (low, high) in zip(key.exprs, bounds):
        if low is None:  # only NULLs: every row in slot 0 of this part
            parts.append((None, 1))
            continue
        span = int(high) - int(low) + (2 if key.null_is_value else 1)
        size *= span
        if size > min(BITMAP_BITS, max(1 << 20, 64 * rows)):
            return None
        offset = exp.Sub(this=exp.Cast(this=expr, to=_HUGEINT.copy()),
                         expression=exp.Paren(this=int_literal(int(low))))
        if key.null_is_value:  # NULL takes slot 0, the values 1 and up
            offset = exp.Coalesce(this=exp.Add(this=offset, expression=int_literal(1)),
                                  expressions=[int_literal(0)])
        parts.append((exp.Paren(this=offset) if not key.null_is_value else offset, span))
    slot, stride = [], 1
    for part, span in parts:
        if part is not None:
            slot.append(part if stride == 1 else exp.Mul(this=part, expression=int_literal(stride)))
        stride *= span
    total = reduce(lambda a, b: exp.Add(this=a, expression=b), slot) if slot else int_literal(0)
    return total, size


def bitmap_distinct(slot: exp.Expression, size: int) -> exp.Expression:
    """How many distinct values an integer `slot` in [0, size) takes, in one pass over a
    bitmap of `size` bits (0 on no rows): DuckDB's bitstring_agg and bit_count."""
    bitmap = exp.Anonymous(this="bitstring_agg", expressions=[slot, int_literal(0), int_literal(size - 1)])
    return exp.Coalesce(this=exp.Anonymous(this="bit_count", expressions=[bitmap]),
                        expressions=[int_literal(0)])


def key_bounds(wh, relation: exp.Expression, keys: list[Key], where: exp.Expression | None,
               log: CheckLog) -> list:
    """min/max of every integer key expression (answered from table statistics on a
    fresh snapshot table)."""
    exprs = [e for k in keys for e in k.exprs]
    if not exprs:
        return []
    items = [agg(this=e) for e in exprs for agg in (exp.Min, exp.Max)]
    row = log.rows(wh, select_from(items, relation, where))[0]
    flat = [(row[2 * i], row[2 * i + 1]) for i in range(len(exprs))]
    out, i = [], 0
    for k in keys:
        out.append(flat[i:i + len(k.exprs)])
        i += len(k.exprs)
    return out


def has_duplicates(wh, relation: exp.Expression, key: Key, where: exp.Expression | None,
                   log: CheckLog) -> bool:
    """One aggregate grouping by the key itself: any group of two is a duplicate.
    (Grouping by `hash(key)` instead was measured slower on text keys: the engine
    hashes the key to group it anyway.)"""
    groups = grouped_having_many(select_from([int_literal(1)], relation, where), list(key.exprs))
    (n,) = log.rows(wh, select_from([count_star()], groups.subquery("__g", copy=False)))[0]
    return bool(n)
