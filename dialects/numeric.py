"""DuckDB's number semantics spelled for engines that mean something else.

DuckDB (Strata's meaning, SPEC §2) computes in IEEE doubles where other engines
raise: `1 / 0` is Infinity, `0 / 0` NaN, `x % 0.0` NaN. Its `round(x, n)` of a
double and its cast of a double to `decimal(p, s)` scale the double by 10^n and
round the scaled double, each in its own way; its cast of text to an integer reads
the text as a decimal and rounds it; its text booleans are a fixed word list. The
rewrites here spell each of those with operations every engine computes exactly
(double arithmetic, comparisons, CASE), so the rows are DuckDB's bit for bit.

PostgreSQL raises on a double overflow or underflow (`1e308 * 10`, `5e-324 / 10`)
instead of giving inf or 0: every formula below keeps its intermediate values in
range or tests the range first, in a CASE branch (CASE evaluates in order).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp

from dialects.base import CannotExpress, cast, is_a, num
from dialects.base import int_literal as _int_literal
from dialects.binding import Bind, bind_by_lambda, bind_by_subquery  # noqa: F401 (re-exported)

DBL_MAX = 1.7976931348623157e308
TWO52 = 4503599627370496.0  # from here on every double is a whole number
SPLIT = 134217729.0  # 2^27 + 1: Veltkamp's split of a double into two 26-bit halves
# x * m overflows exactly when x * m / 64 rounds to 2^1018 or more: the overflow
# threshold 2^1024 - 2^970 (halfway to 2^1024) scaled by 2^-6 rounds to 2^1018
OVERFLOW_SCALED = 2.0 ** 1018


def double(value: str) -> exp.Cast:
    """A double constant by its text: 'Infinity', '-Infinity', 'NaN' (PostgreSQL,
    Spark and Snowflake all read these)."""
    return cast(exp.Literal.string(value), "DOUBLE")


def dnum(value: float) -> exp.Expression:
    """A double as a literal that reads back as exactly this double."""
    literal = exp.Literal.number(repr(value)) if value >= 0 else None
    return literal if literal is not None else exp.Neg(this=exp.Literal.number(repr(-value)))


def _case(*arms: tuple[exp.Expression, exp.Expression], default: exp.Expression) -> exp.Case:
    return exp.Case(ifs=[exp.If(this=c, true=v) for c, v in arms], default=default)


def _paren(x: exp.Expression) -> exp.Expression:
    if isinstance(x, (exp.Column, exp.Literal, exp.Func, exp.Paren, exp.Cast, exp.Case)):
        return x
    return exp.Paren(this=x)


def _mul(a, b):
    return exp.Mul(this=_paren(a), expression=_paren(b))


def _div(a, b):
    return exp.Div(this=_paren(a), expression=_paren(b), typed=True)


def _add(a, b):
    return exp.Add(this=_paren(a), expression=_paren(b))


def _sub(a, b):
    return exp.Sub(this=_paren(a), expression=_paren(b))


def not_finite(x: exp.Expression) -> exp.Expression:
    """x is ±Infinity or NaN: PostgreSQL and Spark order NaN above Infinity."""
    return exp.GTE(this=exp.Abs(this=x), expression=double("Infinity"))


# ---------------------------------------------------------------- division

def ieee_division(node: exp.Expression) -> exp.Expression:
    """Strata's `/` divides doubles (every operand type) and a zero divisor gives
    IEEE's answer, as in DuckDB: ±Infinity by the signs of both operands (a -0.0
    divisor flips it; its text starts with '-'), NaN for 0 / 0 or NaN / 0. Engines
    that raise on a zero divisor divide only a nonzero one."""
    if not isinstance(node, exp.Div) or node.args.get("typed"):
        return node
    a, b = _as_double(node.this), _as_double(node.expression)
    if _nonzero_number(node.expression):  # `x / 100`: no zero to meet
        return exp.Div(this=a, expression=b, typed=True)
    first = exp.Substring(this=cast(b.copy(), "TEXT"), start=num(1), length=num(1))
    toward = _case((exp.EQ(this=first, expression=exp.Literal.string("-")),
                    double("-Infinity")), default=double("Infinity"))
    at_zero = _mul(exp.Sign(this=a.copy()), toward)  # SIGN(NaN) * inf is NaN, as 0 * inf
    return _case((exp.EQ(this=b.copy(), expression=num(0)), at_zero),
                 default=exp.Div(this=a, expression=b, typed=True))


def _nonzero_number(x: exp.Expression) -> bool:
    """A numeric literal other than zero (-0.0 is zero), cast or negated alike."""
    while isinstance(x, (exp.Cast, exp.Paren, exp.Neg)):
        x = x.this
    if not isinstance(x, exp.Literal) or x.is_string:
        return False
    try:
        return float(x.this) != 0.0
    except ValueError:
        return False


def _as_double(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.Cast) and node.to.is_type("DOUBLE"):
        return node
    return cast(node.this if isinstance(node, exp.Paren) else node, "DOUBLE")


def ieee_divide_function(node: exp.Expression) -> exp.Expression:
    """BigQuery's IEEE_DIVIDE is DuckDB's `/` (Infinity, NaN on a zero divisor)."""
    if not isinstance(node, exp.Div) or node.args.get("typed"):
        return node
    return exp.Anonymous(this="IEEE_DIVIDE", expressions=[
        _as_double(node.this), _as_double(node.expression)])


# ---------------------------------------------------------------- remainder

def _double_mod(node: exp.Expression) -> bool:
    return isinstance(node, exp.Mod) and (is_a(node.this.unnest(), "DOUBLE")
                                          or is_a(node.expression.unnest(), "DOUBLE"))


def nan_remainder(node: exp.Expression) -> exp.Expression:
    """`a % b` of doubles is C's fmod in DuckDB and NaN for b = 0; an engine whose
    `%` of doubles is fmod but raises on zero (Spark) gets NaN written out. (An
    integer or decimal `% 0` raises in DuckDB as in the engines: a failed run.)"""
    if not _double_mod(node) or node.args.get("typed"):
        return node
    a, b = _as_double(node.this), _as_double(node.expression)
    nan = _add(a.copy(), double("NaN"))  # NULL for a NULL a
    return _case((exp.EQ(this=b.copy(), expression=num(0)), nan),
                 default=exp.Mod(this=_paren(a), expression=_paren(b), typed=True))


def no_double_remainder(node: exp.Expression) -> exp.Expression:
    """PostgreSQL has no `%` for doubles, and its double -> numeric cast keeps 15
    digits, so no spelling gives fmod's exact remainder: E091."""
    if _double_mod(node):
        raise CannotExpress("`%` of a double (DuckDB's exact fmod) has no PostgreSQL "
                            "spelling; cast the operands to a decimal first")
    return node


