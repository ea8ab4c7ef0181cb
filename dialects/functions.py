"""How each engine spells the catalogue functions whose SQL it means otherwise.

The catalogue (strata/semantics/functions.py) builds each function as SQLGlot's
node, which renders DuckDB's meaning on DuckDB. A node whose meaning some engine
differs on is tagged with its Strata name (`TAG` in the node's meta); each engine
below has a table `name -> spelling` (a function of the tagged node returning the
engine's node), applied by `function_rewrite` among the dialect's rewrites. A
function missing from an engine's table renders as SQLGlot spells it there, which
was checked to mean DuckDB's result (docs/DIALECTS.md, tests/differential/functions2);
where an engine cannot express DuckDB's result, the spelling is `refuse(...)`: E091.

Also here, because each engine spells them: the strftime format codes every engine
prints alike, with each engine's pattern for each.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from dialects import regex as R
from dialects.base import CannotExpress, Rewrite, cast, is_a, num

TAG = "strata_fn"  # node meta key: the catalogue function the node spells
Spelling = Callable[[exp.Expression], exp.Expression]


def function_rewrite(table: dict[str, Spelling]) -> Rewrite:
    """The rewrite spelling each tagged node by `table` (untagged nodes, and functions
    the table does not list, stay as they are)."""
    def rewrite(node: exp.Expression) -> exp.Expression:
        spell = table.get(node.meta_get(TAG))
        return spell(node) if spell is not None else node
    return rewrite


def refuse(engine: str, why: str) -> Spelling:
    """The spelling of a function `engine` cannot express: E091 naming both."""
    def spell(node: exp.Expression) -> exp.Expression:
        raise CannotExpress(f"`{node.meta_get(TAG)}` on {engine}: {why}")
    return spell


def _double(value: str) -> exp.Expression:
    return cast(exp.Literal.string(value), "DOUBLE")


def _case(*arms: tuple[exp.Expression, exp.Expression],
          default: exp.Expression | None = None) -> exp.Case:
    return exp.Case(ifs=[exp.If(this=c, true=v) for c, v in arms], default=default)


def _paren(x: exp.Expression) -> exp.Expression:
    if isinstance(x, (exp.Column, exp.Literal, exp.Func, exp.Paren, exp.Cast)):
        return x
    return exp.Paren(this=x)


def _is_null(x: exp.Expression) -> exp.Expression:
    return exp.Is(this=_paren(x.copy()), expression=exp.Null())


# ---------------------------------------------------------------- text

def ignoring_nulls(node: exp.Expression) -> exp.Expression:
    """greatest/least skip NULLs in DuckDB; an engine returning NULL on any NULL
    argument compares each argument or, when NULL, the first non-NULL of the others
    (so NULL only when all are)."""
    items = [node.this, *node.expressions]
    spelled = []
    for i, item in enumerate(items):
        others = [o.copy() for j, o in enumerate(items) if j != i]
        spelled.append(exp.Coalesce(this=item.copy(), expressions=others))
    return type(node)(this=spelled[0], expressions=spelled[1:])


def c_collation_items(node: exp.Expression) -> exp.Expression:
    """greatest/least of text in code-point order (PostgreSQL's collation orders
    otherwise): every argument COLLATE "C"."""
    items = [node.this, *node.expressions]
    if not any(is_a(i, "TEXT", "VARCHAR") for i in items):
        return node
    collated = [exp.Collate(this=_paren(i), expression=exp.to_identifier("C", quoted=True))
                for i in items]
    return type(node)(this=collated[0], expressions=collated[1:])


def no_nan_extremes(engine: str) -> Spelling:
    """An engine whose greatest/least return NaN for any NaN argument (DuckDB orders NaN
    above every number, so least(NaN, 1) is 1): refused for doubles."""
    def spell(node: exp.Expression) -> exp.Expression:
        if any(is_a(i, "DOUBLE") for i in [node.this, *node.expressions]):
            return refuse(engine, "NaN among doubles is not ordered as DuckDB orders it")(node)
        return ignoring_nulls(node)
    return spell


def ends_by_length(node: exp.Expression) -> exp.Expression:
    """ends_with(s, p) where the engine has none: length(s) >= length(p) and the tail
    of s from length(s) - length(p) + 1 is p ('' ends every text)."""
    s, p = node.this, node.expression
    tail = exp.Substring(this=s.copy(), start=exp.Add(
        this=exp.Sub(this=exp.Length(this=s.copy()), expression=exp.Length(this=p.copy())),
        expression=num(1)))
    return exp.Paren(this=exp.And(
        this=exp.GTE(this=exp.Length(this=s.copy()), expression=exp.Length(this=p.copy())),
        expression=exp.EQ(this=tail, expression=p.copy())))


def negative_counts(node: exp.Expression) -> exp.Expression:
    """left/right(s, n) with n < 0 (DuckDB: all but the last / first -n characters),
    for an engine whose LEFT/RIGHT give '' or raise there: LEFT(s, length(s) + n)."""
    s, n = node.this, node.expression
    literal = n.to_py() if isinstance(n, exp.Literal) and n.is_int else None
    if isinstance(n, exp.Neg) and isinstance(n.this, exp.Literal) and n.this.is_int:
        literal = -n.this.to_py()
    kind = type(node)
    if literal is not None and literal >= 0:
        return kind(this=s, expression=n)
    shortened = exp.Greatest(this=exp.Add(this=exp.Length(this=s.copy()), expression=n.copy()),
                             expressions=[num(0)], ignore_nulls=True)
    if literal is not None:
        return kind(this=s, expression=shortened)
    return _case((exp.GTE(this=n.copy(), expression=num(0)), kind(this=s.copy(), expression=n)),
                 (exp.LT(this=n.copy(), expression=num(0)), kind(this=s, expression=shortened)))


def right_by_substr(node: exp.Expression) -> exp.Expression:
    """right(s, n) for an engine without RIGHT (Trino), spelled here rather than by
    SQLGlot, whose SUBSTR(s, LENGTH(s) - (n - 1)) starts before the text when n is
    longer (Trino then counts from the end: right('abc', 5) would be 'c') and copies
    s: SUBSTR(s, GREATEST(LENGTH(s) - n + 1, 1)), '' for n = 0."""
    def spelled(right: exp.Expression) -> exp.Expression:
        if not isinstance(right, exp.Right):
            return right
        s, n = right.this, right.expression
        start = exp.Greatest(this=exp.Add(this=exp.Sub(this=exp.Length(this=s.copy()),
                                                        expression=_paren(n)),
                                          expression=num(1)),
                             expressions=[num(1)])
        return exp.Substring(this=s, start=start)

    return negative_counts(node).transform(spelled, copy=False)


def replace_nothing_for_empty(node: exp.Expression) -> exp.Expression:
    """replace(s, '', r) is s in DuckDB; an engine inserting r between characters
    gets s back for an empty search."""
    search = node.expression
    if isinstance(search, exp.Literal) and search.this != "":
        return node
    return _case((exp.EQ(this=search.copy(), expression=exp.Literal.string("")), node.this.copy()),
                 default=node)


def split_by_element(node: exp.Expression) -> exp.Expression:
    """split_part where the engine's returns NULL past the end or takes no negative
    position (Trino): the element of the split array ('' past the end), NULL on NULL."""
    s = node.this
    parts = exp.Split(this=s.copy(), expression=node.args["delimiter"])
    element = exp.Anonymous(this="ELEMENT_AT", expressions=[parts, node.args["part_index"]])
    return _case((_is_null(s), exp.Null()),
                 default=exp.Coalesce(this=element, expressions=[exp.Literal.string("")]))


def split_by_ordinal(node: exp.Expression) -> exp.Expression:
    """split_part on BigQuery (none there): SPLIT(s, d)[SAFE_ORDINAL(n)] ('' past the
    end), the reversed array for a negative n, NULL on NULL."""
    s, index = node.this, node.args["part_index"]
    parts: exp.Expression = exp.Split(this=s.copy(), expression=node.args["delimiter"])
    position = index.to_py() if isinstance(index, exp.Literal) else -index.this.to_py()
    if position < 0:
        parts = exp.Anonymous(this="ARRAY_REVERSE", expressions=[parts])
    element = exp.Bracket(this=parts, expressions=[
        exp.Anonymous(this="SAFE_ORDINAL", expressions=[num(abs(position))])])
    return _case((_is_null(s), exp.Null()),
                 default=exp.Coalesce(this=element, expressions=[exp.Literal.string("")]))


def md5_of_utf8(node: exp.Expression) -> exp.Expression:
    """Trino's md5 digests varbinary: of the text's UTF-8 bytes, in lowercase hex."""
    digest = exp.Anonymous(this="MD5", expressions=[
        exp.Anonymous(this="TO_UTF8", expressions=[node.this])])
    return exp.Lower(this=exp.Anonymous(this="TO_HEX", expressions=[digest]))


def strpos_positive(node: exp.Expression) -> exp.Expression:
    """strpos spelled STRPOS (BigQuery's INSTR, SQLGlot's choice, differs on '')."""
    return exp.Anonymous(this="STRPOS", expressions=[node.this, node.args["substr"]])


# ---------------------------------------------------------------- numbers

INF = "Infinity"
EXP_MAX = 709.782712893384  # the largest double whose exp is finite
EXP_ZERO = -745.1332191019411  # the smallest double whose exp is not 0


def sign_by_comparison(node: exp.Expression) -> exp.Expression:
    """sign of a double as DuckDB: -1, 0 (for -0.0 and NaN) or 1, by comparisons that
    hold whether the engine orders NaN above Infinity or leaves it unordered."""
    sign = node.this
    x = sign.this
    if not is_a(x, "DOUBLE"):
        return node
    return cast(_case((_is_null(x), exp.Null()),
                      (exp.EQ(this=x.copy(), expression=num(0)), num(0)),
                      (exp.LT(this=x.copy(), expression=num(0)), exp.Neg(this=num(1))),
                      (exp.And(this=exp.GT(this=x.copy(), expression=num(0)),
                               expression=exp.LTE(this=x.copy(), expression=_double(INF))),
                       num(1)),
                      default=num(0)), "BIGINT")


def _nan_first(x: exp.Expression) -> tuple[exp.Expression, exp.Expression]:
    """NaN stays NaN (an arm before the range tests: PostgreSQL and Spark order NaN
    above Infinity, so `x > 709.78` holds for it)."""
    return (exp.GT(this=x.copy(), expression=_double(INF)), x.copy())


def guarded_ln(node: exp.Expression) -> exp.Expression:
    """ln/log10 at 0 is -Infinity and below 0 NaN in DuckDB; PostgreSQL and
    BigQuery raise, Spark returns NULL."""
    x = node.expressions[0] if isinstance(node, exp.Anonymous) else (
        node.this if isinstance(node, exp.Ln) else node.expression)
    return _case((exp.EQ(this=x.copy(), expression=num(0)), _double("-" + INF)),
                 (exp.LT(this=x.copy(), expression=num(0)), _double("NaN")), default=node)


def guarded_sqrt(node: exp.Expression) -> exp.Expression:
    """sqrt below 0 is NaN in DuckDB; PostgreSQL and BigQuery raise."""
    return _case((exp.LT(this=node.this.copy(), expression=num(0)), _double("NaN")),
                 default=node)


def guarded_exp(node: exp.Expression) -> exp.Expression:
    """exp past the double range is Infinity or 0 in DuckDB; PostgreSQL raises on
    overflow and on a result that underflows to 0."""
    x = node.this
    return _case(_nan_first(x),
                 (exp.GT(this=x.copy(), expression=num(EXP_MAX)), _double(INF)),
                 (exp.LT(this=x.copy(), expression=num(EXP_ZERO)), num(0.0)), default=node)


def guarded_power(node: exp.Expression) -> exp.Expression:
    """power as C's pow (DuckDB's) where PostgreSQL raises: a finite negative base
    to a fraction is NaN, -Infinity to a fraction Infinity or 0, zero to a negative
    power ±Infinity (the sign of a -0.0 base raised to an odd power). An overflow
    still raises there (loudly, not a wrong value)."""
    x, y = node.this, node.expression
    half = exp.Div(this=y.copy(), expression=num(2), typed=True)
    odd = exp.And(this=exp.EQ(this=y.copy(), expression=exp.Floor(this=y.copy())),
                  expression=exp.NEQ(this=exp.Floor(this=half), expression=half.copy()))
    negative_zero = exp.LT(this=exp.Anonymous(this="ATAN2", expressions=[x.copy(), num(-1)]),
                           expression=num(0))
    fraction = exp.NEQ(this=y.copy(), expression=exp.Floor(this=y.copy()))
    return _case((exp.Or(this=_is_null(x), expression=_is_null(y)), exp.Null()),
                 (exp.And(this=exp.EQ(this=x.copy(), expression=num(0)),
                          expression=exp.LT(this=y.copy(), expression=num(0))),
                  _case((exp.And(this=odd, expression=negative_zero), _double("-" + INF)),
                        default=_double(INF))),
                 (exp.And(this=exp.EQ(this=x.copy(), expression=_double("-" + INF)),
                          expression=fraction.copy()),
                  _case((exp.GT(this=y.copy(), expression=num(0)), _double(INF)),
                        default=num(0.0))),
                 (exp.And(this=exp.LT(this=x.copy(), expression=num(0)),
                          expression=exp.And(
                              this=exp.GT(this=x.copy(), expression=_double("-" + INF)),
                              expression=exp.And(this=fraction, expression=exp.LTE(
                                  this=exp.Abs(this=y.copy()), expression=_double(INF))))),
                  _double("NaN")),
                 default=node)


# ---------------------------------------------------------------- aggregates

def _values(node: exp.Expression) -> tuple[exp.Expression, exp.Expression]:
    order = node.this
    return order.this, node.args["separator"]


def _null_on_none(value: exp.Expression, joined: exp.Expression) -> exp.Expression:
    """NULL for a group without a non-NULL value (an engine gives '' there)."""
    return _case((exp.EQ(this=exp.Count(this=value.copy()), expression=num(0)), exp.Null()),
                 default=joined)


def string_agg_sorted_list(node: exp.Expression) -> exp.Expression:
    """Spark: the sorted list of values (byte order is code-point order), joined."""
    value, separator = _values(node)
    listed = exp.Anonymous(this="COLLECT_LIST", expressions=[value.copy()])
    joined = exp.Anonymous(this="ARRAY_JOIN", expressions=[
        exp.Anonymous(this="ARRAY_SORT", expressions=[listed]), separator])
    return _null_on_none(value, joined)


def string_agg_c_order(node: exp.Expression) -> exp.Expression:
    """PostgreSQL: STRING_AGG ordered by the value COLLATE "C" (code points)."""
    value, separator = _values(node)
    key = exp.Collate(this=_paren(value.copy()), expression=exp.to_identifier("C", quoted=True))
    order = exp.Order(this=value, expressions=[exp.Ordered(this=key, nulls_first=False)])
    return exp.GroupConcat(this=order, separator=separator)


def string_agg_within_group(node: exp.Expression) -> exp.Expression:
    """LISTAGG(..) WITHIN GROUP, which gives '' for no values: NULL there."""
    value, _ = _values(node)
    return _null_on_none(value, node)


def string_agg_plain_order(node: exp.Expression) -> exp.Expression:
    """BigQuery: STRING_AGG(x, sep ORDER BY x) with its own NULLs-first default (it
    takes no NULLS LAST; the NULLs are skipped anyway); NULL for no values, as DuckDB."""
    value, separator = _values(node)
    order = exp.Order(this=value, expressions=[exp.Ordered(this=value.copy(), nulls_first=True)])
    return exp.GroupConcat(this=order, separator=separator)


def _listed(node: exp.Expression) -> exp.Expression:
    return node.this.this.this  # FILTER(ARRAY_AGG(ORDER(value ...)))


def list_agg_c_order(node: exp.Expression) -> exp.Expression:
    """PostgreSQL: ARRAY_AGG ordered by a text COLLATE "C" (code points)."""
    value = _listed(node)
    if not is_a(value, "TEXT", "VARCHAR"):
        return node
    key = exp.Collate(this=_paren(value.copy()), expression=exp.to_identifier("C", quoted=True))
    order = node.this.this
    order.set("expressions", [exp.Ordered(this=key, nulls_first=False)])
    return node


def list_agg_sorted(node: exp.Expression) -> exp.Expression:
    """Spark: the collected non-NULL values sorted (ARRAY_SORT: NaN last, text by
    UTF-8 bytes, which is code-point order); NULL for none (COLLECT_LIST gives [])."""
    value = _listed(node)
    listed = exp.Anonymous(this="ARRAY_SORT", expressions=[
        exp.Anonymous(this="COLLECT_LIST", expressions=[value.copy()])])
    return _null_on_none(value, listed)


def list_agg_within_group(node: exp.Expression) -> exp.Expression:
    """Snowflake: ARRAY_AGG(x) WITHIN GROUP (ORDER BY x) skips NULLs and gives [] for
    none: NULL there."""
    value = _listed(node)
    agg = exp.WithinGroup(this=exp.ArrayAgg(this=value.copy()), expression=exp.Order(
        expressions=[exp.Ordered(this=value.copy(), nulls_first=False)]))
    return _null_on_none(value, agg)


# arg_min / arg_max: the catalogue builds `ARG_MIN(x, (by, x)) FILTER (WHERE x and by are
# not NULL)`, DuckDB's spelling; the engines below spell the same pick: the first x in
# the order (by, x), ascending for arg_min, descending for arg_max.

def _arg_parts(node: exp.Expression):
    """(value, by, kept, descending) of a tagged arg_min/arg_max node."""
    agg = node.this
    return (agg.this.copy(), agg.expression.expressions[0].copy(), node.expression.this.copy(),
            isinstance(agg, exp.ArgMax))


def _pair_order(value: exp.Expression, by: exp.Expression, desc: bool,
                collate: bool = False, nulls_small: bool = False) -> list[exp.Ordered]:
    """The order (by, x); NULLs never reach it, so they go where the engine takes them
    without a clause (`nulls_small`: first ascending, last descending)."""
    keys = []
    for key in (by, value):
        key = key.copy()
        if collate and is_a(key, "TEXT", "VARCHAR"):  # code-point order, as DuckDB
            key = exp.Collate(this=_paren(key), expression=exp.to_identifier("C", quoted=True))
        keys.append(exp.Ordered(this=key, desc=desc, nulls_first=nulls_small and not desc))
    return keys


def arg_by_struct(node: exp.Expression) -> exp.Expression:
    """Spark: MIN_BY/MAX_BY ordered by STRUCT(by, x), which compares field by field."""
    value, by, kept, desc = _arg_parts(node)
    cls = exp.ArgMax if desc else exp.ArgMin
    pair = exp.Struct(expressions=[by, value.copy()])
    return exp.Filter(this=cls(this=value, expression=pair), expression=exp.Where(this=kept))


def arg_first_of_array(node: exp.Expression) -> exp.Expression:
    """PostgreSQL: the first item of the non-NULL pairs' x ordered by (by, x), text by
    code point: (ARRAY_AGG(x ORDER BY by, x) FILTER (WHERE ...))[1]."""
    value, by, kept, desc = _arg_parts(node)
    ordered = exp.Order(this=value.copy(), expressions=_pair_order(value, by, desc, True))
    listed = exp.Filter(this=exp.ArrayAgg(this=ordered), expression=exp.Where(this=kept))
    return exp.Bracket(this=exp.Paren(this=listed), expressions=[num(0)])


def arg_element_at(node: exp.Expression) -> exp.Expression:
    """Trino: ELEMENT_AT(ARRAY_AGG(x ORDER BY by, x) FILTER (WHERE ...), 1), NULL for
    no rows."""
    value, by, kept, desc = _arg_parts(node)
    ordered = exp.Order(this=value.copy(), expressions=_pair_order(value, by, desc))
    listed = exp.Filter(this=exp.ArrayAgg(this=ordered), expression=exp.Where(this=kept))
    return exp.Bracket(this=listed, expressions=[num(1)], offset=1, safe=True)


def _kept_value(value: exp.Expression, kept: exp.Expression) -> exp.Expression:
    """x where the row counts, else NULL: ARRAY_AGG skips it (no FILTER clause here)."""
    return _case((kept, value))


def arg_within_group(node: exp.Expression) -> exp.Expression:
    """Snowflake: the first item of ARRAY_AGG(x) WITHIN GROUP (ORDER BY by, x) over the
    rows that count (ARRAY_AGG skips NULL), read back as x's type."""
    value, by, kept, desc = _arg_parts(node)
    listed = exp.WithinGroup(this=exp.ArrayAgg(this=_kept_value(value, kept)),
                             expression=exp.Order(expressions=_pair_order(value, by, desc)))
    first = exp.Bracket(this=exp.Paren(this=listed), expressions=[num(0)])
    return cast(first, value.type) if value.type is not None else first


