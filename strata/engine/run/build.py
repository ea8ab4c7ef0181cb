"""Stage 3 of a run: build. Every model of the plan's closure is kept, built (CTAS
into a new immutable table, or a merge: incremental.py), or reused by identity; its
pins checked as soon as its table exists and its content hashed. The only stage that
talks to the engine while building: new tables are created in their own statements,
unreferenced until publication, so a failure drops them and publishes nothing.

`build` returns a `Built` value: what was made, or how it failed (`BuildFailure`,
after the cleanup). Its working state (lanes, hash batches, the names taken) lives in
a `_Builder` for the build's duration only; nothing outside this module sees it.
Past ~700 lines on purpose: scheduling on lanes, build transactions, hash batches
and identity reuse decide together when a table may be read, dropped or kept, and
read best in one place (merges are incremental.py's)."""

from __future__ import annotations

import bisect
import time
from dataclasses import dataclass, replace

from sqlglot import exp

from strata.diagnostics import StrataError, fail
from strata.engine import history as H
from strata.engine import incremental
from strata.engine.adapters.base import INTERNAL, Adapter, Relation
from strata.engine.environment import crash_point
from strata.engine.fingerprints import RowHash, _canonical_relation
from strata.engine.handle import internal
from strata.engine.lanes import Built as LaneBuilt
from strata.engine.lanes import LaneAborted, Lanes, build_hashed
from strata.engine.pins.checks import check_pins, check_pins_after, pin_reads
from strata.engine.pins.joins import check_joins
from strata.engine.pins.results import CheckLog, PinError, Violation
from strata.engine.publication import adapter_of
from strata.engine.records import make_record
from strata.engine.run.decide import RunPlan, quarantine_note
from strata.engine.run.options import ModelResult, Progress, RunOptions
from strata.engine.sources import engine_relation_sql, relation_sql
from strata.engine.warehouse import Warehouse
from strata.plan import JoinStage, Plan, RelationRef
from strata.semantics.module import Module
from strata.sqlgen.build import model_query
from strata.sqlgen.clock import relink_clock
from strata.sqlgen.names import dotted, ident, table
from strata.sqlgen.relink import relink
from strata.textsafe import first_line

# A new table's content hash (and its columns) costs one statement each; on small
# tables the statements, not the rows, are the cost (~1-3 ms each, as much as the
# CTAS of a trivial model). So small tables are hashed HASH_BATCH at a time, in one
# UNION ALL query; a table of HASH_NOW_ROWS rows or more is hashed at once. Until
# then a model's snapshot is its new table, which downstream CTAS read like any
# other (they copy rows; nothing references it); a duplicate is dropped when its
# batch finds an existing snapshot with the same content.
# An engine that hashes a table while writing it (`Adapter.build_table_hashed`) skips
# the batch: its CTAS gives the hash.
HASH_BATCH = 64
HASH_NOW_ROWS = 100_000
# In autocommit every CTAS is its own commit (a WAL flush, ~0.3 ms: as much as a
# trivial model's statement). So new tables are created up to BUILD_BATCH to a
# transaction; a table of HASH_NOW_ROWS rows or more commits its transaction at
# once (one transaction around all the CTAS of a 100-model, 1e6-row run was 1.7x
# slower). Nothing references these tables until publication, which is its own
# transaction; a crash inside a batch leaves no table behind at all.
BUILD_BATCH = 64


@dataclass(frozen=True)
class BuildFailure:
    """How a build failed, after it dropped what it created. `error` None: pins
    failed (settle.py words the error from `pin_failed`)."""

    error: BaseException | None
    module: Module
    opts: RunOptions
    failed: tuple[str, BaseException] | None  # the model the engine failed on, its error
    pin_failed: dict[str, list[Violation]]  # model -> its violations
    # model -> the violations of its pins checked after their relation (PinSpec.after)
    pin_failed_after: dict[str, list[Violation]]
    results: dict[str, ModelResult]  # the models finished before the failure
    snap_of: dict[str, str]
    unfinished: frozenset[str]  # models whose statements were still running
    # snapshot -> (record, why, True): what the failed model read, found unreadable
    # (damaged storage); settle.py decides to quarantine them and start over
    unreadable: dict[str, tuple]


@dataclass(frozen=True)
class Built:
    """What the build made: one result per model of the closure, in its order."""

    plan: RunPlan
    reasons: dict[str, str]  # the plan's, with the reasons found while building
    results: list[ModelResult]
    snap_of: dict[str, str]  # model -> the snapshot its view shows after this run
    new_records: list[H.SnapshotRecord]  # the registry rows of the new snapshots
    created: list[str]  # internal objects this run created
    recipe: dict | None  # what `replay --execute` needs (None on failure)
    failure: BuildFailure | None = None


