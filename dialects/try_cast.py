"""`try_cast(text as int|bool)` where the engine reads text otherwise than DuckDB: the
forms DuckDB accepts as patterns, tested before the engine converts.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from dialects.base import cast, num
from dialects.regex import REGEXP
from dialects.spelling import TAG, Spelling, case

# DuckDB's text -> BIGINT forms (its TRY_CAST is NULL on anything else): ASCII
# whitespace around (before a hex or binary number only), digits grouped by single
# underscores, a sign, a fraction (rounded half away from zero), an exponent
_WS = "[ \t\n\r\x0b\x0c]*"
_DIGITS = "[0-9](?:_?[0-9])*"
INT_DECIMAL = (f"^{_WS}[+-]?(?:{_DIGITS}(?:\\.(?:{_DIGITS})?)?|\\.{_DIGITS})"
               f"(?:[eE][+-]?{_DIGITS})?{_WS}$")
INT_HEX = f"^{_WS}0[xX][0-9a-fA-F](?:_?[0-9a-fA-F])*$"
INT_BINARY = f"^{_WS}0[bB][01](?:_?[01])*$"
INT64 = (-(2 ** 63), 2 ** 63 - 1)
TRUE_WORDS = ("true", "t", "yes", "y", "1")
FALSE_WORDS = ("false", "f", "no", "n", "0")


def _matches(engine: str, s: exp.Expression, pattern: str) -> exp.Expression:
    """`s` matches `pattern` (the portable subset), spelled for `engine`."""
    node = exp.Anonymous(this="REGEXP_MATCHES", expressions=[s.copy(), exp.Literal.string(pattern)])
    node.meta[TAG] = "regexp_matches"
    return REGEXP[engine]["regexp_matches"](node)


def _in_words(s: exp.Expression, words: tuple[str, ...]) -> exp.Expression:
    return exp.In(this=exp.Lower(this=s.copy()),
                  expressions=[exp.Literal.string(w) for w in words])


def try_bool(node: exp.Expression) -> exp.Expression:
    """DuckDB's words, in any case and without spaces; NULL for anything else."""
    s = node.this
    return case((_in_words(s, TRUE_WORDS), exp.true()), (_in_words(s, FALSE_WORDS), exp.false()))


def _within_int64(value: exp.Expression) -> exp.Expression:
    return exp.Between(this=value, low=exp.Literal.number(INT64[0]),
                       high=exp.Literal.number(INT64[1]))


def _digits_of(s: exp.Expression) -> exp.Expression:
    """The digits of a hex or binary text: after the whitespace and `0x`, without
    underscores and leading zeros ('' for zero)."""
    body = exp.Replace(this=exp.Trim(this=s.copy(), expression=exp.Literal.string(" \t\n\r\x0b\x0c"),
                                     position="LEADING"),
                       expression=exp.Literal.string("_"), replacement=exp.Literal.string(""))
    rest = exp.Substring(this=body, start=num(3))
    return exp.Trim(this=rest, expression=exp.Literal.string("0"), position="LEADING")


def _radix_fits(digits: exp.Expression, width: int, top: str) -> exp.Expression:
    """At most 2^63 - 1: fewer than `width` digits, or `width` of them the first at
    most `top` (hex: 16 digits up to 7fff...; binary: 63 digits, top '1')."""
    return exp.Or(this=exp.LT(this=exp.Length(this=digits.copy()), expression=num(width)),
                  expression=exp.And(
        this=exp.EQ(this=exp.Length(this=digits.copy()), expression=num(width)),
        expression=exp.LTE(this=exp.Substring(this=digits.copy(), start=num(1), length=num(1)),
                           expression=exp.Literal.string(top))))


TryInt = Callable[[exp.Expression], exp.Expression]


def try_int(engine: str, rounded: TryInt, from_hex: TryInt, from_binary: TryInt) -> Spelling:
    """try_cast(text as int) as DuckDB: each accepted form by its pattern, then the
    value (`rounded`: the decimal text rounded half away from zero, NULL when no
    number; `from_hex`, `from_binary`: the digits' value) inside int64, else NULL."""
    def spell(node: exp.Expression) -> exp.Expression:
        if not node.to.is_type("BIGINT"):
            return try_bool(node)
        s = node.this
        plain = exp.Replace(this=s.copy(), expression=exp.Literal.string("_"),
                            replacement=exp.Literal.string(""))
        value = rounded(plain)
        hexes, bits = _digits_of(s), _digits_of(s)
        return case(
            (_matches(engine, s, INT_DECIMAL),
             case((_within_int64(value), cast(value.copy(), "BIGINT")))),
            (_matches(engine, s, INT_HEX),
             case((_radix_fits(hexes, 16, "7"), from_hex(hexes.copy())))),
            (_matches(engine, s, INT_BINARY),
             case((_radix_fits(bits, 63, "1"), from_binary(bits.copy())))))
    return spell


def pg_rounded(text: exp.Expression) -> exp.Expression:
    return exp.Round(this=cast(text, "DECIMAL"))


def pg_bits(hex_digits: bool) -> TryInt:
    """PostgreSQL: the digits as a 64-bit BIT string, read as a BIGINT."""
    def value(digits: exp.Expression) -> exp.Expression:
        padded = exp.Pad(this=digits, expression=num(16 if hex_digits else 64),
                         fill_pattern=exp.Literal.string("0"), is_left=True)
        if hex_digits:
            padded = exp.DPipe(this=exp.Literal.string("x"), expression=padded, safe=True)
        return cast(cast(padded, exp.DataType.build("BIT(64)", dialect="postgres")), "BIGINT")
    return value


def spark_rounded(text: exp.Expression) -> exp.Expression:
    """Spark: the text as DECIMAL(38, 0) (rounding half up, Java's BigDecimal;
    NULL past 38 digits)."""
    return exp.TryCast(this=text, to=exp.DataType.build("DECIMAL(38, 0)"), safe=True)


def spark_conv(base: int) -> TryInt:
    def value(digits: exp.Expression) -> exp.Expression:
        converted = exp.Anonymous(this="CONV", expressions=[
            exp.Concat(expressions=[exp.Literal.string("0"), digits]), num(base), num(10)])
        return cast(converted, "BIGINT")
    return value
