"""Build lanes (`run --workers N`): every model's CTAS runs in a lane, many small
tables to a transaction; a chain stays in one lane; a model reading two lanes'
tables waits until both committed and begins a fresh transaction. Whatever the
lanes do, the run must be the one `--workers 1` gives, and a failure anywhere in a
batch publishes nothing and leaves nothing. Real DuckDB files, the real CLI."""

from __future__ import annotations

import random

import pytest
from enginehelpers import (
    error_code,
    history_rows,
    leftovers,
    live,
    make_project,
    stale_run_after,
    view_rows,
)

from strata.engine.run.build import BUILD_BATCH, HASH_NOW_ROWS

CHAIN = BUILD_BATCH + 16  # more than one batch per lane


def chains_module(length: int = CHAIN, tail: str = "") -> str:
    """Two chains of trivial models, one per source, then models that read both."""
    parts = [("source orders {\n  id: int\n  customer_id: int\n  amount: decimal(10,2)\n"
              "  status: text\n  updated_at: timestamp\n}\n"),
             "source products {\n  id: int\n  name: text\n  price: decimal(10,2)\n}\n"]
    for side, src, column in (("o", "orders", "amount"), ("p", "products", "price")):
        for i in range(length):
            upstream, value = (src, column) if i == 0 else (f"{side}{i - 1:03d}", "v")
            parts.append(f"model {side}{i:03d} {{\n  from {upstream}\n"
                         f"  derive bumped = {value} + 1\n  select id, bumped as v\n}}\n")
    last = length - 1
    parts.append(f"model both {{\n  from o{last:03d}\n  union p{last:03d}\n}}\n")
    parts.append(f"model joined {{\n  from o{last:03d}\n  join p{last:03d} as p on id = p.id\n"
                 f"  select id, v, p.v as pv\n}}\n")
    parts.append("model after_both {\n  from both\n  aggregate n = count(), total = sum(v)\n}\n")
    return "\n".join(parts) + tail


def project(tmp_path, name, text=None):
    return make_project(tmp_path / name, orders=50, products=20, text=text or chains_module())


def test_lanes_give_the_run_one_statement_at_a_time_gives(tmp_path):
    one, four = project(tmp_path, "one"), project(tmp_path, "four")
    sequential = one.run_json("--workers", "1")
    concurrent = four.run_json("--workers", "4")
    assert concurrent["run_id"] == sequential["run_id"]
    assert [r["model"] for r in concurrent["models"]] == [r["model"]
                                                         for r in sequential["models"]]
    assert ({r["model"]: (r["status"], r["snapshot"], r["rows"]) for r in concurrent["models"]}
            == {r["model"]: (r["status"], r["snapshot"], r["rows"])
                for r in sequential["models"]})
    assert view_rows(four.warehouse) == view_rows(one.warehouse)
    rows = view_rows(four.warehouse)
    assert rows["after_both"] and rows["joined"]
    assert four.strata_json("verify", concurrent["run_id"], "-o", str(four.warehouse))["ok"]
    assert leftovers(four.warehouse) == set()


def test_only_stale_with_lanes_rebuilds_one_chain_and_what_reads_it(tmp_path):
    p = project(tmp_path, "p")
    report, moved = stale_run_after(p, "UPDATE products SET price = price + 1 WHERE id = 3")
    assert moved == {f"p{i:03d}" for i in range(CHAIN)} | {"both", "joined", "after_both"}
    fresh = project(tmp_path, "fresh")  # the same data, built from scratch
    fresh.sql("UPDATE products SET price = price + 1 WHERE id = 3")
    fresh.run_json()
    assert view_rows(p.warehouse) == view_rows(fresh.warehouse)
    assert p.strata_json("verify", report["run_id"], "-o", str(p.warehouse))["ok"]


@pytest.mark.parametrize("where", ["o005", "o070", "both"])
def test_a_failing_statement_in_a_lane_names_its_model_and_publishes_nothing(tmp_path, where):
    """The failing CTAS sits inside a lane's open batch (o005), in its second batch
    (o070), or reads two lanes (both): the error names that model, not one queued
    behind it, and the previous run stays."""
    p = project(tmp_path, "p")
    first = p.run_json()
    views, rows = live(p.warehouse), view_rows(p.warehouse)
    text = chains_module()
    from_line = text.index(f"model {where} {{\n  from ") + len(f"model {where} {{\n")
    after_from = text.index("\n", from_line) + 1
    broken = (text[:after_from] + "  filter cast('x' || cast(id as text) as int) > 0\n"
              + text[after_from:])
    p.module.write_text(broken)
    proc = p.run("run", str(p.module), "-o", str(p.warehouse), check=None)
    assert error_code(proc) == "E080", proc.stderr
    assert f"`{where}`" in proc.stderr
    assert live(p.warehouse) == views and view_rows(p.warehouse) == rows
    assert [r[1:3] for r in history_rows(p.warehouse)][:1] == [(first["run_id"], "run")]
    assert [r[2] for r in history_rows(p.warehouse)][1:] == ["failed"]  # its record only
    assert leftovers(p.warehouse) == set()


