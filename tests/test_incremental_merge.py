"""Incremental merge at run time (SPEC §3.5, the delivery note's "Merge por fila").

Real DuckDB warehouse files; the real `strata` CLI in a subprocess where the command
line is what is being tested (--full-refresh, --json, the progress display, verify,
rollback), the library `run()` elsewhere (the same code path, faster). Pushdown is
checked on the SQL that actually ran: every run reports, per model, the statement
that computed its new rows (`sql` in `run --json`).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
import sqlglot
from sqlglot import exp

from strata.engine import history as H
from strata.engine.fingerprints import row_hash
from strata.engine.handle import internal
from strata.engine.incremental import read_watermark
from strata.engine.run import RunOptions, RunReport, run
from strata.engine.warehouse import Warehouse
from strata.semantics.resolve import load_module
from strata.sqlgen.literals import _lit, lit

STRATA = str(Path(sys.executable).parent / "strata")

ORDERS = """
source orders {
  id: int
  amount: double
  status: text
  updated_at: timestamp
}
"""


# merge mechanics over sources a full refresh would not equal (logs, rows changed in
# place without moving the cdc column): drift detection is tested in test_drift.py
UNCHECKED = "on_drift: ignore"


# ---------------------------------------------------------------- helpers
def write_module(tmp_path: Path, text: str, name: str = "m.strata") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def upsert_model(name: str = "up", keys: str = "id", extra: str = "",
                 select: str = "id, amount, status, updated_at", steps: str = "") -> str:
    return f"""
