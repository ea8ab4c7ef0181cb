"""Issue 19, item 5: models that disappear. A run of the whole module drops the live
views of models no longer in it, in its publication transaction, and records them in
its history entry; `plan` shows them first; `rollback` to an earlier run brings them
back; a `--models` run leaves other views alone; a user's own `v_x` is never touched;
gc collects the orphaned snapshot once nothing keeps it; kill -9 keeps the old state.

Real DuckDB files, the CLI in its own processes, a copy of examples/shop.
"""

from __future__ import annotations

import shutil
import signal
from pathlib import Path

import pytest
from enginehelpers import ROOT, Project, leftovers, live, make_project, query, view_rows

OLD, NEW = "line_tags", "tag_rows"


def shop(tmp_path: Path) -> Project:
    folder = tmp_path / "shop"
    shutil.copytree(ROOT / "examples" / "shop", folder)
    return Project(tmp_path, folder, tmp_path / "wh.duckdb")


def rename(p: Project, old: str = OLD, new: str = NEW) -> None:
    """Rename a model everywhere the module names it (its model and test files)."""
    for path in p.module.rglob("*.strata"):
        path.write_text(path.read_text().replace(old, new))


def plan_lines(p: Project, *args: str) -> list[str]:
    out = p.run("plan", str(p.module), "-o", str(p.warehouse), *args).stdout
    return [line.strip() for line in out.splitlines()]


@pytest.fixture
def renamed(tmp_path: Path) -> tuple[Project, dict]:
    """The shop after one run, then `line_tags` renamed to `tag_rows`: (project,
    the first run's report)."""
    p = shop(tmp_path)
    first = p.run_json()
    assert OLD in live(p.warehouse)
    rename(p)
    return p, first


def test_a_whole_run_drops_the_renamed_models_view_and_records_it(renamed):
    p, _ = renamed
    old_snap = live(p.warehouse)[OLD]
    lines = plan_lines(p)
    assert f"- removed: v_{OLD} (model no longer in the module)" in lines
    planned = p.strata_json("plan", str(p.module), "-o", str(p.warehouse))
    assert planned["removed"] == [{"model": OLD, "view": f"v_{OLD}", "snapshot": old_snap,
                                   "reason": "model no longer in the module"}]

    report = p.run_json()
    assert report["status"] == "published" and report["removed"] == [OLD]
    now = live(p.warehouse)
    assert OLD not in now and NEW in now
    entry = p.history()[0]
    assert entry["id"] == report["run_id"]
    assert entry["removed"] == {OLD: old_snap} and entry["complete"] is True
    # nothing published is mutated: the snapshot stays, only the view went
    assert query(p.warehouse, "SELECT count(*) FROM duckdb_tables() WHERE schema_name = "
                 "'strata_internal' AND table_name = ?", [old_snap]) == [(1,)]
    assert OLD not in str(plan_lines(p))  # said once; the next plan has nothing to remove
    assert p.run_json()["removed"] == []


def test_rollback_restores_exactly_the_earlier_runs_views(renamed):
    p, first = renamed
    before = live(p.warehouse)
    second = p.run_json()
    after = live(p.warehouse)
    p.run("rollback", first["run_id"], "-o", str(p.warehouse))
    assert live(p.warehouse) == before  # v_line_tags back on its snapshot, v_tag_rows gone
    assert p.history()[0]["removed"] == {NEW: after[NEW]}
    assert view_rows(p.warehouse)[OLD][0] > 0
    p.run("rollback", second["run_id"], "-o", str(p.warehouse))
    assert live(p.warehouse) == after
    assert p.history()[0]["removed"] == {OLD: before[OLD]}


def test_a_models_run_leaves_other_views_alone(renamed):
    p, _ = renamed
    old_snap = live(p.warehouse)[OLD]
    assert not any("removed" in line for line in plan_lines(p, "--models", NEW))
    report = p.run_json("--models", NEW)
    assert report["removed"] == [] and p.history()[0]["removed"] == {}
    assert live(p.warehouse)[OLD] == old_snap and NEW in live(p.warehouse)
    assert p.run_json()["removed"] == [OLD]  # the next whole run does it


def test_only_stale_with_nothing_stale_still_removes(tmp_path):
    """A model deleted from the module, nothing else changed: not `everything up to
    date` while its view lingers."""
    p = make_project(tmp_path / "proj")
    p.run_json()
    text = p.module.read_text()
    p.module.write_text(text[:text.index("model cheap_count")])
    report = p.run_json("--only-stale")
    assert report["status"] == "published" and report["removed"] == ["cheap_count"]
    assert report["rebuilt"] == [] and "cheap_count" not in live(p.warehouse)
    assert p.run_json("--only-stale")["status"] == "up_to_date"


def test_a_users_own_view_or_table_named_v_x_is_untouched(tmp_path):
    p = make_project(tmp_path / "proj")
    p.run_json()
    paid = live(p.warehouse)["paid"]
    p.sql("CREATE VIEW main.v_mine AS SELECT 1 AS x",
          "CREATE TABLE main.v_other AS SELECT 2 AS y",
          # reads a snapshot, but the registry says it is `paid`'s, not `borrowed`'s
          f"CREATE VIEW main.v_borrowed AS SELECT * FROM strata_internal.{paid}")
    report = p.run_json()
    assert report["removed"] == []
    names = {r[0] for r in p.query("SELECT table_name FROM information_schema.tables "
                                   "WHERE table_schema = 'main'")}
    assert {"v_mine", "v_other", "v_borrowed"} <= names
    assert p.query("SELECT x FROM main.v_mine") == [(1,)]


def test_gc_collects_the_orphaned_snapshot_once_nothing_keeps_it(renamed):
    p, _ = renamed
    old_snap = live(p.warehouse)[OLD]
    gc = ("gc", "-o", str(p.warehouse), "--older-than", "0d", "--keep-last", "1")
    kept = p.strata_json(*gc, "--dry-run")
    assert old_snap in kept["kept"]  # live: gc cannot collect what a view reads
    p.run_json()
    assert old_snap in p.strata_json(*gc, "--keep-last", "2", "--dry-run")["kept"]
    done = p.strata_json(*gc)
    assert old_snap in [c["snapshot"] for c in done["collected"]]
    assert OLD not in live(p.warehouse)


@pytest.mark.parametrize("step", [f"after_drop_view:{OLD}", "publish_before_commit"])
def test_kill_9_during_the_removing_run_leaves_the_previous_state(renamed, step):
    p, first = renamed
    views, rows = live(p.warehouse), view_rows(p.warehouse)
    proc = p.run("run", str(p.module), "-o", str(p.warehouse),
                 env={"STRATA_CRASH_AT": step}, check=None)
    assert proc.returncode == -signal.SIGKILL, (proc.returncode, proc.stderr)
    assert live(p.warehouse) == views and view_rows(p.warehouse) == rows
    assert [e["id"] for e in p.history()] == [first["run_id"]]
    report = p.run_json()
    assert report["removed"] == [OLD] and OLD not in live(p.warehouse)
    assert leftovers(p.warehouse) == set()