# ---------------------------------------------------------------- round(x, n)

@dataclass(frozen=True)
class Rounding:
    """How an engine spells the whole part of a double below 2^52 in magnitude, and
    how it names a value once (the formulas read x many times)."""

    trunc: Callable[[exp.Expression], exp.Expression]
    bind: Bind

    def rewrite(self, node: exp.Expression) -> exp.Expression:
        """round(x[, n]) of a double with DuckDB's result bit for bit."""
        if not isinstance(node, exp.Round) or not is_a(node.this, "DOUBLE"):
            return node
        return self.bind(node.this, lambda x: self._round(x, node.args.get("decimals")))

    def _round(self, x: exp.Expression, digits: exp.Expression | None) -> exp.Expression:
        if digits is None:
            return self.c_round(x)
        n = _int_literal(digits)
        if n is not None:
            return self.with_digits(x, n, None)
        return _case((exp.GTE(this=digits, expression=num(0)), self.with_digits(x, 0, digits)),
                     default=self.with_digits(x, -1, digits))

    # DuckDB: round(x) is C's round (halves away from zero) unless x is not finite
    def c_round(self, x: exp.Expression) -> exp.Expression:
        return _case((not_finite(x.copy()), x.copy()), default=self._half_away(x))

    def _half_away(self, s: exp.Expression, tie: exp.Expression | None = None
                   ) -> exp.Expression:
        """s rounded half away from zero (s finite); at an exact half `tie`, when
        given, decides between away (true) and toward zero."""
        t = self.trunc(s.copy())
        fraction = exp.Abs(this=_sub(s.copy(), t.copy()))
        up = _add(t.copy(), exp.Sign(this=s.copy()))
        arms = [(exp.GT(this=fraction, expression=num(0.5)), up)]
        if tie is not None:
            arms.append((exp.LT(this=fraction.copy(), expression=num(0.5)), t.copy()))
            arms.append((tie, up.copy()))
        else:
            arms.append((exp.EQ(this=fraction.copy(), expression=num(0.5)), up.copy()))
        small = _case(*arms, default=t)
        return _case((exp.GTE(this=exp.Abs(this=s.copy()), expression=dnum(TWO52)), s.copy()),
                     default=small)

    def with_digits(self, x: exp.Expression, n: int, digits: exp.Expression | None
                    ) -> exp.Expression:
        """DuckDB's round(x, n): m = 10^n; n >= 0: C round of x * m, except that a
        scaled value exactly halfway goes by the exact product (2.675 * 100 is 267.5
        as a double but 267.4999.. exactly: 2.67), then / m; x when x * m overflows.
        n < 0: C round of x / m, then * m; 0 when m overflows, x when the result
        does. (Derived from DuckDB 2.0 on 60,000 random doubles and digits.)
        `digits` None: n is that literal; else the digits expression (n's sign)."""
        if digits is None and n > 308:
            return x.copy()  # m is Infinity: DuckDB returns x
        if digits is None and n < -308:
            return _case((not_finite(x.copy()), x.copy()), default=_zero(x))
        m = (dnum(10.0 ** abs(n)) if digits is None else
             exp.Pow(this=cast(num(10), "DOUBLE"),
                     expression=digits.copy() if n >= 0 else exp.Neg(this=_paren(digits.copy()))))
        arms = [(not_finite(x.copy()), x.copy())]
        if digits is not None:
            limit = exp.GT(this=digits.copy() if n >= 0 else exp.Neg(this=_paren(digits.copy())),
                           expression=num(308))
            arms.insert(0, (exp.Is(this=digits.copy(), expression=exp.Null()), exp.null()))
            arms.append((limit, x.copy() if n >= 0 else _zero(x)))
        if n >= 0:
            return _case(*arms, *self._scaled_up(x, m), default=self._up(x, m))
        return _case(*arms, *self._scaled_down(x, m), default=self._down(x, m))

    def _scaled_up(self, x, m):
        """x * m overflows (DuckDB then returns x): tested without overflowing. For
        |x| >= 1, |x| / 16 > MAX / m surely overflows; otherwise |x| / 64 * m is in
        range and meets the scaled threshold exactly when x * m overflows."""
        ax = exp.Abs(this=x.copy())
        overflow = _case((exp.LT(this=ax, expression=num(1)), exp.false()),
                         (exp.GT(this=_div(ax.copy(), num(16)),
                                 expression=_div(dnum(DBL_MAX), m.copy())), exp.true()),
                         default=exp.GTE(this=_mul(_div(ax.copy(), num(64)), m.copy()),
                                         expression=dnum(OVERFLOW_SCALED)))
        return [(overflow, x.copy())]

    def _up(self, x, m):
        s = _mul(x.copy(), m.copy())
        return _div(self._half_away(s, tie=_exact_side(x, m, s)), m.copy())

    def _scaled_down(self, x, m):
        """|x| < m / 4: x / m rounds to ±0 (and x / m could underflow)."""
        small = exp.LT(this=exp.Abs(this=x.copy()), expression=_mul(num(0.25), m.copy()))
        return [(small, _mul(cast(num(0), "DOUBLE"), x.copy()))]

    def _down(self, x, m):
        r = self._half_away(_div(x.copy(), m.copy()))
        overflow = exp.GTE(this=_mul(_div(exp.Abs(this=r.copy()), num(64)), m.copy()),
                           expression=dnum(OVERFLOW_SCALED))
        return _case((overflow, x.copy()), default=_mul(r, m.copy()))


