"""Concurrent builds (`run --workers N`, default 4): models' CTAS run in build
lanes, side by side, while the main thread plans, checks and hashes. Here the
readers of a large source run together. The result must be the run one statement
at a time gives: same run id, same snapshots, same rows, the same failures with
nothing published. Real DuckDB files, the real CLI. (tests/test_build_lanes.py
covers chains of small models, batches and cross-lane reads.)"""

from __future__ import annotations

import json
import shutil

from enginehelpers import MODULE as ENGINE_MODULE
from enginehelpers import (
    error_code,
    history_rows,
    internal_objects,
    leftovers,
    live,
    make_project,
    stale_run_after,
    view_rows,
)

from strata.engine.run.build import HASH_NOW_ROWS

ROWS = HASH_NOW_ROWS + 20_000  # `orders` is large: each table commits at once

SOURCES = ENGINE_MODULE[:ENGINE_MODULE.index("model paid {")]  # orders, products

# Four independent readers of the large source (they can run side by side), a join
# of two of them, aggregates over each branch, and a small-source branch.
MODULE = SOURCES + """\
model paid {
  from orders
  filter status = 'paid'
  select id, customer_id, amount
  pin unique [id]
}

model void {
  from orders
  filter status = 'void'
  select id, customer_id, amount
}

model doubled {
  from orders
  derive twice = amount * 2
  select id, twice
}

model recent {
  from orders
  filter updated_at > timestamp '2024-01-01 12:00:00'
  select id, updated_at
}

model paid_twice {
  from paid
  join doubled on paid.id = doubled.id
  select paid.id, paid.amount, doubled.twice
}

model per_customer {
  from paid_twice
  join paid on paid_twice.id = paid.id
  group paid.customer_id
  aggregate total = sum(paid_twice.twice), n = count()
}

model void_total {
  from void
  aggregate total = sum(amount), n = count()
}

model cheap {
  from products
  filter price < 10
  select id, name, price
}
"""
MODELS = ["paid", "void", "doubled", "recent", "paid_twice", "per_customer", "void_total",
          "cheap"]


def project(tmp_path, name, text=MODULE):
    return make_project(tmp_path / name, orders=ROWS, products=20, text=text)


def test_workers_give_the_run_one_statement_at_a_time_gives(tmp_path):
    one, four = project(tmp_path, "one"), project(tmp_path, "four")
    sequential = one.run_json("--workers", "1")
    concurrent = four.run_json("--workers", "4")
    assert concurrent["run_id"] == sequential["run_id"]
    assert [r["model"] for r in concurrent["models"]] == MODELS  # reported in module order
    assert ({r["model"]: (r["status"], r["snapshot"], r["rows"]) for r in concurrent["models"]}
            == {r["model"]: (r["status"], r["snapshot"], r["rows"])
                for r in sequential["models"]})
    assert view_rows(four.warehouse) == view_rows(one.warehouse)
    assert four.strata_json("verify", concurrent["run_id"], "-o", str(four.warehouse))["ok"]
    assert leftovers(four.warehouse) == set()
    # the pins were checked on the workers' tables too
    paid = next(r for r in concurrent["models"] if r["model"] == "paid")
    assert "pin unique [id]" in paid["checks"]


def test_identity_reuse_drops_the_duplicates_once_nothing_runs(tmp_path):
    p = project(tmp_path, "p")
    first = p.run_json()
    tables = internal_objects(p.warehouse)
    views = live(p.warehouse)
    again = p.run_json()  # a full run again: every model recomputed, same content
    assert again["run_id"] == first["run_id"]  # same data, same selection
    assert {r["model"]: r["status"] for r in again["models"]} == dict.fromkeys(MODELS, "reused")
    assert live(p.warehouse) == views  # the existing snapshots, by identity
    assert internal_objects(p.warehouse) == tables  # no duplicate left behind


def test_a_failing_statement_on_a_worker_publishes_nothing(tmp_path):
    bad = MODULE.replace("  select id, updated_at\n",
                         "  derive boom = cast(status as int)\n  select id, updated_at, boom\n")
    p = project(tmp_path, "p", text=bad)
    proc = p.run("run", str(p.module), "-o", str(p.warehouse), "--workers", "4", check=None)
    assert error_code(proc) == "E080"
    assert "`recent`" in proc.stderr + proc.stdout
    assert live(p.warehouse) == {}
    # published nothing: the history holds only the failed run's record
    assert [r[2] for r in history_rows(p.warehouse)] == ["failed"]
    assert leftovers(p.warehouse) == set()


def test_a_pin_failing_on_a_worker_table_publishes_nothing_and_keeps_the_last_run(tmp_path):
    p = project(tmp_path, "p")
    first = p.run_json()
    views, rows = live(p.warehouse), view_rows(p.warehouse)
    p.sql("INSERT INTO orders SELECT * FROM orders WHERE id = 5")  # a duplicate paid id
    proc = p.run("run", str(p.module), "-o", str(p.warehouse), check=None)
    assert error_code(proc) == "E061"  # pin unique
    assert live(p.warehouse) == views and view_rows(p.warehouse) == rows
    assert [r[1:3] for r in history_rows(p.warehouse)][:1] == [(first["run_id"], "run")]
    assert [r[2] for r in history_rows(p.warehouse)][1:] == ["failed"]  # its record only
    assert leftovers(p.warehouse) == set()


def test_progress_on_a_terminal_stays_in_module_order(tmp_path):
    p = project(tmp_path, "p")
    proc = p.run("run", str(p.module), "-o", str(p.warehouse),
                 env={"TTY_COMPATIBLE": "1", "NO_COLOR": "1", "COLUMNS": "200"})
    shown = [line.split()[1] for line in proc.stdout.splitlines()
             if line.strip().startswith("rebuilt")]
    assert shown == MODELS


def test_only_stale_with_workers_rebuilds_the_changed_branch_only(tmp_path):
    p = project(tmp_path, "p")
    report, moved = stale_run_after(p, "UPDATE products SET price = price + 100 WHERE id = 1")
    assert set(report["stale"]) == {"cheap"}
    assert moved == {"cheap"}
    copy = tmp_path / "copy.duckdb"
    shutil.copyfile(p.warehouse, copy)
    assert json.loads(p.run("history", "-o", str(copy), "--json").stdout)[0]["id"] == \
        report["run_id"]


def test_a_kill_while_workers_run_keeps_the_last_state_and_the_next_run_cleans(tmp_path):
    """SIGKILL while worker statements run (`after_create` of one pooled model): the
    views still read the previous run, verify passes, the next run removes the
    committed worker tables nobody references and publishes."""
    import signal

    p = project(tmp_path, "p")
    first = p.run_json()
    views, rows = live(p.warehouse), view_rows(p.warehouse)
    p.sql("UPDATE orders SET amount = amount + 1 WHERE id % 7 = 0")
    proc = p.run("run", str(p.module), "-o", str(p.warehouse), "--only-stale",
                 env={"STRATA_CRASH_AT": "after_create:void"}, check=None)
    assert proc.returncode == -signal.SIGKILL, (proc.returncode, proc.stderr)
    assert live(p.warehouse) == views and view_rows(p.warehouse) == rows
    assert [r[1] for r in history_rows(p.warehouse)] == [first["run_id"]]
    assert p.strata_json("verify", first["run_id"], "-o", str(p.warehouse))["ok"]
    assert leftovers(p.warehouse), "the workers' committed tables are left behind"
    report = p.run_json("--only-stale")
    assert report["status"] == "published" and leftovers(p.warehouse) == set()
    assert p.strata_json("verify", report["run_id"], "-o", str(p.warehouse))["ok"]
