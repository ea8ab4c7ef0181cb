"""What every engine's spelling of a catalogue function is made of: the `TAG` a
catalogue node carries, `function_rewrite` applying an engine's table, `refuse`
(E091), and the small trees spellings share. Below the families of spellings
(`functions.py`, `formats.py`, `json_text.py`, `try_cast.py`).
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from dialects.base import CannotExpress, Rewrite, cast

TAG = "strata_fn"  # node meta key: the catalogue function the node spells
Spelling = Callable[[exp.Expression], exp.Expression]


def function_rewrite(table: dict[str, Spelling]) -> Rewrite:
    """The rewrite spelling each tagged node by `table` (untagged nodes, and functions
    the table does not list, stay as they are)."""
    def rewrite(node: exp.Expression) -> exp.Expression:
        spell = table.get(node.meta_get(TAG))
        return spell(node) if spell is not None else node
    return rewrite


def refuse(engine: str, why: str) -> Spelling:
    """The spelling of a function `engine` cannot express: E091 naming both."""
    def spell(node: exp.Expression) -> exp.Expression:
        raise CannotExpress(f"`{node.meta_get(TAG)}` on {engine}: {why}")
    return spell


def windowed_refusals(engine: str, why: dict[str, str], framed: bool = False) -> Rewrite:
    """E091 for a catalogue aggregate `engine` has no windowed form of (name -> the
    reason, from the engine's documentation); with `framed`, only over a window with
    an order or a frame (the whole partition runs). Runs before the function's own
    spelling, while the tagged call still sits under its OVER."""
    def rewrite(node: exp.Expression) -> exp.Expression:
        name, window = node.meta_get(TAG), node.parent
        if name in why and isinstance(window, exp.Window) and (
                not framed or window.args.get("order") or window.args.get("spec")):
            raise CannotExpress(f"`{name}` over a window on {engine}: {why[name]}")
        return node
    return rewrite


def double_literal(value: str) -> exp.Expression:
    return cast(exp.Literal.string(value), "DOUBLE")


def case(*arms: tuple[exp.Expression, exp.Expression],
         default: exp.Expression | None = None) -> exp.Case:
    return exp.Case(ifs=[exp.If(this=c, true=v) for c, v in arms], default=default)


def paren(x: exp.Expression) -> exp.Expression:
    if isinstance(x, (exp.Column, exp.Literal, exp.Func, exp.Paren, exp.Cast)):
        return x
    return exp.Paren(this=x)


def is_null(x: exp.Expression) -> exp.Expression:
    return exp.Is(this=paren(x.copy()), expression=exp.Null())
