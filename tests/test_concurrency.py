"""Two processes on one warehouse: the second waits for the lock (saying so) and,
after STRATA_LOCK_TIMEOUT seconds, stops with E075: no traceback, nothing written,
and the first finishes as if alone."""

from __future__ import annotations

import json
import subprocess
import time

from enginehelpers import (
    error_code,
    history_rows,
    leftovers,
    live,
    make_project,
    objects,
    script_popen,
    view_rows,
    wait_for,
)


def paused_writer(p, tmp_path, step="before_publish", *extra):
    """A run holding the warehouse, paused at `step` until `resume` exists."""
    resume = tmp_path / "resume"
    proc = script_popen("run", str(p.module), "-o", str(p.warehouse), "--json", *extra,
                        cwd=p.dir, env={"STRATA_PAUSE_AT": step, "STRATA_PAUSE_SECONDS": "60",
                                        "STRATA_RESUME_FILE": str(resume)},
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(proc, f"paused at {step}")
    return proc, resume


def finish(proc, resume) -> dict:
    resume.touch()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    return json.loads(out)


def test_second_writer_gets_E075_after_the_lock_timeout(tmp_path):
    p = make_project(tmp_path / "proj")
    first = p.run_json()
    p.sql("UPDATE products SET name = 'renamed' WHERE id = 1")
    proc, resume = paused_writer(p, tmp_path)
    try:
        started = time.monotonic()
        second = p.run("run", str(p.module), "-o", str(p.warehouse), "--only-stale",
                       env={"STRATA_LOCK_TIMEOUT": "1"}, check=False)
        waited = time.monotonic() - started
        assert error_code(second) == "E075"
        assert "in use by another process" in second.stderr
        assert "waiting for the warehouse lock" in second.stderr
        assert waited >= 1.0
        # readers wait for the writer the same way
        reader = p.run("history", "-o", str(p.warehouse), env={"STRATA_LOCK_TIMEOUT": "0.3"},
                       check=False)
        assert error_code(reader) == "E075"
    finally:
        report = finish(proc, resume)
    # the first writer published as if alone; the second wrote nothing at all
    assert report["status"] == "published" and report["rebuilt"] == ["cheap"]
    assert [e["id"] for e in p.history()] == [report["run_id"], first["run_id"]]
    assert leftovers(p.warehouse) == set()
    assert p.strata_json("verify", report["run_id"], "-o", str(p.warehouse))["ok"]


def test_two_writers_at_once_both_finish_one_after_the_other(tmp_path):
    p = make_project(tmp_path / "proj")
    p.run_json()
    p.sql("UPDATE orders SET amount = amount + 1 WHERE id = 2")
    proc, resume = paused_writer(p, tmp_path, "after_fingerprints", "--only-stale")
    other = script_popen("run", str(p.module), "-o", str(p.warehouse), "--only-stale",
                         "--json", cwd=p.dir, env={"STRATA_LOCK_TIMEOUT": "60"},
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(other, "waiting for the warehouse lock")
    finally:
        first = finish(proc, resume)
    out, err = other.communicate(timeout=60)
    assert other.returncode == 0, err
    second = json.loads(out)
    # the first rebuilt the changed subgraph; the second then found nothing to do
    assert first["status"] == "published" and set(first["stale"]) == {"paid", "totals"}
    assert second["status"] == "up_to_date"
    assert len(history_rows(p.warehouse)) == 2
    assert leftovers(p.warehouse) == set()
    assert p.query("SELECT count(*) FROM v_paid") == [(66,)]


def test_lock_error_leaves_the_warehouse_intact(tmp_path):
    """The blocked command changes nothing: same objects, same history, same views."""
    p = make_project(tmp_path / "proj")
    p.run_json()
    before = objects(p.warehouse), history_rows(p.warehouse), live(p.warehouse)
    rows = view_rows(p.warehouse)
    proc, resume = paused_writer(p, tmp_path, "after_fingerprints", "--only-stale")
    try:
        for args in (["rollback", "abcd"], ["branch", "create", "dev"]):
            blocked = p.run(*args, "-o", str(p.warehouse), env={"STRATA_LOCK_TIMEOUT": "0.2"},
                            check=False)
            assert error_code(blocked) == "E075", args
    finally:
        report = finish(proc, resume)
    assert report["status"] == "up_to_date"
    assert (objects(p.warehouse), history_rows(p.warehouse), live(p.warehouse)) == before
    assert view_rows(p.warehouse) == rows
