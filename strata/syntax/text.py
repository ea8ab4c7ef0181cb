"""A module file's text as the compiler reads it, and texts shared by the parser
and the checks. Kept apart from the parser so that loading a module whose files
are in the parse cache never imports Lark."""

from __future__ import annotations

from pathlib import Path

from strata.diagnostics import Span, fail

TOO_DEEP_HINT = "split it: compute parts with `let` or `derive` and combine those"


def read_text(path: Path, display: str) -> str:
    try:
        data = path.read_bytes()
    except OSError as err:
        raise fail("E005", f"cannot read `{display}`: {err.strerror or err}", None,
                   "check the path") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        col = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise fail("E002", "the file is not valid UTF-8 text",
                   Span(display, line, col, line, col + 1),
                   "Strata modules are UTF-8 text files") from None
    _refuse_nul(text, display)
    return text.lstrip("\ufeff")


def _refuse_nul(text: str, display: str) -> None:
    """A NUL is never part of a module (and would reach paths and SQL as one)."""
    if "\x00" in text:
        idx = text.index("\x00")
        line = text.count("\n", 0, idx) + 1
        col = idx - (text.rfind("\n", 0, idx) + 1) + 1
        raise fail("E002", "the file holds a NUL byte: it is binary, not a module",
                   Span(display, line, col, line, col + 1), "Strata modules are UTF-8 text files")
