"""Issue 18, item 4 (phase 1): the warehouse's own statements as SQLGlot trees
(strata/engine/bookkeeping.py), the same trees on DuckDB, PostgreSQL and Spark: the
layout, history appended and read back newest first (by branch, id, id prefix, kind,
a field of the entry's JSON), and the registry, whose rows count only once their
run's history entry exists (Spark's commit point) and whose collection by gc is an
appended row."""

from __future__ import annotations

import json

import pytest
from engine_adapters import engine_adapter  # noqa: F401  (the fixture)

from strata.engine import bookkeeping as B
from strata.engine.adapters.base import INTERNAL

ENGINES = ["duckdb", "postgres", "spark"]


@pytest.fixture
def warehouse(adapter):
    """The adapter with the layout set up in a fresh internal schema (the tables'
    schema is the module constant; on the shared PostgreSQL server and Spark session
    each test empties it first)."""
    for name in adapter.relations(INTERNAL):
        adapter.drop(B.Table(name, ()).relation, "table")
    B.setup(adapter)
    B.setup(adapter)  # twice: creating what exists is nothing
    return adapter


def entry(seq: int, run_id: str, kind: str = "run", branch: str = "main", **details) -> dict:
    doc = {"id": run_id, "details": {"__replay": {"sources": {"orders": "orders_v2"}},
                                     **details}}
    return {"seq": seq, "id": run_id, "kind": kind, "branch": branch,
            "started_at": f"2026-01-0{seq} 10:00:00", "entry": json.dumps(doc)}


@pytest.mark.parametrize("adapter", ENGINES, indirect=True)
def test_layout_and_history_read_back_on_every_engine(warehouse):
    a = warehouse
    assert set(a.relations(INTERNAL)) == {"meta", "history", "snapshots", "branches",
                                          "collections"}
    assert a.rows(B.layout_version()) == [(str(B.LAYOUT_VERSION),)]
    assert a.rows(B.next_seq()) == [(1,)]
    a.execute(B.insert(B.HISTORY, [entry(1, "abc123"), entry(2, "abd456", branch="dev"),
                                   entry(3, "abc123", kind="rollback")]))
    assert a.rows(B.next_seq()) == [(4,)]

    def seqs(**filters) -> list[int]:
        return [r[0] for r in a.rows(B.history(columns=(B.col("seq"),), **filters))]

    assert seqs() == [3, 2, 1]
    assert seqs(newest_first=False) == [1, 2, 3]
    assert seqs(branch="main") == [3, 1]
    assert seqs(run_id="abc123", limit=1) == [3]
    assert seqs(id_prefix="abd") == [2]
    assert seqs(kinds=("run", "backfill")) == [2, 1]
    sources = B.json_text(a, B.col("entry"), "details", "__replay", "sources")
    (found,) = a.rows(B.history(columns=(sources,), run_id="abd456"))
    assert json.loads(found[0]) == {"orders": "orders_v2"}


def snapshot(name: str, run_id: str, model: str = "m", content: str = "h1") -> dict:
    return {"name": name, "model": model, "run_id": run_id, "kind": "table",
            "content_hash": content, "row_count": 3, "hash_sum": "12345678901234567890123",
            "hash_xor": "-5", "columns": "[]", "code_fp": "c", "parts": "{}",
            "created_at": f"2026-01-01 10:00:0{name[-1]}"}


@pytest.mark.parametrize("adapter", ENGINES, indirect=True)
def test_registry_rows_count_from_their_history_entry_and_gc_appends(warehouse):
    a = warehouse
    a.execute(B.insert(B.HISTORY, [entry(1, "run1")]))
    # run2's rows are written, its entry is not: a run killed before its commit point
    a.execute(B.insert(B.SNAPSHOTS, [snapshot("snap_1", "run1"), snapshot("snap_2", "run1"),
                                     snapshot("snap_3", "run2")]))

    def names(**filters) -> list[str]:
        return [r[0] for r in a.rows(B.registry(columns=("name",), **filters))]

    assert names() == ["snap_2", "snap_1"]  # newest first; snap_3 invisible
    assert names(names=["snap_1", "snap_3"]) == ["snap_1"]
    row = a.rows(B.registry(names=["snap_1"]))[0]
    assert row[5] == 3 and row[6] == "12345678901234567890123"  # sums kept exactly as text
    assert row[-2:] == (None, None)  # not collected
    a.execute(B.collect(["snap_1"], "2026-02-01 00:00:00", "gc_1"))
    assert names(uncollected=True) == ["snap_2"]
    collected = a.rows(B.registry(names=["snap_1"]))[0]
    assert str(collected[-2]).startswith("2026-02-01") and collected[-1] == "gc_1"
    # the commit point: once run2's entry exists, its rows count
    a.execute(B.insert(B.HISTORY, [entry(2, "run2")]))
    assert names(model="m", content_hash="h1") == ["snap_3", "snap_2", "snap_1"]
