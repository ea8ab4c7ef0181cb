"""`strata test` (SPEC §1.7, §3.8): test blocks run in isolated in-memory DuckDBs, given
rows replacing sources or models, expectations compared as multisets with a readable
diff, pins checked, and the `N passed, N failed` line with its exit code."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from strata.cli import compile_cmds, run_cmds, test_cmd  # noqa: F401  (registers commands)
from strata.cli.main import cli

ROOT = Path(__file__).resolve().parent.parent
STRATA = str(Path(sys.executable).parent / "strata")

MODULE = """\
source orders {
  id: int
  customer_id: int
  amount: decimal(12, 2)
  status: text
  placed: date
  updated_at: timestamp
}

source customers {
  id: int
  name: text
  region: text
}

model paid {
  from orders
  let net = amount * 0.9
  filter status = 'paid'
  select id, customer_id, net, placed, updated_at
  pin unique [id]
}

model enriched {
  from paid
  join_left customers as c on customer_id = c.id
  select id, net, c.name as name, coalesce(c.region, 'none') as region
}

model per_region {
  from enriched
  group region
  aggregate n = count(), total = sum(net), avg_net = avg(net)
}
"""


def write(tmp_path: Path, tests: str, module: str = MODULE) -> Path:
    path = tmp_path / "m.strata"
    path.write_text(module + "\n" + tests)
    return path


def run(path: Path, *extra: str):
    result = CliRunner().invoke(cli, ["test", str(path), *extra])
    return result.exit_code, result.stdout, result.stderr


PASSING = """
test paid_rows_with_customers {
  given orders {
    id, customer_id, amount, status, placed, updated_at
    1, 10, 5.00, 'paid', date '2024-01-01', timestamp '2024-01-01 10:00:00'
    2, 10, 7.00, 'void', date '2024-01-02', timestamp '2024-01-02 10:00:00'
    3, 11, 2.50, 'paid', '2024-01-03', '2024-01-03 10:00:00'
  }
  given customers {
    id, name, region
    10, 'Ann', 'eu'
  }
  expect enriched {
    id, net, name, region
    1, 4.5, 'Ann', 'eu'
    3, 2.25, null, 'none'
  }
}
"""

FAILING = """
test wrong_net {
  given orders {
    id, customer_id, amount, status
    1, 10, 5.00, 'paid'
    2, 10, 6.00, 'paid'
  }
  expect paid {
    id, net
    1, 4.5
    2, 5.5
  }
}
"""


def last_line(out: str) -> str:
    return out.rstrip("\n").splitlines()[-1]


# ---------------------------------------------------------------- pass, fail, diff
def test_passing_tests_print_ok_and_exit_0(tmp_path):
    code, out, _ = run(write(tmp_path, PASSING))
    assert code == 0, out
    assert "test paid_rows_with_customers ... ok" in out
    assert last_line(out) == "1 passed, 0 failed"


def test_failing_test_prints_a_diff_and_exits_1(tmp_path):
    code, out, _ = run(write(tmp_path, PASSING + FAILING))
    assert code == 1
    assert "test paid_rows_with_customers ... ok" in out
    assert "test wrong_net ... FAILED  (" in out and "m.strata:" in out
    assert "expect `paid` (id, net): 1 missing, 1 extra (expected 2 rows, got 2 rows)" in out
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.strip().startswith("id"))
    assert re.fullmatch(r"\s+id \| net", lines[header])
    assert re.fullmatch(r"\s+- 2\s+\| 5\.5\d*", lines[header + 1])  # expected, missing
    assert re.fullmatch(r"\s+\+ 2\s+\| 5\.4\d*", lines[header + 2])  # in the result
    assert "(- expected but missing, + in the result but not expected)" in out
    assert last_line(out) == "1 passed, 1 failed"


def test_summary_line_is_alone_and_last(tmp_path):
    _, out, _ = run(write(tmp_path, FAILING))
    assert re.fullmatch(r"\d+ passed, \d+ failed", last_line(out))
    assert last_line(out) == "0 passed, 1 failed"


def test_exit_codes_through_the_real_command(tmp_path):
    good = subprocess.run([STRATA, "test", str(write(tmp_path, PASSING))],
                          capture_output=True, text=True, check=False)
    assert good.returncode == 0 and good.stdout.splitlines()[-1] == "1 passed, 0 failed"
    bad = subprocess.run([STRATA, "test", str(write(tmp_path, FAILING))],
                         capture_output=True, text=True, check=False)
    assert bad.returncode == 1 and bad.stdout.splitlines()[-1] == "0 passed, 1 failed"


def test_json_report(tmp_path):
    code, out, _ = run(write(tmp_path, PASSING + FAILING), "--json")
    assert code == 1
    data = json.loads(out)
    assert (data["passed"], data["failed"]) == (1, 1)
    failed = data["tests"][1]
    assert failed["name"] == "wrong_net" and failed["status"] == "failed"
    (failure,) = failed["failures"]
    assert failure["kind"] == "expect" and failure["model"] == "paid"
    assert failure["columns"] == ["id", "net"]
    assert [r[0] for r in failure["missing"]] == [2] and [r[0] for r in failure["extra"]] == [2]
    assert data["tests"][0]["checks"] == ["pin unique [id]",
                                          "join_left customers as c on customer_id = c.id"]


def test_models_option_selects_tests_by_expected_model(tmp_path):
    path = write(tmp_path, PASSING + FAILING)
    code, out, _ = run(path, "--models", "enriched")
    assert code == 0 and "wrong_net" not in out and last_line(out) == "1 passed, 0 failed"
    code, out, _ = run(path, "--models", "per_region")
    assert code == 0 and last_line(out) == "0 passed, 0 failed"
    code, _, err = run(path, "--models", "nope")
    assert code == 1 and "E079" in err


# ---------------------------------------------------------------- semantics
def test_multiset_comparison_counts_duplicates(tmp_path):
    tests = """
