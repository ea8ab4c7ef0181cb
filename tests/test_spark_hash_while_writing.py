"""Issue 41, "hash while writing": on Spark a model's table is written with its content
hash observed by the same job (`SparkAdapter.build_table_hashed`), not hashed by a
second job reading it back. The hash must be the one the table's own hash query gives
(a snapshot's content id must not change), the stored table the one a CREATE TABLE AS
makes, and a killed CTAS's leftover folder must not stop it.

Real engines: the session's local Spark (a classic session) and its Spark Connect
server, each building the same query both ways."""

from __future__ import annotations

import duckdb
import pytest
import sqlglot
from engine_adapters import engine_adapter  # noqa: F401  (the fixture)

from strata.engine import history as H
from strata.engine.adapters import SparkAdapter, open_adapter
from strata.engine.adapters import spark as spark_adapter
from strata.engine.adapters.base import INTERNAL, Relation
from strata.engine.locations import parse_location
from strata.engine.run import RunOptions, execute
from strata.engine.warehouse import Warehouse
from strata.semantics.resolve import load_module

# NULLs in every type, decimals, timestamps and dates (before the Gregorian switch
# too), doubles, strings with accents and astral characters
ROWS = """SELECT CAST(id AS INT) AS id,
  CASE WHEN id % 3 = 0 THEN NULL ELSE CAST(id AS DECIMAL(12, 3)) / 7 END AS amount,
  CASE WHEN id % 4 = 0 THEN NULL ELSE TIMESTAMP '1500-01-01 00:00:00'
       + make_interval(0, 0, 0, id, 0, 0, id / 1000) END AS at,
  CASE WHEN id % 5 = 0 THEN NULL ELSE concat('é😀 ', CAST(id AS STRING)) END AS label,
  CAST(id AS DOUBLE) / 3 AS ratio, DATE '1400-01-01' + CAST(id AS INT) AS day
FROM range(300)"""


def both_ways(ad: SparkAdapter, schema: str, name: str, sql: str):
    """The query built as today (CTAS, then hashed) and hashed while written."""
    tree = sqlglot.parse_one(sql, read="spark")
    ad.build_table(Relation(schema, name + "_ctas"), tree)
    columns, hashed = ad.hash_tables(schema, [name + "_ctas"])[name + "_ctas"]
    made = ad.build_table_hashed(Relation(schema, name), tree)
    return (columns, hashed), made


def described(ad: SparkAdapter, schema: str, name: str) -> dict[str, str]:
    rows = ad.session.sql(f"DESCRIBE TABLE EXTENDED {schema}.{name}").collect()
    return {r[0]: r[1] for r in rows if r[0] not in ("Table", "Created Time", "Location")}


def check_both_ways(ad: SparkAdapter, schema: str) -> None:
    for name, sql in (("full", ROWS), ("empty", ROWS + " WHERE id < 0")):
        (columns, hashed), made = both_ways(ad, schema, name, sql)
        assert made is not None
        assert (made.rows, made.columns, made.hash) == (hashed.count, columns, hashed), name
        assert described(ad, schema, name) == described(ad, schema, name + "_ctas")
    assert made.hash.count == 0 and made.hash.total == 0


def test_a_local_session_hashes_while_writing_as_the_table_hashes(spark_engine, monkeypatch):
    """And where the metrics do not come back (a server that sends none), the table
    is hashed after it was written, as before."""
    ad = SparkAdapter(spark_engine.session, "spark (the test session)")
    ad.create_schema("hash_while_writing")
    try:
        check_both_ways(ad, "hash_while_writing")
        monkeypatch.setattr(spark_adapter, "_observed", lambda observation, count: None)
        (_, hashed), made = both_ways(ad, "hash_while_writing", "unobserved", ROWS)
        assert made.hash == hashed and made.rows == 300
    finally:
        spark_engine.session.sql("DROP SCHEMA hash_while_writing CASCADE")


