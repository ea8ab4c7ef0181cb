"""BigQuery: no multi-statement DDL transactions; `timestamp` is its DATETIME.

Where BigQuery means something else than DuckDB by the same spelling (the reference
sections each rewrite relies on are in docs/DIALECTS.md; no engine here runs it):
- WEEK starts on Sunday and DATE_DIFF(.., WEEK) counts Sundays crossed: truncation
  uses ISOWEEK, differences count days / 7, EXTRACT(WEEK) is EXTRACT(ISOWEEK).
- EXTRACT has no EPOCH (UNIX_MICROS of the value read as UTC) and counts DAYOFWEEK
  from Sunday = 1.
- CAST of a FLOAT64 to INT64 rounds halves away from zero; DuckDB's to even.
- a decimal(p, s) cast renders as bare NUMERIC (SQLGlot keeps parameters in DDL
  only): ROUND(x, s) first.
- `/` of NUMERICs and AVG of a NUMERIC stay NUMERIC: Strata types both double.
- LIKE escapes with a backslash: every backslash doubled (no ESCAPE clause).
- ROUND(x, n) of a FLOAT64 and its cast to NUMERIC round alike; DuckDB's differ
  (2.675: 2.67 and 2.68): DuckDB's rules spelled (dialects/numeric.py).
- SUBSTR reads start 0 and negative lengths otherwise, TRIM trims its own whitespace:
  DuckDB's positions and space separators spelled out.
- a RANGE frame with an offset orders by one key and takes no NULLS LAST: E091 where
  Strata's NULL order is not BigQuery's default.
"""

from __future__ import annotations

from sqlglot import exp

from dialects import functions, series
from dialects.base import (
    CannotExpress,
    Dialect,
    _unit,
    cast,
    double_average,
    double_to_int_half_even,
    extract_rewrite,
    field,
    half_even_by_halves,
    is_a,
    like_without_escape,
    num,
    shifted,
    whole_weeks,
)
from dialects.binding import bind_by_subquery
from dialects.numeric import (
    Rounding,
    double_to_decimal,
    ieee_divide_function,
    numeric_text,
    substr_positions,
    trunc_function,
    unicode_trim,
)
from dialects.routines import RoutineStyle, sql_as
from dialects.spelling import function_rewrite, windowed_refusals


def _monday_weeks(node: exp.Expression) -> exp.Expression:
    if isinstance(node, (exp.TimestampTrunc, exp.DateTrunc)) and _unit(node) == "WEEK":
        node.set("unit", exp.var("ISOWEEK"))
        return node
    return whole_weeks(node)


def _epoch(x: exp.Expression) -> exp.Expression:
    """UNIX_MICROS of the DATETIME (or DATE) read as a UTC TIMESTAMP, in seconds."""
    micros = exp.Anonymous(this="UNIX_MICROS", expressions=[cast(x, "TIMESTAMPTZ")])
    return exp.Div(this=micros, expression=num(1000000), typed=True)


def _scaled_decimal(node: exp.Expression) -> exp.Expression:
    """SQLGlot drops NUMERIC(p, s)'s parameters in a CAST (BigQuery takes them in DDL
    only), so nothing would round to s digits: ROUND(x, s) first (halves away from
    zero, as DuckDB's decimal cast), then the cast (NUMERIC or BIGNUMERIC by size)."""
    if not (isinstance(node, exp.Cast) and node.to.is_type("DECIMAL") and
            len(node.to.expressions) == 2) or isinstance(node.this, exp.Round):
        return node
    scale = node.to.expressions[1].this
    x = node.this if is_a(node.this, "DOUBLE", "DECIMAL", "BIGINT") else \
        cast(node.this, "BIGDECIMAL")
    return exp.Cast(this=exp.Round(this=x, decimals=scale.copy()), to=node.to)


