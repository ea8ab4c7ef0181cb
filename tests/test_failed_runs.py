"""Issue 19, the graph's `failed` state: a run (or backfill) that fails on a model
publishes nothing and, once it has cleaned up, appends a `failed` history entry:
what it attempted, each failed model's code and one-line message, what it had
built. That entry is a record only: never a staleness base, rollback target (E119),
replay --execute target (E120), keep-last run of gc or base of a branch; verify
skips it. Recording never masks the failure: the warehouse file failing (E070), a
held lock (E075) or a compile error write nothing, with the same code as before.

Real parts only: a real DuckDB file, the real `strata` CLI in subprocesses."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from enginehelpers import strata
from test_hostile_env import _as_a_user_bound_by_permissions

STRATA = str(Path(sys.executable).with_name("strata"))

SOURCE = "source raw { id: int, code: text }\n"
BASE = """
model base {
  from raw
  select id, code
}
"""
# v1 casts a column that always converts; v2 casts `code`, which holds 'x'
CASTED_V1 = "model casted {\n  from base\n  derive n = cast(id as int)\n  select id, n\n}\n"
CASTED_V2 = "model casted {\n  from base\n  derive n = cast(code as int)\n  select id, n\n}\n"
CASTED_V1B = "model casted {\n  from base\n  derive n = cast(id as int) + 1\n  select id, n\n}\n"


class Project:
    def __init__(self, root: Path):
        self.root = root
        self.module = root / "mod"
        self.module.mkdir()
        self.wh = root / "w.duckdb"

    def write(self, *models: str) -> None:
        (self.module / "m.strata").write_text(SOURCE + "".join(models))

    def sql(self, *statements: str) -> None:
        con = duckdb.connect(str(self.wh))
        try:
            for statement in statements:
                con.execute(statement)
        finally:
            con.close()

    def cli(self, *args: str, env: dict | None = None,
            preexec=None) -> subprocess.CompletedProcess:
        """The CLI in its own process (forked from a server that imported strata; the
        installed script when the test needs a pre-exec hook)."""
        if preexec is None:
            proc = strata(*args, cwd=self.root, env=env)
        else:
            full = {k: v for k, v in os.environ.items() if not k.startswith("STRATA_")
                    or k == "STRATA_CACHE_DIR"}
            full.update(env or {})
            proc = subprocess.run([STRATA, *args], cwd=self.root, env=full,
                                  capture_output=True, text=True, timeout=120, check=False,
                                  preexec_fn=preexec)
        assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
        return proc

    def ok(self, *args: str) -> subprocess.CompletedProcess:
        proc = self.cli(*args)
        assert proc.returncode == 0, (args, proc.stderr)
        return proc

    def json(self, *args: str) -> dict | list:
        return json.loads(self.ok(*args, "--json").stdout)

    def run(self, *extra: str) -> subprocess.CompletedProcess:
        return self.cli("run", "mod", "-o", "w.duckdb", "--workers", "1", *extra)

    def history(self) -> list[dict]:
        return self.json("history", "-o", "w.duckdb")

    def table_rows(self) -> dict:
        """Everything a failure must leave as it was but the history: views, registry,
        internal objects."""
        con = duckdb.connect(str(self.wh), read_only=True)
        try:
            return {
                "views": sorted(con.execute(
                    "SELECT schema_name, view_name, sql FROM duckdb_views() WHERE NOT internal"
                ).fetchall()),
                "snapshots": sorted(con.execute(
                    "SELECT name, content_hash FROM strata_internal.snapshots").fetchall()),
                "tables": sorted(con.execute(
                    "SELECT table_name FROM duckdb_tables() WHERE schema_name = "
                    "'strata_internal'").fetchall()),
            }
        finally:
            con.close()

    def raw_history(self) -> list:
        con = duckdb.connect(str(self.wh), read_only=True)
        try:
            return con.execute("SELECT seq, id, entry FROM strata_internal.history "
                               "ORDER BY seq").fetchall()
        finally:
            con.close()


def codes(proc: subprocess.CompletedProcess) -> list[str]:
    return [line.split("]")[0].split("[")[1] for line in proc.stderr.splitlines()
            if line.startswith("error[")]


@pytest.fixture
def project(tmp_path) -> Project:
    p = Project(tmp_path)
    p.sql("CREATE TABLE raw AS SELECT * FROM (VALUES (1, '1'), (2, 'x')) t(id, code)")
    return p


def test_engine_failure_is_recorded_and_is_never_a_base_target_or_kept_run(project):
    p = project
    p.write(BASE, CASTED_V1)
    first = json.loads(p.run("--json").stdout)["run_id"]
    p.write(BASE, CASTED_V1B)
    good = json.loads(p.run("--json").stdout)["run_id"]
    p.write(BASE, CASTED_V2)
    plan_before = p.json("plan", "mod", "-o", "w.duckdb")
    state_before = p.table_rows()

    failed = p.run("--json")
    assert failed.returncode == 1
    doc = json.loads(failed.stdout)
    assert [e["code"] for e in doc["error"]] == ["E080"]
    entry_id = doc["failed_entry"]
    # the text run prints the diagnostic alone, as before: no word of the record
    text = p.run()
    assert text.returncode == 1 and codes(text) == ["E080"]
    assert "model `casted` failed in the engine" in text.stderr
    assert "history" not in text.stderr and text.stdout == ""

    # nothing published: views, registry and internal tables as they were
    assert p.table_rows() == state_before
    entries = p.history()
    assert [e["kind"] for e in entries[:4]] == ["failed", "failed", "run", "run"]
    entry = entries[1]
    assert entry["id"] == entry_id and entry["status"] == "failed"
    assert entries[2]["status"] == "ok" and entries[2]["id"] == good
    assert entry["snapshots"] == {} and entry["branch"] == "main"
    failure = entry["failure"]
    assert failure["attempted"] == ["base", "casted"] and failure["as"] == "run"
    assert list(failure["failed"]) == ["casted"]
    assert failure["failed"]["casted"][0]["code"] == "E080"
    assert "Could not convert string 'x'" in failure["failed"]["casted"][0]["message"]
    assert failure["built"] == ["base"]  # built before the failure, not published
    assert entry["started_at"] <= entry["finished_at"]
    listing = p.ok("history", "-o", "w.duckdb").stdout.splitlines()
    assert listing[1].startswith(entry_id) and "FAILED E080 in `casted`" in listing[1]

    # never a staleness base: plan and --only-stale decide exactly as before
    assert p.json("plan", "mod", "-o", "w.duckdb") == plan_before
    assert plan_before["base_run"] == good
    again = p.run("--only-stale")
    assert again.returncode == 1 and codes(again) == ["E080"]  # still stale, not skipped

    # rollback to it: E119 naming the last good entry; nothing written
    before = p.raw_history()
    refused = p.cli("rollback", entry_id, "-o", "w.duckdb")
    assert refused.returncode == 1 and codes(refused) == ["E119"]
    assert "it is a failed run (E080 in `casted`" in refused.stderr
    assert f"the last good entry before it is run `{good}`" in refused.stderr
    assert p.raw_history() == before

    # verify skips it; replay shows what failed; replay --execute is E120
    assert "skipped:" in p.ok("verify", entry_id, "-o", "w.duckdb").stdout
    assert p.json("verify", entry_id, "-o", "w.duckdb")["snapshots"] == []
    shown = p.ok("replay", entry_id, "-o", "w.duckdb").stdout
    assert "status: failed" in shown and "failed: casted: error[E080]" in shown
    assert "built, not published: ['base']" in shown
    assert p.json("replay", entry_id, "-o", "w.duckdb")["failure"] == failure
    execute = p.cli("replay", entry_id, "--execute", "-o", "w.duckdb")
    assert execute.returncode == 1 and codes(execute) == ["E120"]
    assert "`strata run mod -o w.duckdb --workers" not in execute.stderr
    assert "strata run mod -o w.duckdb" in execute.stderr
    assert p.raw_history() == before

    # a branch is based on the last good run, not on the failure
    p.ok("branch", "create", "dev", "-o", "w.duckdb")
    dev = p.history()[0]
    assert dev["kind"] == "branch" and dev["snapshots"] == entries[2]["snapshots"]
    assert dev["code_fingerprints"] == entries[2]["code_fingerprints"]

    # gc's keep-last counts published runs only: --keep-last 2 keeps the first run's
    # casted snapshot (the failures do not push it out)
    first_casted = next(e for e in entries if e["id"] == first)["snapshots"]["casted"]
    report = p.json("gc", "--older-than", "0d", "--keep-last", "2", "-o", "w.duckdb")
    assert first_casted not in [c["snapshot"] for c in report.get("collected", [])]
    p.ok("verify", first, "-o", "w.duckdb")

    # the graph: casted failed (with the error and when), base up to date
    mermaid = p.ok("graph", "mod", "-o", "w.duckdb", "--format", "mermaid").stdout
    assert "class n2 failed" in mermaid and "class n1 up_to_date" in mermaid
    newest = p.history()[1]  # the --only-stale run's failure (then the branch)
    assert newest["kind"] == "failed"
    assert f"failed: E080 at {newest['finished_at']}" in mermaid.replace("#58;", ":")
    dot = p.ok("graph", "mod", "-o", "w.duckdb", "--format", "dot").stdout
    assert 'casted\\nfailed: E080 at' in dot and '"#fde2e1"' in dot

    # fixed, run: up to date, and the failures stay in the history
    p.sql("UPDATE raw SET code = '2' WHERE code = 'x'")
    fixed = json.loads(p.run("--only-stale", "--json").stdout)
    assert fixed["status"] == "published"
    assert "casted" in fixed["rebuilt"] + fixed["reused"]  # same rows as v1: reused
    mermaid = p.ok("graph", "mod", "-o", "w.duckdb", "--format", "mermaid").stdout
    assert "class n2 up_to_date" in mermaid and "class n2 failed" not in mermaid
    assert sum(e["kind"] == "failed" for e in p.history()) == 3


PINNED = """
model uniq {
  from raw
  select id, code
  pin unique [code]
}

