"""How each engine spells the catalogue functions whose SQL it means otherwise.

The catalogue (strata/semantics/functions.py) builds each function as SQLGlot's
node, which renders DuckDB's meaning on DuckDB. A node whose meaning some engine
differs on is tagged with its Strata name (`TAG` in the node's meta); each engine
below has a table `name -> spelling` (a function of the tagged node returning the
engine's node), applied by `function_rewrite` among the dialect's rewrites. A
function missing from an engine's table renders as SQLGlot spells it there, which
was checked to mean DuckDB's result (docs/DIALECTS.md, tests/differential/functions2);
where an engine cannot express DuckDB's result, the spelling is `refuse(...)`: E091.

The spellings of the families with rules of their own live beside it: strftime
formats (formats.py), json_text (json_text.py), try_cast (try_cast.py); what every
spelling is made of in spelling.py.
"""

from __future__ import annotations

from sqlglot import exp

from dialects import regex as R
from dialects.base import cast, is_a, num
from dialects.formats import date_format_java, date_format_mysql, format_datetime, to_char
from dialects.json_text import json_text_each
from dialects.spelling import Spelling, case, double_literal, is_null, paren, refuse
from dialects.try_cast import pg_bits, pg_rounded, spark_conv, spark_rounded, try_int

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
    collated = [exp.Collate(this=paren(i), expression=exp.to_identifier("C", quoted=True))
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
    return case((exp.GTE(this=n.copy(), expression=num(0)), kind(this=s.copy(), expression=n)),
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
                                                        expression=paren(n)),
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
    return case((exp.EQ(this=search.copy(), expression=exp.Literal.string("")), node.this.copy()),
                 default=node)


def split_by_element(node: exp.Expression) -> exp.Expression:
    """split_part where the engine's returns NULL past the end or takes no negative
    position (Trino): the element of the split array ('' past the end), NULL on NULL."""
    s = node.this
    parts = exp.Split(this=s.copy(), expression=node.args["delimiter"])
    element = exp.Anonymous(this="ELEMENT_AT", expressions=[parts, node.args["part_index"]])
    return case((is_null(s), exp.Null()),
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
    return case((is_null(s), exp.Null()),
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
    return cast(case((is_null(x), exp.Null()),
                      (exp.EQ(this=x.copy(), expression=num(0)), num(0)),
                      (exp.LT(this=x.copy(), expression=num(0)), exp.Neg(this=num(1))),
                      (exp.And(this=exp.GT(this=x.copy(), expression=num(0)),
                               expression=exp.LTE(this=x.copy(), expression=double_literal(INF))),
                       num(1)),
                      default=num(0)), "BIGINT")


def _nan_first(x: exp.Expression) -> tuple[exp.Expression, exp.Expression]:
    """NaN stays NaN (an arm before the range tests: PostgreSQL and Spark order NaN
    above Infinity, so `x > 709.78` holds for it)."""
    return (exp.GT(this=x.copy(), expression=double_literal(INF)), x.copy())


def guarded_ln(node: exp.Expression) -> exp.Expression:
    """ln/log10 at 0 is -Infinity and below 0 NaN in DuckDB; PostgreSQL and
    BigQuery raise, Spark returns NULL."""
    x = node.expressions[0] if isinstance(node, exp.Anonymous) else (
        node.this if isinstance(node, exp.Ln) else node.expression)
    return case((exp.EQ(this=x.copy(), expression=num(0)), double_literal("-" + INF)),
                 (exp.LT(this=x.copy(), expression=num(0)), double_literal("NaN")), default=node)


def guarded_sqrt(node: exp.Expression) -> exp.Expression:
    """sqrt below 0 is NaN in DuckDB; PostgreSQL and BigQuery raise."""
    return case((exp.LT(this=node.this.copy(), expression=num(0)), double_literal("NaN")),
                 default=node)


def guarded_exp(node: exp.Expression) -> exp.Expression:
    """exp past the double range is Infinity or 0 in DuckDB; PostgreSQL raises on
    overflow and on a result that underflows to 0."""
    x = node.this
    return case(_nan_first(x),
                 (exp.GT(this=x.copy(), expression=num(EXP_MAX)), double_literal(INF)),
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
    return case((exp.Or(this=is_null(x), expression=is_null(y)), exp.Null()),
                 (exp.And(this=exp.EQ(this=x.copy(), expression=num(0)),
                          expression=exp.LT(this=y.copy(), expression=num(0))),
                  case((exp.And(this=odd, expression=negative_zero), double_literal("-" + INF)),
                        default=double_literal(INF))),
                 (exp.And(this=exp.EQ(this=x.copy(), expression=double_literal("-" + INF)),
                          expression=fraction.copy()),
                  case((exp.GT(this=y.copy(), expression=num(0)), double_literal(INF)),
                        default=num(0.0))),
                 (exp.And(this=exp.LT(this=x.copy(), expression=num(0)),
                          expression=exp.And(
                              this=exp.GT(this=x.copy(), expression=double_literal("-" + INF)),
                              expression=exp.And(this=fraction, expression=exp.LTE(
                                  this=exp.Abs(this=y.copy()), expression=double_literal(INF))))),
                  double_literal("NaN")),
                 default=node)


# ---------------------------------------------------------------- aggregates

def _values(node: exp.Expression) -> tuple[exp.Expression, exp.Expression]:
    order = node.this
    return order.this, node.args["separator"]


def _null_on_none(value: exp.Expression, joined: exp.Expression) -> exp.Expression:
    """NULL for a group without a non-NULL value (an engine gives '' there)."""
    return case((exp.EQ(this=exp.Count(this=value.copy()), expression=num(0)), exp.Null()),
                 default=joined)


def string_agg_sorted_list(node: exp.Expression) -> exp.Expression:
    """Spark: the sorted list of values (byte order is code-point order), joined."""
    value, separator = _values(node)
    listed = exp.ArrayAgg(this=value.copy())  # COLLECT_LIST: an aggregate a window can take
    joined = exp.Anonymous(this="ARRAY_JOIN", expressions=[
        exp.Anonymous(this="ARRAY_SORT", expressions=[listed]), separator])
    return _null_on_none(value, joined)


def string_agg_c_order(node: exp.Expression) -> exp.Expression:
    """PostgreSQL: STRING_AGG ordered by the value COLLATE "C" (code points)."""
    value, separator = _values(node)
    key = exp.Collate(this=paren(value.copy()), expression=exp.to_identifier("C", quoted=True))
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
    key = exp.Collate(this=paren(value.copy()), expression=exp.to_identifier("C", quoted=True))
    order = node.this.this
    order.set("expressions", [exp.Ordered(this=key, nulls_first=False)])
    return node


def list_agg_sorted(node: exp.Expression) -> exp.Expression:
    """Spark: the collected non-NULL values sorted (ARRAY_SORT: NaN last, text by
    UTF-8 bytes, which is code-point order); NULL for none (COLLECT_LIST gives [])."""
    value = _listed(node)
    listed = exp.Anonymous(this="ARRAY_SORT", expressions=[exp.ArrayAgg(this=value.copy())])
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
            key = exp.Collate(this=paren(key), expression=exp.to_identifier("C", quoted=True))
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
    return case((kept, value))


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


# ---------------------------------------------------------------- the tables

# Windowed aggregates (LANGUAGE.md allows every aggregate after `window`) an engine has
# no form of: refused before their spelling (`windowed_refusals`).
ORDERED_IN_WINDOW = ("PostgreSQL takes no ORDER BY inside a windowed aggregate and calls "
                     "no ordered-set aggregate (PERCENTILE_CONT) over a window")
UNCHECKED_WINDOW = ("its windowed form of this ordered aggregate has not been checked "
                    "against DuckDB's (windowed, it runs on duckdb and spark)")
WINDOW_REFUSED: dict[str, dict[str, str]] = {
    "postgres": dict.fromkeys(("string_agg", "list_agg", "median", "quantile_cont"),
                              ORDERED_IN_WINDOW),
    **{engine: dict.fromkeys(("string_agg", "list_agg", "median", "quantile_cont"),
                             UNCHECKED_WINDOW)
       for engine in ("snowflake", "bigquery", "trino")},
}
# Spark's MEDIAN and PERCENTILE take no ORDER BY or frame in their OVER clause
# (INVALID_WINDOW_SPEC_FOR_AGGREGATION_FUNC): over a whole partition they run
SPARK_FRAMED_REFUSED = dict.fromkeys(("median", "quantile_cont"), (
    "MEDIAN and PERCENTILE take no ORDER BY or frame in their window; over the whole "
    "partition (`window by k`, no order) they run"))

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
    "try_cast": try_int("postgres", pg_rounded, pg_bits(True), pg_bits(False)),
    **R.REGEXP["postgres"],
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
    "try_cast": try_int("spark", spark_rounded, spark_conv(16), spark_conv(2)),
    **R.REGEXP["spark"],
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
    **R.REGEXP["snowflake"],
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
    **R.REGEXP["bigquery"],
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
    **R.REGEXP["trino"],
}
