"""`strata init DIR` (issue 19, item 7): a new module with a CSV source, two models, a
pin and a test, that runs as it is; a directory holding anything is refused (E110)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb

STRATA = str(Path(sys.executable).with_name("strata"))


def strata(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([STRATA, *args], cwd=cwd, capture_output=True, text=True,
                          check=False, timeout=120)


def test_init_writes_a_module_that_runs_and_passes_its_tests(tmp_path):
    made = strata("init", "proj", "--json", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    files = json.loads(made.stdout)["files"]
    assert {"sources.strata", "models.strata", "README.md"} <= set(files)
    assert any(f.startswith("data/") and f.endswith(".csv") for f in files)
    models = (tmp_path / "proj" / "models.strata").read_text()
    assert "pin unique" in models and "test " in models

    run = strata("run", "proj", "-o", "w.duckdb", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        rows = con.sql("select customer_id, n_orders, revenue from main.v_customer_revenue "
                       "order by customer_id").fetchall()
    # order 3 is refunded: Grace keeps one paid order
    assert [(c, n, float(r)) for c, n, r in rows] == [(1, 2, 155.5), (2, 1, 42.25), (3, 1, 10.0)]

    tested = strata("test", "proj", cwd=tmp_path)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "1 passed, 0 failed" in tested.stdout


def test_the_scaffolded_test_block_can_fail(tmp_path):
    """The test is a real check: an edit that breaks the model fails it."""
    assert strata("init", "proj", cwd=tmp_path).returncode == 0
    models = tmp_path / "proj" / "models.strata"
    models.write_text(models.read_text().replace("filter status = 'paid'", "filter true"))
    tested = strata("test", "proj", cwd=tmp_path)
    assert tested.returncode == 1
    assert "FAILED" in tested.stdout


def test_init_refuses_a_directory_that_is_not_empty(tmp_path):
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "notes.txt").write_text("mine\n")
    refused = strata("init", "proj", cwd=tmp_path)
    assert refused.returncode == 1
    assert "error[E110]" in refused.stderr and "notes.txt" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert sorted(p.name for p in (tmp_path / "proj").iterdir()) == ["notes.txt"]
    as_json = json.loads(strata("init", "proj", "--json", cwd=tmp_path).stdout)
    assert as_json["status"] == "error" and as_json["error"][0]["code"] == "E110"


def test_init_refuses_a_file_in_place_of_the_directory(tmp_path):
    (tmp_path / "proj").write_text("x")
    refused = strata("init", "proj", cwd=tmp_path)
    assert refused.returncode == 1 and "error[E110]" in refused.stderr


def test_init_accepts_an_empty_directory(tmp_path):
    (tmp_path / "proj").mkdir()
    assert strata("init", "proj", cwd=tmp_path).returncode == 0
    assert strata("check", "proj", cwd=tmp_path).returncode == 0