def arg_limit_one(node: exp.Expression) -> exp.Expression:
    """BigQuery: ARRAY_AGG(x IGNORE NULLS ORDER BY by, x LIMIT 1)[SAFE_OFFSET(0)] over
    the rows that count: NULL for none."""
    value, by, kept, desc = _arg_parts(node)
    ordered = exp.Order(this=_kept_value(value, kept),
                        expressions=_pair_order(value, by, desc, nulls_small=True))
    listed = exp.IgnoreNulls(this=exp.ArrayAgg(this=exp.Limit(this=ordered,
                                                              expression=num(1))))
    return exp.Bracket(this=listed, expressions=[num(0)], offset=0, safe=True)


def percentile(node: exp.Expression) -> exp.Expression:
    """Spark's exact interpolated quantile: PERCENTILE(x, q)."""
    return exp.Anonymous(this="PERCENTILE", expressions=[node.this, node.expression])


# ---------------------------------------------------------------- dates

def datetime_add(node: exp.Expression) -> exp.Expression:
    """BigQuery: a Strata timestamp is a DATETIME, shifted by DATETIME_ADD; a date by
    DATE_ADD (both clamp a month end as DuckDB)."""
    add = node.this
    unit = add.args["unit"]
    interval = exp.Interval(this=add.expression, unit=unit.copy())
    name = "DATE_ADD" if node.to.is_type("DATE") else "DATETIME_ADD"
    return cast(exp.Anonymous(this=name, expressions=[add.this, interval]), node.to)


