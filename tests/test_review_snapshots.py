"""SQL review for users' modules (issue 19, item 1): a user's repository locks every
model's SQL, per dialect, as plain .sql files, so a pull request shows how the
generated SQL changed. Two front ends, one layout (`<module>/sql_snapshots/<dialect>/
<model>.sql`): the pytest plugin (entry point `strata`, on syrupy), run here as a
real pytest in a temporary project with `pytester`, and `strata snapshot [--check]`
for CI without pytest, run as a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from strata.buildfiles import file_name
from strata.review import model_texts, module_base
from strata.semantics.resolve import load_module

pytest_plugins = ["pytester"]

STRATA = str(Path(sys.executable).with_name("strata"))
CONFIG = """\
[tool.pytest.ini_options]
strata_modules = ["models"]
strata_dialects = ["duckdb", "spark"]
"""


def strata(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([STRATA, *args], cwd=cwd, capture_output=True, text=True,
                          check=False, timeout=120)


def new_module(where: Path) -> Path:
    """A user's module: what `strata init` writes (a CSV source, two models)."""
    made = strata("init", "models", cwd=where)
    assert made.returncode == 0, made.stderr
    return where / "models"


def edit(module: Path, old: str, new: str) -> None:
    path = module / "models.strata"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


# ------------------------------------------------------------------ the pytest plugin
@pytest.fixture
def project(pytester: pytest.Pytester) -> Path:
    """A user's repository: the module and the two lines of pytest configuration."""
    new_module(pytester.path)
    pytester.makefile(".toml", pyproject=CONFIG)
    return pytester.path


def test_plugin_locks_each_model_per_dialect_then_passes(pytester, project):
    first = pytester.runpytest("-p", "no:cacheprovider", "--snapshot-update", "-v")
    first.assert_outcomes(passed=4)
    first.stdout.fnmatch_lines(["*strata-sql::test_model_sql[[]models/duckdb/paid_orders[]]*PASS*"])
    files = sorted(p.relative_to(project).as_posix()
                   for p in (project / "models" / "sql_snapshots").rglob("*.sql"))
    assert files == ["models/sql_snapshots/duckdb/customer_revenue.sql",
                     "models/sql_snapshots/duckdb/paid_orders.sql",
                     "models/sql_snapshots/spark/customer_revenue.sql",
                     "models/sql_snapshots/spark/paid_orders.sql"]
    locked = (project / "models/sql_snapshots/duckdb/paid_orders.sql").read_text()
    assert locked.startswith("-- model paid_orders (full)\n")
    assert "'data/orders.csv'" in locked  # relative to the module: no machine in it

    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=4)


def test_plugin_fails_an_edited_model_with_a_readable_sql_diff(pytester, project):
    pytester.runpytest("-p", "no:cacheprovider", "--snapshot-update").assert_outcomes(passed=4)
    edit(project / "models", "filter status = 'paid'", "filter status = 'paid' and amount > 0")

    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=2)  # paid_orders, in each dialect
    result.stdout.fnmatch_lines([
        "*the SQL of model `paid_orders` (duckdb) differs from its locked file*",
        "--- */duckdb/paid_orders.sql (locked)",
        "+++ */duckdb/paid_orders.sql (compiled now)",
        "-    orders.status = 'paid'",
        "+    orders.status = 'paid' AND orders.amount > 0",
    ])
    assert "\x1b[" not in result.stdout.str()  # plain text, readable in a CI log

    pytester.runpytest("-p", "no:cacheprovider", "--snapshot-update").assert_outcomes(passed=4)
    assert "amount > 0" in (project / "models/sql_snapshots/spark/paid_orders.sql").read_text()