def _zero(x: exp.Expression) -> exp.Expression:
    """0.0, or NULL for a NULL x."""
    return _mul(exp.Abs(this=x.copy()), cast(num(0), "DOUBLE"))


def _exact_side(x: exp.Expression, m: exp.Expression, s: exp.Expression) -> exp.Expression:
    """Is the exact product x * m at least as far from zero as its rounding s? Dekker's
    product error (x and m split into 26-bit halves; each partial product exact):
    e = x * m - s exactly, and the answer is sign(e) * sign(s) >= 0."""
    xh, xl = _split(x)
    if isinstance(m, exp.Literal):
        mv = float(m.this)
        mh_v = mv * SPLIT - (mv * SPLIT - mv)
        mh, ml = dnum(mh_v), (dnum(mv - mh_v) if mv != mh_v else None)
    else:
        mh, ml = _split(m)
    error = _sub(_mul(xh.copy(), mh.copy()), s.copy())
    if ml is not None:
        error = _add(_add(error, _mul(xh.copy(), ml.copy())), _mul(xl.copy(), mh.copy()))
        error = _add(error, _mul(xl, ml))
    else:
        error = _add(error, _mul(xl, mh))
    return exp.GTE(this=_mul(exp.Sign(this=error), exp.Sign(this=s.copy())),
                   expression=num(0))


