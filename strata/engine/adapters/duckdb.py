"""DuckDB: the embedded default. The lock is DuckDB's own: one process may open a
database file for writing, and another one's open fails until it closes (the
connection *is* the lock; the kernel drops it when the process dies). DDL is
transactional, so publication is one transaction."""

from __future__ import annotations

import json
import time

import duckdb
from sqlglot import exp

from dialects import duckdb as duck_dialect
from strata.diagnostics import fail
from strata.engine.adapters import duckdb_file
from strata.engine.adapters.base import (
    INTERNAL,
    LOCK_HINT,
    Adapter,
    Relation,
    engine_failure,
    say_waiting,
)
from strata.engine.fingerprints import RowHash, row_hash, row_hashes
from strata.engine.locations import DuckDBFile

# A list of text values as ONE query parameter: DuckDB converts a Python list
# parameter value by value (on DuckDB 1.5 ~1 ms a value: 0.5 s for the registry rows
# of a 500-model run), while one JSON document is parsed by the engine in ~0.02 s.
TEXT_LIST = "unnest(from_json(?::VARCHAR, '[\"VARCHAR\"]'))"


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

    def execute(self, tree: exp.Expression, params: list | None = None) -> None:
        self.con.execute(self.render(tree), params)

    def rows(self, tree: exp.Expression, params: list | None = None) -> list[tuple]:
        return [tuple(r) for r in self.con.execute(self.render(tree), params).fetchall()]

    def relations(self, schema: str) -> dict[str, str]:
        return relation_kinds(self.rows(_info_query(
            "tables", ["table_name", "table_type"], {"table_schema": schema})))

    def columns(self, target: Relation) -> list[tuple[str, str]]:
        return [(n, t) for n, t in self.rows(_info_query(
            "columns", ["column_name", "data_type"],
            {"table_schema": target.schema, "table_name": target.name}, "ordinal_position"))]

    def query_columns(self, query: exp.Expression) -> list[tuple[str, str]]:
        return [(r[0], r[1]) for r in self.rows(exp.Describe(this=query))]

    # ------------------------------------------------------------ run primitives
    # The run's statements on DuckDB are the text they always were (relinked model
    # SQL, quoted names joined as strings): rendering each name through SQLGlot cost
    # ~0.1 ms, seven names a model; the statements and their results are unchanged.
    relinks_canonical_text = True
    folds_split_scans = True

    @classmethod
    def memory(cls) -> DuckDBAdapter:
        """An in-memory database: reads files where the warehouse's engine cannot."""
        return cls(DuckDBFile(":memory:"), duckdb.connect(":memory:"))

    def engine_errors(self) -> tuple[type[BaseException], ...]:
        return (duckdb.Error,)

    def missing_relation(self, err: BaseException) -> bool:
        return isinstance(err, duckdb.CatalogException)

    def bad_value(self, err: BaseException) -> bool:
        return isinstance(err, (duckdb.ConversionException, duckdb.InvalidInputException))

    def lane(self) -> DuckDBAdapter:
        """A cursor: a connection of its own to the same database, in this process."""
        return DuckDBAdapter(self.location, self.con.cursor())

    def text(self, relation: exp.Expression) -> str:
        """A FROM item as DuckDB text; a table by string work (no generator)."""
        if isinstance(relation, exp.Table) and isinstance(relation.this, exp.Identifier) \
                and not relation.args.get("alias") and not relation.args.get("catalog"):
            return ".".join(_quoted(p.name) for p in (relation.args.get("db"), relation.this)
                            if p is not None)
        return relation.sql(dialect="duckdb")

    def build_table(self, target: Relation, query: exp.Expression | None,
                    text: str | None = None) -> int:
        sql = text if text is not None else self.render(query)
        (rows,) = self.con.execute(f"CREATE TABLE {_qualified(target)} AS {sql}").fetchone()
        return rows

    def execute_counted(self, tree: exp.Expression) -> int | None:
        found = self.con.execute(self.render(tree)).fetchone()
        return found[0] if found else None

    def checkpoint(self) -> None:
        self.con.execute("CHECKPOINT")

    def point_view(self, target: Relation, snapshot: Relation) -> None:
        """As text: rendering a tree per view was ~40% of a publication's views (501
        views repointed in one transaction: 0.77 s -> 0.43 s). DuckDB keeps its own
        text of the view, so what `view_targets` reads back is unchanged."""
        self.con.execute(f"CREATE OR REPLACE VIEW {_qualified(target)} AS SELECT * FROM "
                         f"{_qualified(snapshot)}")

    def drop(self, target: Relation, kind: str) -> None:
        self.con.execute(f"DROP {'VIEW' if kind == 'view' else 'TABLE'} IF EXISTS "
                         f"{_qualified(target)}")

    def rows_text(self, text: str) -> list[tuple]:
        return self.con.execute(text).fetchall()

    def file_failure(self, err: BaseException):
        if not self.location.path:  # a connection handed in: its database says where
            return duckdb_file.connection_file_failure(self.con, err)
        return duckdb_file.file_failure(self.location.path, err)

    def damaged_storage(self, err: BaseException) -> bool:
        return duckdb_file.damaged_storage(self.location.path, err)

    def columns_many(self, schema: str, names: list[str]) -> dict[str, list[tuple[str, str]]]:
        """One catalogue query for many tables (types as DESCRIBE shows them, which is
        what `verify` recomputes the hash with)."""
        out: dict[str, list[tuple[str, str]]] = {n: [] for n in names}
        for table_name, column, data_type in self.con.execute(
                "SELECT table_name, column_name, data_type FROM duckdb_columns() "
                f"WHERE schema_name = ? AND table_name IN (SELECT {TEXT_LIST}) "
                "ORDER BY table_name, column_index", [schema, json.dumps(names)]).fetchall():
            out[table_name].append((column, data_type))
        return out

    def snapshot_columns(self, target: Relation) -> list[tuple[str, str]]:
        return [(r[0], r[1]) for r in self.con.execute(
            f"DESCRIBE SELECT * FROM {_qualified(target)}"
        ).fetchall()]

    def row_hash(self, relation: exp.Expression, columns: list[str],
                 where: exp.Expression | None = None) -> RowHash:
        return row_hash(self.con, self.text(relation), columns,
                        where.sql(dialect="duckdb") if where is not None else None)

    def row_hashes(self, relations: list[tuple[exp.Expression, list[str]]]) -> list[RowHash]:
        return row_hashes(self.con, [(self.text(r), c) for r, c in relations])

    def hash_tables(self, schema: str, names: list[str]
                    ) -> dict[str, tuple[list[tuple[str, str]], RowHash]]:
        """The columns come from binding each table, which reads no rows and, unlike
        duckdb_columns(), not the whole catalogue either (that took 40% of a lane's
        time in a rerun of 500 models, 1,000 snapshots in the file); the types read
        as DESCRIBE shows them."""
        columns = {}
        for name in names:
            rel = self.con.sql(f"SELECT * FROM {_quoted(schema)}.{_quoted(name)}")
            columns[name] = [(c, str(t)) for c, t in zip(rel.columns, rel.types, strict=True)]
        hashes = row_hashes(self.con, [(f"{_quoted(schema)}.{_quoted(n)}",
                                        [c for c, _ in columns[n]]) for n in names])
        return {n: (columns[n], h) for n, h in zip(names, hashes, strict=True)}

    def in_list(self, column: exp.Expression, values) -> tuple[exp.Expression, list | None]:
        """One JSON parameter for the whole list (TEXT_LIST)."""
        listed = exp.select(exp.Unnest(expressions=[exp.Anonymous(
            this="from_json", expressions=[
                exp.Cast(this=exp.Placeholder(), to=exp.DataType.build("VARCHAR")),
                exp.Literal.string('["VARCHAR"]')])]))
        return exp.In(this=column, query=listed.subquery()), [json.dumps([str(v) for v in values])]

    def row_hash_expr(self, columns: list[str]) -> exp.Expression:
        """DuckDB's hash() of the columns (UBIGINT): the very value
        dialects/duckdb.py: row_hash_expr gives, so recorded hashes stay valid."""
        if not columns:
            return exp.Cast(this=exp.Literal.number(0), to=exp.DataType.build("UBIGINT"))
        return exp.Anonymous(this="hash", expressions=[
            exp.column(exp.to_identifier(c, quoted=True)) for c in columns])

    # ------------------------------------------------------------ bookkeeping (gc, branches)
    compacts_file = True  # gc --compact-file: the database copied into a smaller file

    def view_texts(self, schema: str | None = None) -> list[tuple[str, str, str]]:
        query = ("SELECT schema_name, view_name, sql FROM duckdb_views() WHERE NOT internal "
                 "AND database_name = current_database() AND ")
        if schema is None:
            return self.con.execute(query + "schema_name != ? ORDER BY ALL",
                                    [INTERNAL]).fetchall()
        return self.con.execute(query + "schema_name = ?", [schema]).fetchall()

    def storage_bytes(self, schema: str, tables: list[str]) -> int | None:
        """Bytes of the storage blocks only these tables use (an estimate: rows not
        yet checkpointed into the file are not counted)."""
        if not tables:
            return 0
        owners: dict[int, set[tuple[str, str]]] = {}
        for owner_schema, name in self.con.execute(
                "SELECT schema_name, table_name FROM duckdb_tables() "
                "WHERE NOT temporary AND database_name = current_database()").fetchall():
            for block, extra in self.con.execute(
                    "SELECT block_id, additional_block_ids FROM pragma_storage_info(?) "
                    "WHERE block_id >= 0", [f"{_quoted(owner_schema)}.{_quoted(name)}"]
            ).fetchall():
                for b in [block, *(extra or [])]:
                    owners.setdefault(b, set()).add((owner_schema, name))
        going = {(schema, t) for t in tables}
        only = sum(1 for users in owners.values() if users <= going)
        return only * self._database_size()[1]

    def used_bytes(self) -> int | None:
        used, size = self._database_size()
        return None if used is None else used * size

    def _database_size(self) -> tuple[int | None, int]:
        row = self.con.execute("SELECT used_blocks, block_size FROM pragma_database_size() "
                               "WHERE database_name = current_database()").fetchone()
        return (int(row[0]), int(row[1])) if row else (None, 262144)

    def bulk_insert(self, target: Relation, columns: list[tuple[str, str]],
                    rows: list[tuple]) -> bool:
        """One JSON document the engine parses and unnests side by side: a Python list
        as a parameter costs ~1 ms a value on DuckDB 1.5 (0.5 s for the registry rows
        of a 500-model run), the document ~0.02 s. Timestamps go as text."""
        names = [n for n, _ in columns]
        shape = json.dumps({n: ["BIGINT" if t == "BIGINT" else "VARCHAR"] for n, t in columns})
        document = json.dumps({n: [row[i] for row in rows] for i, n in enumerate(names)},
                              default=str)
        unnested = ", ".join(f"unnest(j.{_quoted(n)})" for n in names)
        self.con.execute(
            f"INSERT INTO {_qualified(target)} "
            f"({', '.join(_quoted(n) for n in names)}) SELECT {unnested} "
            f"FROM (SELECT from_json(?::VARCHAR, {exp.Literal.string(shape).sql('duckdb')}) "
            "AS j)", [document])
        return True


def _holder(message: str) -> str:
    """DuckDB's lock error names the holder's PID: ` (PID 123)`, or nothing."""
    marker = "PID"
    if marker not in message:
        return ""
    return " (" + message[message.index(marker):].split(")")[0].strip() + ")"


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _qualified(relation: Relation) -> str:
    return f"{_quoted(relation.schema)}.{_quoted(relation.name)}"
