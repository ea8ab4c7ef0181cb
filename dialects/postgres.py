"""PostgreSQL: transactional DDL; files must be loaded into tables first.

Where PostgreSQL means something else than DuckDB by the same spelling (the manual
sections each rewrite relies on are in docs/DIALECTS.md):
- ROUND of a double rounds halves to even and takes no digits: spelled out exactly
  (dialects/numeric.py); ROUND of an int or decimal rounds in NUMERIC, cast back to
  the operand's type.
- `/` raises on a zero divisor (DuckDB: ±Infinity, NaN); there is no `%` of doubles
  (E091); a double cast to NUMERIC(p, s) rounds its 15-digit text, not DuckDB's
  scaled double.
- text casts to BIGINT refuse '2.5' and '1e3' (DuckDB rounds the decimal); text
  casts to boolean take 'on', ' true ' and prefixes DuckDB refuses.
- EXTRACT names DOW/DOY, returns NUMERIC (cast to BIGINT, seconds floored, the epoch
  a double) and refuses hour/minute/second of a date.
- a boolean casts to INTEGER only, and only an INTEGER casts to boolean.
- date_diff('week', ..) rounded the days / 7: whole weeks instead.
- LIKE escapes with a backslash by default: every backslash doubled, ESCAPE '\\'.
- AVG of an integer or decimal is NUMERIC, and AVG of a double overflows where the
  sum does not (it sums the squares too): SUM / COUNT of the doubles.
- ARRAY_LENGTH of an empty array is NULL: CARDINALITY.
- an identifier keeps its first 63 bytes (MAX_IDENTIFIER_BYTES): two names alike
  that far are E091 (strata/sqlgen/identifiers.py); long relation names are mapped
  (PostgresAdapter.physical_name).
- a double's text has no '.0' on whole numbers, an exponent from 1e15 on and
  'Infinity' / 'NaN' (DuckDB: '2.0', '1000000000000000.0', 'inf', 'nan').
"""

from sqlglot import exp

from dialects import functions, series
from dialects.base import (
    Dialect,
    bool_to_number_via_int,
    extract_rewrite,
    field,
    hashable_key_match,
    like_without_escape,
    month_boundaries_by_fields,
    number_to_bool_by_comparison,
    numeric_round,
    time_of_day,
    whole_second,
    whole_weeks_of_dates,
)
from dialects.binding import bind_by_fenced_subquery
from dialects.numeric import (
    Rounding,
    c_collation,
    double_to_decimal,
    duckdb_double_text,
    ieee_division,
    no_double_remainder,
    substr_positions,
    sum_over_count,
    text_to_bool,
    text_to_int,
    trunc_function,
    unicode_trim,
)
from dialects.routines import RoutineStyle, plpgsql
from dialects.spelling import function_rewrite, windowed_refusals


def _cardinality(node: exp.Expression) -> exp.Expression:
    """length of a list: SQLGlot's ARRAY_LENGTH(x, 1) is NULL for an empty array;
    CARDINALITY is 0 (NULL for a NULL list), as DuckDB's length."""
    if isinstance(node, exp.ArraySize):
        return exp.Anonymous(this="CARDINALITY", expressions=[node.this])
    return node


ROUNDING = Rounding(trunc=trunc_function, bind=bind_by_fenced_subquery)

PARTS = {
    "DAYOFWEEK": field("DOW"),  # Sunday 0 .. Saturday 6, as DuckDB
    "DAYOFYEAR": field("DOY"),
    "HOUR": time_of_day("HOUR"),
    "MINUTE": time_of_day("MINUTE"),
    "SECOND": whole_second,
}

# PostgreSQL's type names as format_type spells them -> Strata's type kinds
TYPE_KINDS = {
    "SMALLINT": "int", "INTEGER": "int", "BIGINT": "int", "REAL": "double",
    "DOUBLE PRECISION": "double", "TEXT": "text", "CHARACTER VARYING": "text",
    "VARCHAR": "text", "BOOLEAN": "bool", "DATE": "date",
    "TIMESTAMP WITHOUT TIME ZONE": "timestamp", "TIMESTAMP": "timestamp",
}

# NAMEDATALEN - 1: a longer identifier is cut to its first 63 bytes, without an error
MAX_IDENTIFIER_BYTES = 63

DIALECT = Dialect(name="postgres", sqlglot="postgres", transactional_ddl=True,
                  max_identifier_bytes=MAX_IDENTIFIER_BYTES,
                  create_or_replace_view=True, reads_files=False, row_hash="md5",
                  type_kinds=tuple(TYPE_KINDS.items()), bind=bind_by_fenced_subquery, routines=RoutineStyle('postgres', plpgsql, any_decimal='NUMERIC'), key_match=hashable_key_match,
                  rewrites=(windowed_refusals("postgres", functions.WINDOW_REFUSED["postgres"]),
                            function_rewrite(functions.POSTGRES), series.spelled(series.generate_series),
                            ROUNDING.rewrite, numeric_round,
                            extract_rewrite(PARTS, whole="BIGINT", epoch="DOUBLE"),
                            bool_to_number_via_int, number_to_bool_by_comparison,
                            whole_weeks_of_dates, month_boundaries_by_fields,
                            like_without_escape(clause=True),
                            sum_over_count, ieee_division, no_double_remainder,
                            double_to_decimal(ROUNDING), text_to_int("DECIMAL"),
                            text_to_bool, substr_positions, unicode_trim, c_collation,
                            duckdb_double_text(bind_by_fenced_subquery), _cardinality))
