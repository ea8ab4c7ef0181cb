"""Descriptions, owners and tags (issue 40, item 9): written on sources, models and
columns, shown by hover, the graph page and `strata lineage`, selected by `tag:`; never
part of a model's SQL, code fingerprint or content identity (`strata diff` calls a
change of them description-only).

Real modules, the real CLI in its own process, a real DuckDB file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from enginehelpers import error_code, execute, strata

from strata.diagnostics import StrataError
from strata.engine.fingerprints import code_fingerprints
from strata.graph import build_graph
from strata.impact.classify import METADATA, classify
from strata.lsp.hover import hover_text
from strata.lsp.index import build_index
from strata.selection import resolve
from strata.semantics import metadata
from strata.semantics.resolve import load_text
from strata.syntax import ast

BARE = """\
source orders {
  id: int
  amount: decimal(12, 2)
  status: text
}

model paid {
  from orders
  filter status = 'paid'
  select id, amount
}

model totals {
  from paid
  aggregate total = sum(amount)
}

model counts {
  from orders
  aggregate n = count()
}
"""

DESCRIBED = """\
source orders {
  description: 'Orders as the shop writes them'
  owner: 'shop-team'
  tags: [raw]
  id: int { description: 'The order id', tags: [key] }
  amount: decimal(12, 2) { description: 'Tax included' }
  status: text
}

model paid {
  description: 'Paid orders only'
  owner: 'finance'
  tags: [finance, nightly]
  from orders
  filter status = 'paid'
  select id, amount
  column amount { description: 'What the customer paid', tags: [money] }
}

model totals {
  tags: [finance]
  from paid
  aggregate total = sum(amount)
}

