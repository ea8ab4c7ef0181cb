"""Stage 2 of a run: decide what to build and why, and the run id. Pure over what
observe.py read (no engine, no warehouse; the registry is read the first time a
question needs it, and a run with nothing to do asks none): tests/test_decide.py
builds its inputs as values."""

from __future__ import annotations

from dataclasses import dataclass

from strata.diagnostics import fail
from strata.engine import history as H
from strata.engine import incremental, staleness
from strata.engine.fingerprints import run_id
from strata.engine.run.observe import Observed, SourcesRead, publishes_whole
from strata.engine.run.options import ModelResult, RunOptions, RunReport
from strata.engine.sources import relation_sql
from strata.semantics.module import Module


@dataclass(frozen=True)
class RunPlan:
    """What a run decided before it builds anything: engine-free data."""

    module: Module
    options: RunOptions
    state: Observed  # what the run read (its closure, base, live views, code)
    sources: SourcesRead
    registry: H.Registry
    source_fps: dict[str, str]  # the sources' and the clock's fingerprints
    whole: bool  # a run of the whole module (it publishes the module's whole set of views)
    reasons: dict[str, str]  # model -> why it is built (the build adds to a copy)
    moved: dict[str, str]  # model -> why it is computed in full instead of merged
    rid: str
    # the registry as this run needs it: the base run's records and the content index
    # for identity reuse (not one registry query per model)
    base_records: dict[str, H.SnapshotRecord]
    content: dict[tuple[str, str], str]  # (model, content hash) -> snapshot to reuse
    damaged_content: dict[tuple[str, str], str]  # the same, of quarantined snapshots

    @property
    def closure(self) -> list[str]:
        return self.state.closure

    @property
    def base_snaps(self) -> dict[str, str]:
        return self.state.base.snapshots if self.state.base else {}


def decide(module: Module, registry: H.Registry, sources: SourcesRead, options: RunOptions,
           state: Observed) -> RunPlan | RunReport:
    """The plan; or, when there is nothing to do, the report saying so (its timings
    are the caller's to fill)."""
    opts, closure, live, base = options, state.closure, state.live, state.base
    _keeps_histories(module, registry, opts, closure, live)
    # the run's clock, where a model reads it: an input like a source's data, so a
    # new value makes those models (and what reads them) stale, and only them
    clock_read = {n for m in closure for n in module.plan(m).clock}
    source_fps = {**sources.fingerprints, **state.clock.fingerprints(clock_read)}
    reasons = _reasons(module, registry, opts, state, source_fps)
    if reasons is None:
        return _up_to_date(base, closure, live, opts)
    previous = incremental.merge_candidates(module, closure, opts, live)
    moved = {m: quarantine_note(state.quarantined, "previous snapshot", s)
             for m, s in previous.items() if s in state.quarantined}
    records = registry.of(previous.values())
    merging = {m: records[s] for m, s in previous.items() if m not in moved and s in records}
    moved = {**incremental.sources_moved(module, merging, state.relations_read,
                                         lambda s: relation_sql(sources.bindings[s])),
             **moved}
    previous = {m: s for m, s in previous.items() if m not in moved}
    removed = state.removed
    rid = run_id(opts.branch, state.selection, state.code_fps, source_fps, previous,
                 [opts.kind, opts.backfill_of, opts.full_refresh,
                  sorted(opts.force_full), opts.stage_only, sorted(reasons)]
                 + ([sorted(opts.keep.items())] if opts.keep else [])
                 + ([["removed", sorted(removed.items())]] if removed else [])
                 + ([["reset_history"]] if opts.reset_history else []))
    if state.published is not None:
        done = _published(state.published, rid, live, state.quarantined)
        if done is not None:
            return _already_published(done, rid, opts)
    wanted = set(closure)
    return RunPlan(
        module, opts, state, sources, registry, source_fps, publishes_whole(opts), reasons, moved, rid,
        registry.of((base.snapshots if base else {}).values()),
        registry.content_index(closure, exclude=state.quarantined),
        {(r.model, r.content_hash): r.name for r in registry.of(
            state.quarantined).values() if r.model in wanted})


