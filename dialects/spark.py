"""Spark SQL: reads Parquet files in a query (`parquet.`path``); no transactional DDL.

CSV is not read in place: `csv.`path`` takes no options, so the header row would
be data and the columns `_c0, _c1, ...` (all strings). A CSV source reads the table
named after it, like on engines that cannot read files: load the file into it first.
"""

from __future__ import annotations

from sqlglot import exp

from dialects.base import Dialect


class Spark(Dialect):
    def file_source(self, path: str, source_name: str) -> exp.Expression:
        if not path.lower().endswith((".parquet", ".pq")):
            return super().file_source(path, source_name)
        return exp.Table(this=exp.to_identifier(path, quoted=True),
                         db=exp.to_identifier("parquet", quoted=False))


DIALECT = Spark(name="spark", sqlglot="spark", transactional_ddl=False,
                create_or_replace_view=True, reads_files=True, row_hash="xxhash64")