def test_plugin_reports_and_deletes_the_file_of_a_removed_model(pytester, project):
    pytester.runpytest("-p", "no:cacheprovider", "--snapshot-update").assert_outcomes(passed=4)
    (project / "models" / "models.strata").write_text(
        (project / "models" / "models.strata").read_text().replace("customer_revenue",
                                                                    "revenue_by_customer"))
    renamed = pytester.runpytest("-p", "no:cacheprovider")
    assert renamed.ret != 0
    renamed.stdout.fnmatch_lines(["*2 snapshots unused*"])
    # each unused file named, with its dialect and model (issue 38: only a count)
    renamed.stdout.fnmatch_lines(["Unused *(models/sql_snapshots/duckdb/customer_revenue.sql)",
                                  "Unused *(models/sql_snapshots/spark/customer_revenue.sql)"],
                                 consecutive=False)

    pytester.runpytest("-p", "no:cacheprovider", "--snapshot-update").assert_outcomes(passed=4)
    names = {p.name for p in (project / "models/sql_snapshots/duckdb").iterdir()}
    assert names == {"paid_orders.sql", "revenue_by_customer.sql"}


def test_plugin_takes_the_module_from_the_command_line(pytester: pytest.Pytester):
    new_module(pytester.path)
    result = pytester.runpytest("-p", "no:cacheprovider", "--strata-module", "models",
                                "--strata-dialect", "postgres", "--snapshot-update")
    result.assert_outcomes(passed=2)
    assert (pytester.path / "models/sql_snapshots/postgres/paid_orders.sql").is_file()


def test_a_module_named_on_the_command_line_and_in_the_config_runs_once(pytester, project):
    """Issue 38: `--strata-module models` with pyproject's `strata_modules = ["models"]`
    ran every test twice (paid_orders0, paid_orders1)."""
    result = pytester.runpytest("-p", "no:cacheprovider", "--strata-module", "models",
                                "--snapshot-update", "-v")
    result.assert_outcomes(passed=4)
    assert "paid_orders0" not in result.stdout.str()


def test_a_test_id_the_plugin_prints_can_be_passed_back_to_pytest(pytester, project):
    """Issue 38: `pytest 'strata-sql::test_model_sql[models/duckdb/paid_orders]'`, the
    id a run printed, said the file was not found."""
    pytester.runpytest("-p", "no:cacheprovider", "--snapshot-update").assert_outcomes(passed=4)
    pytester.makepyfile(test_other="def test_other():\n    assert True\n")
    one = pytester.runpytest("-p", "no:cacheprovider", "-v",
                             "strata-sql::test_model_sql[models/duckdb/paid_orders]")
    one.assert_outcomes(passed=1)
    one.stdout.fnmatch_lines(["*strata-sql::test_model_sql[[]models/duckdb/paid_orders[]]*PASS*"])
    both = pytester.runpytest("-p", "no:cacheprovider", "test_other.py",
                              "strata-sql::test_model_sql[models/spark/paid_orders]")
    both.assert_outcomes(passed=2)  # with a file of the user's, each runs as named
    every = pytester.runpytest("-p", "no:cacheprovider", "strata-sql::test_model_sql")
    every.assert_outcomes(passed=4)
    wrong = pytester.runpytest("-p", "no:cacheprovider",
                               "strata-sql::test_model_sql[models/duckdb/nope]")
    assert wrong.ret != 0
    wrong.stderr.fnmatch_lines(["*no Strata SQL test has the id*--collect-only*"])


def test_plugin_fails_a_module_that_does_not_compile(pytester, project):
    edit(project / "models", "filter status = 'paid'", "filter statuz = 'paid'")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)  # one per dialect, showing the diagnostic
    result.stdout.fnmatch_lines(["*error[[]E011[]]*statuz*"])
    assert "Traceback" not in result.stdout.str()


def test_plugin_does_nothing_without_configured_modules(pytester: pytest.Pytester):
    pytester.makepyfile(test_x="def test_x():\n    assert True\n")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_plugin_and_snapshot_command_write_the_same_files(pytester, project):
    pytester.runpytest("-p", "no:cacheprovider", "--snapshot-update").assert_outcomes(passed=4)
    check = strata("snapshot", "models", "--check", cwd=project)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "(duckdb, spark)" in check.stdout  # the dialect folders present are checked


