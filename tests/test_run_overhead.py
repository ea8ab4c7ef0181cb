"""Strata's own work on a run stays a few statements per model, never a catalog or
registry query per model (those made a 1,000-model run 5x slower than its SQL).
Counted in-process on a real DuckDB file; timings live in bench/engine/."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import duckdb
import pytest

from strata.engine.run import RunOptions, execute
from strata.engine.run.build import HASH_NOW_ROWS
from strata.engine.warehouse import Warehouse
from strata.semantics.resolve import load_module


class CountingConnection:
    """A DuckDB connection that counts the statements run through it."""

    def __init__(self, con):
        self._con = con
        self.kinds: Counter[str] = Counter()
        self.statements: list[str] = []

    def execute(self, statement, *args, **kwargs):
        self.kinds[" ".join(statement.split()[:2]).upper()] += 1
        self.statements.append(statement)
        return self._con.execute(statement, *args, **kwargs)

    @property
    def total(self) -> int:
        return sum(self.kinds.values())

    def __getattr__(self, name):
        return getattr(self._con, name)


def chains(models: int) -> str:
    parts = ["source a {\n  id: int\n  k: int\n}\n", "source b {\n  id: int\n  k: int\n}\n"]
    for i in range(models):
        upstream = ("a", "b")[i] if i < 2 else f"t{i - 2}"
        parts.append(f"model t{i} {{\n  from {upstream}\n  let k1 = k + 1\n"
                     f"  select id, k1 as k\n}}\n")
    return "\n".join(parts)


def run_counted(path: Path, text: str, **opts) -> tuple[CountingConnection, object]:
    module_file = path.parent / "m.strata"
    module_file.write_text(text)
    module = load_module(module_file)
    assert module.ok
    wh = Warehouse.open(str(path))
    counting = CountingConnection(wh.con)
    wh.con = counting
    try:
        report = execute(module, wh, RunOptions(**opts))
    finally:
        wh.con = counting._con
        wh.close()
    return counting, report


@pytest.fixture
def warehouse(tmp_path):
    path = tmp_path / "wh.duckdb"
    con = duckdb.connect(str(path))
    for name in ("a", "b"):
        con.execute(f"CREATE TABLE {name} AS SELECT i AS id, i % 7 AS k FROM range(50) t(i)")
    con.close()
    return path


@pytest.mark.parametrize("models", [20, 150])
def test_statements_per_model_of_a_first_run(warehouse, models):
    counting, report = run_counted(warehouse, chains(models))
    assert len(report.rebuilt) == models
    # one CTAS and one view per model; hashes, columns and registry rows in batches
    assert counting.kinds["CREATE TABLE"] == models
    assert counting.kinds["CREATE OR"] == models  # CREATE OR REPLACE VIEW
    assert counting.total <= 2.2 * models + 40, counting.kinds

    # new tables are created 64 to a transaction, not one commit each
    assert counting.kinds["BEGIN TRANSACTION"] <= models // 64 + 3, counting.kinds


def test_registry_rows_go_to_the_engine_as_one_parameter(warehouse):
    """DuckDB's registry rows are one JSON document the engine unnests, not a VALUES
    list rendered by SQLGlot (50 ms of a 100-model run's publication, 1e6 rows each):
    the statement's text does not grow with the models."""
    counting, report = run_counted(warehouse, chains(150))
    inserts = [s for s in counting.statements
               if s.startswith('INSERT INTO "strata_internal"."snapshots"')]
    assert len(inserts) == 1 and len(inserts[0]) < 1000, inserts
    with duckdb.connect(str(warehouse), read_only=True) as con:
        rows = con.execute("SELECT model, row_count, created_at FROM strata_internal.snapshots"
                           " WHERE run_id = ?", [report.entry.id]).fetchall()
    assert sorted(m for m, _, _ in rows) == sorted(f"t{i}" for i in range(150))
    assert all(n == 50 and created is not None for _, n, created in rows)


def test_a_large_table_commits_its_batch_at_once(warehouse):
    """Small tables share a transaction; one of HASH_NOW_ROWS rows or more ends it
    (a transaction around large CTAS made a 1e6-row run 1.7x slower)."""
    con = duckdb.connect(str(warehouse))
    con.execute(f"CREATE TABLE big AS SELECT i AS id, i % 7 AS k FROM range({HASH_NOW_ROWS}) t(i)")
    con.close()
    text = chains(6) + "source big {\n  id: int\n  k: int\n}\n" + "".join(
        f"model big{i} {{\n  from {'big' if i == 0 else f'big{i - 1}'}\n  select id, k\n}}\n"
        for i in range(3))
    counting, report = run_counted(warehouse, text)
    assert len(report.rebuilt) == 9
    # the three large CTAS each end a batch; the small ones share what is left
    assert 3 <= counting.kinds["COMMIT"] - 1 <= 4, counting.kinds


def test_a_rerun_reuses_by_identity_in_batches(warehouse):
    run_counted(warehouse, chains(150))
    counting, report = run_counted(warehouse, chains(150))
    assert report.rebuilt == [] and len(report.reused) == 150
    assert counting.kinds["CREATE OR"] == 0  # every view already shows its snapshot
    assert counting.total <= 2.2 * 150 + 40, counting.kinds


def test_a_no_op_costs_the_same_at_any_module_size(warehouse, tmp_path):
    counts = []
    for models in (10, 150):
        other = tmp_path / f"w{models}.duckdb"
        other.write_bytes(warehouse.read_bytes())
        run_counted(other, chains(models))
        counting, report = run_counted(other, chains(models), only_stale=True)
        assert report.status == "up_to_date"
        counts.append(counting.total)
    assert counts[0] == counts[1] <= 15, counts


def test_an_unchanged_module_is_not_rendered_again(warehouse, monkeypatch):
    """Code fingerprints come back from the last run when the module text and the
    compiler are the same; any edit (or another compiler) renders everything."""
    from strata.engine import fingerprints

    rendered = []
    real = fingerprints.canonical_sql
    monkeypatch.setattr(fingerprints, "canonical_sql",
                        lambda plan: rendered.append(plan.model) or real(plan))
    text = chains(30)
    run_counted(warehouse, text)
    assert len(rendered) == 30
    rendered.clear()
    _, report = run_counted(warehouse, text, only_stale=True)
    assert report.status == "up_to_date" and rendered == []

    edited = text.replace("model t29 {\n  from t27\n  let k1 = k + 1",
                          "model t29 {\n  from t27\n  let k1 = k + 2")
    _, report = run_counted(warehouse, edited, only_stale=True)
    assert len(rendered) == 30
    assert report.stale_reasons == {"t29": "code changed"}

    rendered.clear()
    monkeypatch.setattr(fingerprints, "compiler_key", lambda: "another compiler")
    _, report = run_counted(warehouse, edited, only_stale=True)
    assert len(rendered) == 30 and report.status == "up_to_date"


def test_a_dimension_joined_by_many_models_is_checked_once_a_run(warehouse):
    """The fan-out check's right side (`b` unique on `id`) is settled once: the
    tables a run reads do not change while it runs."""
    text = "source a {\n  id: int\n  k: int\n}\nsource b {\n  id: int\n  k: int\n}\n" + "".join(
        f"model j{i} {{\n  from a\n  join b on a.id = b.id\n  select a.id, b.k\n}}\n"
        for i in range(10))
    seen: list[str] = []

    class Recording(CountingConnection):
        def execute(self, statement, *args, **kwargs):
            seen.append(statement)
            return super().execute(statement, *args, **kwargs)

    module_file = warehouse.parent / "m.strata"
    module_file.write_text(text)
    module = load_module(module_file)
    wh = Warehouse.open(str(warehouse))
    real = wh.con
    wh.con = Recording(real)
    try:
        report = execute(module, wh, RunOptions())
    finally:
        wh.con = real
        wh.close()
    assert len(report.rebuilt) == 10
    assert all(r.checks == ["join b on id = b.id"] for r in report.results)
    right_side = [s for s in seen if '"b" AS __r' in s or "b AS __r" in s]
    assert right_side and len(right_side) <= 4, right_side  # one model's queries, not ten


MERGING = """
model j {
  from a
  join t0 on a.id = t0.id
  select a.id, t0.k
}

model up {
  from a
  select id, k
  incremental
  merge_strategy: upsert
  merge_keys: [id]
  cdc_column: id
}
"""


def test_a_run_reads_the_registry_once(warehouse):
    """Staleness, the base run's records, identity reuse, the leftovers' cleanup, a
    join's check of a model it did not rebuild and a merge's previous snapshot share
    one registry query (a join of snapshots, collections and history: on Spark ~0.5-1 s
    each; a run asked four, and one more per such join and merge)."""
    run_counted(warehouse, chains(5) + MERGING)
    edited = chains(5).replace("model t4 {\n  from t2\n  let k1 = k + 1",
                               "model t4 {\n  from t2\n  let k1 = k + 2")
    assert edited != chains(5)
    edited += MERGING.replace("select a.id, t0.k", "select a.id, t0.k, a.k as ak")
    counting, report = run_counted(warehouse, edited, only_stale=True)
    assert sorted(report.rebuilt) == ["j", "t4"]
    assert [r.checks for r in report.results if r.model == "j"] == [["join t0 on id = t0.id"]]
    assert len(registry_reads(counting)) == 1, registry_reads(counting)
    counting, report = run_counted(warehouse, edited, models=["up"])
    assert report.results[0].notes[0] == "watermark id > 49"  # it read its previous snapshot
    assert len(registry_reads(counting)) == 1, registry_reads(counting)


def test_a_no_op_reads_the_history_once_and_the_registry_not_at_all(warehouse):
    """The staleness base and the quarantine verdicts come from one history read; with
    nothing stale the registry is never asked (the last snapshots stand, read by the
    live views: gc never collects those). On Spark each read is a job. (A model whose
    merge detects drift asks it on DuckDB: the detection rides the source's hash.)"""
    text = chains(5) + MERGING[:MERGING.index("model up")]
    run_counted(warehouse, text)
    counting, report = run_counted(warehouse, text, only_stale=True)
    assert report.status == "up_to_date"
    assert registry_reads(counting) == []
    assert len(history_reads(counting)) == 1, history_reads(counting)
    # one source changed: the registry is read once, the history still once
    with duckdb.connect(str(warehouse)) as con:
        con.execute("INSERT INTO a VALUES (1000, 3)")
    counting, report = run_counted(warehouse, text, only_stale=True)
    assert report.status == "published" and "t0" in report.rebuilt
    assert len(registry_reads(counting)) == 1, registry_reads(counting)
    assert len(history_reads(counting)) == 1, history_reads(counting)


def history_reads(counting: CountingConnection) -> list[str]:
    """Reads of history entries (not the next sequence number a publication takes)."""
    return [s for s in counting.statements if '"strata_internal"."history"' in s
            and s.lstrip().upper().startswith("SELECT") and '"entry"' in s
            and '"collections"' not in s]


def registry_reads(counting: CountingConnection) -> list[str]:
    return [s for s in counting.statements if '"strata_internal"."collections"' in s
            and s.lstrip().upper().startswith("SELECT")]


def test_on_spark_a_new_table_is_counted_by_its_content_hash(spark_connect_url, tmp_path,
                                                              connect_mode_undone):
    """Spark's CREATE TABLE AS says no row count and every query is a job (~0.4 s on a
    tiny table): a run takes each new table's rows from its content hash, not from a
    COUNT of its own, and its pins (`rows`) see them; one registry query per run."""
    con = duckdb.connect()
    con.execute(f"COPY (SELECT i AS id, i % 7 AS k FROM range(50) t(i)) TO "
                f"'{tmp_path / 'a.parquet'}' (FORMAT parquet)")
    con.close()
    text = ("source a = file 'a.parquet' {\n  id: int\n  k: int\n}\n"
            "model t0 {\n  from a\n  filter k < 3\n  select id, k\n  pin rows >= 1\n}\n"
            "model t1 {\n  from t0\n  group k\n  aggregate n = count()\n}\n")
    (tmp_path / "m.strata").write_text(text)
    module = load_module(tmp_path / "m.strata")
    assert module.ok, module.diagnostics
    for workers in (1, 4):
        report, seen = run_recorded(spark_connect_url, module, workers)
        assert {r.model: r.rows for r in report.results} == {"t0": 22, "t1": 3}
        assert report.results[0].checks == ["pin rows >= 1"]
        counts = [s for s in seen if s.upper().startswith("SELECT COUNT(*) FROM")]
        assert counts == [], counts
        registry = [s for s in seen if "`collections`" in s and s.upper().startswith("SELECT")]
        assert len(registry) == 1, registry


def run_recorded(url: str, module, workers: int) -> tuple[object, list[str]]:
    """A run in this process on the warehouse at `url`, and every statement it sent
    through its adapter, as the engine got it."""
    wh = Warehouse.open(url)
    adapter, seen = wh.adapter, []
    for method in ("execute", "rows"):
        real = getattr(adapter, method)

        def recorded(tree, *args, _real=real, **kwargs):
            seen.append(adapter.render(tree))
            return _real(tree, *args, **kwargs)

        setattr(adapter, method, recorded)
    try:
        return execute(module, wh, RunOptions(workers=workers)), seen
    finally:
        wh.close()
