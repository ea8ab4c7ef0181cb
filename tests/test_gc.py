"""`strata gc` end to end: real DuckDB files, the real CLI in subprocesses, time moved
with the injectable clock (STRATA_NOW), never with sleeps.

    orders -> big    (changes on every run below: a new snapshot each time)
    orders -> total  (a count: the same content every run, one snapshot shared by all)
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from strata.diagnostics import StrataError
from strata.engine.gc import parse_duration

STRATA = [str(Path(sys.executable).parent / "strata")]

MODULE = """\
source orders {
  id: int
  amount: int
  updated_at: timestamp
}
model big {
  from orders
  filter amount > 10
  select id, amount
}
model total {
  from orders
  aggregate n = count()
}
"""

LAYERED = """\
source orders {
  id: int
  amount: int
  updated_at: timestamp
}
model latest {
  from orders
  incremental
  merge_strategy: upsert
  merge_keys: [id]
  cdc_column: updated_at
  compact_layers: 10
  compact_ratio: 10
}
"""


def day(n: int) -> str:
    return (dt.datetime(2026, 1, 1) + dt.timedelta(days=n - 1)).isoformat(sep=" ")


@dataclass
class Project:
    dir: Path
    module: Path
    wh: Path

    def cli(self, *args: str, now: str | None = None, env: dict | None = None,
            ok: bool | None = True) -> subprocess.CompletedProcess:
        full = {k: v for k, v in os.environ.items()
                if k not in ("STRATA_CRASH_AT", "STRATA_NOW")}
        full["STRATA_LOCK_TIMEOUT"] = "5"
        if now:
            full["STRATA_NOW"] = now
        full.update(env or {})
        proc = subprocess.run([*STRATA, *args], cwd=self.dir, env=full, capture_output=True,
                              text=True, timeout=120, check=False)
        assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
        if ok is True:
            assert proc.returncode == 0, f"strata {args}:\n{proc.stdout}\n{proc.stderr}"
        if ok is False:
            assert proc.returncode != 0, f"strata {args} succeeded:\n{proc.stdout}"
        return proc

    def run(self, now: str, *args: str) -> dict:
        proc = self.cli("run", str(self.module), "-o", str(self.wh), "--json", *args, now=now)
        return json.loads(proc.stdout)

    def gc(self, now: str, *args: str, ok: bool | None = True) -> dict:
        proc = self.cli("gc", "-o", str(self.wh), "--json", *args, now=now, ok=ok)
        return json.loads(proc.stdout)

    def sql(self, *statements: str) -> None:
        con = duckdb.connect(str(self.wh))
        try:
            for s in statements:
                con.execute(s)
        finally:
            con.close()

    def query(self, sql: str, params: list | None = None) -> list[tuple]:
        con = duckdb.connect(str(self.wh), read_only=True)
        try:
            return con.execute(sql, params or []).fetchall()
        finally:
            con.close()

    def internal(self) -> set[str]:
        return {r[0] for r in self.query(
            "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'strata_internal' "
            "UNION ALL SELECT view_name FROM duckdb_views() "
            "WHERE schema_name = 'strata_internal' AND NOT internal")}

    def history(self) -> list[tuple]:
        return self.query("SELECT seq, id, kind, entry FROM strata_internal.history ORDER BY seq")

    def collected(self) -> dict[str, tuple]:
        return {r[0]: (str(r[1]), r[2]) for r in self.query(
            "SELECT name, collected_at, collected_by FROM strata_internal.collections")}

    def file_state(self) -> tuple:
        return hashlib.sha256(self.wh.read_bytes()).hexdigest(), self.wh.stat().st_size


def make(tmp_path: Path, text: str = MODULE, rows: int = 50) -> Project:
    p = Project(tmp_path, tmp_path / "m.strata", tmp_path / "wh.duckdb")
    p.module.write_text(text)
    p.sql(f"CREATE TABLE orders AS SELECT i AS id, i AS amount, "
          f"TIMESTAMP '2024-01-01' + to_seconds(i) AS updated_at FROM range({rows}) t(i)")
    return p


def history_of_runs(p: Project, days: list[int]) -> list[dict]:
    """One run per day; each changes `big` (a new snapshot) and leaves `total` alone."""
    reports = []
    for n in days:
        if reports:
            p.sql("UPDATE orders SET amount = amount + 1 WHERE id = 20")
        reports.append(p.run(day(n)))
    return reports


@pytest.fixture(scope="module")
def six_runs_template(tmp_path_factory) -> tuple[Path, list[dict]]:
    """Built once: a warehouse is self-contained, so each test gets a copy of the file."""
    folder = tmp_path_factory.mktemp("six_runs")
    p = make(folder)
    return folder, history_of_runs(p, [1, 2, 3, 4, 5, 6])


@pytest.fixture
def six_runs(six_runs_template, tmp_path: Path) -> tuple[Project, list[dict]]:
    folder, runs = six_runs_template
    for name in ("m.strata", "wh.duckdb"):
        shutil.copyfile(folder / name, tmp_path / name)
    assert not (folder / "wh.duckdb.wal").exists()
    return Project(tmp_path, tmp_path / "m.strata", tmp_path / "wh.duckdb"), runs


def snap(report: dict, model: str) -> str:
    return next(m["snapshot"] for m in report["models"] if m["model"] == model)


def error_text(proc: subprocess.CompletedProcess, code: str) -> str:
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    text = proc.stdout + proc.stderr
    assert f"error[{code}]" in text, text
    return text


# ------------------------------------------------------------------ durations
@pytest.mark.parametrize("text, seconds", [("30d", 30 * 86400), ("12h", 12 * 3600),
                                           ("90m", 5400), ("0d", 0), ("2w", 14 * 86400),
                                           ("1d12h", 36 * 3600), ("45s", 45)])
def test_durations(text, seconds):
    assert parse_duration(text) == dt.timedelta(seconds=seconds)


@pytest.mark.parametrize("text", ["30x", "", "d", "-1d", "1.5d", "10y", "30 days"])
def test_bad_duration_is_E082(text, tmp_path):
    with pytest.raises(StrataError) as err:
        parse_duration(text)
    assert err.value.code == "E082"
    p = make(tmp_path)
    p.run(day(1))
    before = p.file_state()
    error_text(p.cli("gc", "-o", str(p.wh), "--older-than", text, ok=False), "E082")
    assert p.file_state() == before


def test_bad_keep_last_and_unknown_branch(six_runs):
    p, _ = six_runs
    error_text(p.cli("gc", "-o", str(p.wh), "--older-than", "1d", "--keep-last", "-1",
                     ok=False), "E084")
    error_text(p.cli("gc", "-o", str(p.wh), "--older-than", "1d", "--branch", "nope",
                     ok=False), "E074")


# ------------------------------------------------------------------ dry run
def test_dry_run_changes_nothing(six_runs):
    p, runs = six_runs
    before = (p.file_state(), p.internal(), p.history(),
              p.query("SELECT * FROM strata_internal.snapshots ORDER BY name"))
    report = p.gc(day(60), "--older-than", "30d", "--keep-last", "2", "--dry-run",
                  "--compact-file")
    assert report["status"] == "dry_run" and report["gc_id"] is None
    assert {c["snapshot"] for c in report["collected"]} == {snap(r, "big") for r in runs[:4]}
    assert report["runs_affected"] == sorted(r["run_id"] for r in runs[:4])
    assert report["estimated_bytes"] >= 0 and report["compactable_bytes"] > 0
    after = (p.file_state(), p.internal(), p.history(),
             p.query("SELECT * FROM strata_internal.snapshots ORDER BY name"))
    assert after == before
    text = p.cli("gc", "-o", str(p.wh), "--older-than", "30d", "--keep-last", "2",
                 "--dry-run", now=day(60)).stdout
    assert "would collect 4 snapshot(s)" in text and "estimate" in text
    assert "dry run: nothing was changed" in text
    assert p.file_state() == before[0]


# ------------------------------------------------------------------ collecting
def test_gc_collects_old_runs_and_keeps_live_and_last_n(six_runs):
    p, runs = six_runs
    objects_before = p.internal()
    entries_before = p.history()
    report = p.gc(day(60), "--older-than", "30d", "--keep-last", "2")
    assert report["status"] == "collected" and report["gc_id"]
    gone = {snap(r, "big") for r in runs[:4]}
    assert {c["snapshot"] for c in report["collected"]} == gone
    assert set(report["dropped"]) == gone and report["leftovers"] == []
    assert p.internal() == objects_before - gone
    # live and kept snapshots survive, and the views read them
    assert snap(runs[5], "big") in report["kept"] and snap(runs[4], "big") in report["kept"]
    assert "live on main" in report["kept"][snap(runs[5], "big")]
    assert "among the last 2" in report["kept"][snap(runs[4], "big")]
    assert p.query("SELECT count(*) FROM v_big") == [(39,)]
    assert p.query("SELECT n FROM v_total") == [(50,)]
    # records marked, history only grows, the gc entry lists what went
    marked = p.collected()
    assert set(marked) == gone
    assert {by for _, by in marked.values()} == {report["gc_id"]}
    assert {at for at, _ in marked.values()} == {day(60)}
    entries = p.history()
    assert entries[:-1] == entries_before
    _, gc_id, kind, entry = entries[-1]
    entry = json.loads(entry)
    assert (gc_id, kind, entry["branch"]) == (report["gc_id"], "gc", "*")
    assert set(entry["details"]["dropped"]) == gone
    assert entry["details"]["runs_affected"] == sorted(r["run_id"] for r in runs[:4])
    listed = json.loads(p.cli("history", "-o", str(p.wh), "--json").stdout)
    assert listed[0]["kind"] == "gc" and len(listed) == 7
    text = p.cli("history", "-o", str(p.wh)).stdout.splitlines()[0]
    assert text.split()[:2] == [report["gc_id"], "gc"]
    assert "collected=4 leftovers=0" in text
    text = error_text(p.cli("rollback", gc_id, "-o", str(p.wh), ok=False), "E073")
    assert f"run `{gc_id}` (gc) has no snapshots" in text
    # a second gc finds nothing and writes nothing
    again = p.gc(day(60), "--older-than", "30d", "--keep-last", "2")
    assert again["status"] == "nothing_to_do" and p.history() == entries


def test_runs_newer_than_the_cutoff_are_kept(six_runs):
    p, runs = six_runs
    # day 10, older than 7d: the cutoff is day 3; with --keep-last 0 only age decides
    report = p.gc(day(10), "--older-than", "7d", "--keep-last", "0")
    assert {c["snapshot"] for c in report["collected"]} == {snap(r, "big") for r in runs[:2]}
    assert "newer than the cutoff" in report["kept"][snap(runs[2], "big")]
    hours = p.gc(day(6), "--older-than", "36h", "--keep-last", "0")  # cutoff: day 4 12:00
    assert {c["snapshot"] for c in hours["collected"]} == {snap(r, "big") for r in runs[2:4]}
    assert p.query("SELECT count(*) FROM v_big") == [(39,)]


def test_collected_run_gives_E076_for_rollback_replay_and_verify(six_runs):
    p, runs = six_runs
    report = p.gc(day(60), "--older-than", "30d", "--keep-last", "2")
    old = runs[1]["run_id"]
    for args in (["rollback", old], ["verify", old], ["replay", old, "--execute"]):
        proc = p.cli(*args, "-o", str(p.wh), ok=False)
        text = error_text(proc, "E076")
        assert "collected by gc at 2026-03-01 00:00:00" in text
        assert report["gc_id"] in text
    # the entry itself is still there to read, and says which gc took its snapshots
    shown = json.loads(p.cli("replay", old, "-o", str(p.wh), "--json").stdout)
    assert shown["id"] == old and shown["collected_by"] == report["gc_id"]
    listed = {e["id"]: e["collected_by"] for e in
              json.loads(p.cli("history", "-o", str(p.wh), "--json").stdout)}
    assert listed[old] == report["gc_id"] and listed[runs[5]["run_id"]] is None
    assert f"collected by gc {report['gc_id']}" in p.cli("history", "-o", str(p.wh)).stdout
    # kept runs still verify, replay (the last one: its sources are unchanged) and roll back
    kept = runs[4]["run_id"]
    p.cli("verify", kept, "-o", str(p.wh))
    p.cli("replay", runs[5]["run_id"], "-o", str(p.wh), "--execute")
    p.cli("rollback", kept, "-o", str(p.wh), now=day(61))
    assert p.query("SELECT count(*) FROM v_big") == [(39,)]


def test_verifying_a_gc_entry_says_what_a_gc_entry_is(six_runs):
    p, _ = six_runs
    report = p.gc(day(60), "--older-than", "30d", "--keep-last", "2")
    proc = p.cli("verify", report["gc_id"], "-o", str(p.wh), ok=False)
    text = error_text(proc, "E073")
    assert "(gc) has no snapshots to verify" in text
    assert "a gc entry records what it collected, not snapshots" in text


def test_a_snapshot_shared_by_runs_survives_while_any_of_them_is_kept(six_runs):
    p, runs = six_runs
    shared = snap(runs[0], "total")
    assert all(snap(r, "total") == shared for r in runs)  # content identity
    report = p.gc(day(60), "--older-than", "30d", "--keep-last", "1")
    assert shared not in {c["snapshot"] for c in report["collected"]}
    assert shared in p.internal()
    # the first run is collected (its `big` went), yet its `total` stays for the others
    assert runs[0]["run_id"] in report["runs_affected"]
    # move on: new content for `total`, so only old runs list the shared snapshot
    p.sql("INSERT INTO orders VALUES (1000, 1, TIMESTAMP '2024-02-01')")
    later = p.run(day(70))
    assert snap(later, "total") != shared
    kept_while_listed = p.gc(day(71), "--older-than", "30d", "--keep-last", "2")
    assert shared in kept_while_listed["kept"]  # runs[5] is still among the last 2
    assert shared in p.internal()
    p.sql("INSERT INTO orders VALUES (1001, 1, TIMESTAMP '2024-02-01')")
    p.run(day(72))
    final = p.gc(day(120), "--older-than", "30d", "--keep-last", "2")
    assert shared in {c["snapshot"] for c in final["collected"]}
    assert shared not in p.internal()
    assert p.query("SELECT n FROM v_total") == [(52,)]


def test_the_same_run_id_after_gc_publishes_under_a_new_name(tmp_path):
    """A run whose id equals a collected run's (same data again) must not reuse the
    collected snapshot's name: its registry record stays."""
    p = make(tmp_path)
    first = p.run(day(1))
    p.sql("UPDATE orders SET amount = amount + 1 WHERE id = 20")
    p.run(day(2))
    p.gc(day(60), "--older-than", "30d", "--keep-last", "1")
    p.sql("UPDATE orders SET amount = amount - 1 WHERE id = 20")
    again = p.run(day(61))
    assert again["run_id"] == first["run_id"]
    assert snap(again, "big") != snap(first, "big")
    assert p.query("SELECT count(*) FROM v_big") == [(39,)]
    p.cli("rollback", again["run_id"], "-o", str(p.wh), now=day(62))  # the newest entry
    p.cli("verify", again["run_id"], "-o", str(p.wh))