def _split(x: exp.Expression) -> tuple[exp.Expression, exp.Expression]:
    """Veltkamp: x = hi + lo exactly, hi and lo of at most 26 significant bits."""
    c = _mul(x.copy(), dnum(SPLIT))
    hi = _sub(c, _sub(c.copy(), x.copy()))
    return hi, _sub(x.copy(), hi.copy())


def trunc_function(x: exp.Expression) -> exp.Expression:
    return exp.Trunc(this=x)


def trunc_by_bigint(x: exp.Expression) -> exp.Expression:
    """Below 2^52 a BIGINT cast truncates exactly (Spark has no TRUNC of a number)."""
    return cast(x, "BIGINT")


# ---------------------------------------------------------------- casts

def _cast_of(node: exp.Expression, source: str, *targets: str) -> bool:
    return (isinstance(node, exp.Cast) and node.to.is_type(*targets)
            and is_a(node.this, source) and not node.args.get("exact"))


def decimal_literal(text: str) -> exp.Expression:
    """A decimal constant where the engine reads `0.01` as a decimal (PostgreSQL,
    Spark, Trino): the literal itself."""
    return exp.Literal.number(text)


def numeric_text(text: str) -> exp.Expression:
    """A decimal constant where the engine reads `0.01` as a double (BigQuery's
    FLOAT64): the text cast to NUMERIC, exact."""
    return cast(exp.Literal.string(text), "DECIMAL")


def double_to_decimal(rounding: Rounding,
                      constant: Callable[[str], exp.Expression] = decimal_literal) -> Callable:
    """cast(x as decimal(p, s)) of a double in DuckDB: x * 10^s as a double, rounded
    half away from zero (1.005 * 100 = 100.4999.. -> 1.00; 0.125 * 100 = 12.5 ->
    0.13). Engines round the double's decimal text instead (Spark: 1.005 -> 1.01).
    Spelled: the rounded double as a BIGINT (exact; a scaled value past 2^63 raises
    there instead of rounding differently), times 10^-s as a decimal."""
    def rewrite(node: exp.Expression) -> exp.Expression:
        if not _cast_of(node, "DOUBLE", "DECIMAL"):
            return node
        expressions = node.to.expressions
        scale = int(expressions[1].name) if len(expressions) > 1 else 0
        scaled = _mul(node.this, dnum(10.0 ** scale))
        rounded = rounding.bind(scaled, rounding._half_away)
        whole = cast(cast(rounded, "BIGINT"), exp.DataType.build("DECIMAL(19, 0)"))
        value = whole if scale == 0 else _mul(whole, constant("0." + "0" * (scale - 1) + "1"))
        result = cast(value, node.to)
        result.set("exact", True)
        return result
    return rewrite


def text_to_int(decimal: str) -> Callable[[exp.Expression], exp.Expression]:
    """cast(s as int) reads s as a decimal and rounds half away from zero in DuckDB
    ('2.5' -> 3, '1e3' -> 1000, ' 12 ' -> 12); PostgreSQL and Spark refuse a
    fraction or an exponent. Spelled: the text as `decimal`, ROUND (halves away),
    then BIGINT (past int64 raises, as in DuckDB)."""
    def rewrite(node: exp.Expression) -> exp.Expression:
        if not _cast_of(node, "TEXT", "BIGINT") and not _cast_of(node, "VARCHAR", "BIGINT"):
            return node
        result = cast(exp.Round(this=cast(node.this, exp.DataType.build(decimal))), node.to)
        result.set("exact", True)
        return result
    return rewrite


