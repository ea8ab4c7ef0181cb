"""Formatting a document: `strata fmt`'s layout (strata/fmt.py), as one edit."""

from __future__ import annotations

from lsprotocol import types as lsp

from strata.diagnostics import StrataError
from strata.fmt import format_source


def edits(text: str, name: str) -> list[lsp.TextEdit]:
    """One edit replacing the whole text, or none (laid out already, or it does not
    parse: the editor shows its diagnostics, and formatting must not guess)."""
    try:
        formatted = format_source(text, name)
    except StrataError:
        return []
    if formatted == text:
        return []
    lines = text.split("\n")
    end = lsp.Position(line=len(lines) - 1, character=len(lines[-1].encode("utf-16-le")) // 2)
    return [lsp.TextEdit(range=lsp.Range(start=lsp.Position(line=0, character=0), end=end),
                         new_text=formatted)]