model counts {
  tags: [ops]
  from orders
  aggregate n = count()
}
"""

ORDERS_DATA = ("CREATE TABLE orders AS SELECT * FROM (VALUES (1, 5.00, 'paid'), "
               "(2, 7.00, 'void')) AS t(id, amount, status)")


def described() -> ast.ModelDecl:
    module = load_text(DESCRIBED, "m.strata")
    assert module.ok, module.errors
    return module


# ---------------------------------------------------------------- the language
def test_sources_models_and_columns_carry_their_meta() -> None:
    module = described()
    assert metadata.of_relation(module, "orders") == ast.Meta(
        "Orders as the shop writes them", "shop-team", ("raw",))
    assert metadata.of_relation(module, "paid") == ast.Meta(
        "Paid orders only", "finance", ("finance", "nightly"))
    assert metadata.of_column(module, "orders", "id") == ast.Meta("The order id", None, ("key",))
    assert metadata.of_column(module, "paid", "amount").tags == ("money",)
    assert metadata.of_column(module, "paid", "id") == ast.NO_META
    # meta is no property: the model's properties and columns are as without it
    assert module.models["paid"].decl.properties == ()
    assert [c.name for c in module.sources["orders"].decl.columns] == ["id", "amount", "status"]


@pytest.mark.parametrize("text, code", [
    ("model m {\n  from orders\n  tags: nightly\n}\n", "E205"),
    ("model m {\n  from orders\n  owner: finance\n}\n", "E205"),
    ("model m {\n  from orders\n  description: 'a'\n  description: 'b'\n}\n", "E018"),
    ("source s {\n  id: int { note: 'x' }\n}\n", "E019"),
    ("source s {\n  id: int { tags: 'x' }\n}\n", "E205"),
    ("source s {\n  id: int\n  description: 'a'\n  description: 'b'\n}\n", "E018"),
    ("model m {\n  from orders\n  select id\n  column id { }\n  column id { owner: 'x' }\n}\n",
     "E206"),
])
def test_wrong_meta_is_a_coded_error(text: str, code: str) -> None:
    module = load_text("source orders { id: int }\n" + text, "m.strata")
    assert [d.code for d in module.diagnostics] == [code]


def test_an_unquoted_owner_of_a_source_says_to_quote_it() -> None:
    """In a source, `owner: finance` is a column `owner` of type `finance`."""
    [diag] = load_text("source s {\n  id: int\n  owner: finance\n}\n", "m.strata").diagnostics
    assert diag.code == "E020"
    assert diag.hint.endswith("to describe the source, quote it: `owner: 'finance'`")


def test_meta_is_not_part_of_any_code_fingerprint() -> None:
    """A description or a tag never rebuilds a model: same code fingerprints."""
    bare, meta = load_text(BARE, "m.strata"), described()
    assert code_fingerprints(bare) == code_fingerprints(meta)


def test_diff_calls_a_change_of_meta_description_only() -> None:
    changed = DESCRIBED.replace("'Paid orders only'", "'Orders once paid'").replace(
        "tags: [finance]\n", "tags: [finance, weekly]\n")
    impact = classify(described(), load_text(changed, "m.strata"))
    paid, totals = impact.changes["paid"], impact.changes["totals"]
    assert (paid.status, paid.code_changed) == (METADATA, False)
    assert [f.rule for f in paid.findings] == ["description-only"]
    assert paid.findings[0].text.startswith("description changed")
    assert totals.findings[0].text.startswith("tags changed")
    assert impact.changes["counts"].status == "unchanged"


# ---------------------------------------------------------------- tag: selectors
def test_tag_selectors_pick_what_the_tags_name() -> None:
    module = described()
    assert resolve(module, ["tag:finance"]) == ["paid", "totals"]
    assert resolve(module, ["tag:nightly+"]) == ["paid", "totals"]
    assert resolve(module, ["tag:finance", "tag:ops"], ["tag:nightly"]) == ["totals", "counts"]
    assert resolve(module, [], ["tag:finance"]) == ["counts"]


def test_a_tag_no_model_carries_is_E193_with_the_nearest_tag() -> None:
    with pytest.raises(StrataError) as err:
        resolve(described(), ["tag:nightl"])
    [diag] = err.value.diagnostics
    assert (diag.code, diag.hint) == ("E193", "did you mean `nightly`?")
    with pytest.raises(StrataError) as err:
        resolve(load_text(BARE, "m.strata"), [], ["tag:x"])
    assert err.value.diagnostics[0].hint == "no model has tags: give a model `tags: [nightly]`"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "m.strata").write_text(DESCRIBED)
    (tmp_path / "shop" / "t.strata").write_text(
        "test paid_keeps_paid {\n  given orders {\n    id, amount, status\n"
        "    1, 2.0, 'paid'\n  }\n  expect paid {\n    id, amount\n    1, 2.0\n  }\n}\n")
    execute(tmp_path / "wh.duckdb", ORDERS_DATA)
    return tmp_path


def test_tag_selection_on_every_command_that_selects(project: Path) -> None:
    def run(*args: str):
        return json.loads(strata(*args, "--json", cwd=project, check=True).stdout)

    plan = run("plan", "shop", "-o", "wh.duckdb", "--select", "tag:finance")
    assert [m["model"] for m in plan["models"]] == ["paid", "totals"]
    compiled = run("compile", "shop", "--select", "tag:ops")
    assert {s["model"] for s in compiled} == {"counts"}
    tests = run("test", "shop", "--select", "tag:nightly")
    assert [t["name"] for t in tests["tests"]] == ["paid_keeps_paid"]
    built = run("build", "shop", "-o", "sql", "--exclude", "tag:finance")
    assert set(built["models"]) == {"counts"}
    report = run("run", "shop", "-o", "wh.duckdb", "--select", "tag:nightly+")
    assert sorted(report["rebuilt"]) == ["paid", "totals"]
    graph = strata("graph", "shop", "--select", "tag:ops", "--format", "mermaid",
                   cwd=project, check=True).stdout
    assert '"counts"' in graph and '"paid"' not in graph
    proc = strata("run", "shop", "-o", "wh.duckdb", "--select", "tag:nope", cwd=project)
    assert error_code(proc) == "E193"


# ---------------------------------------------------------------- where people look
def test_the_graph_carries_descriptions_owners_and_tags(project: Path) -> None:
    nodes = {n.name: n for n in build_graph(described()).nodes}
    assert nodes["paid"].to_json()["description"] == "Paid orders only"
    assert nodes["paid"].to_json()["tags"] == ["finance", "nightly"]
    assert nodes["orders"].to_json()["owner"] == "shop-team"
    assert nodes["orders"].column_descriptions == {"id": "The order id",
                                                   "amount": "Tax included"}
    assert nodes["paid"].column_descriptions == {"amount": "What the customer paid"}
    assert nodes["counts"].to_json()["description"] is None
    strata("graph", "shop", "--out", "graph.html", cwd=project, check=True)
    page = (project / "graph.html").read_text()
    assert "What the customer paid" in page and "n.description" in page


def test_lineage_shows_descriptions(project: Path) -> None:
    text = strata("lineage", "shop", "paid", cwd=project, check=True).stdout
    assert text.startswith("-- Paid orders only\n-- owner: finance\n-- tags: finance, nightly\n")
    assert "paid.amount  select: amount  -- What the customer paid" in text
    assert "orders.amount  (source column)  -- Tax included" in text
    down = strata("lineage", "shop", "orders.id", "--downstream", cwd=project, check=True).stdout
    assert down.splitlines()[0] == "orders.id  (source column)  -- The order id"
    data = json.loads(strata("lineage", "shop", "paid.amount", "--json", cwd=project,
                             check=True).stdout)
    assert data["description"] == "Paid orders only"
    assert data["columns"][0]["description"] == "What the customer paid"


def test_hover_shows_descriptions() -> None:
    module = described()
    index = build_index(module)
    lines = DESCRIBED.splitlines()
    at = next(i for i, line in enumerate(lines, 1) if line.strip() == "from paid")
    text = hover_text(index, "m.strata", at, lines[at - 1].index("paid") + 2)
    assert "model paid {" in text
    assert "Paid orders only\n\nowner: finance\n\ntags: finance, nightly\n\n" in text
    at = next(i for i, line in enumerate(lines, 1) if "sum(amount)" in line)
    text = hover_text(index, "m.strata", at, lines[at - 1].index("amount)") + 2)
    # `paid` passes the source's column on: its definition, and description, are the source's
    assert "amount: decimal" in text and "Tax included" in text


def test_hover_escapes_markdown_in_a_description() -> None:
    module = load_text("source s {\n  description: 'a *bold* `claim`'\n  id: int\n}\n"
                       "model m { from s }\n", "m.strata")
    index = build_index(module)
    text = hover_text(index, "m.strata", 5, 17)
    assert "a \\*bold\\* \\`claim\\`" in text
