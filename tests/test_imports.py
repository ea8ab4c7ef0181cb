"""Modules importing modules (issue 40, item 6): `import 'path' [as q] [{ x [as y] }]`.

Real module folders on disk, resolved by the library and run by the real CLI on a
real DuckDB file: an imported model is built by the importing run under its own name,
with the SQL and code fingerprint it has in its own module; a cycle, a clash or a
name the import does not give is a coded error pointing at the import or the name.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from decimal import Decimal
from pathlib import Path

import pytest
from enginehelpers import error_code, query, strata

from strata.compiler import compile_statements
from strata.engine.fingerprints import canonical_sql, code_fingerprints
from strata.lsp.hover import hover_text, user_function_text
from strata.lsp.index import build_index
from strata.lsp.loader import Session
from strata.semantics.resolve import load_module
from strata.syntax import ast
from strata.syntax.parser import parse_text

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"

CORE = """\
fn cents_to_dollars(cents: int) -> decimal(16, 2) = cents / 100

source raw_orders { id: int, amount_cents: int, status: text }

model stg_orders {
  from raw_orders
  derive amount = cents_to_dollars(amount_cents)
  select id, amount, status
}
"""

CORE_TEST = """\
test stg_keeps_rows {
  given raw_orders {
    id, amount_cents, status
    1, 250, 'paid'
  }
  expect stg_orders {
    id, amount, status
    1, 2.50, 'paid'
  }
}
"""


def write(folder: Path, text: str, name: str = "m.strata") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text)
    return folder


def diags(path: Path) -> list[tuple[str, str, int, int]]:
    """(code, file name, line, column) of every diagnostic of the module at `path`."""
    return [(d.code, Path(d.span.file).name if d.span else "", d.span.line if d.span else 0,
             d.span.column if d.span else 0) for d in load_module(path).diagnostics]


@pytest.fixture
def two(tmp_path: Path) -> Path:
    """tmp/core (a module a team keeps, with a test) and tmp/team, importing it."""
    write(tmp_path / "core", CORE + CORE_TEST)
    return tmp_path


# ---------------------------------------------------------------- syntax
def test_an_import_is_its_path_qualifier_and_listed_names() -> None:
    [decl] = parse_text("import '../core' as c { stg_orders, cents_to_dollars as d }\n",
                        "m.strata").declarations
    assert isinstance(decl, ast.ImportDecl)
    assert (decl.path, decl.alias) == ("../core", "c")
    assert [(n.name, n.alias, n.local) for n in decl.names] == [
        ("stg_orders", None, "stg_orders"), ("cents_to_dollars", "d", "d")]


def test_qualified_relations_and_calls_keep_their_qualifier() -> None:
    tree = parse_text("model m {\n  from c.stg_orders\n  derive x = c.f(1)\n"
                      "  pin references [x] -> c.stg_orders [id]\n}\n", "m.strata")
    [model] = tree.declarations
    assert tree.qualified
    relation = model.steps[0].relation
    assert isinstance(relation, ast.QualifiedName)
    assert (relation.qualifier, relation.member) == ("c", "stg_orders")
    call = model.steps[1].items[0].expr
    assert (call.qualifier, call.name) == ("c", "f")
    assert model.pins[0].relation == "c.stg_orders"


def test_a_backticked_name_holding_a_dot_is_no_qualified_name(tmp_path: Path) -> None:
    module = write(tmp_path / "m", "source `a.b` { id: int }\nmodel m { from `a.b` }\n")
    assert diags(module) == []


# ---------------------------------------------------------------- resolving
def test_imported_names_qualified_and_listed_resolve(two: Path) -> None:
    team = write(two / "team", """\
import '../core' as core { stg_orders as orders, cents_to_dollars }

model paid {
  from orders
  filter status = 'paid'
  derive doubled = core.cents_to_dollars(amount_cents_of(id)), one = cents_to_dollars(100)
}

fn amount_cents_of(id: int) -> int = id * 200

