"""DuckDB: the embedded default. Transactional DDL, reads CSV/Parquet in a query."""

from __future__ import annotations

from sqlglot import exp

from dialects.base import Dialect


class DuckDB(Dialect):
    def file_source(self, path: str, source_name: str) -> exp.Expression:
        reader = "read_parquet" if path.lower().endswith((".parquet", ".pq")) else "read_csv"
        args: list[exp.Expression] = [exp.Literal.string(path)]
        return exp.Anonymous(this=reader, expressions=args)


DIALECT = DuckDB(name="duckdb", sqlglot="duckdb", transactional_ddl=True,
                 create_or_replace_view=True, reads_files=True, row_hash="hash")
