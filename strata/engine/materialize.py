"""A run: check sources, fingerprint, decide what to build, build new immutable
snapshots, check pins, then publish atomically.

Only the publication (registry rows, view switches, history entry) shares one
transaction: new snapshot tables are created in their own statements, unreferenced
until then (one transaction around every CTAS was measured 1.7x slower), and a
crash leaves only unreferenced leftovers that the next run drops.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sqlglot import exp

from strata.clock import now, now_text
from strata.compiler import require_ok, select_models
from strata.diagnostics import StrataError, fail
from strata.engine import code_cache, failures, incremental, staleness
from strata.engine import history as H
from strata.engine.adapters.base import INTERNAL, Adapter, Relation
from strata.engine.branches import check_view_names, ensure_branch, live_snapshots
from strata.engine.environment import crash_point
from strata.engine.fingerprints import (
    RowHash,
    _canonical_relation,
    code_fingerprints,
    module_key,
    reusable_code_fingerprints,
    run_id,
)
from strata.engine.handle import MAIN_BRANCH, internal
from strata.engine.lanes import Built, LaneAborted, Lanes
from strata.engine.pins.checks import check_pins, pin_reads
from strata.engine.pins.joins import check_joins
from strata.engine.pins.results import CheckLog, PinError, Violation
from strata.engine.publication import adapter_of, publish, recovered_base
from strata.engine.sources import (
    SourceBinding,
    Split,
    bind_source,
    engine_relation_sql,
    prepare,
    relation_sql,
)
from strata.engine.warehouse import Warehouse
from strata.plan import JoinStage, Plan, RelationRef
from strata.semantics.module import Module
from strata.sqlgen.build import model_query
from strata.sqlgen.clock import RunClock, relink_clock
from strata.sqlgen.identifiers import check_models
from strata.sqlgen.names import dotted, ident, table
from strata.sqlgen.relink import relink
from strata.textsafe import first_line


@dataclass
class RunOptions:
    models: list[str] | None = None
    branch: str = MAIN_BRANCH
    overrides: dict[str, str] = field(default_factory=dict)
    only_stale: bool = False
    stage_only: bool = False
    full_refresh: bool = False
    full_refresh_models: list[str] | None = None  # --full-refresh with --models: only these
    kind: str = "run"  # run | backfill
    # the moment run_date()/run_timestamp() read (None: now); a backfill passes the
    # corrected run's, replay the recorded one
    clock: RunClock | None = None
    backfill_of: str | None = None
    reason: str | None = None
    # backfill: keep these snapshots as they are, rebuild only `rebuild` (None: decide)
    keep: dict[str, str] = field(default_factory=dict)
    rebuild: set[str] | None = None
    force_full: set[str] = field(default_factory=set)  # incremental models recomputed in full
    rebuild_reasons: dict[str, str] = field(default_factory=dict)  # model -> why (shown)
    # fingerprints the caller already computed through these same overrides (backfill
    # decides what to rebuild from them): not hashed a second time
    source_fingerprints: dict[str, str] = field(default_factory=dict)
    # an entry with this run id already published on the branch, its snapshots still
    # live: write nothing and say so (the same backfill twice is no new work)
    skip_if_published: bool = False
    module_path: str | None = None
    code_cache: Path | None = None  # folder of compiled SQL kept by module text (CLI)
    workers: int = 1  # statements run side by side (concurrent builds); 1: one at a time


@dataclass
class ModelResult:
    model: str
    status: str  # rebuilt | reused | kept
    snapshot: str
    seconds: float = 0.0
    reason: str = ""
    path: str | None = None  # incremental models: full | pushdown | full-then-filter
    delta_rows: int | None = None
    compacted: bool = False  # a merge that folded its layers into a new base table
    drift: dict | None = None  # issue 17: the rows at or below the watermark moved
    sql: str | None = None  # the SELECT that computed the new rows, as it ran (duckdb)
    rows: int | None = None
    checks: list[str] = field(default_factory=list)
    skipped_checks: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {k: v for k, v in self.__dict__.items()}


@dataclass
class RunReport:
    run_id: str
    branch: str
    status: str  # published | up_to_date | staged
    results: list[ModelResult] = field(default_factory=list)
    entry: H.HistoryEntry | None = None
    notes: list[str] = field(default_factory=list)
    stale_reasons: dict[str, str] = field(default_factory=dict)
    removed: dict[str, str] = field(default_factory=dict)  # model -> snapshot, view dropped
    seconds: float = 0.0
    fingerprint_seconds: float = 0.0

    @property
    def rebuilt(self) -> list[str]:
        return [r.model for r in self.results if r.status == "rebuilt"]

    @property
    def reused(self) -> list[str]:
        return [r.model for r in self.results if r.status in ("reused", "kept")]

    def to_json(self) -> dict:
        return {
            "run_id": self.run_id, "branch": self.branch, "status": self.status,
            "rebuilt": self.rebuilt, "reused": self.reused,
            "models": [r.to_json() for r in self.results],
            "stale": self.stale_reasons, "notes": self.notes,
            "removed": sorted(self.removed),
            "backfill_of": self.entry.backfill_of if self.entry else None,
            "reason": self.entry.reason if self.entry else None,
            "seconds": round(self.seconds, 3),
            "fingerprint_seconds": round(self.fingerprint_seconds, 3),
        }


Progress = Callable[[ModelResult], None]


@dataclass(frozen=True)
class RunPlan:
    """What a run decided before it builds anything: engine-free data (the adapter
    only read sources and the registry to get here)."""

    started: float  # perf_counter at the start
    started_at: str
    selection: list[str]
    closure: list[str]  # the selection and everything upstream, in module order
    source_fps: dict[str, str]
    code_fps: dict[str, str]
    fingerprint_seconds: float
    base: H.HistoryEntry | None  # the staleness base: the branch's last run with snapshots
    live: dict[str, str]  # model -> the snapshot its live view shows now
    removed: dict[str, str]  # model -> snapshot, for views of models gone from the module
    whole: bool  # a run of the whole module (it publishes the module's whole set of views)
    reasons: dict[str, str]  # model -> why it is built (filled on as models are planned)
    rid: str


class Run:
    def __init__(self, module: Module, wh: Warehouse, opts: RunOptions,
                 progress: Progress | None = None):
        self.module = module
        self.wh = wh
        self.ad: Adapter = adapter_of(wh)  # where statements run (strata.engine.adapters)
        self.errors = self.ad.engine_errors()
        self.opts = opts
        self.progress = progress or (lambda r: None)
        self.snap_of: dict[str, str] = {}  # model -> snapshot used in this run
        self.new_records: list[H.SnapshotRecord] = []
        self.created: list[str] = []  # internal objects this run created
        self.verified: dict[str, list[str]] = {}  # model -> verified pins
        self.base: H.HistoryEntry | None = None  # the staleness base (last run with snapshots)
        self._taken: set[str] | None = None  # internal names in use (unique_name)
        self.base_records: dict[str, H.SnapshotRecord] = {}
        self.content: dict[tuple[str, str], str] = {}
        # new tables waiting for their content hash: (table, model, code_fp, result)
        self.pending: list[tuple[str, str, str, ModelResult]] = []
        self.unannounced: list[str] = []  # models not shown yet, in model order
        self.results: dict[str, ModelResult] = {}
        self.building = 0  # tables created in the open build transaction (0: none open)
        self.source_text: dict[str, str] = {}
        # run id -> {source: relation} that run read (incremental merges compare)
        self.relations_read_by: dict[str, dict[str, str] | None] = {}
        self.moved: dict[str, str] = {}  # model -> why its source change forbids a merge
        self.settled: dict[str, Split] = {}  # model -> its drift hash from the source scan
        # concurrent builds (opts.workers > 1): models' CTAS run in lanes (worker
        # threads, see strata/engine/lanes.py); pins, hashes, identity and publication
        # stay on the main thread
        self.lanes: Lanes | None = None
        self.rows_of: dict[tuple[str, str], int] = {}  # (kind, name) -> rows, when known
        self.inflight: dict[str, tuple] = {}  # model -> (plan, code_fp, result, log, snap)
        self.deferred_drops: list[H.SnapshotRecord] = []
        self.unique_rights: set = set()  # join right sides found unique on a key
        self.quarantined: dict[str, H.Quarantined] = {}
        self.live: dict[str, str] = {}
        # the model the engine failed on, and the engine's error
        self.failed: tuple[str, BaseException] | None = None
        self.damaged_content: dict[tuple[str, str], str] = {}  # of quarantined snapshots
        # a failing pin does not stop the run at once: every model it can still build is
        # built and checked, and the run then fails with every violation (issue 19)
        self.pin_failed: dict[str, list[Violation]] = {}
        self.not_built: dict[str, str] = {}  # model -> the failed upstream it waited on
        self._registry: H.Registry | None = None

    def registry(self) -> H.Registry:
        """The registry as this run's decision reads it: one query, on first use (the
        decision writes no registry row; a run that starts over is a new Run)."""
        if self._registry is None:
            self._registry = H.read_registry(self.wh)
        return self._registry

    # ------------------------------------------------------------ the run
    def execute(self) -> RunReport:
        """The run; when a model failed because a snapshot it reads (not built by this
        run) cannot be read, that snapshot is quarantined and the run starts over
        without it: nothing was published, and each start over quarantines one more
        snapshot, so this ends."""
        notes: list[str] = []
        attempt = self
        while True:
            try:
                report = attempt._execute()
            except _StartOver as again:
                notes.append(again.note)
                attempt = Run(self.module, self.wh, self.opts, self.progress)
                continue
            report.notes[:0] = notes
            return report

    def _execute(self) -> RunReport:
        """Decide (engine-free: what to build and why, the run id), build (through the
        adapter's lanes), publish (publication.py: atomic or by its commit point)."""
        decided = self._decide()
        if isinstance(decided, RunReport):  # nothing to do
            return decided
        report = self._build_all(decided)
        return self._publish(decided, report)

    def _decide(self) -> RunPlan | RunReport:
        """Selection, source fingerprints, code fingerprints, what is stale and why,
        which snapshots merges read, the run id; the registry as the run needs it. A
        report instead when there is nothing to do."""
        started = time.perf_counter()
        self.clock = self.opts.clock or RunClock(now())
        started_at = now_text()
        module, opts, wh = self.module, self.opts, self.wh
        require_ok(module)
        selection = select_models(module, opts.models)
        wanted = module.upstream(selection)  # once: not once per model of the module
        closure = [m for m in module.order if m in wanted]
        # names the engine would cut alike (PostgreSQL: 63 bytes): E091, nothing built
        check_models(module, closure, self.ad.dialect, _canonical_relation)
        ensure_branch(wh, opts.branch)
        # snapshots verify (or a run) found damaged: never reused, kept or merged onto
        self.quarantined = H.quarantined(wh)

        t0 = time.perf_counter()
        sources = sorted({s for m in closure for s in module.models[m].sources_read})
        self.bindings: dict[str, SourceBinding] = {}
        source_fps: dict[str, str] = {}
        splits = incremental.scan_splits(self, closure)  # drift detection rides the scan
        self.settled = {s.model: s for found in splits.values() for s in found}
        for name in sources:
            src = module.sources[name]
            binding, _, fp, rows = prepare(self.ad, src, bind_source(
                src, opts.overrides.get(name)), splits.get(name))
            self.bindings[name] = binding
            if opts.source_fingerprints.get(name):
                source_fps[name] = opts.source_fingerprints[name]
            else:
                source_fps[name], self.rows_of[("source", name)] = fp, rows
        fingerprint_seconds = time.perf_counter() - t0
        crash_point("after_fingerprints")

        known, base = recovered_base(wh, opts.branch)
        if not known:
            base = H.last_with_snapshots(wh, opts.branch)
        self.base = base
        self.canonical: dict[str, str] = {}
        self.code_key = module_key(module)
        code_fps = (reusable_code_fingerprints(base, self.code_key, closure, self.canonical)
                    or self._code_fingerprints(closure))
        # the run's clock, where a model reads it: an input like a source's data, so
        # a new value makes those models (and what reads them) stale, and only them
        clock_read = {n for m in closure for n in module.plan(m).clock}
        source_fps.update(self.clock.fingerprints(clock_read))
        live = live_snapshots(wh, opts.branch)
        if not opts.stage_only:  # E094: a name a live view needs is taken, before any work
            check_view_names(wh, opts.branch, closure)
        # a run of the whole module publishes the module's whole set of views: those of
        # models no longer in it go (a --models run says nothing about the others)
        whole = not opts.models and not opts.stage_only and opts.kind == "run"
        removed = staleness.vanished_views(wh, live, module.models) if whole else {}

        reasons: dict[str, str] = {}
        if opts.rebuild is not None:
            reasons = {m: opts.rebuild_reasons.get(m, "corrected source")
                       for m in closure if m in opts.rebuild}
        elif opts.only_stale:
            reasons = staleness.stale_models(module, closure, code_fps, source_fps, base, live,
                                             self.registry())
            damaged = staleness.quarantined_models(closure, base, live, self.quarantined)
            reasons.update({m: why for m, why in damaged.items() if m not in reasons})
            if not reasons and not removed:  # a lingering view is work to do
                report = RunReport(base.id if base else "", opts.branch, "up_to_date",
                                   notes=["everything up to date (nothing to do)"])
                report.results = [ModelResult(m, "kept", live.get(m, ""), reason="up to date")
                                  for m in closure]
                report.seconds = time.perf_counter() - started
                report.fingerprint_seconds = fingerprint_seconds
                return report
        else:
            reasons = {m: "selected" for m in closure}

        # only a model that really merges reads its previous snapshot: a kept or
        # fully recomputed one does not depend on what the live view shows
        previous = {m: live[m] for m in closure if m in live and _merges(module.plan(m))
                    and m not in opts.force_full and m not in opts.keep}
        damaged = {m: self._quarantine_note("previous snapshot", s)
                   for m, s in previous.items() if s in self.quarantined}
        self.moved = incremental.sources_moved(
            self, {m: s for m, s in previous.items() if m not in damaged})
        self.moved.update(damaged)
        previous = {m: s for m, s in previous.items() if m not in self.moved}
        rid = run_id(opts.branch, selection, code_fps, source_fps, previous,
                     [opts.kind, opts.backfill_of, opts.full_refresh,
                      sorted(opts.force_full), opts.stage_only, sorted(reasons)]
                     + ([sorted(opts.keep.items())] if opts.keep else [])
                     + ([["removed", sorted(removed.items())]] if removed else []))
        self.rid = rid
        if opts.skip_if_published:
            done = _published(wh, rid, opts.branch, live, self.quarantined)
            if done is not None:
                report = RunReport(rid, opts.branch, "up_to_date", entry=done,
                                   notes=[(f"{done.kind} {rid} is already published on "
                                           f"{opts.branch}: nothing written")])
                report.results = [ModelResult(m, "kept", s, reason="already published")
                                  for m, s in done.snapshots.items()]
                report.seconds = time.perf_counter() - started
                report.fingerprint_seconds = fingerprint_seconds
                return report
        registry = self.registry()
        incremental.cleanup_leftovers(wh, registry)
        crash_point("after_cleanup")
        # the registry as this run needs it, read once: the base run's records and the
        # content index for identity reuse (not one registry query per model)
        base_snaps = base.snapshots if base else {}
        self.base_records = registry.of(base_snaps.values())
        self.content = registry.content_index(closure, exclude=self.quarantined)
        self.damaged_content = {(r.model, r.content_hash): r.name for r in registry.of(
            self.quarantined).values() if r.model in wanted}
        self.live = live
        return RunPlan(started, started_at, selection, closure, source_fps, code_fps,
                       fingerprint_seconds, base, live, removed, whole, reasons, rid)

    def _build_all(self, plan: RunPlan) -> RunReport:
        """Every model of the closure built, kept or reused, its pins checked and its
        content hashed; on any failure what this run created is dropped."""
        opts = self.opts
        rid, closure, reasons, live = plan.rid, plan.closure, plan.reasons, plan.live
        code_fps, base_snaps = plan.code_fps, plan.base.snapshots if plan.base else {}
        report = RunReport(rid, opts.branch, "staged" if opts.stage_only else "published",
                           stale_reasons=reasons, removed=plan.removed,
                           fingerprint_seconds=plan.fingerprint_seconds)
        if opts.workers > 1:
            self.lanes = Lanes(self.ad, opts.workers, self.BUILD_BATCH, self.HASH_NOW_ROWS,
                               after_commit=_columns_and_hashes)
        try:
            results = self.results
            self.unannounced = list(closure)
            self._reasons, self._base_snaps = reasons, base_snaps  # for _pipelines
            for name in self._schedule(closure):
                results[name] = self._model(name, reasons, base_snaps, code_fps[name], live)
                self._announce()
                crash_point(f"after_model:{name}")
            self._drain()
            if self.pin_failed:
                raise self._pin_failure(closure)
            report.results = [results[m] for m in closure]
            self._flush()
            self._commit_build()
            self._drop_deferred()
        except BaseException as err:
            unfinished = set(self.inflight)
            self._abandon_inflight()
            self._drop_created()
            if isinstance(err, StrataError) and self.failed is not None:
                self._quarantine_unreadable(*self.failed, err)
            failures.record(self, err, failures.Attempt(  # best effort, never raises
                rid, plan.started_at, plan.selection, closure, plan.source_fps, code_fps,
                unfinished))
            raise
        finally:
            self._close_lanes()
        return report

    def _publish(self, plan: RunPlan, report: RunReport) -> RunReport:
        """The history entry, and publication (a staged run: the entry alone)."""
        opts, wh, rid = self.opts, self.wh, plan.rid
        crash_point("before_publish")
        source_fps, code_fps, removed = plan.source_fps, plan.code_fps, plan.removed
        entry = H.HistoryEntry(
            id=rid, kind="stage" if opts.stage_only else opts.kind, branch=opts.branch,
            started_at=plan.started_at, finished_at=now_text(), models=plan.selection,
            overrides=dict(opts.overrides),
            source_fingerprints=source_fps, code_fingerprints=code_fps,
            snapshots={} if opts.stage_only else dict(self.snap_of),
            rebuilt=report.rebuilt, reused=report.reused, backfill_of=opts.backfill_of,
            reason=opts.reason, module=opts.module_path, removed=removed,
            complete=plan.whole,
            details={**{r.model: {k: v for k, v in r.to_json().items()
                                  if k in ("status", "path", "delta_rows", "compacted",
                                           "drift", "rows", "reason",
                                           "checks", "skipped_checks", "notes")}
                        for r in report.results},
                     "__replay": self._recipe(plan.closure, source_fps),
                     "__code_key": self.code_key})
        if opts.stage_only:
            self._drop_created()
            H.append(wh, entry)
        else:
            publish(wh, entry, self.new_records, self.snap_of, plan.live, removed)
        report.entry = entry
        report.seconds = time.perf_counter() - plan.started
        return report

    def _pin_failure(self, closure: list[str]) -> PinError:
        """Every violation of every model built, in model order; the models downstream
        of a failing one were neither built nor checked, and the error says which."""
        # a model a lane built before its input's pins were checked counts as not built
        # too, so the report is the same with any number of workers
        failed, blocked = {}, {}
        for m in closure:
            up = next((u for u in self.module.models[m].models_read
                       if u in failed or u in blocked), None)
            if up is not None:
                blocked[m] = blocked.get(up, up)
            elif m in self.pin_failed:
                failed[m] = self.pin_failed[m]
        violations = [v for m in closure for v in failed.get(m, [])]
        unchecked = [f"`{m}` (upstream `{blocked[m]}` failed)" for m in closure
                     if m in blocked]
        note = ("not built or checked: " + ", ".join(unchecked)) if unchecked else None
        return PinError(violations, note=note)

    def _blocked_by(self, name: str) -> str | None:
        """The upstream model whose pins failed (directly or further up), if any."""
        for up in self.module.models[name].models_read:
            if up in self.pin_failed:
                return up
            if up in self.not_built:
                return self.not_built[up]
        return None

    def _code_fingerprints(self, closure: list[str]) -> dict[str, str]:
        """From the on-disk code cache when this module text was compiled before by
        this compiler, else rendered (and kept there)."""
        cached = code_cache.load(self.opts.code_cache, self.code_key, closure)
        if cached is not None:
            fps, canonical = cached
            self.canonical.update(canonical)
            return fps
        fps = code_fingerprints(self.module, closure, self.canonical)
        code_cache.store(self.opts.code_cache, self.code_key, fps, self.canonical)
        return fps

    def _recipe(self, closure: list[str], source_fps: dict[str, str]) -> dict:
        """What `replay --execute` needs to recompute this run without the module:
        each model's canonical SQL and each source's relation as this run read it."""
        from strata.engine.fingerprints import _canonical_relation

        return {
            "order": closure,
            "code": {m: self.canonical.get(m) or model_query(
                self.module.plan(m), _canonical_relation).sql(dialect="duckdb")
                for m in closure},
            "sources": {s: relation_sql(b) for s, b in self.bindings.items()},
            "source_columns": {s: [n for n, _ in self.module.sources[s].columns]
                               for s in self.bindings},
            "source_fingerprints": source_fps,
            "merges": {m: _merges(self.module.plan(m)) for m in closure},
            # the SQL as this engine runs it (its rewrites need the compiled tree, which a
            # replay no longer has); DuckDB runs `code` itself
            **({} if self.ad.relinks_canonical_text else {"engine_code": {
                m: self.ad.render(model_query(self.module.plan(m), _canonical_relation))
                for m in closure}, "engine_sources": {
                s: self.ad.render(exp.select(exp.Star()).from_((b.read or b.relation).copy()))
                for s, b in self.bindings.items()}}),
        }

    # ------------------------------------------------------------ one model
    def _model(self, name: str, reasons: dict[str, str], base_snaps: dict[str, str],
               code_fp: str, live: dict[str, str]) -> ModelResult:
        plan = self.module.plan(name)
        upstream = self.module.models[name].models_read
        if not self._pipelines(name):
            self._await_finished(upstream)  # its inputs complete, checked and hashed first
        blocked = self._blocked_by(name)
        if blocked is not None:  # its input failed its pins: not built, not checked
            self.not_built[name] = blocked
            return ModelResult(name, "skipped", "", reason=f"upstream `{blocked}` failed "
                               "its pins")
        if name not in reasons and name in base_snaps and any(
                m in upstream for _, m, _, _ in self.pending):
            self._flush()  # an upstream reused by identity keeps this model as it is
        if name in self.opts.keep and self.opts.keep[name] in self.quarantined:
            reasons[name] = self._quarantine_note("its snapshot", self.opts.keep[name])
        elif name in self.opts.keep:
            self.snap_of[name] = self.opts.keep[name]
            return ModelResult(name, "kept", self.opts.keep[name], reason="not downstream of a "
                               "corrected source")
        if name not in reasons and name in base_snaps:
            upstream_moved = [m for m in self.module.models[name].models_read
                              if self.snap_of.get(m) != base_snaps.get(m)]
            record = self.base_records.get(base_snaps[name])
            damaged = base_snaps[name] in self.quarantined
            if (not upstream_moved and record is not None and record.collected_at is None
                    and not damaged):
                self.snap_of[name] = base_snaps[name]
                return ModelResult(name, "kept", base_snaps[name], reason="up to date")
            reasons[name] = (f"upstream `{upstream_moved[0]}` changed" if upstream_moved
                             else self._quarantine_note("its last snapshot", base_snaps[name])
                             if damaged else "its last snapshot was collected")
        started = time.perf_counter()
        result = ModelResult(name, "rebuilt", "", reason=reasons.get(name, "selected"))
        try:
            self._build(plan, code_fp, live, result)
        except self.errors as err:
            raise self._engine_failure(name, err) from None
        except PinError as err:
            self.pin_failed[name] = err.violations
            result.status = "failed"
            return result
        result.seconds = time.perf_counter() - started
        self.snap_of[name] = result.snapshot
        if self.lanes and name not in self.inflight:  # built here: lanes may read it next
            self._commit_build()
            self.lanes.built_elsewhere(name)
        return result

    def _engine_failure(self, name: str, err: BaseException) -> StrataError:
        self.failed = (name, err)  # the run may fail because an input cannot be read
        return self.ad.file_failure(err) or fail(  # the file's fault is E070
            "E080", f"model `{name}` failed in the engine: "
            f"{first_line(str(err), type(err).__name__)}", plan_span(self.module, name),
            "nothing was published")

    def relations(self, ref: RelationRef, alias: str | None) -> exp.Expression:
        if ref.kind == "clock":
            return self.clock.literal(ref.name)
        if ref.kind == "source":
            node = self.bindings[ref.name].engine_relation.copy()
        else:
            node = table("strata_internal", self.snap_of[ref.name])
        if alias:
            node.set("alias", exp.TableAlias(this=ident(alias)))
        return node

    def executed_sql(self, plan: Plan) -> str:
        return self.executed_query(plan)[1]

    def executed_query(self, plan: Plan) -> tuple[exp.Expression | None, str]:
        """The model's query over this run's relations, as a tree (None when relinked)
        and as the engine's text: its canonical text relinked (rendered once for the
        code fingerprint, where that text is the engine's SQL), or the tree rendered."""
        canonical = self.canonical.get(plan.model)
        if canonical is not None and self.ad.relinks_canonical_text:
            targets = {(r.kind, r.name): self.relation_text(r) for r in plan.reads}
            relinked = relink(canonical, plan, targets)
            if relinked is not None and plan.clock:
                relinked = relink_clock(relinked, {n: self.ad.render(self.clock.literal(n))
                                                   for n in plan.clock})
            if relinked is not None:
                return None, relinked
        tree = model_query(plan, self.relations)
        return tree, self.ad.render(tree)

    def relation_text(self, ref: RelationRef) -> str:
        """The FROM item of a relation as this run reads it, as text (sources are
        rendered once a run)."""
        if ref.kind == "model":
            return dotted(INTERNAL, self.snap_of[ref.name])
        if ref.name not in self.source_text:
            self.source_text[ref.name] = relation_sql(self.bindings[ref.name])
        return self.source_text[ref.name]

    def relation_sql_of(self, ref: RelationRef) -> str:
        if ref.kind == "source":
            return engine_relation_sql(self.bindings[ref.name])
        return internal(self.snap_of[ref.name])

    def published_with_code(self, model: str, snapshot: str, code_fp: str) -> bool:
        """Did the last run publish `snapshot` for `model` while the model had this code
        fingerprint? Identity reuse keeps a snapshot made by older code when the new
        code gives the same rows; the run that did so proves it is the new code's
        result too (its registry record keeps the code that first made it)."""
        base = self.base
        return (base is not None and base.snapshots.get(model) == snapshot
                and base.code_fingerprints.get(model) == code_fp)

    def verified_unique(self, ref: RelationRef, columns: list[str]) -> bool:
        if ref.kind != "model":
            return False
        wanted = "unique:" + ",".join(sorted(columns))
        if wanted in self.verified.get(ref.name, []):
            return True
        record = self.registry().by_name.get(self.snap_of[ref.name])
        return record is not None and wanted in record.parts.get("verified", [])

    def _build(self, plan: Plan, code_fp: str, live: dict[str, str],
               result: ModelResult) -> None:
        log = CheckLog(dialect=self.ad.dialect, bitmaps=self.ad.bitmap_distinct,
                       clock=self.relations if plan.clock else None)
        check_joins(self.ad, plan, self.relations, self.relation_sql_of, self.verified_unique,
                    log, self.unique_rights)
        merge = incremental.plan_merge(self, plan, code_fp, live, result)
        if merge is not None:
            record = incremental.build_layer(self, plan, code_fp, merge, result, log)
        else:
            result.path = "full" if plan.incremental else None
            record = self._full(plan, code_fp, result, log, defer=True)
        result.checks = log.ran
        result.skipped_checks = log.skipped
        if record is not None:  # None: settled already (reused), or hashed in a batch
            self._settle(record, result)

    def _settle(self, record: H.SnapshotRecord, result: ModelResult) -> None:
        """Keep a new snapshot, or reuse an existing one with the same content."""
        name = record.model
        same = self.content.get((name, record.content_hash)) or next(
            (r.name for r in self.new_records if r.model == name and
             r.content_hash == record.content_hash), None)
        if same is not None and same != record.name:
            # identical content: the pins this run just verified hold for it as well
            self._drop(record)
            result.status = "reused"
            result.snapshot = same
            result.notes.append(f"same content as {same}")
            self.snap_of[name] = same
            return
        record.parts["verified"] = self.verified.get(name, [])
        self.new_records.append(record)
        result.snapshot = record.name
        damaged = self.damaged_content.get((name, record.content_hash))
        if damaged is not None:
            result.notes.append(f"same content as the quarantined {damaged}: a new table "
                                "replaces it")

    # ------------------------------------------------------------ hashing in batches
    # A new table's content hash (and its columns) costs one statement each; on small
    # tables the statements, not the rows, are the cost (~1-3 ms each, as much as the
    # CTAS of a trivial model). So small tables are hashed HASH_BATCH at a time, in one
    # UNION ALL query; a table of HASH_NOW_ROWS rows or more is hashed at once. Until
    # then a model's snapshot is its new table, which downstream CTAS read like any
    # other (they copy rows; nothing references it); a duplicate is dropped when its
    # batch finds an existing snapshot with the same content.
    HASH_BATCH = 64
    HASH_NOW_ROWS = 100_000

    def _flush(self) -> None:
        if not self.pending:
            return
        batch, self.pending = self.pending, []
        started = time.perf_counter()
        names = [snap for snap, _, _, _ in batch]
        ad = self.ad
        try:
            columns = ({names[0]: ad.snapshot_columns(Relation(INTERNAL, names[0]))}
                       if len(names) == 1 else ad.columns_many(INTERNAL, names))
            hashes = ad.row_hashes([(Relation(INTERNAL, n).table(), [c for c, _ in columns[n]])
                                    for n in names])
        except self.errors as err:
            models = ", ".join(f"`{m}`" for _, m, _, _ in batch)
            raise ad.file_failure(err) or fail(
                "E080", f"hashing the results of {models} failed in the engine: "
                f"{first_line(str(err), type(err).__name__)}", None,
                "nothing was published") from None
        share = (time.perf_counter() - started) / len(batch)
        for (snap, model, code_fp, result), hashed in zip(batch, hashes, strict=True):
            result.seconds += share
            self._settle(make_record(snap, model, self.rid, "table", hashed, columns[snap],
                                     code_fp, {}), result)
        self._announce()

    def _announce(self) -> None:
        """Show finished models in order; one not built yet, still running or waiting
        for its hash holds the rest."""
        waiting = {m for _, m, _, _ in self.pending} | set(self.inflight)
        while (self.unannounced and self.unannounced[0] in self.results
               and self.unannounced[0] not in waiting):
            self.progress(self.results[self.unannounced.pop(0)])

    def _schedule(self, closure: list[str]):
        """The models in the order to plan them: the module's order, except that with
        lanes a model that cannot be planned yet (its inputs sit in two lanes'
        open transactions, or it must see its inputs checked and hashed) waits
        while later models go ahead. Finished statements are collected as they end."""
        if not self.lanes:
            yield from closure
            return
        # only models whose inputs were all planned are looked at (the frontier, in
        # module order): asking every remaining model each time was 62,000 `_ready`
        # calls, 0.5 s of the main thread, in a 500-model run
        position = {m: i for i, m in enumerate(closure)}
        inputs = {m: {u for u in self.module.models[m].models_read if u in position}
                  for m in closure}
        readers: dict[str, list[str]] = {}
        for m in closure:
            for u in inputs[m]:
                readers.setdefault(u, []).append(m)
        unplanned = {m: len(inputs[m]) for m in closure}
        frontier = [m for m in closure if not unplanned[m]]
        left = set(closure)
        while frontier:
            self._collect(block=False)
            ready = next((i for i, m in enumerate(frontier) if self._ready(m, left)), None)
            if ready is None:  # everything left waits on a running statement
                self._collect(block=True)
                continue
            name = frontier.pop(ready)
            left.discard(name)
            for reader in readers.get(name, ()):
                unplanned[reader] -= 1
                if not unplanned[reader]:
                    bisect.insort(frontier, reader, key=position.__getitem__)
            yield name

    def _ready(self, name: str, left: set[str]) -> bool:
        """Can `name` be planned now? Asks lanes to commit what it waits for."""
        upstream = self.module.models[name].models_read
        if any(u in left for u in upstream):
            return False
        if not self._pipelines(name):
            waiting = [u for u in upstream if u in self.inflight]
            self.lanes.request_commit(self.lanes.lanes_holding(waiting))
            self.lanes.want(waiting)
            return not waiting
        holding = self.lanes.lanes_holding(upstream)
        if len(holding) > 1 or self.lanes.behind_heavy(upstream):
            # one transaction cannot see two others' tables; a long statement
            # queued after its inputs would hold it up: wait for their commit
            self.lanes.request_commit(holding)
            return False
        return True

    def _pipelines(self, name: str) -> bool:
        """May `name` be planned while its inputs are still being built? Not when its
        plan reads what they hold (join checks, a merge), nor when keeping it depends
        on whether they were reused by identity."""
        plan = self.module.plan(name)
        if name in self.opts.keep:
            return True
        if name not in self._reasons and name in self._base_snaps:
            return False
        return plan.incremental is None and not any(
            isinstance(s, JoinStage) for s in plan.stages)

    def _collect(self, block: bool) -> None:
        """Check and hash the tables the lanes have built and committed (with
        `block`, wait for a statement to end first)."""
        if block and self.inflight and not self.lanes.jobs:  # nothing could finish them
            raise RuntimeError(f"lanes: {sorted(self.inflight)} wait on no statement")
        try:
            finished = self.lanes.collect(block)
        except LaneAborted as err:
            raise self._engine_failure(err.model, err.error) from None
        for name, built in finished:
            self._finish(name, built)
        if finished:
            self._announce()

    def _await_finished(self, models) -> None:
        """Until these models' statements are done, committed, checked and hashed."""
        while waiting := [m for m in models if m in self.inflight]:
            self.lanes.request_commit(self.lanes.lanes_holding(waiting))
            self.lanes.want(waiting)
            self._collect(block=True)

    def _drain(self) -> None:
        """The end of the build: every lane commits, every table is checked and hashed;
        the checkpoint starts as soon as the last table is committed (lanes.py)."""
        while self.lanes and (self.inflight or self.lanes.jobs):
            self.lanes.request_commit(self.lanes.lanes)
            if self.lanes.built() and not self.building:
                self.lanes.checkpoint()
                self.lanes.release()
            self._collect(block=True)

    def _full(self, plan: Plan, code_fp: str, result: ModelResult,
              log: CheckLog, defer: bool = False) -> H.SnapshotRecord | None:
        """CTAS of the model into a new table, pins checked. Its record comes back, or
        with `defer` is made when its batch is hashed (`_flush`)."""
        snap = self.unique_name(f"snap_{self.rid}_{plan.model}")
        tree, query = self.executed_query(plan)
        result.sql = query
        if defer and self.lanes:
            self._submit(plan, snap, tree, query, code_fp, result, log)
            return None
        self._begin_build()
        rows = self.ad.build_table(Relation(INTERNAL, snap), tree, query)
        self.created.append(snap)
        self._built(rows)
        return self._created(plan, snap, rows, code_fp, result, log, defer)

    def _created(self, plan: Plan, snap: str, rows: int | None, code_fp: str,
                 result: ModelResult, log: CheckLog, defer: bool, settled: tuple | None = None
                 ) -> H.SnapshotRecord | None:
        """What follows a model's CTAS: its pins, then its content hash (`settled`:
        its columns and hash, computed already by the lane that built it). `rows` None:
        the engine did not count them, the content hash does (first: pins need them)."""
        crash_point(f"after_create:{plan.model}")
        if rows is None:
            settled = settled or self._columns_and_hash(snap)
            rows = settled[1].count
        result.rows = rows
        self.rows_of[("model", plan.model)] = rows
        self.verified[plan.model] = check_pins(self.ad, internal(snap), plan, rows, log,
                                               self.verified_unique, self.relation_sql_of)
        if settled is not None:
            columns, hashed = settled
            self._settle(make_record(snap, plan.model, self.rid, "table", hashed, columns,
                                     code_fp, {}), result)
            return None
        if defer:
            result.snapshot = snap
            self.pending.append((snap, plan.model, code_fp, result))
            if rows >= self.HASH_NOW_ROWS or len(self.pending) >= self.HASH_BATCH:
                self._flush()
            return None
        columns, hashed = self._columns_and_hash(snap)
        return make_record(snap, plan.model, self.rid, "table", hashed, columns, code_fp, {})

    def _columns_and_hash(self, snap: str) -> tuple[list[tuple[str, str]], RowHash]:
        """What a lane's hasher computes for its tables (`Adapter.hash_tables`), for one
        table built on this thread."""
        return self.ad.hash_tables(INTERNAL, [snap])[snap]

    # ------------------------------------------------------------ concurrent builds
    # With opts.workers > 1 every model's CTAS goes to a lane (strata/engine/lanes.py):
    # the lane that holds its unfinished inputs in its open transaction, else the
    # least busy one, told to begin a fresh transaction when the model reads a table
    # another lane committed after the lane's transaction may have begun. The main
    # thread goes on planning; a table is checked and hashed here once its lane
    # committed it. DuckDB runs the lanes side by side: 100 models on 1e6 rows took
    # 3.7 s on four cursors against 6.3 s one after another; 1,000 trivial models in
    # two chains 0.5 s on two lanes against 1.4 s in batches on one connection.
    # Duplicates found by identity are dropped only once no statement is running.

    def _submit(self, plan: Plan, snap: str, tree: exp.Expression | None, query: str,
                code_fp: str, result: ModelResult, log: CheckLog) -> None:
        self.created.append(snap)
        result.snapshot = snap
        self.lanes.build(plan.model, Relation(INTERNAL, snap), tree, query,
                         build_inputs(plan), heavy=self._large_input(plan))
        self.inflight[plan.model] = (plan, code_fp, result, log, snap)

    def _large_input(self, plan: Plan) -> bool:
        """Does the model read HASH_NOW_ROWS rows or more from one input? A source not
        counted this run (a backfill passes its fingerprints in) counts as large; a
        table still being built counts as small."""
        for ref in plan.reads:
            rows = self.rows_of.get((ref.kind, ref.name))
            if rows is None and ref.kind == "model" and self.lanes:  # built, not hashed yet
                rows = self.lanes.rows_built.get(ref.name)
            if rows is None and ref.kind == "source":
                return True
            if rows is None and ref.kind == "model" and ref.name not in self.inflight:
                record = self.base_records.get(self.snap_of.get(ref.name, ""))
                rows = record.row_count if record is not None else None
            if rows is not None and rows >= self.HASH_NOW_ROWS:
                return True
        return False

    def _finish(self, name: str, built: Built) -> None:
        """A lane's committed table: its pins here on the main thread; its columns and
        hash came with it (`_columns_and_hashes`, in the hasher)."""
        plan, code_fp, result, log, snap = self.inflight.pop(name)
        started = time.perf_counter()
        try:
            self._created(plan, snap, built.rows, code_fp, result, log, defer=True,
                          settled=built.settled.get(name))
        except PinError as err:
            self.pin_failed[name] = err.violations
            result.status = "failed"
        except self.errors as err:  # a check the engine failed: the model's, as in _model
            raise self._engine_failure(name, err) from None
        result.seconds = built.seconds + time.perf_counter() - started

    def _abandon_inflight(self) -> None:
        """After a failure: let running statements end, roll back the lanes' open
        transactions (the committed tables are dropped with the rest)."""
        if self.lanes:
            self.lanes.abandon()
        self.inflight.clear()

    def _close_lanes(self) -> None:
        if self.lanes:
            self.lanes.close()
        self.lanes = None

    def _drop_deferred(self) -> None:
        """The duplicates found while lanes ran, dropped in one transaction: one commit
        for all (a rerun of 500 unchanged models spent 2.5 s dropping its 500 new
        tables one commit each). A crash before its commit leaves them unreferenced,
        for the next run's cleanup."""
        deferred, self.deferred_drops = self.deferred_drops, []
        if not deferred:
            return
        with self.ad.transaction():
            for record in deferred:
                self._drop(record, now=True)

    # ------------------------------------------------------------ build transactions
    # In autocommit every CTAS is its own commit (a WAL flush, ~0.3 ms: as much as a
    # trivial model's statement). So new tables are created up to BUILD_BATCH to a
    # transaction; a table of HASH_NOW_ROWS rows or more commits its transaction at
    # once (one transaction around all the CTAS of a 100-model, 1e6-row run was 1.7x
    # slower). Nothing references these tables until publication, which is its own
    # transaction; a crash inside a batch leaves no table behind at all.
    BUILD_BATCH = 64

    def _begin_build(self) -> None:
        if not self.ad.batches_builds:  # each CREATE TABLE commits alone
            return
        if not self.building:
            self.ad.begin()
            self.building = 0
        self.building += 1

    def _built(self, rows: int | None) -> None:
        if (rows or 0) >= self.HASH_NOW_ROWS or self.building >= self.BUILD_BATCH:
            self._commit_build()

    def _commit_build(self) -> None:
        if self.building:
            self.ad.commit()
            self.building = 0

    # ------------------------------------------------------------ damaged snapshots
    # A snapshot whose storage was damaged after publication (verify's E077) is
    # quarantined (history.py): this run never reuses it by identity, keeps it as up to
    # date or merges onto it; the model is computed into a new table (another name:
    # the damaged table keeps its own until gc) and the view is repointed.

    def _quarantine_note(self, what: str, snapshot: str) -> str:
        q = self.quarantined[snapshot]
        return (f"{what} `{snapshot}` is quarantined ({q.found_by} found it damaged): "
                "computed in full")

    def _quarantine_unreadable(self, model: str, cause: BaseException,
                               err: StrataError) -> None:
        """After `model` failed in the engine (the open build batch rolled back) with
        an error that shows damaged storage (damaged_storage: a block checksum, never
        the whole file failing nor a passing failure): the snapshots it read that this
        run did not build, and whose storage is damaged, are quarantined, and the run
        starts over (_StartOver). Nothing otherwise: the model's error stands (E070
        for the file: no quarantine entry, no rebuild published into a broken file)."""
        from strata.engine.ops import damage_verdicts, quarantine, unreadable_tables

        if not self.ad.damaged_storage(cause):
            return
        reads = [self.snap_of.get(m) for m in self.module.models[model].models_read]
        if _merges(self.module.plan(model)):
            reads.append(self.live.get(model))  # the previous snapshot a merge reads
        records = H.records(self.wh, {s for s in reads if s and s not in self.quarantined})
        found = {}
        for name, record in records.items():
            if unreadable := unreadable_tables(self.wh, record):
                table_name, error = next(iter(unreadable.items()))
                found[name] = (record, f"table {table_name} unreadable: {error}", True)
        if not found:
            return
        entry = quarantine(self.wh, damage_verdicts(self.wh, found),
                           f"a run on {self.opts.branch}")
        if entry is None:
            return
        names = ", ".join(f"`{n}` of `{r.model}`" for n, (r, _, _) in sorted(found.items()))
        raise _StartOver(f"snapshot {names} could not be read (damaged storage): quarantined "
                         f"(history entry {entry.id}), and the run started over without it"
                         ) from err

    # ------------------------------------------------------------ naming and cleanup
    def unique_name(self, wanted: str) -> str:
        """A name no object and no registry record has (gc drops a collected snapshot's
        table but keeps its record: history still names it), reserved for this run.
        The taken names are read once per run, not once per model."""
        if self._taken is None:
            self._taken = set(self.ad.relations(INTERNAL))
            self._taken.update(r[0] for r in self.ad.rows(exp.select(exp.column("name")).from_(
                Relation(INTERNAL, "snapshots").table())))
        wanted = self.ad.physical_name(wanted)
        name, n = wanted, 1
        while name in self._taken:
            n += 1
            name = f"{wanted}_{n}"
        self._taken.add(name)
        return name

    def _drop(self, record: H.SnapshotRecord, now: bool = False) -> None:
        if self.lanes and not now:  # a lane's statement may read it
            self.deferred_drops.append(record)
            return
        for obj in [record.name, *record.parts.get("own", [])]:
            if obj in self.created:
                # a layered snapshot is a view over its (table) layers
                layered_view = obj == record.name and record.kind == "layered"
                self.ad.drop(Relation(INTERNAL, obj), "view" if layered_view else "table")
                self.created.remove(obj)

    def _drop_created(self) -> None:
        if self.building:  # the open batch's tables go with it
            self.building = 0
            try:
                self.ad.rollback()
            except self.errors:
                # the failure ended the transaction already: a COMMIT that could not
                # write (a full disk) or a statement the engine aborted leaves none
                # open, and "cannot rollback" must not replace the failure itself
                pass
        if self.created:
            try:
                kinds = self.ad.relations(INTERNAL)
            except self.errors:
                kinds = {}
            for obj in reversed(self.created):
                try:
                    if obj in kinds:
                        self.ad.drop(Relation(INTERNAL, obj), kinds[obj])
                except self.errors:
                    pass  # the next run's cleanup takes it
        self.created.clear()


class _StartOver(Exception):
    """A snapshot the run read turned out unreadable and is now quarantined: the run
    is done again from the start (nothing was published)."""

    def __init__(self, note: str):
        super().__init__(note)
        self.note = note


def _published(wh: Warehouse, rid: str, branch: str, live: dict[str, str],
               quarantined) -> H.HistoryEntry | None:
    """The newest entry with id `rid` on `branch` whose snapshots the live views still
    expose (after a rollback they do not, and publishing again is real work), none of
    them quarantined (then publishing again replaces it)."""
    done = next((e for e in H.entries(wh, branch) if e.id == rid and e.snapshots), None)
    if done is None or any(live.get(m) != s or s in quarantined
                           for m, s in done.snapshots.items()):
        return None
    return done


def build_inputs(plan: Plan) -> list[str]:
    """The models a model's build lane must see committed with or before its table:
    those its query reads and those its pins read (`pin references`: the check runs
    on the main connection once the model's table is committed, and must find the
    referenced table committed too, not held in another lane's open transaction)."""
    refs = [*plan.reads, *pin_reads(plan)]
    return list(dict.fromkeys(r.name for r in refs if r.kind == "model"))


def _merges(plan: Plan) -> bool:
    return plan.incremental is not None and plan.incremental.strategy in ("append", "upsert")


def batch_columns(wh: Warehouse, names: list[str]) -> dict[str, list[tuple[str, str]]]:
    """(column, type) of many internal tables in one catalog query (the types read as
    DESCRIBE shows them, which is what `verify` recomputes the hash with)."""
    return adapter_of(wh).columns_many(INTERNAL, names)


def _columns_and_hashes(lane: Adapter, tables: list[tuple[str, str]]) -> dict[str, tuple]:
    """model -> (columns, row hash) of tables just committed, one statement for the
    batch; the lanes' hasher thread runs it on its own connection right after a
    lane's commit, so the main thread does not hash (see strata/engine/lanes.py and
    `Adapter.hash_tables`)."""
    found = lane.hash_tables(INTERNAL, [name for _, name in tables])
    return {model: found[name] for model, name in tables}


def table_columns(wh: Warehouse, name: str) -> list[tuple[str, str]]:
    return adapter_of(wh).snapshot_columns(Relation(INTERNAL, name))


def make_record(name: str, model: str, rid: str, kind: str, hashed: RowHash,
                columns: list[tuple[str, str]], code_fp: str, parts: dict) -> H.SnapshotRecord:
    return H.SnapshotRecord(
        name=name, model=model, run_id=rid, kind=kind, content_hash=hashed.digest(columns),
        row_count=hashed.count, hash_sum=str(hashed.total), hash_xor=str(hashed.xor),
        columns=[list(c) for c in columns], code_fp=code_fp, parts=parts, created_at=now_text())


def plan_span(module: Module, name: str):
    return module.models[name].decl.name_span


def run(module: Module, warehouse: str, opts: RunOptions,
        progress: Progress | None = None) -> RunReport:
    """Open the warehouse (locking it), run, close."""
    require_ok(module)
    select_models(module, opts.models)  # unknown models fail before the file is touched
    wh = Warehouse.open(warehouse)
    try:
        return Run(module, wh, opts, progress).execute()
    finally:
        wh.close()