model {name} {{
  from orders
  {steps}
  select {select}
  incremental
  merge_strategy: upsert
  merge_keys: [{keys}]
  cdc_column: updated_at
  {extra}
}}
"""


def sql(wh: Path, *statements: str, params=None):
    """Run statements on the warehouse file (closed again before strata opens it);
    returns the rows of the last one."""
    con = duckdb.connect(str(wh))
    try:
        rows = None
        for statement in statements:
            cur = con.execute(statement, params or [])
            rows = cur.fetchall() if cur.description else None
        return rows
    finally:
        con.close()


def make_orders(wh: Path, rows: list[tuple]) -> None:
    sql(wh, "CREATE OR REPLACE TABLE orders (id BIGINT, amount DOUBLE, status VARCHAR, "
            "updated_at TIMESTAMP)")
    insert(wh, rows)


def insert(wh: Path, rows: list[tuple], table: str = "orders") -> None:
    con = duckdb.connect(str(wh))
    try:
        marks = ", ".join("?" * len(rows[0]))
        con.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)
    finally:
        con.close()


def ts(day: int, second: int = 0) -> dt.datetime:
    return dt.datetime(2024, 1, day, 0, 0, second)


def run_lib(module: Path, wh: Path, **kw) -> RunReport:
    return run(load_module(module), str(wh), RunOptions(**kw))


def cli(*args: str, env: dict | None = None, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([STRATA, *args], capture_output=True, text=True, check=False,
                          env={**os.environ, **(env or {})}, timeout=120)
    if check and proc.returncode != 0:
        raise AssertionError(f"strata {' '.join(args)} exited {proc.returncode}:\n"
                             f"{proc.stdout}\n{proc.stderr}")
    return proc


def run_cli(module: Path, wh: Path, *extra: str) -> dict:
    return json.loads(cli("run", str(module), "-o", str(wh), "--json", *extra).stdout)


def model_json(report: dict, model: str) -> dict:
    return next(m for m in report["models"] if m["model"] == model)


def result(report: RunReport, model: str):
    return next(r for r in report.results if r.model == model)


def view(wh: Path, model: str, order: str = "id", branch: str = "main") -> list[tuple]:
    return sql(wh, f"SELECT * FROM {branch}.v_{model} ORDER BY {order} NULLS FIRST")


def record(wh: Path, name: str) -> H.SnapshotRecord:
    w = Warehouse.open(str(wh), read_only=True, create=False)
    try:
        return H.snapshot(w, name)
    finally:
        w.close()


def full_recompute(tmp_path: Path, module: Path, wh: Path, model: str,
                   order: str = "id") -> list[tuple]:
    """The same model computed from scratch in another warehouse over the same sources."""
    other = tmp_path / f"full_{model}.duckdb"
    other.unlink(missing_ok=True)
    sources = [r[0] for r in sql(wh, "SELECT table_name FROM duckdb_tables() "
                                     "WHERE schema_name = 'main'")]
    con = duckdb.connect(str(other))
    try:
        con.execute(f"ATTACH '{wh}' AS src (READ_ONLY)")
        for name in sources:
            con.execute(f"CREATE TABLE main.{name} AS SELECT * FROM src.main.{name}")
    finally:
        con.close()
    run_lib(module, other, models=[model])
    return view(other, model, order)


def executed(report_sql: str) -> exp.Expression:
    return sqlglot.parse_one(report_sql, read="duckdb")


def ctes(tree: exp.Expression) -> dict[str, exp.Expression]:
    with_ = tree.args.get("with_")
    return {c.alias: c.this for c in with_.expressions} if with_ else {}


def table_names(tree: exp.Expression) -> set[str]:
    return {t.name for t in tree.find_all(exp.Table)} | set(ctes(tree))


# ---------------------------------------------------------------- upsert
class TestUpsert:
    def test_new_and_updated_rows(self, tmp_path):
        wh = tmp_path / "w.duckdb"
        module = write_module(tmp_path, ORDERS + upsert_model())
        make_orders(wh, [(1, 10.0, "a", ts(1)), (2, 20.0, "b", ts(2))])
        first = run_lib(module, wh)
        assert result(first, "up").path == "full"
        assert "first run: computed in full" in result(first, "up").notes

        sql(wh, f"UPDATE orders SET amount = 11, updated_at = '{ts(3)}' WHERE id = 1")
        insert(wh, [(3, 30.0, "c", ts(3))])
        second = run_lib(module, wh)
        up = result(second, "up")
        assert (up.status, up.path, up.delta_rows, up.rows) == ("rebuilt", "pushdown", 2, 3)
        assert view(wh, "up") == [(1, 11.0, "a", ts(3)), (2, 20.0, "b", ts(2)),
                                  (3, 30.0, "c", ts(3))]
        assert view(wh, "up") == full_recompute(tmp_path, module, wh, "up")

    def test_null_key_delta_row_replaces_null_key_previous_row(self, tmp_path):
        wh = tmp_path / "w.duckdb"
        module = write_module(tmp_path, ORDERS + upsert_model())
        make_orders(wh, [(None, 1.0, "old null", ts(1)), (1, 10.0, "a", ts(1))])
        run_lib(module, wh)
        # the source's NULL-key row is updated: null-safe equality replaces it
        sql(wh, f"UPDATE orders SET amount = 2, status = 'new null', updated_at = '{ts(2)}' "
                "WHERE id IS NULL")
        report = run_lib(module, wh)
        assert result(report, "up").delta_rows == 1
        assert view(wh, "up") == [(None, 2.0, "new null", ts(2)), (1, 10.0, "a", ts(1))]

    def test_null_part_of_a_composite_key(self, tmp_path):
        wh = tmp_path / "w.duckdb"
        # the source is a log (old rows stay): a full refresh would keep every row, so
        # drift detection (tests/test_drift.py) is off for the mechanics tested here
        module = write_module(tmp_path, ORDERS + upsert_model(keys="id, status",
                                                              extra=UNCHECKED))
        make_orders(wh, [(1, 1.0, None, ts(1)), (1, 2.0, "x", ts(1)), (None, 3.0, None, ts(1))])
        run_lib(module, wh)
        insert(wh, [(1, 10.0, None, ts(2)), (None, 30.0, None, ts(2)), (None, 40.0, "y", ts(2))])
        run_lib(module, wh)
        # (1, NULL) and (NULL, NULL) replaced; (1, 'x') kept; (NULL, 'y') new
        assert sorted(view(wh, "up"), key=str) == sorted([
            (1, 10.0, None, ts(2)), (1, 2.0, "x", ts(1)), (None, 30.0, None, ts(2)),
            (None, 40.0, "y", ts(2))], key=str)

    def test_a_delta_with_duplicate_keys_keeps_both_and_replaces_the_previous(self, tmp_path):
        """Without a unique pin nothing dedupes: the delta enters whole (SPEC §3.5)."""
        wh = tmp_path / "w.duckdb"
        module = write_module(tmp_path, ORDERS + upsert_model(extra=UNCHECKED))
        make_orders(wh, [(1, 1.0, "a", ts(1)), (2, 2.0, "b", ts(1))])
        run_lib(module, wh)
        insert(wh, [(1, 10.0, "a1", ts(2)), (1, 11.0, "a2", ts(3))])
        run_lib(module, wh)
        assert view(wh, "up", "id, amount") == [(1, 10.0, "a1", ts(2)), (1, 11.0, "a2", ts(3)),
                                                (2, 2.0, "b", ts(1))]
        # the next delta with that key replaces both rows
        insert(wh, [(1, 12.0, "a3", ts(4))])
        run_lib(module, wh)
        assert view(wh, "up", "id, amount") == [(1, 12.0, "a3", ts(4)), (2, 2.0, "b", ts(1))]

    def test_unique_pin_on_the_keys_is_checked_on_the_delta_and_catches_its_duplicates(
            self, tmp_path):
        wh = tmp_path / "w.duckdb"
        module = write_module(tmp_path, ORDERS + upsert_model(
            extra="pin unique [id]\n  compact_ratio: 5\n  " + UNCHECKED))
        make_orders(wh, [(1, 1.0, "a", ts(1)), (2, 2.0, "b", ts(1))])
        run_lib(module, wh)
        # a delta row with an already merged key is a replacement, not a duplicate
        insert(wh, [(1, 10.0, "a1", ts(2))])
        report = run_lib(module, wh)
        up = result(report, "up")
        assert any("checked on the delta" in s["reason"] for s in up.skipped_checks)
        assert view(wh, "up") == [(1, 10.0, "a1", ts(2)), (2, 2.0, "b", ts(1))]
        live = sql(wh, "SELECT sql FROM duckdb_views() WHERE view_name = 'v_up'")
        # two rows with one key inside one delta break the pin: nothing is published
        insert(wh, [(3, 3.0, "c1", ts(3)), (3, 4.0, "c2", ts(3))])
        proc = cli("run", str(module), "-o", str(wh), check=False)
        assert proc.returncode == 1
        assert "error[E061]" in proc.stderr and "pin unique [id]" in proc.stderr
        assert sql(wh, "SELECT sql FROM duckdb_views() WHERE view_name = 'v_up'") == live
        assert view(wh, "up") == [(1, 10.0, "a1", ts(2)), (2, 2.0, "b", ts(1))]
        leftovers = sql(wh, "SELECT table_name FROM duckdb_tables() WHERE schema_name = "
                            "'strata_internal' AND starts_with(table_name, 'layer_')")
        assert len(leftovers) == 1  # the published layer only; the failed one was dropped


# ---------------------------------------------------------------- append
class TestAppend:
    MODEL = """
