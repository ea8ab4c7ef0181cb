"""Spark SQL: reads Parquet files in a query (`parquet.`path``); no transactional DDL.

CSV is not read in place: `csv.`path`` takes no options, so the header row would
be data and the columns `_c0, _c1, ...` (all strings). A CSV source reads the table
named after it, like on engines that cannot read files: load the file into it first.
A Parquet path is absolute: Spark resolves a relative one against its own working
directory (or its default file system), not the directory Strata read the module in.

Where Spark means something else than DuckDB by the same spelling (the Spark SQL
reference sections each rewrite relies on are in docs/DIALECTS.md):
- DATEDIFF(unit, ..) counts whole units, DuckDB's date_diff boundaries crossed.
- EXTRACT has no EPOCH, calls the day of year DOY, counts DAYOFWEEK from Sunday = 1
  and keeps the fraction of a SECOND.
- CAST of a double or decimal to an integer truncates; DuckDB rounds (a double's
  halves to even, a decimal's away from zero).
- `/` on decimals and AVG of a decimal stay decimals of about 6 fraction digits;
  Strata types both double.
- LIKE escapes with a backslash by default: every backslash doubled.
- `/` and `%` raise on a zero divisor in ANSI mode (DuckDB: ±Infinity, NaN); ROUND
  of a double with digits and a double's cast to DECIMAL round its decimal text
  (1.005 -> 1.01), DuckDB the scaled double (dialects/numeric.py).
- text casts to BIGINT refuse '2.5' and '1e3' (DuckDB rounds the decimal); text
  casts to boolean take spaces DuckDB refuses.
- DATE_ADD takes an INT count of days, not a BIGINT column.
"""

from __future__ import annotations

import os

from sqlglot import exp

from dialects import functions, series
from dialects.base import (
    Dialect,
    boundaries,
    bround,
    cast,
    decimal_to_int_rounds,
    double_average,
    double_to_int_half_even,
    epoch_from_fields,
    extract_rewrite,
    field,
    like_without_escape,
    over_each_aggregate,
    shifted,
    whole_second,
    whole_weeks_of_dates,
)
from dialects.numeric import (
    Rounding,
    bind_by_lambda,
    double_to_decimal,
    exact_average,
    ieee_division,
    nan_remainder,
    no_double_text,
    spark_decimal_scale,
    substr_positions,
    text_to_bool,
    text_to_int,
    trunc_by_bigint,
    unicode_trim,
    wide_integer_sum,
)
from dialects.routines import RoutineStyle, refused_in_order_lambda_or_generator, sql_returning
from dialects.spelling import function_rewrite, windowed_refusals


class Spark(Dialect):
    def file_source(self, path: str, source_name: str,
                    types: dict[str, exp.DataType] | None = None) -> exp.Expression:
        if not path.lower().endswith((".parquet", ".pq")):
            return super().file_source(path, source_name, types)
        return exp.Table(this=exp.to_identifier(absolute(path), quoted=True),
                         db=exp.to_identifier("parquet", quoted=False))


def absolute(path: str) -> str:
    """The path as a `file:` URI: Spark reads a relative path against its own working
    directory or default file system (HDFS), not this process's."""
    return "file://" + os.path.abspath(path)


def int_day_count(node: exp.Expression) -> exp.Expression:
    """date + n days: Spark's DATE_ADD and ADD_MONTHS take an INT count and refuse
    Strata's int (a BIGINT column). Cast to INT: past 32 bits that raises, as
    DuckDB's date + n does ("out of range for INT32")."""
    if isinstance(node, (exp.DateAdd, exp.DateSub)) and not node.args.get("typed"):
        count = node.expression
        if not isinstance(count, exp.Literal) and not (
                isinstance(count, exp.Cast) and count.to.is_type("INT")):
            new = type(node)(this=node.this, expression=cast(count, "INT"),
                             unit=node.args.get("unit"))
            new.set("typed", True)
            return new
    return node


ROUNDING = Rounding(trunc=trunc_by_bigint, bind=bind_by_lambda)

PARTS = {
    "DAYOFWEEK": shifted("DAYOFWEEK", minus=1),  # Sunday 1 -> DuckDB's Sunday 0
    "DAYOFYEAR": field("DOY"),
    "SECOND": whole_second,
    "EPOCH": epoch_from_fields,
}

# Spark's type names as DataFrame.dtypes spells them -> Strata's type kinds
TYPE_KINDS = {
    "TINYINT": "int", "SMALLINT": "int", "INT": "int", "BIGINT": "int", "FLOAT": "double",
    "DOUBLE": "double", "STRING": "text", "VARCHAR": "text", "BOOLEAN": "bool",
    "DATE": "date", "TIMESTAMP": "timestamp", "TIMESTAMP_NTZ": "timestamp",
}

DIALECT = Spark(name="spark", sqlglot="spark", transactional_ddl=False,
                create_or_replace_view=True, reads_files=True, row_hash="xxhash64",
                type_kinds=tuple(TYPE_KINDS.items()), bind=bind_by_lambda, routines=RoutineStyle('spark', sql_returning,
                                                  refused_at=refused_in_order_lambda_or_generator),
                rewrites=(windowed_refusals("spark", functions.SPARK_FRAMED_REFUSED, framed=True),
                          function_rewrite(functions.SPARK), series.spelled(series.range_function),
                          whole_weeks_of_dates, boundaries, extract_rewrite(PARTS), ROUNDING.rewrite,
                          double_to_int_half_even(bround), decimal_to_int_rounds,
                          ieee_division, nan_remainder, exact_average, double_average,
                          double_to_decimal(ROUNDING), text_to_int("DECIMAL(38, 19)"),
                          text_to_bool, substr_positions, unicode_trim, wide_integer_sum,
                          no_double_text, int_day_count, spark_decimal_scale,
                          like_without_escape(clause=False), over_each_aggregate))
