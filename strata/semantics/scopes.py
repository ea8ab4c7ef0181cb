"""Names in scope: the columns a model's steps may name (`Scope`), and what every
model of a module shares while it is resolved (`ModuleScope`: diagnostics, column ids,
`fn`s, the columns of relations resolved so far). Below the steps and the checks,
which both read them.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from strata.diagnostics import Diagnostic, Span, did_you_mean
from strata.plan import Col, RelationRef
from strata.semantics import types as T
from strata.semantics.definitions import Definitions
from strata.semantics.module import Module
from strata.syntax import ast


@dataclass
class Entry:
    col: Col
    visible: bool = True  # reachable unqualified
    ambiguous: bool = False
    output: bool = True  # part of the output when there is no select
    # brought by a join since the scope was last replaced (by `group`/`aggregate`,
    # `select`, a set operation): a later join's column of the same name is ambiguous
    # only against these, never against the scope's own columns (a grouped key)
    joined: bool = False


CASE_NOTE = "SQL engines compare column names without case"


def same_name(a: str, b: str) -> bool:
    """One name to the engine: identifiers are case-sensitive in Strata (SPEC §1.2) and
    compared without case by DuckDB and most SQL engines, so names that differ only
    in case may not sit side by side in one relation."""
    return a.lower() == b.lower()


def duplicate(name: str, other: str, twice: str, where: str = "",
              hint: str | None = None) -> tuple[str, str | None]:
    """Message and hint for column `name` defined where `other` already is: the same
    name `twice`, or a name the engine would not tell apart from it (case)."""
    if other == name:
        return f"column `{name}` {twice}{where}", hint
    return (f"column `{name}` clashes with `{other}`{where}",
            f"{hint}: {CASE_NOTE}" if hint else CASE_NOTE)


@dataclass
class Scope:
    entries: list[Entry] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    # visible entries by case-folded name: a lookup per new column was a scan of every
    # earlier one, quadratic in a model of thousands of derived columns
    _by_name: dict[str, list[Entry]] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        for entry in self.entries:
            self._index(entry)

    def _index(self, entry: Entry) -> None:
        if entry.visible:
            self._by_name.setdefault(entry.col.name.lower(), []).append(entry)

    def add(self, col: Col, **kw) -> None:
        entry = Entry(col, **kw)
        self.entries.append(entry)
        self._index(entry)

    def visible(self, name: str) -> list[Entry]:
        return [e for e in self._by_name.get(name.lower(), ()) if e.col.name == name]

    def visible_like(self, name: str) -> str | None:
        """A visible column's name the engine would not tell apart from `name`."""
        same = self._by_name.get(name.lower())
        return same[0].col.name if same else None

    def output_cols(self) -> list[Col]:
        return [e.col for e in self.entries if e.output]

    def lookup(self, ref: ast.Column) -> Col | Diagnostic:
        if ref.qualifier is not None:
            if ref.qualifier not in self.aliases:
                return Diagnostic("E017", f"unknown relation `{ref.qualifier}`", ref.span,
                                  did_you_mean(ref.qualifier, self.aliases)
                                  or (f"relations here: {', '.join(self.aliases)}"
                                      if self.aliases else None))
            cols = [e.col for e in self.entries if e.col.qualifier == ref.qualifier]
            for col in cols:
                if col.name == ref.name:
                    return col
            return Diagnostic("E011", f"unknown column `{ref.qualifier}.{ref.name}`", ref.span,
                              did_you_mean(ref.name, [c.name for c in cols]))
        found = self.visible(ref.name)
        if any(e.ambiguous for e in found):
            owners = sorted({e.col.qualifier or "?" for e in self.entries
                             if e.col.name == ref.name and e.ambiguous})
            return Diagnostic("E012", f"ambiguous column `{ref.name}`: it comes from "
                              f"{' and '.join(f'`{o}`' for o in owners)}", ref.span,
                              f"qualify it, e.g. `{owners[0]}.{ref.name}`")
        if found:
            return found[-1].col
        hidden = [e.col for e in self.entries if e.col.name == ref.name and e.col.qualifier]
        if hidden:
            q = hidden[0].qualifier
            return Diagnostic("E011", f"unknown column `{ref.name}`", ref.span,
                              f"the column of `{q}` is reachable qualified: `{q}.{ref.name}`")
        names = sorted({e.col.name for e in self.entries if e.visible})
        return Diagnostic("E011", f"unknown column `{ref.name}`", ref.span,
                          did_you_mean(ref.name, names))


class ModuleScope:
    """What every model's resolution shares: the module, its diagnostics, the column
    ids, the module's `fn`s, and the columns of the relations resolved so far."""

    def __init__(self, module: Module):
        self.module = module
        self.diags = module.diagnostics
        self.ids = itertools.count(1)
        self.functions = Definitions({}, lambda: next(self.ids), self.diags)

    def error(self, code: str, message: str, span: Span | None, hint: str | None = None) -> None:
        self.diags.append(Diagnostic(code, message, span, hint))

    def relation_columns(self, name: str) -> tuple[RelationRef, list[tuple[str, T.Type]]]:
        module = self.module
        if name in module.sources:
            return RelationRef("source", name), module.sources[name].columns
        plan = module.models[name].plan
        return RelationRef("model", name), [(c.name, c.type) for c in plan.output]

    def new_col(self, name: str, typ: T.Type, qualifier: str | None = None) -> Col:
        return Col(next(self.ids), name, typ, qualifier)