def test_user_views_over_snapshots_protect_them(six_runs):
    p, runs = six_runs
    old = snap(runs[0], "big")
    p.sql(f"CREATE VIEW main.frozen AS SELECT * FROM strata_internal.{old}")
    report = p.gc(day(60), "--older-than", "30d", "--keep-last", "1")
    assert report["kept"][old] == "read by the view main.frozen"
    assert p.query("SELECT count(*) FROM main.frozen") == [(39,)]


# ------------------------------------------------------------------ branches
def test_branch_option_considers_only_that_branch(tmp_path):
    p = make(tmp_path)
    main_runs = history_of_runs(p, [1, 2])
    p.cli("branch", "create", "dev", "--from", "main", "-o", str(p.wh), now=day(3))
    dev_runs = []
    for n in (4, 5):
        p.sql("UPDATE orders SET amount = amount + 1 WHERE id = 30")
        dev_runs.append(p.run(day(n), "--branch", "dev"))
    report = p.gc(day(60), "--older-than", "30d", "--keep-last", "1", "--branch", "dev")
    assert {c["snapshot"] for c in report["collected"]} == {snap(dev_runs[0], "big")}
    first_main = snap(main_runs[0], "big")
    assert report["kept"][first_main] == "not in the history of dev (--branch)"
    assert "live on main" in report["kept"][snap(main_runs[1], "big")]
    assert json.loads(p.history()[-1][3])["branch"] == "dev"
    # without --branch, main's old run goes too; both branches' views still read
    everything = p.gc(day(60), "--older-than", "30d", "--keep-last", "1")
    assert {c["snapshot"] for c in everything["collected"]} == {first_main}
    assert p.query("SELECT count(*) FROM main.v_big") == [(39,)]
    assert p.query("SELECT count(*) FROM dev.v_big") == [(39,)]