def test_a_pin_failing_on_a_lane_table_publishes_nothing(tmp_path):
    model = "model o010 {\n  from o009\n  derive bumped = v + 1\n  select id, bumped as v\n"
    text = chains_module().replace(model, model + "  pin rows <= 2\n", 1)
    assert "pin rows" in text
    p = project(tmp_path, "p", text=text)
    proc = p.run("run", str(p.module), "-o", str(p.warehouse), check=None)
    assert error_code(proc) == "E063", proc.stderr
    assert live(p.warehouse) == {}
    # published nothing: the history holds only the failed run's record
    assert [r[2] for r in history_rows(p.warehouse)] == ["failed"]
    assert leftovers(p.warehouse) == set()


def random_dag(seed: int, models: int = 40) -> str:
    """A random module over `orders` and `products`: chains, filters, unions (ids
    repeat), joins on unique ids and aggregates, each model reading one or two
    earlier ones, so lanes meet every case: inputs in their own open transaction,
    in another lane's, in two lanes', committed or not."""
    rng = random.Random(seed)
    parts = [chains_module(length=0).split("model both")[0]]
    made: list[tuple[str, bool]] = []  # (model, unique on id)
    for i in range(models):
        name = f"r{i:02d}"
        pick = rng.choice([m for m, _ in made]) if made else None
        kind = rng.choice(["root", "chain", "chain", "filter", "union", "join", "aggregate"])
        if pick is None or kind == "root":
            src, col = rng.choice([("orders", "amount"), ("products", "price")])
            body, unique = f"from {src}\n  select id, cast({col} as int) as v", True
        elif kind == "chain":
            body, unique = f"from {pick}\n  derive w = v + 1\n  select id, w as v", dict(made)[pick]
        elif kind == "filter":
            body, unique = f"from {pick}\n  filter v > {rng.randint(0, 40)}\n  select id, v", \
                dict(made)[pick]
        elif kind == "union":
            other = rng.choice([m for m, _ in made])
            body, unique = f"from {pick}\n  union {other}", False
        elif kind == "join":
            uniques = [m for m, u in made if u]
            right = rng.choice(uniques)
            body, unique = (f"from {pick}\n  join {right} as y on id = y.id\n"
                            "  select id, v + y.v as v"), dict(made)[pick]
        else:
            body, unique = (f"from {pick}\n  group id\n  aggregate total = sum(v)\n"
                            "  select id, cast(total as int) as v"), True
        parts.append(f"model {name} {{\n  {body}\n}}\n")
        made.append((name, unique))
    return "\n".join(parts)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_dags_build_the_same_with_any_number_of_lanes(tmp_path, seed):
    text = random_dag(seed)
    runs = {}
    for workers in ("1", "2", "4"):
        p = project(tmp_path, f"w{workers}", text=text)
        first = p.run_json("--workers", workers)
        p.sql("UPDATE products SET price = price + 1 WHERE id % 3 = 0")
        stale = p.run_json("--only-stale", "--workers", workers)
        runs[workers] = [(r["run_id"], {m["model"]: (m["status"], m["snapshot"], m["rows"])
                                        for m in r["models"]}) for r in (first, stale)]
        runs[workers].append(view_rows(p.warehouse))
        assert leftovers(p.warehouse) == set()
        assert p.strata_json("verify", stale["run_id"], "-o", str(p.warehouse))["ok"]
    assert runs["2"] == runs["1"] and runs["4"] == runs["1"]


# ------------------------------------------- issue 39 item 18b: what a model's pins read
PINNED_REFERENCE = """source raw_orders { order_id: int, amount: int }
source lines { order_id: int, line: int }

model stg_orders {
  from raw_orders
  derive doubled = amount * 2
  select order_id, amount, doubled
}

model order_lines {
  from lines
  select order_id, line
  pin references [order_id] -> stg_orders [order_id]
}
"""


