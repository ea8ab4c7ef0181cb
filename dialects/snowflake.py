"""Snowflake: DDL commits implicitly, so view switches cannot share a transaction.

DATEDIFF(WEEK, ..) counts week boundaries; DuckDB's week difference is whole weeks
(days / 7).
"""

from __future__ import annotations

from sqlglot import exp

from dialects.base import Dialect, whole_weeks


class Snowflake(Dialect):
    def adapt(self, tree: exp.Expression) -> exp.Expression:
        return tree.transform(whole_weeks, copy=False)


DIALECT = Snowflake(name="snowflake", sqlglot="snowflake", transactional_ddl=False,
                    create_or_replace_view=True, reads_files=False, row_hash="hash")