TRUE_WORDS = ("true", "t", "yes", "y", "1")
FALSE_WORDS = ("false", "f", "no", "n", "0")


def text_to_bool(node: exp.Expression) -> exp.Expression:
    """DuckDB reads a boolean from exactly these words, in any case, without spaces,
    and raises on anything else; PostgreSQL also takes 'on', ' true ', prefixes
    ('tr'), Spark spaces. Spelled as the word lists, and anything else cast with a
    suffix no engine reads as a boolean, so it raises as in DuckDB."""
    if not (_cast_of(node, "TEXT", "BOOLEAN") or _cast_of(node, "VARCHAR", "BOOLEAN")):
        return node
    word = exp.Lower(this=node.this.copy())
    bad = exp.DPipe(this=_paren(node.this.copy()), expression=exp.Literal.string(
        " is not a boolean"), safe=True)
    fail = cast(bad, "BOOLEAN")
    fail.set("exact", True)
    return _case((exp.In(this=word, expressions=[exp.Literal.string(w) for w in TRUE_WORDS]),
                  exp.true()),
                 (exp.In(this=word.copy(), expressions=[exp.Literal.string(w)
                                                        for w in FALSE_WORDS]), exp.false()),
                 default=fail)


# ---------------------------------------------------------------- text

def _at_least(x: exp.Expression, low: exp.Expression) -> exp.Expression:
    """max(x, low), NULL for a NULL x (GREATEST skips NULLs on PostgreSQL and Spark)."""
    return _case((exp.LT(this=x.copy(), expression=low.copy()), low), default=x)


def _at_most(x: exp.Expression, high: exp.Expression) -> exp.Expression:
    return _case((exp.GT(this=x.copy(), expression=high.copy()), high), default=x)


def substr_positions(node: exp.Expression) -> exp.Expression:
    """substr(s, start[, length]) as DuckDB means it: a negative start counts from the
    end (n + start + 1), a negative length takes the characters before start, and
    the range [p, p + length) is clipped to the string (start 0 takes length - 1).
    PostgreSQL reads a negative start as a position before the string and raises on
    a negative length; Spark reads start 0 as 1 and a negative length as empty.
    Spelled: the clipped range, as SUBSTRING(s, first >= 1, count >= 0), which both
    read alike. A start >= 1 with no or a non-negative literal length is left as is."""
    if not isinstance(node, exp.Substring) or node.args.get("typed"):
        return node
    s, start, length = node.this, node.args.get("start"), node.args.get("length")
    first, count = _int_literal(start), _int_literal(length) if length is not None else None
    if first is not None and first >= 1 and (length is None or (count is not None and count >= 0)):
        return node
    n = exp.Length(this=s.copy())
    if first is not None:
        p = _add(_add(n.copy(), start.copy()), num(1)) if first < 0 else start.copy()
    else:
        p = _case((exp.LT(this=start.copy(), expression=num(0)),
                   _add(_add(n.copy(), start.copy()), num(1))), default=start.copy())
    if length is None:
        low, high = p, _add(n.copy(), num(1))
    elif count is not None:
        low, high = ((_add(p, length.copy()), p.copy()) if count < 0
                     else (p, _add(p.copy(), length.copy())))
    else:
        backward = exp.LT(this=length.copy(), expression=num(0))
        low = _case((backward, _add(p.copy(), length.copy())), default=p.copy())
        high = _case((backward.copy(), p.copy()), default=_add(p, length.copy()))
    begin = _at_least(low, num(1))
    size = _at_least(_sub(_at_most(high, _add(n, num(1))), begin.copy()), num(0))
    return exp.Substring(this=s, start=cast(begin, "INT"), length=cast(size, "INT"),
                         typed=True)  # PostgreSQL has no SUBSTRING(text, bigint, ..)