test twice {
  given orders {
    id, status
    1, 'paid'
    1, 'void'
  }
  given customers {
    id
    1
  }
  expect enriched {
    id
    1
    1
  }
}
"""
    module = MODULE.replace("pin unique [id]", "")
    code, out, _ = run(write(tmp_path, tests, module))
    assert code == 1
    assert "expect `enriched` (id): 1 missing (expected 2 rows, got 1 row)" in out


def test_values_compare_sensibly(tmp_path):
    """Decimals against plain numbers, doubles with arithmetic noise, dates and
    timestamps written as typed literals or text: equal values pass."""
    tests = """
test numbers_and_dates {
  given paid {
    id, customer_id, net, placed, updated_at
    1, 10, 0.10, date '2024-02-29', timestamp '2024-02-29 23:59:59'
    2, 10, 0.20, '2024-03-01', '2024-03-01 00:00:00'
  }
  expect per_region {
    region, n, total, avg_net
    'none', 2, 0.3, 0.15
  }
}
"""
    code, out, _ = run(write(tmp_path, tests))
    assert code == 0, out


def test_given_model_rows_replace_its_output(tmp_path):
    """`paid` is given: its pin and its source are not involved, `enriched` reads the
    rows, `customers` (not given) is empty."""
    tests = """
test from_given_model {
  given paid {
    id, customer_id, net
    7, 1, 1.00
    7, 2, 2.00
  }
  expect enriched {
    id, net, name, region
    7, 1.00, null, 'none'
    7, 2.00, null, 'none'
  }
}
"""
    code, out, _ = run(write(tmp_path, tests))
    assert code == 0, out


def test_sources_not_given_are_empty_and_tests_are_isolated(tmp_path):
    tests = """
test with_rows {
  given orders {
    id, status
    1, 'paid'
  }
  expect paid {
    id
    1
  }
}

test without_rows {
  expect paid {
    id
  }
}
"""
    code, out, _ = run(write(tmp_path, tests))
    assert code == 0, out
    assert last_line(out) == "2 passed, 0 failed"


def test_pin_violation_fails_the_test(tmp_path):
    tests = """
test duplicate_ids {
  given orders {
    id, status
    1, 'paid'
    1, 'paid'
  }
  expect paid {
    id
    1
    1
  }
}
"""
    code, out, _ = run(write(tmp_path, tests))
    assert code == 1
    assert "test duplicate_ids ... FAILED" in out
    assert "error[E061]: model `paid`: pin unique [id] violated" in out
    assert "sample: (id=1, rows=2)" in out


def test_fan_out_fails_the_test(tmp_path):
    tests = """
test two_customers_with_one_id {
  given orders {
    id, customer_id, status
    1, 10, 'paid'
  }
  given customers {
    id, name
    10, 'Ann'
    10, 'Ann again'
  }
  expect enriched {
    id
    1
  }
}
"""
    code, out, _ = run(write(tmp_path, tests))
    assert code == 1
    assert "error[E064]" in out and "join_left customers as c on customer_id = c.id" in out


def test_engine_error_fails_the_test_not_the_command(tmp_path):
    module = MODULE + """
model casted {
  from orders
  select cast(status as int) as n
}
"""
    tests = """
test bad_cast {
  given orders {
    id, status
    1, 'paid'
  }
  expect casted {
    n
    1
  }
}
"""
    code, out, _ = run(write(tmp_path, tests, module))
    assert code == 1
    assert "model `casted` failed in the engine" in out
    assert last_line(out) == "0 passed, 1 failed"


# ---------------------------------------------------------------- bad test blocks
@pytest.mark.parametrize("block, code, words", [
    ("given orders {\n    id, status\n    1\n  }", "E066", "row has 1 values for 2 columns"),
    ("given ordrs {\n    id\n    1\n  }", "E010", "unknown source or model `ordrs`"),
    ("expect paid {\n    id, nett\n    1, 2\n  }", "E011", "`paid` has no column `nett`"),
    ("expect orders {\n    id\n    1\n  }", "E066", "`orders` is a source"),
    ("given orders {\n    id\n    1\n  }\n  given orders {\n    id\n    2\n  }", "E066",
     "`orders` is given twice"),
    ("given paid {\n    id\n    1\n  }\n  expect paid {\n    id\n    1\n  }", "E066",
     "`paid` is both given and expected"),
    ("given orders {\n    id\n    'one'\n  }", "E066", "`id` is int, the row gives text"),
])
def test_bad_test_blocks_are_coded_diagnostics(tmp_path, block, code, words):
    path = write(tmp_path, "test bad {\n  " + block + "\n}\n")
    exit_code, out, err = run(path)
    assert exit_code == 1
    assert f"error[{code}]" in err and words in err, err
    assert "passed" not in out
    checked = CliRunner().invoke(cli, ["check", str(path), "--json"])
    assert code in [d["code"] for d in json.loads(checked.stdout)]


# ---------------------------------------------------------------- the bundled example
def test_shop_example_tests_pass():
    result = subprocess.run([STRATA, "test", "examples/shop"], capture_output=True,
                            text=True, cwd=ROOT, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    summary = result.stdout.splitlines()[-1]
    assert re.fullmatch(r"[1-9]\d* passed, 0 failed", summary), summary
