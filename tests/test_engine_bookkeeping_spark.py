"""Issue 18, items 1-3 on Spark: every command that takes `-o` works on a Spark
warehouse from the CLI (Spark Connect, `sc://`, and a local session, `spark:DIR`),
with the same bookkeeping as on DuckDB and PostgreSQL; `gc` says it does not measure
storage and refuses `--compact-file` (E084: DROP TABLE deletes the files).

Spark has no transactions: a publication's history entry is its commit point and
views switch after it, one at a time. A writer killed between the two leaves views
behind the history; the next command that writes rolls them forward first
(`publication.recover`), so a branch made then copies the views the history says.

Real engines: the session's Spark Connect server (tests/conftest.py), and `strata`
subprocesses of their own for `spark:DIR` (a local session is a JVM per process:
those steps are few). The sources are Parquet files, read in place by Spark."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import duckdb
from conftest import _unavailable
from enginehelpers import strata
from real_engines import (
    SHORT_LIVED_JVM,
    EngineUnavailable,
    connect_client,
    start_spark_connect,
)

from strata.engine.adapters import SparkAdapter, open_adapter
from strata.engine.adapters.base import Relation, select_all
from strata.engine.locations import parse_location

MODULE = """source orders = file 'orders.parquet' {
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


def write_orders(folder: Path, rows: int) -> None:
    con = duckdb.connect()
    try:
        con.execute(f"COPY (SELECT i AS id, i AS amount FROM range({rows}) t(i)) TO "
                    f"'{folder / 'orders.parquet'}' (FORMAT parquet)")
    finally:
        con.close()


def project(tmp_path: Path) -> Path:
    (tmp_path / "m.strata").write_text(MODULE)
    write_orders(tmp_path, 6)
    return tmp_path


def cli(tmp: Path, where: str, *args: str, ok: bool = True, env: dict | None = None,
        now: str = "2026-01-01 00:00:00"):
    return strata(*args, "-o", where, cwd=tmp, env={"STRATA_NOW": now, **(env or {})},
                  check=ok, timeout=300)


def js(proc) -> dict | list:
    return json.loads(proc.stdout)


def test_the_commands_the_engine_suites_do_not_cover_on_spark_connect(spark_connect_url,
                                                                     tmp_path):
    """tests/test_engine_suites.py runs run, only-stale, plan, override, stage-only,
    merges, backfill, rollback, verify, branch create, gc and crashes on Spark too;
    here the rest: branch list, replay --execute, gc's storage line and refused
    --compact-file, and history after a gc."""
    tmp, url = project(tmp_path), spark_connect_url
    first = js(cli(tmp, url, "run", "m.strata", "--json"))
    write_orders(tmp, 8)
    second = js(cli(tmp, url, "run", "m.strata", "--only-stale", "--json",
                    now="2026-01-02 00:00:00"))
    assert second["status"] == "published" and second["run_id"] != first["run_id"]
    created = js(cli(tmp, url, "branch", "create", "Dev_1", "--json"))
    assert set(created["views"]) == {"big_orders", "totals"}
    assert [b["name"] for b in js(cli(tmp, url, "branch", "list", "--json"))] == [
        "main", "Dev_1"]
    replayed = js(cli(tmp, url, "replay", second["run_id"], "--execute", "--json"))
    assert replayed["replay"]["ok"]

    refused = cli(tmp, url, "gc", "--older-than", "0d", "--compact-file", ok=False)
    assert "error[E084]" in refused.stderr
    done = cli(tmp, url, "gc", "--older-than", "0d", "--keep-last", "1",
               now="2026-01-03 00:00:00")
    assert "collected 2 snapshot(s)" in done.stdout and "not measured" in done.stdout
    listed = js(cli(tmp, url, "history", "--json"))
    assert [e["kind"] for e in listed] == ["gc", "branch", "run", "run"]
    assert listed[-1]["collected_by"] == listed[0]["id"]


def test_a_killed_spark_dir_writer_is_rolled_forward_and_the_folder_outlives_its_processes(
        tmp_path, connect_mode_undone):
    """spark:DIR: the first run dies after its history entry and its first view (so
    `totals` has no view yet); the next writing command (branch create) first rolls
    main's views forward to the entry, so the branch copies both of the run's
    snapshots. (The same crash after a previous run is in tests/test_engine_suites.py,
    on Spark Connect.)

    Then the folder, its processes gone, is served by a Spark Connect server started on
    it: history, views and their data are there, `verify` recomputes in that server the
    content hashes the spark:DIR process recorded, and a second writer is E075 naming
    the first, until the first stops or its lease runs out."""
    tmp = project(tmp_path)
    folder = tmp / "wh"
    where = f"spark:{folder}"
    short = {"JAVA_TOOL_OPTIONS": SHORT_LIVED_JVM}  # each process a JVM of a few statements
    killed = cli(tmp, where, "run", "m.strata", "--workers", "1", ok=False,
                 env={"STRATA_CRASH_AT": "after_view:big_orders", **short})
    assert killed.returncode == -9
    # (each spark:DIR process starts a JVM: the branch's own entry tells what it copied,
    # without a `history` process of its own)
    branched = cli(tmp, where, "branch", "create", "dev", "--json", env=short)
    # the JVM logs errors only (no log4j banner, no WARN lines in a user's terminal)
    assert not re.search(r"\bWARN\b|log4j|log level", branched.stderr), branched.stderr
    made = js(branched)
    views = made["views"]
    assert sorted(views) == ["big_orders", "totals"]  # totals' view made by the recovery
    # snap_<run>_<model>, as Spark names it (snap__<run>__<model>): one run for both
    runs = {re.fullmatch(r"snap_+([0-9a-f]{12})_+\w+", name)[1] for name in views.values()}
    assert len(runs) == 1, views

    try:
        server = start_spark_connect(root=folder, short_lived=True)
    except EngineUnavailable as err:
        _unavailable(err)
    try:
        served_by_connect(tmp, server.url, runs.pop())
    finally:
        server.close()


def served_by_connect(tmp: Path, url: str, run_id: str) -> None:
    listed = js(cli(tmp, url, "history", "--json"))
    assert [(e["kind"], e["id"]) for e in listed][1:] == [("run", run_id)]
    assert listed[0]["kind"] == "branch" and listed[0]["snapshots"] == listed[1]["snapshots"]
    verified = js(cli(tmp, url, "verify", run_id, "--json"))  # hashes made again here
    assert verified["ok"] and [(s["model"], s["rows"]) for s in verified["snapshots"]] == [
        ("big_orders", 3), ("totals", 3)], verified
    location = parse_location(url)
    first = open_adapter(location, lock_timeout=30)
    try:
        for branch in ("main", "dev"):
            listed = {first.logical_name(n): kind for n, kind in first.relations(branch).items()}
            assert listed == {"v_big_orders": "view", "v_totals": "view"}  # a branch's views
            totals = Relation(branch, first.physical_name("v_totals"))
            assert sorted(first.rows(select_all(totals))) == [
                (3, 3), (4, 4), (5, 5)]
        refused = cli(tmp, url, "run", "m.strata", ok=False, env={"STRATA_LOCK_TIMEOUT": "0"})
        assert "error[E075]" in refused.stderr and f"pid {os.getpid()}" in refused.stderr
    finally:
        first.close()
    second = open_adapter(location, lock_timeout=0)  # the first released it
    # a writer that dies stops its heartbeat without dropping the lock table: a later
    # writer breaks it once the newest heartbeat is older than the lease
    second._beat.set()
    second._beat = None
    later = SparkAdapter(connect_client(url), location.redacted(), lease=2)
    try:
        later.acquire_lock(timeout=30)
        assert later.locked
    finally:
        later.close()
        second.close()
