"""`strata run` on PostgreSQL, from the CLI (issue 18 items 2-3): a warehouse in a
database of a real server (`-o postgresql://...`), the same runs as on DuckDB.

The project has a file source (PostgreSQL cannot read a file: the run reads it
locally and loads it once into a table named by its fingerprint), an incremental
upsert model with a cdc column (merged by a delta layer and a layered snapshot),
a pinned key and two models downstream. Each test runs `strata` as a subprocess and
reads the published views back through psycopg.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from decimal import Decimal
from pathlib import Path

import psycopg  # the `test` extra's client: missing, the suite fails, never skips
from enginehelpers import strata

SOURCES = """
source orders = file 'data/orders.csv' {
  id: int
  customer: text
  amount: decimal(12, 2)
  updated_at: timestamp
}
"""

MODELS = """
model clean_orders {
  from orders
  select id, customer, amount, updated_at
  incremental
  merge_strategy: upsert
  merge_keys: [id]
  cdc_column: updated_at
  pin unique [id]
  pin not_null [id, customer]
}

model by_customer {
  from clean_orders
  group customer
  aggregate orders = count(), total = sum(amount)
}

model big_customers {
  from by_customer
  filter total > 100
  select customer, total
}
"""

HEADER = "id,customer,amount,updated_at\n"
ROWS = ["1,ann,50.00,2024-01-01 10:00:00", "2,bob,80.00,2024-01-02 10:00:00",
        "3,ann,70.25,2024-01-03 10:00:00", "4,cid,10.00,2024-01-04 10:00:00"]


def _project(root: Path, rows: list[str]) -> Path:
    (root / "data").mkdir(parents=True, exist_ok=True)
    (root / "sources.strata").write_text(SOURCES)
    (root / "models.strata").write_text(MODELS)
    _write(root, rows)
    return root


def _write(root: Path, rows: list[str]) -> None:
    (root / "data" / "orders.csv").write_text(HEADER + "\n".join(rows) + "\n")


def _run(root: Path, url: str, *flags: str, check: bool | None = True) -> dict:
    done = strata("run", ".", "-o", url, "--json", *flags, cwd=root, check=check)
    return json.loads(done.stdout) if done.returncode == 0 else {"stderr": done.stderr}


def _view(url: str, model: str, branch: str = "main") -> list[tuple]:
    from strata.engine.locations import parse_location

    args = parse_location(url).connect_args()
    with psycopg.connect(**args, autocommit=True) as con:
        return sorted(tuple(r) for r in con.execute(
            f'SELECT * FROM "{branch}"."v_{model}"').fetchall())


def _models(report: dict) -> dict[str, dict]:
    return {m["model"]: m for m in report["models"]}


def test_a_run_on_postgresql_publishes_views_and_a_second_run_reuses_every_snapshot(
        pg_warehouse_url, tmp_path):
    root = _project(tmp_path / "p", ROWS)
    first = _run(root, pg_warehouse_url)
    assert first["status"] == "published"
    assert sorted(first["rebuilt"]) == ["big_customers", "by_customer", "clean_orders"]
    assert [(c, int(n), str(t)) for c, n, t in _view(pg_warehouse_url, "by_customer")] == [
        ("ann", 2, "120.25"), ("bob", 1, "80.00"), ("cid", 1, "10.00")]
    assert [(c, str(t)) for c, t in _view(pg_warehouse_url, "big_customers")] == [
        ("ann", "120.25")]

    second = _run(root, pg_warehouse_url)
    assert second["rebuilt"] == []  # same data, same code: every snapshot found again
    assert {m: r["snapshot"] for m, r in _models(second).items()} == \
        {m: r["snapshot"] for m, r in _models(first).items()}


def test_only_stale_after_a_source_change_merges_the_upsert_model_on_postgresql(
        pg_warehouse_url, tmp_path):
    root = _project(tmp_path / "p", ROWS)
    _run(root, pg_warehouse_url)
    # one order changed (a later updated_at) and one new: a delta of two rows
    _write(root, [*ROWS[:3], "4,cid,150.00,2024-01-05 10:00:00",
                  "5,dan,20.00,2024-01-06 10:00:00"])
    merged = _run(root, pg_warehouse_url, "--only-stale")
    clean = _models(merged)["clean_orders"]
    assert clean["status"] == "rebuilt"
    assert clean["path"] in ("pushdown", "full-then-filter") and clean["delta_rows"] == 2
    assert [(c, str(t)) for c, t in _view(pg_warehouse_url, "big_customers")] == [
        ("ann", "120.25"), ("cid", "150.00")]
    assert [r[0] for r in _view(pg_warehouse_url, "clean_orders")] == [1, 2, 3, 4, 5]

    again = _run(root, pg_warehouse_url, "--only-stale")
    assert again["status"] == "up_to_date"

    full = _run(root, pg_warehouse_url, "--full-refresh")
    assert _models(full)["clean_orders"]["path"] == "full"
    assert [r[0] for r in _view(pg_warehouse_url, "clean_orders")] == [1, 2, 3, 4, 5]


def test_a_failing_pin_on_postgresql_publishes_nothing(pg_warehouse_url, tmp_path):
    root = _project(tmp_path / "p", ROWS)
    _run(root, pg_warehouse_url)
    # id 5 twice, both past the watermark: the delta itself breaks the key (an id 4
    # past it would replace the old row 4 in the merge, as the delivery note says)
    _write(root, [*ROWS, "5,dup,1.00,2024-02-01 10:00:00", "5,dup,2.00,2024-02-02 10:00:00"])
    failed = strata("run", ".", "-o", pg_warehouse_url, cwd=root, check=False)
    assert "error[E06" in failed.stderr and "unique" in failed.stderr
    assert "Traceback" not in failed.stderr
    assert [r[0] for r in _view(pg_warehouse_url, "clean_orders")] == [1, 2, 3, 4]


def test_workers_build_on_their_own_postgresql_connections(pg_warehouse_url, tmp_path):
    root = _project(tmp_path / "p", ROWS)
    report = _run(root, pg_warehouse_url, "--workers", "3")
    assert report["status"] == "published"
    assert [(c, str(t)) for c, t in _view(pg_warehouse_url, "big_customers")] == [
        ("ann", "120.25")]


def test_the_shop_example_runs_on_postgresql_and_a_rerun_only_reuses(pg_warehouse_url,
                                                                       tmp_path):
    """Joins with fan-out checks, pins, a Parquet source with a list column, unions,
    merges of several incremental models: the bundled example, end to end."""
    import shutil

    shop = Path(__file__).resolve().parent.parent / "examples" / "shop"
    root = tmp_path / "shop"
    shutil.copytree(shop, root)
    first = _run(root, pg_warehouse_url)
    assert first["status"] == "published" and len(first["rebuilt"]) == len(first["models"])
    again = _run(root, pg_warehouse_url, "--only-stale")
    assert again["status"] == "up_to_date"
    rerun = _run(root, pg_warehouse_url, "--workers", "2")
    assert rerun["rebuilt"] == []


def test_a_run_killed_mid_build_on_postgresql_leaves_the_views_and_the_next_run_cleans_up(
        pg_warehouse_url, tmp_path):
    root = _project(tmp_path / "p", ROWS)
    _run(root, pg_warehouse_url)
    _write(root, [*ROWS, "5,dan,500.00,2024-02-01 10:00:00"])
    killed = strata("run", ".", "-o", pg_warehouse_url, cwd=root, check=False,
                    env={"STRATA_CRASH_AT": "after_model:by_customer"})
    assert killed.returncode != 0
    assert [(c, str(t)) for c, t in _view(pg_warehouse_url, "big_customers")] == [
        ("ann", "120.25")]
    done = _run(root, pg_warehouse_url)
    assert done["status"] == "published"
    assert [(c, str(t)) for c, t in _view(pg_warehouse_url, "big_customers")] == [
        ("ann", "120.25"), ("dan", "500.00")]
    from strata.engine.locations import parse_location

    args = parse_location(pg_warehouse_url).connect_args()
    with psycopg.connect(**args, autocommit=True) as con:
        tables = {r[0] for r in con.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = 'strata_internal'") if r[0].startswith("snap_")}
        registered = {r[0] for r in con.execute("SELECT name FROM strata_internal.snapshots")}
    assert tables <= registered  # the killed run's tables were dropped as leftovers


def test_a_view_switch_that_changes_column_types_on_postgresql(pg_warehouse_url, tmp_path):
    """PostgreSQL's CREATE OR REPLACE VIEW cannot change a column's type: the switch
    drops and re-creates the view in the publication's transaction. A view of the
    user's over the live view blocks that: E121, nothing published."""
    from strata.engine.locations import parse_location

    root = _project(tmp_path / "p", ROWS)
    _run(root, pg_warehouse_url)
    args = parse_location(pg_warehouse_url).connect_args()
    with psycopg.connect(**args, autocommit=True) as con:
        con.execute("CREATE TABLE narrow AS SELECT id::integer AS id, customer, amount, "
                    "updated_at FROM main.v_clean_orders")
        con.execute("INSERT INTO narrow VALUES (9, 'eve', 900.00, '2024-03-01 10:00:00')")
        con.execute("CREATE VIEW public.mine AS SELECT id FROM main.v_clean_orders")
    blocked = strata("run", ".", "-o", pg_warehouse_url, "--override", "orders=narrow",
                     cwd=root, check=False)
    assert "error[E121]" in blocked.stderr and "main.v_clean_orders" in blocked.stderr
    assert "view mine depends on view main.v_clean_orders" in blocked.stderr
    assert "Traceback" not in blocked.stderr
    assert [r[0] for r in _view(pg_warehouse_url, "clean_orders")] == [1, 2, 3, 4]

    with psycopg.connect(**args, autocommit=True) as con:
        con.execute("DROP VIEW public.mine")
    done = _run(root, pg_warehouse_url, "--override", "orders=narrow")
    assert done["status"] == "published"
    assert [r[0] for r in _view(pg_warehouse_url, "clean_orders")] == [1, 2, 3, 4, 9]
    with psycopg.connect(**args, autocommit=True) as con:
        assert con.execute("SELECT data_type FROM information_schema.columns WHERE "
                           "table_schema = 'main' AND table_name = 'v_clean_orders' AND "
                           "column_name = 'id'").fetchone() == ("integer",)