def _keeps_histories(module: Module, registry: H.Registry, opts: RunOptions,
                     closure: list[str], live: dict[str, str]) -> None:
    """E212 for a full refresh naming (`--models`) a `merge_strategy: history` model
    with a history already, E213 for a backfill that would recompute one (its past
    versions are in no source: they would be lost), before anything is built. A
    whole-module `--full-refresh` keeps merging histories, as dbt's keeps its
    snapshots; `--reset-history` starts them over."""
    for name in closure:
        inc = module.plan(name).incremental
        named = opts.full_refresh and opts.full_refresh_models is not None \
            and name in opts.full_refresh_models
        recomputed = opts.backfill_of is not None and opts.rebuild is not None \
            and name in opts.rebuild
        # the registry only where a history could be lost (a no-op need not read it)
        if inc is None or inc.strategy != "history" or not (
                (named and not opts.reset_history) or recomputed) \
                or not incremental.holds_history(registry.by_name.get(live.get(name, ""))):
            continue
        span = module.models[name].decl.name_span
        if named and not opts.reset_history:
            raise fail("E212", f"--full-refresh would start the history of `{name}` over",
                       span, "its past versions are in no source, so a full refresh loses "
                       "them: leave it out of `--models` (a `--full-refresh` of the whole "
                       "module keeps merging it), or add `--reset-history` to start it "
                       "over (earlier runs' snapshots keep the old versions until gc)")
        if recomputed:
            raise fail("E213", f"a backfill cannot recompute the history of `{name}`", span,
                       f"a history records what the model gave at each run; run {opts.backfill_of}"
                       "'s versions cannot be corrected afterwards: leave it and the models "
                       "reading it out with `--models`, and let the next run record the "
                       "corrected rows as new versions")


def _reasons(module: Module, registry: H.Registry, opts: RunOptions, state: Observed,
             source_fps: dict[str, str]) -> dict[str, str] | None:
    """model -> why it is built; None when an --only-stale run has nothing to do."""
    closure = state.closure
    if opts.rebuild is not None:
        return {m: opts.rebuild_reasons.get(m, "corrected source")
                for m in closure if m in opts.rebuild}
    if not opts.only_stale:
        return {m: "selected" for m in closure}
    reasons = staleness.stale_models(module, closure, state.code_fps, source_fps,
                                     state.base, state.live, registry, state.standing)
    damaged = staleness.quarantined_models(closure, state.base, state.live,
                                           state.quarantined)
    reasons.update({m: why for m, why in damaged.items() if m not in reasons})
    if not reasons and not state.removed:  # a lingering view is work to do
        return None
    return reasons


def quarantine_note(quarantined: dict[str, H.Quarantined], what: str,
                    snapshot: str) -> str:
    """Why a model is computed in full: the snapshot it would keep or merge onto is
    quarantined (verify, or a run, found its storage damaged)."""
    q = quarantined[snapshot]
    return (f"{what} `{snapshot}` is quarantined ({q.found_by} found it damaged): "
            "computed in full")


def _up_to_date(base: H.HistoryEntry | None, closure: list[str], live: dict[str, str],
                opts: RunOptions) -> RunReport:
    return up_to_date_report(base.id if base else "", opts.branch,
                             [(m, live.get(m, "")) for m in closure])


def up_to_date_report(run_id: str, branch: str, kept: list[tuple[str, str]]) -> RunReport:
    """A run with nothing to do: each model kept as its live view shows it."""
    report = RunReport(run_id, branch, "up_to_date",
                       notes=["everything up to date (nothing to do)"])
    report.results = [ModelResult(m, "kept", snapshot, reason="up to date")
                      for m, snapshot in kept]
    return report


def _published(entries: list[H.HistoryEntry], rid: str, live: dict[str, str],
               quarantined) -> H.HistoryEntry | None:
    """The newest entry with id `rid` whose snapshots the live views still expose
    (after a rollback they do not, and publishing again is real work), none of them
    quarantined (then publishing again replaces it)."""
    done = next((e for e in entries if e.id == rid and e.snapshots), None)
    if done is None or any(live.get(m) != s or s in quarantined
                           for m, s in done.snapshots.items()):
        return None
    return done


def _already_published(done: H.HistoryEntry, rid: str, opts: RunOptions) -> RunReport:
    report = RunReport(rid, opts.branch, "up_to_date", entry=done,
                       notes=[(f"{done.kind} {rid} is already published on "
                               f"{opts.branch}: nothing written")])
    report.results = [ModelResult(m, "kept", s, reason="already published")
                      for m, s in done.snapshots.items()]
    return report
