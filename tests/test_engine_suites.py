"""The run engine's suites on every engine (issue 18 item 5): run, only-stale, merge,
backfill, rollback/verify, branches, gc and crash recovery, each test once on DuckDB,
once on PostgreSQL and once on Spark (tests/engine_warehouses.py), through the real
`strata` CLI in its own process. Every assertion reads the engine's own tables.

The project: two independent subgraphs over files, a Parquet one and a CSV one.
DuckDB reads both in place; Spark reads the Parquet file in place and the CSV file
locally (its reader would guess the types), loading it once into a table named by
its fingerprint; PostgreSQL loads both so.

    orders   -> paid (upsert on id, cdc updated_at, pin unique) -> totals
    products -> cheap -> cheap_count
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from engine_warehouses import EngineWarehouse, engine_warehouse  # noqa: F401 (the fixture)
from enginehelpers import strata

MODULE = """\
source orders = file 'orders.parquet' {
  id: int
  customer_id: int
  amount: int
  status: text
  updated_at: timestamp
}

source products = file 'products.csv' {
  id: int
  name: text
  price: int
}

model paid {
  from orders
  filter status = 'paid'
  select id, customer_id, amount, updated_at
  incremental
  merge_strategy: upsert
  merge_keys: [id]
  cdc_column: updated_at
  pin unique [id]
}

model totals {
  from paid
  group customer_id
  aggregate total = sum(amount), n = count()
}

model cheap {
  from products
  filter price < 10
  select id, name, price
}

model cheap_count {
  from cheap
  aggregate n = count()
}
"""

ORDERS = 30
DAY = "2026-01-{:02d} 00:00:00"


def order(i: int, amount: int | None = None, second: int | None = None) -> tuple:
    """Order i: customer i % 4, paid unless i % 3 == 0, updated at second i."""
    return (i, i % 4, i if amount is None else amount, "void" if i % 3 == 0 else "paid",
            f"2024-01-01 00:00:{second if second is not None else i:02d}")


ORDERS_SELECT = ("SELECT id, customer_id, amount, status, CAST(updated_at AS TIMESTAMP) AS "
                 "updated_at FROM (VALUES {rows}) AS t(id, customer_id, amount, status, "
                 "updated_at)")


def orders_select(rows: list[tuple]) -> str:
    return ORDERS_SELECT.format(rows=", ".join(
        f"({i}, {c}, {a}, '{s}', '{t}')" for i, c, a, s, t in rows))


def write_orders(folder: Path, rows: list[tuple]) -> None:
    _copy(f"{orders_select(rows)} ORDER BY id", folder / "orders.parquet")


def write_products(folder: Path, prices: list[int]) -> None:
    rows = "".join(f"{i},p{i},{p}\n" for i, p in enumerate(prices))
    (folder / "products.csv").write_text("id,name,price\n" + rows)


def _copy(select: str, target: Path) -> None:
    con = duckdb.connect()
    try:
        con.execute(f"COPY ({select}) TO '{target}' (FORMAT parquet)")
    finally:
        con.close()


def expected_totals(rows: list[tuple]) -> list[tuple]:
    """What `totals` must hold: (customer_id, sum of paid amounts, paid orders)."""
    sums: dict[int, list[int]] = {}
    for _, customer, amount, status, _ in rows:
        if status == "paid":
            sums.setdefault(customer, [0, 0])
            sums[customer][0] += amount
            sums[customer][1] += 1
    return sorted((c, s, n) for c, (s, n) in sums.items())


def as_ints(rows: list[tuple]) -> list[tuple]:
    return sorted(tuple(int(v) for v in r) for r in rows)


class Shop:
    """The project in a folder, and the CLI pointed at one engine's warehouse."""

    def __init__(self, folder: Path, wh: EngineWarehouse):
        self.dir, self.wh = folder, wh
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "shop.strata").write_text(MODULE)
        self.orders = [order(i) for i in range(1, ORDERS + 1)]
        write_orders(folder, self.orders)
        write_products(folder, [3, 8, 12, 20, 5])

    def cli(self, *args: str, ok: bool | None = True, env: dict | None = None,
            now: str = DAY.format(1)):
        return strata(*args, "-o", self.wh.location, cwd=self.dir,
                      env={"STRATA_NOW": now, **(env or {})}, check=ok, timeout=600)

    def js(self, *args: str, now: str = DAY.format(1)):
        return json.loads(self.cli(*args, "--json", now=now).stdout)

    def run(self, *flags: str, now: str = DAY.format(1)) -> dict:
        return self.js("run", "shop.strata", *flags, now=now)

    def set_orders(self, rows: list[tuple]) -> None:
        self.orders = rows
        write_orders(self.dir, rows)

    def totals(self, branch: str = "main") -> list[tuple]:
        return as_ints(self.wh.view("totals", branch))