TEXT_CDC = """
source events = file 'data/events.csv' {
  id: int
  k: text
}

model event_log {
  from events
  select id, k
  incremental
  merge_strategy: append
  cdc_column: k
}
"""


def test_a_text_cdc_append_on_an_icu_database_takes_duckdbs_rows(postgres_engine, tmp_path):
    """Issue 35 item 8: on a database collated by ICU en-US ('a' < 'B' < 'b'), the
    watermark of ['B', 'a'] is 'a' by code point (DuckDB's) and 'b' is past it; by the
    database's collation the watermark would be 'B' and 'b' not past it. The merge
    appends 'b' and equals a full refresh."""
    database = postgres_engine.create_database(icu=True)
    url = postgres_engine.url(database)
    try:
        root = tmp_path / "p"
        (root / "data").mkdir(parents=True)
        (root / "models.strata").write_text(TEXT_CDC)
        (root / "data" / "events.csv").write_text("id,k\n1,B\n2,a\n")
        assert _run(root, url)["status"] == "published"
        (root / "data" / "events.csv").write_text("id,k\n1,B\n2,a\n3,b\n")
        merged = _models(_run(root, url, "--only-stale"))["event_log"]
        assert merged["path"] in ("pushdown", "full-then-filter") and merged["delta_rows"] == 1
        assert _view(url, "event_log") == [(1, "B"), (2, "a"), (3, "b")]
        _run(root, url, "--full-refresh")
        assert _view(url, "event_log") == [(1, "B"), (2, "a"), (3, "b")]
    finally:
        postgres_engine.drop_database(database)