model after_uniq {
  from uniq
  select id
}

model nonnull {
  from raw
  select id, code
  pin not_null [code]
}

model fans {
  from raw
  join dup on dup.id = id
  select id, tag
}
"""


def test_models_downstream_of_an_engine_failure_are_recorded_as_not_built(project):
    """Issue 38: a model failing in the engine (E080) left `not_built` empty, though
    the models reading it, directly or not, were never built (a pin failure lists
    them)."""
    p = project
    after = ("model after_casted {\n  from casted\n  select id\n}\n"
             "model further {\n  from after_casted\n  select id\n}\n")
    p.write(BASE, CASTED_V2, after)
    assert p.run().returncode == 1
    failure = p.history()[0]["failure"]
    assert list(failure["failed"]) == ["casted"]
    assert failure["not_built"] == {"after_casted": "casted", "further": "casted"}
    assert failure["built"] == ["base"]


def test_every_pin_and_fan_out_failure_is_recorded(project):
    p = project
    p.sql("CREATE TABLE dup AS SELECT * FROM (VALUES (1, 'a'), (1, 'b')) t(id, tag)",
          "INSERT INTO raw VALUES (3, 'x'), (4, NULL)")
    (p.module / "m.strata").write_text(SOURCE + "source dup { id: int, tag: text }\n" + PINNED)
    proc = p.cli("run", "mod", "-o", "w.duckdb", "--json")  # four lanes
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    assert sorted(e["code"] for e in doc["error"]) == ["E061", "E062", "E064"]
    entry = p.history()[0]
    assert entry["id"] == doc["failed_entry"] and entry["kind"] == "failed"
    failure = entry["failure"]
    assert {m: [e["code"] for e in errs] for m, errs in failure["failed"].items()} == {
        "uniq": ["E061"], "nonnull": ["E062"], "fans": ["E064"]}
    assert failure["not_built"] == {"after_uniq": "uniq"}
    mermaid = p.ok("graph", "mod", "-o", "w.duckdb", "--format", "mermaid").stdout
    for node in ("n2", "n4", "n5"):  # uniq, nonnull, fans
        assert f"class {node} failed" in mermaid
    assert "class n3 never_built" in mermaid  # after_uniq: not built, not failed


def test_backfill_failure_is_recorded_with_what_it_corrected(project):
    p = project
    p.sql("UPDATE raw SET code = '2' WHERE code = 'x'",
          "CREATE TABLE raw_fixed AS SELECT * FROM (VALUES (1, '1'), (2, 'y')) t(id, code)")
    p.write(BASE, CASTED_V2)
    run_id = json.loads(p.run("--json").stdout)["run_id"]
    proc = p.cli("backfill", "mod", run_id, "--source", "raw=raw_fixed", "--reason",
                 "fix", "-o", "w.duckdb", "--json")
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    assert [e["code"] for e in doc["error"]] == ["E085"]  # as before
    entry = p.history()[0]
    assert entry["id"] == doc["failed_entry"] and entry["kind"] == "failed"
    assert entry["failure"]["as"] == "backfill" and entry["backfill_of"] == run_id
    assert entry["overrides"] == {"raw": "raw_fixed"} and entry["reason"] == "fix"
    assert entry["failure"]["failed"]["casted"][0]["code"] == "E080"
    execute = p.cli("replay", entry["id"], "--execute", "-o", "w.duckdb")
    assert codes(execute) == ["E120"]
    assert f"strata backfill mod {run_id} --source raw=raw_fixed --reason fix" in \
        execute.stderr
    assert "--stage-only" not in execute.stderr  # backfill has no --stage-only (issue 38)
    refused = p.cli("backfill", "mod", entry["id"], "--source", "raw=raw_fixed",
                    "--reason", "again", "-o", "w.duckdb")
    assert codes(refused) == ["E085"] and "is a failed run" in refused.stderr


def _signal_state(pid: int) -> str:
    """The child's blocked, ignored and caught signal masks (if Ctrl-C did not reach
    it, these say why)."""
    status = Path(f"/proc/{pid}/status").read_text()
    return " ".join(line for line in status.splitlines() if line.startswith("Sig"))


def test_recording_never_masks_the_file_the_lock_an_interrupt_or_a_compile_error(
        project):
    p = project
    p.write(BASE, CASTED_V1)
    p.ok("run", "mod", "-o", "w.duckdb")
    before = p.raw_history()

    # a read-only folder (FILE.wal cannot be created): a run that would publish fails
    # with E070 as before; one whose model fails first fails with that model's E080
    # as before, and the record it then tries to write is refused: nothing is written
    folder = p.root
    folder.chmod(0o555)
    try:
        whole = p.cli("run", "mod", "-o", "w.duckdb", "--full-refresh", "--json",
                      preexec=_as_a_user_bound_by_permissions)
        p.write(BASE, CASTED_V2)
        model = p.cli("run", "mod", "-o", "w.duckdb", "--json",
                      preexec=_as_a_user_bound_by_permissions)
    finally:
        folder.chmod(0o755)
    for proc, code in ((whole, "E070"), (model, "E080")):
        doc = json.loads(proc.stdout)
        assert proc.returncode == 1 and "failed_entry" not in doc
        assert [e["code"] for e in doc["error"]] == [code]
    assert "permission denied" in whole.stdout and "`casted`" in model.stdout
    assert p.raw_history() == before
    assert not Path(f"{p.wh}.wal").exists()

    holder = duckdb.connect(str(p.wh))  # a second writer holds the file
    try:
        locked = p.cli("run", "mod", "-o", "w.duckdb", env={"STRATA_LOCK_TIMEOUT": "0.2"})
    finally:
        holder.close()
    assert locked.returncode == 1 and codes(locked) == ["E075"]
    assert p.raw_history() == before

    # Ctrl-C in the middle of the run (paused after building `base`): interrupted, exit
    # 130 as before, no record
    env = {k: v for k, v in os.environ.items() if not k.startswith("STRATA_")}
    env.update(STRATA_PAUSE_AT="after_model:base", STRATA_PAUSE_SECONDS="30")
    # (a test run started in the background, `.ci/run &`, ignores SIGINT, and a child
    # inherits an ignored signal: the child is started with Python's own handler here)
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen([STRATA, "run", "mod", "-o", "w.duckdb", "--workers", "1"],
                                cwd=p.root, env=env, stderr=subprocess.PIPE, text=True)
    finally:
        signal.signal(signal.SIGINT, handler)
    assert proc.stderr.readline().strip() == "paused at after_model:base"
    signals = _signal_state(proc.pid)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in err and "Traceback" not in err, (
        signals, err)
    assert p.raw_history() == before

    (p.module / "m.strata").write_text(SOURCE + "model broken {\n  from nope\n}\n")
    broken = p.cli("run", "mod", "-o", "w.duckdb")
    assert broken.returncode == 1 and codes(broken) == ["E010"]
    assert p.raw_history() == before