model log {
  from orders
  select id, amount, updated_at
  incremental
  merge_strategy: append
  cdc_column: updated_at
}
"""

    def test_duplicates_are_kept_on_purpose(self, tmp_path):
        wh = tmp_path / "w.duckdb"
        module = write_module(tmp_path, ORDERS + self.MODEL)
        make_orders(wh, [(1, 1.0, "a", ts(1)), (2, 2.0, "b", ts(1))])
        run_lib(module, wh)
        sql(wh, f"UPDATE orders SET amount = 5, updated_at = '{ts(2)}' WHERE id = 1")
        insert(wh, [(2, 2.0, "b", ts(2))])  # an exact copy of a key, newer
        report = run_lib(module, wh)
        log = result(report, "log")
        assert (log.path, log.delta_rows, log.rows) == ("pushdown", 2, 4)
        assert view(wh, "log", "id, updated_at") == [
            (1, 1.0, ts(1)), (1, 5.0, ts(2)), (2, 2.0, ts(1)), (2, 2.0, ts(2))]


# ---------------------------------------------------------------- merge, not rebuild
def test_a_merge_is_not_a_full_rebuild(tmp_path):
    """The delivery note's test, with no on_drift line: mutating an already merged row
    without moving cdc_column is invisible to the next run (it reads only rows past the
    watermark); the run says it found drift, and --full-refresh sees the mutation."""
    wh = tmp_path / "w.duckdb"
    module = write_module(tmp_path, ORDERS + upsert_model())
    make_orders(wh, [(1, 10.0, "a", ts(1)), (2, 20.0, "b", ts(2))])
    run_cli(module, wh)
    sql(wh, "UPDATE orders SET amount = 999 WHERE id = 1")  # updated_at untouched
    insert(wh, [(3, 30.0, "c", ts(3))])
    merged = run_cli(module, wh)
    up = model_json(merged, "up")
    assert (up["path"], up["delta_rows"]) == ("pushdown", 1)
    assert up["drift"]["action"] == "warn"
    assert view(wh, "up") == [(1, 10.0, "a", ts(1)), (2, 20.0, "b", ts(2)),
                              (3, 30.0, "c", ts(3))]
    full = run_cli(module, wh, "--full-refresh")
    up = model_json(full, "up")
    assert up["path"] == "full" and up["delta_rows"] is None
    assert "--full-refresh: computed in full" in up["notes"]
    assert view(wh, "up")[0] == (1, 999.0, "a", ts(1))


class TestFullRefresh:
    MODULE = ORDERS + upsert_model("a") + upsert_model("b", extra=UNCHECKED)

    def test_full_refresh_with_models_refreshes_only_those(self, tmp_path):
        wh = tmp_path / "w.duckdb"
        module = write_module(tmp_path, self.MODULE)
        make_orders(wh, [(1, 10.0, "a", ts(1))])
        run_lib(module, wh)
        sql(wh, "UPDATE orders SET amount = 999 WHERE id = 1")
        insert(wh, [(2, 20.0, "b", ts(2))])
        report = run_cli(module, wh, "--full-refresh", "--models", "a")
        assert model_json(report, "a")["path"] == "full"
        assert [m["model"] for m in report["models"]] == ["a"]
        report = run_cli(module, wh)
        assert model_json(report, "b")["path"] == "pushdown"
        assert view(wh, "a")[0][1] == 999.0 and view(wh, "b")[0][1] == 10.0

    def test_full_refresh_of_all(self, tmp_path):
        wh = tmp_path / "w.duckdb"
        module = write_module(tmp_path, self.MODULE)
        make_orders(wh, [(1, 10.0, "a", ts(1))])
        run_lib(module, wh)
        sql(wh, "UPDATE orders SET amount = 999 WHERE id = 1")
        report = run_lib(module, wh, full_refresh=True)
        assert [r.path for r in report.results] == ["full", "full"]
        assert view(wh, "a")[0][1] == view(wh, "b")[0][1] == 999.0


class TestFallbacks:
    def test_empty_previous_snapshot_computes_in_full(self, tmp_path):
        wh = tmp_path / "w.duckdb"
        module = write_module(tmp_path, ORDERS + upsert_model())
        make_orders(wh, [(1, 10.0, "a", ts(1))])
        sql(wh, "DELETE FROM orders")
        run_lib(module, wh)
        insert(wh, [(1, 10.0, "a", ts(1))])
        up = result(run_lib(module, wh), "up")
        assert up.path == "full" and "previous snapshot is empty: computed in full" in up.notes

    def test_null_watermark_computes_in_full(self, tmp_path):
        wh = tmp_path / "w.duckdb"
        module = write_module(tmp_path, ORDERS + upsert_model())
        make_orders(wh, [(1, 10.0, "a", None)])
        run_lib(module, wh)
        insert(wh, [(2, 20.0, "b", ts(1))])
        up = result(run_lib(module, wh), "up")
        assert up.path == "full"
        assert "watermark max(updated_at) is NULL: computed in full" in up.notes
        assert len(view(wh, "up")) == 2

    @pytest.mark.parametrize("kind, special, later", [
        ("double", "'NaN'::DOUBLE", 5.0), ("double", "'Infinity'::DOUBLE", 5.0),
        ("timestamp", "'infinity'::TIMESTAMP", dt.datetime(2025, 1, 1)),
        ("date", "'infinity'::DATE", dt.date(2025, 1, 1))])
    def test_a_watermark_nothing_can_pass_computes_in_full(self, tmp_path, kind, special,
                                                           later):
        """max() of a double column holding NaN is NaN, and nothing is past it; an
        infinite timestamp reaches Python as datetime.max, so `> datetime.max` took the
        infinite row again on every run (an append duplicated it). Embedding NaN failed
        in the engine (E080: column `nan`). All recompute now, with a note."""
        wh = tmp_path / "w.duckdb"
        module = write_module(tmp_path, f"""