# Unicode's space separators (Zs): DuckDB's trim removes exactly these, not tabs or
# line ends; PostgreSQL's and Spark's TRIM only U+0020.
SPACES = ("\u0020\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
          "\u2008\u2009\u200a\u202f\u205f\u3000")


def unicode_trim(node: exp.Expression) -> exp.Expression:
    """trim(s) as DuckDB: every space separator off both ends (TRIM(chars FROM s))."""
    if isinstance(node, exp.Trim) and node.args.get("expression") is None:
        return exp.Trim(this=node.this, expression=exp.Literal.string(SPACES))
    return node


def wide_integer_sum(node: exp.Expression) -> exp.Expression:
    """sum of int64s is a 128-bit integer in DuckDB (no overflow past 2^63); Spark's
    sum of a BIGINT raises: sum the values as DECIMAL(38, 0)."""
    if isinstance(node, exp.Sum) and is_a(node.this, "BIGINT"):
        return exp.Sum(this=cast(node.this, exp.DataType.build("DECIMAL(38, 0)")))
    return node


def sum_over_count(node: exp.Expression) -> exp.Expression:
    """avg is a double in DuckDB, the plain sum over the count (NULL on no values);
    PostgreSQL's avg of a float8 also accumulates the squares, which overflow (1e300
    among the values raises "value out of range"). Spelled SUM / COUNT of the values
    as doubles (NULL / 0 is NULL there); a windowed avg as two windowed calls."""
    if isinstance(node, exp.Avg) and not isinstance(node.parent, (exp.Window, exp.Filter)):
        return _mean(node, lambda call: call)
    if isinstance(node, exp.Window) and isinstance(node.this, exp.Avg):
        def over(call: exp.Expression) -> exp.Expression:
            window = node.copy()
            window.set("this", call)
            return window
        mean = exp.Paren(this=_mean(node.this, over))
        mean.type = exp.DataType.build("DOUBLE")  # outer rewrites (round) ask
        return mean
    return node


def _mean(avg: exp.Avg, over: Callable[[exp.Expression], exp.Expression]) -> exp.Expression:
    """The sum over the count, as doubles; an int's or decimal's sum taken exactly
    first (PostgreSQL's SUM of those is NUMERIC), as DuckDB sums them in 128 bits."""
    exact = is_a(avg.this, "BIGINT", "DECIMAL")
    x = avg.this if exact else _as_double(avg.this)
    total = cast(over(exp.Sum(this=x)), "DOUBLE") if exact else over(exp.Sum(this=x))
    mean = exp.Div(this=total, expression=cast(over(exp.Count(this=x.copy())), "DOUBLE"),
                   typed=True)
    mean.type = exp.DataType.build("DOUBLE")
    return mean


def exact_average(node: exp.Expression) -> exp.Expression:
    """avg of an int or decimal is DuckDB's exact 128-bit sum over the count, as a
    double (avg(1e19 + 0.5, -1e19) = 0.25); an average of the values as doubles loses
    the 0.5 (0.0): the sum is taken exactly (ints as DECIMAL(38, 0): Spark's BIGINT sum
    raises past 2^63), then divided as a double. A windowed avg: each call windowed
    (`over_each_aggregate`)."""
    if not isinstance(node, exp.Avg) or not is_a(node.this, "BIGINT", "DECIMAL"):
        return node
    x = node.this
    summed = x.copy() if is_a(x, "DECIMAL") else cast(x.copy(), exp.DataType.build("DECIMAL(38, 0)"))
    mean = exp.Div(this=cast(exp.Sum(this=summed), "DOUBLE"),
                   expression=cast(exp.Count(this=x.copy()), "DOUBLE"), typed=True)
    mean.type = exp.DataType.build("DOUBLE")
    return mean


def duckdb_double_text(bind: Bind) -> Callable[[exp.Expression], exp.Expression]:
    """cast(x as text) of a double prints DuckDB's shortest round-trip digits, as
    Python's repr: '2.0' for a whole number, positional from 1e-4 to below 1e16,
    else '1e+20' / '1e-05'; 'inf', '-inf', 'nan'. PostgreSQL's float8 text has the
    same shortest digits (extra_float_digits 1, its default) and exponent style, but
    no '.0' on a whole number, an exponent from 1e15 on, and 'Infinity' / 'NaN'.
    Spelled: those cases mended (a whole double in [1e15, 1e16): its BIGINT's
    digits; another there: its 17 digits moved about the point; a NaN's sign is its
    first byte); `bind` names x once."""
    def rewrite(node: exp.Expression) -> exp.Expression:
        if not (isinstance(node, exp.Cast) and node.to.is_type("TEXT", "VARCHAR")
                and is_a(node.this, "DOUBLE")) or node.args.get("exact"):
            return node
        return bind(node.this, _double_text)
    return rewrite