def timestampadd(node: exp.Expression) -> exp.Expression:
    """Spark: TIMESTAMPADD(unit, n, x), which clamps a month end as DuckDB."""
    add = node.this
    call = exp.Anonymous(this="TIMESTAMPADD", expressions=[add.args["unit"].copy(),
                                                           add.expression, add.this])
    return cast(call, node.to)


def make_date_named(name: str, whole: str | None = None) -> Spelling:
    """make_date as the engine's `name`, each part cast to `whole` where the engine
    takes no BIGINT (PostgreSQL's make_date: INTEGER)."""
    def spell(node: exp.Expression) -> exp.Expression:
        parts = [cast(p, whole) if whole else p for p in node.expressions]
        return exp.Anonymous(this=name, expressions=parts)
    return spell


def int_count(node: exp.Expression) -> exp.Expression:
    """left/right with an INTEGER count (PostgreSQL has no LEFT(text, bigint))."""
    return type(node)(this=node.this, expression=cast(node.expression, "INT"))


def log10_function(node: exp.Expression) -> exp.Expression:
    """LOG10(x): PostgreSQL's two-argument LOG is NUMERIC only."""
    return guarded_ln(exp.Anonymous(this="LOG10", expressions=[node.expression]))


def make_date_by_text(node: exp.Expression) -> exp.Expression:
    """Trino (no make_date): the ISO text of the date, cast (an error for no date)."""
    text = exp.Anonymous(this="FORMAT", expressions=[exp.Literal.string("%04d-%02d-%02d"),
                                                     *node.expressions])
    return cast(text, "DATE")


