"""BigQuery: no multi-statement DDL transactions; `timestamp` is its DATETIME.

Weeks: DuckDB's start on Monday and its week difference is whole weeks; BigQuery's
WEEK starts on Sunday and DATE_DIFF(.., WEEK) counts Sundays crossed. Truncation
uses ISOWEEK, differences count days / 7.
"""

from __future__ import annotations

from sqlglot import exp

from dialects.base import Dialect, _unit, whole_weeks


class BigQuery(Dialect):
    def adapt(self, tree: exp.Expression) -> exp.Expression:
        return tree.transform(_monday_weeks, copy=False)


def _monday_weeks(node: exp.Expression) -> exp.Expression:
    if isinstance(node, (exp.TimestampTrunc, exp.DateTrunc)) and _unit(node) == "WEEK":
        node.set("unit", exp.var("ISOWEEK"))
        return node
    return whole_weeks(node)


DIALECT = BigQuery(name="bigquery", sqlglot="bigquery", transactional_ddl=False,
                   create_or_replace_view=True, reads_files=False, row_hash="farm_fingerprint")
