"""Issue 41: `run --only-stale` on `spark:DIR` answers a no-op without starting Spark
when the record the last no-op left in DIR proves that nothing changed since
(strata/engine/run/quiet.py). A marker is proof, never a hint: every way of changing
the warehouse folder or a file source, and every change of what was asked, makes the
next run ask the engine again.

The proof is checked on a folder laid out as spark:DIR lays it out, with a record made
the way a run makes one (no JVM: fast); one real cycle of CLI processes at the end
shows a run leaving the record, the next starting no JVM, and a changed file source
read and rebuilt."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import duckdb
import pytest
from enginehelpers import strata

from strata.engine.adapters.spark import SparkAdapter
from strata.engine.markers import FolderState, folder_state
from strata.engine.run import quiet
from strata.engine.run.options import RunOptions
from strata.semantics.resolve import load_text

MODULE = """source orders = file '{path}' {{
  id: int
  amount: int
}}

model big_orders {{
  from orders
  filter amount > 2
  select id, amount
}}
"""


def write_orders(path: Path, rows: int, amount: int = 1) -> None:
    con = duckdb.connect()
    try:
        con.execute(f"COPY (SELECT i AS id, i * {amount} AS amount FROM range({rows}) t(i)) "
                    f"TO '{path}' (FORMAT parquet)")
    finally:
        con.close()


def age(path: Path, seconds: float = 60) -> None:
    """Files older than the settling time (markers.settled_seconds), as a warehouse
    left alone is."""
    for item in [path, *path.rglob("*")] if path.is_dir() else [path]:
        st = item.stat()
        os.utime(item, ns=(st.st_atime_ns, st.st_mtime_ns - int(seconds * 1e9)))


@pytest.fixture
def warehouse(tmp_path, monkeypatch):
    """A spark:DIR folder (catalogue, internal tables, a source table) left by a no-op,
    its record written by quiet's own recording step; the file source beside it."""
    monkeypatch.setenv("STRATA_MARKER_SETTLE", "0.2")
    folder = tmp_path / "wh"
    for rel, data in [("metastore_db/seg0/c180.dat", b"catalogue"), ("metastore_db/log/log1.dat",
                      b"log"), ("warehouse/strata_internal.db/history/part-0.parquet", b"h"),
                      ("warehouse/sales/part-0.parquet", b"rows"), ("derby.log", b"boot"),
                      ("strata.lock", b"pid 1")]:
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
    source = tmp_path / "orders.parquet"
    write_orders(source, 10)
    age(folder)
    age(source)
    time.sleep(0.3)  # their change times (which no one can set back) settled too
    module = load_text(MODULE.format(path=source))
    opts = RunOptions(only_stale=True)
    closure = quiet._closure(module, opts)
    report = quiet.up_to_date_report("abc123", "main", [("big_orders", "snap_abc123_big")])
    report.source_reads = {"orders": "unchanged"}
    from strata.engine.markers import files_marker
    identity = ["orders.parquet"]
    files = [[str(source), identity, files_marker([source], tuple(identity))]]
    assert files[0][2] is not None
    record = {"version": quiet.VERSION, "key": quiet._key(module, opts, closure),
              "folder": folder_state(folder, SparkAdapter.not_state).to_json(),
              "files": files, "report": {"run_id": "abc123", "branch": "main",
                                         "kept": [["big_orders", "snap_abc123_big"]],
                                         "sources": ["orders"]}}
    (folder / "strata_noop.json").write_text(json.dumps(record))
    return folder, source, module, opts


def proven(folder: Path, module, opts=None):
    return quiet.proven_noop(module, f"spark:{folder}", opts or RunOptions(only_stale=True))


def test_an_untouched_warehouse_is_a_proven_no_op(warehouse):
    folder, _, module, _ = warehouse
    report = proven(folder, module)
    assert report is not None and report.status == "up_to_date"
    assert report.run_id == "abc123" and [(r.model, r.status, r.snapshot) for r in
                                          report.results] == [("big_orders", "kept",
                                                               "snap_abc123_big")]
    assert report.source_reads == {"orders": "unchanged"}
    # the lock, Derby's message log and the record itself say nothing of the data
    (folder / "derby.log").write_text("booted again")
    (folder / "strata.lock").write_text("pid 2")
    assert proven(folder, module) is not None


@pytest.mark.parametrize("change", [
    "insert a file into a source table", "delete a table's file",
    "same-size overwrite with its times restored", "a catalogue change",
    "a history entry", "a new schema folder", "chmod",
])
def test_any_change_under_the_folder_makes_the_run_ask_the_engine(warehouse, change):
    folder, _, module, _ = warehouse
    part = folder / "warehouse/sales/part-0.parquet"
    if change == "insert a file into a source table":
        (folder / "warehouse/sales/part-1.parquet").write_bytes(b"more")
    elif change == "delete a table's file":
        part.unlink()
    elif change == "same-size overwrite with its times restored":
        st = part.stat()
        part.write_bytes(b"ROWS")
        os.utime(part, ns=(st.st_atime_ns, st.st_mtime_ns))  # ctime still moves
    elif change == "a catalogue change":
        with open(folder / "metastore_db/seg0/c180.dat", "ab") as f:
            f.write(b"x")
    elif change == "a history entry":
        (folder / "warehouse/strata_internal.db/history/part-1.parquet").write_bytes(b"e")
    elif change == "a new schema folder":
        (folder / "warehouse/dev.db").mkdir()
    elif change == "chmod":
        os.chmod(part, 0o600)
    assert proven(folder, module) is None


