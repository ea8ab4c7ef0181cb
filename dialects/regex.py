"""The portable regular expressions of regexp_matches, regexp_replace and regexp_extract.

A Strata pattern means what DuckDB's RE2 makes of it. Engines read patterns in other
flavours (PostgreSQL's ARE, Java's java.util.regex on Spark, joni on Trino, POSIX on
Snowflake), so a pattern is a text literal from a subset every one of them can be
told exactly: literal characters (a metacharacter escaped with a backslash), `.`,
classes `[a-z_]` and `[^...]`, `\\d \\w \\s` and their negations, `^` and `$`, groups
`( )` and `(?: )`, `|`, and the quantifiers `? * + {n} {n,} {n,m}`, each possibly
lazy (`*?`). `parse` reads one into tokens, or says what is not portable (E031);
`render` writes the tokens in an engine's flavour with nothing left to its defaults:

- `.` is `[^<newline>]` (RE2's dot; PostgreSQL's matches a newline, Java's stops at
  \\r and U+2028 too);
- `\\d \\w \\s` are RE2's ASCII classes spelled out (`[0-9]`, `[0-9A-Za-z_]`,
  `[\\t\\n\\f\\r ]`): Java and PostgreSQL take Unicode digits or a vertical tab;
- `^ $` are the text's start and end: `\\A \\z` for Java and joni, whose `$` also
  matches before a final newline.

The replacement of regexp_replace is literal text where `\\0` is the match, `\\1`-`\\9`
a group and `\\\\` a backslash (DuckDB's reading); `replacement` tokenizes it.

Which match: RE2, Java and joni take the leftmost match and, from there, the first
alternative and the greediest quantifier in pattern order (Perl's rule). PostgreSQL
and Snowflake are POSIX engines: the leftmost-longest match. The two agree when the
pattern has no `|`, no lazy quantifier and no quantified group (`posix_safe`), which
is what regexp_replace and regexp_extract need there (regexp_matches, whether there is
a match at all, is the same under both rules).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp

from dialects.base import CannotExpress, num

Spelling = Callable[[exp.Expression], exp.Expression]

META = set("\\.^$|?*+()[]{}")
CLASS_META = set("\\]^-[")
SHORTHAND = {"d": "0-9", "w": "0-9A-Za-z_", "s": "\t\n\f\r "}
CONTROL = {"n": "\n", "t": "\t", "r": "\r"}
NEWLINE_FREE = "[^\n]"


@dataclass(frozen=True)
class Token:
    kind: str  # char, any, class, open, close, alt, quant, start, end
    text: str = ""  # char: the character; quant: `*`, `{2,3}`, ...; class: its items
    negated: bool = False  # class: [^...]
    capturing: bool = True  # open
    lazy: bool = False  # quant


@dataclass(frozen=True)
class Pattern:
    tokens: tuple[Token, ...]
    groups: int  # capturing groups

    @property
    def posix_safe(self) -> bool:
        """Do leftmost-first (RE2) and leftmost-longest (POSIX) pick the same match?
        Without alternation, lazy quantifiers and quantified groups they do."""
        for before, token in zip((None, *self.tokens), self.tokens):
            if token.kind == "alt" or (token.kind == "quant" and (
                    token.lazy or (before is not None and before.kind == "close"))):
                return False
        return True


    @property
    def may_match_empty(self) -> bool:
        """Can the pattern match '' (Python's re reads the RE2 rendering alike)?"""
        return re.fullmatch(render(self, RE2), "") is not None


def parse(text: str) -> Pattern | str:
    """The tokens of a pattern, or what in it is not portable."""
    tokens: list[Token] = []
    depth = groups = 0
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            token = _escape(text[i + 1:i + 2], in_class=False)
            if isinstance(token, str):
                return token
            tokens.append(token)
            i += 2
        elif ch == "[":
            end = _class(text, i)
            if isinstance(end, str):
                return end
            token, i = end
            tokens.append(token)
        elif ch == "(":
            if text.startswith("(?:", i):
                tokens.append(Token("open", capturing=False))
                i += 3
            elif text.startswith("(?", i):
                return "has `(?`: only `(?:` groups are portable (no flags, lookaround or names)"
            else:
                groups += 1
                tokens.append(Token("open"))
                i += 1
            depth += 1
        elif ch == ")":
            if depth == 0:
                return "has a `)` without its `(`"
            depth -= 1
            tokens.append(Token("close"))
            i += 1
        elif ch in "?*+{":
            quant = _quantifier(text, i, tokens)
            if isinstance(quant, str):
                return quant
            token, i = quant
            tokens.append(token)
        else:
            kind = {".": "any", "|": "alt", "^": "start", "$": "end"}.get(ch, "char")
            if ch in "]}":
                return f"has a bare `{ch}`: escape it as `\\{ch}`"
            tokens.append(Token(kind, ch))
            i += 1
    if depth:
        return "has a `(` without its `)`"
    return Pattern(tuple(tokens), groups)


def _escape(ch: str, in_class: bool) -> Token | str:
    if not ch:
        return "ends with a lone backslash"
    if ch in CONTROL:
        return Token("char", CONTROL[ch])
    if ch.lower() in SHORTHAND:
        if in_class and ch.isupper():
            return f"has `\\{ch}` inside a class: write the class without it"
        return Token("class", SHORTHAND[ch.lower()], negated=ch.isupper())
    if ch in META or ch in CLASS_META or ch in "/-":
        return Token("char", ch)
    return (f"has `\\{ch}`, not portable: escapes are \\d \\w \\s \\D \\W \\S \\n \\t \\r "
            "and a backslash before a metacharacter")


def _class(text: str, start: int) -> tuple[Token, int] | str:
    """`[...]` from `start`: its items as one text of characters and `a-z` ranges."""
    i = start + 1
    negated = text.startswith("^", i)
    i += negated
    items: list[str] = []  # single characters, or 'a-z'
    while i < len(text) and text[i] != "]":
        ch = text[i]
        if ch == "\\":
            token = _escape(text[i + 1:i + 2], in_class=True)
            if isinstance(token, str):
                return token
            items.extend(_class_items(token))
            i += 2
        elif ch == "[":
            return "has `[` inside a class: escape it as `\\[` (no [:alpha:] classes)"
        elif ch == "-" and items and len(items[-1]) == 1 and i + 1 < len(text) \
                and text[i + 1] != "]":
            high = text[i + 1]
            if high in "\\[":
                return "has a class range ending in an escape: write its last character bare"
            if ord(high) < ord(items[-1]):
                return f"has the range `{items[-1]}-{high}`, which is backwards"
            items[-1] = items[-1] + "-" + high
            i += 2
        else:
            items.append(ch)
            i += 1
    if i >= len(text):
        return "has a `[` without its `]`"
    if not items:
        return "has an empty class `[]`: escape a `]` inside a class as `\\]`"
    return Token("class", "\0".join(items), negated=negated), i + 1


def _class_items(token: Token) -> list[str]:
    if token.kind == "char":
        return [token.text]
    out, text = [], token.text
    while text:  # '0-9A-Za-z_' -> ['0-9', 'A-Z', 'a-z', '_']
        if len(text) >= 3 and text[1] == "-":
            out.append(text[:3])
            text = text[3:]
        else:
            out.append(text[0])
            text = text[1:]
    return out


def _quantifier(text: str, i: int, tokens: list[Token]) -> tuple[Token, int] | str:
    ch = text[i]
    if not tokens or tokens[-1].kind in ("open", "alt", "start", "quant"):
        return f"has `{ch}` with nothing to repeat before it"
    if ch == "{":
        end = text.find("}", i)
        body = text[i + 1:end] if end > 0 else ""
        low, _, high = body.partition(",")
        if not low.isdigit() or (high and not high.isdigit()) or (
                high and int(high) < int(low)) or int(low or 0) > 1000 or int(high or 0) > 1000:
            return "has a `{` that is not a count {n}, {n,} or {n,m} (n, m <= 1000): " \
                   "escape a literal one as `\\{`"
        quant, i = text[i:end + 1], end + 1
    else:
        quant, i = ch, i + 1
    lazy = text.startswith("?", i)
    if lazy:
        i += 1
    if i < len(text) and text[i] in "?*+{":
        return f"has `{text[i]}` right after a quantifier (no possessive or double repeats)"
    return Token("quant", quant, lazy=lazy), i


# ---------------------------------------------------------------- rendering

@dataclass(frozen=True)
class Flavour:
    """How an engine spells the text's start and end."""

    start: str = "^"
    end: str = "$"


RE2 = Flavour()  # also PostgreSQL's ARE and Snowflake: ^ $ at the text's ends only
JAVA = Flavour("\\A", "\\z")  # Java and joni: `$` also before a final newline


def render(pattern: Pattern, flavour: Flavour, keep_group: int | None = None,
           prefix: str = "") -> str:
    """The pattern in `flavour`. `keep_group`: only that group captures (0: the whole
    match, as group 1), for engines that extract the one group of a pattern."""
    out = [prefix]
    if keep_group == 0:
        out.append("(")
    number = 0
    for token in pattern.tokens:
        if token.kind == "open":
            if token.capturing:
                number += 1
            captures = token.capturing and keep_group in (None, number)
            out.append("(" if captures else "(?:")
        else:
            out.append(_token(token, flavour))
    if keep_group == 0:
        out.append(")")
    return "".join(out)


def _token(token: Token, flavour: Flavour) -> str:
    match token.kind:
        case "char":
            return "\\" + token.text if token.text in META else token.text
        case "any":
            return NEWLINE_FREE
        case "class":
            items = "".join(_class_text(item) for item in token.text.split("\0"))
            return "[" + ("^" if token.negated else "") + items + "]"
        case "start":
            return flavour.start
        case "end":
            return flavour.end
        case "close":
            return ")"
        case "alt":
            return "|"
        case _:
            return token.text + ("?" if token.lazy else "")


def _class_text(item: str) -> str:
    if len(item) == 3 and item[1] == "-":
        return _class_char(item[0]) + "-" + _class_char(item[2])
    return _class_char(item)


def _class_char(ch: str) -> str:
    return "\\" + ch if ch in CLASS_META else ch


# ---------------------------------------------------------------- replacements

def replacement(text: str) -> list[tuple[str, str | int]] | str:
    """('text', s) and ('group', n) pieces of a regexp_replace replacement (DuckDB's
    reading: `\\0`-`\\9` a group, `\\\\` a backslash, any other `\\x` is x), or what is
    wrong."""
    out: list[tuple[str, str | int]] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            nxt = text[i + 1:i + 2]
            if not nxt:
                return "ends with a lone backslash (write `\\\\` for one)"
            if nxt.isdigit():
                out.append(("group", int(nxt)))
            elif nxt == "\\":
                out.append(("text", "\\"))
            else:
                return f"has `\\{nxt}`: in a replacement, `\\0`-`\\9` name groups and `\\\\` is a backslash"
            i += 2
            continue
        if out and out[-1][0] == "text":
            out[-1] = ("text", str(out[-1][1]) + ch)
        else:
            out.append(("text", ch))
        i += 1
    return out


# ---------------------------------------------------------------- engine spellings
# The catalogue builds REGEXP_MATCHES(s, p), REGEXP_REPLACE(s, p, r[, 'g']) and
# REGEXP_EXTRACT(s, p, g) as DuckDB spells them (the pattern as written: RE2 is its
# meaning); each other engine gets its spelling here, the pattern rendered for it.

def _parts(node: exp.Expression) -> tuple[exp.Expression, Pattern, list[exp.Expression]]:
    s, p, *rest = node.expressions
    pattern = parse(p.this)
    assert isinstance(pattern, Pattern), pattern  # the checker accepted it
    return s, pattern, rest


def _text(value: str) -> exp.Literal:
    return exp.Literal.string(value)


def _null_kept(s: exp.Expression, value: exp.Expression) -> exp.Expression:
    """'' where the engine's extraction gives NULL for no match; NULL for a NULL text."""
    return exp.Case(ifs=[exp.If(this=exp.Is(this=s.copy(), expression=exp.Null()),
                                true=exp.Null())],
                    default=exp.Coalesce(this=value, expressions=[_text("")]))


def _refuse(engine: str, node: exp.Expression, why: str):
    """E091: the catalogue's nodes are named as the functions (REGEXP_REPLACE, ...)."""
    raise CannotExpress(f"`{node.name.lower()}` on {engine}: {why}")


def _posix(engine: str, node: exp.Expression, pattern: Pattern) -> None:
    if not pattern.posix_safe:
        _refuse(engine, node, "its regular expressions take the longest match, DuckDB's the "
                "first; write the pattern without `|`, lazy quantifiers and repeated groups")


def _pattern(node: exp.Expression, flavour: Flavour, **kw) -> exp.Literal:
    return _text(render(_parts(node)[1], flavour, **kw))


def _empty_matches(engine: str, node: exp.Expression, pattern: Pattern) -> None:
    """Replacing every match of a pattern that can match '': RE2 takes no empty match
    right after a match, PostgreSQL does ('a*b?' on 'a' gives '++' there, '+' in DuckDB),
    Java steps one UTF-16 unit on after one (splitting a character outside the BMP)."""
    if pattern.may_match_empty:
        _refuse(engine, node, "it replaces empty matches otherwise than RE2 (after a match, "
                "or inside a character beyond U+FFFF); use a pattern that cannot match ''")


def matches_by(name: str, flavour: Flavour) -> Spelling:
    """regexp_matches as the engine's `name(s, p)` (REGEXP_CONTAINS, REGEXP_LIKE,
    RLIKE, ...: a match anywhere in the text)."""
    def spell(node: exp.Expression) -> exp.Expression:
        return exp.Anonymous(this=name, expressions=[node.expressions[0],
                                                     _pattern(node, flavour)])
    return spell


def matches_by_operator(flavour: Flavour) -> Spelling:
    """`s ~ p` (PostgreSQL) / `s RLIKE p` (Spark): a match anywhere."""
    def spell(node: exp.Expression) -> exp.Expression:
        return exp.RegexpLike(this=node.expressions[0], expression=_pattern(node, flavour))
    return spell


def matches_by_position(node: exp.Expression) -> exp.Expression:
    """Snowflake: REGEXP_INSTR(s, p) > 0 (its REGEXP_LIKE must match the whole text)."""
    return exp.GT(this=exp.Anonymous(this="REGEXP_INSTR", expressions=[
        node.expressions[0], _pattern(node, RE2)]), expression=exp.Literal.number(0))


# ---- regexp_replace

@dataclass(frozen=True)
class Rewriting:
    """How an engine's replacement text names a group and escapes itself."""

    group: Callable[[int], str]  # group n
    escape: Callable[[str], str]  # literal text
    max_group: int = 99


BACKSLASH = Rewriting(lambda n: "\\" + str(n), lambda t: t.replace("\\", "\\\\"), 9)
DOLLAR = Rewriting(lambda n: "$" + str(n),
                   lambda t: t.replace("\\", "\\\\").replace("$", "\\$"))


def _replacement(engine: str, node: exp.Expression, text: str, rewriting: Rewriting,
                 whole: int, shift: int, first: str = "") -> exp.Literal:
    """The replacement in the engine's syntax: DuckDB's `\\0` is group `whole` and its
    group k is k + shift (the spelling added groups around the pattern); `first`
    leads (the text before the match, kept)."""
    pieces = replacement(text)
    assert not isinstance(pieces, str), pieces
    out = [first]
    for kind, value in pieces:
        if kind == "group":
            number = whole if value == 0 else int(value) + shift
            if number > rewriting.max_group:
                _refuse(engine, node, f"its replacements name groups 1-{rewriting.max_group} "
                        f"only, and group {value} becomes {number} here")
            out.append(rewriting.group(number))
        else:
            literal = rewriting.escape(str(value))
            if out[-1][-1:].isdigit() and literal[:1].isdigit() and rewriting is DOLLAR:
                literal = "\\" + literal  # `$1` then a digit: not group 10-19
            out.append(literal)
    return _text("".join(out))


def _replace_args(node: exp.Expression) -> tuple[exp.Expression, Pattern, str, bool]:
    s, pattern, rest = _parts(node)
    return s, pattern, rest[0].this, len(rest) > 1


def replace_all_or_first(engine: str, flavour: Flavour, rewriting: Rewriting) -> Spelling:
    """An engine whose REGEXP_REPLACE replaces every match (Spark, Trino, BigQuery).
    With 'g': the pattern as one group (DuckDB's \\0). Without: only the first match,
    by anchoring at the text's start a lazy prefix before it -- `\\A([\\s\\S]*?)(p)`
    replaced by the prefix and the replacement -- which matches once, at the
    leftmost match, taking the match DuckDB takes there."""
    def spell(node: exp.Expression) -> exp.Expression:
        s, pattern, text, every = _replace_args(node)
        body = "(" + render(pattern, flavour) + ")"
        if every and flavour is JAVA:
            _empty_matches(engine, node, pattern)
        if every:
            p, r = body, _replacement(engine, node, text, rewriting, 1, 1)
        else:
            p = flavour.start + "([\\s\\S]*?)" + body
            r = _replacement(engine, node, text, rewriting, 2, 2, rewriting.group(1))
        return exp.Anonymous(this="REGEXP_REPLACE", expressions=[s, _text(p), r])
    return spell


def replace_posix(engine: str, every_argument: Callable[[bool], list[exp.Expression]]
                  ) -> Spelling:
    """PostgreSQL's REGEXP_REPLACE(s, p, r[, 'g']) and Snowflake's (s, p, r, 1, 0 or 1):
    first or every match, for a pattern whose longest match is the first."""
    def spell(node: exp.Expression) -> exp.Expression:
        s, pattern, text, every = _replace_args(node)
        _posix(engine, node, pattern)
        if every:
            _empty_matches(engine, node, pattern)
        if engine == "snowflake" and any(kind == "text" and "\\" in str(value)
                                         for kind, value in replacement(text)):
            _refuse(engine, node, "a backslash in the replacement is not read as DuckDB reads it")
        p = _text("(" + render(pattern, RE2) + ")")
        r = _replacement(engine, node, text, BACKSLASH, 1, 1)
        return exp.Anonymous(this="REGEXP_REPLACE", expressions=[s, p, r,
                                                                 *every_argument(every)])
    return spell


# ---- regexp_extract

def _extract_args(node: exp.Expression) -> tuple[exp.Expression, Pattern, int]:
    s, pattern, rest = _parts(node)
    return s, pattern, int(rest[0].this)


def extract_java(node: exp.Expression) -> exp.Expression:
    """Spark's REGEXP_EXTRACT(s, p, g): '' for no match or a group that took no part,
    as DuckDB."""
    s, pattern, group = _extract_args(node)
    return exp.Anonymous(this="REGEXP_EXTRACT", expressions=[
        s, _text(render(pattern, JAVA)), exp.Literal.number(group)])


def extract_or_null(node: exp.Expression) -> exp.Expression:
    """Trino's REGEXP_EXTRACT(s, p, g), NULL for no match: '' there."""
    s, pattern, group = _extract_args(node)
    found = exp.Anonymous(this="REGEXP_EXTRACT", expressions=[
        s, _text(render(pattern, JAVA)), exp.Literal.number(group)])
    return _null_kept(s, found)


def extract_one_group(engine: str) -> Spelling:
    """Engines extracting the one capturing group of a pattern (BigQuery's
    REGEXP_EXTRACT, PostgreSQL's REGEXP_MATCH(..)[1], Snowflake's REGEXP_SUBSTR 'e'):
    every other group made non-capturing, the whole pattern a group for group 0; NULL
    for no match becomes ''."""
    def spell(node: exp.Expression) -> exp.Expression:
        s, pattern, group = _extract_args(node)
        if engine != "bigquery":
            _posix(engine, node, pattern)
        p = _text(render(pattern, RE2, keep_group=group))
        found: exp.Expression
        if engine == "postgres":
            found = exp.Bracket(this=exp.Paren(this=exp.Anonymous(
                this="REGEXP_MATCH", expressions=[s.copy(), p])),
                expressions=[exp.Literal.number(1)], offset=1)
        elif engine == "snowflake":
            found = exp.Anonymous(this="REGEXP_SUBSTR", expressions=[
                s.copy(), p, *map(exp.Literal.number, (1, 1)), _text("e"), exp.Literal.number(1)])
        else:
            found = exp.Anonymous(this="REGEXP_EXTRACT", expressions=[s.copy(), p])
        return _null_kept(s, found)
    return spell


# ---------------------------------------------------------------- the spellings, per engine
def _snowflake_occurrence(every: bool) -> list[exp.Expression]:
    return [num(1), num(0 if every else 1)]  # from position 1; occurrence 0 is every one


def _postgres_flags(every: bool) -> list[exp.Expression]:
    return [exp.Literal.string("g")] if every else []


REGEXP = {  # engine -> the regexp_* spellings (dialects/regex.py)
    "postgres": {"regexp_matches": matches_by_operator(RE2),
                 "regexp_replace": replace_posix("postgres", _postgres_flags),
                 "regexp_extract": extract_one_group("postgres")},
    "spark": {"regexp_matches": matches_by_operator(JAVA),
              "regexp_replace": replace_all_or_first("spark", JAVA, DOLLAR),
              "regexp_extract": extract_java},
    "snowflake": {"regexp_matches": matches_by_position,
                  "regexp_replace": replace_posix("snowflake", _snowflake_occurrence),
                  "regexp_extract": extract_one_group("snowflake")},
    "bigquery": {"regexp_matches": matches_by("REGEXP_CONTAINS", RE2),
                 "regexp_replace": replace_all_or_first("bigquery", RE2, BACKSLASH),
                 "regexp_extract": extract_one_group("bigquery")},
    "trino": {"regexp_matches": matches_by("REGEXP_LIKE", JAVA),
              "regexp_replace": replace_all_or_first("trino", JAVA, DOLLAR),
              "regexp_extract": extract_or_null},
}