def snapshots(report: dict) -> dict[str, str]:
    return {m["model"]: m["snapshot"] for m in report["models"]}


def by_model(report: dict) -> dict[str, dict]:
    return {m["model"]: m for m in report["models"]}


@pytest.fixture
def shop(engine_wh, tmp_path) -> Shop:
    return Shop(tmp_path / "shop", engine_wh)


# ------------------------------------------------------------------ run


def test_a_first_run_publishes_every_view_and_the_same_data_reuses_every_snapshot(shop):
    first = shop.run()
    assert first["status"] == "published"
    assert sorted(first["rebuilt"]) == ["cheap", "cheap_count", "paid", "totals"]
    assert shop.totals() == expected_totals(shop.orders)
    assert as_ints(shop.wh.view("cheap_count")) == [(3,)]
    assert shop.wh.history_count() == 1

    again = shop.run(now=DAY.format(2))  # `run` rebuilds the selection: all found again
    assert again["rebuilt"] == [] and snapshots(again) == snapshots(first)
    assert shop.wh.history_count() == 2  # (the incremental model's merge base is in the id)
    assert shop.wh.leftovers() == set()


# ------------------------------------------------------------------ only-stale


def test_only_stale_rebuilds_the_changed_subgraph_and_then_writes_nothing(shop):
    first = shop.run()
    write_products(shop.dir, [3, 8, 12, 20, 5, 1])  # one more cheap product
    second = shop.run("--only-stale", now=DAY.format(2))
    assert sorted(second["rebuilt"]) == ["cheap", "cheap_count"]
    assert {m: s for m, s in snapshots(second).items() if m in ("paid", "totals")} == \
        {m: s for m, s in snapshots(first).items() if m in ("paid", "totals")}
    assert as_ints(shop.wh.view("cheap_count")) == [(4,)]

    tables, entries = shop.wh.internal_tables(), shop.wh.history_count()
    assert shop.run("--only-stale", now=DAY.format(3))["status"] == "up_to_date"
    assert shop.wh.internal_tables() == tables and shop.wh.history_count() == entries
    planned = shop.js("plan", "shop.strata")
    assert planned["base_run"] == second["run_id"]


def test_override_and_stage_only(shop):
    """--override reads another table for one run; --stage-only builds and checks
    pins but leaves the views where they were."""
    shop.run()
    fixed = [order(i, amount=100) for i in range(1, ORDERS + 1)]
    shop.wh.create_table("orders_fixed", orders_select(fixed))
    staged = shop.run("--override", "orders=orders_fixed", "--stage-only",
                      now=DAY.format(2))
    assert staged["status"] != "published"
    assert shop.totals() == expected_totals(shop.orders)
    shop.run("--override", "orders=orders_fixed", now=DAY.format(3))
    assert shop.totals() == expected_totals(fixed)


# ------------------------------------------------------------------ merges


def test_an_upsert_merges_only_the_changed_rows_and_equals_a_full_refresh(shop):
    shop.run()
    # two orders corrected (a later updated_at) and one new: a delta of three rows
    changed = {2: order(2, amount=200, second=50), 4: order(4, amount=400, second=51)}
    rows = [changed.get(r[0], r) for r in shop.orders] + [order(31, second=53)]
    shop.set_orders(rows)
    merged = shop.run("--only-stale", now=DAY.format(2))
    paid = by_model(merged)["paid"]
    assert paid["status"] == "rebuilt" and paid["path"] == "pushdown"
    assert paid["delta_rows"] == 3
    assert shop.totals() == expected_totals(rows)
    merged_paid = shop.wh.view("paid")
    assert [r[0] for r in merged_paid] == [r[0] for r in sorted(rows) if r[3] == "paid"]

    full = shop.run("--full-refresh", now=DAY.format(3))
    assert by_model(full)["paid"]["path"] == "full"
    assert shop.wh.view("paid") == merged_paid  # the merge built what a rebuild builds