def test_branch_option_keeps_what_another_branch_lists(tmp_path):
    """A branch made from main lists main's snapshots in its `branch` entry. After main
    moved on, `gc --branch dev` collected them as dev's: main's run could no longer be
    verified or rolled back to, though main was outside the gc's scope."""
    p = make(tmp_path)
    main_runs = history_of_runs(p, [1, 2])
    p.cli("branch", "create", "dev", "--from", "main", "-o", str(p.wh), now=day(3))
    p.sql("UPDATE orders SET amount = amount + 2 WHERE id = 31")
    p.run(day(4))  # main moves on
    for n in (5, 6):
        p.sql("UPDATE orders SET amount = amount + 1 WHERE id = 30")
        p.run(day(n), "--branch", "dev")
    report = p.gc(day(60), "--older-than", "30d", "--keep-last", "1", "--branch", "dev")
    shared = snap(main_runs[1], "big")
    assert shared not in {c["snapshot"] for c in report["collected"]}
    assert report["kept"][shared].endswith("(outside --branch dev)")
    p.cli("verify", main_runs[1]["run_id"], "-o", str(p.wh))
    p.cli("rollback", main_runs[1]["run_id"], "-o", str(p.wh), now=day(61))


# ------------------------------------------------------------------ layered snapshots
def test_layered_snapshots_keep_their_base_and_layer_tables(tmp_path):
    p = make(tmp_path, LAYERED)
    runs = [p.run(day(1))]
    for n, rid in ((2, 3), (3, 4)):
        p.sql(f"UPDATE orders SET amount = amount * 10, updated_at = TIMESTAMP '2025-01-0{n}' "
              f"WHERE id = {rid}")
        runs.append(p.run(day(n)))
    records = {r[0]: (r[1], json.loads(r[2])) for r in p.query(
        "SELECT name, kind, parts FROM strata_internal.snapshots")}
    base, s2, s3 = (snap(r, "latest") for r in runs)
    assert records[s3][0] == "layered" and records[s3][1]["base"] == base
    layers = records[s3][1]["layers"]
    assert len(layers) == 2 and records[s2][1]["layers"] == layers[:1]
    expected = p.query("SELECT * FROM v_latest ORDER BY id")

    report = p.gc(day(60), "--older-than", "30d", "--keep-last", "1")
    # run 2's view goes; the base (run 1's table) and both layers stay for run 3
    assert [c["snapshot"] for c in report["collected"]] == [s2]
    assert report["dropped"] == [s2]
    assert report["kept"][base] == f"read by the kept layered snapshot {s3}"
    assert {base, s3, *layers} <= p.internal()
    assert p.query("SELECT * FROM v_latest ORDER BY id") == expected
    p.cli("verify", runs[2]["run_id"], "-o", str(p.wh))
    p.cli("rollback", runs[0]["run_id"], "-o", str(p.wh), now=day(61))  # base uncollected
    p.cli("rollback", runs[2]["run_id"], "-o", str(p.wh), now=day(62))

    # a full refresh leaves the chain unread: it all goes, the view before its tables
    p.sql("UPDATE orders SET amount = 0 WHERE id = 5")  # no cdc move: only a full run sees it
    p.run(day(63), "--full-refresh")
    expected = p.query("SELECT * FROM orders ORDER BY id")
    final = p.gc(day(120), "--older-than", "30d", "--keep-last", "1")
    assert set(final["dropped"]) == {base, s3, *layers}
    assert final["dropped"][0] == s3  # the view first
    assert p.query("SELECT * FROM v_latest ORDER BY id") == expected


