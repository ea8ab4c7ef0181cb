"""DuckDB: the embedded default. The lock is DuckDB's own: one process may open a
database file for writing, and another one's open fails until it closes (the
connection *is* the lock; the kernel drops it when the process dies). DDL is
transactional, so publication is one transaction."""

from __future__ import annotations

import time

import duckdb
from sqlglot import exp

from dialects import duckdb as duck_dialect
from strata.diagnostics import fail
from strata.engine.adapters.base import LOCK_HINT, Adapter, Relation, engine_failure, say_waiting
from strata.engine.locations import DuckDBFile


def _info_query(view: str, columns: list[str], where: dict[str, str],
                order: str | None = None) -> exp.Select:
    """SELECT columns FROM information_schema.<view> WHERE k = 'v' AND ...: the
    catalogue as the SQL standard names it (DuckDB and PostgreSQL both answer it)."""
    query = exp.select(*[exp.column(c) for c in columns]).from_(
        exp.Table(this=exp.to_identifier(view), db=exp.to_identifier("information_schema")))
    query = query.where(exp.and_(*[exp.EQ(this=exp.column(k), expression=exp.Literal.string(v))
                                   for k, v in where.items()]))
    return query.order_by(exp.column(order)) if order else query


def relation_kinds(rows: list[tuple]) -> dict[str, str]:
    """information_schema.tables rows (name, table_type) -> name -> 'table' | 'view'."""
    return {name: "view" if kind.upper() == "VIEW" else "table" for name, kind in rows}


class DuckDBAdapter(Adapter):
    dialect = duck_dialect.DIALECT
    transactional = True
    hash_sum_type = "HUGEINT"
    bitmap_distinct = True

    def __init__(self, location: DuckDBFile, con: duckdb.DuckDBPyConnection):
        super().__init__(location.redacted())
        self.location = location
        self.con = con

    @classmethod
    def open(cls, location: DuckDBFile, write: bool = True,
             lock_timeout: float = 10.0) -> DuckDBAdapter:
        """Open the file; for writing, wait up to `lock_timeout` seconds for another
        process's lock (E075 then)."""
        deadline = time.monotonic() + lock_timeout
        said = False
        while True:
            try:
                con = duckdb.connect(location.path, read_only=not write)
                break
            except duckdb.IOException as err:
                if "lock" not in str(err).lower():
                    raise engine_failure(location.redacted(), err) from None
                if time.monotonic() >= deadline:
                    raise fail("E075", f"the warehouse `{location.redacted()}` is in use by "
                               f"another process{_holder(str(err))}", None, LOCK_HINT) from None
                if not said:
                    say_waiting(location.redacted(), lock_timeout)
                    said = True
                time.sleep(0.2)
            except duckdb.Error as err:
                raise engine_failure(location.redacted(), err) from None
        con.execute("SET enable_progress_bar = false")
        adapter = cls(location, con)
        adapter.locked = write
        return adapter

    def acquire_lock(self, timeout: float) -> None:
        """Taken when the file was opened for writing (`open`): DuckDB allows no other
        way in. A read-only adapter cannot become the writer."""
        if not self.locked:
            raise fail("E075", f"the warehouse `{self.where}` was opened read-only", None,
                       "open it for writing to take its lock")

    def close(self) -> None:
        self.con.close()
        self.locked = False

    def execute(self, tree: exp.Expression) -> None:
        self.con.execute(self.render(tree))

    def rows(self, tree: exp.Expression) -> list[tuple]:
        return [tuple(r) for r in self.con.execute(self.render(tree)).fetchall()]

    def relations(self, schema: str) -> dict[str, str]:
        return relation_kinds(self.rows(_info_query(
            "tables", ["table_name", "table_type"], {"table_schema": schema})))

    def columns(self, target: Relation) -> list[tuple[str, str]]:
        return [(n, t) for n, t in self.rows(_info_query(
            "columns", ["column_name", "data_type"],
            {"table_schema": target.schema, "table_name": target.name}, "ordinal_position"))]

    def query_columns(self, query: exp.Expression) -> list[tuple[str, str]]:
        return [(r[0], r[1]) for r in self.rows(exp.Describe(this=query))]

    def row_hash_expr(self, columns: list[str]) -> exp.Expression:
        """DuckDB's hash() of the columns (UBIGINT): the very value
        dialects/duckdb.py: row_hash_expr gives, so recorded hashes stay valid."""
        if not columns:
            return exp.Cast(this=exp.Literal.number(0), to=exp.DataType.build("UBIGINT"))
        return exp.Anonymous(this="hash", expressions=[
            exp.column(exp.to_identifier(c, quoted=True)) for c in columns])


def _holder(message: str) -> str:
    """DuckDB's lock error names the holder's PID: ` (PID 123)`, or nothing."""
    marker = "PID"
    if marker not in message:
        return ""
    return " (" + message[message.index(marker):].split(")")[0].strip() + ")"
