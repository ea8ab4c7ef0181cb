"""DuckDB: the embedded default. Transactional DDL, reads CSV/Parquet in a query."""

from __future__ import annotations

from sqlglot import exp

from dialects.base import Dialect


class DuckDB(Dialect):
    def file_source(self, path: str, source_name: str) -> exp.Expression:
        reader = "read_parquet" if path.lower().endswith((".parquet", ".pq")) else "read_csv"
        args: list[exp.Expression] = [exp.Literal.string(path)]
        # A Table around the call, so the caller can alias it (`FROM read_csv(..) AS o`):
        # the model's columns are read as `<alias>.<column>`.
        return exp.Table(this=exp.Anonymous(this=reader, expressions=args))


DIALECT = DuckDB(name="duckdb", sqlglot="duckdb", transactional_ddl=True,
                 create_or_replace_view=True, reads_files=True, row_hash="hash")