# ------------------------------------------------------------------ backfill


def test_a_backfill_corrects_downstream_of_the_source_with_an_audited_reason(shop):
    first = shop.run()
    fixed = [order(i, amount=7) for i in range(1, ORDERS + 1)]
    shop.wh.create_table("orders_fixed", orders_select(fixed))

    entries = shop.wh.history_count()
    refused = shop.cli("backfill", "shop.strata", first["run_id"], "--source",
                       "orders=orders_fixed", ok=False)
    assert "error[E085]" in refused.stderr + refused.stdout
    assert shop.wh.history_count() == entries

    done = shop.js("backfill", "shop.strata", first["run_id"], "--source",
                   "orders=orders_fixed", "--reason", "amounts were cents", now=DAY.format(2))
    assert sorted(done["rebuilt"]) == ["paid", "totals"]
    assert shop.totals() == expected_totals(fixed)
    entry = shop.js("history")[0]
    assert entry["kind"] == "backfill" and entry["backfill_of"] == first["run_id"]
    assert entry["reason"] == "amounts were cents"
    assert shop.js("verify", first["run_id"])["ok"]  # the corrected run stays intact


# ------------------------------------------------------------------ rollback, branches


def test_rollback_then_verify_and_branches_are_isolated(shop):
    first = shop.run()
    # every amount corrected in place (updated_at kept): a merge would not see it (the
    # delivery note), so the correction is a full refresh
    shop.set_orders([order(i, amount=i * 2) for i in range(1, ORDERS + 1)])
    second = shop.run("--only-stale", "--full-refresh", now=DAY.format(2))
    assert shop.totals() == expected_totals(shop.orders)

    shop.cli("branch", "create", "dev", now=DAY.format(3))
    shop.cli("rollback", first["run_id"], now=DAY.format(4))
    assert shop.totals() == expected_totals([order(i) for i in range(1, ORDERS + 1)])
    assert shop.totals("dev") == expected_totals(shop.orders)  # dev kept the second run
    for run in (first, second):
        assert shop.js("verify", run["run_id"])["ok"]
    kinds = [e["kind"] for e in shop.js("history")]
    assert kinds == ["rollback", "branch", "run", "run"]


# ------------------------------------------------------------------ gc


def test_gc_keeps_what_views_read_and_the_last_runs_and_collects_the_rest(shop):
    reports = [shop.run()]
    for day in (2, 3):
        shop.set_orders([order(i, amount=i * day) for i in range(1, ORDERS + 1)])
        reports.append(shop.run("--full-refresh", now=DAY.format(day)))
    dry = shop.js("gc", "--older-than", "0d", "--keep-last", "1", "--dry-run",
                  now=DAY.format(9))
    assert shop.wh.history_count() == 3 and dry["collected"]

    shop.cli("gc", "--older-than", "0d", "--keep-last", "1", now=DAY.format(9))
    kept = snapshots(reports[-1])
    left = shop.wh.internal_tables()
    assert set(kept.values()) <= left
    for old in (reports[0], reports[1]):
        assert not {s for m, s in snapshots(old).items() if s not in kept.values()} & left
    assert shop.totals() == expected_totals(shop.orders)
    refused = shop.cli("rollback", reports[0]["run_id"], ok=False, now=DAY.format(9))
    assert "error[E076]" in refused.stderr + refused.stdout


# ------------------------------------------------------------------ crashes


def test_a_writer_killed_mid_build_leaves_the_views_and_the_next_run_cleans_up(shop):
    shop.run()
    before = shop.totals()
    # amounts corrected in place (updated_at kept): a full refresh, as a merge would not
    # see them (the delivery note)
    shop.set_orders([order(i, amount=i + 1000) for i in range(1, ORDERS + 1)])
    killed = shop.cli("run", "shop.strata", "--workers", "1", "--full-refresh", ok=False,
                      now=DAY.format(2), env={"STRATA_CRASH_AT": "after_model:paid"})
    assert killed.returncode == -9
    assert shop.totals() == before and shop.wh.history_count() == 1
    done = shop.run("--full-refresh", now=DAY.format(3))
    assert done["status"] == "published"
    assert shop.totals() == expected_totals(shop.orders)
    assert shop.wh.leftovers() == set()


