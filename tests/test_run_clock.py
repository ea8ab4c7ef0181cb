"""A run's date and time (issue 40, item 1): `run_date()` and `run_timestamp()` are
bound once when a run starts, recorded in its history entry, make the models that
read them (and only those) stale when they change, and are reused by `replay`,
`verify` and `backfill`. Real DuckDB files, the real CLI in its own process.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from enginehelpers import strata

MODULE = """
source orders {
  id: int
  ordered_at: date
}
-- a daily model: the last 7 days as of the run's date
model recent {
  from orders
  filter ordered_at >= date_add('day', -7, run_date())
  derive as_of = run_date()
  select id, ordered_at, as_of
}
model recent_count {
  from recent
  aggregate n = count()
}
model all_orders {
  from orders
  aggregate n = count()
}
"""


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    (tmp_path / "shop.strata").write_text(MODULE)
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    con.execute("CREATE TABLE orders (id BIGINT, ordered_at DATE)")
    con.execute("INSERT INTO orders VALUES (1, DATE '2026-11-20'), (2, DATE '2026-11-28'), "
                "(3, DATE '2026-12-01')")
    con.close()
    return tmp_path


def cli(folder: Path, *args: str, ok: bool = True):
    return strata(*args, cwd=folder, check=ok, env={"STRATA_NOW": "2026-12-02 08:00:00"})


def run(folder: Path, *args: str) -> dict:
    return json.loads(cli(folder, "run", "shop.strata", "-o", "w.duckdb", "--json",
                          *args).stdout)


def rows(folder: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(folder / "w.duckdb"), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_the_run_date_is_bound_once_and_recorded_in_the_history(shop):
    report = run(shop, "--at", "2026-12-01")
    assert rows(shop, "SELECT id, CAST(as_of AS VARCHAR) FROM v_recent ORDER BY id") == [
        (2, "2026-12-01"), (3, "2026-12-01")]
    [entry] = json.loads(cli(shop, "history", "-o", "w.duckdb", "--json").stdout)
    assert entry["id"] == report["run_id"]
    assert entry["source_fingerprints"]["run_date()"] == "2026-12-01"
    assert "run_timestamp()" not in entry["source_fingerprints"]  # no model reads it


def test_without_at_the_run_reads_the_clock(shop):
    run(shop)
    assert rows(shop, "SELECT DISTINCT CAST(as_of AS VARCHAR) FROM v_recent") == [
        ("2026-12-02",)]


def test_a_new_date_makes_only_its_readers_stale(shop):
    run(shop, "--at", "2026-12-01")
    same = run(shop, "--only-stale", "--at", "2026-12-01 23:59:59")
    assert same["status"] == "up_to_date"
    nxt = run(shop, "--only-stale", "--at", "2026-12-02")
    assert nxt["stale"] == {
        "recent": "`run_date()` changed (2026-12-01 -> 2026-12-02)",
        "recent_count": "`run_date()` changed (2026-12-01 -> 2026-12-02)"}
    status = {m["model"]: m["status"] for m in nxt["models"]}
    # recent's rows changed (as_of); its count did not: reused by identity
    assert status == {"recent": "rebuilt", "recent_count": "reused", "all_orders": "kept"}


def test_a_model_reading_run_timestamp_is_stale_on_every_new_moment(tmp_path):
    (tmp_path / "m.strata").write_text(
        "source s {\n  id: int\n}\nmodel stamped {\n  from s\n  derive at = run_timestamp()\n}\n")
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    con.execute("CREATE TABLE s AS SELECT 1::BIGINT AS id")
    con.close()
    for at, status in (("2026-12-01 10:00:00", "published"),
                       ("2026-12-01 10:00:00", "up_to_date"),
                       ("2026-12-01 10:00:01", "published")):
        report = json.loads(cli(tmp_path, "run", "m.strata", "-o", "w.duckdb", "--json",
                                "--only-stale", "--at", at).stdout)
        assert report["status"] == status, (at, report)
    assert rows(tmp_path, 'SELECT CAST("at" AS VARCHAR) FROM v_stamped') == [
        ("2026-12-01 10:00:01",)]


def test_replay_recomputes_with_the_recorded_date(shop):
    first = run(shop, "--at", "2026-12-01")["run_id"]
    run(shop, "--at", "2026-12-05")  # the date moved on, and the live views with it
    out = cli(shop, "replay", first, "-o", "w.duckdb", "--execute").stdout
    assert "match    recent" in out and "MISMATCH" not in out.upper().replace("MATCH ", "")
    assert "run_date()" in out and "2026-12-01" in out
    verified = cli(shop, "verify", first, "-o", "w.duckdb").stdout
    assert "verified 3 snapshots" in verified


def test_a_backfill_sees_the_corrected_runs_date_unless_told_otherwise(shop):
    first = run(shop, "--at", "2026-12-01")["run_id"]
    con = duckdb.connect(str(shop / "w.duckdb"))
    con.execute("CREATE TABLE orders_fixed AS SELECT * FROM orders UNION ALL "
                "SELECT 4, DATE '2026-11-30'")
    con.close()
    out = cli(shop, "backfill", "shop.strata", first, "--source", "orders=orders_fixed",
              "--reason", "a late order", "-o", "w.duckdb").stdout
    assert f"run_date() = 2026-12-01: run {first}'s (--at changes it)" in out
    assert out.count("run_date() = 2026-12-01") == 1  # said once
    assert rows(shop, "SELECT DISTINCT CAST(as_of AS VARCHAR) FROM v_recent") == [
        ("2026-12-01",)]
    assert rows(shop, "SELECT count(*) FROM v_recent") == [(3,)]
    told = cli(shop, "backfill", "shop.strata", first, "--source", "orders=orders_fixed",
               "--reason", "as of later", "--at", "2026-12-07", "-o", "w.duckdb").stdout
    assert "run_date() = 2026-12-07: as given by --at" in told
    # from 2026-11-30 on: the late order and the order of 2026-12-01
    assert rows(shop, "SELECT id FROM v_recent ORDER BY id") == [(3,), (4,)]


def test_compile_and_plan_show_the_value_and_review_files_do_not(shop):
    shown = cli(shop, "compile", "shop.strata", "--show-sql", "--at", "2026-12-01").stdout
    assert "-- model recent (full; run_date() = 2026-12-01)" in shown
    assert "CAST('2026-12-01' AS DATE)" in shown
    assert "-- model all_orders (full)" in shown
    run(shop, "--at", "2026-12-01")
    plan = cli(shop, "plan", "shop.strata", "-o", "w.duckdb", "--at", "2026-12-03").stdout
    assert "run_date() = 2026-12-03 (read by recent; --at sets it)" in plan
    assert "+ recent " in plan and "`run_date()` changed (2026-12-01 -> 2026-12-03)" in plan
    assert "= all_orders" in plan
    cli(shop, "snapshot", "shop.strata", "--dialect", "duckdb")
    locked = (shop / "sql_snapshots" / "duckdb" / "recent.sql").read_text()
    assert "$run_date" in locked and "2026" not in locked


def test_now_is_refused_and_points_at_the_run_clock(shop):
    (shop / "shop.strata").write_text(MODULE + "model bad {\n  from orders\n  derive t = now()\n}\n")
    err = cli(shop, "check", "shop.strata", ok=False).stderr
    assert "error[E032]: `now()` is not deterministic" in err
    assert "use run_date() or run_timestamp()" in err


def test_a_bad_at_is_E084(shop):
    err = cli(shop, "run", "shop.strata", "-o", "w.duckdb", "--at", "yesterday", ok=False).stderr
    assert "error[E084]: --at `yesterday` is not a date or a date and time" in err
    assert "Traceback" not in err


def test_the_clock_in_a_let_or_a_join_condition_is_bound_too(tmp_path):
    """Every step a model types its expressions in notes the clock: a `let` and a join
    condition run with the run's value, not an unbound placeholder."""
    (tmp_path / "m.strata").write_text("""
source s {
  id: int
  d: date
}
model m {
  from s
  let cutoff = date_add('day', -1, run_date())
  join_left s as t on t.d >= run_date()
  filter d >= cutoff
  select id
}
""")
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    con.execute("CREATE TABLE s AS SELECT * FROM (VALUES (1, DATE '2026-12-01'), "
                "(2, DATE '2026-11-01')) t(id, d)")
    con.close()
    cli(tmp_path, "run", "m.strata", "-o", "w.duckdb", "--at", "2026-12-02")
    assert rows(tmp_path, "SELECT id FROM v_m") == [(1,)]


def test_the_clock_in_a_pin_or_delete_when_is_E032(shop):
    (shop / "shop.strata").write_text(MODULE + """
model pinned {
  from orders
  select id, ordered_at
  pin holds ordered_at <= run_date()
}
""")
    err = cli(shop, "check", "shop.strata", ok=False).stderr
    assert "error[E032]: `run_date()` cannot be used in `pin`" in err
