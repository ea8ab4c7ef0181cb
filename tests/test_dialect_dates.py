"""Date arithmetic means what it means on DuckDB, in every dialect's SQL.

Strata's semantics are DuckDB's: `date_diff` counts unit boundaries crossed (31 Jan to
1 Feb is one month), except `week`, which counts whole weeks (days / 7); weeks start
on Monday. SQLGlot renders the functions by name, and three engines mean something
else by them: Spark's DATEDIFF(unit, ..) counts whole units, BigQuery's WEEK starts
on Sunday and its DATE_DIFF(.., WEEK) counts Sundays crossed, Snowflake's
DATEDIFF(WEEK, ..) counts week boundaries. Those engines cannot run here, so the
rendered SQL is checked for the forms that mean DuckDB's result, and DuckDB runs the
module to pin the meaning itself.
"""

from __future__ import annotations

import datetime as dt

import duckdb
import pytest
import sqlglot

import strata
from strata.semantics.resolve import load_text

MODULE = """
source src {
  d: date
  e: date
}
model m {
  from src
  derive wk = date_trunc('week', d), weeks = date_diff('week', d, e),
         months = date_diff('month', d, e), days = date_diff('day', d, e)
}
"""


def sql(dialect: str) -> str:
    return " ".join(strata.model_sql(load_text(MODULE), "m", dialect).split())


def test_duckdb_weeks_start_on_monday_and_count_whole_weeks():
    con = duckdb.connect()
    con.execute("CREATE TABLE src (d DATE, e DATE)")
    # Sunday 7 Jan to Monday 8 Jan; Saturday 6 Jan to Monday 8 Jan; 31 Jan to 1 Feb
    con.execute("INSERT INTO src VALUES ('2024-01-07', '2024-01-08'), "
                "('2024-01-06', '2024-01-08'), ('2024-01-31', '2024-02-01')")
    rows = con.execute(f"SELECT wk, weeks, months, days FROM ({sql('duckdb')}) ORDER BY d"
                       ).fetchall()
    assert rows == [(dt.date(2024, 1, 1), 0, 0, 2), (dt.date(2024, 1, 1), 0, 0, 1),
                    (dt.date(2024, 1, 29), 0, 1, 1)]


def test_spark_counts_boundaries_between_truncated_values():
    text = sql("spark")
    assert "DATEDIFF(MONTH, DATE_TRUNC('MONTH', base.d), DATE_TRUNC('MONTH', base.e))" in text
    assert "DATEDIFF(DAY, DATE_TRUNC('DAY', base.d), DATE_TRUNC('DAY', base.e))" in text
    # whole weeks: day boundaries / 7 (DATEDIFF(WEEK, ..) of timestamps counts elapsed
    # weeks: Monday 23:00 to next Monday 01:00 is 0, DuckDB 1)
    assert "CAST(DATEDIFF(DAY, CAST(base.d AS DATE), CAST(base.e AS DATE)) DIV 7 AS BIGINT)" in text


def test_bigquery_weeks_are_iso_weeks_and_whole_weeks():
    text = sql("bigquery")
    assert "DATE_TRUNC(base.d, ISOWEEK)" in text
    assert "DIV(DATE_DIFF(base.e, base.d, DAY), 7) AS weeks" in text
    assert "DATE_DIFF(base.e, base.d, MONTH) AS months" in text  # boundaries on both


def test_snowflake_week_difference_is_whole_weeks():
    text = sql("snowflake")
    assert "CAST(TRUNC(DATEDIFF(DAY, base.d, base.e) / 7) AS BIGINT) AS weeks" in text
    assert "DATEDIFF(MONTH, base.d, base.e) AS months" in text


@pytest.mark.parametrize("dialect", ["duckdb", "postgres", "snowflake", "bigquery", "spark",
                                     "trino"])
def test_the_sql_parses_back_in_its_dialect(dialect):
    sqlglot.parse_one(strata.model_sql(load_text(MODULE), "m", dialect), read=dialect)
