"""Snowflake: DDL commits implicitly, so view switches cannot share a transaction.

Where Snowflake means something else than DuckDB by the same spelling (the reference
sections each rewrite relies on are in docs/DIALECTS.md; no engine here runs it):
- DATEDIFF(WEEK, ..) counts week boundaries; DuckDB's week difference is whole weeks.
- DAYOFWEEK and WEEK follow the session's WEEK_START / WEEK_OF_YEAR_POLICY: the ISO
  parts are used (DAYOFWEEKISO % 7, WEEKISO); EXTRACT has no EPOCH but
  EPOCH_MICROSECOND.
- CAST of a FLOAT to an integer rounds halves away from zero; DuckDB's to even.
- FLATTEN (an expand) yields VARIANT items: each is cast to the list's element type.
- `/` and AVG of NUMBERs stay NUMBER: Strata types both double.
- LIKE: every backslash doubled with an explicit ESCAPE '\\'.
"""

from __future__ import annotations

from sqlglot import exp

from dialects import functions, series
from dialects.base import (
    Dialect,
    cast,
    double_average,
    double_division,
    double_to_int_half_even,
    extract_rewrite,
    field,
    half_even_by_halves,
    like_without_escape,
    num,
    over_each_aggregate,
    shifted,
    typed_items,
    whole_weeks,
)
from dialects.binding import bind_by_subquery
from dialects.numeric import substr_positions, unicode_trim
from dialects.spelling import function_rewrite, windowed_refusals


def _epoch(x: exp.Expression) -> exp.Expression:
    micros = exp.Extract(this=exp.var("EPOCH_MICROSECOND"),
                         expression=cast(x, "TIMESTAMPNTZ"))
    return exp.Div(this=micros, expression=num(1000000), typed=True)


PARTS = {
    "DAYOFWEEK": shifted("DAYOFWEEKISO", modulo=7),  # Monday 1 .. Sunday 7 -> Sunday 0
    "WEEK": field("WEEKISO"),
    "EPOCH": _epoch,
}

DIALECT = Dialect(name="snowflake", sqlglot="snowflake", transactional_ddl=False,
                  create_or_replace_view=True, reads_files=False, row_hash="hash", bind=bind_by_subquery,
                  rewrites=(windowed_refusals("snowflake", functions.WINDOW_REFUSED["snowflake"]),
                            function_rewrite(functions.SNOWFLAKE), series.spelled(series.flatten_range),
                            whole_weeks, extract_rewrite(PARTS, epoch="DOUBLE"),
                            double_to_int_half_even(half_even_by_halves),
                            double_division, double_average,
                            substr_positions, unicode_trim,
                            like_without_escape(clause=True), typed_items, over_each_aggregate))