source s {{
  id: int
  c: {kind}
}}
model m {{
  from s
  select id, c
  incremental
  merge_strategy: append
  cdc_column: c
  on_drift: ignore
}}
""")
        sql(wh, f"CREATE TABLE s AS SELECT * FROM (VALUES (1, NULL::{kind.upper()}), "
                f"(2, {special})) t(id, c)")
        run_lib(module, wh)
        insert(wh, [(3, later)], table="s")
        m = result(run_lib(module, wh), "m")
        assert m.path == "full" and any("nothing can be past it" in n for n in m.notes)
        assert [r[0] for r in view(wh, "m")] == [1, 2, 3]

    def test_a_watermark_python_cannot_hold_exactly_computes_in_full(self, tmp_path):
        """TIMESTAMP_NS (accepted by a `timestamp` contract) reaches Python as
        microseconds: `> 00:00:00.123456` would take the maximum row itself again on
        every run, and an append would duplicate it."""
        wh = tmp_path / "w.duckdb"
        module = write_module(tmp_path, ORDERS + TestAppend.MODEL)
        sql(wh, "CREATE TABLE orders (id BIGINT, amount DOUBLE, status VARCHAR, "
                "updated_at TIMESTAMP_NS)",
            "INSERT INTO orders VALUES (1, 1, 'a', '2024-01-01 00:00:00.123456789')")
        run_lib(module, wh)
        log = result(run_lib(module, wh), "log")
        assert log.path == "full" and any("no exact literal" in n for n in log.notes)
        assert len(view(wh, "log")) == 1

    def test_code_change_computes_in_full(self, tmp_path):
        wh = tmp_path / "w.duckdb"
        module = write_module(tmp_path, ORDERS + upsert_model())
        make_orders(wh, [(1, 10.0, "a", ts(1))])
        run_lib(module, wh)
        write_module(tmp_path, ORDERS + upsert_model(steps="filter amount > 0"))
        insert(wh, [(2, 20.0, "b", ts(2))])
        up = result(run_lib(module, wh), "up")
        assert up.path == "full"
        assert "code changed since the previous snapshot: computed in full" in up.notes

    def test_schema_drift_of_a_source_type_computes_in_full(self, tmp_path):
        """INTEGER -> BIGINT passes the `int` contract but changes the engine type of
        the output: the layer could not be unioned (or hashed) with the previous rows."""
        wh = tmp_path / "w.duckdb"
        module = write_module(tmp_path, ORDERS + upsert_model())
        sql(wh, "CREATE TABLE orders (id INTEGER, amount DOUBLE, status VARCHAR, "
                "updated_at TIMESTAMP)")
        insert(wh, [(1, 10.0, "a", ts(1))])
        run_lib(module, wh)
        sql(wh, "CREATE OR REPLACE TABLE orders AS SELECT id::BIGINT AS id, amount, status, "
                "updated_at FROM orders")
        insert(wh, [(2, 20.0, "b", ts(2))])
        report = run_lib(module, wh)
        up = result(report, "up")
        assert up.path == "full" and any("types changed" in n for n in up.notes)
        assert view(wh, "up") == [(1, 10.0, "a", ts(1)), (2, 20.0, "b", ts(2))]
        cli("verify", report.run_id, "-o", str(wh))

    def test_a_source_read_from_another_table_computes_in_full(self, tmp_path):
        """Merging onto a snapshot built from another table would mix the two: after a
        run on a sample, the next run on `orders` would keep the sample and add only
        the rows past the sample's newest, losing every other row of `orders`."""
        wh = tmp_path / "w.duckdb"
        module = write_module(tmp_path, ORDERS + upsert_model())
        make_orders(wh, [(1, 10.0, "a", ts(1)), (2, 20.0, "b", ts(2)), (3, 30.0, "c", ts(3))])
        run_lib(module, wh)
        sql(wh, "CREATE TABLE orders_sample AS SELECT * FROM orders WHERE id = 3")
        insert(wh, [(4, 40.0, "d", ts(4))], table="orders_sample")

        up = result(run_lib(module, wh, overrides={"orders": "orders_sample"}), "up")
        assert up.path == "full"
        assert ("source `orders` is read from `orders_sample` now, from `orders` when the "
                "previous snapshot was built: computed in full") in up.notes
        assert view(wh, "up") == [(3, 30.0, "c", ts(3)), (4, 40.0, "d", ts(4))]

        insert(wh, [(5, 50.0, "e", ts(5))])
        up = result(run_lib(module, wh), "up")
        assert up.path == "full"
        assert view(wh, "up") == full_recompute(tmp_path, module, wh, "up")
        assert [r[0] for r in view(wh, "up")] == [1, 2, 3, 5]

        insert(wh, [(6, 60.0, "f", ts(6))])  # the same table again: merged
        assert result(run_lib(module, wh), "up").path == "pushdown"
        assert [r[0] for r in view(wh, "up")] == [1, 2, 3, 5, 6]

    def test_a_merge_and_a_full_computation_of_the_same_data_have_different_ids(
            self, tmp_path):
        """Run ids are content ids: over the same data, a merge (which keeps a row
        deleted upstream) and the full computation an override forces (which drops it)
        must not share one, or `rollback ID` would restore the wrong rows."""
        wh = tmp_path / "w.duckdb"
        module = write_module(tmp_path, ORDERS + upsert_model(extra=UNCHECKED))
        make_orders(wh, [(1, 10.0, "a", ts(1)), (2, 20.0, "b", ts(2))])
        run_lib(module, wh)
        sql(wh, "DELETE FROM orders WHERE id = 1",
            "CREATE TABLE orders_copy AS SELECT * FROM orders")
        merged = run_lib(module, wh)
        full = run_lib(module, wh, overrides={"orders": "orders_copy"})
        assert result(full, "up").path == "full"
        assert merged.run_id != full.run_id
        assert [r[0] for r in view(wh, "up")] == [2]
        cli("rollback", merged.run_id, "-o", str(wh))
        assert [r[0] for r in view(wh, "up")] == [1, 2]

    def test_nothing_past_the_watermark_reuses_the_previous_snapshot(self, tmp_path):
        wh = tmp_path / "w.duckdb"
        module = write_module(tmp_path, ORDERS + upsert_model(extra=UNCHECKED))
        make_orders(wh, [(1, 10.0, "a", ts(1))])
        first = run_lib(module, wh)
        sql(wh, "UPDATE orders SET amount = 5")  # not past the watermark
        up = result(run_lib(module, wh), "up")
        assert (up.status, up.delta_rows, up.snapshot) == (
            "reused", 0, result(first, "up").snapshot)