# ------------------------------------------------------------------ leftovers, crashes
def test_crash_leftovers_are_removed_and_reported(six_runs):
    p, _ = six_runs
    p.sql("UPDATE orders SET amount = amount + 1 WHERE id = 20")
    crashed = p.cli("run", str(p.module), "-o", str(p.wh), now=day(7),
                    env={"STRATA_CRASH_AT": "before_publish"}, ok=False)
    assert crashed.returncode < 0 or crashed.returncode == 137
    registered = {r[0] for r in p.query("SELECT name FROM strata_internal.snapshots")}
    left = {n for n in p.internal() if n.startswith("snap_") and n not in registered}
    assert left, "the crash should leave an unpublished snapshot behind"
    p.sql("CREATE TABLE strata_internal.replay_deadbeef_big AS SELECT 1 AS x")  # a killed replay
    left.add("replay_deadbeef_big")
    dry = p.gc(day(8), "--older-than", "30d", "--dry-run")
    assert set(dry["leftovers"]) == left and dry["collected"] == []
    report = p.gc(day(8), "--older-than", "30d")
    assert set(report["leftovers"]) == left and set(report["dropped"]) == left
    assert not left & p.internal()
    assert p.query("SELECT count(*) FROM v_big") == [(39,)]
    assert json.loads(p.history()[-1][3])["details"]["leftovers"] == sorted(left)