# ---------------------------------------------------------------- strftime formats

# The codes a format may use (DuckDB's %-codes), and each engine's pattern for each;
# None: the engine has no pattern printing it alike (E091 there).
FORMAT_CODES: dict[str, dict[str, str | None]] = {code: dict(zip(("postgres", "spark", "snowflake", "bigquery", "trino"), row))
                for code, row in {
    "Y": ("YYYY", "yyyy", "YYYY", "%Y", "%Y"),
    "y": ("YY", "yy", "YY", "%y", "%y"),
    "m": ("MM", "MM", "MM", "%m", "%m"),
    "d": ("DD", "dd", "DD", "%d", "%d"),
    "H": ("HH24", "HH", "HH24", "%H", "%H"),
    "M": ("MI", "mm", "MI", "%M", "%i"),
    "S": ("SS", "ss", "SS", "%S", "%s"),
    "f": ("US", "SSSSSS", "FF6", None, "%f"),
    "j": ("DDD", "DDD", None, "%j", "%j"),
    "b": ("Mon", "MMM", "Mon", "%b", "%b"),
    "B": ("FMMonth", "MMMM", "MMMM", "%B", "%M"),
    "a": ("Dy", "EEE", "DY", "%a", "%a"),
    "A": ("FMDay", "EEEE", None, "%A", "%W"),
    "%": (None, None, None, "%%", "%%"),
}.items()}
FORMAT_CODE_DOCS = {
    "Y": "year, 4 digits", "y": "year, 2 digits", "m": "month 01-12", "d": "day 01-31",
    "H": "hour 00-23", "M": "minute 00-59", "S": "second 00-59",
    "f": "microsecond, 6 digits", "j": "day of year 001-366", "b": "month Jan-Dec",
    "B": "month January-December", "a": "weekday Sun-Sat", "A": "weekday Sunday-Saturday",
    "%": "a percent sign",
}
# literal characters a format may hold between codes: no letters but T (letters are
# codes in other engines' patterns) and no quotes or backslashes (their quoting)
FORMAT_LITERALS = frozenset(" -/:.,;_T()[]#+")


