"""A syntax error as a diagnostic a person can act on: what the parser expected, in
words (`a name`, `end of file`), and the SQL habits Strata answers with its own
spelling (`LEFT JOIN` is `join_left`, `VARCHAR` is `text`).
"""

from __future__ import annotations

import re

from lark import Token
from lark.exceptions import (
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
)

from strata.diagnostics import Diagnostic, Span

_EXPECT_WORDS = {
    "NAME": "a name", "STRING": "a string", "NUMBER": "a number",
    "INT": "a whole number", "_SEP": "a new line", "LBRACE": "`{`", "RBRACE": "`}`",
    "LPAR": "`(`", "RPAR": "`)`", "LSQB": "`[`", "RSQB": "`]`", "COMMA": "`,`", "COLON": "`:`",
    "EQ": "`=`", "DOT": "`.`", "$END": "end of file", "MINUS": "`-`", "PLUS": "`+`",
    "STAR": "`*`", "SLASH": "`/`", "PERCENT": "`%`", "CONCAT": "`||`",
    "CMP_OP": "a comparison", "ROWS_OP": "`>=`, `<=` or `=`",
}
# Where any expression may start, say so instead of listing its first tokens.
_EXPRESSION_START = {"NAME", "NUMBER", "STRING", "LPAR"}
_EXPRESSION_TOKENS = _EXPRESSION_START | {"LSQB", "MINUS", "NOT", "CASE", "CAST",
                                          "TRY_CAST", "EXTRACT", "TRUE", "FALSE", "NULL"}


def _describe_expected(expected: set[str]) -> str:
    expected = set(expected)
    prefix = []
    if _EXPRESSION_START <= expected:
        expected -= _EXPRESSION_TOKENS
        prefix = ["an expression"]
    words = prefix + sorted({_EXPECT_WORDS.get(e, f"`{e.lower()}`") for e in expected
                             if not e.startswith("__")})
    if not words:
        return ""
    if len(words) > 8:
        words = words[:8] + ["..."]
    return "expected " + ", ".join(words)


def _whole_word(text: str, tok: Token) -> str:
    """The token's text, or the whole word it starts: after an unexpected token the
    lexer may have cut a keyword off a longer name (`in` of `int`)."""
    word = str(tok)
    end = getattr(tok, "end_pos", None)
    if word[-1:].isalnum() or word.endswith("_"):
        while end is not None and end < len(text) and (text[end].isalnum() or text[end] == "_"):
            word += text[end]
            end += 1
    return word


def _acceptable(err: UnexpectedToken) -> set[str]:
    """What the parser could take at the error: exact from the parser state (LALR's
    `expected` merges look-aheads of unrelated rules), else Lark's estimate."""
    try:
        return set(err.interactive_parser.accepts())
    except Exception:  # noqa: BLE001  only a hint: never fail the diagnostic over it
        return set(err.expected)


def syntax_diagnostic(file: str, text: str, err: UnexpectedInput) -> Diagnostic:
    line = getattr(err, "line", 1) or 1
    column = getattr(err, "column", 1) or 1
    if line < 1:
        lines = text.splitlines() or [""]
        line, column = len(lines), len(lines[-1]) + 1
    if isinstance(err, UnexpectedCharacters):
        ch = text[err.pos_in_stream] if err.pos_in_stream < len(text) else ""
        span = Span(file, line, column, line, column + 1)
        if ch in ("'", "`"):
            what = "string" if ch == "'" else "quoted identifier"
            return Diagnostic("E003", f"unterminated {what}", span,
                              f"close it with {ch} on the same line")
        shown = repr(ch) if not ch.isprintable() or ch == " " else f"`{ch}`"
        return Diagnostic("E001", f"unexpected character {shown}", span,
                          _describe_expected(set(err.allowed or ())) or None)
    if isinstance(err, UnexpectedToken):
        tok = err.token
        if tok.type == "$END":
            lines = text.splitlines() or [""]
            line, column = max(1, len(lines)), len(lines[-1]) + 1 if lines else 1
            span = Span(file, line, column, line, column + 1)
            return Diagnostic("E001", "unexpected end of file", span,
                              _describe_expected(_acceptable(err)) or None)
        habit = _sql_habit(file, text, tok)
        if habit is not None:
            return habit
        word = _whole_word(text, tok)
        width = max(1, len(word)) if tok.type != "_SEP" else 1
        span = Span(file, tok.line, tok.column, tok.line, tok.column + width)
        shown = "end of line" if tok.type == "_SEP" else f"`{word}`"
        return Diagnostic("E001", f"unexpected {shown}", span,
                          _describe_expected(_acceptable(err)) or None)
    if isinstance(err, UnexpectedEOF):
        lines = text.splitlines() or [""]
        span = Span(file, len(lines), len(lines[-1]) + 1, len(lines), len(lines[-1]) + 2)
        return Diagnostic("E001", "unexpected end of file", span,
                          _describe_expected(set(err.expected)) or None)
    return Diagnostic("E001", "syntax error", Span(file, line, column, line, column + 1))


