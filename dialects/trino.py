"""Trino: no transactional DDL across catalogs; files via a connector's tables.

Where Trino means something else than DuckDB by the same spelling (the reference
sections each rewrite relies on are in docs/DIALECTS.md; no engine here runs it):
- date_diff counts whole units, DuckDB's boundaries crossed: the truncated values'.
- EXTRACT spells DOW (ISO: Monday 1 .. Sunday 7) and DOY, has no EPOCH (milliseconds
  since 1970 by date_diff, which reads the value without a zone).
- a text compared with a date or timestamp is not coerced: the cast is written.
- CAST(timestamp AS VARCHAR) prints every fraction digit (`.000`): trailing zeros
  (and a bare point) are dropped, as DuckDB prints it.
- CAST of a DOUBLE to an integer rounds halves up; DuckDB's to even.
- `/` of integers divides whole, of decimals stays decimal, AVG of a decimal too.
- LIKE: every backslash doubled with an explicit ESCAPE '\\'.
- ROUND of a double and its cast to DECIMAL round the double's decimal text half up
  (round(2.675, 2) = 2.68, DuckDB 2.67): DuckDB's rule spelled (dialects/numeric.py);
  a double's text is Java's (1.0E20): E091.
- SUBSTR reads start 0 and negative lengths otherwise, TRIM trims its own whitespace:
  DuckDB's positions and space separators spelled out.
"""

from __future__ import annotations

from sqlglot import exp

from dialects import functions, series
from dialects.base import (
    Dialect,
    boundaries,
    cast,
    double_average,
    double_division,
    double_to_int_half_even,
    extract_rewrite,
    field,
    half_even_by_halves,
    is_a,
    like_without_escape,
    num,
    over_each_aggregate,
    shifted,
    text_meets_time,
)
from dialects.binding import bind_by_lambda
from dialects.numeric import (
    Rounding,
    double_text_refused,
    double_to_decimal,
    substr_positions,
    trunc_function,
    unicode_trim,
)
from dialects.routines import RoutineStyle, sql_routine
from dialects.spelling import function_rewrite, windowed_refusals

EPOCH_START = exp.Literal.string("1970-01-01 00:00:00")


def _epoch(x: exp.Expression) -> exp.Expression:
    millis = exp.DateDiff(this=cast(x, "TIMESTAMP"), expression=cast(EPOCH_START.copy(),
                                                                     "TIMESTAMP"),
                          unit=exp.var("MILLISECOND"))
    return exp.Div(this=cast(millis, "DOUBLE"), expression=num(1000), typed=True)


def _timestamp_text(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.Cast) and node.to.is_type("TEXT", "VARCHAR") and \
            is_a(node.this, "TIMESTAMP"):
        return exp.RegexpReplace(this=node, expression=exp.Literal.string(
            r"(\.[0-9]*[1-9])0+$|\.0+$"), replacement=exp.Literal.string("$1"))
    return node


# ROUND of a double rounds the value half up as Java's BigDecimal of its decimal text
# (2.675 -> 2.68; DuckDB 2.67) and a cast to DECIMAL too: DuckDB's rule spelled out
ROUNDING = Rounding(trunc=trunc_function, bind=bind_by_lambda)

PARTS = {
    "DAYOFWEEK": shifted("DOW", modulo=7),  # ISO Monday 1 .. Sunday 7 -> Sunday 0
    "DAYOFYEAR": field("DOY"),
    "EPOCH": _epoch,
}

DIALECT = Dialect(name="trino", sqlglot="trino", transactional_ddl=False,
                  create_or_replace_view=True, reads_files=False, row_hash="xxhash64", bind=bind_by_lambda, routines=RoutineStyle('trino', sql_routine),
                  rewrites=(windowed_refusals("trino", functions.WINDOW_REFUSED["trino"]),
                            function_rewrite(functions.TRINO), series.spelled(series.sequence_or_empty),
                            boundaries, extract_rewrite(PARTS, epoch="DOUBLE"), text_meets_time,
                            _timestamp_text, double_to_int_half_even(half_even_by_halves),
                            ROUNDING.rewrite, double_to_decimal(ROUNDING),
                            double_text_refused("trino"), substr_positions, unicode_trim,
                            double_division, double_average,
                            like_without_escape(clause=True), over_each_aggregate))
