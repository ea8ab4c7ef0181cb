"""Spark SQL: reads files as `csv.`path`` / `parquet.`path``; no transactional DDL."""

from __future__ import annotations

from sqlglot import exp

from dialects.base import Dialect


class Spark(Dialect):
    def file_source(self, path: str, source_name: str) -> exp.Expression:
        fmt = "parquet" if path.lower().endswith((".parquet", ".pq")) else "csv"
        return exp.Table(this=exp.to_identifier(path, quoted=True),
                         db=exp.to_identifier(fmt, quoted=False))


DIALECT = Spark(name="spark", sqlglot="spark", transactional_ddl=False,
                create_or_replace_view=True, reads_files=True, row_hash="xxhash64")
