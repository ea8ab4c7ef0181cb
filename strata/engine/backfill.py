"""`strata backfill`: re-run a published run's context with corrected sources, under
an audited reason (SPEC §3.6 and the delivery note's "Backfill").

The backfill never rewrites history. It starts from the run's models, branch and
overrides, points the named sources at corrected tables, and publishes a new run
(kind `backfill`, with `backfill_of` and `reason`) on that branch:

- rebuilt: the models downstream of a corrected source whose content really differs
  from what the run read (content governs, not names), plus models whose code
  changed since or whose snapshot gc collected; incremental ones among them are
  recomputed in full (a watermark cannot see corrections to old rows);
- kept: every other model keeps the run's snapshot, by name.

A source not named in `--source` whose data moved on since the run is read at its
run-time version through the kept snapshots; when a rebuilt model reads it too,
every model reading it is rebuilt, so the backfill reads one version of each source
and its recorded fingerprints stay true for `run --only-stale`.

Every user error and every pin or contract violation surfaces as E085 (the original
code kept in a note) and leaves the warehouse as it was.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from strata.clock import now
from strata.compiler import clock_reads, require_ok
from strata.diagnostics import CATALOGUE, Diagnostic, StrataError, did_you_mean, fail
from strata.engine import history as H
from strata.engine.branches import ensure_branch, live_snapshots
from strata.engine.fingerprints import code_fingerprints
from strata.engine.incremental import merges
from strata.engine.locations import DuckDBFile, parse_location
from strata.engine.ops import recorded_clock
from strata.engine.run import Progress, RunOptions, RunReport, execute
from strata.engine.sources import bind_source, override_text, parse_overrides, prepare
from strata.engine.warehouse import Warehouse
from strata.semantics.module import Module
from strata.sqlgen.clock import RunClock

# Codes a backfill reports as E085: what the user asked for does not hold (run,
# models, sources, branch), or the corrected data breaks a pin or a contract.
# Warehouse-level failures (E070 cannot open, E075 locked, E083 version) keep theirs.
_AS_E085 = {f"E06{d}" for d in range(10)} | {"E071", "E072", "E073", "E074", "E076", "E078",
                                             "E079", "E080"}


@dataclass
class BackfillPlan:
    """What a backfill will do, decided before anything is written."""

    of: H.HistoryEntry
    selection: list[str]
    overrides: dict[str, str]
    corrected: dict[str, str]  # source -> corrected table, as given
    rebuild: dict[str, str]  # model -> why
    keep: dict[str, str]  # model -> the run's snapshot
    force_full: set[str]
    source_fingerprints: dict[str, str]  # what the backfill's snapshots were built from
    notes: list[str] = field(default_factory=list)


def backfill(module: Module, warehouse: str, run_id: str, sources: Sequence[str] = (),
             models: list[str] | None = None, reason: str | None = None,
             module_path: str | None = None, progress: Progress | None = None,
             workers: int = 1, clock: RunClock | None = None) -> RunReport:
    """Correct run `run_id` with `sources` (`source=table` pairs) and publish the result
    as a new backfill run on its branch. Returns the run's report: status `published`,
    or `up_to_date` when there is nothing to correct or the very same backfill is
    already published (then nothing is written)."""
    require_ok(module)
    with _as_e085(run_id):
        reason = (reason or "").strip()
        if not reason:
            raise fail("E085", f"no backfill of run `{run_id}` without a reason: --reason "
                       "is missing or empty", None,
                       "say why, e.g. --reason \"corrected upstream extract\"; it is recorded "
                       "in the history next to the run it corrects (to re-run without an "
                       "audit trail, use `strata run --override`)")
        corrected = parse_overrides(list(sources), module, code="E085", flag="--source")
        if not corrected:
            raise fail("E085", f"backfill of run `{run_id}` names no corrected source", None,
                       "point each corrected source at its table: --source "
                       "orders=orders_fixed (a table fixed in place: --source orders=orders)")
        for name in models or []:
            if name not in module.models:
                raise fail("E085", f"unknown model `{name}` in --models", None,
                           did_you_mean(name, module.models) or
                           f"models: {', '.join(module.order)}")
        _probe(warehouse, run_id)
        wh = Warehouse.open(warehouse, create=False)
        try:
            plan = plan_backfill(module, wh, run_id, corrected, models)
            if not plan.rebuild:
                return _nothing_to_correct(plan)
            bound, said = _backfill_clock(module, plan, clock)
            plan.notes.extend(said)
            opts = RunOptions(
                models=plan.selection, branch=plan.of.branch, overrides=plan.overrides,
                kind="backfill", backfill_of=plan.of.id, reason=reason, keep=plan.keep,
                rebuild=set(plan.rebuild), rebuild_reasons=plan.rebuild,
                force_full=plan.force_full, source_fingerprints=plan.source_fingerprints,
                skip_if_published=True, module_path=module_path, workers=workers,
                clock=bound)
            report = execute(module, wh, opts, progress)
        finally:
            wh.close()
    if report.status == "up_to_date" and report.entry is not None:
        done = report.entry
        report.notes = [(f"backfill {report.run_id} of run {done.backfill_of} is already "
                         f"published on {report.branch} (reason: {done.reason!r}): the same "
                         "correction of the same data, nothing to do, nothing written")]
    else:
        report.notes = plan.notes + report.notes
    return report


def _backfill_clock(module: Module, plan: BackfillPlan,
                    given: RunClock | None) -> tuple[RunClock, list[str]]:
    """The clock the backfill's models read: the corrected run's (a correction of
    yesterday's run still sees yesterday), unless `--at` says otherwise; and a note
    saying which, where a rebuilt model reads it."""
    recorded = recorded_clock(plan.of.source_fingerprints) or RunClock.parse(
        plan.of.started_at)
    clock = given or recorded or RunClock(now())
    read = sorted({n for m in plan.rebuild for n in clock_reads(module, m)})
    if not read:
        return clock, []
    values = ", ".join(f"{n}() = {clock.value(n)}" for n in read)
    whose = "as given by --at" if given else f"run {plan.of.id}'s (--at changes it)"
    return clock, [f"{values}: {whose}"]


def plan_backfill(module: Module, wh: Warehouse, run_id: str, corrected: dict[str, str],
                  models: list[str] | None) -> BackfillPlan:
    """Decide selection, overrides, what to rebuild and what to keep (reads only)."""
    of = H.find(wh, run_id)
    if of.kind not in ("run", "backfill") or not of.snapshots:
        what = {"stage": "was staged only (--stage-only) and published no snapshots",
                "rollback": f"is a rollback (to run {of.details.get('rolled_back_to')}); "
                            "backfill the run it restored",
                H.FAILED: "is a failed run and published nothing; backfill a run that "
                          "published"}.get(
            of.kind, f"is a `{of.kind}` entry, not a run with snapshots")
        raise fail("E085", f"cannot backfill `{of.id}`: it {what}", None,
                   "`strata history -o WAREHOUSE` lists the runs")
    selection = _selection(module, of, models)
    overrides = {s: t for s, t in of.overrides.items() if s in module.sources}
    overrides.update(corrected)
    closure = [m for m in module.order if m in module.upstream(selection)]
    readers = {s: [m for m in closure if s in module.models[m].sources_read]
               for s in module.sources}
    for name in corrected:
        if not readers[name]:
            raise fail("E085", f"--source `{name}`: no model of the backfill reads it", None,
                       f"the backfill builds {', '.join(closure)}; drop this --source or "
                       "widen --models")
    ensure_branch(wh, of.branch)

    fps: dict[str, str] = {}
    for name in sorted({s for m in closure for s in module.models[m].sources_read}):
        src = module.sources[name]
        binding = bind_source(src, overrides.get(name))
        # as the run reads it (a file the engine cannot read: checked locally, loaded)
        fps[name] = prepare(wh.adapter, src, binding).fingerprint
    moved = {s for s, fp in fps.items() if of.source_fingerprints.get(s) != fp}
    notes = [f"--source {override_text(s, t)}: same content as what run {of.id} read; nothing downstream "
             "of it changes" for s, t in sorted(corrected.items()) if s not in moved]

    code_fps = code_fingerprints(module, closure)
    rebuild: dict[str, str] = {}
    for name in closure:
        hit = sorted(module.sources_upstream(name) & moved & set(corrected))
        if name not in of.snapshots:
            rebuild[name] = f"not built by run {of.id}"
        elif of.code_fingerprints.get(name) != code_fps[name]:
            rebuild[name] = f"code changed since run {of.id}"
        elif hit:
            rebuild[name] = f"source `{hit[0]}` corrected"
        else:
            record = H.snapshot(wh, of.snapshots[name])
            if record is None or record.collected_at is not None:
                rebuild[name] = f"run {of.id}'s snapshot was collected by gc"
    if not rebuild:
        return BackfillPlan(of, selection, overrides, corrected, {}, {}, set(), fps, notes)

    # A source that moved since the run without being named: kept models hold its
    # run-time version. If a rebuilt model reads it, rebuild all its readers too, so
    # the backfill reads one version of it; else record the run-time fingerprint.
    drifted = moved - set(corrected)
    while True:
        _close_downstream(module, closure, rebuild)
        shared = sorted(s for s in drifted if any(m in rebuild for m in readers[s])
                        and any(m not in rebuild for m in readers[s]))
        if not shared:
            break
        for s in shared:
            for m in readers[s]:
                rebuild.setdefault(m, f"reads `{s}`, which changed since run {of.id}, as "
                                   "another rebuilt model does")
    recorded = dict(fps)
    for s in sorted(drifted):
        if any(m in rebuild for m in readers[s]):
            notes.append(f"source `{s}` changed since run {of.id} (not named in --source): "
                         f"its readers are recomputed with its current data")
        else:
            recorded[s] = of.source_fingerprints.get(s, fps[s])
            notes.append(f"source `{s}` changed since run {of.id} (not named in --source): "
                         f"its readers keep run {of.id}'s snapshots")
    live = live_snapshots(wh, of.branch)
    moved_on = sorted(m for m in closure if m not in rebuild and live.get(m) != of.snapshots[m])
    if moved_on:
        notes.append(f"the live views of {', '.join(moved_on)} moved on since run {of.id}: "
                     f"the backfill publishes run {of.id}'s snapshots for them again")
    keep = {m: of.snapshots[m] for m in closure if m not in rebuild}
    force_full = {m for m in rebuild if merges(module.plan(m))}
    return BackfillPlan(of, selection, overrides, corrected, rebuild, keep, force_full,
                        recorded, notes)


def _selection(module: Module, of: H.HistoryEntry, models: list[str] | None) -> list[str]:
    """The run's models, trimmed by --models (only models the run built)."""
    if models:
        outside = [m for m in models if m not in of.snapshots]
        if outside:
            raise fail("E085", f"model `{outside[0]}` was not built by run `{of.id}`", None,
                       f"--models trims the run's models: {', '.join(of.models)}")
        wanted = set(models)
    else:
        gone = [m for m in of.models if m not in module.models]
        if gone:
            raise fail("E085", f"model `{gone[0]}` of run `{of.id}` is no longer in the "
                       "module", None, "trim the selection with --models")
        wanted = set(of.models)
    return [m for m in module.order if m in wanted]


def _close_downstream(module: Module, closure: list[str], rebuild: dict[str, str]) -> None:
    for name in closure:
        if name in rebuild:
            continue
        hit = [m for m in module.models[name].models_read if m in rebuild]
        if hit:
            rebuild[name] = f"upstream `{hit[0]}` rebuilt"


def _nothing_to_correct(plan: BackfillPlan) -> RunReport:
    of = plan.of
    return RunReport(of.id, of.branch, "up_to_date", notes=[
        *plan.notes, (f"nothing to correct: every model of run {of.id} reads the same "
                      "content as it did; nothing written")])


def _probe(warehouse: str, run_id: str) -> None:
    """Find the run without creating or setting up anything: an unknown run must leave
    even a bare DuckDB file untouched."""
    location = parse_location(warehouse)  # E070 for a kind that is none (password hidden)
    if isinstance(location, DuckDBFile) and not Path(warehouse).exists():
        raise fail("E085", f"unknown run `{run_id}`: there is no warehouse at `{warehouse}`")
    wh = Warehouse.open(warehouse, read_only=True, create=False)
    try:
        H.find(wh, run_id)
    finally:
        wh.close()


@contextmanager
def _as_e085(run_id: str) -> Iterator[None]:
    try:
        yield
    except StrataError as err:
        if not any(d.code in _AS_E085 for d in err.diagnostics):
            raise
        converted = StrataError([_convert(d, run_id) for d in err.diagnostics])
        converted.failed_entry = err.failed_entry  # the failed backfill's history entry
        raise converted from None


def _convert(d: Diagnostic, run_id: str) -> Diagnostic:
    if d.code not in _AS_E085:
        return d
    hint = (d.hint or "").replace("--override", "--source") or None
    return Diagnostic("E085", f"backfill of run `{run_id}` failed: {d.message}", d.span,
                      hint or "nothing was published",
                      notes=(*d.notes, f"{d.code}: {CATALOGUE.get(d.code, ('', ''))[0]}"))
