"""The `engine_wh` fixture: one Strata warehouse on each real engine, with what a test
needs to read it back in that engine's own catalog (issue 18 item 5).

    from engine_warehouses import engine_warehouse  # noqa: F401 (the fixture)

    def test_x(engine_wh): ...      # runs three times: duckdb, postgres, spark

    duckdb     a file in the test's folder (`-o .../wh.duckdb`), read with duckdb
    postgres   a database of its own on the session's server (`-o postgresql://...`,
               its Unix socket), read with psycopg
    spark      the session's Spark Connect server (`-o sc://127.0.0.1:PORT`, a local
               Spark with a Hive catalog the test starts; the catalog is emptied after
               each test), read with that session's Connect client. A `spark:DIR`
               warehouse starts a JVM in every CLI process (~25 s each):
               tests/test_engine_bookkeeping_spark.py kills one after its commit point.

Every read goes to the engine's catalog and tables, never through Strata's own code.
The fixture's parameter is named `engine_wh`, so conftest.py puts its Spark cases in
the xdist group that runs every Spark test on one worker.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pytest
import sqlglot
from sqlglot import exp

from strata.engine.adapters.spark import encode_name

ENGINES = ["duckdb", "postgres", "spark"]
INTERNAL = "strata_internal"


@dataclass
class EngineWarehouse:
    engine: str
    location: str           # what `-o` takes
    dialect: str            # sqlglot's name for the engine
    execute: Callable[[str], list[tuple]]
    encode: Callable[[str], str] = lambda name: name  # a schema or table as the engine names it

    # ------------------------------------------------------------ reading back
    def sql(self, duckdb_sql: str) -> list[tuple]:
        """A query written in DuckDB's SQL, run on this engine (transpiled)."""
        return self.execute(sqlglot.transpile(duckdb_sql, read="duckdb", write=self.dialect)[0])

    def relation(self, schema: str, name: str) -> str:
        table = exp.Table(this=exp.to_identifier(self.encode(name), quoted=True),
                          db=exp.to_identifier(self._schema(schema), quoted=True))
        return table.sql(dialect=self.dialect)

    def view(self, model: str, branch: str = "main") -> list[tuple]:
        """A live view's rows, sorted (as Python values)."""
        return sorted(self.execute(f"SELECT * FROM {self.relation(branch, 'v_' + model)}"))

    def internal_tables(self) -> set[str]:
        """Every table in strata_internal, as the engine names it (run reports name
        snapshots so too)."""
        return set(self._tables(INTERNAL))

    def registered(self) -> set[str]:
        """Every table the snapshot registry references and gc has not collected, as
        the engine names it (so does the registry)."""
        snapshots, collections = (self.relation(INTERNAL, t) for t in ("snapshots",
                                                                       "collections"))
        out: set[str] = set()
        self._refresh(snapshots, collections)
        for name, parts in self.execute(f"SELECT name, parts FROM {snapshots} WHERE name NOT "
                                        f"IN (SELECT name FROM {collections})"):
            parts = json.loads(parts)
            out.update(filter(None, [name, parts.get("base"), *parts.get("layers", [])]))
        return out

    def leftovers(self) -> set[str]:
        """snap_/layer_ tables nothing references: what a crashed writer left."""
        return {n for n in self.internal_tables() - self.registered()
                if n.startswith(tuple(self.encode(p) for p in ("snap_", "layer_")))}

    def history_count(self) -> int:
        history = self.relation(INTERNAL, "history")
        self._refresh(history)
        return self.execute(f"SELECT count(*) FROM {history}")[0][0]

    def create_table(self, name: str, select_duckdb_sql: str) -> None:
        """A table in the engine's default schema (what `--override s=name` reads)."""
        drop = exp.Drop(tables=[exp.to_table(name)], kind="TABLE", exists=True)
        self.execute(drop.sql(dialect=self.dialect))
        self.sql(f"CREATE TABLE {name} AS {select_duckdb_sql}")

    # ------------------------------------------------------------ per engine
    def _refresh(self, *relations: str) -> None:
        """Spark: this session caches a table's file listing; the CLI's processes
        appended files since (REFRESH TABLE reads the listing again)."""
        if self.engine == "spark":
            for relation in relations:
                self.execute(f"REFRESH TABLE {relation}")

    def _schema(self, schema: str) -> str:
        """Branch schemas are encoded like table names; the internal one is kept."""
        return schema if schema == INTERNAL else self.encode(schema)

    def _tables(self, schema: str) -> list[str]:
        if self.engine == "spark":
            return [r[1] for r in self.execute(f"SHOW TABLES IN `{schema}`") if not r[2]]
        where = "duckdb_tables() WHERE schema_name" if self.engine == "duckdb" else \
            "information_schema.tables WHERE table_type = 'BASE TABLE' AND table_schema"
        name = "table_name"
        return [r[0] for r in self.execute(f"SELECT {name} FROM {where} = '{schema}'")]


def _duckdb(folder: Path) -> EngineWarehouse:
    path = folder / "wh.duckdb"

    def execute(sql: str) -> list[tuple]:
        con = duckdb.connect(str(path))
        try:
            con.execute(sql)
            return con.fetchall() if con.description else []
        finally:
            con.close()

    return EngineWarehouse("duckdb", str(path), "duckdb", execute)


def _postgres(url: str) -> EngineWarehouse:
    import psycopg

    from strata.engine.locations import parse_location

    args = parse_location(url).connect_args()

    def execute(sql: str) -> list[tuple]:
        with psycopg.connect(**args, autocommit=True) as con, con.cursor() as cur:
            cur.execute(sql)
            return [tuple(r) for r in cur.fetchall()] if cur.description else []

    return EngineWarehouse("postgres", url, "postgres", execute)


def _spark(url: str, client: Any) -> EngineWarehouse:
    def execute(sql: str) -> list[tuple]:
        return [tuple(r) for r in client.sql(sql).collect()]

    return EngineWarehouse("spark", url, "spark", execute, encode_name)


@pytest.fixture(name="engine_wh", params=ENGINES)
def engine_warehouse(request, tmp_path: Path) -> EngineWarehouse:
    if request.param == "duckdb":
        return _duckdb(tmp_path)
    if request.param == "postgres":
        return _postgres(request.getfixturevalue("pg_warehouse_url"))
    url = request.getfixturevalue("spark_connect_url")
    return _spark(url, request.getfixturevalue("spark_connect").client)