def format_tokens(fmt: str) -> list[tuple[str, str]] | str:
    """('code', 'Y') and ('text', '-') pieces of a strftime format, or what is wrong."""
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(fmt):
        ch = fmt[i]
        if ch == "%":
            code = fmt[i + 1:i + 2]
            if code not in FORMAT_CODES:
                return (f"format code `%{code}` is not portable; codes: "
                        + " ".join("%" + c for c in FORMAT_CODES))
            out.append(("code", code))
            i += 2
            continue
        if ch not in FORMAT_LITERALS:
            return (f"format character {ch!r} is not portable; between codes use "
                    + repr("".join(sorted(FORMAT_LITERALS))))
        if out and out[-1][0] == "text":
            out[-1] = ("text", out[-1][1] + ch)
        else:
            out.append(("text", ch))
        i += 1
    return out


def _pattern(fmt: str, engine: str, quote: Callable[[str], str]) -> str:
    tokens = format_tokens(fmt)
    assert not isinstance(tokens, str), tokens  # the checker accepted the format
    merged: list[tuple[str, str]] = []  # %% is text where the engine has no code for it
    for kind, value in tokens:
        if kind == "code" and value == "%" and FORMAT_CODES["%"][engine] is None:
            kind = "text"
        if kind == "text" and merged and merged[-1][0] == "text":
            merged[-1] = ("text", merged[-1][1] + value)
        else:
            merged.append((kind, value))
    pieces = []
    for kind, value in merged:
        if kind == "text":
            pieces.append(quote(value))
            continue
        spelled = FORMAT_CODES[value][engine]
        if spelled is None:
            raise CannotExpress(f"`strftime` on {engine}: no pattern prints %{value} "
                                f"({FORMAT_CODE_DOCS[value]}) as DuckDB does")
        pieces.append(spelled)
    return "".join(pieces)


