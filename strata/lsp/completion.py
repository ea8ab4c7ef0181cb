"""Completion at the cursor, decided by the words before it on its line:

- after `from`, a join or a set operation: the module's models and sources;
- after `alias.`: that relation's columns;
- after `pin `: the pin kinds;
- at the start of a line (a step, a property, a pin): step keywords, properties, `pin`;
- elsewhere in a step: the columns in scope there, then the catalogue's functions,
  and in the `derive` right after a `window` step the window functions (row_number,
  lag, ...), the only place they are computed (E097 elsewhere).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lsprotocol import types as lsp

from strata.lsp import language
from strata.lsp.index import Index

_TAIL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)?$")


@dataclass(frozen=True)
class Context:
    before: str  # the line up to the cursor, without the word being typed
    prefix: str  # the word being typed


def context(line: str, column: int) -> Context:
    head = line[:column - 1]
    m = _TAIL.search(head)
    prefix = m.group(1) or ""
    return Context(head[:len(head) - len(prefix)], prefix)


def complete(index: Index, file: str, line: int, column: int) -> list[lsp.CompletionItem]:
    ctx = context(index.line(file, line), column)
    words = ctx.before.replace("(", " ( ").replace("|", " | ").split()
    last = words[-1] if words else ""
    if last in language.relation_words():
        return _relations(index)
    if last == "pin":
        return [_item(k, lsp.CompletionItemKind.Keyword, "pin kind") for k in language.pin_kinds()]
    if ctx.before.endswith("."):
        alias = _TAIL.search(ctx.before[:-1]).group(1) or ""
        return _columns(index, file, line, column, alias)
    if not words or last == "|":
        return _line_starts()
    functions = _functions()
    if in_window_derive(index, file, line):
        functions = _window_functions() + functions
    return _columns(index, file, line, column, None) + functions


def in_window_derive(index: Index, file: str, line: int) -> bool:
    """Whether `line` is in a `derive` whose step above is a `window` (lines that start
    no step, such as a frame's `rows between ...` or a derive's next item, are read
    as part of the step above them)."""
    steps = []
    keywords = set(language.step_keywords())
    for n in range(line, 0, -1):
        words = index.line(file, n).replace("|", " ").split()
        first = words[0] if words else ""
        if first == "model" or first == "}":
            break
        if first in keywords:
            steps.append(first)
            if len(steps) == 2:
                break
    return steps == ["derive", "window"]


def _relations(index: Index) -> list[lsp.CompletionItem]:
    out = []
    for d in index.definitions.values():
        if d.kind in ("model", "source"):
            cols = ", ".join(c.definition.name for c in index.outputs.get(d.name, []))
            out.append(_item(d.name, lsp.CompletionItemKind.Class if d.kind == "model"
                             else lsp.CompletionItemKind.Interface, f"{d.kind}: {cols}"))
    return out


def _columns(index: Index, file: str, line: int, column: int,
             alias: str | None) -> list[lsp.CompletionItem]:
    scope = index.scope_at(file, line, column)
    if scope is None:
        return []
    seen: set[str] = set()
    out = []
    for col in reversed(scope.columns):
        d = col.definition
        wanted = col.qualifier == alias if alias is not None else col.visible
        if wanted and d.name not in seen:
            seen.add(d.name)
            out.append(_item(d.name, lsp.CompletionItemKind.Field, f"{d.type} ({d.origin})"))
    if alias is None:
        out.extend(_item(a, lsp.CompletionItemKind.Module, "relation") for a in scope.aliases
                   if a not in seen)
    return list(reversed(out))


def _functions() -> list[lsp.CompletionItem]:
    return [_item(f.name, lsp.CompletionItemKind.Function, f.signature, f.doc)
            for f in language.functions()]


def _window_functions() -> list[lsp.CompletionItem]:
    return [_item(f.name, lsp.CompletionItemKind.Function, f.signature,
                  f"window function: {f.doc}") for f in language.window_functions()]


def _line_starts() -> list[lsp.CompletionItem]:
    return ([_item(k, lsp.CompletionItemKind.Keyword, "step") for k in language.step_keywords()]
            + [_item(p, lsp.CompletionItemKind.Property, "property")
               for p in language.properties()]
            + [_item("pin", lsp.CompletionItemKind.Keyword, "pin")]
            + [_item(k, lsp.CompletionItemKind.Keyword, "model item")
               for k in language.item_keywords()]
            + [_item(k, lsp.CompletionItemKind.Property, "description (not part of the SQL)")
               for k in language.metadata_keys()]
            + [_item(k, lsp.CompletionItemKind.Keyword, "declaration")
               for k in language.declaration_keywords()])


def _item(label: str, kind: lsp.CompletionItemKind, detail: str,
          doc: str | None = None) -> lsp.CompletionItem:
    return lsp.CompletionItem(label=label, kind=kind, detail=detail, documentation=doc)