def _double_text(x: exp.Expression) -> exp.Expression:
    text = cast(x.copy(), "TEXT")
    text.set("exact", True)

    def has(char: str) -> exp.Expression:
        return exp.GT(this=exp.StrPosition(this=text.copy(), substr=exp.Literal.string(char)),
                      expression=num(0))

    def word(w: str) -> exp.Literal:
        return exp.Literal.string(w)

    ax = exp.Abs(this=x.copy())
    wide = exp.And(this=exp.GTE(this=ax, expression=dnum(1e15)),
                   expression=exp.LT(this=ax.copy(), expression=dnum(1e16)))
    # 16 digits where they read back as x: PostgreSQL prints 17 for a double exactly
    # halfway between two 16-digit decimals (4.6501958339604576e+16; DuckDB ..58e+16)
    sixteen = exp.Anonymous(this="REGEXP_REPLACE", expressions=[
        exp.Trim(this=exp.Anonymous(this="TO_CHAR", expressions=[
            cast(text.copy(), "DECIMAL"), word("9.999999999999999EEEE")])),
        word("\\.?0*e"), word("e")])
    reads_back = exp.EQ(this=cast(sixteen.copy(), "DOUBLE"), expression=x.copy())
    tie = _case((exp.LT(this=ax.copy(), expression=dnum(1e16)), exp.false()),
                (exp.GTE(this=ax.copy(), expression=dnum(1.7976931348623e308)), exp.false()),
                default=reads_back)  # CASE: the cast only in range (AND may go either way)
    negative_nan = exp.GTE(this=exp.Anonymous(this="GET_BYTE", expressions=[
        exp.Anonymous(this="FLOAT8SEND", expressions=[x.copy()]), num(0)]), expression=num(128))
    nan = _case((negative_nan, word("-nan")), default=word("nan"))
    return _case((exp.EQ(this=x.copy(), expression=double("NaN")), nan),
                 (exp.EQ(this=x.copy(), expression=double("Infinity")), word("inf")),
                 (exp.EQ(this=x.copy(), expression=double("-Infinity")), word("-inf")),
                 (exp.And(this=wide, expression=exp.EQ(this=x.copy(),
                                                        expression=exp.Trunc(this=x.copy()))),
                  exp.DPipe(this=cast(cast(x.copy(), "BIGINT"), "TEXT"),
                            expression=word(".0"), safe=True)),
                 (wide.copy(), exp.Anonymous(this="REGEXP_REPLACE", expressions=[
                     text.copy(), word("^(-?)(\\d)\\.(\\d{15})(\\d*)e\\+15$"),
                     word("\\1\\2\\3.\\4")])),  # 4.5035996273704955e+15: 17 digits
                 (tie, sixteen),
                 (exp.Or(this=has("e"), expression=has(".")), text.copy()),
                 default=exp.DPipe(this=text, expression=word(".0"), safe=True))


def double_text_refused(engine: str) -> Callable[[exp.Expression], exp.Expression]:
    """An engine printing a double in Java's notation (Spark and Trino: 1.0E20,
    1.23456789123E8, and on Java 17 not always the shortest digits) where DuckDB prints
    1e+20, 123456789.123: E091 for a double's text (`cast`, `concat`)."""
    def rewrite(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Cast) and node.to.is_type("TEXT", "VARCHAR") and \
                is_a(node.this, "DOUBLE"):
            raise CannotExpress("cast of a double to text (DuckDB's shortest digits and "
                                f"exponent style) has no {engine.capitalize()} spelling")
        return node
    return rewrite


no_double_text = double_text_refused("spark")


