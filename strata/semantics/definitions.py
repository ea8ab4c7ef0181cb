"""A module's `fn`s typed at their definition, each once, on first use: a body is
typed like any expression (`expressions.py`), with its parameters as the columns in
scope, so this sits above expression typing, which inlines what it defines
(`userfunctions.py`).
"""

from __future__ import annotations

from collections.abc import Callable

from strata.diagnostics import Diagnostic, Span, did_you_mean
from strata.plan import Col
from strata.semantics import types as T
from strata.semantics.expressions import ERROR, ExprContext, ExpressionTyper, resolve_type, typed
from strata.semantics.userfunctions import BROKEN, Broken, UserFunction, converted
from strata.syntax import ast


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
