"""Diagnostics as text, the way SPEC §4 shows them (colour only on a terminal)."""

from __future__ import annotations

from strata.diagnostics import Diagnostic

_COLOURS = {"error": "bold red", "warning": "bold yellow", "note": "bold cyan"}


def render(diag: Diagnostic, files: dict[str, str], colour: bool = False) -> str:
    """One diagnostic: header, `-->` location, the source line, a caret under the span."""

    escape = _rich_escape() if colour else str

    def paint(text: str, style: str) -> str:
        return f"[{style}]{escape(text)}[/]" if colour else text

    head = f"{diag.severity}[{diag.code}]"
    lines = [paint(head, _COLOURS.get(diag.severity, "bold")) +
             (paint(": " + diag.message, "bold") if colour else ": " + diag.message)]
    span = diag.span
    text = files.get(span.file) if span else None
    if span is not None:
        lines.append(paint("  --> ", "blue") + (escape(f"{span.file}:{span.line}:{span.column}")
                                                if colour else
                                                f"{span.file}:{span.line}:{span.column}"))
    source_lines = text.splitlines() if text is not None else []
    if span is not None and 1 <= span.line <= len(source_lines):
        number = str(span.line)
        gutter = " " * len(number)
        source = source_lines[span.line - 1].replace("\t", " ")
        end = span.end_column if span.end_line == span.line else len(source) + 1
        width = max(1, end - span.column)
        caret = " " * (span.column - 1) + "^" * width
        lines.append(paint(f"{gutter} |", "blue"))
        lines.append(paint(f"{number} |", "blue") + " " + (escape(source) if colour else source))
        tail = f" {diag.hint}" if diag.hint else ""
        lines.append(paint(f"{gutter} |", "blue") + " " + paint(caret + tail, "bold red"
                                                                 if diag.severity == "error"
                                                                 else "bold yellow"))
    elif diag.hint:
        lines.append(paint("  = help: ", "cyan") + (escape(diag.hint) if colour else diag.hint))
    for note in diag.notes:
        lines.append(paint("  = note: ", "cyan") + (escape(note) if colour else note))
    return "\n".join(lines)


def _rich_escape():
    from rich.markup import escape  # only for colour: plain output needs no rich at all

    return escape


def render_all(diags: list[Diagnostic], files: dict[str, str], colour: bool = False) -> str:
    return "\n\n".join(render(d, files, colour) for d in diags)
