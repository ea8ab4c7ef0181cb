"""What completion offers, read from the language's own data so it follows the
language as it grows: step keywords and pin kinds from grammar.lark, properties
from the checks, functions (with signature and doc) from the catalogue and the window
functions (semantics/windows.py)."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from strata.semantics import checks
from strata.semantics import functions as F
from strata.semantics import windows as W
from strata.syntax.parser import META_KEYS

_GRAMMAR = Path(__file__).resolve().parent.parent / "syntax" / "grammar.lark"


@lru_cache(maxsize=1)
def _grammar() -> str:
    return _GRAMMAR.read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def step_keywords() -> tuple[str, ...]:
    """The word each `*_step` rule starts with: `"derive"`, or a terminal such as
    JOIN_LEFT whose definition (`JOIN_LEFT: "join_left"`) gives the word."""
    text = _grammar()
    terminals = dict(re.findall(r'^([A-Z_]+):\s*"([^"]+)"', text, re.MULTILINE))
    words: list[str] = []
    for body in re.findall(r"^\w+_step:(.*(?:\n\s+\|.*)*)", text, re.MULTILINE):
        for alternative in body.split("|"):
            alternative = alternative.strip().lstrip("(")
            first = alternative.split()[0] if alternative.split() else ""
            for token in re.split(r"[()|\s]+", alternative):
                if token.startswith('"'):
                    words.append(token.strip('"'))
                    break
                if token in terminals:
                    words.append(terminals[token])
                    if first.startswith("("):
                        continue
                    break
            group = re.match(r"\(([A-Z_ |]+)\)", alternative)
            if group:
                words.extend(terminals[t] for t in group.group(1).split("|")
                             if t.strip() in terminals)
    return tuple(dict.fromkeys(w for w in words if w))


@lru_cache(maxsize=1)
def pin_kinds() -> tuple[str, ...]:
    return tuple(dict.fromkeys(re.findall(r'"pin"\s+"(\w+)"', _grammar())))


def properties() -> tuple[str, ...]:
    return tuple(checks.PROPERTIES)


@lru_cache(maxsize=1)
def declaration_keywords() -> tuple[str, ...]:
    """The word each top-level declaration starts with (`source`, `model`, `fn`,
    `import`, ...), read from the alternatives of the grammar's `decl` rule."""
    text = _grammar()
    rules = re.search(r"^\?decl:(.*)$", text, re.MULTILINE).group(1).split("|")
    words = (re.search(rf'^{rule.strip()}:\s*"(\w+)"', text, re.MULTILINE)
             for rule in rules)
    return tuple(w.group(1) for w in words if w)


@lru_cache(maxsize=1)
def item_keywords() -> tuple[str, ...]:
    """Model items that are neither steps nor properties (`column NAME { ... }`)."""
    return tuple(re.findall(r'^column_meta:\s*"(\w+)"', _grammar(), re.MULTILINE))


def metadata_keys() -> tuple[str, ...]:
    """description, owner, tags: on a source, a model or a column."""
    return META_KEYS


@lru_cache(maxsize=1)
def relation_words() -> frozenset[str]:
    """Words after which a relation name is written: from, the joins, set operations."""
    text = _grammar()
    words = {"from"}
    terminals = dict(re.findall(r'^([A-Z_]+):\s*"([^"]+)"', text, re.MULTILINE))
    for rule in ("join_step", "setop_step"):
        m = re.search(rf"^{rule}:(.*(?:\n\s+\|.*)*)", text, re.MULTILINE)
        if m:
            words.update(terminals[t] for t in re.findall(r"[A-Z_]+", m.group(1))
                         if t in terminals and t != "MANY")
    return frozenset(words)


def functions() -> list[F.Function]:
    return list(F.CATALOGUE.values())


def window_functions() -> list[F.Function]:
    """row_number, lag, ...: computed only by the `derive` after a `window` step."""
    return list(W.WINDOW_FUNCTIONS.values())


def function(name: str) -> F.Function | None:
    return F.CATALOGUE.get(name) or W.WINDOW_FUNCTIONS.get(name)


def is_window_function(name: str) -> bool:
    return name in W.WINDOW_FUNCTIONS and name not in F.CATALOGUE
