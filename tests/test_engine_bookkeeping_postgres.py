"""Issue 18, items 1-3 on PostgreSQL: every command that takes `-o` works on a
`postgresql://` warehouse from the CLI, with the same bookkeeping as on DuckDB
(layout 2: history, registry, branches, append-only collections), one writer at a
time (an advisory lock: E075 naming the holder), `gc --compact-file` refused (E084:
the server reclaims space itself), and the password of the URL in no output, no
error and no history entry.

A real PostgreSQL server (tests/conftest.py's `postgres_engine`), a database of its
own per test; the real `strata` CLI in subprocesses."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from urllib.parse import quote

import pytest
from enginehelpers import strata

from strata.engine.warehouse import NotDuckDB, Warehouse

SECRET = "s3cret-Pw"  # the server trusts its socket: a password is accepted, and unused
MODULE = """source orders {
  id: int
  amount: int
}

model big_orders {
  from orders
  filter amount > 2
  select id, amount
}

model totals {
  from big_orders
  group id
  aggregate total = sum(amount)
}
"""


@pytest.fixture
def pg(postgres_engine, tmp_path: Path):
    """(a database of this test's own, its URL with a password, the module's folder)."""
    name = "t_" + uuid.uuid4().hex[:10]
    postgres_engine.con.execute(f'CREATE DATABASE "{name}"')
    root = quote(str(postgres_engine.server.root), safe="")
    url = f"postgresql://postgres:{SECRET}@{root}/{name}"
    (tmp_path / "m.strata").write_text(MODULE)
    db = Database(postgres_engine.server.root, name)
    db.sql("CREATE TABLE orders AS SELECT i::bigint AS id, i::bigint AS amount "
           "FROM generate_series(0, 5) AS t(i)")
    yield db, url, tmp_path
    postgres_engine.con.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


class Database:
    def __init__(self, root: Path, name: str):
        self.root, self.name = root, name

    def sql(self, statement: str) -> list[tuple]:
        import psycopg

        with psycopg.connect(host=str(self.root), user="postgres", dbname=self.name,
                             autocommit=True) as con, con.cursor() as cur:
            cur.execute(statement)
            return cur.fetchall() if cur.description else []


def cli(tmp: Path, url: str, *args: str, ok: bool = True, now: str = "2026-01-01 00:00:00",
        env: dict | None = None):
    proc = strata(*args, "-o", url, cwd=tmp, env={"STRATA_NOW": now, **(env or {})},
                  check=ok)
    assert SECRET not in proc.stdout + proc.stderr
    return proc


def js(proc) -> dict | list:
    return json.loads(proc.stdout)


def test_every_command_on_a_postgresql_warehouse_from_the_cli(pg):
    db, url, tmp = pg
    first = js(cli(tmp, url, "run", "m.strata", "--json"))
    assert first["status"] == "published" and sorted(first["rebuilt"]) == ["big_orders",
                                                                          "totals"]
    assert js(cli(tmp, url, "run", "m.strata", "--only-stale", "--json"))["status"] == \
        "up_to_date"
    planned = js(cli(tmp, url, "plan", "m.strata", "--json"))
    assert planned["base_run"] == first["run_id"]
    assert {m["model"]: m["rebuild"] for m in planned["models"]} == {
        "big_orders": False, "totals": False}
    # the views are PostgreSQL's own: a client reads the branch's schema
    assert db.sql("SELECT count(*) FROM main.v_big_orders") == [(3,)]

    db.sql("INSERT INTO orders VALUES (10, 10)")
    second = js(cli(tmp, url, "run", "m.strata", "--only-stale", "--json",
                    now="2026-01-02 00:00:00"))
    assert second["status"] == "published" and second["run_id"] != first["run_id"]
    assert db.sql("SELECT count(*) FROM main.v_big_orders") == [(4,)]

    created = js(cli(tmp, url, "branch", "create", "dev", "--json"))
    assert set(created["views"]) == {"big_orders", "totals"}
    assert [b["name"] for b in js(cli(tmp, url, "branch", "list", "--json"))] == ["main",
                                                                                 "dev"]
    rolled = js(cli(tmp, url, "rollback", first["run_id"], "--branch", "dev", "--json"))
    assert rolled["details"]["rolled_back_to"] == first["run_id"]
    assert db.sql("SELECT count(*) FROM dev.v_big_orders") == [(3,)]
    assert db.sql("SELECT count(*) FROM main.v_big_orders") == [(4,)]

    verified = js(cli(tmp, url, "verify", second["run_id"], "--json"))
    assert verified["ok"] and {s["model"] for s in verified["snapshots"]} == {
        "big_orders", "totals"}
    shown = js(cli(tmp, url, "replay", first["run_id"], "--json"))
    assert shown["id"] == first["run_id"] and shown["status"] == "ok"
    replayed = js(cli(tmp, url, "replay", second["run_id"], "--execute", "--json"))
    assert replayed["replay"]["ok"] and replayed["replay"]["source_drift"] == {}

    refused = cli(tmp, url, "gc", "--older-than", "0d", "--compact-file", ok=False)
    assert "error[E084]" in refused.stderr and "--compact-file" in refused.stderr
    # dev's rollback keeps the first run's snapshots live there: back to main first
    cli(tmp, url, "rollback", second["run_id"], "--branch", "dev")
    dry = js(cli(tmp, url, "gc", "--older-than", "0d", "--keep-last", "1", "--dry-run",
                 "--json", now="2026-01-03 00:00:00"))
    assert dry["status"] == "dry_run" and dry["collected"]
    done = js(cli(tmp, url, "gc", "--older-than", "0d", "--keep-last", "1", "--json",
                  now="2026-01-03 00:00:00"))
    assert [c["snapshot"] for c in done["collected"]] == [c["snapshot"]
                                                         for c in dry["collected"]]
    assert done["estimated_bytes"] > 0 and done["file_bytes"] == 0
    gone = {c["snapshot"] for c in done["collected"]}
    assert {r[0] for r in db.sql("SELECT name FROM strata_internal.collections")} == gone
    tables = {r[0] for r in db.sql("SELECT tablename FROM pg_tables "
                                   "WHERE schemaname = 'strata_internal'")}
    assert not gone & tables
    stale = cli(tmp, url, "rollback", first["run_id"], ok=False)
    assert "error[E076]" in stale.stderr and done["gc_id"] in stale.stderr

    listed = js(cli(tmp, url, "history", "--json"))
    assert [e["kind"] for e in listed] == ["gc", "rollback", "rollback", "branch", "run",
                                           "run"]
    assert listed[-1]["collected_by"] == done["gc_id"]
    entries = db.sql("SELECT entry FROM strata_internal.history")
    assert entries and not any(SECRET in e for (e,) in entries)


def test_the_warehouse_facade_on_postgresql(pg):
    db, url, tmp = pg
    wh = Warehouse.open(url)
    try:
        assert wh.label == url.replace(SECRET, "***") and not wh.on_duckdb
        with pytest.raises(NotDuckDB):
            _ = wh.con
        assert set(wh.internal_objects()) == {"meta", "history", "snapshots", "branches",
                                              "collections"}
        assert wh.layout() == 2 and wh.adapter.locked
        # a second writer waits, then says who holds the lock (E075)
        other = cli(tmp, url, "branch", "create", "dev", ok=False,
                    env={"STRATA_LOCK_TIMEOUT": "0"})
        assert "error[E075]" in other.stderr and "server process" in other.stderr
    finally:
        wh.close()
    assert db.sql("SELECT value FROM strata_internal.meta") == [("2",)]


def test_a_database_without_a_warehouse_is_E070_for_commands_that_need_one(pg):
    _, url, tmp = pg
    for args in (("history",), ("rollback", "abcd"), ("gc", "--older-than", "0d")):
        proc = cli(tmp, url, *args, ok=False)
        assert "error[E070]" in proc.stderr and "no warehouse at" in proc.stderr
        assert "postgres:***@" in proc.stderr


def test_backfill_of_a_run_on_postgresql_and_rollback_of_it(pg):
    db, url, tmp = pg
    first = js(cli(tmp, url, "run", "m.strata", "--json"))
    db.sql("CREATE TABLE orders_fixed AS SELECT id, amount * 10 AS amount FROM orders")
    fixed = js(cli(tmp, url, "backfill", "m.strata", first["run_id"], "--source",
                   "orders=orders_fixed", "--reason", "amounts were in tens", "--json"))
    assert fixed["status"] == "published" and fixed["backfill_of"] == first["run_id"]
    assert db.sql("SELECT count(*) FROM main.v_big_orders") == [(5,)]
    cli(tmp, url, "rollback", first["run_id"])
    assert db.sql("SELECT count(*) FROM main.v_big_orders") == [(3,)]
    kinds = [(e["kind"], e["backfill_of"]) for e in js(cli(tmp, url, "history", "--json"))]
    assert kinds == [("rollback", None), ("backfill", first["run_id"]), ("run", None)]


def test_replay_execute_of_a_run_reading_a_file_postgresql_cannot_read(pg):
    """The run checked and fingerprinted the CSV locally and loaded it into a table;
    replay --execute recomputes from that table and compares the file as it is now
    with the recorded fingerprint (read locally, as the run did)."""
    _, url, tmp = pg
    (tmp / "orders.csv").write_text("id,amount\n1,5\n2,1\n3,9\n")
    (tmp / "f.strata").write_text(MODULE.replace(
        "source orders {", "source orders = file 'orders.csv' {"))
    run_id = js(cli(tmp, url, "run", "f.strata", "--json"))["run_id"]
    same = js(cli(tmp, url, "replay", run_id, "--execute", "--json"))["replay"]
    assert same["ok"] and same["source_drift"] == {}
    with (tmp / "orders.csv").open("a") as out:
        out.write("4,7\n")
    moved = js(cli(tmp, url, "replay", run_id, "--execute", "--json"))["replay"]
    assert set(moved["source_drift"]) == {"orders"}