# ---------------------------------------------------------------- pushdown, as it ran
class TestIncrementalPushdown:
    def _merge(self, tmp_path, model_text: str, model: str, source_sql: list[str],
               change_sql: list[str], order: str = "id") -> tuple[dict, Path, Path]:
        wh = tmp_path / "w.duckdb"
        module = write_module(tmp_path, model_text)
        sql(wh, *source_sql)
        run_cli(module, wh)
        sql(wh, *change_sql)
        report = run_cli(module, wh)
        assert view(wh, model, order) == full_recompute(tmp_path, module, wh, model, order)
        return model_json(report, model), wh, module

    @staticmethod
    def assert_pushed_into_base(ran: dict, predicate_sql: str) -> None:
        assert ran["path"] == "pushdown"
        tree = executed(ran["sql"])
        assert "__full" not in table_names(tree) and "__delta" not in table_names(tree)
        base = ctes(tree)["base"]
        where = base.args["where"].this
        assert predicate_sql in where.sql(dialect="duckdb"), where.sql(dialect="duckdb")
        # and nowhere else: the outer query has no watermark filter
        outer = tree.copy()
        outer.set("with_", None)
        assert outer.args.get("where") is None

    SOURCE = (("CREATE TABLE orders (id BIGINT, amount DOUBLE, status VARCHAR, "
               "updated_at TIMESTAMP)"),
              ("INSERT INTO orders VALUES (1, 10, 'paid', '2024-01-01 10:00:00'), "
               "(2, 20, 'void', '2024-01-02 10:00:00')"))
    CHANGE = ("UPDATE orders SET amount = 11, updated_at = '2024-01-03 00:00:00' WHERE id = 1",
              "INSERT INTO orders VALUES (3, 30, 'paid', '2024-01-03 00:00:00')")

    def test_passthrough_column_lands_in_the_base_cte(self, tmp_path):
        ran, _, _ = self._merge(tmp_path, ORDERS + upsert_model(
            steps="filter status != 'test'"), "up", self.SOURCE, self.CHANGE)
        self.assert_pushed_into_base(
            ran, "orders.updated_at > CAST('2024-01-02 10:00:00' AS TIMESTAMP)")
        assert ran["delta_rows"] == 2

    def test_renamed_passthrough_lands_in_the_base_cte(self, tmp_path):
        ran, _, _ = self._merge(tmp_path, ORDERS + """
model up {
  from orders
  select id, amount, updated_at as changed
  incremental
  merge_strategy: upsert
  merge_keys: [id]
  cdc_column: changed
}
""", "up", self.SOURCE, self.CHANGE)
        self.assert_pushed_into_base(
            ran, "orders.updated_at > CAST('2024-01-02 10:00:00' AS TIMESTAMP)")

    def test_let_lands_in_the_base_cte(self, tmp_path):
        ran, _, _ = self._merge(tmp_path, ORDERS + """
model up {
  from orders
  let changed_day = cast(updated_at as date)
  select id, amount, changed_day
  incremental
  merge_strategy: upsert
  merge_keys: [id]
  cdc_column: changed_day
}
""", "up", self.SOURCE, self.CHANGE)
        self.assert_pushed_into_base(
            ran, "CAST(orders.updated_at AS DATE) > CAST('2024-01-02' AS DATE)")

    def test_join_left_takes_the_full_then_filter_path_and_stays_correct(self, tmp_path):
        text = ORDERS + """
source customers {
  id: int
  name: text
}
model up {
  from orders
  join_left customers as c on id = c.id
  select id, amount, c.name as customer, updated_at
  incremental
  merge_strategy: upsert
  merge_keys: [id]
  cdc_column: updated_at
}
"""
        source = [*self.SOURCE, "CREATE TABLE customers (id BIGINT, name VARCHAR)",
                  "INSERT INTO customers VALUES (1, 'ann'), (3, 'cy')"]
        ran, wh, _ = self._merge(tmp_path, text, "up", source, self.CHANGE)
        assert ran["path"] == "full-then-filter" and ran["delta_rows"] == 2
        tree = executed(ran["sql"])
        assert {"__full", "__delta"} <= set(ctes(tree))
        assert "updated_at > CAST('2024-01-02 10:00:00' AS TIMESTAMP)" in \
            ctes(tree)["__delta"].sql(dialect="duckdb")
        assert ctes(tree)["base"].args.get("where") is None
        assert view(wh, "up") == [(1, 11.0, "ann", dt.datetime(2024, 1, 3)),
                                  (2, 20.0, None, dt.datetime(2024, 1, 2, 10)),
                                  (3, 30.0, "cy", dt.datetime(2024, 1, 3))]

    def test_a_date_cdc_column_also_pushes_down(self, tmp_path):
        text = """
source events {
  id: int
  day: date
  v: int
}
model ev {
  from events
  select id, day, v
  incremental
  merge_strategy: upsert
  merge_keys: [id]
  cdc_column: day
}
"""
        ran, wh, _ = self._merge(
            tmp_path, text, "ev",
            ["CREATE TABLE events (id BIGINT, day DATE, v BIGINT)",
             "INSERT INTO events VALUES (1, '2024-01-01', 1), (2, '2024-01-02', 2)"],
            ["UPDATE events SET v = 10, day = '2024-01-05' WHERE id = 1"])
        self.assert_pushed_into_base(ran, "events.\"day\" > CAST('2024-01-02' AS DATE)")
        assert view(wh, "ev") == [(1, dt.date(2024, 1, 5), 10), (2, dt.date(2024, 1, 2), 2)]

    def test_a_derived_cdc_column_is_filtered_after(self, tmp_path):
        ran, _, _ = self._merge(tmp_path, ORDERS + """
model up {
  from orders
  derive changed = coalesce(updated_at, timestamp '2000-01-01 00:00:00')
  select id, amount, changed
  incremental
  merge_strategy: upsert
  merge_keys: [id]
  cdc_column: changed
}
""", "up", self.SOURCE, self.CHANGE)
        assert ran["path"] == "full-then-filter"
        assert "__full" in ctes(executed(ran["sql"]))


