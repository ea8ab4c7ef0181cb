"""A module file's text as the compiler reads it, and texts shared by the parser
and the checks. Kept apart from the parser so that loading a module whose files
are in the parse cache never imports Lark."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from strata.diagnostics import Span, fail

TOO_DEEP_HINT = "split it: compute parts with `let` or `derive` and combine those"


def read_text(path: Path, display: str) -> str:
    data = _read_regular(path, display)
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


def _read_regular(path: Path, display: str) -> bytes:
    """The bytes of a regular file, else E005 at once. Opened without blocking and
    checked on the open descriptor: reading a device (`/dev/zero`) never ends, and
    opening or reading a FIFO waits for a writer that may never come."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as err:
        raise _unreadable(display, err) from None
    with os.fdopen(fd, "rb") as file:
        try:
            kind = os.fstat(fd).st_mode
            if not stat.S_ISREG(kind):
                raise fail("E005", f"`{display}` is {_kind(kind)}, not a regular file", None,
                           "a module is a .strata file or a directory of them")
            return file.read()
        except OSError as err:
            raise _unreadable(display, err) from None


def _unreadable(display: str, err: OSError):
    return fail("E005", f"cannot read `{display}`: {err.strerror or err}", None,
                "check the path")


def _kind(mode: int) -> str:
    for test, what in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return what
    return "a special file"


def _refuse_nul(text: str, display: str) -> None:
    """A NUL is never part of a module (and would reach paths and SQL as one)."""
    if "\x00" in text:
        idx = text.index("\x00")
        line = text.count("\n", 0, idx) + 1
        col = idx - (text.rfind("\n", 0, idx) + 1) + 1
        raise fail("E002", "the file holds a NUL byte: it is binary, not a module",
                   Span(display, line, col, line, col + 1), "Strata modules are UTF-8 text files")