FUNCTION_MODELS = """
model ratios {
  from clean_orders
  select id, round(cast(amount as double) / id, 2) as per_id,
         round(round(cast(amount as double) / 3, 2) / id, 1) as nested
}

model ratios_again {
  from clean_orders
  select id, round(cast(amount as double) / (id + 1), 2) as per_next
}

model ratios_sorted {
  from ratios
  select id, round(per_id / 7, 2) as seventh
}
"""


TABLE_UPSERT = """
source orders = public.orders {
  id: int
  amount: decimal(12, 2)
  updated_at: timestamp
}

model merged {
  from orders
  select id, amount, updated_at
  incremental
  merge_strategy: upsert
  merge_keys: [id]
  cdc_column: updated_at
  on_drift: recompute
}
"""


def _functions(url: str) -> list[str]:
    from strata.engine.locations import parse_location

    with psycopg.connect(**parse_location(url).connect_args(), autocommit=True) as con:
        return sorted(r[0] for r in con.execute(
            "SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
            " WHERE n.nspname = 'strata_internal'").fetchall())


def test_functions_strata_owns_are_created_by_the_run_that_calls_them(pg_warehouse_url,
                                                                      tmp_path):
    """issue 34: `round` of a double is a function of Strata's on PostgreSQL. Three
    models call them from two build lanes at once; the functions `compile --show-sql`
    prints are the ones the warehouse holds, and the rows are DuckDB's."""
    root = _project(tmp_path / "p", ROWS)
    (root / "ratios.strata").write_text(FUNCTION_MODELS)
    shown = strata("compile", ".", "--show-sql", "--dialect", "postgres", cwd=root).stdout
    printed = sorted(set(re.findall(r"strata_internal\.(strata_\w+_[0-9a-f]{10})\(", shown)))
    assert printed and shown.count("CREATE OR REPLACE FUNCTION") == len(printed)

    report = _run(root, pg_warehouse_url, "--workers", "2")
    assert report["status"] == "published"
    assert _functions(pg_warehouse_url) == [n for n in printed
                                            if f"FUNCTION strata_internal.{n}(" in shown]
    duck = _run(root, str(tmp_path / "w.duckdb"))
    assert duck["status"] == "published"
    import duckdb

    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        for model in ("ratios", "ratios_again", "ratios_sorted"):
            want = sorted(con.execute(f"SELECT * FROM main.v_{model}").fetchall())
            assert _view(pg_warehouse_url, model) == want, model

    # a new process, the functions there already: a full rebuild declares them again
    again = _run(root, pg_warehouse_url, "--full-refresh")
    assert again["status"] == "published"
    assert len(_functions(pg_warehouse_url)) == len(printed)