# ---------------------------------------------------------------- typed watermarks
class TestDateTimeLiterals:
    @pytest.mark.parametrize("value, duckdb_sql", [
        (dt.date(2024, 1, 31), "CAST('2024-01-31' AS DATE)"),
        (dt.datetime(2024, 1, 31, 12, 0, 5), "CAST('2024-01-31 12:00:05' AS TIMESTAMP)"),
        (dt.datetime(2024, 1, 31, 12, 0, 5, 123456),
         "CAST('2024-01-31 12:00:05.123456' AS TIMESTAMP)"),
        (42, "42"), (-7, "-7"), (Decimal("12.50"), "12.50"), (Decimal("-0.05"), "-0.05"),
        (2.5, "2.5"), ("it's", "'it''s'"),
    ])
    def test_lit_renders_a_typed_literal(self, value, duckdb_sql):
        assert lit(value).sql(dialect="duckdb") == duckdb_sql
        assert _lit is lit

    @pytest.mark.parametrize("dialect", ["postgres", "snowflake", "bigquery", "spark", "trino"])
    def test_date_and_datetime_stay_typed_in_every_dialect(self, dialect):
        date_sql = lit(dt.date(2024, 1, 31)).sql(dialect=dialect)
        ts_sql = lit(dt.datetime(2024, 1, 31, 12, 0)).sql(dialect=dialect)
        assert "DATE" in date_sql.upper() and "2024-01-31" in date_sql
        assert ("TIMESTAMP" in ts_sql.upper() or "DATETIME" in ts_sql.upper())
        assert "2024-01-31 12:00:00" in ts_sql

    @pytest.mark.parametrize("engine_type, values, python_type, literal", [
        ("DATE", ["2024-01-01", "2024-01-02", "2024-01-03"], dt.date,
         "CAST('2024-01-02' AS DATE)"),
        ("TIMESTAMP", ["2024-01-01 00:00:00", "2024-01-01 00:00:00.000002",
                       "2024-01-01 00:00:00.000003"], dt.datetime,
         "CAST('2024-01-01 00:00:00.000002' AS TIMESTAMP)"),
        ("BIGINT", [1, 2, 3], int, "> 2"),
        ("DECIMAL(12, 2)", ["1.25", "2.50", "2.51"], Decimal, "> 2.50"),
    ])
    def test_watermark_is_read_typed_and_embedded(self, tmp_path, engine_type, values,
                                                  python_type, literal):
        kind = {"DATE": "date", "TIMESTAMP": "timestamp", "BIGINT": "int",
                "DECIMAL(12, 2)": "decimal(12, 2)"}[engine_type]
        wh = tmp_path / "w.duckdb"
        module = write_module(tmp_path, f"""
source s {{
  id: int
  c: {kind}
}}
model m {{
  from s
  select id, c
  incremental
  merge_strategy: append
  cdc_column: c
  on_drift: ignore
}}
""")
        sql(wh, f"CREATE TABLE s (id BIGINT, c {engine_type})")
        insert(wh, [(1, values[0]), (2, values[1])], table="s")
        first = run_lib(module, wh)
        w = Warehouse.open(str(wh), read_only=True, create=False)
        try:
            mark = read_watermark(w, H.snapshot(w, result(first, "m").snapshot), "c")
        finally:
            w.close()
        assert type(mark) is python_type  # a typed value, never text
        # the boundary: a value equal to the watermark is not past it, the next one is
        insert(wh, [(3, values[1]), (4, values[2])], table="s")
        m = result(run_lib(module, wh), "m")
        assert literal in m.sql and m.delta_rows == 1
        assert [r[0] for r in view(wh, "m")] == [1, 2, 4]


# ---------------------------------------------------------------- layers
CHAIN = ORDERS + upsert_model(extra="compact_layers: 3\n  compact_ratio: 5")


def chain(tmp_path: Path, steps: int, module_text: str = CHAIN
          ) -> tuple[Path, Path, list[RunReport], list[list[tuple]]]:
    """A first run and `steps` merges, each changing two rows and adding one."""
    wh = tmp_path / "w.duckdb"
    module = write_module(tmp_path, module_text)
    make_orders(wh, [(i, float(i), "s", ts(1)) for i in range(10)])
    reports, views = [run_lib(module, wh)], [view(wh, "up")]
    for step in range(1, steps + 1):
        sql(wh, f"UPDATE orders SET amount = amount + 100, updated_at = '{ts(1 + step)}' "
                f"WHERE id IN ({step % 10}, {(step + 5) % 10})")
        insert(wh, [(100 + step, float(step), "n", ts(1 + step))])
        reports.append(run_lib(module, wh))
        views.append(view(wh, "up"))
    return wh, module, reports, views


