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
"""

from __future__ import annotations

from sqlglot import exp

from dialects import functions
from dialects.base import (
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
from dialects.functions import function_rewrite
from dialects.numeric import ieee_divide_function


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


PARTS = {
    "DAYOFWEEK": shifted("DAYOFWEEK", minus=1),  # Sunday 1 -> DuckDB's Sunday 0
    "WEEK": field("ISOWEEK"),  # DuckDB's week is the ISO week
    "EPOCH": _epoch,
}

DIALECT = Dialect(name="bigquery", sqlglot="bigquery", transactional_ddl=False,
                  create_or_replace_view=True, reads_files=False,
                  row_hash="farm_fingerprint",
                  rewrites=(function_rewrite(functions.BIGQUERY),
                            _monday_weeks, extract_rewrite(PARTS, epoch="DOUBLE"),
                            double_to_int_half_even(half_even_by_halves), _scaled_decimal,
                            ieee_divide_function, double_average,
                            like_without_escape(clause=False)))
