"""Issue 40, item 7: a `pin references` whose relation reads the pinned model (dbt's
`relationships` test from `orders` to a `customers` built from orders) is checked
after both models are built, in the same run, before anything publishes: a violation
fails the run like any pin's and publishes nothing. A cycle that remains is E013 and
says which of its reads a pin makes.

Through the real CLI on a real DuckDB file over CSV sources.
"""

from __future__ import annotations

import json
from pathlib import Path

from enginehelpers import error_code, live, no_traceback, query, strata

from strata.lsp.loader import Session
from strata.semantics.resolve import load_text

MODULE = """\
source raw_customers = file 'customers.csv' { id: int, name: text }
source raw_orders = file 'orders.csv' { id: int, customer_id: int, amount: int }

model orders {
  from raw_orders
  pin references [customer_id] -> customers [customer_id]
}

model customers {
  from raw_customers
  join_left (from orders | group customer_id | aggregate n = count(), spent = sum(amount))
    as o on o.customer_id = id
  select id as customer_id, name, coalesce(o.n, 0) as orders, coalesce(o.spent, 0) as spent
  pin unique [customer_id]
}
"""
PIN = "pin references [customer_id] -> customers [customer_id]"


def write_orders(folder: Path, rows: list[tuple[int, int, int]]) -> None:
    (folder / "orders.csv").write_text("id,customer_id,amount\n" + "".join(
        f"{i},{c},{a}\n" for i, c, a in rows))


def project(tmp_path: Path) -> Path:
    (tmp_path / "m.strata").write_text(MODULE)
    (tmp_path / "customers.csv").write_text("id,name\n1,ann\n2,bob\n")
    write_orders(tmp_path, [(1, 1, 5), (2, 2, 7), (3, 1, 1)])
    return tmp_path


def run(folder: Path, *flags: str, ok: bool = True):
    return strata("run", "m.strata", "-o", "wh.duckdb", "--json", *flags, cwd=folder, check=ok)


def checks_of(report: dict) -> dict[str, tuple[list, list]]:
    return {m["model"]: (m.get("checks", []), [s["check"] for s in m.get("skipped_checks", [])])
            for m in report["models"]}


def test_a_pin_on_a_model_its_relation_reads_is_not_an_input_of_it():
    module = load_text(MODULE)
    assert not module.diagnostics
    assert module.order == ["orders", "customers"]
    assert module.models["orders"].models_read == []
    assert module.models["orders"].pins_after == ["customers"]
    assert [p.after for p in module.plan("orders").pins] == [True]


def test_the_pin_is_checked_after_both_models_and_a_violation_publishes_nothing(tmp_path):
    folder = project(tmp_path)
    first = json.loads(run(folder).stdout)
    assert first["status"] == "published"
    assert checks_of(first)["orders"] == ([PIN], [])
    published = live(folder / "wh.duckdb")

    write_orders(folder, [(1, 1, 5), (2, 2, 7), (3, 9, 1)])  # customer 9 does not exist
    for workers in ("1", "2"):  # built in one connection, and in lanes
        failed = run(folder, "--workers", workers, ok=False)
        no_traceback(failed)
        error = json.loads(failed.stdout)["error"][0]
        assert error["code"] == "E067"
        assert error["message"] == (f"model `orders`: {PIN} violated: 1 row(s) whose "
                                    "[customer_id] is no [customer_id] of `customers`")
        assert "checked after `customers`, which reads `orders`" in error["hint"]
        assert error["notes"] == ["sample: (id=3, customer_id=9, amount=1)"]
        assert live(folder / "wh.duckdb") == published
    assert query(folder / "wh.duckdb", "SELECT customer_id, orders, spent FROM "
                 "main.v_customers ORDER BY customer_id") == [(1, 2, 6), (2, 1, 7)]

    # a run of `orders` alone checks it against the `customers` that stays published
    alone = strata("run", "m.strata", "-o", "wh.duckdb", "--models", "orders", cwd=folder)
    assert error_code(alone) == "E067"
    write_orders(folder, [(1, 1, 5), (2, 2, 7), (3, 2, 1)])
    alone = json.loads(run(folder, "--models", "orders").stdout)
    assert checks_of(alone) == {"orders": ([PIN], [])}

    # `customers` changed with the orders: checked again; then nothing changed since
    assert checks_of(json.loads(run(folder).stdout))["orders"] == ([PIN], [])
    before = live(folder / "wh.duckdb")
    again = json.loads(run(folder).stdout)
    assert checks_of(again)["orders"] == ([], [PIN])
    assert live(folder / "wh.duckdb") == before


def test_a_cycle_a_pin_closes_is_e013_and_names_the_pin(tmp_path):
    (tmp_path / "m.strata").write_text("""\
source raw { id: int, c: int }
model a {
  from raw
  pin references [c] -> b [id]
}
model b {
  from raw
  join a on a.id = id
  select id, c
}
model x {
  from b
  pin references [c] -> y [id]
}
model y {
  from raw
  pin references [c] -> x [id]
}
""")
    checked = strata("check", "m.strata", cwd=tmp_path, check=False)
    no_traceback(checked)
    text = checked.stdout + checked.stderr
    # `b` reads `a` through its steps: `a`'s pin is checked after `b`, no cycle there
    assert "a -> b" not in text and "b -> a" not in text
    assert "error[E013]: dependency cycle: x -> y -> x (`x` reads `y` by its `pin " \
           "references`; `y` reads `x` by its `pin references`)" in text
    assert "a pin's relation is built before the model, unless that relation reads " \
           "the model" in text


def test_the_editor_checks_the_pin_again_when_only_its_relation_changes(tmp_path):
    """The editor keeps the plan of a model it did not re-resolve: a pin checked after
    its relation still follows that relation's columns."""
    session = Session(root=tmp_path / "m.strata", parse_cache=None)
    first = session.check({"m.strata": MODULE})
    assert first.ok and [p.after for p in first.plan("orders").pins] == [True]
    renamed = MODULE.replace("select id as customer_id,", "select id as client_id,").replace(
        "pin unique [customer_id]", "pin unique [client_id]")
    second = session.check({"m.strata": renamed})
    assert [(d.code, d.message) for d in second.diagnostics] == [
        ("E011", "pin references: `customer_id` is not a column of `customers`")]
    again = session.check({"m.strata": MODULE})
    assert again.ok and [p.after for p in again.plan("orders").pins] == [True]


def test_strata_test_checks_the_pin_once_both_models_are_computed(tmp_path):
    (tmp_path / "m.strata").write_text(MODULE)
    (tmp_path / "t.strata").write_text("""\
test customer_seven_is_missing {
  given raw_customers { id, name; 1, 'ann' }
  given raw_orders { id, customer_id, amount; 1, 1, 5; 2, 7, 1 }
  expect customers { customer_id, orders; 1, 1 }
}
""")
    tested = strata("test", ".", cwd=tmp_path, check=False)
    no_traceback(tested)
    assert tested.returncode == 1
    assert (f"error[E067]: model `orders`: {PIN} violated: 1 row(s) whose [customer_id] is "
            "no [customer_id] of `customers`") in tested.stdout
    assert "sample: (id=2, customer_id=7, amount=1)" in tested.stdout
