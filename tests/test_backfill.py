"""`strata backfill` end to end: a real DuckDB file and the real CLI, each call its own
process (forked from enginehelpers' server; STRATA_TEST_CLI=script runs the script).

    orders    -> clean_orders -> order_totals (joins customers)
    orders    -> latest_orders (incremental upsert on updated_at)
    products  -> product_names -> product_count        (independent subgraph)
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest
from enginehelpers import strata

MODULE = """\
source orders {
  id: int
  customer_id: int
  amount: decimal(12, 2)
  updated_at: timestamp
}
source customers {
  id: int
  region: text
}
source products {
  id: int
  name: text
}
model clean_orders {
  from orders
  filter amount >= 0
  select id, customer_id, amount, updated_at
  pin unique [id]
}
model order_totals {
  from clean_orders
  join customers on customer_id = customers.id
  group region
  aggregate total = sum(amount), n = count()
}
model latest_orders {
  from orders
  incremental
  merge_strategy: upsert
  merge_keys: [id]
  cdc_column: updated_at
}
model product_names {
  from products
  derive upper_name = upper(name)
}
model product_count {
  from product_names
  aggregate n = count()
}
"""
ORDERS = [(1, 10, "5.00", "2024-01-01 00:00:00"), (2, 11, "7.00", "2024-01-02 00:00:00"),
          (3, 10, "9.00", "2024-01-03 00:00:00")]
ORDER_MODELS = {"clean_orders", "order_totals", "latest_orders"}
PRODUCT_MODELS = {"product_names", "product_count"}


def _orders(con, name: str, rows, extra_columns: str = "") -> None:
    values = ", ".join(f"({i}, {c}, {a}, TIMESTAMP '{t}')" for i, c, a, t in rows)
    con.execute(f"CREATE OR REPLACE TABLE {name} (id INTEGER, customer_id INTEGER, "
                f"amount DECIMAL(12, 2), updated_at TIMESTAMP{extra_columns})")
    if rows:
        con.execute(f"INSERT INTO {name} (id, customer_id, amount, updated_at) "
                    f"VALUES {values}")


class Project:
    def __init__(self, root: Path):
        self.root = root
        self.module = root / "shop.strata"
        self.module.write_text(MODULE)
        self.wh = root / "w.duckdb"
        with self.con() as con:
            _orders(con, "orders", ORDERS)
            con.execute("CREATE TABLE customers AS SELECT * FROM (VALUES (10, 'eu'), "
                        "(11, 'us')) t(id, region)")
            con.execute("CREATE TABLE products AS SELECT * FROM (VALUES (1, 'tea'), "
                        "(2, 'mug')) t(id, name)")

    def con(self, read_only: bool = False):
        return duckdb.connect(str(self.wh), read_only=read_only)

    def sql(self, statement: str) -> None:
        with self.con() as con:
            con.execute(statement)

    def orders(self, name: str, rows, extra_columns: str = "") -> None:
        with self.con() as con:
            _orders(con, name, rows, extra_columns)

    def cli(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess:
        proc = strata(*args, cwd=self.root)
        if ok:
            assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc

    def run(self, *args: str) -> dict:
        return json.loads(self.cli("run", "shop.strata", "-o", "w.duckdb", "--json",
                                   *args).stdout)

    def backfill(self, run_id: str, *args: str, ok: bool = True):
        proc = self.cli("backfill", "shop.strata", run_id, "-o", "w.duckdb", "--json", *args,
                        ok=ok)
        return json.loads(proc.stdout) if ok else proc

    def history(self) -> list[dict]:
        return json.loads(self.cli("history", "-o", "w.duckdb", "--json").stdout)

    def rows(self, model: str, order: str = "1") -> list[tuple]:
        with self.con(read_only=True) as con:
            return con.execute(f"SELECT * FROM main.v_{model} ORDER BY {order}").fetchall()

    def state(self) -> dict:
        """Everything a backfill could write: objects (with view SQL), history, registry."""
        with self.con(read_only=True) as con:
            tables = con.execute("SELECT schema_name, table_name FROM duckdb_tables() "
                                 "ORDER BY ALL").fetchall()
            views = con.execute("SELECT schema_name, view_name, sql FROM duckdb_views() "
                                "WHERE NOT internal ORDER BY ALL").fetchall()
            # a failed backfill appends only its `failed` record (test_failed_runs.py)
            history = con.execute("SELECT * FROM strata_internal.history "
                                  "WHERE kind <> 'failed' ORDER BY seq").fetchall()
            registry = con.execute("SELECT * FROM strata_internal.snapshots ORDER BY name"
                                   ).fetchall()
        return {"tables": tables, "views": views, "history": history, "registry": registry}

    def internal_tables(self) -> set[str]:
        with self.con(read_only=True) as con:
            return {r[0] for r in con.execute(
                "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'strata_internal' "
                "UNION ALL SELECT view_name FROM duckdb_views() "
                "WHERE schema_name = 'strata_internal'").fetchall()}


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def _fixed(project: Project) -> None:
    """orders_fixed: order 1 really was 50.00 (same updated_at: an old row corrected)."""
    project.orders("orders_fixed", [(1, 10, "50.00", "2024-01-01 00:00:00"), *ORDERS[1:]])


REASON = "corrected upstream extract"


# ------------------------------------------------------------------ what is rebuilt
def test_correction_flows_only_downstream_of_the_corrected_source(project: Project):
    run = project.run()
    before = {e["id"]: e for e in project.history()}[run["run_id"]]
    _fixed(project)

    out = project.backfill(run["run_id"], "--source", "orders=orders_fixed", "--reason", REASON)

    assert out["status"] == "published"
    assert set(out["rebuilt"]) == ORDER_MODELS
    assert set(out["reused"]) == PRODUCT_MODELS
    entry = project.history()[0]
    assert entry["id"] == out["run_id"] != run["run_id"]
    for model in PRODUCT_MODELS:  # the independent subgraph keeps the run's snapshots
        assert entry["snapshots"][model] == before["snapshots"][model]
    for model in ORDER_MODELS:
        assert entry["snapshots"][model] != before["snapshots"][model]
    assert project.rows("order_totals") == [("eu", 59, 2), ("us", 7, 1)]
    assert project.rows("latest_orders")[0][2] == 50
    # the corrected run's entry is untouched
    assert {e["id"]: e for e in project.history()}[run["run_id"]] == before


def test_a_backfill_in_build_lanes_is_the_one_built_one_model_at_a_time(tmp_path: Path):
    """`backfill --workers N` (default 4) builds like `run`: same id, snapshots, rows."""
    outcomes = []
    for workers in ("1", "4"):
        (tmp_path / workers).mkdir()
        project = Project(tmp_path / workers)
        run = project.run("--workers", "1")
        _fixed(project)
        out = project.backfill(run["run_id"], "--source", "orders=orders_fixed",
                               "--reason", REASON, "--workers", workers)
        outcomes.append((out["run_id"], {m["model"]: (m["status"], m["snapshot"], m["rows"])
                                         for m in out["models"]},
                         project.rows("order_totals"), project.rows("latest_orders")))
    assert outcomes[0] == outcomes[1]


def test_models_trims_the_selection_and_leaves_other_views_alone(project: Project):
    run = project.run()
    latest_view = project.state()["views"]
    _fixed(project)

    out = project.backfill(run["run_id"], "--source", "orders=orders_fixed", "--models",
                           "order_totals", "--reason", REASON)

    assert set(out["rebuilt"]) == {"clean_orders", "order_totals"}
    entry = project.history()[0]
    assert entry["models"] == ["order_totals"]
    assert set(entry["snapshots"]) == {"clean_orders", "order_totals"}
    views = {(s, v): sql for s, v, sql in project.state()["views"]}
    assert views[("main", "v_latest_orders")] == {
        (s, v): sql for s, v, sql in latest_view}[("main", "v_latest_orders")]
    assert project.rows("latest_orders")[0][2] == 5


def test_source_wins_over_the_runs_override_and_the_rest_is_kept(project: Project):
    project.sql("CREATE TABLE products_v2 AS SELECT * FROM products UNION ALL "
                "SELECT 3, 'pot'")
    run = project.run("--override", "products=products_v2")
    _fixed(project)
    project.orders("orders_v2", [])  # a table the correction replaces

    out = project.backfill(run["run_id"], "--source", "orders=orders_fixed", "--reason", REASON)

    entry = project.history()[0]
    assert entry["overrides"] == {"products": "products_v2", "orders": "orders_fixed"}
    assert set(out["reused"]) == PRODUCT_MODELS
    assert project.rows("product_count") == [(3,)]
    # and --source beats the run's own override for the same source
    out = project.backfill(run["run_id"], "--source", "products=products", "--reason", REASON)
    assert set(out["rebuilt"]) == PRODUCT_MODELS
    assert project.rows("product_count") == [(2,)]
    assert project.history()[0]["overrides"]["products"] == "products"


def test_a_correction_with_the_same_content_has_nothing_to_correct(project: Project):
    run = project.run()
    project.orders("orders_copy", ORDERS)
    before = project.state()

    proc = project.cli("backfill", "shop.strata", run["run_id"], "--source",
                       "orders=orders_copy", "--reason", REASON, "-o", "w.duckdb")

    assert "nothing to correct" in proc.stdout
    assert project.state() == before


def test_a_source_that_moved_without_being_named_stays_at_its_run_time_version(project):
    run = project.run()
    _fixed(project)
    project.sql("INSERT INTO products VALUES (3, 'pot')")  # moved on since the run

    out = project.backfill(run["run_id"], "--source", "orders=orders_fixed", "--reason", REASON)

    assert set(out["reused"]) == PRODUCT_MODELS
    assert project.rows("product_count") == [(2,)]
    assert any("`products` changed since run" in n for n in out["notes"])
    entry = project.history()[0]
    assert entry["source_fingerprints"]["products"] == run_entry(project, run)[
        "source_fingerprints"]["products"]
    # so --only-stale still knows the product models are behind the data
    stale = project.run("--only-stale")
    assert set(stale["rebuilt"]) == PRODUCT_MODELS
    assert project.rows("product_count") == [(3,)]


def run_entry(project: Project, run: dict) -> dict:
    return next(e for e in project.history() if e["id"] == run["run_id"])


# ------------------------------------------------------------------ history, replay
def test_history_and_replay_show_backfill_of_and_reason(project: Project):
    run = project.run()
    _fixed(project)
    out = project.backfill(run["run_id"], "--source", "orders=orders_fixed", "--reason", REASON)

    entry = project.history()[0]
    assert (entry["kind"], entry["backfill_of"], entry["reason"]) == (
        "backfill", run["run_id"], REASON)
    replay = json.loads(project.cli("replay", out["run_id"], "-o", "w.duckdb",
                                    "--json").stdout)
    assert (replay["kind"], replay["backfill_of"], replay["reason"]) == (
        "backfill", run["run_id"], REASON)
    text = project.cli("replay", out["run_id"], "-o", "w.duckdb").stdout
    assert f"backfill_of: {run['run_id']}" in text and f"reason: {REASON}" in text
    listing = project.cli("history", "-o", "w.duckdb").stdout
    assert f"backfill_of={run['run_id']}" in listing and REASON in listing
    executed = json.loads(project.cli("replay", out["run_id"], "-o", "w.duckdb", "--execute",
                                      "--json").stdout)
    assert executed["replay"]["ok"]


def test_rollback_to_the_corrected_run_restores_it_and_both_verify(project: Project):
    run = project.run()
    original = project.rows("order_totals")
    _fixed(project)
    out = project.backfill(run["run_id"], "--source", "orders=orders_fixed", "--reason", REASON)
    corrected = project.rows("order_totals")
    assert corrected != original

    project.cli("rollback", run["run_id"], "-o", "w.duckdb")
    assert project.rows("order_totals") == original
    assert project.rows("latest_orders")[0][2] == 5
    for rid in (run["run_id"], out["run_id"]):
        project.cli("verify", rid, "-o", "w.duckdb")
    project.cli("rollback", out["run_id"], "-o", "w.duckdb")
    assert project.rows("order_totals") == corrected


# ------------------------------------------------------------------ idempotence
def test_the_same_backfill_twice_has_the_same_id_and_writes_nothing(project: Project):
    run = project.run()
    _fixed(project)
    first = project.backfill(run["run_id"], "--source", "orders=orders_fixed", "--reason", REASON)
    state = project.state()

    second = project.backfill(run["run_id"], "--source", "orders=orders_fixed", "--reason",
                              REASON)
    text = project.cli("backfill", "shop.strata", run["run_id"], "--source",
                       "orders=orders_fixed", "--reason", REASON, "-o", "w.duckdb").stdout

    assert second["run_id"] == first["run_id"]
    assert second["status"] == "up_to_date" and second["rebuilt"] == []
    assert "already published" in text and first["run_id"] in text
    assert project.state() == state


def test_the_same_backfill_after_a_rollback_publishes_again_without_new_tables(project):
    run = project.run()
    _fixed(project)
    first = project.backfill(run["run_id"], "--source", "orders=orders_fixed", "--reason", REASON)
    project.cli("rollback", run["run_id"], "-o", "w.duckdb")
    tables = project.internal_tables()

    again = project.backfill(run["run_id"], "--source", "orders=orders_fixed", "--reason",
                             REASON)

    assert again["run_id"] == first["run_id"] and again["status"] == "published"
    assert project.internal_tables() == tables
    assert project.history()[0]["snapshots"] == next(
        e for e in project.history()[1:] if e["id"] == first["run_id"])["snapshots"]
    assert project.rows("latest_orders")[0][2] == 50


# ------------------------------------------------------------------ incremental
def test_an_upsert_model_picks_up_corrected_old_rows(project: Project):
    project.run()
    project.sql("INSERT INTO orders VALUES (4, 11, 3.00, TIMESTAMP '2024-01-04')")
    merged = project.run()
    assert project.history()[0]["details"]["latest_orders"]["path"].startswith("pushdown")
    # the extract was wrong for order 1; its updated_at did not move
    project.sql("CREATE TABLE orders_fixed AS SELECT id, customer_id, CASE WHEN id = 1 "
                "THEN 50.00 ELSE amount END AS amount, updated_at FROM orders")
    # corrected in place, the watermark hides the old row: a plain incremental run
    # detects the drift (issue 17) and, by default, says so and keeps the merge (issue
    # 33: a merge does not see rows changed below the watermark); a backfill, pointed
    # at orders_fixed, computes in full (another relation)
    shutil.copy(project.wh, project.root / "plain.duckdb")
    with duckdb.connect(str(project.root / "plain.duckdb")) as con:
        con.execute("UPDATE orders SET amount = 50.00 WHERE id = 1")
    plain = json.loads(project.cli("run", "shop.strata", "-o", "plain.duckdb", "--json").stdout)
    drift = next(m for m in plain["models"] if m["model"] == "latest_orders")["drift"]
    assert drift["action"] == "warn"
    with duckdb.connect(str(project.root / "plain.duckdb"), read_only=True) as con:
        assert con.execute("SELECT amount FROM main.v_latest_orders WHERE id = 1"
                           ).fetchone()[0] == 5

    out = project.backfill(merged["run_id"], "--source", "orders=orders_fixed", "--reason",
                           REASON)

    assert "latest_orders" in out["rebuilt"]
    latest = next(m for m in out["models"] if m["model"] == "latest_orders")
    assert latest["path"] == "full"
    assert any("computed in full" in n for n in latest["notes"])
    assert [r[2] for r in project.rows("latest_orders")] == [50, 7, 9, 3]


# ------------------------------------------------------------------ E085
E085_CASES = {
    "no reason": (["--source", "orders=orders_fixed"], "without a reason"),
    "blank reason": (["--source", "orders=orders_fixed", "--reason", "   "], "without a reason"),
    "no source": (["--reason", REASON], "names no corrected source"),
    "unknown run": (["--source", "orders=orders_fixed", "--reason", REASON, "@run=feedbeef0000"],
                    "unknown run id `feedbeef0000`"),
    "stage-only run": (["--source", "orders=orders_fixed", "--reason", REASON, "@run=stage"],
                       "staged only"),
    "unknown model": (["--source", "orders=orders_fixed", "--models", "order_total",
                       "--reason", REASON], "unknown model `order_total`"),
    "model not in the run": (["--source", "products=products", "--models", "product_count",
                              "--reason", REASON, "@run=partial"],
                             "model `product_count` was not built by run"),
    "source without =": (["--source", "orders", "--reason", REASON], "malformed --source"),
    "empty table": (["--source", "orders=", "--reason", REASON], "malformed --source"),
    "empty source": (["--source", "=orders_fixed", "--reason", REASON], "malformed --source"),
    # a source's name may hold `=` (issue 39 item 18): split at the last `=` that leaves
    # a known source, this is `orders` pointed at a table `a=b`, which does not exist
    "several =": (["--source", "orders=a=b", "--reason", REASON],
                  "table `a=b` does not exist"),
    "unclosed backtick": (["--source", "`orders=a", "--reason", REASON],
                          "malformed --source"),
    "unknown source": (["--source", "ordrs=orders_fixed", "--reason", REASON],
                       "unknown source `ordrs`"),
    "source not read": (["--source", "orders=orders_fixed", "--models", "product_count",
                         "--reason", REASON], "no model of the backfill reads it"),
    "missing table": (["--source", "orders=orders_fixd", "--reason", REASON],
                      "table `orders_fixd` does not exist"),
    "missing column": (["--source", "orders=orders_nocol", "--reason", REASON],
                       "column `amount` is missing"),
    "mistyped column": (["--source", "orders=orders_badtype", "--reason", REASON],
                        "column `customer_id` is VARCHAR"),
    "pin violation": (["--source", "orders=orders_dupes", "--reason", REASON],
                      "pin unique [id] violated"),
    "join cardinality": (["--source", "customers=customers_dupes", "--reason", REASON],
                         "order_totals"),
}


@pytest.fixture(scope="module")
def e085_template(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """One warehouse for every E085 case (copied per case): a partial run, a full run,
    a stage-only run, and the corrected tables, good and bad."""
    project = Project(tmp_path_factory.mktemp("e085"))
    partial = project.run("--models", "order_totals")["run_id"]
    run = project.run()["run_id"]
    _fixed(project)
    project.sql("CREATE TABLE orders_nocol AS SELECT id, customer_id, updated_at FROM orders")
    project.sql("CREATE TABLE orders_badtype AS SELECT id, customer_id::TEXT AS customer_id, "
                "amount, updated_at FROM orders")
    project.sql("CREATE TABLE orders_dupes AS SELECT * FROM orders UNION ALL "
                "SELECT 1, 11, 2.00, TIMESTAMP '2024-02-01'")
    project.sql("CREATE TABLE customers_dupes AS SELECT * FROM customers UNION ALL "
                "SELECT 10, 'apac'")
    stage = json.loads(project.cli("run", "shop.strata", "-o", "w.duckdb", "--stage-only",
                                   "--json", "--models", "product_names").stdout)["run_id"]
    return project.root, {"@run=feedbeef0000": "feedbeef0000", "@run=stage": stage,
                          "@run=partial": partial, "run": run}


@pytest.mark.parametrize("case", list(E085_CASES))
def test_every_e085_case_leaves_the_warehouse_as_it_was(e085_template, tmp_path: Path,
                                                        case: str):
    template, ids = e085_template
    root = tmp_path / "p"
    shutil.copytree(template, root)
    project = Project.__new__(Project)
    project.root, project.module, project.wh = root, root / "shop.strata", root / "w.duckdb"
    args, message = E085_CASES[case]
    rid = next((ids[a] for a in args if a in ids), ids["run"])
    args = [a for a in args if a not in ids]
    before = project.state()

    proc = project.cli("backfill", "shop.strata", rid, "-o", "w.duckdb", *args, ok=False)

    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "error[E085]" in proc.stderr and message in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert project.state() == before
    if case in ("unknown run", "pin violation", "missing column"):
        as_json = project.cli("backfill", "shop.strata", rid, "-o", "w.duckdb", "--json",
                              *args, ok=False)
        assert as_json.returncode == 1
        assert [d["code"] for d in json.loads(as_json.stdout)["error"]] == ["E085"]
        assert project.state() == before


def test_an_unknown_run_on_a_missing_warehouse_creates_nothing(project: Project):
    proc = project.cli("backfill", "shop.strata", "feedbeef0000", "-o", "nowhere.duckdb",
                       "--source", "orders=orders", "--reason", REASON, ok=False)
    assert proc.returncode == 1 and "error[E085]" in proc.stderr
    assert not (project.root / "nowhere.duckdb").exists()


def test_an_unknown_run_on_a_bare_duckdb_file_leaves_it_bare(project: Project):
    bare = project.root / "bare.duckdb"
    duckdb.connect(str(bare)).close()
    proc = project.cli("backfill", "shop.strata", "feedbeef0000", "-o", "bare.duckdb",
                       "--source", "orders=orders", "--reason", REASON, ok=False)
    assert proc.returncode == 1 and "error[E085]" in proc.stderr
    with duckdb.connect(str(bare), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM duckdb_schemas() "
                           "WHERE schema_name = 'strata_internal'").fetchone() == (0,)