def test_a_writer_killed_after_its_commit_point_is_finished_or_never_seen(shop):
    """Killed after the run's history entry was written: where publication is one
    transaction (DuckDB, PostgreSQL) that is after its commit, so every view already
    reads the new run; on Spark the views switch after the entry, and the next command
    that writes rolls the ones left behind forward before doing its own work."""
    shop.run()
    shop.set_orders([order(i, amount=i + 1000) for i in range(1, ORDERS + 1)])
    point = "after_view:paid" if shop.wh.engine == "spark" else "after_publish"
    killed = shop.cli("run", "shop.strata", "--workers", "1", "--full-refresh", ok=False,
                      now=DAY.format(2), env={"STRATA_CRASH_AT": point})
    assert killed.returncode == -9
    assert shop.wh.history_count() == 2
    shop.cli("branch", "create", "after", now=DAY.format(3))  # any writing command
    assert shop.totals() == expected_totals(shop.orders)
    assert shop.totals("after") == expected_totals(shop.orders)
    assert shop.wh.leftovers() == set()


# ------------------------------------------------------------------ merges by default

LOGS = """\
source events = file 'events.parquet' {
  id: int
  v: int
  ts: timestamp
}

source accounts = file 'accounts.parquet' {
  id: int
  balance: int
  updated_at: timestamp
}

model log {
  from events
  select id, v, ts
  incremental
  merge_strategy: append
  cdc_column: ts
}

model current {
  from accounts
  select id, balance, updated_at
  incremental
  merge_strategy: upsert
  merge_keys: [id]
  cdc_column: updated_at
}
"""


def write_rows(target: Path, columns: str, rows: list[tuple]) -> None:
    values = ", ".join(f"({a}, {b}, CAST('{c}' AS TIMESTAMP))" for a, b, c in rows)
    _copy(f"SELECT * FROM (VALUES {values}) AS t({columns}) ORDER BY 1", target)


def test_merges_by_default_keep_an_append_log_and_leave_a_silent_mutation_unseen(
        engine_wh, tmp_path):
    """Issue 33 on every engine, with no on_drift line: an append log whose source
    keeps only its recent rows keeps all it logged and reports nothing wrong; an
    upsert does not see a row mutated without moving its cdc column, and the run says
    it found drift and how to refresh."""
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "logs.strata").write_text(LOGS)
    events = [(i, i * 10, f"2026-01-01 {i:02d}:00:00") for i in range(10)]
    accounts = [(i, 100, f"2026-01-01 {i:02d}:00:00") for i in range(3)]
    write_rows(folder / "events.parquet", "id, v, ts", events)
    write_rows(folder / "accounts.parquet", "id, balance, updated_at", accounts)

    def run(day: int):
        proc = strata("run", "logs.strata", "-o", engine_wh.location, cwd=folder,
                      env={"STRATA_NOW": DAY.format(day)}, check=True, timeout=600)
        return proc.stdout

    run(1)
    write_rows(folder / "events.parquet", "id, v, ts",
               events[5:] + [(10, 100, "2026-01-02 00:00:00")])
    out = run(2)
    assert len(engine_wh.view("log")) == 11
    assert "warning" not in out and "drift" not in out, out
    assert "log: 5 logged row(s) are no longer in the source: kept" in out

    write_rows(folder / "accounts.parquet", "id, balance, updated_at",
               [(0, 100, accounts[0][2]), (1, 999, accounts[1][2]), (2, 100, accounts[2][2]),
                (3, 100, "2026-01-02 00:00:00")])  # account 1 changed, updated_at kept
    out = run(3)
    assert as_ints([r[:2] for r in engine_wh.view("current")]) == [
        (0, 100), (1, 100), (2, 100), (3, 100)]
    assert "current: warning: drift at or below the watermark" in out, out
    assert "--full-refresh --models current" in out