def test_a_passthrough_upserts_drift_check_reads_no_settled_row_on_postgresql(
        pg_warehouse_url, tmp_path, monkeypatch):
    """A model passing its source table's columns through, unfiltered: its rows at or
    below the watermark are the source's less the delta layer's, so their hash is the
    fingerprint's less the layer's, with no scan of the settled rows (at 1e6 rows as
    long as the fingerprint itself); a row changed there is still found."""
    from strata.engine.adapters.postgres import PostgresAdapter
    from strata.engine.locations import parse_location
    from strata.engine.run import RunOptions, execute
    from strata.engine.warehouse import Warehouse
    from strata.semantics.resolve import load_module

    sent: list[str] = []
    real = PostgresAdapter.rows

    def rows(self, tree, *args, **kwargs):
        sent.append(self.render(tree))
        return real(self, tree, *args, **kwargs)

    monkeypatch.setattr(PostgresAdapter, "rows", rows)
    with psycopg.connect(**parse_location(pg_warehouse_url).connect_args(),
                         autocommit=True) as con:
        con.execute("CREATE TABLE public.orders AS SELECT i::bigint AS id, "
                    "(i * 1.5)::numeric(12, 2) AS amount, TIMESTAMP '2024-01-01' + "
                    "i * INTERVAL '1 hour' AS updated_at FROM generate_series(1, 100) i")
        (tmp_path / "m.strata").write_text(TABLE_UPSERT)
        module = load_module(tmp_path / "m.strata")
        assert module.ok, module.diagnostics

        def run() -> dict:
            sent.clear()
            wh = Warehouse.open(pg_warehouse_url)
            try:
                report = execute(module, wh, RunOptions(only_stale=True))
            finally:
                wh.close()
            return {r.model: r for r in report.results}["merged"]

        assert run().path == "full"
        con.execute("UPDATE public.orders SET amount = amount + 1, updated_at = "
                    "TIMESTAMP '2025-01-01' WHERE id % 10 = 0")
        merged = run()
        assert merged.path == "pushdown" and merged.delta_rows == 10 and not merged.drift
        settled = [s for s in sent if "NOT COALESCE" in s]
        assert settled == [], settled
        assert sorted(_view(pg_warehouse_url, "merged"))[9] == (10, Decimal("16.00"),
                                                                 dt.datetime(2025, 1, 1))

        con.execute("UPDATE public.orders SET amount = 0 WHERE id = 1")  # below it
        con.execute("UPDATE public.orders SET updated_at = TIMESTAMP '2025-01-02' "
                    "WHERE id = 2")
        recomputed = run()
        assert recomputed.drift and recomputed.path == "full", recomputed.notes
        assert min(_view(pg_warehouse_url, "merged"))[1] == Decimal("0.00")