def test_a_changed_file_source_makes_the_run_ask_the_engine(warehouse):
    folder, source, module, _ = warehouse
    st = source.stat()
    write_orders(source, 10, amount=2)  # other rows, same size
    os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert proven(folder, module) is None


def test_a_young_file_source_is_never_proof(warehouse, monkeypatch):
    folder, _, module, _ = warehouse
    monkeypatch.setenv("STRATA_MARKER_SETTLE", "3600")  # every file is young now
    assert proven(folder, module) is None


def test_what_was_asked_is_part_of_the_record(warehouse, tmp_path):
    folder, source, module, _ = warehouse
    assert proven(folder, load_text(MODULE.format(path=source) + "\nmodel more {\n"
                                    "  from big_orders\n  select id\n}\n")) is None
    assert proven(folder, module, RunOptions(only_stale=True, branch="dev")) is None
    assert proven(folder, module, RunOptions(only_stale=False)) is None  # a full run
    assert proven(folder, module, RunOptions(only_stale=True, full_refresh=True)) is None
    assert proven(folder, module, RunOptions(only_stale=True, overrides={
        "orders": str(tmp_path / "other.parquet")})) is None


def test_a_model_reading_the_clock_is_never_answered_from_the_record(tmp_path):
    module = load_text("source orders = file 'o.parquet' {\n  id: int\n}\n\n"
                       "model today {\n  from orders\n  derive d = run_date()\n  select id, d\n}\n")
    assert not module.diagnostics, module.diagnostics
    assert quiet._closure(module, RunOptions(only_stale=True)) is None


def test_a_racy_file_is_compared_by_content(tmp_path, monkeypatch):
    """A file written in the clock tick in which the state was taken may change again
    in that tick with the same size and times: such a file is read back."""
    monkeypatch.setenv("STRATA_MARKER_SETTLE", "3600")
    (tmp_path / "a").write_bytes(b"first")
    before = folder_state(tmp_path, lambda rel: False)
    assert set(before.contents) == {"a"}
    (tmp_path / "a").write_bytes(b"other")
    same_stats = FolderState(before.taken_ns + 1, dict(before.entries), {})
    assert before.moved_by(same_stats, tmp_path)  # stats alike, content not
    (tmp_path / "a").write_bytes(b"first")
    assert not before.moved_by(same_stats, tmp_path)


def test_a_damaged_or_linked_record_is_no_proof(warehouse, tmp_path):
    folder, _, module, _ = warehouse
    record = folder / "strata_noop.json"
    record.write_text("{not json")
    assert proven(folder, module) is None
    record.unlink()
    elsewhere = tmp_path / "planted.json"
    elsewhere.write_text("{}")
    record.symlink_to(elsewhere)
    assert proven(folder, module) is None


def test_spark_dir_cycle_no_jvm_for_a_proven_no_op_and_a_changed_file_is_read(tmp_path):
    """Real CLI processes: a run that publishes leaves the record; the no-op after it
    starts no JVM (Derby's files untouched); a source file rewritten with other rows of
    the same size and times is read and its model rebuilt, and the no-op after that is
    answered from the record again.

    On the way, the JVM's class archive (spark_classes.py, tests/test_spark_class_archive.py):
    the first process records it in the cache folder, nothing else left there; damaged,
    the JVM refuses it and every later run works, saying nothing of it."""
    source = tmp_path / "orders.parquet"
    write_orders(source, 10)
    (tmp_path / "m.strata").write_text(MODULE.format(path="orders.parquet"))
    where = f"spark:{tmp_path / 'wh'}"
    cache = tmp_path / "cache"
    env = {"STRATA_MARKER_SETTLE": "0.2", "STRATA_CACHE_DIR": str(cache)}

    def run(*flags: str) -> dict:
        done = strata("run", "m.strata", "-o", where, "--json", *flags, cwd=tmp_path,
                      env=env, check=True, timeout=300)
        assert "cds" not in done.stderr.lower() and "archive" not in done.stderr.lower()
        return json.loads(done.stdout)

    assert run()["status"] == "published"
    made = sorted((cache / "spark").iterdir())
    assert [p.suffix for p in made] == [".jsa"] and made[0].stat().st_size > 1_000_000, made
    made[0].write_bytes(b"\0" * 4096)  # damaged (or made by another JDK)
    # the run that published asked again, on its session, and left the record
    assert (tmp_path / "wh" / "strata_noop.json").exists()
    metastore = tmp_path / "wh" / "metastore_db"
    derby = {p: p.stat().st_mtime_ns for p in metastore.rglob("*")}
    noop = run("--only-stale")
    assert noop["status"] == "up_to_date" and noop["sources"] == {"orders": "unchanged"}
    assert [(m["model"], m["status"]) for m in noop["models"]] == [("big_orders", "kept")]
    assert derby == {p: p.stat().st_mtime_ns for p in metastore.rglob("*")}  # no JVM
    st = source.stat()
    write_orders(source, 10, amount=2)  # other rows, the same size and times
    os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns))
    time.sleep(0.3)
    changed = run("--only-stale")
    assert changed["status"] == "published" and changed["rebuilt"] == ["big_orders"]
    assert changed["sources"] == {"orders": "hashed"}
    derby = {p: p.stat().st_mtime_ns for p in metastore.rglob("*")}
    again = run("--only-stale")
    assert again["status"] == "up_to_date" and again["models"][0]["snapshot"] == \
        changed["models"][0]["snapshot"]
    assert derby == {p: p.stat().st_mtime_ns for p in metastore.rglob("*")}
