"""PostgreSQL: transactional DDL; files must be loaded into tables first.

Where PostgreSQL means something else than DuckDB by the same spelling (the manual
sections each rewrite relies on are in docs/DIALECTS.md):
- ROUND of a double rounds halves to even and takes no digits: spelled out; ROUND of
  an int or decimal rounds in NUMERIC, cast back to the operand's type.
- EXTRACT names DOW/DOY, returns NUMERIC (cast to BIGINT, seconds floored, the epoch
  a double) and refuses hour/minute/second of a date.
- a boolean casts to INTEGER only, and only an INTEGER casts to boolean.
- date_diff('week', ..) rounded the days / 7: whole weeks instead.
- LIKE escapes with a backslash by default: every backslash doubled, ESCAPE '\\'.
- AVG of an integer or decimal is NUMERIC: the average of doubles.
- ARRAY_LENGTH of an empty array is NULL: CARDINALITY.
"""

from sqlglot import exp

from dialects.base import (
    Dialect,
    bool_to_number_via_int,
    double_average,
    double_division,
    double_round,
    extract_rewrite,
    field,
    like_without_escape,
    number_to_bool_by_comparison,
    numeric_round,
    time_of_day,
    whole_second,
    whole_weeks,
)


def _cardinality(node: exp.Expression) -> exp.Expression:
    """length of a list: SQLGlot's ARRAY_LENGTH(x, 1) is NULL for an empty array;
    CARDINALITY is 0 (NULL for a NULL list), as DuckDB's length."""
    if isinstance(node, exp.ArraySize):
        return exp.Anonymous(this="CARDINALITY", expressions=[node.this])
    return node


PARTS = {
    "DAYOFWEEK": field("DOW"),  # Sunday 0 .. Saturday 6, as DuckDB
    "DAYOFYEAR": field("DOY"),
    "HOUR": time_of_day("HOUR"),
    "MINUTE": time_of_day("MINUTE"),
    "SECOND": whole_second,
}

DIALECT = Dialect(name="postgres", sqlglot="postgres", transactional_ddl=True,
                  create_or_replace_view=True, reads_files=False, row_hash="md5",
                  rewrites=(double_round, numeric_round,
                            extract_rewrite(PARTS, whole="BIGINT", epoch="DOUBLE"),
                            bool_to_number_via_int, number_to_bool_by_comparison,
                            whole_weeks, like_without_escape(clause=True),
                            double_average, double_division, _cardinality))
