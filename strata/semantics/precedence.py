"""How tightly each SQL operator binds, so a tree built by Strata renders with the
parentheses its meaning needs (SQLGlot renders a tree as built). Read by expression
typing, by `fn` inlining and by sqlgen when it puts one tree inside another.
"""

from __future__ import annotations

from sqlglot import exp

_PRECEDENCE = [
    ((exp.Or,), 1), ((exp.And,), 2), ((exp.Not,), 3),
    ((exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE, exp.Is, exp.In, exp.Between, exp.Like,
      exp.NullSafeEQ, exp.NullSafeNEQ), 4),
    ((exp.DPipe,), 5), ((exp.Add, exp.Sub), 6), ((exp.Mul, exp.Div, exp.Mod), 7), ((exp.Neg,), 8),
]


def precedence(node: exp.Expression) -> int:
    for classes, level in _PRECEDENCE:
        if isinstance(node, classes):
            return level
    return 9


def wrap(node: exp.Expression, parent_level: int, right: bool = False) -> exp.Expression:
    """Parenthesize `node` when it binds looser than its parent operator."""
    level = precedence(node)
    if level < parent_level or (right and level == parent_level and level < 9):
        return exp.Paren(this=node)
    return node
