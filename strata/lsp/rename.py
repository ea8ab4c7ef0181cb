"""Rename (`textDocument/rename`) of a model or a column a model defines, across the
module's files: the declaration and every reference the index links to it.

A reference may be qualified (`o.amount`): only the name after the dot changes. Names
that are not the module's own are refused rather than renamed: a source and a source's
columns are the names of the data outside (renaming them would read another table or
column), and a name the index cannot place exactly is refused, never guessed."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from strata.diagnostics import Span
from strata.lsp.index import Definition, Index

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class RenameRefused(ValueError):
    """Why this name cannot be renamed (the editor shows it)."""


@dataclass(frozen=True)
class Target:
    definition: Definition
    span: Span  # the name under the cursor, as written there


def target_at(index: Index, file: str, line: int, column: int) -> Target:
    found = index.at(file, line, column)
    if found is None:
        raise RenameRefused("no model or column under the cursor")
    target = found.target
    if target.kind in ("function", "relation"):
        what = "fn" if target.kind == "function" else "`with` relation"
        raise RenameRefused(f"`{target.name}` is a {what}: rename renames models and columns")
    if target.kind in ("source", "test") or (target.kind == "column"
                                             and target.owner in index.module.sources):
        raise RenameRefused(f"`{target.name}` is a {_kind(target)}: its name is the data's "
                            "outside the module; rename it there and in its declaration")
    return Target(target, _name_part(index, found.span, target.name))


def rename_spans(index: Index, target: Target, new_name: str) -> list[Span]:
    """The spans to write `new_name` over: the declaration and every reference."""
    if not IDENTIFIER.match(new_name):
        raise RenameRefused(f"`{new_name}` is not a name (letters, digits and _, not "
                            "starting with a digit)")
    old = target.definition
    if old.kind == "model" and new_name in {**index.module.models, **index.module.sources}:
        raise RenameRefused(f"`{new_name}` names a model or source already")
    spans = [old.span, *(r.span for r in index.references_to(old))]
    return sorted({_name_part(index, s, old.name) for s in spans},
                  key=lambda s: (s.file, s.line, s.column))


def _name_part(index: Index, span: Span, name: str) -> Span:
    """The part of `span` that is `name` (`amount` of `o.amount`)."""
    text = index.line(span.file, span.line)[span.column - 1:span.end_column - 1]
    if span.line != span.end_line or not (text == name or text.endswith("." + name)):
        raise RenameRefused(f"`{name}` is written as `{text}` at {span.file}:{span.line}: "
                            "not renamed")
    return replace(span, column=span.end_column - len(name))


def _kind(target: Definition) -> str:
    return "source column" if target.kind == "column" else target.kind