def _windowed_null_order(node: exp.Expression) -> exp.Expression:
    """An aggregate over a window takes no NULLS FIRST/LAST in BigQuery (SQLGlot
    refuses to write one), and BigQuery's default puts NULLs first ascending and last
    descending, where Strata's keys say otherwise (NULLs last either way, unless
    written). Each such key gets `x IS NULL` before it, which orders the NULLs where
    Strata wants them, and the key itself then takes BigQuery's default. A RANGE
    frame with an offset reads exactly one key: left as it is (E091)."""
    if not (isinstance(node, exp.Window) and isinstance(node.this, exp.AggFunc)
            and node.args.get("order")):
        return node
    spec = node.args.get("spec")
    if spec is not None and spec.args.get("kind") == "RANGE" and any(
            isinstance(spec.args.get(k), exp.Expression) for k in ("start", "end")):
        return _range_offset_order(node)
    keys = []
    for key in node.args["order"].expressions:
        desc = bool(key.args.get("desc"))
        nulls_first = bool(key.args.get("nulls_first"))
        if nulls_first != desc:  # BigQuery's default already: NULLS FIRST asc, LAST desc
            keys.append(key.copy())
            continue
        missing = exp.Is(this=_paren(key.this.copy()), expression=exp.Null())
        keys.append(exp.Ordered(this=missing, desc=nulls_first, nulls_first=not nulls_first))
        keys.append(exp.Ordered(this=key.this.copy(), desc=desc, nulls_first=not desc))
    window = node.copy()
    window.set("order", exp.Order(expressions=keys))
    return window


def _range_offset_order(node: exp.Window) -> exp.Window:
    """A RANGE frame with an offset orders by exactly one numeric key, so the `x IS
    NULL` key cannot go before it: where Strata's NULLs-last order is not BigQuery's
    default (NULLs first ascending), E091 says so (the offset, not the NULLS LAST
    spelling, is what has no form)."""
    (key,) = node.args["order"].expressions
    if bool(key.args.get("nulls_first")) != bool(key.args.get("desc")):
        return node
    raise CannotExpress("a `range between` frame with an offset on bigquery: BigQuery "
                        "orders such a window by one key, NULLs first ascending (last "
                        "descending), and takes no NULLS LAST in a window; order it "
                        "`nulls first` (or descending `nulls last`), or count `rows`")


def _paren(x: exp.Expression) -> exp.Expression:
    return x if isinstance(x, (exp.Column, exp.Literal, exp.Paren, exp.Func)) else exp.Paren(this=x)


# ROUND(x, n) of a FLOAT64 and the cast to NUMERIC round alike, where DuckDB's round
# and decimal cast differ (2.675: 2.67 and 2.68): DuckDB's rule spelled out for each
ROUNDING = Rounding(trunc=trunc_function, bind=bind_by_subquery)

PARTS = {
    "DAYOFWEEK": shifted("DAYOFWEEK", minus=1),  # Sunday 1 -> DuckDB's Sunday 0
    "WEEK": field("ISOWEEK"),  # DuckDB's week is the ISO week
    "EPOCH": _epoch,
}

DIALECT = Dialect(name="bigquery", sqlglot="bigquery", transactional_ddl=False,
                  create_or_replace_view=True, reads_files=False,
                  row_hash="farm_fingerprint", bind=bind_by_subquery, routines=RoutineStyle('bigquery', sql_as),
                  rewrites=(windowed_refusals("bigquery", functions.WINDOW_REFUSED["bigquery"]),
                            function_rewrite(functions.BIGQUERY), series.spelled(series.generate_array),
                            _monday_weeks, extract_rewrite(PARTS, epoch="DOUBLE"),
                            double_to_int_half_even(half_even_by_halves),
                            ROUNDING.rewrite, double_to_decimal(ROUNDING, numeric_text), _scaled_decimal,
                            substr_positions, unicode_trim,
                            ieee_divide_function, double_average,
                            like_without_escape(clause=False), _windowed_null_order))