def c_collation(node: exp.Expression) -> exp.Expression:
    """DuckDB orders text by code point; PostgreSQL by the database's collation
    (en_US: 'a' < 'B'). Ordering comparisons (`between` too), min/max and ORDER BY
    keys of text say COLLATE "C"."""
    if isinstance(node, (exp.LT, exp.LTE, exp.GT, exp.GTE)):
        sides = (node.this.unnest(), node.expression.unnest())
        text = any(is_a(side, "TEXT", "VARCHAR") for side in sides)
        timely = any(is_a(side, "DATE", "TIMESTAMP") for side in sides)  # text read as time
        if text and not timely and not isinstance(node.this, exp.Collate):
            return type(node)(this=_collate(node.this), expression=node.expression)
    if isinstance(node, exp.Between) and is_a(node.this.unnest(), "TEXT", "VARCHAR") \
            and not any(is_a(node.args[k].unnest(), "DATE", "TIMESTAMP") for k in ("low", "high")) \
            and not isinstance(node.this, exp.Collate):
        # the operand's collation decides both comparisons
        return exp.Between(this=_collate(node.this), low=node.args["low"],
                           high=node.args["high"])
    if isinstance(node, (exp.Min, exp.Max)) and is_a(node.this, "TEXT", "VARCHAR"):
        return type(node)(this=_collate(node.this))
    if isinstance(node, exp.Ordered) and is_a(node.this, "TEXT", "VARCHAR"):
        # ORDER BY a text (sort, take, a window's order and its tie-breakers)
        return exp.Ordered(this=_collate(node.this), desc=node.args.get("desc"),
                           nulls_first=node.args.get("nulls_first"))
    return node


def _collate(x: exp.Expression) -> exp.Expression:
    return exp.Collate(this=_paren(x), expression=exp.to_identifier("C", quoted=True))


# ---------------------------------------------------------------- decimal precision

MAX_PRECISION = 38
SPARK_MIN_SCALE = 6  # Spark keeps at least this many fraction digits when it cuts


def _decimal_shape(node: exp.Expression) -> tuple[int, int] | None:
    """(precision, scale) Spark gives an operand: its decimal type, a whole-number
    literal's digits, an int column's DECIMAL(20, 0); None for another type."""
    if isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit():
        return len(node.this), 0
    if is_a(node, "BIGINT"):
        return 20, 0
    if is_a(node, "DECIMAL") and len(node.type.expressions) == 2:
        p, s = (int(e.this.this) for e in node.type.expressions)
        return p, s
    return None


def spark_decimal_scale(node: exp.Expression) -> exp.Expression:
    """Spark types `a + b` of decimals DECIMAL(max(s) + max(p - s) + 1, max(s)) and
    `a * b` DECIMAL(p1 + p2 + 1, s1 + s2); past 38 digits it cuts the scale (to no less
    than 6), so decimal(38, 10) + 1 loses its low digits, where DuckDB keeps the
    decimal(38, 10) and raises only when the value itself overflows. E091 where the
    cut scale is below the scale Strata's type keeps (Spark SQL reference, Decimal
    precision and scale; spark.sql.decimalOperations.allowPrecisionLoss)."""
    if not isinstance(node, (exp.Add, exp.Sub, exp.Mul)) or not (
            is_a(node.this.unnest(), "DECIMAL") or is_a(node.expression.unnest(), "DECIMAL")):
        return node
    left, right = _decimal_shape(node.this.unnest()), _decimal_shape(node.expression.unnest())
    if left is None or right is None:
        return node
    (p1, s1), (p2, s2) = left, right
    if isinstance(node, exp.Mul):
        precision, scale = p1 + p2 + 1, s1 + s2
    else:
        scale = max(s1, s2)
        precision = scale + max(p1 - s1, p2 - s2) + 1
    kept = scale  # DuckDB's scale: max(s1, s2) for + and -, s1 + s2 for *
    if precision > MAX_PRECISION:
        scale = max(MAX_PRECISION - (precision - scale), min(scale, SPARK_MIN_SCALE))
    if scale < kept:
        raise CannotExpress(f"decimal `{node.key}` of decimal({p1}, {s1}) and "
                            f"decimal({p2}, {s2}) on spark: past 38 digits Spark keeps "
                            f"{scale} fraction digits of the {kept} DuckDB keeps")
    return node
