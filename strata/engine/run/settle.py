"""Stage 4 of a run: settle what the build made into what publication writes, or
into the failure to report. No engine: pins were checked, drift detected and
damaged reads probed while building (they need the engine, and a failing pin holds
back the models downstream of it); here they are judged. A run whose pins failed
fails with every violation in model order (issue 19); a failed model that read a
damaged snapshot quarantines it and starts over; anything else is recorded as a
failed run. Drift and the other findings go into the history entry's details."""

from __future__ import annotations

from dataclasses import dataclass

from strata.clock import now_text
from strata.diagnostics import StrataError
from strata.engine import failures
from strata.engine import history as H
from strata.engine.pins.results import PinError
from strata.engine.run.build import BuildFailure, Built
from strata.engine.run.decide import RunPlan
from strata.engine.run.options import RunReport

# what a model's result keeps in the history entry
_DETAILS = ("status", "path", "delta_rows", "compacted", "drift", "rows", "reason",
            "checks", "skipped_checks", "notes")


@dataclass(frozen=True)
class Records:
    """What publication writes: the history entry, the new snapshots' registry rows
    and the views to switch (a staged run: the entry alone, its tables dropped)."""

    plan: RunPlan
    entry: H.HistoryEntry
    new_records: list[H.SnapshotRecord]
    snap_of: dict[str, str]  # model -> the snapshot its view shows after this run
    created: list[str]  # dropped again by a staged run
    report: RunReport  # without its entry and seconds (publish.py fills them)


@dataclass(frozen=True)
class Failed:
    """A failed build: the error to raise, and what to do first."""

    error: BaseException
    failure: BuildFailure
    attempt: failures.Attempt  # for the `failed` history entry
    # snapshot -> (record, why, True) to quarantine before starting over; empty: the
    # failure is recorded and raised
    quarantine: dict[str, tuple]


def settle(built: Built) -> Records | Failed:
    plan = built.plan
    if built.failure is not None:
        return _failed(plan, built.failure)
    opts, state = plan.options, plan.state
    report = RunReport(plan.rid, opts.branch, "staged" if opts.stage_only else "published",
                       results=list(built.results), stale_reasons=built.reasons,
                       removed=state.removed, fingerprint_seconds=plan.sources.seconds,
                       source_reads=plan.sources.reads)
    entry = H.HistoryEntry(
        id=plan.rid, kind="stage" if opts.stage_only else opts.kind, branch=opts.branch,
        started_at=state.started_at, finished_at=now_text(), models=state.selection,
        overrides=dict(opts.overrides),
        source_fingerprints=plan.source_fps, code_fingerprints=state.code_fps,
        source_markers={s: r.to_json() for s, r in plan.sources.recorded.items()},
        snapshots={} if opts.stage_only else dict(built.snap_of),
        rebuilt=report.rebuilt, reused=report.reused, backfill_of=opts.backfill_of,
        reason=opts.reason, module=opts.module_path, removed=state.removed,
        complete=plan.whole,
        details={**{r.model: {k: v for k, v in r.to_json().items() if k in _DETAILS}
                    for r in report.results},
                 "__replay": built.recipe, "__code_key": state.code_key})
    return Records(plan, entry, built.new_records, built.snap_of, built.created, report)


def _failed(plan: RunPlan, failure: BuildFailure) -> Failed:
    error = failure.error or pin_failure(plan, failure)
    attempt = failures.Attempt(
        plan.rid, plan.state.started_at, plan.state.selection, plan.closure,
        plan.source_fps, plan.state.code_fps, set(failure.unfinished))
    quarantine = failure.unreadable if isinstance(error, StrataError) else {}
    return Failed(error, failure, attempt, quarantine)


def pin_failure(plan: RunPlan, failure: BuildFailure) -> PinError:
    """Every violation of every model built, in model order; the models downstream
    of a failing one were neither built nor checked, and the error says which."""
    # a model a lane built before its input's pins were checked counts as not built
    # too, so the report is the same with any number of workers
    closure, module = plan.closure, plan.module
    failed, blocked = {}, {}
    for m in closure:
        up = next((u for u in module.models[m].models_read
                   if u in failed or u in blocked), None)
        if up is not None:
            blocked[m] = blocked.get(up, up)
        elif m in failure.pin_failed:
            failed[m] = failure.pin_failed[m]
    # a pin checked after its relation was built (PinSpec.after) held back no model
    violations = [v for m in closure for v in [*failed.get(m, []),
                                                *failure.pin_failed_after.get(m, [])]]
    unchecked = [f"`{m}` (upstream `{blocked[m]}` failed)" for m in closure
                 if m in blocked]
    note = ("not built or checked: " + ", ".join(unchecked)) if unchecked else None
    return PinError(violations, note=note)