def internal_tables(wh: Path) -> dict[str, int]:
    return {r[0]: r[1] for r in sql(
        wh, "SELECT table_name, estimated_size FROM duckdb_tables() "
            "WHERE schema_name = 'strata_internal' AND (starts_with(table_name, 'snap_') "
            "OR starts_with(table_name, 'layer_'))")}


class TestLayers:
    def test_a_merge_stores_only_the_delta_and_composes(self, tmp_path):
        wh, _, reports, _ = chain(tmp_path, 2)
        first, second, third = (result(r, "up") for r in reports)
        rec1, rec2, rec3 = (record(wh, r.snapshot) for r in (first, second, third))
        assert rec1.kind == "table"
        assert rec2.kind == rec3.kind == "layered"
        assert rec2.parts["base"] == rec3.parts["base"] == rec1.name  # never copied
        assert rec3.parts["layers"][0] == rec2.parts["layers"][0]
        assert len(rec3.parts["layers"]) == 2
        for layer in rec3.parts["layers"]:
            assert sql(wh, f"SELECT count(*) FROM {internal(layer)}") == [(3,)]
        # a snapshot is a view over the tables; no table was written with the old rows
        assert sql(wh, "SELECT count(*) FROM duckdb_views() WHERE view_name = ?",
                   params=[rec3.name]) == [(1,)]

    def test_previous_snapshots_stay_readable_verifiable_and_untouched(self, tmp_path):
        wh, module, reports, views = chain(tmp_path, 2)
        before = {name: sql(wh, f"SELECT * FROM {internal(name)} ORDER BY ALL")
                  for name in internal_tables(wh)}
        # one more merge must not change any published table
        insert(wh, [(999, 9.0, "z", ts(20))])
        reports.append(run_lib(module, wh))
        for name, rows in before.items():
            assert sql(wh, f"SELECT * FROM {internal(name)} ORDER BY ALL") == rows
        for report, rows in zip(reports, views):
            snap = result(report, "up").snapshot
            assert sql(wh, f"SELECT * FROM {internal(snap)} ORDER BY id NULLS FIRST") == rows
            cli("verify", report.run_id, "-o", str(wh))

    def test_layered_content_hash_equals_a_full_rescan(self, tmp_path):
        wh, _, reports, _ = chain(tmp_path, 3)
        w = Warehouse.open(str(wh), read_only=True, create=False)
        try:
            for report in reports:
                rec = H.snapshot(w, result(report, "up").snapshot)
                names = [c for c, _ in rec.columns]
                scanned = row_hash(w.con, internal(rec.name), names)
                schema = [(r[0], r[1]) for r in w.execute(
                    f"DESCRIBE SELECT * FROM {internal(rec.name)}").fetchall()]
                assert (scanned.count, str(scanned.total), str(scanned.xor)) == (
                    rec.row_count, rec.hash_sum, rec.hash_xor)
                assert scanned.digest(schema) == rec.content_hash
        finally:
            w.close()

    def test_rollback_to_the_middle_of_a_chain(self, tmp_path):
        wh, module, reports, views = chain(tmp_path, 3)
        cli("rollback", reports[1].run_id, "-o", str(wh))
        assert view(wh, "up") == views[1]
        # merging after the rollback builds on the rolled-back snapshot
        insert(wh, [(500, 5.0, "r", ts(30))])
        report = run_lib(module, wh)
        up = result(report, "up")
        # past the rolled-back watermark: the changes of runs 2 and 3 and the new row
        assert up.path == "pushdown" and up.delta_rows == 2 * 3 + 1
        rec = record(wh, up.snapshot)
        assert rec.parts["layers"][:1] == record(
            wh, result(reports[1], "up").snapshot).parts["layers"]
        assert view(wh, "up") == full_recompute(tmp_path, module, wh, "up")
        cli("verify", report.run_id, "-o", str(wh))

    def test_compaction_when_layers_exceed_compact_layers(self, tmp_path):
        wh, module, reports, views = chain(tmp_path, 4)  # compact_layers: 3
        kinds = [record(wh, result(r, "up").snapshot).kind for r in reports]
        assert kinds == ["table", "layered", "layered", "layered", "table"]
        last = result(reports[-1], "up")
        assert last.compacted and last.path == "pushdown"
        assert any("compacted 4 layer(s)" in n for n in last.notes)
        # the fourth layer was folded in and dropped; the three published ones remain
        assert len([t for t in internal_tables(wh) if t.startswith("layer_")]) == 3
        assert views[-1] == full_recompute(tmp_path, module, wh, "up")
        for report in reports:
            cli("verify", report.run_id, "-o", str(wh))
        # the next merge layers on the compacted base
        insert(wh, [(700, 7.0, "c", ts(29))])
        up = result(run_lib(module, wh), "up")
        assert record(wh, up.snapshot).parts["base"] == last.snapshot

    def test_compaction_when_deltas_exceed_compact_ratio(self, tmp_path):
        text = ORDERS + upsert_model(extra="compact_ratio: 0.5")
        wh, _, reports, _ = chain(tmp_path, 2, text)
        # base 10 rows; deltas of 3 rows: 3 <= 5 layered, 6 > 5 compacted
        assert [result(r, "up").compacted for r in reports] == [False, False, True]
        assert record(wh, result(reports[2], "up").snapshot).kind == "table"

    def test_default_thresholds_are_eight_layers_and_a_fifth_of_the_base(self, tmp_path):
        module = load_module(write_module(tmp_path, ORDERS + upsert_model()))
        inc = module.plan("up").incremental
        assert (inc.compact_layers, inc.compact_ratio) == (8, 0.2)

    def test_append_layers_compose_with_union_all(self, tmp_path):
        text = ORDERS + TestAppend.MODEL.replace("cdc_column: updated_at",
                                                 "cdc_column: updated_at\n  compact_ratio: 9")
        wh = tmp_path / "w.duckdb"
        module = write_module(tmp_path, text)
        make_orders(wh, [(1, 1.0, "a", ts(1))])
        run_lib(module, wh)
        for day in (2, 3):
            insert(wh, [(1, float(day), "a", ts(day))])
            report = run_lib(module, wh)
        rec = record(wh, result(report, "log").snapshot)
        assert rec.kind == "layered" and len(rec.parts["layers"]) == 2
        assert view(wh, "log", "updated_at") == [(1, 1.0, ts(1)), (1, 2.0, ts(2)),
                                                 (1, 3.0, ts(3))]
        cli("verify", report.run_id, "-o", str(wh))


