"""User text shown where a stray character would change its meaning.

A quoted name (`` `x y` ``) may hold any character but a backtick: a newline, a
carriage return, ESC, U+2028. Shown raw, such a name ends a `--` comment in the SQL
that `compile --show-sql` prints (and every engine has its own idea of a line end:
DuckDB and psql end a comment at `\\r` too), or drives the terminal that shows a
progress line. These functions show it instead in a form that holds no character an
engine or a terminal could act on, and that still says exactly which name it is.
"""

from __future__ import annotations

import re

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escape_unprintable(text: str, keep: str = "") -> str:
    """`text` with every character that is not printable written as a Python escape
    (`\\x1b`, `\\r`, `\\x85`, `\\u2028`, `\\U000e0001`): control characters, every line
    or paragraph separator, format characters (bidirectional overrides), surrogates
    and unassigned code points. Characters in `keep` (a caller's own `\\n` between
    lines) stay as they are."""
    if text.isprintable() and not keep:
        return text
    return "".join(ch if ch.isprintable() or ch in keep else _escape(ch) for ch in text)


def _escape(ch: str) -> str:
    if ch in _SHORT:
        return _SHORT[ch]
    code = ord(ch)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def lines(text: str) -> list[str]:
    """`text` cut into lines at line feeds alone (a `\\r` before one goes with it).
    `str.splitlines` also cuts at U+2028, U+2029, `\\x1c`-`\\x1e`, `\\x85`, `\\v` and
    `\\f`, any of which a quoted name may hold: an engine's error naming such a
    relation or column was cut inside the name."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def first_line(text: str, otherwise: str = "") -> str:
    """The first line of a message (`lines`), surrounding blanks off; `otherwise`
    when there is none."""
    text = text.strip(" \t\r\n")
    return lines(text)[0] if text else otherwise


def is_plain(name: str) -> bool:
    """A name Strata reads without backticks (a letter or `_`, then letters, digits, `_`)."""
    return _PLAIN.fullmatch(name) is not None


def shown_name(name: str) -> str:
    """`name` for a one-line comment or a terminal: a plain name as it is; any other
    between backticks, as a module writes it, with `\\` doubled and every unprintable
    character escaped. A name never holds a backtick, so the quoted form cannot be
    mistaken for a plain name, and the escapes read back to one name only."""
    if is_plain(name):
        return name
    return backticked(name)


def backticked(name: str) -> str:
    """`name` between backticks for a one-line message, escaped as `shown_name`
    escapes it, plain or not."""
    return "`" + escape_unprintable(name.replace("\\", "\\\\")) + "`"