def test_a_crash_inside_gc_changes_nothing(six_runs):
    p, _ = six_runs
    before = (p.internal(), p.history(), p.collected())
    proc = p.cli("gc", "-o", str(p.wh), "--older-than", "30d", "--keep-last", "1", now=day(60),
                 env={"STRATA_CRASH_AT": "gc_before_commit"}, ok=False)
    assert proc.returncode < 0 or proc.returncode == 137
    assert (p.internal(), p.history(), p.collected()) == before
    report = p.gc(day(60), "--older-than", "30d", "--keep-last", "1")
    assert len(report["collected"]) == 5


# ------------------------------------------------------------------ space
def test_space_is_estimated_reused_and_compacted(tmp_path):
    p = make(tmp_path, rows=300_000)
    runs = history_of_runs(p, [1, 2, 3, 4])
    size_before = p.wh.stat().st_size
    block = p.query("SELECT block_size FROM pragma_database_size()")[0][0]
    dry = p.gc(day(60), "--older-than", "30d", "--keep-last", "1", "--dry-run")
    assert dry["estimated_bytes"] >= 3 * block  # three snapshots of ~300k rows
    report = p.gc(day(60), "--older-than", "30d", "--keep-last", "1")
    assert report["estimated_bytes"] == dry["estimated_bytes"]
    assert abs(report["freed_bytes"] - dry["estimated_bytes"]) <= 4 * block
    # DuckDB keeps the freed blocks for reuse: the file itself does not shrink
    assert p.wh.stat().st_size >= size_before - 4 * block
    expected = p.query("SELECT * FROM v_big ORDER BY id")
    entries = p.history()

    compact = p.gc(day(61), "--older-than", "30d", "--keep-last", "1", "--compact-file")
    assert compact["compacted"] and compact["status"] == "nothing_to_do"
    after = p.wh.stat().st_size
    assert after == compact["file_bytes_after"]
    assert after < size_before * 0.6, (size_before, after)
    assert not list(tmp_path.glob("*.strata-compact*"))
    assert p.query("SELECT * FROM v_big ORDER BY id") == expected
    assert p.history() == entries
    p.cli("verify", runs[-1]["run_id"], "-o", str(p.wh))
    p.sql("UPDATE orders SET amount = amount + 1 WHERE id = 20")
    p.run(day(62))  # the compacted file is a working warehouse
    assert p.query("SELECT count(*) FROM v_big") == [(299_989,)]


