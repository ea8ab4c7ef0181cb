"""Issue 19, item 4: pins for dbt's other generic tests, and a run that reports every
failing pin.

- `pin references [cols] -> rel [keys]` (relationships), `pin accepted col in (...)`
  (accepted_values), `pin holds <condition>` (expression tests): checked in SQL before
  publishing, E067/E068/E069 with counts and sample rows; NULL passes each, as in dbt.
- A run reports every failing pin of every model it built, and names the models
  downstream of a failing one as not built or checked.
- `pin rows` failing on too many rows shows a sample of them.
- Compile-time: unknown relation E010, unknown column E011, invalid pin E065.

Real DuckDB files and the real CLI in subprocesses."""

from __future__ import annotations

import json

import duckdb
import pytest
from enginehelpers import error_code, strata

from strata.semantics.resolve import load_text

SOURCES = """\
source orders {
  id: int
  customer_id: int
  amount: double
  status: text
}
source customers {
  id: int
  name: text
}
model custs {
  from customers
  pin unique [id]
}
"""

GOOD = "(1, 1, 10.0, 'paid'), (2, 2, 0.0, 'void'), (4, NULL, 1.0, NULL)"


def _project(tmp_path, models: str, orders: str = GOOD):
    (tmp_path / "m.strata").write_text(SOURCES + models)
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    con.execute(f"CREATE TABLE orders AS SELECT * FROM (VALUES {orders}) "
                "t(id, customer_id, amount, status)")
    con.execute("CREATE TABLE customers AS SELECT * FROM (VALUES (1, 'a'), (2, 'b')) t(id, name)")
    con.close()


def _run(tmp_path, *args):
    return strata("run", "m.strata", "-o", "w.duckdb", *args, cwd=tmp_path)


def _errors(proc) -> list[dict]:
    assert proc.returncode == 1, proc.stderr
    return json.loads(proc.stdout)["error"]


PINNED = """\
model paid {
  from orders
  pin references [customer_id] -> custs [id]
  pin accepted status in ('paid', 'void')
  pin holds amount >= 0
}
"""


def test_the_three_pins_pass_on_good_data_and_NULL_passes_each(tmp_path):
    _project(tmp_path, PINNED)
    proc = _run(tmp_path, "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    paid = next(m for m in report["models"] if m["model"] == "paid")
    assert "pin references [customer_id] -> custs [id]" in paid["checks"]
    assert "pin accepted status in ('paid', 'void')" in paid["checks"]
    assert "pin holds amount >= 0" in paid["checks"]


@pytest.mark.parametrize("workers", ["1", "4"])
def test_a_run_reports_every_failing_pin_of_every_model_with_samples(tmp_path, workers):
    _project(tmp_path, PINNED + "model after {\n  from paid\n}\n"
             "model nobody {\n  from custs\n  pin rows = 0\n}\n",
             orders="(1, 9, 10.0, 'paid'), (2, 2, -0.01, 'refund'), (4, NULL, 1.0, NULL)")
    proc = _run(tmp_path, "--json", "--workers", workers)
    errors = _errors(proc)
    assert [e["code"] for e in errors] == ["E067", "E068", "E069", "E063"]
    refs, accepted, holds, rows = errors
    assert "1 row(s) whose [customer_id] is no [id] of `custs`" in refs["message"]
    assert refs["notes"] == ["sample: (id=1, customer_id=9, amount=10.00, status='paid')"]
    assert "1 row(s) whose `status` is not an accepted value" in accepted["message"]
    assert "status='refund'" in accepted["notes"][0]
    assert "amount=-0.01" in holds["notes"][0]
    assert "model `nobody`: pin rows = 0 violated: the model has 2 rows" in rows["message"]
    assert rows["notes"][0] == "sample: (id=1, name='a'); (id=2, name='b')"
    assert rows["notes"][1] == "not built or checked: `after` (upstream `paid` failed)"
    con = duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True)
    views = con.execute("SELECT count(*) FROM duckdb_views() WHERE schema_name = 'main' "
                        "AND starts_with(view_name, 'v_')").fetchone()
    con.close()
    assert views == (0,)  # nothing was published


def test_a_model_may_reference_its_own_key(tmp_path):
    _project(tmp_path, "model tree {\n  from orders\n  derive parent = customer_id\n"
             "  pin references [parent] -> tree [id]\n}\n",
             orders="(1, 2, 1.0, 'paid'), (2, 9, 1.0, 'paid')")
    proc = _run(tmp_path, "--json")
    (error,) = _errors(proc)
    assert error["code"] == "E067" and "1 row(s)" in error["message"]
    assert "of `tree`" in error["message"]
    assert "parent=9" in error["notes"][0]  # 2 is an id of tree itself: it passes


def test_references_a_source_directly(tmp_path):
    _project(tmp_path, "model o {\n  from orders\n  pin references [customer_id] -> "
             "customers [id]\n}\n")
    assert _run(tmp_path).returncode == 0


def test_strata_test_checks_the_new_pins(tmp_path):
    (tmp_path / "m.strata").write_text(SOURCES + PINNED + """
test bad_status {
  given orders {
    id, customer_id, amount, status
    1, 1, 5.0, 'lost'
  }
  given customers {
    id, name
    1, 'a'
  }
}
""")
    proc = strata("test", "m.strata", cwd=tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "error[E068]" in proc.stdout + proc.stderr


@pytest.mark.parametrize("pin, code, words", [
    ("pin references [customer_id] -> nowhere [id]", "E010", "unknown source or model"),
    ("pin references [customer_id] -> custs [nope]", "E011", "`nope` is not a column of `custs`"),
    ("pin references [nope] -> custs [id]", "E011", "`nope` is not a column of `m`"),
    ("pin references [customer_id, id] -> custs [id]", "E065", "as many key columns"),
    ("pin references [status] -> custs [id]", "E065", "can never match"),
    ("pin accepted status in (1, 2)", "E065", "`status` is text but a value is int"),
    ("pin accepted status in (id)", "E065", "constant values"),
    ("pin accepted nope in ('a')", "E011", "`nope` is not a column of `m`"),
    ("pin holds amount + 1", "E065", "needs a condition (bool), not double"),
    ("pin holds sum(amount) > 0", "E033", "outside `aggregate`"),
    ("pin holds nope > 0", "E011", "unknown column `nope`"),
])
def test_an_invalid_dbt_style_pin_is_a_coded_compile_time_error(pin, code, words):
    module = load_text(SOURCES + f"model m {{\n  from orders\n  {pin}\n}}\n", "m.strata")
    found = [d for d in module.diagnostics if d.code == code]
    assert found, module.diagnostics
    assert words in found[0].message, found[0].message


def test_a_failing_pin_run_without_json_is_a_coded_error(tmp_path):
    _project(tmp_path, PINNED, orders="(1, 1, -1.0, 'paid')")
    assert error_code(_run(tmp_path)) == "E069"
