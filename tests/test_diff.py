"""`strata diff`: what a change to a module breaks, what it reaches downstream, and how
the rows change. Each test is a change a reviewer would make to examples/jaffle_shop in
a git repository of its own, checked through the real CLI (a subprocess) and, for the
data diff, a real DuckDB file."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from engine_warehouses import engine_warehouse  # noqa: F401 (the fixture)
from enginehelpers import live, strata

ROOT = Path(__file__).resolve().parent.parent
AT = "2024-09-30"  # the time spine reads run_date(): the same on both sides


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t",
                           *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """examples/jaffle_shop as `shop/`, committed: HEAD is the base."""
    shutil.copytree(ROOT / "examples" / "jaffle_shop", tmp_path / "shop")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "base")
    return tmp_path


def edit(repo: Path, file: str, old: str, new: str) -> None:
    path = repo / "shop" / "models" / file
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def diff_json(repo: Path, *args: str, code: int = 0) -> dict:
    ran = strata("diff", "shop", "--base", "HEAD", *args, "--json", cwd=repo)
    assert ran.returncode == code, ran.stderr + ran.stdout
    return json.loads(ran.stdout)


def models(found: dict) -> dict[str, dict]:
    return {m["model"]: m for m in found["models"]}


# ------------------------------------------------------------------ what a change breaks
def test_nothing_changed_is_every_model_unchanged(repo: Path) -> None:
    found = diff_json(repo)
    assert {m["status"] for m in found["models"]} == {"unchanged"}
    assert found["counts"]["unchanged"] == 19


def test_renaming_a_column_of_stg_orders_is_breaking_with_every_reader(repo: Path) -> None:
    edit(repo, "staging.strata", "order_total_usd as order_total", "order_total_usd as total_usd")
    found = diff_json(repo, code=1)  # the models reading order_total no longer compile
    assert found["status"] == "broken"
    by = models(found)
    stg = by["stg_orders"]
    assert stg["status"] == "breaking" and stg["rules"] == ["column-renamed"]
    (renamed,) = stg["columns"]
    assert renamed["change"] == "renamed" and renamed["detail"] == "order_total -> total_usd"
    # every downstream column the renamed one reaches, through column lineage
    assert {"orders.order_total", "customers.lifetime_spend", "top_orders.order_total",
            "order_share.share", "store_revenue.revenue",
            "customer_order_history.running_spend"} <= set(renamed["readers"])
    for model in ("orders", "store_revenue"):  # they read the old name: they break
        assert by[model]["rules"] == ["does-not-compile"]
        assert "E011" in by[model]["findings"][0]["text"]
    assert by["customers"]["status"] == "breaking"  # it reads `orders`
    assert "stg_orders.order_total" in by["customers"]["reached_by"]
    assert by["stg_customers"]["status"] == "unchanged"
    assert [e["code"] for e in found["errors"]] == ["E011", "E011"]


def test_adding_a_column_is_non_breaking_and_reaches_nothing(repo: Path) -> None:
    edit(repo, "staging.strata", "order_total_usd as order_total, updated_at",
         "order_total_usd as order_total, updated_at, tax_paid")
    by = models(diff_json(repo))
    assert by["stg_orders"]["status"] == "non-breaking"
    assert by["stg_orders"]["rules"] == ["columns-added"]
    assert [c["column"] for c in by["stg_orders"]["columns"]] == ["tax_paid"]
    assert by["customers"]["status"] == "unchanged"
    assert not any(m["status"] in ("breaking", "reached") for m in by.values())


def test_a_changed_filter_is_breaking_and_reaches_every_model_downstream(repo: Path) -> None:
    edit(repo, "staging.strata", "  distinct by id order updated_at desc\n",
         "  filter customer is not null\n  distinct by id order updated_at desc\n")
    stg = models(diff_json(repo))["stg_orders"]
    assert stg["status"] == "breaking" and stg["rules"] == ["rows-filtered"]
    assert "filter NOT raw_orders.customer IS NULL" in stg["findings"][0]["text"]
    assert {"orders", "customers", "store_revenue", "customers_without_orders"} <= \
        set(stg["downstream_models"])
    by = models(diff_json(repo))
    assert by["orders"]["status"] == "reached"
    assert by["orders"]["reached_by"] == ["stg_orders (rows)"]


def test_a_changed_formula_read_downstream_is_breaking(repo: Path) -> None:
    edit(repo, "staging.strata", "order_total_usd = cents_to_dollars(order_total)",
         "order_total_usd = cents_to_dollars(order_total - tax_paid)")
    stg = models(diff_json(repo))["stg_orders"]
    assert stg["rules"] == ["changed-column-read-downstream"]
    assert "customers.lifetime_spend" in stg["columns"][0]["readers"]


def test_pins_comments_and_formatting_are_metadata_only(repo: Path) -> None:
    edit(repo, "staging.strata", "model stg_order_items {\n  from raw_items",
         "model stg_order_items {\n  -- one row per item\n  from    raw_items")
    edit(repo, "staging.strata", "  select id as order_item_id, order_id, sku as product_id\n",
         "  select id as order_item_id, order_id, sku as product_id\n  pin unique [order_item_id]\n")
    edit(repo, "staging.strata", "  select id as customer_id, name as customer_name\n",
         "  select id as customer_id,\n         name as customer_name  -- as dbt names them\n")
    by = models(diff_json(repo))
    assert by["stg_order_items"]["status"] == "metadata"
    assert by["stg_order_items"]["rules"] == ["pins-only"]
    assert by["stg_customers"]["status"] == "metadata"
    assert by["stg_customers"]["rules"] == ["formatting-only"]
    assert not by["stg_customers"]["rebuild"]


def test_added_and_removed_models(repo: Path) -> None:
    path = repo / "shop" / "models" / "marts.strata"
    text = path.read_text()
    start = text.index("-- The kinds of product")
    end = text.index("-- Each customer's orders beside")
    path.write_text(text[:start] + text[end:] + "\nmodel big_orders {\n  from orders\n"
                    "  filter order_total > 20\n}\n")
    by = models(diff_json(repo))
    assert by["product_types"]["status"] == "removed"
    assert by["big_orders"]["status"] == "added"


# ------------------------------------------------------------------ the report's forms
def test_markdown_is_a_table_then_details(repo: Path) -> None:
    edit(repo, "staging.strata", "  distinct by id order updated_at desc\n",
         "  filter customer is not null\n  distinct by id order updated_at desc\n")
    ran = strata("diff", "shop", "--base", "HEAD", "--format", "markdown", cwd=repo, check=True)
    lines = ran.stdout.splitlines()
    assert lines[0] == "### Strata: impact against `HEAD (" + git(
        repo, "rev-parse", "--short=7", "HEAD").strip() + ")`"
    table = lines.index("| model | change | rule | reaches |")
    assert lines[table + 1] == "|---|---|---|---|"
    assert lines[table + 2].startswith("| `stg_orders` | **breaking** | rows-filtered | ")
    assert "orders, customers" in lines[table + 2]
    assert "<details><summary>Details</summary>" in lines
    assert "#### `stg_orders`: breaking" in lines


def test_text_names_the_rule_that_decided(repo: Path) -> None:
    edit(repo, "staging.strata", "order_total_usd as order_total, updated_at",
         "order_total_usd as order_total, updated_at, tax_paid")
    ran = strata("diff", "shop", "--base", "HEAD", cwd=repo, check=True)
    assert "non-breaking stg_orders" in " ".join(ran.stdout.split())
    assert "rule columns-added: only new columns: `tax_paid`" in ran.stdout


def test_the_base_may_be_another_module_folder(repo: Path) -> None:
    shutil.copytree(repo / "shop", repo / "before")
    edit(repo, "staging.strata", "order_total_usd as order_total, updated_at",
         "order_total_usd as order_total, updated_at, tax_paid")
    ran = strata("diff", "shop", "--base", "before", "--json", cwd=repo, check=True)
    assert models(json.loads(ran.stdout))["stg_orders"]["status"] == "non-breaking"


def test_the_work_tree_is_never_touched(repo: Path) -> None:
    edit(repo, "staging.strata", "order_total_usd as order_total, updated_at",
         "order_total_usd as order_total, updated_at, tax_paid")
    before = git(repo, "status", "--porcelain")
    strata("diff", "shop", "--base", "HEAD", cwd=repo, check=True)
    assert git(repo, "status", "--porcelain") == before


@pytest.mark.parametrize(("args", "code"), [
    (("shop", "--base", "no-such-revision"), "E151"),
    (("shop",), "E154"),
    (("a", "b"), "E154"),  # two branches need -o
])
def test_bad_input_is_a_coded_error(repo: Path, args: tuple[str, ...], code: str) -> None:
    ran = strata("diff", *args, cwd=repo, check=False)
    assert ran.returncode == 1
    assert f"error[{code}]" in ran.stderr
    assert "Traceback" not in ran.stderr


def test_a_module_outside_git_needs_a_folder_as_base(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "examples" / "jaffle_shop", tmp_path / "shop")
    ran = strata("diff", "shop", "--base", "main", cwd=tmp_path, check=False)
    assert ran.returncode == 1 and "error[E150]" in ran.stderr


def test_a_module_new_since_the_base_is_e152(repo: Path) -> None:
    shutil.copytree(repo / "shop", repo / "fresh")
    ran = strata("diff", "fresh", "--base", "HEAD", cwd=repo, check=False)
    assert ran.returncode == 1 and "error[E152]" in ran.stderr


# ------------------------------------------------------------------ the data diff
@pytest.fixture
def built(repo: Path) -> Path:
    """The base published on main of a DuckDB warehouse."""
    strata("run", "shop", "-o", "w.duckdb", "--at", AT, cwd=repo, check=True)
    return repo / "w.duckdb"


def data_json(repo: Path, *args: str) -> dict:
    ran = strata("diff", "shop", "--base", "HEAD", "-o", "w.duckdb", "--at", AT, "--json",
                 *args, cwd=repo)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    return json.loads(ran.stdout)["data"]


def test_a_changed_filter_reports_the_keys_removed_downstream(repo: Path, built: Path) -> None:
    main_before = live(built)
    edit(repo, "staging.strata", "  distinct by id order updated_at desc\n",
         "  filter customer is not null\n  distinct by id order updated_at desc\n")
    data = data_json(repo, "--max-rows", "3")["models"]
    stg = data["stg_orders"]
    assert stg["key"] == ["order_id"] and stg["how"] == "full outer join on the key"
    assert (stg["base_rows"], stg["head_rows"]) == (7, 6)
    table = strata("diff", "shop", "--base", "HEAD", "-o", "w.duckdb", "--at", AT,
                   "--format", "markdown", cwd=repo, check=True).stdout.splitlines()
    assert "| model | change | rule | reaches | data |" in table
    assert any(line.startswith("| `stg_orders` | **breaking** | rows-filtered |")
               and line.endswith("| 7 → 6 rows; −1 +0 ~0 |") for line in table)
    assert (stg["removed"], stg["added"], stg["changed"]) == (1, 0, 0)
    assert stg["samples"]["removed"][0]["order_id"] == "7"  # the guest checkout
    orders = data["orders"]
    assert orders["removed"] == 1 and orders["samples"]["removed"][0]["order_id"] == "7"
    # a keyless model: counts by row hash, said so
    assert data["order_share"]["key"] is None and "row-hash" in data["order_share"]["how"]
    assert data["order_share"]["removed"] >= 1
    # an untouched model is equal by its hash, never read
    assert data["stg_customers"] == {**data["stg_customers"], "equal": True,
                                     "how": "the same snapshot: not read"}
    assert live(built) == main_before  # nothing on main changed


def test_changed_values_are_counted_per_column_with_samples(repo: Path, built: Path) -> None:
    edit(repo, "staging.strata", "order_total_usd = cents_to_dollars(order_total)",
         "order_total_usd = cents_to_dollars(order_total - tax_paid)")
    data = data_json(repo, "--max-rows", "2")["models"]
    stg = data["stg_orders"]
    assert stg["changed"] == 7 and stg["columns"]["order_total"] == 7
    assert stg["columns"]["subtotal"] == 0
    assert len(stg["samples"]["changed"]) == 2
    assert stg["samples"]["changed"][0]["order_total"] == "18.0 -> 17.0"


def test_the_branch_is_dropped_unless_kept(repo: Path, built: Path) -> None:
    edit(repo, "staging.strata", "order_total_usd as order_total, updated_at",
         "order_total_usd as order_total, updated_at, tax_paid")
    data_json(repo)
    ran = strata("branch", "list", "-o", "w.duckdb", "--json", cwd=repo, check=True)
    assert [b["name"] for b in json.loads(ran.stdout)] == ["main"]
    kept = data_json(repo, "--keep-branch")["branch"]
    ran = strata("branch", "list", "-o", "w.duckdb", "--json", cwd=repo, check=True)
    assert [b["name"] for b in json.loads(ran.stdout)] == ["main", kept]
    assert live(built, kept)["stg_orders"] != live(built)["stg_orders"]


def test_no_published_base_is_e156(repo: Path) -> None:
    ran = strata("diff", "shop", "--base", "HEAD", "-o", "empty.duckdb", cwd=repo, check=False)
    assert ran.returncode == 1 and "error[E156]" in ran.stderr


def test_two_branches_and_two_runs(repo: Path, built: Path) -> None:
    first = json.loads(strata("history", "-o", "w.duckdb", "--json", cwd=repo,
                              check=True).stdout)[0]["id"]
    strata("branch", "create", "dev", "--from", "main", "-o", "w.duckdb", cwd=repo, check=True)
    edit(repo, "staging.strata", "  distinct by id order updated_at desc\n",
         "  filter customer is not null\n  distinct by id order updated_at desc\n")
    strata("run", "shop", "-o", "w.duckdb", "--branch", "dev", "--at", AT, cwd=repo, check=True)
    ran = strata("diff", "main", "dev", "-o", "w.duckdb", "--json", cwd=repo, check=True)
    data = json.loads(ran.stdout)["data"]["models"]
    assert data["stg_orders"]["removed"] == 1 and data["stg_customers"]["equal"]
    second = json.loads(strata("history", "-o", "w.duckdb", "--branch", "dev", "--json",
                               cwd=repo, check=True).stdout)[0]["id"]
    ran = strata("diff", "--runs", first, second, "-o", "w.duckdb", "--json", cwd=repo,
                 check=True)
    data = json.loads(ran.stdout)["data"]["models"]
    assert data["orders"]["removed"] == 1
    ran = strata("diff", "main", "dev", "-o", "w.duckdb", "--format", "markdown", cwd=repo,
                 check=True)
    assert "| `stg_orders` | 7 → 6 rows; −1 +0 ~0 |" in ran.stdout


# ------------------------------------------------------------------ every engine
SMALL = """\
source raw_orders = file 'data/raw_orders.csv' {
  id: int
  customer: int
  ordered_at: timestamp
  store_id: int
  subtotal: int
  tax_paid: int
  order_total: int
  updated_at: timestamp
}