def test_the_lanes_place_a_model_with_the_uncommitted_model_its_pins_read(tmp_path):
    """The schedule: `order_lines` reads no model in its SQL, but its pin reads
    `stg_orders`; the lanes take it as an input, so the model goes to the lane whose
    open transaction holds `stg_orders` (and is committed with or after it)."""
    from strata.engine.adapters.base import INTERNAL, Relation
    from strata.engine.lanes import Lanes
    from strata.engine.publication import adapter_of
    from strata.engine.run.build import build_inputs
    from strata.engine.warehouse import Warehouse
    from strata.semantics.resolve import load_text

    module = load_text(PINNED_REFERENCE, "m.strata")
    assert module.ok, module.errors
    assert build_inputs(module.plan("order_lines")) == ["stg_orders"]
    assert build_inputs(module.plan("stg_orders")) == []
    wh = Warehouse.open(str(tmp_path / "w.duckdb"))
    lanes = Lanes(adapter_of(wh), 4, BUILD_BATCH, HASH_NOW_ROWS)
    try:
        for model, table in (("stg_orders", "t1"), ("order_lines", "t2")):
            lanes.build(model, Relation(INTERNAL, table), None, "SELECT 1 AS order_id",
                        build_inputs(module.plan(model)))
        assert lanes.lane_of["stg_orders"].uncommitted == {"stg_orders", "order_lines"}
        assert lanes.lane_of["order_lines"] is lanes.lane_of["stg_orders"]
    finally:
        lanes.abandon()
        lanes.close()
        wh.close()


def _pinned_project(tmp_path, name: str):
    """`stg_orders` slow to build (3e6 rows), `order_lines` fast and a row group large
    (its hash runs at once, so its pin is checked as soon as its lane commits it):
    without the pin's read in the schedule the check ran while `stg_orders` sat
    uncommitted in another lane, every time."""
    p = make_project(tmp_path / name, orders=5, products=5, text=PINNED_REFERENCE)
    p.sql("CREATE TABLE raw_orders AS SELECT range::INT AS order_id, (range % 7)::INT AS "
          "amount FROM range(3000000)",
          "CREATE TABLE lines AS SELECT (range % 100)::INT AS order_id, range::INT AS line "
          "FROM range(200000)")
    return p


def test_a_pin_reading_a_model_built_in_another_lane_is_checked_after_it_commits(tmp_path):
    """Was E000 (a CatalogException: the referenced table not committed yet) in about
    half the runs with 4 workers. Every run publishes, the pin is checked, and a
    broken reference is E067 (never E000)."""
    p = _pinned_project(tmp_path, "p")
    for attempt in range(3):
        report = p.run_json("--workers", "4", *(["--full-refresh"] if attempt else []))
        assert report["status"] == "published"
        lines = next(m for m in report["models"] if m["model"] == "order_lines")
        assert lines["checks"] == ["pin references [order_id] -> stg_orders [order_id]"]
    p.sql("INSERT INTO lines VALUES (-1, -1)")
    for _ in range(2):
        proc = p.run("run", str(p.module), "-o", str(p.warehouse), "--workers", "4",
                     check=False)
        assert error_code(proc) == "E067", proc.stderr


def test_a_change_to_the_referenced_model_makes_the_pinned_model_stale(tmp_path):
    """The decision for staleness: what a model's pins read is its input like what its
    SQL reads (resolve lists it in `models_read`, which the code fingerprint and
    `--only-stale` follow). A new `stg_orders` rebuilds `order_lines` (reused by
    identity when its rows did not change) and checks its pin again, against the
    new `stg_orders`."""
    p = _pinned_project(tmp_path, "p")
    p.run_json()
    p.sql("DELETE FROM raw_orders WHERE order_id = 42")
    proc = p.run("run", str(p.module), "-o", str(p.warehouse), "--only-stale", check=False)
    assert error_code(proc) == "E067", proc.stderr
    assert "`stg_orders`" in proc.stderr
    p.sql("INSERT INTO raw_orders VALUES (42, 0)", "UPDATE raw_orders SET amount = 99 "
          "WHERE order_id = 7")  # stg_orders changes, order_lines' rows do not
    report = p.run_json("--only-stale")
    assert report["stale"]["order_lines"] == "source `raw_orders` changed"  # via stg_orders
    assert report["rebuilt"] == ["stg_orders"] and report["reused"] == ["order_lines"]
    lines = next(m for m in report["models"] if m["model"] == "order_lines")
    assert lines["checks"] == ["pin references [order_id] -> stg_orders [order_id]"]
