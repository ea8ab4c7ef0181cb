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

from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp

from strata.diagnostics import Diagnostic, Span, did_you_mean
from strata.plan import Col, ColRef
from strata.semantics import types as T
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
    from strata.semantics.expressions import precedence

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


class Definitions:
    """The module's functions, each typed the first time something calls it (or at
    the end, for those no one calls), so one function may call another declared
    after it; a chain of calls back to a function being typed is recursion (E175)."""

    def __init__(self, decls: dict[str, ast.FunctionDecl], new_id: Callable[[], int],
                 diagnostics: list[Diagnostic]):
        self.decls = decls
        self.new_id = new_id
        self.diags = diagnostics
        self.done: dict[str, UserFunction | Broken] = {}
        self.typing: list[str] = []  # functions whose bodies are being typed, outermost first

    def __contains__(self, name: str) -> bool:
        return name in self.decls

    def __iter__(self):
        return iter(self.decls)

    def all(self) -> dict[str, UserFunction]:
        for name in self.decls:
            self.get(name)
        return {n: f for n, f in self.done.items() if isinstance(f, UserFunction)}

    def get(self, name: str) -> UserFunction | Broken | None:
        if name in self.done:
            return self.done[name]
        decl = self.decls.get(name)
        if decl is None:
            return None
        if name in self.typing:
            return BROKEN  # the call that closes the loop said so (recursion())
        self.typing.append(name)
        try:
            self.done[name] = self._define(decl)
        finally:
            self.typing.pop()
        return self.done[name]

    def recursion(self, name: str, span: Span) -> Diagnostic | None:
        """E175 when calling `name` here closes a loop of calls, else None."""
        if name not in self.typing:
            return None
        loop = [*self.typing[self.typing.index(name):], name]
        if len(loop) == 2:
            message = f"function `{name}` calls itself"
        else:
            message = "functions call each other: " + " -> ".join(loop)
        return Diagnostic("E175", message, span,
                          "a function is inlined where it is called, so it cannot recurse: "
                          "write the repeated step out, or compute it over rows with a "
                          "`window` or `aggregate`")

    def _define(self, decl: ast.FunctionDecl) -> UserFunction | Broken:
        from strata.semantics.expressions import (
            ERROR,
            ExprContext,
            ExpressionTyper,
            resolve_type,
            typed,
        )

        before = len(self.diags)
        params: dict[str, Col] = {}
        for param in decl.params:
            typ = resolve_type(param.type, self.diags)
            if param.name in params:
                self.diags.append(Diagnostic(
                    "E177", f"parameter `{param.name}` of `{decl.name}` is declared twice",
                    param.span, "give each parameter its own name"))
                continue
            params[param.name] = Col(self.new_id(), param.name, typ or ERROR)
        returns = resolve_type(decl.returns, self.diags)

        def lookup(ref: ast.Column) -> Col | Diagnostic:
            if ref.qualifier is None and ref.name in params:
                return params[ref.name]
            shown = f"{ref.qualifier}.{ref.name}" if ref.qualifier else ref.name
            return Diagnostic("E011", f"unknown column `{shown}` in function `{decl.name}`",
                              ref.span, did_you_mean(ref.name, params) or
                              "a function reads its parameters only: pass the column as an "
                              "argument")

        clock: set[str] = set()
        ctx = ExprContext(lookup, f"fn {decl.name}", diagnostics=self.diags, clock=clock,
                          functions=self)
        body = ExpressionTyper(ctx).type(decl.body)
        if len(self.diags) > before or returns is None or body.type == ERROR:
            return BROKEN
        if not T.converts(body.type, returns, narrowing=True):
            self.diags.append(Diagnostic(
                "E176", f"the body of `{decl.name}` is {body.type}, but it returns {returns}",
                decl.body.span, f"cast it: `= cast(... as {returns})`, or declare "
                f"`-> {body.type}`"))
            return BROKEN
        node = converted(typed(body), body.type, returns)
        return UserFunction(decl.name, tuple(params.values()), returns, node,
                            frozenset(clock), decl)