def _format(node: exp.Expression) -> str:
    return node.args["format"].this


def to_char(engine: str) -> Spelling:
    """PostgreSQL's and Snowflake's TO_CHAR; literal text in double quotes."""
    def spell(node: exp.Expression) -> exp.Expression:
        pattern = _pattern(_format(node), engine, lambda t: '"' + t + '"')
        when = node.this if is_a(node.this, "TIMESTAMP") else cast(node.this, "TIMESTAMP")
        return exp.Anonymous(this="TO_CHAR", expressions=[when, exp.Literal.string(pattern)])
    return spell


def date_format_java(node: exp.Expression) -> exp.Expression:
    """Spark's DATE_FORMAT with a Java pattern; literal text in single quotes."""
    pattern = _pattern(_format(node), "spark", lambda t: "'" + t + "'")
    return exp.Anonymous(this="DATE_FORMAT", expressions=[node.this,
                                                          exp.Literal.string(pattern)])


def format_datetime(node: exp.Expression) -> exp.Expression:
    """BigQuery's FORMAT_DATETIME of the value as a DATETIME (its %-codes are C's)."""
    pattern = _pattern(_format(node), "bigquery", lambda t: t)
    return exp.Anonymous(this="FORMAT_DATETIME", expressions=[
        exp.Literal.string(pattern), cast(node.this, "DATETIME")])


def date_format_mysql(node: exp.Expression) -> exp.Expression:
    """Trino's date_format with MySQL's %-codes."""
    pattern = _pattern(_format(node), "trino", lambda t: t)
    return exp.Anonymous(this="DATE_FORMAT", expressions=[cast(node.this, "TIMESTAMP"),
                                                          exp.Literal.string(pattern)])


# ---------------------------------------------------------------- json_text

# the portable JSON paths: `$`, then `.key` (a key of letters, digits and _, not
# starting with a digit) and `[n]` (an array index from 0) steps
JSON_KEY = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
JsonStep = str | int  # a key, or an array index


def json_path_steps(path: str) -> list[JsonStep] | str:
    """The steps of a portable JSON path (`$.a.b[0]`), or what is wrong with it."""
    hint = "paths are `$`, then `.key` (letters, digits, _) and `[n]` steps, such as '$.a.b[0]'"
    if not path.startswith("$"):
        return f"path {path!r} does not start with `$`; {hint}"
    steps: list[JsonStep] = []
    i = 1
    while i < len(path):
        if path[i] == ".":
            j = i + 1
            while j < len(path) and path[j] in JSON_KEY:
                j += 1
            key = path[i + 1:j]
            if not key or key[0].isdigit():
                return f"path {path!r} has a key that is not portable at {i}; {hint}"
            steps.append(key)
            i = j
        elif path[i] == "[":
            j = path.find("]", i)
            digits = path[i + 1:j] if j > 0 else ""
            if not digits.isascii() or not digits.isdigit() or (len(digits) > 1 and digits[0] == "0"):
                return f"path {path!r} has an index that is not portable at {i}; {hint}"
            steps.append(int(digits))
            i = j + 1
        else:
            return f"path {path!r} has {path[i]!r} at {i}; {hint}"
    return steps


def _json_path(node: exp.Expression) -> tuple[exp.Expression, list[JsonStep]]:
    """The document and the path steps of a json_text node: CASE WHEN
    JSON_TYPE(j, path) = 'VARCHAR' THEN JSON_EXTRACT_STRING(j, path) END."""
    extract = node.args["ifs"][0].args["true"]
    document, path = extract.expressions
    steps = json_path_steps(path.this)
    assert not isinstance(steps, str), steps  # the checker accepted the path
    return document, steps


def _json_typeof(value: exp.Expression, kind: str) -> exp.Expression:
    return exp.EQ(this=exp.Anonymous(this="JSON_TYPEOF", expressions=[value]),
                  expression=exp.Literal.string(kind))


def _pg_json_value(level: int) -> exp.Column:
    return exp.column("v", table=f"strata_json_{level}")


