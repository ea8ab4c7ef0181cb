"""Spans (1-based, end exclusive) to LSP ranges (0-based) and back to positions."""

from __future__ import annotations

from lsprotocol import types as lsp

from strata.diagnostics import Span
from strata.lsp.loader import path_uri


def to_range(span: Span) -> lsp.Range:
    return lsp.Range(start=lsp.Position(line=max(span.line - 1, 0),
                                        character=max(span.column - 1, 0)),
                     end=lsp.Position(line=max(span.end_line - 1, 0),
                                      character=max(span.end_column - 1, 0)))


def to_location(span: Span) -> lsp.Location:
    return lsp.Location(uri=path_uri(span.file), range=to_range(span))


def one_based(position: lsp.Position) -> tuple[int, int]:
    return position.line + 1, position.character + 1