model raw_count {
  from core.raw_orders
  aggregate n = count()
}
""")
    module = load_module(team)
    assert module.ok, module.errors
    assert module.order == ["stg_orders", "paid", "raw_count"]
    assert set(module.sources) == {"raw_orders"}
    assert module.models["paid"].models_read == ["stg_orders"]
    # the imported module's tests are its own
    assert module.tests == {}
    sql = {s.model: s.sql for s in compile_statements(module, "duckdb")}
    # a listed alias names the relation in the importing model's SQL
    assert "FROM v_stg_orders AS orders" in sql["paid"]


def test_an_imported_model_keeps_its_sql_and_code_fingerprint(two: Path) -> None:
    """Content identity: the model is the same model, built from either module."""
    team = write(two / "team", "import '../core' as core\n"
                 "model totals {\n  from core.stg_orders\n  aggregate total = sum(amount)\n}\n")
    home, importing = load_module(two / "core"), load_module(team)
    assert home.ok and importing.ok
    assert canonical_sql(importing.plan("stg_orders")) == canonical_sql(home.plan("stg_orders"))
    assert code_fingerprints(importing)["stg_orders"] == code_fingerprints(home)["stg_orders"]


def test_a_module_two_imports_reach_is_read_once(two: Path) -> None:
    write(two / "left", "import '../core' as core\nmodel l { from core.stg_orders }\n")
    write(two / "right", "import '../core' as core\nmodel r { from core.stg_orders }\n")
    top = write(two / "top", "import '../left' as left\nimport '../right' as right\n"
                "model both {\n  from left.l\n  join right.r on r.id = l.id\n"
                "  select l.id, r.amount\n}\n")
    module = load_module(top)
    assert module.ok, module.errors
    assert module.order == ["stg_orders", "l", "r", "both"]


def test_a_file_module_can_be_imported_and_named_by_its_stem(two: Path) -> None:
    write(two / "lib", "fn twice(x: int) -> int = x * 2\n", "money.strata")
    team = write(two / "team", "import '../lib/money.strata'\n"
                 "model m {\n  from core_free\n  derive y = money.twice(x)\n}\n"
                 "source core_free { x: int }\n")
    module = load_module(team)
    assert module.ok, module.errors
    [statement] = compile_statements(module, "duckdb")
    assert "base.x * 2 AS y" in statement.sql


# ---------------------------------------------------------------- errors
def test_E199_a_cycle_of_imports_points_at_the_import_closing_it(tmp_path: Path) -> None:
    write(tmp_path / "a", "import '../b' as b\nsource s { id: int }\nmodel a { from b.bm }\n")
    write(tmp_path / "b", "import '../a' as a\nmodel bm { from a.s }\n")
    module = load_module(tmp_path / "a")
    [diag] = module.diagnostics
    assert (diag.code, Path(diag.span.file).parent.name, diag.span.line) == ("E199", "b", 1)
    chain = diag.message.removeprefix("import cycle: ").split(" -> ")
    assert [Path(p).name for p in chain] == ["a", "b", "a"]


def test_E199_a_module_importing_itself(tmp_path: Path) -> None:
    module = write(tmp_path / "a", "import '.' as me\nsource s { id: int }\n")
    assert [d[0] for d in diags(module)] == ["E199"]


def test_E200_a_local_model_clashing_with_an_imported_one_is_said_where_it_is_local(
        two: Path) -> None:
    team = write(two / "team", "import '../core' as core\n"
                 "model Stg_Orders {\n  from core.raw_orders\n}\n")
    [diag] = load_module(team).diagnostics
    assert (diag.code, Path(diag.span.file).parent.name, diag.span.line,
            diag.span.column) == ("E200", "team", 2, 7)
    assert "core/m.strata:5:7" in diag.hint


def test_E200_a_function_of_the_module_clashing_with_an_imported_one(two: Path) -> None:
    team = write(two / "team", "import '../core' as core\n"
                 "fn cents_to_dollars(c: int) -> int = c\nmodel m { from core.stg_orders }\n")
    [diag] = load_module(team).diagnostics
    assert (diag.code, diag.span.line, diag.span.column) == ("E200", 2, 4)
    assert diag.message.startswith("function `cents_to_dollars` of this module clashes")


def test_E200_two_imported_modules_declaring_one_name(two: Path) -> None:
    write(two / "other", "source raw_orders { id: int }\n")
    team = write(two / "team", "import '../core' as core\nimport '../other' as other\n"
                 "model m { from core.stg_orders }\n")
    assert [d[0] for d in diags(team)] == ["E200"]


@pytest.mark.parametrize("text, where", [
    # an alias taking the name of the module's own declaration
    ("import '../core' as core { stg_orders as m }\nmodel m { from core.raw_orders }\n",
     (1, 28)),
    # two imports under one qualifier
    ("import '../core' as core\nimport '../core' as core\nmodel m { from core.raw_orders }\n",
     (2, 21)),
])
def test_E200_aliases_that_clash(two: Path, text: str, where: tuple[int, int]) -> None:
    [found] = diags(write(two / "team", text))
    assert found == ("E200", "m.strata", *where)


def test_E201_a_path_that_names_no_module(tmp_path: Path) -> None:
    team = write(tmp_path / "team", "import '../nowhere' as n\nmodel m { from n.x }\n")
    assert diags(team) == [("E201", "m.strata", 1, 8)]
    write(tmp_path / "empty" / "data", "no module", "readme.txt")
    team = write(tmp_path / "team", "import '../empty' as n\nmodel m { from n.x }\n")
    assert diags(team) == [("E201", "m.strata", 1, 8)]


def test_E201_a_module_inside_the_importing_one(tmp_path: Path) -> None:
    team = write(tmp_path / "team", "import 'lib' as lib\nmodel m { from lib.s }\n")
    write(team / "lib", "source s { id: int }\n")
    assert diags(team) == [("E201", "m.strata", 1, 8)]


@pytest.mark.parametrize("text, where", [
    ("import '../core' as core { nope }\nmodel m { from core.stg_orders }\n", (1, 28)),
    ("import '../core' as core\nmodel m { from core.stg_order }\n", (2, 16)),
    ("import '../core' as core\nmodel m { from zz.stg_orders }\n", (2, 16)),
    (("import '../core' as core\nmodel m {\n  from core.stg_orders\n"
     "  derive x = core.dollars(1)\n}\n"), (4, 14)),
])
def test_E202_names_an_import_does_not_give(two: Path, text: str, where) -> None:
    assert diags(write(two / "team", text)) == [("E202", "m.strata", *where)]


def test_E203_an_imported_name_written_bare_without_being_listed(two: Path) -> None:
    team = write(two / "team", "import '../core' as core\nmodel m {\n  from stg_orders\n"
                 "  derive x = cents_to_dollars(1)\n}\n")
    found = load_module(team).diagnostics
    assert [(d.code, d.span.line) for d in found] == [("E203", 3), ("E203", 4)]
    assert found[0].hint == ("write `core.stg_orders`, or list it: "
                             "`import '../core' as core { stg_orders }`")


def test_E203_a_module_a_dependency_imports_is_not_imported_here(two: Path) -> None:
    write(two / "mid", "import '../core' as core\nmodel mid { from core.stg_orders }\n")
    team = write(two / "team", "import '../mid' as mid\nmodel m { from stg_orders }\n")
    assert [d[0] for d in diags(team)] == ["E203"]


def test_E204_a_path_whose_last_part_is_no_name(tmp_path: Path) -> None:
    write(tmp_path / "my-core", CORE)
    team = write(tmp_path / "team", "import '../my-core'\nmodel m { from stg_orders }\n")
    assert diags(team) == [("E204", "m.strata", 1, 8)]
    write(team, "import '../my-core' as core\nmodel m { from core.stg_orders }\n")
    assert diags(team) == []


def test_a_syntax_error_in_an_imported_module_is_said_in_its_file(two: Path) -> None:
    write(two / "core", "model broken {\n  from\n}\n", "broken.strata")
    team = write(two / "team", "import '../core' as core\nmodel m { from core.stg_orders }\n")
    assert [(c, f) for c, f, _, _ in diags(team)] == [("E001", "broken.strata")]


# ---------------------------------------------------------------- the editor
def test_the_editor_resolves_imports_as_check_does(two: Path) -> None:
    team = write(two / "team", "import '../core' as core\nmodel m { from core.stg_orders }\n")
    session = Session(team, parse_cache=None)
    module = session.check({}, [team / "m.strata"])
    assert module.ok, module.errors
    assert module.order == ["stg_orders", "m"]
    index = build_index(module)
    model = hover_text(index, _shown(team / "m.strata"), 2, 23)  # `stg_orders`
    assert "model stg_orders {" in model and "core/m.strata:5:7" in model
    fn = user_function_text(index, module.functions["cents_to_dollars"])
    assert "function of an imported module" in fn
    edited = {_shown(team / "m.strata"): "import '../core' as core\nmodel m { from core.nope }\n"}
    module = session.check(edited, [team / "m.strata"])
    assert [d.code for d in module.diagnostics] == ["E202"]


def _shown(path: Path) -> str:
    from strata.semantics.resolve import display_path

    return display_path(path)


# ---------------------------------------------------------------- the CLI, end to end
@pytest.fixture
def finance(tmp_path: Path) -> Path:
    """examples/finance_core and finance_reports, copied side by side."""
    for name in ("finance_core", "finance_reports"):
        shutil.copytree(EXAMPLES / name, tmp_path / name)
    return tmp_path


def test_compile_plan_and_run_build_the_imported_models(finance: Path) -> None:
    reports, wh = "finance_reports", str(finance / "wh.duckdb")
    shown = strata("compile", reports, "--show-sql", cwd=finance, check=True).stdout
    assert "-- model stg_payments (full)" in shown and "-- model payments_by_method" in shown
    plan = strata("plan", reports, "-o", wh, "--json", cwd=finance, check=True).stdout
    assert '"stg_payments"' in plan
    report = json.loads(strata("run", reports, "-o", wh, "--json", cwd=finance,
                               check=True).stdout)
    assert sorted(report["rebuilt"]) == ["large_payments", "payments_by_method", "stg_payments"]
    rows = query(finance / "wh.duckdb", "select method, payments, total "
                 "from main.v_payments_by_method order by method")
    assert rows == [("bank_transfer", 1, Decimal("25.00")), ("coupon", 1, Decimal("1.00")),
                    ("credit_card", 3, Decimal("38.00")), ("gift_card", 1, Decimal("35.00"))]
    # the shared module's own run finds its model built, by content: nothing to rebuild
    again = json.loads(strata("run", "finance_core", "-o", wh, "--json", cwd=finance,
                              check=True).stdout)
    assert again["rebuilt"] == []
    # a change in the shared module reaches the importing module's plan
    core = finance / "finance_core" / "core.strata"
    core.write_text(core.read_text().replace("filter status = 'success'",
                                             "filter status != 'fail'"))
    plan = strata("plan", reports, "-o", wh, cwd=finance, check=True).stdout
    assert "stg_payments" in plan and "payments_by_method" in plan


def test_cli_errors_for_a_cycle_and_a_clash_are_coded(tmp_path: Path) -> None:
    write(tmp_path / "a", "import '../b' as b\nsource s { id: int }\nmodel a { from b.bm }\n")
    write(tmp_path / "b", "import '../a' as a\nmodel bm { from a.s }\n")
    for command in (["check", "a"], ["compile", "a"], ["run", "a", "-o", "w.duckdb"]):
        proc = strata(*command, cwd=tmp_path)
        assert error_code(proc) == "E199"
        assert "b/m.strata:1:8" in proc.stderr
    assert not (tmp_path / "w.duckdb").exists()
    write(tmp_path / "lib", "source s { id: int }\n")
    write(tmp_path / "e", "import '../lib' as lib\nmodel s { from lib.s }\n")
    proc = strata("compile", "e", cwd=tmp_path)
    assert error_code(proc) == "E200"
    assert "e/m.strata:2:7" in proc.stderr and "lib/m.strata:1:8" in proc.stderr


def test_diff_reads_the_imported_module_at_the_base_revision(finance: Path) -> None:
    """`strata diff --base REF` reads the shared module as it was too: a description
    changed there is description-only; a changed filter reaches the importing models."""
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(finance), "-c", "user.email=t@t", "-c",
                        "user.name=t", *args], check=True, capture_output=True)

    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "base")
    core = finance / "finance_core" / "core.strata"
    core.write_text(core.read_text().replace("'Successful payments, in dollars'",
                                             "'Payments that went through, in dollars'"))

    def changes() -> dict[str, dict]:
        ran = strata("diff", "finance_reports", "--base", "HEAD", "--json", cwd=finance,
                     check=True)
        return {m["model"]: m for m in json.loads(ran.stdout)["models"]}

    by = changes()
    assert (by["stg_payments"]["status"], by["stg_payments"]["rules"]) == \
        ("metadata", ["description-only"])
    assert by["payments_by_method"]["status"] == "unchanged"
    core.write_text(core.read_text().replace("filter status = 'success'",
                                             "filter status != 'fail'"))
    by = changes()
    assert by["stg_payments"]["status"] == "breaking"
    assert by["payments_by_method"]["status"] == "reached"


def test_a_listed_alias_reads_like_a_relation_of_this_module(two: Path) -> None:
    """`rel.*` names a relation in scope, never a module's: untouched by the import."""
    team = write(two / "team", "import '../core' as core { stg_orders as orders }\n"
                 "test t {\n  given core.raw_orders {\n    id, amount_cents, status\n"
                 "    1, 100, 'paid'\n  }\n  expect m {\n    id, amount\n    1, 1.00\n  }\n}\n"
                 "model m {\n  from orders\n  select orders.* except status\n}\n")
    module = load_module(team)
    assert module.ok, module.errors
    assert [b.relation for b in module.tests["t"].blocks] == ["raw_orders", "m"]
    [sql] = [s.sql for s in compile_statements(module, "duckdb") if s.model == "m"]
    assert "FROM v_stg_orders AS orders" in sql
