"""Hover: a column's type and where it is defined, a model's or source's columns, a
function's signature and doc from the catalogue."""

from __future__ import annotations

import re

from strata.lsp import language
from strata.lsp.index import Definition, Index
from strata.semantics.userfunctions import UserFunction

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def word_at(line: str, column: int) -> tuple[str, int] | None:
    """The word under a 1-based column, and where it starts (1-based)."""
    for m in _WORD.finditer(line):
        if m.start() < column <= m.end() + 1:
            return m.group(), m.start() + 1
    return None


def hover_text(index: Index, file: str, line: int, column: int) -> str | None:
    found = index.at(file, line, column)
    if found is not None:
        return describe(index, found.target)
    text = index.line(file, line)
    word = word_at(text, column)
    if word is not None:
        end = word[1] - 1 + len(word[0])
        if text[end:].lstrip().startswith("("):
            user = index.module.functions.get(word[0])
            if user is not None:  # a call of the module's own `fn`, or its declaration
                return user_function_text(index, user)
            return function_text(word[0])
    return None


def user_function_text(index: Index, fn: UserFunction) -> str:
    """A module's `fn`: its signature and body as written, and where it is defined."""
    span = fn.decl.body.span
    lines = [index.line(span.file, n) for n in range(span.line, span.end_line + 1)]
    if len(lines) == 1:
        body = lines[0][span.column - 1:span.end_column - 1]
    else:
        body = "\n".join([lines[0][span.column - 1:], *lines[1:-1],
                          lines[-1][:span.end_column - 1]])
    return (f"```strata\n{fn.signature} = {body}\n```\n"
            f"function of this module, inlined where it is called; defined at {fn.where}")


def describe(index: Index, target: Definition) -> str:
    where = f"{target.span.file}:{target.span.line}:{target.span.column}"
    if target.kind == "column":
        return (f"```strata\n{target.name}: {target.type}\n```\n"
                f"{target.origin}, defined at {where}")
    if target.kind == "function":
        return user_function_text(index, index.module.functions[target.name])
    if target.kind in ("model", "source", "relation"):
        cols = target.columns if target.kind == "relation" else index.outputs.get(target.name, [])
        body = "\n".join(f"  {c.definition.name}: {c.definition.type}" for c in cols)
        kind = "with" if target.kind == "relation" else target.kind
        origin = f"{target.origin}, " if target.kind == "relation" else ""
        return f"```strata\n{kind} {target.name} {{\n{body}\n}}\n```\n{origin}defined at {where}"
    return f"test `{target.name}`, defined at {where}"


def function_text(name: str) -> str | None:
    fn = language.function(name)
    if fn is None:
        return None
    kind = "aggregate function" if fn.aggregate else "function"
    if language.is_window_function(name):
        kind = "window function (in the `derive` right after a `window` step)"
    text = f"```strata\n{fn.signature or name + '(...)'}\n```\n{kind}: {fn.doc}"
    if fn.example[0]:
        text += f"\n\nexample: `{fn.example[0]}` → `{fn.example[1]!r}`"
    return text
