"""The canonical layout of a `.strata` file (`strata fmt`, the LSP's formatting).

Only the space between tokens changes; the tokens, the comments and which tokens a
newline separates never do. A newline ends a statement in Strata (grammar.lark's
`_SEP`), so keeping every line break where it is keeps the meaning by construction;
`format_text` checks its own output against that rule before returning it (E221).

What the layout sets:
- indentation: two spaces per `{` block; a statement's next line (`and ...`, `on
  ...`, `| ...`, or after a trailing operator) two more; after a trailing comma, under
  the statement's first item (`derive a = 1,` / `       b = 2`); inside `(` or `[`,
  under the first token after the bracket (or two more than the line when the bracket
  ends its line);
- one space between tokens, none inside brackets, before `,` `;` `:` `.` or a call's
  `(`, none after a unary minus or inside `list<int>`;
- comments kept word for word (trailing spaces dropped); a comment on its own line is
  indented as the line after it; trailing comments of neighbouring lines in one column;
- at most one blank line in a row, none just inside a block, exactly one between
  top-level declarations; one newline at the end of the file.

The layout depends only on the tokens and line breaks, so formatting twice gives the
text formatting once gave (`tests/test_fmt.py` holds every module in the repository
and the fuzz corpus to that, and to compiling to the same SQL).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from strata.diagnostics import fail

INDENT = 2
_TOKEN = re.compile(r"""
    (?P<space>[ \t\f\r]+)
  | (?P<newline>\n)
  | (?P<comment>--[^\n]*)
  | (?P<string>'(?:[^']|'')*')
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*|`[^`]*`)
  | (?P<number>\d+\.\d*(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\d+)
  | (?P<op>->|\|\||!=|<>|<=|>=|[{}()\[\],;.:|=<>+\-*/%])
""", re.VERBOSE)
_OPENERS = {"{": "}", "(": ")", "[": "]"}
_CLOSERS = set(_OPENERS.values())
# a line starting with one of these goes on with the statement above (as in _SEP)
_GOES_ON_WORDS = {"and", "or", "on", "as", "then", "else", "end", "when", "in", "is",
                  "between", "like", "not"}
_GOES_ON_OPS = {"|", "||", "*", "/", "%", "=", "<", ">", "<=", ">=", "!=", "<>", ",", "."}
# a line ending with one of these is continued by the next line
_CONTINUED_WORDS = _GOES_ON_WORDS - {"end"} | {"case"}
_CONTINUED_OPS = {",", "=", "->", "|", "||", "+", "-", "*", "/", "%", "<", ">", "<=", ">=",
                  "!=", "<>", ":"}
# a word followed by `(` with a space: a keyword (`in (1, 2)`, `from (from x | ...)`)
_CALL_KEYWORDS = {"cast", "try_cast", "extract"}
_TYPE_AFTER = {":", "->", "as", "<"}  # `list<...>` is a type only after these
_GRAMMAR = Path(__file__).with_name("grammar.lark")


@dataclass(frozen=True)
class Token:
    kind: str  # name, string, number, op
    text: str


@dataclass
class Line:
    """One line of the file as its tokens (a string or quoted name may hold newlines)."""

    tokens: list[Token]
    comment: str | None = None
    blank_before: bool = False


@dataclass
class _Frame:
    """An open bracket: where its lines go, and the statement being written in it."""

    indent: int  # column of a line inside
    closer: int  # column of a line starting with the closing bracket
    block: bool  # `{` (statements) or `(` / `[` (one expression or list)
    statement: int = 0  # column of the current statement's first line
    align: int | None = None  # column of its first item (`derive a = 1,`: of `a`)
    goes_on: bool = False  # the last line in this frame ended mid-statement
    after_comma: bool = False  # ... with a comma


@dataclass
class _Laid:
    indent: int
    code: str
    comment: str | None
    blank_before: bool
    top_level_start: bool = False
    closes_first: bool = False


@lru_cache(maxsize=1)
def keywords() -> frozenset[str]:
    """Every word the grammar spells out (`"filter"`, `JOIN_LEFT: "join_left"`)."""
    return frozenset(re.findall(r'"([a-z_]+)"', _GRAMMAR.read_text(encoding="utf-8")))


def lex(text: str) -> list[Token | str]:
    """Tokens, comments (as `Token("comment", ...)`) and "\\n" for each line break.
    The text parsed, so every character belongs to a token."""
    out: list[Token | str] = []
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:  # never after a clean parse; said as the guard says it
            raise _changed("a character no token starts with", text, pos)
        kind = match.lastgroup
        if kind == "newline":
            out.append("\n")
        elif kind != "space":
            out.append(Token(kind, match.group()))
        pos = match.end()
    return out


def lines_of(text: str) -> list[Line]:
    lines: list[Line] = []
    current = Line([])
    blank = False
    for item in lex(text):
        if item == "\n":
            if current.tokens or current.comment is not None:
                current.blank_before = blank
                lines.append(current)
                blank = False
            elif lines:
                blank = True
            current = Line([])
        elif item.kind == "comment":
            current.comment = item.text.rstrip()
        else:
            current.tokens.append(item)
    if current.tokens or current.comment is not None:
        current.blank_before = blank
        lines.append(current)
    return lines


def format_text(text: str, file: str = "<string>") -> str:
    """`text` (which parses) in the canonical layout."""
    laid = _lay_out(lines_of(text.lstrip("\ufeff")))
    out = _render(laid)
    check_same(text, out, file)
    return out


# ---------------------------------------------------------------- indentation
def _lay_out(lines: list[Line]) -> list[_Laid]:
    top = _Frame(indent=0, closer=0, block=True)
    stack = [top]
    laid: list[_Laid] = []
    for line in lines:
        if not line.tokens:
            laid.append(_Laid(-1, "", line.comment, line.blank_before))
            continue
        frame = stack[-1]
        first = line.tokens[0]
        starts = _starts(frame, line.tokens)
        indent = _indent(frame, line.tokens, starts)
        code, columns, typed = _spaced(line.tokens, indent)
        laid.append(_Laid(indent, code, line.comment, line.blank_before,
                          top_level_start=frame is top and starts,
                          closes_first=first.text in _CLOSERS))
        if starts and first.text not in _CLOSERS:
            frame.statement = indent
            frame.align = columns[1] if len(line.tokens) > 1 and first.kind == "name" else None
        _walk_brackets(line.tokens, columns, indent, stack)
        last = line.tokens[-1]
        stack[-1].goes_on = not typed and _continued(last)
        stack[-1].after_comma = last.text == ","
    below = 0  # a comment line sits as the code line after it (one pass, from the end)
    for item in reversed(laid):
        if item.indent < 0:
            item.indent = below
        elif item.code:
            below = item.indent + (INDENT if item.closes_first else 0)
    return laid


def _starts(frame: _Frame, tokens: list[Token]) -> bool:
    """Whether the line starts a statement of its frame (in brackets: a pipeline's
    `| step`)."""
    if not frame.block and tokens[0].text == "|":
        return True
    return not frame.goes_on and not _goes_on(tokens)


def _goes_on(tokens: list[Token]) -> bool:
    first = tokens[0]
    if first.kind == "name":
        if first.text in _GOES_ON_WORDS:
            return True
        return (first.text in ("rows", "range") and len(tokens) > 1
                and tokens[1].text == "between")
    return first.kind == "op" and first.text in _GOES_ON_OPS


def _continued(last: Token) -> bool:
    if last.kind == "name":
        return last.text in _CONTINUED_WORDS
    return last.kind == "op" and last.text in _CONTINUED_OPS


def _indent(frame: _Frame, tokens: list[Token], starts: bool) -> int:
    if tokens[0].text in _CLOSERS:
        return frame.closer
    if starts:
        return frame.indent
    if frame.after_comma and not _goes_on(tokens):  # the next item of a list
        if not frame.block:
            return frame.indent
        if frame.align is not None:
            return frame.align
    return frame.statement + INDENT


def _walk_brackets(tokens: list[Token], columns: list[int], indent: int,
                   stack: list[_Frame]) -> None:
    for i, tok in enumerate(tokens):
        if tok.kind != "op":
            continue
        if tok.text in _OPENERS:
            if tok.text == "{" or i + 1 == len(tokens):
                inner = indent + INDENT
                stack.append(_Frame(inner, indent, block=tok.text == "{", statement=inner))
            else:
                stack.append(_Frame(columns[i + 1], columns[i], block=False,
                                    statement=columns[i + 1]))
        elif tok.text in _CLOSERS and len(stack) > 1:
            stack.pop()


# ---------------------------------------------------------------- spacing
def _spaced(tokens: list[Token], indent: int) -> tuple[str, list[int], bool]:
    """The line's code from `indent` on, each token's column, and whether its last
    token closes a `list<...>` type (a `>` that ends nothing)."""
    parts: list[str] = []
    columns: list[int] = []
    column = indent
    angle = 0  # inside `list<...>`
    typed = False
    for i, tok in enumerate(tokens):
        typed = False
        prev = tokens[i - 1] if i else None
        if tok.text == "<" and prev is not None and prev.text == "list" and _type_place(tokens, i - 1):
            angle += 1
            joined = True
        elif tok.text == ">" and angle:
            angle -= 1
            joined = typed = True
        else:
            joined = prev is not None and _joined(tokens, i)
        if prev is not None and joined and not _lexes_apart(prev, tok):
            joined = False
        if prev is not None and not joined:
            parts.append(" ")
            column += 1
        columns.append(column)
        parts.append(tok.text)
        column = _advance(column, tok.text)
    return "".join(parts), columns, typed


def _type_place(tokens: list[Token], i: int) -> bool:
    return i > 0 and tokens[i - 1].text in _TYPE_AFTER


def _joined(tokens: list[Token], i: int) -> bool:
    prev, tok = tokens[i - 1], tokens[i]
    if tok.text in (")", "]", ",", ";", ".", ":") or prev.text in ("(", "[", "."):
        return tok.kind == "op" or prev.kind == "op"
    if tok.text == "(":
        return prev.kind == "name" and (prev.text not in keywords() or prev.text in _CALL_KEYWORDS)
    if prev.text == "<" and i >= 2 and tokens[i - 2].text == "list":
        return _type_place(tokens, i - 2)
    return prev.text == "-" and _unary(tokens, i - 1)


def _unary(tokens: list[Token], i: int) -> bool:
    if i == 0:
        return True
    before = tokens[i - 1]
    if before.kind == "op":
        return before.text not in (")", "]", "}")
    return before.kind == "name" and before.text in keywords() and before.text not in (
        "true", "false", "null", "end", "row", "first", "last", "asc", "desc")


def _lexes_apart(prev: Token, tok: Token) -> bool:
    """Whether `prev` written against `tok` still reads as the two tokens (`-` `-1`
    would read as a comment, `1` `.5` as one number)."""
    items = lex(prev.text + tok.text)
    return items == [prev, tok]


def _advance(column: int, text: str) -> int:
    if "\n" in text:  # a string or quoted name over lines: the column of its end
        return len(text) - text.rindex("\n") - 1
    return column + len(text)


# ---------------------------------------------------------------- rendering
def _render(laid: list[_Laid]) -> str:
    blanks = [i > 0 and _blank_before(laid, i, laid[i - 1]) for i in range(len(laid))]
    columns = _comment_columns(laid, blanks)
    out: list[str] = []
    for i, item in enumerate(laid):
        if blanks[i]:
            out.append("")
        out.append(_text(item, columns[i]))
    return "\n".join(out) + "\n" if out else ""


def _blank_before(laid: list[_Laid], i: int, previous: _Laid) -> bool:
    item = laid[i]
    if previous.code.endswith("{") or item.closes_first:
        return False
    if _opens_declaration(laid, i):
        return True
    return item.blank_before


def _opens_declaration(laid: list[_Laid], i: int) -> bool:
    """Line `i` is the first of a top-level declaration's leading comments, or the
    declaration itself when no comment leads it."""
    if not laid[i - 1].code and not laid[i].blank_before:
        return False  # inside a run of comment lines: its first line decides
    j = i
    while j < len(laid) and not laid[j].code:
        j += 1
        if j < len(laid) and laid[j].blank_before:
            return False
    if j == len(laid) or not laid[j].top_level_start:
        return False
    return not _one_of_a_run(laid, j)


def _one_of_a_run(laid: list[_Laid], j: int) -> bool:
    """An `import` right after another keeps to it: a module's imports are one block."""
    if not laid[j].code.startswith("import "):
        return False
    above = next((x for x in reversed(laid[:j]) if x.code), None)
    return above is not None and above.indent == 0 and above.code.startswith("import ")


def _comment_columns(laid: list[_Laid], blanks: list[bool]) -> list[int]:
    """The column of each line's trailing comment: neighbouring code lines with one
    (no blank line between them in the output) share the column after the widest."""
    columns = [0] * len(laid)
    start = 0
    while start < len(laid):
        if not _trailing(laid[start]):
            start += 1
            continue
        end = start
        while end + 1 < len(laid) and _trailing(laid[end + 1]) and not blanks[end + 1]:
            end += 1
        column = max(_width(x) for x in laid[start:end + 1]) + 2
        columns[start:end + 1] = [column] * (end + 1 - start)
        start = end + 1
    return columns


def _trailing(item: _Laid) -> bool:
    return bool(item.code) and item.comment is not None


def _width(item: _Laid) -> int:
    return _advance(item.indent, item.code)


def _text(item: _Laid, comment_column: int) -> str:
    if not item.code:
        return " " * item.indent + (item.comment or "")
    text = " " * item.indent + item.code
    if item.comment is not None:
        text += " " * max(comment_column - _width(item), 2) + item.comment
    return text


# ---------------------------------------------------------------- the guard
def _shape(text: str) -> list[Token | str]:
    """What the layout must keep: tokens, comments, and whether a line break stands
    between two of them."""
    shape: list[Token | str] = []
    for item in lex(text.lstrip("\ufeff")):
        if item == "\n":
            if shape and shape[-1] != "\n":
                shape.append("\n")
        elif item.kind == "comment":
            shape.append(Token("comment", item.text.rstrip()))
        else:
            shape.append(item)
    while shape and shape[0] == "\n":
        shape.pop(0)
    while shape and shape[-1] == "\n":
        shape.pop()
    return shape


def check_same(before: str, after: str, file: str) -> None:
    """E221 unless `after` has `before`'s tokens, comments and line breaks."""
    if _shape(before) != _shape(after):
        raise _changed("its tokens or line breaks", before, 0, file)


def _changed(what: str, text: str, pos: int, file: str = "<string>"):
    line = text.count("\n", 0, pos) + 1
    return fail("E221", f"formatting `{file}` would change {what} (line {line}); the file "
                "is left as it is", None,
                "this is a bug in strata fmt: please report it with the file")
