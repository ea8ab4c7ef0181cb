"""The VS Code extension's TextMate grammar (issue 38, editors/vscode): it colours what
the language has (every step keyword, property and pin kind, read from the language's
own data as completion reads them), each type one way, numbers with an exponent, and
a quoted name holding `--` is a name, not the start of a comment.

TextMate picks, at each point of a line, the pattern matching earliest (the first
listed on a tie); `tokens` does the same with Python's `re`, which reads these
patterns as Oniguruma does."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from strata.lsp import language
from strata.semantics import types as T

GRAMMAR = json.loads((Path(__file__).resolve().parent.parent / "editors" / "vscode"
                      / "syntaxes" / "strata.tmLanguage.json").read_text())


def flat(patterns: list[dict]) -> list[dict]:
    out = []
    for pattern in patterns:
        if "include" in pattern:
            out += flat([GRAMMAR["repository"][pattern["include"].lstrip("#")]])
        elif "patterns" in pattern and "begin" not in pattern:
            out += flat(pattern["patterns"])
        else:
            out.append(pattern)
    return out


def tokens(line: str) -> list[tuple[str, str]]:
    """(text, scope) of each token TextMate would colour on one line."""
    patterns = flat(GRAMMAR["patterns"])
    found, at = [], 0
    while at < len(line):
        best = None
        for pattern in patterns:
            m = re.compile(pattern.get("match") or pattern["begin"]).search(line, at)
            if m and m.end() > m.start() and (best is None or m.start() < best[0].start()):
                best = (m, pattern)
        if best is None:
            break
        m, pattern = best
        scope = pattern.get("name") or pattern["captures"]["1"]["name"]
        if "begin" in pattern:  # a string: to its end
            end = re.compile(pattern["end"]).search(line, m.end())
            stop = end.end() if end else len(line)
            found.append((line[m.start():stop], scope))
            at = stop
        else:
            found.append((m.group(), scope))
            at = m.end()
    return found


def scope_of(word: str) -> set[str]:
    return {scope for text, scope in tokens(f" {word} ") if text == word}


def test_a_quoted_name_holding_dashes_is_no_comment():
    found = tokens("model `order -- items` {")
    assert not any(scope.startswith("comment") for _, scope in found), found
    comment = tokens("  filter x > 1 -- big")[-1]
    assert comment == ("-- big", "comment.line.double-dash.strata")


@pytest.mark.parametrize("word", [*language.step_keywords(), *language.properties(),
                                  *language.pin_kinds()])
def test_every_keyword_property_and_pin_kind_is_coloured(word):
    assert any(scope.startswith("keyword") for scope in scope_of(word)), (word, tokens(word))


def test_each_type_is_coloured_one_way():
    scopes = {name: scope_of(name) for name in (*T.SCALAR_NAMES, "list")}
    assert set().union(*scopes.values()) == {"support.type.strata"}, scopes


@pytest.mark.parametrize("number", ["1", "2.5", "1e5", "2.5E-3", "7e+2"])
def test_numbers_with_an_exponent_are_one_number(number):
    assert tokens(f"x = {number}")[-1] == (number, "constant.numeric.strata")
