"""`decide` (strata/engine/run/decide.py) without an engine: what the run read is
built here as values (the registry, the sources, the history base, the live views),
and the decision is checked: what to build and why, what is computed in full instead
of merged, the run id, and when there is nothing to do."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

import pytest

from strata.engine import history as H
from strata.engine.run.decide import RunPlan, decide
from strata.engine.run.observe import Observed, SourcesRead
from strata.engine.run.options import RunOptions, RunReport
from strata.engine.sources import SourceBinding
from strata.semantics.resolve import load_text
from strata.sqlgen.clock import RunClock
from strata.sqlgen.names import table

TEXT = """
source orders {
  id: int
  amount: double
  updated_at: timestamp
}

model clean {
  from orders
  select id, amount, updated_at
}

model totals {
  from clean
  select id, amount
}

model merged {
  from orders
  select id, amount, updated_at
  incremental
  merge_strategy: upsert
  merge_keys: [id]
  cdc_column: updated_at
}
"""
MODELS = ["clean", "totals", "merged"]
CODE = {m: f"code-{m}" for m in MODELS}
SOURCE_FP = {"orders": "fp-orders"}


@pytest.fixture(scope="module")
def module():
    loaded = load_text(TEXT, "m.strata")
    assert loaded.ok, loaded.diagnostics
    return loaded


def record(name: str, model: str, run_id: str = "r1", collected: str | None = None,
           content: str = "") -> H.SnapshotRecord:
    return H.SnapshotRecord(name=name, model=model, run_id=run_id, kind="table",
                            content_hash=content or f"hash-{name}", row_count=3,
                            hash_sum="1", hash_xor="2", columns=[], code_fp=CODE[model],
                            parts={}, created_at="2024-01-01 00:00:00",
                            collected_at=collected)


def base_run(**changes) -> H.HistoryEntry:
    """The last run: every model built, from these sources and this code."""
    entry = H.HistoryEntry(
        id="r1", kind="run", branch="main", started_at="2024-01-01 00:00:00",
        source_fingerprints=dict(SOURCE_FP), code_fingerprints=dict(CODE),
        snapshots={m: f"snap_{m}" for m in MODELS})
    return replace(entry, **changes)


def registry_of(base: H.HistoryEntry | None, **records: H.SnapshotRecord) -> H.Registry:
    found = {s: record(s, m, base.id) for m, s in base.snapshots.items()} if base else {}
    return H.Registry(list({**found, **records}.values()))


def sources(relation: str = "orders", fingerprint: str = "fp-orders") -> SourcesRead:
    binding = SourceBinding("orders", table(*relation.split(".")), relation, None)
    return SourcesRead({"orders": binding}, {"orders": fingerprint}, {}, {}, 0.0)


def observed(base: H.HistoryEntry | None, live: dict[str, str] | None = None,
             **changes) -> Observed:
    live = dict(base.snapshots) if base and live is None else (live or {})
    state = Observed(
        started=0.0, started_at="2024-01-02 00:00:00",
        clock=RunClock(dt.datetime(2024, 1, 2)), selection=list(MODELS),
        closure=list(MODELS), code_key="key", code_fps=dict(CODE), canonical={},
        quarantined={}, base=base, live=live, removed={},
        relations_read={"r1": {"orders": "orders"}}, published=None)
    return replace(state, **changes)


def decided(module, opts: RunOptions, base: H.HistoryEntry | None = None,
            source: SourcesRead | None = None, registry: H.Registry | None = None,
            **state) -> RunPlan | RunReport:
    return decide(module, registry or registry_of(base), source or sources(), opts,
                  observed(base, **state))


def test_a_first_run_builds_everything_selected(module):
    plan = decided(module, RunOptions())
    assert isinstance(plan, RunPlan)
    assert plan.reasons == {m: "selected" for m in MODELS}
    assert plan.moved == {} and plan.base_records == {}
    assert plan.whole  # a run of the whole module publishes its whole set of views


def test_only_stale_with_nothing_changed_is_up_to_date(module):
    base = base_run()
    report = decided(module, RunOptions(only_stale=True), base)
    assert isinstance(report, RunReport)
    assert report.status == "up_to_date" and report.run_id == "r1"
    assert [(r.model, r.status, r.snapshot) for r in report.results] == [
        (m, "kept", f"snap_{m}") for m in MODELS]


def test_only_stale_names_why_each_model_is_stale(module):
    base = base_run(code_fingerprints={**CODE, "totals": "old"})
    plan = decided(module, RunOptions(only_stale=True), base,
                   source=sources(fingerprint="fp-new"))
    assert plan.reasons == {"clean": "source `orders` changed",
                            "totals": "code changed",
                            "merged": "source `orders` changed"}


def test_a_collected_snapshot_is_stale(module):
    base = base_run()
    registry = registry_of(base, snap_clean=record("snap_clean", "clean",
                                                   collected="2024-01-01 01:00:00"))
    plan = decided(module, RunOptions(only_stale=True), base, registry=registry)
    assert plan.reasons == {"clean": "its last snapshot was collected"}
    assert set(plan.base_records) == {f"snap_{m}" for m in MODELS}


def test_a_quarantined_snapshot_is_stale_and_never_reused(module):
    base = base_run()
    quarantined = {"snap_totals": H.Quarantined("snap_totals", "totals", "damaged", "q1",
                                                "verify of run r1", "2024-01-01")}
    plan = decided(module, RunOptions(only_stale=True), base, quarantined=quarantined)
    assert "totals" in plan.reasons and "quarantined" in plan.reasons["totals"]
    assert "snap_totals" not in plan.content.values()
    assert plan.damaged_content == {("totals", "hash-snap_totals"): "snap_totals"}


def test_a_merge_onto_a_source_read_elsewhere_is_computed_in_full(module):
    base = base_run()
    plan = decided(module, RunOptions(), base, source=sources("sample.orders"))
    assert list(plan.moved) == ["merged"]
    assert "read from `sample.orders` now, from `orders`" in plan.moved["merged"]
    same = decided(module, RunOptions(), base)
    assert same.moved == {}
    assert same.rid != plan.rid  # a merge and a full computation never share an id


def test_a_merge_onto_a_quarantined_snapshot_is_computed_in_full(module):
    base = base_run()
    quarantined = {"snap_merged": H.Quarantined("snap_merged", "merged", "damaged", "q1",
                                                "verify of run r1", "2024-01-01")}
    plan = decided(module, RunOptions(), base, quarantined=quarantined)
    assert plan.moved == {"merged": "previous snapshot `snap_merged` is quarantined "
                                    "(verify of run r1 found it damaged): computed in full"}


def test_the_run_id_is_the_same_for_the_same_inputs_and_moves_with_them(module):
    base = base_run()
    first = decided(module, RunOptions(), base)
    assert decided(module, RunOptions(), base).rid == first.rid
    assert decided(module, RunOptions(), base,
                   source=sources(fingerprint="fp-new")).rid != first.rid
    assert decided(module, RunOptions(stage_only=True), base).rid != first.rid
    assert decided(module, RunOptions(branch="dev"), base).rid != first.rid


def test_a_backfill_rebuilds_what_it_is_told_and_skips_what_is_published(module):
    base = base_run()
    opts = RunOptions(kind="backfill", rebuild={"clean"}, keep={"merged": "snap_merged"},
                      rebuild_reasons={"clean": "corrected orders"}, skip_if_published=True)
    plan = decided(module, opts, base, published=[])
    assert plan.reasons == {"clean": "corrected orders"}
    assert not plan.whole  # a backfill leaves the other views alone
    done = replace(base, id=plan.rid, kind="backfill")
    again = decided(module, opts, base, published=[done])
    assert isinstance(again, RunReport) and again.status == "up_to_date"
    assert "already published" in again.notes[0]
