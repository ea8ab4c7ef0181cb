"""Column lineage (issue 19, item 3): `strata lineage MODEL.COLUMN` gives the column's
origin down to source columns through every step (let, derive, aggregate, join,
window, sub-pipelines, set operations, select renames), as a tree and as --json;
--downstream gives the model columns that read a column. The library functions
return the same data for a graph view."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from strata.diagnostics import StrataError
from strata.lineage import column_lineage, downstream, edges, model_lineage, reader_names
from strata.semantics.resolve import load_module, load_text

STRATA = str(Path(sys.executable).with_name("strata"))
REPO = Path(__file__).resolve().parent.parent
JAFFLE = str(REPO / "examples" / "jaffle_shop")

MODULE = """\
source orders { id: int, customer_id: int, amount: decimal(12, 2), status: text, tags: list<text> }
source old_orders { id: int, customer_id: int, amount: decimal(12, 2), status: text, tags: list<text> }
source customers { id: int, name: text }

model all_orders {
  from orders
  union old_orders
}

model net_orders {
  from all_orders
  let net = amount * 0.9
  derive paid = status = 'paid'
  select id as order_id, customer_id, net as net_amount, paid
}

model customer_totals {
  from customers
  join_left (from net_orders | group customer_id | aggregate total = sum(net_amount)) as t
    on t.customer_id = id
  derive spend = coalesce(t.total, 0), label = upper(name)
  select id as customer_id, spend, label
}

model ranked {
  from net_orders
  window by customer_id order order_id
  derive n = row_number()
  select order_id, n
}