# ---------------------------------------------------------------- run modes and reporting
def test_only_stale_merges_a_stale_incremental_model(tmp_path):
    wh = tmp_path / "w.duckdb"
    module = write_module(tmp_path, ORDERS + upsert_model())
    make_orders(wh, [(1, 10.0, "a", ts(1))])
    run_cli(module, wh, "--only-stale")
    assert run_cli(module, wh, "--only-stale")["status"] == "up_to_date"
    insert(wh, [(2, 20.0, "b", ts(2))])
    report = run_cli(module, wh, "--only-stale")
    up = model_json(report, "up")
    assert report["stale"] == {"up": "source `orders` changed"}
    assert (up["status"], up["path"], up["delta_rows"]) == ("rebuilt", "pushdown", 1)
    assert run_cli(module, wh, "--only-stale")["status"] == "up_to_date"


def test_json_and_progress_say_the_path_and_the_delta_rows(tmp_path):
    wh = tmp_path / "w.duckdb"
    module = write_module(tmp_path, ORDERS + upsert_model() + TestAppend.MODEL)
    make_orders(wh, [(1, 10.0, "a", ts(1))])
    cli("run", str(module), "-o", str(wh))
    insert(wh, [(2, 20.0, "b", ts(2)), (3, 30.0, "c", ts(3))])
    proc = cli("run", str(module), "-o", str(wh), env={"TTY_COMPATIBLE": "1",
                                                       "NO_COLOR": "1", "COLUMNS": "200"})
    lines = [line for line in proc.stdout.splitlines() if "rebuilt " in line and " up " in line]
    assert lines and "pushdown" in lines[0] and "delta 2 rows" in lines[0], proc.stdout
    # history keeps the path and the delta size of every merge
    entry = json.loads(cli("history", "-o", str(wh), "--json").stdout)[0]
    assert entry["details"]["up"]["path"] == "pushdown"
    assert entry["details"]["up"]["delta_rows"] == 2
    assert entry["details"]["log"]["delta_rows"] == 2


def test_merges_on_a_branch_leave_main_alone(tmp_path):
    wh = tmp_path / "w.duckdb"
    module = write_module(tmp_path, ORDERS + upsert_model())
    make_orders(wh, [(1, 10.0, "a", ts(1))])
    run_lib(module, wh)
    cli("branch", "create", "dev", "--from", "main", "-o", str(wh))
    insert(wh, [(2, 20.0, "b", ts(2))])
    up = result(run_lib(module, wh, branch="dev"), "up")
    assert up.path == "pushdown"
    assert len(view(wh, "up", branch="dev")) == 2 and len(view(wh, "up")) == 1


def test_replay_execute_of_a_merged_run(tmp_path):
    """`replay --execute` recomputes a merged run in full from its recipe: equal when
    the sources only grew past the watermark; when a merged row changed without
    moving the watermark, the mismatch says why instead of looking like corruption."""
    wh = tmp_path / "w.duckdb"
    # on_drift: warn merges anyway, so the merged snapshot really differs
    module = write_module(tmp_path, ORDERS + upsert_model(extra="on_drift: warn"))
    make_orders(wh, [(1, 10.0, "a", ts(1)), (2, 20.0, "b", ts(2))])
    first = run_cli(module, wh)
    insert(wh, [(3, 30.0, "c", ts(3))])
    # the first run computed in full: a difference now is the source's, not a merge's
    proc = cli("replay", first["run_id"], "-o", str(wh), "--execute", "--json", check=False)
    assert proc.returncode == 1
    [first_up] = json.loads(proc.stdout)["replay"]["models"]
    assert (first_up["ok"], first_up["note"]) == (False, "sources changed since the run: orders")
    merged = run_cli(module, wh)
    assert model_json(merged, "up")["path"] == "pushdown"
    replay = json.loads(cli("replay", merged["run_id"], "-o", str(wh), "--execute",
                            "--json").stdout)
    assert [(r["model"], r["ok"]) for r in replay["replay"]["models"]] == [("up", True)]

    sql(wh, "UPDATE orders SET amount = 999 WHERE id = 1")  # updated_at untouched
    insert(wh, [(4, 40.0, "d", ts(4))])
    again = run_cli(module, wh)
    proc = cli("replay", again["run_id"], "-o", str(wh), "--execute", "--json")
    # explained, so not a failure of the replay (verify is what checks the snapshot)
    assert proc.returncode == 0 and json.loads(proc.stdout)["replay"]["ok"] is True
    [result_up] = json.loads(proc.stdout)["replay"]["models"]
    assert result_up["ok"] is False
    assert "incremental model: its merged history legitimately differs" in result_up["note"]
    cli("verify", again["run_id"], "-o", str(wh))  # the snapshot itself is intact
