"""Document symbols: the sources, models (with their output columns) and tests of
one file; workspace symbols: those of every module the editor has open, by name."""

from __future__ import annotations

from collections.abc import Callable

from lsprotocol import types as lsp

from strata.lsp.convert import to_location, to_range
from strata.lsp.index import Index

_KIND = {"source": lsp.SymbolKind.Interface, "model": lsp.SymbolKind.Class,
         "test": lsp.SymbolKind.Method}


def document_symbols(index: Index, file: str) -> list[lsp.DocumentSymbol]:
    out = []
    module = index.module
    text = module.files.get(file)
    for d in index.definitions.values():
        if d.span.file != file:
            continue
        whole = {"source": lambda n: module.sources[n].decl.span,
                 "model": lambda n: module.models[n].decl.span,
                 "test": lambda n: module.tests[n].span}[d.kind](d.name)
        children = [lsp.DocumentSymbol(name=c.definition.name, detail=str(c.definition.type),
                                       kind=lsp.SymbolKind.Field,
                                       range=to_range(c.definition.span, text),
                                       selection_range=to_range(c.definition.span, text))
                    for c in index.outputs.get(d.name, []) if c.definition.span.file == file
                    and _within(c.definition.span, whole)]
        out.append(lsp.DocumentSymbol(name=d.name, detail=d.kind, kind=_KIND[d.kind],
                                      range=to_range(whole, text),
                                      selection_range=to_range(d.span, text),
                                      children=children))
    return sorted(out, key=lambda s: (s.range.start.line, s.range.start.character))


def _within(inner, outer) -> bool:
    return (outer.line, outer.column) <= (inner.line, inner.column) and \
        (inner.end_line, inner.end_column) <= (outer.end_line, outer.end_column)


def matches(query: str, name: str) -> bool:
    """An editor's fuzzy match: the query's letters appear in the name in order, case
    aside (`rsales` finds `region_sales`); an empty query matches every name."""
    rest = iter(name.lower())
    return all(letter in rest for letter in query.lower())


def workspace_symbols(index: Index, query: str,
                      uri_of: Callable[[str], str]) -> list[lsp.SymbolInformation]:
    """The sources, models and tests of one module whose names match `query`."""
    texts = index.module.files
    return [lsp.SymbolInformation(name=d.name, kind=_KIND[d.kind],
                                  location=to_location(d.span, texts, uri_of),
                                  container_name=d.span.file)
            for d in index.definitions.values()
            if d.kind in _KIND and matches(query, d.name)]