# SQL (dbt) spellings that end in a syntax error, matched on the line of the error:
# (pattern, code, message, hint). The hint shows the Strata spelling.
_JOIN_WORDS = {"left": "join_left", "inner": "join", "full": "join_full", "cross": "join_cross",
               "right": "join_left (with the sides swapped)"}
_SQL_HABITS = (
    (re.compile(r"::\s*(?P<type>[A-Za-z_]\w*(?:\s*\([\d,\s]*\))?)"), "E107",
     "`::` is not a cast in Strata", "write `cast(x as {type})`"),
    (re.compile(r"\bover\s*\(", re.IGNORECASE), "E108",
     "`over (...)` is SQL's window clause; in Strata a window is a step",
     ("`window by customer_id order ordered_at` on one line, then "
     "`derive n = row_number()` on the next")),
    (re.compile(r"\bcount\s*\(\s*distinct\b", re.IGNORECASE), "E109",
     "`count(distinct x)` is SQL's spelling", "write `count_distinct(x)`"),
    (re.compile(r"^\s*(?P<side>left|right|inner|full|cross)\s+(?:outer\s+)?join\b",
                re.IGNORECASE), "E106", "`{side} join` is SQL's spelling of a join",
     "write `{join} X on ...`"),
    (re.compile(r"^\s*join_cross\b.*\bon\b", re.IGNORECASE), "E112",
     "a cross join has no condition: `join_cross` pairs every row with every row",
     ("write `join X on ...` to match rows (or `join many X on ...` when a row may match "
      "several), or drop the `on ...`")),
    (re.compile(r"\bwith\s+recursive\b", re.IGNORECASE), "E188",
     "`with recursive` is SQL's recursive query; Strata has no recursive relations",
     ("each model's rows are computed once from relations that do not depend on them: join "
      "a relation to itself as many times as a hierarchy is deep, or count with "
      "`range(a, b, step)`")),
    (re.compile(r"^\s*where\b", re.IGNORECASE), "E106", "`where` is SQL's spelling",
     "write `filter <condition>`"),
    (re.compile(r"^\s*order\s+by\b", re.IGNORECASE), "E106", "`order by` is SQL's spelling",
     "write `sort x desc, y` (and `take N` to keep the first N rows)"),
    (re.compile(r"^\s*limit\b", re.IGNORECASE), "E106", "`limit` is SQL's spelling",
     "write `sort x` then `take N` (take keeps the first N rows of a sort)"),
    (re.compile(r"^\s*group\s+by\b", re.IGNORECASE), "E106", "`group by` is SQL's spelling",
     "write `group k1, k2` and, on the next line, `aggregate n = count()`"),
    (re.compile(r"^\s*having\b", re.IGNORECASE), "E106", "`having` is SQL's spelling",
     "write `filter <condition>` after `aggregate`"),
    (re.compile(r"^\s*qualify\b", re.IGNORECASE), "E106", "`qualify` is SQL's spelling",
     "write `filter <condition>` after the `derive` of a `window` step"),
    (re.compile(r"^\s*union\s+all\b", re.IGNORECASE), "E106", "`union all` is SQL's spelling",
     "write `union X` (keeps duplicates; `union_distinct X` removes them)"),
    (re.compile(r"^\s*select\b.*\bfrom\b", re.IGNORECASE), "E106",
     "`select ... from` is SQL's spelling; in Strata `from` is a step of its own",
     "write `from X` on one line and `select a, b` (or `select *`) on a later one"),
)


def _sql_habit(file: str, text: str, tok: Token) -> Diagnostic | None:
    """A coded error pointing to the Strata spelling when the line of a syntax error
    is SQL as dbt projects write it (`left join`, `where`, `x::int`, `over (...)`)."""
    if tok.line is None or tok.type == "$END":
        return None
    lines = text.splitlines()
    if not 0 < tok.line <= len(lines):
        return None
    line = lines[tok.line - 1]
    for pattern, code, message, hint in _SQL_HABITS:
        found = pattern.search(line)
        if found is None:
            continue
        words = {k: (v or "").strip().lower() for k, v in found.groupdict().items()}
        if "side" in words:
            words["join"] = _JOIN_WORDS[words["side"]]
        if "type" in words:
            words["type"] = _strata_type(words["type"])
        start = found.start() + len(line[found.start():]) - len(line[found.start():].lstrip())
        span = Span(file, tok.line, start + 1, tok.line, found.end() + 1)
        return Diagnostic(code, message.format(**words), span, hint.format(**words))
    return None


def _strata_type(sql_type: str) -> str:
    """A SQL type name as Strata spells it, for the hint of `x::numeric(16,2)`."""
    name, _, args = sql_type.partition("(")
    name = name.strip()
    names = {"numeric": "decimal", "integer": "int", "bigint": "int", "varchar": "text",
             "string": "text", "boolean": "bool", "float": "double", "datetime": "timestamp"}
    name = names.get(name, name)
    if args:
        parts = [a.strip() for a in args.rstrip(")").split(",") if a.strip()]
        return f"{name}({', '.join(parts)})"
    return "decimal(18, 3)" if name == "decimal" else name
