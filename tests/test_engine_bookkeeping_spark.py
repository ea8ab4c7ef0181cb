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
import re
from pathlib import Path

import duckdb
from enginehelpers import strata

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


def test_a_writer_killed_between_commit_point_and_views_is_rolled_forward_by_the_next(
        tmp_path):
    """spark:DIR: the first run dies after its history entry and its first view (so
    `totals` has no view yet); the next writing command (branch create) first rolls
    main's views forward to the entry, so the branch copies both of the run's
    snapshots. Two JVM processes: the same crash after a previous run is in
    tests/test_engine_suites.py, on Spark Connect."""
    tmp = project(tmp_path)
    where = f"spark:{tmp / 'wh'}"
    killed = cli(tmp, where, "run", "m.strata", "--workers", "1", ok=False,
                 env={"STRATA_CRASH_AT": "after_view:big_orders"})
    assert killed.returncode == -9
    # (each spark:DIR process starts a JVM: the branch's own entry tells what it copied,
    # without a `history` process of its own)
    made = js(cli(tmp, where, "branch", "create", "dev", "--json"))
    views = made["views"]
    assert sorted(views) == ["big_orders", "totals"]  # totals' view made by the recovery
    # snap_<run>_<model>, as Spark names it (snap__<run>__<model>): one run for both
    runs = {re.fullmatch(r"snap_+([0-9a-f]{12})_+\w+", name)[1] for name in views.values()}
    assert len(runs) == 1, views