# ---------------------------------------------------------------- strata snapshot
def test_snapshot_command_writes_then_check_passes_then_fails_on_an_edit(tmp_path):
    module = new_module(tmp_path)
    wrote = strata("snapshot", "models", "--dialect", "duckdb", "--dialect", "postgres",
                   "--json", cwd=tmp_path)
    assert wrote.returncode == 0, wrote.stderr
    doc = json.loads(wrote.stdout)
    assert doc["dialects"] == ["duckdb", "postgres"] and doc["models"] == 2
    assert len(doc["written"]) == 4
    assert (module / "sql_snapshots/postgres/customer_revenue.sql").is_file()

    ok = strata("snapshot", "models", "--check", cwd=tmp_path)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.startswith("ok:")

    edit(module, "filter status = 'paid'", "filter status <> 'refunded'")
    failed = strata("snapshot", "models", "--check", cwd=tmp_path)
    assert failed.returncode == 1
    assert "changed: paid_orders [duckdb] models/sql_snapshots/duckdb/paid_orders.sql" \
        in failed.stdout
    assert "-    orders.status = 'paid'\n+    orders.status <> 'refunded'" in failed.stdout
    assert "customer_revenue" not in failed.stdout  # its own SQL did not change
    assert (module / "sql_snapshots/duckdb/paid_orders.sql").read_text().count("'paid'") == 1

    as_json = json.loads(strata("snapshot", "models", "--check", "--json", cwd=tmp_path).stdout)
    assert as_json["status"] == "changed"
    assert {(c["dialect"], c["model"], c["kind"]) for c in as_json["changes"]} == \
        {("duckdb", "paid_orders", "changed"), ("postgres", "paid_orders", "changed")}


def test_snapshot_command_lists_new_and_removed_models_and_updates_them(tmp_path):
    module = new_module(tmp_path)
    assert strata("snapshot", "models", cwd=tmp_path).returncode == 0
    edit(module, "model customer_revenue", "model revenue_by_customer")
    edit(module, "expect customer_revenue", "expect revenue_by_customer")
    failed = json.loads(strata("snapshot", "models", "--check", "--json", cwd=tmp_path).stdout)
    assert {(c["model"], c["kind"]) for c in failed["changes"]} == \
        {("revenue_by_customer", "new"), (None, "removed")}
    assert strata("snapshot", "models", cwd=tmp_path).returncode == 0
    names = {p.name for p in (module / "sql_snapshots/duckdb").iterdir()}
    assert names == {"paid_orders.sql", "revenue_by_customer.sql"}
    assert strata("snapshot", "models", "--check", cwd=tmp_path).returncode == 0


def test_snapshot_text_does_not_depend_on_the_working_directory(tmp_path):
    module = new_module(tmp_path)
    assert strata("snapshot", "models", "--dialect", "spark", "--dir", "locked",
                  cwd=tmp_path).returncode == 0
    inside = strata("snapshot", ".", "--check", "--dir", "../locked", cwd=module)
    assert inside.returncode == 0, inside.stdout + inside.stderr
    text = (tmp_path / "locked/spark/paid_orders.sql").read_text()
    assert str(tmp_path) not in text


def test_snapshot_files_use_builds_safe_names(tmp_path):
    module = new_module(tmp_path)
    edit(module, "model paid_orders", "model `../paid orders`")
    edit(module, "from paid_orders", "from `../paid orders`")
    assert strata("snapshot", "models", cwd=tmp_path).returncode == 0, "wrote"
    assert (module / "sql_snapshots/duckdb" / file_name("../paid orders")).is_file()
    assert not (module / "paid orders.sql").exists()


def test_snapshot_command_errors_are_coded(tmp_path):
    module = new_module(tmp_path)
    bad = strata("snapshot", "models", "--dialect", "oracle", cwd=tmp_path)
    assert bad.returncode == 1 and "error[E090]" in bad.stderr
    edit(module, "filter status = 'paid'", "filter statuz = 'paid'")
    broken = strata("snapshot", "models", cwd=tmp_path)
    assert broken.returncode == 1 and "error[E011]" in broken.stderr
    assert "Traceback" not in broken.stderr
    assert not (module / "sql_snapshots").exists()


def test_model_texts_are_what_compile_prints(tmp_path):
    """The library function the plugin and the command share."""
    module = new_module(tmp_path)
    texts = model_texts(load_module(module), "duckdb", module_base(module))
    assert list(texts) == ["paid_orders", "customer_revenue"]
    shown = strata("compile", ".", "--show-sql", "--models", "paid_orders", cwd=module)
    assert texts["paid_orders"] == shown.stdout.rstrip("\n") + "\n"