def _pg_json_step(level: int, step: JsonStep) -> exp.Expression:
    """The value one step below level `level - 1`, as a derived table: an array element by
    `->`; an object key's FIRST value (DuckDB's choice among duplicate keys, where
    PostgreSQL's `->` takes the last) by JSON_EACH in document order; no row when there
    is none."""
    above = _pg_json_value(level - 1)
    if isinstance(step, int):
        select = exp.select(exp.alias_(exp.JSONExtract(this=above, expression=num(step)), "v"))
    else:
        pairs = exp.Table(this=exp.Anonymous(this="JSON_EACH", expressions=[
            _case((_json_typeof(above.copy(), "object"), above.copy()))]), ordinality=True,
            alias=exp.TableAlias(this=exp.to_identifier("e"), columns=[
                exp.to_identifier(c) for c in ("key", "value", "n")]))
        select = (exp.select(exp.alias_(exp.column("value", table="e"), "v")).from_(pairs)
                  .where(exp.EQ(this=exp.column("key", table="e"),
                                expression=exp.Literal.string(step)))
                  .order_by(exp.column("n", table="e")).limit(1))
    return exp.Lateral(this=exp.Subquery(this=select),
                       alias=exp.TableAlias(this=exp.to_identifier(f"strata_json_{level}")))


def json_text_each(node: exp.Expression) -> exp.Expression:
    """PostgreSQL: the text cast to JSON (malformed text raises, as on DuckDB), walked a
    step at a time, and the leaf's text when it is a string, in a scalar subquery."""
    document, steps = _json_path(node)
    start = exp.select(exp.alias_(cast(document.copy(), "JSON"), "v")).subquery("strata_json_0")
    leaf = _pg_json_value(len(steps))
    text = exp.JSONBExtractScalar(this=leaf.copy(), expression=exp.Literal.string("{}"))
    query = exp.select(_case((_json_typeof(leaf, "string"), text))).from_(start)
    for level, step in enumerate(steps, start=1):
        query = query.join(_pg_json_step(level, step), join_type="CROSS")
    return exp.Subquery(this=query)


# ---------------------------------------------------------------- try_cast

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
    return _case((_in_words(s, TRUE_WORDS), exp.true()), (_in_words(s, FALSE_WORDS), exp.false()))


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
        return _case(
            (_matches(engine, s, INT_DECIMAL),
             _case((_within_int64(value), cast(value.copy(), "BIGINT")))),
            (_matches(engine, s, INT_HEX),
             _case((_radix_fits(hexes, 16, "7"), from_hex(hexes.copy())))),
            (_matches(engine, s, INT_BINARY),
             _case((_radix_fits(bits, 63, "1"), from_binary(bits.copy())))))
    return spell


def _pg_rounded(text: exp.Expression) -> exp.Expression:
    return exp.Round(this=cast(text, "DECIMAL"))


def _pg_bits(hex_digits: bool) -> TryInt:
    """PostgreSQL: the digits as a 64-bit BIT string, read as a BIGINT."""
    def value(digits: exp.Expression) -> exp.Expression:
        padded = exp.Pad(this=digits, expression=num(16 if hex_digits else 64),
                         fill_pattern=exp.Literal.string("0"), is_left=True)
        if hex_digits:
            padded = exp.DPipe(this=exp.Literal.string("x"), expression=padded, safe=True)
        return cast(cast(padded, exp.DataType.build("BIT(64)", dialect="postgres")), "BIGINT")
    return value


def _spark_rounded(text: exp.Expression) -> exp.Expression:
    """Spark: the text as DECIMAL(38, 0) (rounding half up, Java's BigDecimal;
    NULL past 38 digits)."""
    return exp.TryCast(this=text, to=exp.DataType.build("DECIMAL(38, 0)"), safe=True)


def _spark_conv(base: int) -> TryInt:
    def value(digits: exp.Expression) -> exp.Expression:
        converted = exp.Anonymous(this="CONV", expressions=[
            exp.Concat(expressions=[exp.Literal.string("0"), digits]), num(base), num(10)])
        return cast(converted, "BIGINT")
    return value


# ---------------------------------------------------------------- the tables

def _snowflake_occurrence(every: bool) -> list[exp.Expression]:
    return [num(1), num(0 if every else 1)]  # from position 1; occurrence 0 is every one


def _postgres_flags(every: bool) -> list[exp.Expression]:
    return [exp.Literal.string("g")] if every else []


REGEXP = {  # engine -> the regexp_* spellings (dialects/regex.py)
    "postgres": {"regexp_matches": R.matches_by_operator(R.RE2),
                 "regexp_replace": R.replace_posix("postgres", _postgres_flags),
                 "regexp_extract": R.extract_one_group("postgres")},
    "spark": {"regexp_matches": R.matches_by_operator(R.JAVA),
              "regexp_replace": R.replace_all_or_first("spark", R.JAVA, R.DOLLAR),
              "regexp_extract": R.extract_java},
    "snowflake": {"regexp_matches": R.matches_by_position,
                  "regexp_replace": R.replace_posix("snowflake", _snowflake_occurrence),
                  "regexp_extract": R.extract_one_group("snowflake")},
    "bigquery": {"regexp_matches": R.matches_by("REGEXP_CONTAINS", R.RE2),
                 "regexp_replace": R.replace_all_or_first("bigquery", R.RE2, R.BACKSLASH),
                 "regexp_extract": R.extract_one_group("bigquery")},
    "trino": {"regexp_matches": R.matches_by("REGEXP_LIKE", R.JAVA),
              "regexp_replace": R.replace_all_or_first("trino", R.JAVA, R.DOLLAR),
              "regexp_extract": R.extract_or_null},
}


