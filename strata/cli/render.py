"""Diagnostics as text, the way SPEC §4 shows them (colour only on a terminal).

Everything a diagnostic carries may hold user text: a name with ESC or a newline in
a message, a file path, the source line under it (a string literal with `\\x1b[2J`).
Each piece is shown with its unprintable characters escaped (`strata.textsafe`),
so what reaches the terminal is text, never a control sequence or a forged line.
`safe_console` does the same for every other line a command prints.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from strata.diagnostics import Diagnostic, Span
from strata.textsafe import escape_unprintable

if TYPE_CHECKING:
    from rich.console import Console

_COLOURS = {"error": "bold red", "warning": "bold yellow", "note": "bold cyan"}


def render(diag: Diagnostic, files: dict[str, str], colour: bool = False) -> str:
    """One diagnostic: header, `-->` location, the source line, a caret under the span."""

    shown = _shown(colour)

    def paint(text: str, style: str) -> str:
        return f"[{style}]{shown(text)}[/]" if colour else shown(text)

    head = f"{diag.severity}[{diag.code}]"
    lines = [paint(head, _COLOURS.get(diag.severity, "bold")) +
             (paint(": " + diag.message, "bold") if colour else ": " + shown(diag.message))]
    span = diag.span
    if span is not None:
        lines.append(paint("  --> ", "blue") + shown(f"{span.file}:{span.line}:{span.column}"))
    source = _source_line(files.get(span.file) if span else None, span)
    if source is not None:
        number = str(span.line)
        gutter = " " * len(number)
        lines.append(paint(f"{gutter} |", "blue"))
        lines.append(paint(f"{number} |", "blue") + " " + shown(source))
        tail = f" {diag.hint}" if diag.hint else ""
        lines.append(paint(f"{gutter} |", "blue") + " " + paint(_caret(source, span) + tail,
                                                                 "bold red"
                                                                 if diag.severity == "error"
                                                                 else "bold yellow"))
    elif diag.hint:
        lines.append(paint("  = help: ", "cyan") + shown(diag.hint))
    for note in diag.notes:
        lines.append(paint("  = note: ", "cyan") + shown(note))
    return "\n".join(lines)


def _shown(colour: bool):
    """User text as one line of plain text: unprintable characters escaped, and rich
    markup escaped too when the text goes through rich's markup."""
    if not colour:
        return escape_unprintable
    escape = _rich_escape()
    return lambda text: escape(escape_unprintable(text))


def _source_line(text: str | None, span: Span | None) -> str | None:
    """The span's line of `text`, tabs as spaces. Lines are counted at `\\n` only, as
    the parser counts them: `splitlines` also breaks at `\\x0c`, `\\x85` or U+2028 in a
    string literal, and would show a line the span is not on."""
    if text is None or span is None:
        return None
    lines = text.split("\n")
    if lines[-1] == "":  # a file's last newline ends a line, it starts none
        lines.pop()
    if not 1 <= span.line <= len(lines):
        return None
    line = lines[span.line - 1]
    return line.removesuffix("\r").replace("\t", " ")


def _caret(source: str, span: Span) -> str:
    """`^`s under the span as the line is shown: an escaped character (`\\x1b`) takes
    several columns, so the caret is placed by the escaped widths, not by columns."""
    end = span.end_column if span.end_line == span.line else len(source) + 1
    start = span.column - 1
    before = len(escape_unprintable(source[:start])) + max(0, start - len(source))
    width = (len(escape_unprintable(source[start:end - 1]))
             + max(0, end - 1 - max(start, len(source))))  # past the line's end, as is
    return " " * before + "^" * max(1, width)


def _rich_escape():
    from rich.markup import escape  # only for colour: plain output needs no rich at all

    return escape


def render_all(diags: list[Diagnostic], files: dict[str, str], colour: bool = False) -> str:
    return "\n\n".join(render(d, files, colour) for d in diags)


def terminal_text(text: str) -> str:
    """A line (or lines) a command prints: unprintable characters escaped but the
    newlines that separate its lines."""
    return escape_unprintable(text, keep="\n")


def safe_console(**options) -> Console:
    """A rich Console whose `print` shows every string through `terminal_text`: the
    one door every command's plain output (model, source, branch names, paths) goes
    out by, so none of them can carry ESC or a carriage return to a terminal."""
    return _safe_console_class()(**options)


@cache
def _safe_console_class():
    from rich.console import Console  # rich only once a command prints through it

    class SafeConsole(Console):
        def print(self, *objects, **kwargs) -> None:
            super().print(*(terminal_text(o) if isinstance(o, str) else o for o in objects),
                          **kwargs)

    return SafeConsole