model tags {
  from orders
  expand tags as tag
  select id, tag
}
"""


@pytest.fixture(scope="module")
def module():
    mod = load_text(MODULE, "m.strata")
    assert not mod.errors, mod.errors
    return mod


def steps(origin) -> list[tuple[str, str]]:
    """The chain of (column, step) down the first input at each level."""
    out = []
    while True:
        out.append((origin.name, origin.step))
        if not origin.inputs:
            return out
        origin = origin.inputs[0]


def test_lineage_follows_derive_subpipeline_aggregate_rename_let_and_union(module):
    origin = column_lineage(module, "customer_totals", "spend")
    assert steps(origin) == [
        ("customer_totals.spend", "derive"),
        ("customer_totals/t.total", "aggregate"),  # the sub-pipeline joined as t
        ("net_orders.net_amount", "select"),       # `net as net_amount`
        ("net_orders.net", "let"),
        ("all_orders.amount", "union"),
        ("orders.amount", "source"),
    ]
    assert origin.expression == "COALESCE(total, 0)"
    assert origin.inputs[0].expression == "SUM(net_amount)"
    # a union column reads both sides
    assert origin.sources() == ["old_orders.amount", "orders.amount"]


def test_lineage_of_a_join_column_and_a_function(module):
    label = column_lineage(module, "customer_totals", "label")
    assert label.step == "derive" and label.expression == "UPPER(name)"
    assert label.sources() == ["customers.name"]
    renamed = column_lineage(module, "customer_totals", "customer_id")
    assert (renamed.step, renamed.expression, renamed.sources()) == \
        ("select", "id", ["customers.id"])


def test_lineage_of_a_window_reads_its_partition_and_order(module):
    n = column_lineage(module, "ranked", "n")
    assert n.step == "window" and n.expression.startswith("ROW_NUMBER() OVER (PARTITION BY")
    assert {"orders.customer_id", "orders.id"} <= set(n.sources())


def test_lineage_of_expand(module):
    tag = column_lineage(module, "tags", "tag")
    assert (tag.step, tag.sources()) == ("expand", ["orders.tags"])


def test_a_constant_reads_no_source():
    mod = load_text("source s { id: int }\nmodel m {\n  from s\n  derive one = 1\n}\n", "c.strata")
    assert column_lineage(mod, "m", "one").sources() == []


def test_downstream_lists_every_model_column_reading_a_source_column(module):
    tree = downstream(module, "orders", "amount")
    assert tree.kind == "source"
    assert [r.name for r in tree.readers] == ["all_orders.amount"]
    # ranked.n too: among rows tied on its order, Strata orders by every other column
    # (tie-breakers, so the result is the same on every engine): its value reads them
    assert reader_names(tree) == ["all_orders.amount", "customer_totals.spend",
                                  "net_orders.net_amount", "ranked.n"]
    assert reader_names(downstream(module, "orders", "status")) == \
        ["all_orders.status", "net_orders.paid", "ranked.n"]
    assert reader_names(downstream(module, "customers", "name")) == ["customer_totals.label"]


def test_edges_are_the_direct_reads(module):
    found = set(edges(module))
    assert ("net_orders", "net_amount", "customer_totals", "spend") in found
    assert ("all_orders", "amount", "net_orders", "net_amount") in found
    assert ("orders", "amount", "customer_totals", "spend") not in found  # not direct


def test_unknown_model_and_column_are_coded_with_did_you_mean(module):
    with pytest.raises(StrataError) as err:
        column_lineage(module, "customer_total", "spend")
    [d] = err.value.diagnostics
    assert (d.code, d.hint) == ("E010", "did you mean `customer_totals`?")
    with pytest.raises(StrataError) as err:
        column_lineage(module, "customer_totals", "spnd")
    [d] = err.value.diagnostics
    assert (d.code, d.hint) == ("E011", "did you mean `spend`?")


def test_model_lineage_gives_every_column(module):
    assert [o.column for o in model_lineage(module, "customer_totals")] == \
        ["customer_id", "spend", "label"]


# ------------------------------------------------------------------ the CLI
def strata(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([STRATA, *args], capture_output=True, text=True, check=False,
                          timeout=120)


def test_cli_prints_the_origin_of_jaffle_lifetime_spend_as_a_tree():
    shown = strata("lineage", JAFFLE, "customers.lifetime_spend")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines() == [
        "customers.lifetime_spend  derive: COALESCE(spend, 0)",
        "└─ customers/o.spend  aggregate: SUM(order_total)",
        "   └─ orders.order_total  select: order_total",
        "      └─ stg_orders.order_total  select: order_total_usd",
        "         └─ stg_orders.order_total_usd  derive: CAST(order_total AS DECIMAL(16, 2)) / 100",
        "            └─ raw_orders.order_total  (source column)",
        "sources: raw_orders.order_total",
    ]


def test_cli_json_shape():
    doc = json.loads(strata("lineage", JAFFLE, "customers.lifetime_spend", "--json").stdout)
    [col] = doc["columns"]
    assert col["column"] == "customers.lifetime_spend"
    assert col["sources"] == ["raw_orders.order_total"]
    top = col["lineage"]
    assert set(top) == {"relation", "kind", "column", "step", "expression", "inputs"}
    assert (top["relation"], top["kind"], top["step"]) == ("customers", "model", "derive")


def test_cli_downstream():
    shown = strata("lineage", JAFFLE, "raw_orders.order_total", "--downstream")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == "raw_orders.order_total  (source column)"
    assert "   │  ├─ customers.lifetime_spend" in lines  # under orders.order_total
    doc = json.loads(strata("lineage", JAFFLE, "stg_orders.order_total", "--downstream",
                            "--json").stdout)
    assert "customers.lifetime_spend" in doc["readers"]
    assert doc["downstream"]["kind"] == "model"


def test_cli_unknown_names_are_coded():
    bad = strata("lineage", JAFFLE, "customers.lifetim_spend")
    assert bad.returncode == 1
    assert "error[E011]" in bad.stderr and "did you mean `lifetime_spend`?" in bad.stderr
    bad = strata("lineage", JAFFLE, "custmers.lifetime_spend", "--json")
    assert bad.returncode == 1
    assert json.loads(bad.stdout)["error"][0]["code"] == "E010"
    assert "Traceback" not in bad.stderr


def test_cli_model_alone_shows_every_column():
    shown = strata("lineage", JAFFLE, "stg_customers")
    assert shown.returncode == 0, shown.stderr
    assert "stg_customers.customer_id  select: id" in shown.stdout
    assert "stg_customers.customer_name  select: name" in shown.stdout


def test_lineage_reads_a_module_from_disk():
    mod = load_module(JAFFLE)
    assert column_lineage(mod, "orders", "count_drinks").sources() == ["raw_products.type"]


def test_cli_downstream_of_a_model_or_source_alone_shows_each_column(tmp_path):
    """Issue 38: `lineage M --downstream` said `E011 unknown column ``` (no column)."""
    shown = strata("lineage", JAFFLE, "stg_orders", "--downstream")
    assert shown.returncode == 0, shown.stderr
    assert "E011" not in shown.stderr
    assert "stg_orders.order_total" in shown.stdout.splitlines()
    assert "customers.lifetime_spend" in shown.stdout
    doc = json.loads(strata("lineage", JAFFLE, "raw_orders", "--downstream", "--json").stdout)
    assert "raw_orders.order_total" in [c["column"] for c in doc["columns"]]
    assert all(c["downstream"]["kind"] == "source" for c in doc["columns"])
    bad = strata("lineage", JAFFLE, "stg_order", "--downstream")
    assert bad.returncode == 1 and "error[E010]" in bad.stderr
