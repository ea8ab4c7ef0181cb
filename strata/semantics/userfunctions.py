"""Functions a module defines (`fn name(p: type, ...) -> type = expr`): typed once,
at their definition, and inlined at every call, so a call is the body's own SQL tree
over the arguments and every dialect renders it as it renders any expression.

A body reads its parameters only, calls built-in functions and other `fn`s (never
itself, directly or not: E175), aggregates nothing and computes no window (a call
may stand inside an aggregate, or take one as an argument). Its type must convert to
the declared return type (E176); the value is cast to it where the two differ. An
argument must convert to its parameter's type without narrowing (E031), and is cast
to it where they differ, so the body computes on the types it was checked with.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from strata.plan import Col, ColRef
from strata.semantics import types as T
from strata.semantics.precedence import precedence
from strata.syntax import ast

# names a `fn` may not take: a call to one would mean the built-in (or the keyword)
KEYWORD_CALLS = ("cast", "try_cast", "extract")


@dataclass(frozen=True)
class UserFunction:
    name: str
    params: tuple[Col, ...]  # each parameter as a column the body reads, by id
    returns: T.Type
    body: exp.Expression  # over ColRef(parameter ids), of type `returns`
    clock: frozenset[str]  # run_date()/run_timestamp() the body reads
    decl: ast.FunctionDecl

    @property
    def signature(self) -> str:
        params = ", ".join(f"{p.name}: {p.type}" for p in self.params)
        return f"fn {self.name}({params}) -> {self.returns}"

    @property
    def where(self) -> str:
        span = self.decl.name_span
        return f"{span.file}:{span.line}:{span.column}"


class Broken:
    """A function whose definition has errors (already reported): a call to it is
    typed as an error and says nothing more."""


BROKEN = Broken()


def converted(node: exp.Expression, source: T.Type, target: T.Type) -> exp.Expression:
    """`node` (of type `source`) as a value of `target`: a cast where they differ."""
    if source == target:
        return node
    cast = exp.Cast(this=node, to=target.to_sqlglot())
    cast.type = target.to_sqlglot()
    return cast


def inline(fn: UserFunction, args: list[exp.Expression], types: list[T.Type]) -> exp.Expression:
    """The body with each parameter replaced by its argument (cast to the parameter's
    type where it differs), in parentheses where the operator around it binds
    tighter."""
    values = {}
    for param, arg, typ in zip(fn.params, args, types):
        value = converted(arg, typ, param.type)
        value.type = param.type.to_sqlglot()
        values[param.id] = value
    body = fn.body.copy()
    if isinstance(body, ColRef):
        return values[body.col_id].copy()
    for ref in list(body.find_all(ColRef)):
        value = values[ref.col_id].copy()
        parent = ref.parent
        level = precedence(parent) if parent is not None else 9
        if level < 9 and precedence(value) < 9 and precedence(value) <= level:
            value = exp.Paren(this=value)
        ref.replace(value)
    return body


def argument_problem(fn: UserFunction, index: int, typ: T.Type) -> str | None:
    """Why argument `index` (0-based) of type `typ` does not fit, or None."""
    param = fn.params[index]
    if T.converts(typ, param.type):
        return None
    return (f"`{fn.name}`: argument {index + 1} is {typ}, but parameter `{param.name}` is "
            f"{param.type}")
