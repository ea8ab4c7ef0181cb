"""Spans (1-based, end exclusive, columns in code points) to LSP ranges (0-based,
columns in UTF-16 code units, as LSP counts them by default) and back to positions.

A line of plain ASCII counts the same both ways; a line with `é` or an emoji before
the cursor does not, so every conversion that has the text at hand goes through it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache

from lsprotocol import types as lsp

from strata.diagnostics import Span
from strata.lsp.loader import path_uri


@lru_cache(maxsize=16)
def _lines(text: str) -> list[str]:
    return text.split("\n")


def _line(text: str | None, line: int) -> str:
    if text is None:
        return ""
    lines = _lines(text)
    return lines[line] if 0 <= line < len(lines) else ""


def to_utf16(line: str, column: int) -> int:
    """A 0-based code-point column of `line` as UTF-16 code units."""
    if line.isascii():
        return column
    return len(line[:column].encode("utf-16-le")) // 2


def from_utf16(line: str, units: int) -> int:
    """A 0-based UTF-16 column of `line` as code points (past the end: as given)."""
    if line.isascii():
        return units
    count = 0
    for index, char in enumerate(line):
        if count >= units:
            return index
        count += 2 if ord(char) > 0xFFFF else 1
    return len(line) + max(units - count, 0)


def to_range(span: Span, text: str | None = None) -> lsp.Range:
    """`text`: the whole text of the span's file, to count columns in UTF-16."""
    start_line, end_line = max(span.line - 1, 0), max(span.end_line - 1, 0)
    return lsp.Range(
        start=lsp.Position(line=start_line, character=to_utf16(
            _line(text, start_line), max(span.column - 1, 0))),
        end=lsp.Position(line=end_line, character=to_utf16(
            _line(text, end_line), max(span.end_column - 1, 0))))


def to_location(span: Span, texts: Mapping[str, str] | None = None,
                uri_of: Callable[[str], str] = path_uri) -> lsp.Location:
    """`uri_of`: a display path's URI (the editor's, for a document that is no file)."""
    return lsp.Location(uri=uri_of(span.file),
                        range=to_range(span, (texts or {}).get(span.file)))


def one_based(position: lsp.Position, line: str = "") -> tuple[int, int]:
    """An editor's position as the compiler's (line, column); `line`: its text."""
    return position.line + 1, from_utf16(line, position.character) + 1