NO_JSON_SPARK = ("get_json_object reads malformed JSON as NULL where DuckDB raises, and "
                 "gives the number 1 as the text '1' where json_text is NULL")
NO_JSON = ("its JSON reading (malformed text, duplicate keys, escapes) has not been "
           "checked against DuckDB's (json_text runs on duckdb and postgres)")
NO_STRPTIME = ("its date parser has not been checked to accept exactly the texts DuckDB's "
               "strptime accepts (1-digit fields, a 1- to 4-digit %Y, spaces around) and to "
               "fail on the others; strptime runs on duckdb")
NO_EXACT_QUANTILE = "only an approximate or window-only percentile"
NO_TRY_CAST = ("its text-to-number reading has not been checked against DuckDB's forms "
               "(try_cast runs on duckdb, postgres and spark)")

POSTGRES: dict[str, Spelling] = {
    "greatest": c_collation_items, "least": c_collation_items,
    "ends_with": ends_by_length, "left": int_count, "right": int_count,
    "sign": sign_by_comparison, "power": guarded_power, "sqrt": guarded_sqrt,
    "ln": guarded_ln, "log10": log10_function, "exp": guarded_exp,
    "make_date": make_date_named("MAKE_DATE", "INT"),
    "strftime": to_char("postgres"),
    "strptime": refuse("postgres", NO_STRPTIME),
    "json_text": json_text_each,
    "string_agg": string_agg_c_order, "list_agg": list_agg_c_order,
    "arg_min": arg_first_of_array, "arg_max": arg_first_of_array,
    "try_cast": try_int("postgres", _pg_rounded, _pg_bits(True), _pg_bits(False)),
    **REGEXP["postgres"],
}

SPARK: dict[str, Spelling] = {
    "left": negative_counts, "right": negative_counts,
    "sign": sign_by_comparison, "ln": guarded_ln, "log10": guarded_ln,
    "date_add": timestampadd,
    "strftime": date_format_java,
    "strptime": refuse("spark", NO_STRPTIME),
    "json_text": refuse("spark", NO_JSON_SPARK),
    "string_agg": string_agg_sorted_list, "list_agg": list_agg_sorted,
    "arg_min": arg_by_struct, "arg_max": arg_by_struct,
    "quantile_cont": percentile,
    "try_cast": try_int("spark", _spark_rounded, _spark_conv(16), _spark_conv(2)),
    **REGEXP["spark"],
}

SNOWFLAKE: dict[str, Spelling] = {
    "left": negative_counts, "right": negative_counts,
    "sign": sign_by_comparison, "power": guarded_power, "sqrt": guarded_sqrt,
    "ln": guarded_ln, "log10": guarded_ln, "exp": guarded_exp,
    "make_date": make_date_named("DATE_FROM_PARTS"),
    "strftime": to_char("snowflake"),
    "strptime": refuse("snowflake", NO_STRPTIME),
    "json_text": refuse("snowflake", NO_JSON),
    "string_agg": string_agg_within_group, "list_agg": list_agg_within_group,
    "arg_min": arg_within_group, "arg_max": arg_within_group,
    "try_cast": refuse("snowflake", NO_TRY_CAST),
    **REGEXP["snowflake"],
}

BIGQUERY: dict[str, Spelling] = {
    "greatest": no_nan_extremes("bigquery"), "least": no_nan_extremes("bigquery"),
    "strpos": strpos_positive, "left": negative_counts, "right": negative_counts,
    "split_part": split_by_ordinal,
    "sign": sign_by_comparison, "power": guarded_power, "sqrt": guarded_sqrt,
    "ln": guarded_ln, "log10": guarded_ln, "exp": guarded_exp,
    "date_add": datetime_add,
    "strftime": format_datetime,
    "strptime": refuse("bigquery", NO_STRPTIME),
    "json_text": refuse("bigquery", NO_JSON),
    "string_agg": string_agg_plain_order,
    "arg_min": arg_limit_one, "arg_max": arg_limit_one,
    "list_agg": refuse("bigquery", "no array there is NULL, and none with a NULL element "
                       "can be returned: an empty group's list would not be NULL"),
    "median": refuse("bigquery", NO_EXACT_QUANTILE),
    "quantile_cont": refuse("bigquery", NO_EXACT_QUANTILE),
    "try_cast": refuse("bigquery", NO_TRY_CAST),
    **REGEXP["bigquery"],
}

TRINO: dict[str, Spelling] = {
    "greatest": ignoring_nulls, "least": ignoring_nulls,
    "replace": replace_nothing_for_empty, "ends_with": ends_by_length,
    "left": negative_counts, "right": right_by_substr,
    "split_part": split_by_element, "md5": md5_of_utf8,
    "sign": sign_by_comparison,
    "make_date": make_date_by_text,
    "strftime": date_format_mysql,
    "strptime": refuse("trino", NO_STRPTIME),
    "json_text": refuse("trino", NO_JSON),
    "string_agg": string_agg_within_group,
    "arg_min": arg_element_at, "arg_max": arg_element_at,
    "median": refuse("trino", NO_EXACT_QUANTILE),
    "quantile_cont": refuse("trino", NO_EXACT_QUANTILE),
    "try_cast": refuse("trino", NO_TRY_CAST),
    **REGEXP["trino"],
}
