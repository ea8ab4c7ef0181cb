"""Go to definition and find references, from the index."""

from __future__ import annotations

from strata.diagnostics import Span
from strata.lsp.index import Index


def definition(index: Index, file: str, line: int, column: int) -> Span | None:
    found = index.at(file, line, column)
    return found.target.span if found is not None else None


def references(index: Index, file: str, line: int, column: int,
               include_declaration: bool) -> list[Span]:
    found = index.at(file, line, column)
    if found is None:
        return []
    spans = [r.span for r in index.references_to(found.target)]
    if include_declaration:
        spans.insert(0, found.target.span)
    return sorted(set(spans), key=lambda s: (s.file, s.line, s.column))