def test_a_crash_before_the_rename_leaves_the_original(tmp_path):
    p = make(tmp_path)
    history_of_runs(p, [1, 2])
    before = p.query("SELECT * FROM v_big ORDER BY id"), p.history()
    proc = p.cli("gc", "-o", str(p.wh), "--older-than", "30d", "--compact-file", now=day(60),
                 env={"STRATA_CRASH_AT": "compact_before_replace"}, ok=False)
    assert proc.returncode < 0 or proc.returncode == 137
    assert (p.query("SELECT * FROM v_big ORDER BY id"), p.history()) == before
    assert list(tmp_path.glob("*.strata-compact"))
    dry = p.gc(day(60), "--older-than", "30d", "--dry-run")
    assert dry["stale_files"] == [str((tmp_path / "wh.duckdb.strata-compact").resolve())]
    assert list(tmp_path.glob("*.strata-compact"))
    report = p.gc(day(60), "--older-than", "30d")  # any gc removes the stale copy
    assert report["stale_files"] == dry["stale_files"]
    assert not list(tmp_path.glob("*.strata-compact*"))


def test_compacting_through_a_symlink_keeps_the_link(tmp_path):
    p = make(tmp_path)
    history_of_runs(p, [1, 2])
    real = tmp_path / "data" / "real.duckdb"
    real.parent.mkdir()
    p.wh.rename(real)
    p.wh.symlink_to(real)
    report = p.gc(day(60), "--older-than", "30d", "--keep-last", "1", "--compact-file")
    assert report["compacted"] and p.wh.is_symlink() and p.wh.resolve() == real
    assert p.query("SELECT count(*) FROM v_big") == [(39,)]
