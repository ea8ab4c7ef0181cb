"""`--select` and `--exclude` (strata/selection.py): the resolver on a small module of
three files, then the real CLI on a real DuckDB warehouse.

    orders   -> stg_orders   -> paid  -> totals -> top_customers
    products -> stg_products -> cheap -> cheap_count
                 (models/staging.strata)  (models/marts.strata)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from enginehelpers import ORDERS_SQL, PRODUCTS_SQL, Project, error_code, execute, no_traceback

from strata.diagnostics import StrataError
from strata.selection import UNLIMITED, Selector, parse_selector, resolve, split_selectors
from strata.semantics.resolve import load_module

SOURCES = """\
source orders {
  id: int
  customer_id: int
  amount: double
  status: text
  updated_at: timestamp
}

source products {
  id: int
  name: text
  price: double
}
"""

STAGING = """\
model stg_orders {
  from orders
  select id, customer_id, amount, status
}

model stg_products {
  from products
  select id, name, price
}
"""

MARTS = """\
model paid {
  from stg_orders
  filter status = 'paid'
}

model totals {
  from paid
  group customer_id
  aggregate total = sum(amount)
}

model top_customers {
  from totals
  filter total > 100
}

model cheap {
  from stg_products
  filter price < 10
}

model cheap_count {
  from cheap
  aggregate n = count()
}
"""

ALL = ["stg_orders", "stg_products", "paid", "totals", "top_customers", "cheap",
       "cheap_count"]


def write_module(root: Path) -> Path:
    module = root / "shop"
    (module / "models").mkdir(parents=True)
    (module / "sources.strata").write_text(SOURCES)
    (module / "models" / "staging.strata").write_text(STAGING)
    (module / "models" / "marts.strata").write_text(MARTS)
    return module


@pytest.fixture
def module(tmp_path: Path):
    mod = load_module(str(write_module(tmp_path)))
    assert not mod.errors, mod.errors
    return mod


def picked(module, *select: str, exclude: tuple[str, ...] = ()) -> set[str]:
    return set(resolve(module, select, exclude))


def code_of(module, *select: str, exclude: tuple[str, ...] = ()) -> str:
    with pytest.raises(StrataError) as err:
        resolve(module, select, exclude)
    return err.value.diagnostics[0].code


# ---------------------------------------------------------------- parsing
@pytest.mark.parametrize("text, selector", [
    ("paid", Selector("paid", "model", "paid")),
    ("paid+", Selector("paid+", "model", "paid", down=UNLIMITED)),
    ("+paid", Selector("+paid", "model", "paid", up=UNLIMITED)),
    ("2+paid+1", Selector("2+paid+1", "model", "paid", up=2, down=1)),
    ("path:models/staging+", Selector("path:models/staging+", "path", "models/staging",
                                      down=UNLIMITED)),
])
def test_parse_selector(text: str, selector: Selector) -> None:
    assert parse_selector(text) == selector


def test_selectors_split_on_spaces_and_commas() -> None:
    assert split_selectors(["a b,c", " d ", ""]) == ["a", "b", "c", "d"]


# ---------------------------------------------------------------- resolving
def test_no_option_means_every_model(module) -> None:
    assert resolve(module) is None


def test_a_name_picks_that_model(module) -> None:
    assert picked(module, "paid") == {"paid"}


def test_downstream_and_upstream(module) -> None:
    assert picked(module, "stg_orders+") == {"stg_orders", "paid", "totals", "top_customers"}
    assert picked(module, "+totals") == {"stg_orders", "paid", "totals"}
    assert picked(module, "+paid+") == {"stg_orders", "paid", "totals", "top_customers"}


def test_depth_limits(module) -> None:
    assert picked(module, "stg_orders+1") == {"stg_orders", "paid"}
    assert picked(module, "1+totals") == {"paid", "totals"}
    assert picked(module, "1+paid+2") == {"stg_orders", "paid", "totals", "top_customers"}


def test_union_of_selectors_in_module_order(module) -> None:
    chosen = resolve(module, ["cheap_count paid", "stg_products"])
    assert chosen == [m for m in module.order if m in {"stg_products", "paid", "cheap_count"}]


def test_path_picks_the_models_defined_under_it(module) -> None:
    assert picked(module, "path:models/staging") == {"stg_orders", "stg_products"}
    assert picked(module, "path:models/staging.strata") == {"stg_orders", "stg_products"}
    assert picked(module, "path:models") == set(ALL)
    assert picked(module, "path:models/staging+1") == {"stg_orders", "stg_products", "paid",
                                                       "cheap"}


def test_a_name_with_a_colon_or_plus_is_that_model(tmp_path: Path) -> None:
    (tmp_path / "m.strata").write_text(SOURCES + "model `a:b+` {\n  from orders\n}\n")
    mod = load_module(str(tmp_path / "m.strata"))
    assert not mod.errors, mod.errors
    assert resolve(mod, ["a:b+"]) == ["a:b+"]


def test_exclude_removes_from_the_selection(module) -> None:
    assert picked(module, "stg_orders+", exclude=("top_customers",)) == {
        "stg_orders", "paid", "totals"}
    assert picked(module, "path:models", exclude=("path:models/staging", "cheap+")) == {
        "paid", "totals", "top_customers"}


def test_exclude_alone_removes_from_every_model(module) -> None:
    assert picked(module, exclude=("+totals",)) == {"stg_products", "top_customers", "cheap",
                                                     "cheap_count"}


@pytest.mark.parametrize("select, exclude, code", [
    (("++paid",), (), "E190"), (("owner:me",), (), "E190"), (("path:",), (), "E190"),
    (("",), (), "E190"), (("",), ("paid",), "E190"), ((), (" , ",), "E190"), (("pai+",), (), "E191"), (("paid",), ("nope",), "E191"),
    (("path:models/nowhere",), (), "E192"), (("paid",), ("+paid+",), "E192"),
    (("tag:nightly",), (), "E193"), (("paid",), ("tag:x",), "E193"),
])
def test_errors(module, select, exclude, code: str) -> None:
    assert code_of(module, *select, exclude=exclude) == code


def test_an_unknown_model_hints_the_nearest_name(module) -> None:
    with pytest.raises(StrataError) as err:
        resolve(module, ["stg_order+"])
    [diag] = err.value.diagnostics
    assert diag.code == "E191" and diag.hint == "did you mean `stg_orders`?"


# ---------------------------------------------------------------- the CLI
@pytest.fixture
def shop(tmp_path: Path) -> Project:
    module = write_module(tmp_path)
    warehouse = tmp_path / "wh.duckdb"
    execute(warehouse, ORDERS_SQL.format(name="orders", rows=50),
            PRODUCTS_SQL.format(name="products", rows=20))
    return Project(tmp_path, module, warehouse)


def test_run_select_builds_the_model_and_its_downstream(shop: Project) -> None:
    report = shop.run_json("--select", "stg_orders+")
    wanted = {"stg_orders", "paid", "totals", "top_customers"}
    assert {m["model"] for m in report["models"]} == wanted
    assert set(report["rebuilt"]) == wanted
    [entry] = shop.history()
    assert set(entry["models"]) == wanted


def test_run_select_with_exclude_and_path(shop: Project) -> None:
    report = shop.run_json("--select", "path:models/staging", "--select", "cheap+",
                           "--exclude", "stg_orders")
    # what --models stg_products,cheap,cheap_count builds: those and their upstream
    assert {m["model"] for m in report["models"]} == {"stg_products", "cheap", "cheap_count"}


def test_plan_select_plans_the_selection(shop: Project) -> None:
    out = shop.strata_json("plan", str(shop.module), "-o", str(shop.warehouse),
                           "--select", "+totals")
    assert [m["model"] for m in out["models"]] == ["stg_orders", "paid", "totals"]


def test_compile_select_compiles_the_selection(shop: Project) -> None:
    out = shop.strata_json("compile", str(shop.module), "--select", "paid+1 cheap")
    assert {s["model"] for s in out} == {"paid", "totals", "cheap"}


def test_graph_select_draws_the_selection_and_its_sources(shop: Project) -> None:
    text = shop.run("graph", str(shop.module), "--select", "stg_orders+1",
                    "--format", "mermaid").stdout
    assert all(f'"{n}"' in text for n in ("orders", "stg_orders", "paid"))
    assert not any(f'"{n}"' in text for n in ("products", "totals", "cheap"))


def test_test_select_runs_only_the_tests_of_the_selection(shop: Project) -> None:
    (shop.module / "tests.strata").write_text(
        "test paid_keeps_paid {\n  given stg_orders {\n    id, customer_id, amount, status\n"
        "    1, 1, 2.0, 'paid'\n  }\n  expect paid {\n    id, customer_id, amount, status\n"
        "    1, 1, 2.0, 'paid'\n  }\n}\n")
    ran = shop.strata_json("test", str(shop.module), "--select", "+paid")
    assert [r["name"] for r in ran["tests"]] == ["paid_keeps_paid"]
    ran = shop.strata_json("test", str(shop.module), "--select", "cheap")
    assert ran["tests"] == []


def test_build_select_writes_the_files_of_the_selection(shop: Project) -> None:
    out = shop.strata_json("build", str(shop.module), "-o", str(shop.dir / "sql"),
                           "--select", "path:models/staging", "--exclude", "stg_products")
    assert set(out["models"]) == {"stg_orders"}
    assert sorted(p.name for p in (shop.dir / "sql").rglob("*.sql")) == ["stg_orders.sql"]


def test_backfill_select_rebuilds_the_selection_only(shop: Project) -> None:
    """A corrected `orders` reaches stg_orders, paid, totals and top_customers; the
    selection `+totals` leaves top_customers as the run built it."""
    run = shop.run_json()
    shop.sql("CREATE TABLE orders_fixed AS SELECT * FROM orders",
             "UPDATE orders_fixed SET amount = amount + 1")
    report = shop.strata_json("backfill", str(shop.module), run["run_id"], "-o",
                              str(shop.warehouse), "--source", "orders=orders_fixed",
                              "--select", "+totals", "--reason", "orders corrected")
    assert set(report["rebuilt"]) == {"stg_orders", "paid", "totals"}
    proc = shop.run("backfill", str(shop.module), run["run_id"], "-o", str(shop.warehouse),
                    "--source", "orders=orders_fixed", "--models", "paid",
                    "--select", "paid", "--reason", "again", check=False)
    assert error_code(proc) == "E194"


def test_models_keeps_working(shop: Project) -> None:
    report = shop.run_json("--models", "paid")
    assert {m["model"] for m in report["models"]} == {"stg_orders", "paid"}


@pytest.mark.parametrize("args, code", [
    (["--select", "++paid"], "E190"),
    (["--select", "stg_order+"], "E191"),
    (["--select", "paid", "--exclude", "paid"], "E192"),
    (["--select", "tag:nightly"], "E193"),
    (["--models", "paid", "--select", "paid+"], "E194"),
    (["--models", "paid", "--exclude", "totals"], "E194"),
])
@pytest.mark.parametrize("command", ["run", "plan", "compile", "test", "graph", "build"])
def test_cli_errors_are_coded_and_nothing_is_built(shop: Project, command: str,
                                                   args: list[str], code: str) -> None:
    where = {"run": ["-o", str(shop.warehouse)], "plan": ["-o", str(shop.warehouse)],
             "build": ["-o", str(shop.dir / "sql")]}.get(command, [])
    proc = shop.run(command, str(shop.module), *where, *args, check=False)
    assert proc.returncode == 1, proc.stdout
    assert error_code(proc) == code
    no_traceback(proc)
    if code == "E191":
        assert "did you mean `stg_orders`?" in proc.stderr
    if command == "run":
        assert shop.history() == []
    if command == "build":
        assert not (shop.dir / "sql").exists()


def test_help_documents_select() -> None:
    from click.testing import CliRunner

    import strata.cli.run_cmds  # noqa: F401  (registers the commands)
    from strata.cli.main import cli

    text = CliRunner().invoke(cli, ["run", "--help"]).output
    assert "--select" in text and "--exclude" in text and "path:models/staging" in text