def test_spark_connect_hashes_while_writing_and_meets_a_killed_ctas_folder_as_a_ctas(
        spark_connect, spark_connect_url, connect_mode_undone):
    """Over Spark Connect (the metrics come back with the write's response). A folder a
    killed writer left under the table's name is met as a CTAS meets it: an empty one
    is written over; one holding a task's files is refused (LOCATION_ALREADY_EXISTS:
    Spark 4.3 checks a managed table's location whatever allowNonEmptyLocationInCTAS
    says, for a CTAS as for saveAsTable; a run's new names never meet one)."""
    ad = open_adapter(parse_location(spark_connect_url))
    try:
        ad.create_schema(INTERNAL)
        check_both_ways(ad, INTERNAL)
        tree = sqlglot.parse_one("SELECT 1 AS x", read="spark")
        for left, files in (("emptied", False), ("killed", True)):
            outcomes = []
            for name, build in ((left + "_ctas", ad.build_table),
                                (left, ad.build_table_hashed)):
                folder = spark_connect.root / "warehouse" / f"{INTERNAL}.db" / name
                (folder / "_temporary" / "0").mkdir(parents=True)
                if files:
                    (folder / "_temporary" / "0" / "part-00000.parquet").write_bytes(b"half")
                else:
                    (folder / "_temporary" / "0").rmdir()
                    (folder / "_temporary").rmdir()
                try:
                    build(Relation(INTERNAL, name), tree)
                    outcomes.append(ad.rows(sqlglot.parse_one(f"SELECT * FROM {INTERNAL}.{name}")))
                except ad.engine_errors() as err:
                    outcomes.append("LOCATION_ALREADY_EXISTS" in str(err))
            assert outcomes == ([True, True] if files else [[(1,)], [(1,)]]), left
    finally:
        ad.close()


def test_a_run_on_spark_records_what_the_tables_hash_to_without_hashing_them(
        spark_connect_url, tmp_path, connect_mode_undone):
    """A run's snapshot records (rows, columns, content hash) are what the old path
    would record, hashing each new table after it was written; no statement of the
    run hashes a table (with one lane and with four)."""
    con = duckdb.connect()
    con.execute(f"COPY (SELECT i AS id, CASE WHEN i % 3 = 0 THEN NULL ELSE i % 7 END AS k "
                f"FROM range(40) t(i)) TO '{tmp_path / 'a.parquet'}' (FORMAT parquet)")
    con.close()
    (tmp_path / "m.strata").write_text(
        "source a = file 'a.parquet' {\n  id: int\n  k: int\n}\n"
        "model t0 {\n  from a\n  select id, k\n  pin rows >= 1\n}\n"
        "model t1 {\n  from t0\n  group k\n  aggregate n = count()\n}\n"
        "model t2 {\n  from t0\n  filter k > 100\n  select id\n}\n")
    module = load_module(tmp_path / "m.strata")
    assert module.ok, module.diagnostics
    for workers in (1, 4):
        wh = Warehouse.open(spark_connect_url)
        seen = recorded(wh.adapter)
        try:
            report = execute(module, wh, RunOptions(workers=workers, full_refresh=True))
            # the source is hashed (no change marker through sc://), no new table is
            assert not [s for s in seen if "xxhash64" in s.lower() and INTERNAL in s]
            assert {r.model: r.rows for r in report.results} == {"t0": 40, "t1": 8, "t2": 0}
            snapshots = [r.snapshot for r in report.results]
            records = H.records(wh, snapshots)
            for name in snapshots:
                columns, hashed = wh.adapter.hash_tables(INTERNAL, [name])[name]
                record = records[name]
                assert record.columns == [list(c) for c in columns]
                assert (record.row_count, int(record.hash_sum), int(record.hash_xor)) == (
                    hashed.count, hashed.total, hashed.xor)
        finally:
            wh.close()


def recorded(adapter) -> list[str]:
    """Every query the adapter reads rows of from now on, as the engine gets it."""
    seen: list[str] = []
    real = adapter.rows

    def rows(tree, *args, **kwargs):
        seen.append(adapter.render(tree))
        return real(tree, *args, **kwargs)

    adapter.rows = rows
    return seen


@pytest.mark.parametrize("adapter", ["duckdb"], indirect=True)
def test_engines_that_hash_a_table_cheaply_build_nothing_here(adapter):
    assert adapter.build_table_hashed(Relation(adapter.test_schema, "t"),
                                      sqlglot.parse_one("SELECT 1 AS x")) is None
    assert "t" not in adapter.relations(adapter.test_schema)