model stg_orders {
  from raw_orders
  distinct by id order updated_at desc
  select id as order_id, customer as customer_id, order_total
  pin unique [order_id]
}

model big_orders {
  from stg_orders
  filter order_total > 600
  pin unique [order_id]
}

model per_customer {
  from stg_orders
  group customer_id
  aggregate n = count()
}
"""


@pytest.fixture
def small(tmp_path: Path) -> Path:
    """Three models on jaffle-shop's orders (Spark builds each model in seconds)."""
    (tmp_path / "small" / "data").mkdir(parents=True)
    shutil.copy(ROOT / "examples" / "jaffle_shop" / "data" / "raw_orders.csv",
                tmp_path / "small" / "data")
    (tmp_path / "small" / "models.strata").write_text(SMALL)
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "base")
    return tmp_path


def test_the_data_diff_on_every_engine(small: Path, engine_wh) -> None:
    """The same change compared on DuckDB, PostgreSQL and Spark: the comparison is a
    SQLGlot tree each adapter renders for its engine, the branch is dropped after."""
    where = engine_wh.location
    strata("run", "small", "-o", where, cwd=small, check=True, timeout=500)
    path = small / "small" / "models.strata"
    path.write_text(SMALL.replace("  distinct by id", "  filter customer is not null\n"
                                  "  distinct by id"))
    ran = strata("diff", "small", "--base", "HEAD", "-o", where, "--json", "--max-rows", "2",
                 cwd=small, timeout=500)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    data = json.loads(ran.stdout)["data"]["models"]
    assert (data["stg_orders"]["removed"], data["stg_orders"]["changed"]) == (1, 0)
    assert data["stg_orders"]["samples"]["removed"][0]["order_id"] == "7"
    assert data["per_customer"]["how"].startswith("row-hash")
    assert data["per_customer"]["removed"] == 1  # the guest's group (customer NULL)
    # order 7 cost 530: big_orders' rows are the same, reused by content, never read
    assert data["big_orders"]["equal"] and data["big_orders"]["how"].endswith("not read")
    branches = strata("branch", "list", "-o", where, "--json", cwd=small, check=True)
    assert [b["name"] for b in json.loads(branches.stdout)] == ["main"]


def test_a_source_read_from_another_file_reaches_its_readers(repo: Path) -> None:
    data = repo / "shop" / "data"
    shutil.copy(data / "raw_customers.csv", data / "customers_v2.csv")
    path = repo / "shop" / "sources.strata"
    path.write_text(path.read_text().replace("data/raw_customers.csv", "data/customers_v2.csv"))
    by = models(diff_json(repo))
    assert by["stg_customers"]["status"] == "reached"
    assert by["stg_customers"]["reached_by"] == ["source raw_customers"]
    assert by["stg_orders"]["status"] == "unchanged"
