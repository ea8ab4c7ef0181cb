"""Diagnostics for the editor: the compiler's, as `strata check` reports them (code,
message, span, hint and notes), grouped by the file they point into."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from lsprotocol import types as lsp

from strata.diagnostics import Diagnostic
from strata.lsp.convert import to_range
from strata.lsp.loader import path_uri

_SEVERITY = {"error": lsp.DiagnosticSeverity.Error, "warning": lsp.DiagnosticSeverity.Warning,
             "note": lsp.DiagnosticSeverity.Information}


def to_lsp(diag: Diagnostic, text: str | None = None) -> lsp.Diagnostic:
    """One diagnostic; the hint and notes follow the message as `strata check`
    prints them (`= help:`, `= note:`). `text`: its file's, for UTF-16 columns."""
    lines = [diag.message]
    if diag.hint:
        lines.append(f"help: {diag.hint}")
    lines.extend(f"note: {n}" for n in diag.notes)
    where = to_range(diag.span, text) if diag.span else lsp.Range(
        start=lsp.Position(line=0, character=0), end=lsp.Position(line=0, character=0))
    return lsp.Diagnostic(range=where, message="\n".join(lines), code=diag.code,
                          source="strata",
                          severity=_SEVERITY.get(diag.severity, lsp.DiagnosticSeverity.Error))


def by_uri(diags: list[Diagnostic], fallback: list[str],
           texts: Mapping[str, str] | None = None,
           uri_of: Callable[[str], str] = path_uri) -> dict[str, list[lsp.Diagnostic]]:
    """Diagnostics per file URI. One without a span (the module is empty, a path is
    missing) is shown at the top of each `fallback` document (the open ones).
    `texts`: the checked files' texts by display path, for UTF-16 columns; `uri_of`:
    a display path's URI (the editor's, for a document that is no file)."""
    out: dict[str, list[lsp.Diagnostic]] = {}
    for diag in diags:
        uris = [uri_of(diag.span.file)] if diag.span else fallback
        for uri in uris:
            text = (texts or {}).get(diag.span.file) if diag.span else None
            out.setdefault(uri, []).append(to_lsp(diag, text))
    return out
