"""Errors met running a module or reading its history, each with the code it should have
(three a dbt user met, issue 19 item 6).

- A CSV source missing a declared column is E072 (a contract problem, as for a table
  or a Parquet file), not E071 with DuckDB's binder text.
- `replay ID --execute` on a rollback or a branch entry recomputes the snapshots that
  entry points at (from the runs that built them) instead of E073 "unknown run".
- `history --limit` below 1 is E084: -2 silently dropped the two oldest entries and 0
  printed "no runs yet" on a warehouse full of runs.

Real DuckDB files and the real CLI in subprocesses."""

from __future__ import annotations

from enginehelpers import MODELS, built, error_code, project, strata

__all__ = ["built", "project"]  # fixtures


# ------------------------------------------------------------------ CSV missing column
def _csv_project(tmp_path, header: str, declared: str):
    (tmp_path / "orders.csv").write_text(header + "\n1,2.5\n")
    (tmp_path / "m.strata").write_text(
        "source orders = file 'orders.csv' {\n" + declared + "}\n"
        "model firsts {\n  from orders\n  select id\n}\n")
    return strata("run", "m.strata", "-o", "w.duckdb", cwd=tmp_path)


def test_a_csv_source_missing_a_declared_column_is_E072_naming_the_column(tmp_path):
    proc = _csv_project(tmp_path, "id,amount", "  id: int\n  amount: double\n  status: text\n")
    assert error_code(proc) == "E072"
    assert "column `status` is missing" in proc.stderr
    assert "Binder Error" not in proc.stderr


def test_a_csv_source_with_a_misspelt_column_is_E072_with_a_near_name(tmp_path):
    proc = _csv_project(tmp_path, "id,amount", "  id: int\n  amuont: double\n")
    assert error_code(proc) == "E072"
    assert "`amuont` is missing" in proc.stderr and "amount" in proc.stderr


def test_a_file_the_engine_cannot_read_at_all_stays_E071(tmp_path):
    (tmp_path / "m.strata").write_text(
        "source orders = file 'orders.parquet' {\n  id: int\n}\n"
        "model firsts {\n  from orders\n  select id\n}\n")
    (tmp_path / "orders.parquet").write_bytes(b"not parquet")
    proc = strata("run", "m.strata", "-o", "w.duckdb", cwd=tmp_path)
    assert error_code(proc) == "E071"


# ------------------------------------------------------------------ replay of rollback/branch
def test_replay_execute_of_a_rollback_entry_recomputes_the_snapshots_it_restored(built):
    p, first = built
    p.sql("UPDATE products SET price = price + 100 WHERE id = 1")
    p.run_json()
    back = p.strata_json("rollback", first["run_id"], "-o", str(p.warehouse))
    assert back["kind"] == "rollback"
    p.sql("UPDATE products SET price = price - 100 WHERE id = 1")  # the data as it was
    replay = p.strata_json("replay", back["id"], "-o", str(p.warehouse), "--execute")
    assert replay["kind"] == "rollback"
    assert replay["replay"]["ok"] is True
    assert {m["model"] for m in replay["replay"]["models"]} == set(MODELS)
    assert all(m["ok"] for m in replay["replay"]["models"])


def test_replay_execute_of_a_branch_entry_recomputes_the_snapshots_it_copied(built):
    p, _ = built
    p.run("branch", "create", "dev", "-o", str(p.warehouse))
    entry = next(e for e in p.history() if e["kind"] == "branch")
    replay = p.strata_json("replay", entry["id"], "-o", str(p.warehouse), "--execute")
    assert replay["replay"]["ok"] is True
    assert {m["model"] for m in replay["replay"]["models"]} == set(MODELS)


def test_replay_execute_of_a_rollback_says_differs_when_the_data_moved_on(built):
    p, first = built
    back = p.strata_json("rollback", first["run_id"], "-o", str(p.warehouse))
    p.sql("UPDATE products SET price = 1 WHERE id = 15")  # now a cheap product
    proc = p.run("replay", back["id"], "-o", str(p.warehouse), "--execute", check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "DIFFERS  cheap" in proc.stdout and "sources changed since the run" in proc.stdout


# ------------------------------------------------------------------ history --limit
def test_history_limit_below_one_is_E084_not_a_silent_slice(built):
    p, _ = built
    p.sql("UPDATE products SET price = price + 1")
    p.run_json()
    assert len(p.history()) == 2
    for bad in ("-2", "0"):
        proc = p.run("history", "-o", str(p.warehouse), "--limit", bad, check=False)
        assert error_code(proc) == "E084"
        assert f"--limit must be 1 or more, not {bad}" in proc.stderr
        assert "no runs yet" not in proc.stdout
    assert len(p.history("--limit", "1")) == 1
