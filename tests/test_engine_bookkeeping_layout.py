"""Issue 18, phase 2: one bookkeeping layout on every engine, and `-o` parsed for
every command.

Layout 2 keeps gc's collection of a snapshot as an appended row of
`strata_internal.collections` (Spark tables take no UPDATE) where layout 1 updated
`snapshots.collected_at/collected_by`. A DuckDB file written before (layout 1) is
migrated by the first command that opens it, a reading one included, and keeps
every run, snapshot, collection and view. A location of an unknown kind is E070
naming it, its password hidden, from every command that takes `-o`.

Real DuckDB files and the real `strata` CLI in subprocesses."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from enginehelpers import strata

from strata.engine.warehouse import NotDuckDB, Warehouse

MODULE = """source orders {
  id: int
  amount: int
}

model big_orders {
  from orders
  filter amount > 2
  select id, amount
}
"""


def sql(path: Path, *statements: str) -> list[tuple]:
    con = duckdb.connect(str(path))
    try:
        rows: list[tuple] = []
        for statement in statements:
            rows = con.execute(statement).fetchall()
        return rows
    finally:
        con.close()


def downgrade_to_layout_1(path: Path) -> None:
    """Rewrite a layout 2 file into layout 1 as strata wrote it before issue 18:
    collections back in two columns of `snapshots`, no `collections` table, meta 1."""
    sql(path,
        "ALTER TABLE strata_internal.snapshots ADD COLUMN collected_at TIMESTAMP",
        "ALTER TABLE strata_internal.snapshots ADD COLUMN collected_by TEXT",
        "UPDATE strata_internal.snapshots s SET collected_at = c.collected_at, "
        "collected_by = c.collected_by FROM strata_internal.collections c "
        "WHERE c.name = s.name",
        "DROP TABLE strata_internal.collections",
        "UPDATE strata_internal.meta SET value = '1' WHERE key = 'schema_version'")


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path]:
    wh = tmp_path / "w.duckdb"
    (tmp_path / "m.strata").write_text(MODULE)
    sql(wh, "CREATE TABLE orders AS SELECT i AS id, i AS amount FROM range(6) t(i)")
    return tmp_path, wh


def run(tmp: Path, wh: Path, *args: str, now: str = "2026-01-01 00:00:00") -> dict:
    proc = strata("run", "m.strata", "-o", str(wh), "--json", *args, cwd=tmp,
                  env={"STRATA_NOW": now}, check=True)
    return json.loads(proc.stdout)


def test_a_layout_1_file_is_migrated_by_a_reading_command_and_keeps_its_collections(project):
    tmp, wh = project
    first = run(tmp, wh)["run_id"]
    sql(wh, "INSERT INTO orders VALUES (10, 10)")
    second = run(tmp, wh, now="2026-01-02 00:00:00")["run_id"]
    gc = json.loads(strata("gc", "-o", str(wh), "--older-than", "0d", "--keep-last", "1",
                           "--json", cwd=tmp, env={"STRATA_NOW": "2026-01-03 00:00:00"},
                           check=True).stdout)
    (collected,) = gc["collected"]
    downgrade_to_layout_1(wh)
    assert sql(wh, "SELECT name, collected_by FROM strata_internal.snapshots "
                   "WHERE collected_at IS NOT NULL") == [(collected["snapshot"], gc["gc_id"])]

    listed = json.loads(strata("history", "-o", str(wh), "--json", cwd=tmp, check=True).stdout)

    assert [(e["id"], e["collected_by"]) for e in listed if e["kind"] == "run"] == [
        (second, None), (first, gc["gc_id"])]
    assert sql(wh, "SELECT value FROM strata_internal.meta") == [("2",)]
    assert sql(wh, "SELECT name, collected_by FROM strata_internal.collections") == [
        (collected["snapshot"], gc["gc_id"])]
    columns = {r[0] for r in sql(wh, "DESCRIBE strata_internal.snapshots")}
    assert not columns & {"collected_at", "collected_by"}
    # the collected run stays collected; the live one is verified, and runs go on
    refused = strata("rollback", first, "-o", str(wh), cwd=tmp, check=False)
    assert "E076" in refused.stderr and gc["gc_id"] in refused.stderr
    strata("verify", second, "-o", str(wh), cwd=tmp, check=True)
    assert run(tmp, wh, "--only-stale")["status"] == "up_to_date"


def test_a_layout_newer_than_this_strata_is_E083(project):
    tmp, wh = project
    run(tmp, wh)
    sql(wh, "UPDATE strata_internal.meta SET value = '3' WHERE key = 'schema_version'")
    for args in (("history",), ("gc", "--older-than", "0d")):
        proc = strata(*args, "-o", str(wh), cwd=tmp, check=False)
        assert "error[E083]" in proc.stderr and "layout version 3" in proc.stderr


@pytest.mark.parametrize("command", [
    ("run", "m.strata"), ("plan", "m.strata"), ("history",), ("replay", "abcd"),
    ("verify", "abcd"), ("rollback", "abcd"), ("branch", "create", "dev"),
    ("branch", "list"), ("gc", "--older-than", "1d"),
    ("backfill", "m.strata", "abcd", "--reason", "r", "--source", "orders=orders")])
def test_an_unknown_kind_of_location_is_E070_from_every_command_password_hidden(
        project, command):
    tmp, _ = project
    proc = strata(*command, "-o", "mysql://ann:hunter2@db.example/sales", cwd=tmp,
                  check=False)
    assert "error[E070]" in proc.stderr
    assert "mysql://ann:***@db.example/sales" in proc.stderr
    assert "hunter2" not in proc.stdout + proc.stderr


def test_a_duckdb_warehouse_is_the_same_file_behind_the_adapter(project):
    _, wh = project
    opened = Warehouse.open(str(wh))
    try:
        assert opened.label == str(wh) and opened.on_duckdb
        assert opened.adapter.con is opened.con and opened.adapter.locked
        assert set(opened.internal_objects()) == {
            "meta", "history", "snapshots", "branches", "collections"}
    finally:
        opened.close()


def test_duckdb_text_asked_of_another_engine_fails_loudly():
    """`wh.con` is DuckDB's connection: on another engine a caller that still sends
    DuckDB text is a bug, told at once (NotDuckDB), never run against the server."""
    from strata.engine.adapters.duckdb import DuckDBAdapter
    from strata.engine.locations import parse_location

    location = parse_location("postgresql://ann:hunter2@db.example/sales")
    stand_in = DuckDBAdapter.memory()  # any adapter: `con` is asked of the façade
    wh = Warehouse(location.redacted(), None, adapter=stand_in, label=location.redacted(),
                   location=location)
    try:
        with pytest.raises(NotDuckDB, match=r"postgresql://ann:\*\*\*@db.example/sales"):
            _ = wh.con
        with pytest.raises(NotDuckDB):
            wh.execute("SELECT 1")
        assert not wh.on_duckdb and wh.rows(__import__("sqlglot").exp.select("1")) == [(1,)]
    finally:
        stand_in.close()
