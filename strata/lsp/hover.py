"""Hover: a column's type and where it is defined, a model's or source's columns, a
function's signature and doc from the catalogue."""

from __future__ import annotations

import re
from pathlib import Path

from strata.lsp import language
from strata.lsp.index import Definition, Index
from strata.semantics import metadata
from strata.semantics.userfunctions import UserFunction

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MARKDOWN = re.compile(r"[\\`*_{}\[\]<>#|~]")


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
    whose = "an imported module" if _imported(index, span.file) else "this module"
    return (f"```strata\n{fn.signature} = {body}\n```\n"
            f"function of {whose}, inlined where it is called; defined at {fn.where}")


def _imported(index: Index, file: str) -> bool:
    """The file is one of a module the open module imports (semantics/imports.py)."""
    path = Path(file).resolve()
    return any(path == root or root in path.parents for root in index.module.imported)


def describe(index: Index, target: Definition) -> str:
    where = f"{target.span.file}:{target.span.line}:{target.span.column}"
    if target.kind == "column":
        meta = metadata.of_column(index.module, target.owner, target.name) \
            if target.owner else None
        return (f"```strata\n{target.name}: {target.type}\n```\n"
                f"{described(meta)}{target.origin}, defined at {where}")
    if target.kind in ("model", "source"):
        cols = index.outputs.get(target.name, [])
        body = "\n".join(f"  {c.definition.name}: {c.definition.type}" for c in cols)
        meta = metadata.of_relation(index.module, target.name)
        return (f"```strata\n{target.kind} {target.name} {{\n{body}\n}}\n```\n"
                f"{described(meta)}defined at {where}")
    return f"test `{target.name}`, defined at {where}"


def described(meta) -> str:
    """A description, owner and tags as hover paragraphs (empty when none): plain
    text, its Markdown characters escaped, since a description is the author's words."""
    found = metadata.lines(meta) if meta else []
    return "".join(_MARKDOWN.sub(r"\\\g<0>", line) + "\n\n" for line in found)


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