def build(plan: RunPlan, wh: Warehouse, progress: Progress | None = None) -> Built:
    """The plan built on the warehouse's engine (see the module's docstring)."""
    return _Builder(plan, wh, progress).run()


class _Builder:
    """The build's working state: one per build, dropped when it returns."""

    HASH_BATCH, HASH_NOW_ROWS, BUILD_BATCH = HASH_BATCH, HASH_NOW_ROWS, BUILD_BATCH

    def __init__(self, plan: RunPlan, wh: Warehouse, progress: Progress | None):
        state = plan.state
        self.plan, self.wh, self.module, self.opts = plan, wh, plan.module, plan.options
        self.ad: Adapter = adapter_of(wh)  # where statements run (strata.engine.adapters)
        self.errors = self.ad.engine_errors()
        self.progress = progress or (lambda r: None)
        self.rid, self.clock, self.registry = plan.rid, state.clock, plan.registry
        self.bindings, self.canonical = plan.sources.bindings, state.canonical
        self.base, self.live, self.quarantined = state.base, state.live, state.quarantined
        self.moved, self.settled = plan.moved, plan.sources.settled
        self.source_hashes = plan.sources.hashes
        self.base_records, self.content = plan.base_records, plan.content
        self.damaged_content = plan.damaged_content
        self.reasons, self.base_snaps = dict(plan.reasons), plan.base_snaps
        self.snap_of: dict[str, str] = {}  # model -> snapshot used in this run
        self.new_records: list[H.SnapshotRecord] = []
        self.created: list[str] = []  # internal objects this run created
        self.verified: dict[str, list[str]] = {}  # model -> verified pins
        self._taken: set[str] | None = None  # internal names in use (unique_name)
        # new tables waiting for their content hash: (table, model, code_fp, result)
        self.pending: list[tuple[str, str, str, ModelResult]] = []
        self.unannounced: list[str] = []  # models not shown yet, in model order
        self.results: dict[str, ModelResult] = {}
        self.building = 0  # tables created in the open build transaction (0: none open)
        self.source_text: dict[str, str] = {}
        # concurrent builds (opts.workers > 1): models' CTAS run in lanes (worker
        # threads, see strata/engine/lanes.py); pins, hashes, identity and publication
        # stay on the main thread
        self.lanes: Lanes | None = None
        # (kind, name) -> rows, when known
        self.rows_of = {("source", s): n for s, n in plan.sources.rows.items()}
        self.inflight: dict[str, tuple] = {}  # model -> (plan, code_fp, result, log, snap)
        self.deferred_drops: list[H.SnapshotRecord] = []
        self.unique_rights: set = set()  # join right sides found unique on a key
        # the model the engine failed on, and the engine's error
        self.failed: tuple[str, BaseException] | None = None
        # a failing pin does not stop the run at once: every model it can still build is
        # built and checked, and the run then fails with every violation (issue 19)
        self.pin_failed: dict[str, list[Violation]] = {}
        self.not_built: dict[str, str] = {}  # model -> the failed upstream it waited on
        # pins checked after their relation, which reads the model, is built
        # (PinSpec.after): model -> violations; they hold back no model
        self.pin_failed_after: dict[str, list[Violation]] = {}

    def run(self) -> Built:
        """Every model of the closure built, kept or reused, its pins checked and its
        content hashed; on any failure what this run created is dropped."""
        closure = self.plan.closure
        incremental.cleanup_leftovers(self.wh, self.registry)  # a crashed run's
        crash_point("after_cleanup")
        if self.opts.workers > 1:
            self.lanes = Lanes(self.ad, self.opts.workers, BUILD_BATCH, HASH_NOW_ROWS,
                               after_commit=_columns_and_hashes)
        try:
            try:
                self.unannounced = list(closure)
                for name in self._schedule(closure):
                    self.results[name] = self._model(name, self.plan.state.code_fps[name])
                    self._announce()
                    crash_point(f"after_model:{name}")
                self._drain()
                self._check_after()
                if self.pin_failed or self.pin_failed_after:
                    return self._failure(None)
                self._flush()
                self._commit_build()
                self._drop_deferred()
            except BaseException as err:  # noqa: BLE001 -- a value: the driver raises it
                return self._failure(err)
        finally:
            self._close_lanes()
        return Built(self.plan, self.reasons, [self.results[m] for m in closure],
                     dict(self.snap_of), list(self.new_records), list(self.created),
                     self._recipe(closure))

    def _failure(self, err: BaseException | None) -> Built:
        """Drop what this run created, find what the failed model read damaged."""
        unfinished = frozenset(self.inflight)
        self._abandon_inflight()
        self._drop_created()
        unreadable = (self._unreadable_reads(*self.failed)
                      if isinstance(err, StrataError) and self.failed is not None else {})
        failure = BuildFailure(err, self.module, self.opts, self.failed,
                               dict(self.pin_failed), dict(self.pin_failed_after),
                               dict(self.results),
                               dict(self.snap_of), unfinished, unreadable)
        return Built(self.plan, self.reasons, [], dict(self.snap_of), [], [], None, failure)

    def _check_after(self) -> None:
        """The pins whose relation reads their model (`PinSpec.after`: dbt's
        relationships test on a model downstream), once every model is built: on the
        tables this run publishes, the relation's live one when the run does not build
        it. Skipped when neither table changed since the last run (checked then), or
        when the relation has no table yet (checked by the run that builds it)."""
        for name in self.plan.closure:
            after = [p for p in self.module.plan(name).pins if p.after]
            if after and name not in self.pin_failed and name not in self.not_built:
                self._check_after_model(name, after)

    def _check_after_model(self, name: str, after: list) -> None:
        log = CheckLog(dialect=self.ad.dialect, bitmaps=self.ad.bitmap_distinct)
        snaps, checked = {}, []
        for pin in after:
            other = pin.relation.name
            snap = self.snap_of.get(other) or self.live.get(other)
            if other in self.not_built or other in self.pin_failed or snap is None:
                log.skip(pin.describe(), f"`{other}` is not built: its run checks the pin")
            elif (self.snap_of[name] == self.base_snaps.get(name)
                  and snap == self.base_snaps.get(other)):
                log.skip(pin.describe(), f"`{name}` and `{other}` are as the last run "
                         "checked them")
            else:
                snaps[other] = snap
                checked.append(pin)
        try:
            found = check_pins_after(self.ad, internal(self.snap_of[name]),
                                     replace(self.module.plan(name), pins=checked), log,
                                     lambda ref: internal(snaps[ref.name]))
        except self.errors as err:
            raise self._engine_failure(name, err) from None
        result = self.results[name]
        result.checks = [*result.checks, *log.ran]
        result.skipped_checks = [*result.skipped_checks, *log.skipped]
        if found:
            self.pin_failed_after[name] = found
            result.status = "failed"

    def _blocked_by(self, name: str) -> str | None:
        """The upstream model whose pins failed (directly or further up), if any."""
        for up in self.module.models[name].models_read:
            if up in self.pin_failed:
                return up
            if up in self.not_built:
                return self.not_built[up]
        return None

    def _recipe(self, closure: list[str]) -> dict:
        """What `replay --execute` needs to recompute this run without the module:
        each model's canonical SQL and each source's relation as this run read it."""
        return {
            "order": closure,
            "code": {m: self.canonical.get(m) or model_query(
                self.module.plan(m), _canonical_relation).sql(dialect="duckdb")
                for m in closure},
            "sources": {s: relation_sql(b) for s, b in self.bindings.items()},
            "source_columns": {s: [n for n, _ in self.module.sources[s].columns]
                               for s in self.bindings},
            "source_fingerprints": self.plan.source_fps,
            "merges": {m: incremental.merges(self.module.plan(m)) for m in closure},
            # the SQL as this engine runs it (its rewrites need the compiled tree, which a
            # replay no longer has); DuckDB runs `code` itself
            **({} if self.ad.relinks_canonical_text else {"engine_code": {
                m: self.ad.render(model_query(self.module.plan(m), _canonical_relation))
                for m in closure}, "engine_sources": {
                s: self.ad.render(exp.select(exp.Star()).from_((b.read or b.relation).copy()))
                for s, b in self.bindings.items()}}),
        }

    # ------------------------------------------------------------ one model
    def _model(self, name: str, code_fp: str) -> ModelResult:
        reasons, base_snaps = self.reasons, self.base_snaps
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
            reasons[name] = quarantine_note(self.quarantined, "its snapshot",
                                            self.opts.keep[name])
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
                             else quarantine_note(self.quarantined, "its last snapshot",
                                               base_snaps[name])
                             if damaged else "its last snapshot was collected")
        started = time.perf_counter()
        result = ModelResult(name, "rebuilt", "", reason=reasons.get(name, "selected"))
        try:
            self._build(plan, code_fp, result)
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
            f"{first_line(str(err), type(err).__name__)}", self.module.models[name].decl.name_span,
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
        record = self.registry.by_name.get(self.snap_of[ref.name])
        return record is not None and wanted in record.parts.get("verified", [])

    def _build(self, plan: Plan, code_fp: str, result: ModelResult) -> None:
        log = CheckLog(dialect=self.ad.dialect, bitmaps=self.ad.bitmap_distinct,
                       clock=self.relations if plan.clock else None)
        check_joins(self.ad, plan, self.relations, self.relation_sql_of, self.verified_unique,
                    log, self.unique_rights)
        merge = incremental.plan_merge(self, plan, code_fp, self.live, result)
        if merge is not None:
            record = incremental.build_layer(self, plan, code_fp, merge, result, log)
        else:
            result.path = "full" if plan.incremental else None
            record = self.full(plan, code_fp, result, log, defer=True)
        result.checks = log.ran
        result.skipped_checks = log.skipped
        if record is not None:  # None: settled already (reused), or hashed in a batch
            self._keep_or_reuse(record, result)

    def _keep_or_reuse(self, record: H.SnapshotRecord, result: ModelResult) -> None:
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
            self._keep_or_reuse(make_record(snap, model, self.rid, "table", hashed, columns[snap],
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
        if name not in self.reasons and name in self.base_snaps:
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

    def full(self, plan: Plan, code_fp: str, result: ModelResult,
              log: CheckLog, defer: bool = False) -> H.SnapshotRecord | None:
        """CTAS of the model into a new table, pins checked. Its record comes back, or
        with `defer` is made when its batch is hashed (`_flush`); None where the engine
        hashed the table while writing it (the record is kept already)."""
        snap = self.unique_name(f"snap_{self.rid}_{plan.model}")
        tree, query = self.executed_query(plan)
        result.sql = query
        if defer and self.lanes:
            self._submit(plan, snap, tree, query, code_fp, result, log)
            return None
        self._begin_build()
        rows, settled = build_hashed(self.ad, Relation(INTERNAL, snap), tree, query)
        self.created.append(snap)
        self._built(rows)
        return self._created(plan, snap, rows, code_fp, result, log, defer, settled)

    def _created(self, plan: Plan, snap: str, rows: int | None, code_fp: str,
                 result: ModelResult, log: CheckLog, defer: bool, settled: tuple | None = None
                 ) -> H.SnapshotRecord | None:
        """What follows a model's CTAS: its pins, then its content hash (`settled`:
        its columns and hash, computed already by the lane that built it, or by the
        statement that wrote it: `Adapter.build_table_hashed`). `rows` None:
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
            self._keep_or_reuse(make_record(snap, plan.model, self.rid, "table", hashed, columns,
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

    def _finish(self, name: str, built: LaneBuilt) -> None:
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
    def _unreadable_reads(self, model: str, cause: BaseException) -> dict[str, tuple]:
        """After `model` failed in the engine (the open build batch rolled back) with
        an error that shows damaged storage (damaged_storage: a block checksum, never
        the whole file failing nor a passing failure): the snapshots it read that this
        run did not build and whose storage is damaged, as snapshot -> (record, why,
        True). Empty otherwise: the model's error stands (E070 for the file: no
        quarantine entry, no rebuild published into a broken file)."""
        from strata.engine.ops import unreadable_tables

        if not self.ad.damaged_storage(cause):
            return {}
        reads = [self.snap_of.get(m) for m in self.module.models[model].models_read]
        if incremental.merges(self.module.plan(model)):
            reads.append(self.live.get(model))  # the previous snapshot a merge reads
        records = H.records(self.wh, {s for s in reads if s and s not in self.quarantined})
        found = {}
        for name, record in records.items():
            if unreadable := unreadable_tables(self.wh, record):
                table_name, error = next(iter(unreadable.items()))
                found[name] = (record, f"table {table_name} unreadable: {error}", True)
        return found

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
        drop_created(self.ad, self.created)
        self.created.clear()



def build_inputs(plan: Plan) -> list[str]:
    """The models a model's build lane must see committed with or before its table:
    those its query reads and those its pins read (`pin references`: the check runs
    on the main connection once the model's table is committed, and must find the
    referenced table committed too, not held in another lane's open transaction)."""
    refs = [*plan.reads, *pin_reads(plan)]
    return list(dict.fromkeys(r.name for r in refs if r.kind == "model"))


def _columns_and_hashes(lane: Adapter, tables: list[tuple[str, str]]) -> dict[str, tuple]:
    """model -> (columns, row hash) of tables just committed, one statement for the
    batch; the lanes' hasher thread runs it on its own connection right after a
    lane's commit, so the main thread does not hash (see strata/engine/lanes.py and
    `Adapter.hash_tables`)."""
    found = lane.hash_tables(INTERNAL, [name for _, name in tables])
    return {model: found[name] for model, name in tables}



def drop_created(ad: Adapter, created: list[str]) -> None:
    """Drop what a run created, newest first, as far as the engine lets it (the next
    run's cleanup takes the rest): after a failure, or a staged run's tables."""
    if not created:
        return
    errors = ad.engine_errors()
    try:
        kinds = ad.relations(INTERNAL)
    except errors:
        kinds = {}
    for obj in reversed(created):
        try:
            if obj in kinds:
                ad.drop(Relation(INTERNAL, obj), kinds[obj])
        except errors:
            pass  # the next run's cleanup takes it
