"""Quick fixes (`textDocument/codeAction`): a diagnostic whose hint is "did you mean
`x`?" is fixed by writing `x` in place of the misspelt name it points at.

The diagnostic's range may hold more than the name (`o.amout`, `from ordrs`): the word
replaced is the one in the range most like the suggestion (the hint was chosen for
being like it), so a qualifier or keyword beside the name is left alone."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from lsprotocol import types as lsp

from strata.lsp.convert import from_utf16, to_utf16

SUGGESTION = re.compile(r"did you mean `([^`]+)`\?")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
LIKE_ENOUGH = 0.6  # strata.diagnostics.did_you_mean's cutoff


@dataclass(frozen=True)
class Fix:
    diagnostic: lsp.Diagnostic
    range: lsp.Range
    replacement: str

    @property
    def title(self) -> str:
        return f"Change to `{self.replacement}`"


def suggestion(diagnostic: lsp.Diagnostic) -> str | None:
    found = SUGGESTION.search(diagnostic.message or "")
    return found.group(1) if found else None


def fixes(diagnostics: list[lsp.Diagnostic], lines: list[str]) -> list[Fix]:
    """The fix of each diagnostic that suggests a name, where the name it points at is
    found on the one line of its range."""
    out = []
    for diagnostic in diagnostics:
        wanted = suggestion(diagnostic)
        found = _misspelt(diagnostic.range, lines, wanted) if wanted else None
        if found is not None:
            out.append(Fix(diagnostic, found, wanted))
    return out


def _misspelt(where: lsp.Range, lines: list[str], wanted: str) -> lsp.Range | None:
    """The range of the word in `where` most like `wanted` (and not it already)."""
    n = where.start.line
    if n != where.end.line or not 0 <= n < len(lines):
        return None
    line = lines[n].rstrip("\r\n")
    start, end = from_utf16(line, where.start.character), from_utf16(line, where.end.character)
    best, best_ratio = None, LIKE_ENOUGH
    for word in _WORD.finditer(line, start, max(end, start)):
        ratio = difflib.SequenceMatcher(None, word.group(), wanted).ratio()
        if word.group() != wanted and ratio >= best_ratio:
            best, best_ratio = word, ratio
    if best is None:
        return None
    return lsp.Range(start=lsp.Position(line=n, character=to_utf16(line, best.start())),
                     end=lsp.Position(line=n, character=to_utf16(line, best.end())))


def code_actions(uri: str, diagnostics: list[lsp.Diagnostic],
                 lines: list[str]) -> list[lsp.CodeAction]:
    return [lsp.CodeAction(
        title=fix.title, kind=lsp.CodeActionKind.QuickFix, diagnostics=[fix.diagnostic],
        is_preferred=True, edit=lsp.WorkspaceEdit(changes={uri: [
            lsp.TextEdit(range=fix.range, new_text=fix.replacement)]}))
        for fix in fixes(diagnostics, lines)]
