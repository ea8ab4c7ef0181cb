"""The record of a failed run: after a run (or backfill) failed on a model and cleaned
up (nothing published, its new tables dropped), a `failed` history entry says what
it attempted, which models failed with which error, and which it had built.

Recording is best effort and never changes the failure: the run's error is raised
exactly as before whether or not the entry could be written. Nothing is recorded
when the failure is not a model's: the warehouse file itself (E070: full disk,
read-only folder, truncated file: writing there again would fail or make things
worse), an interrupt (Ctrl-C), or anything that is not a coded diagnostic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import duckdb

from strata.clock import now_text
from strata.diagnostics import Diagnostic, StrataError
from strata.engine import history as H
from strata.engine.fingerprints import sha

# the codes that mean the failure is not a model's: the warehouse file (E070), its lock
# (E075), or an internal error
NOT_A_MODEL_FAILURE = ("E000", "E070", "E075")
_NAMED_MODEL = re.compile(r"^model `([^`]*)`")


@dataclass
class Attempt:
    """What the run set out to do, as it knew it when it failed."""

    run_id: str
    started_at: str
    selection: list[str]
    closure: list[str]  # the models it attempted: the selection and its upstream
    source_fingerprints: dict[str, str] = field(default_factory=dict)
    code_fingerprints: dict[str, str] = field(default_factory=dict)
    unfinished: set[str] = field(default_factory=set)  # statements still running


def record(wh, run, err: BaseException, attempt: Attempt) -> H.HistoryEntry | None:
    """Append the `failed` entry for `run` (a build's failure, run/build.py: its
    module, options, results and what failed) failing with `err`, when it is a
    model's failure and the warehouse takes the write; the entry, or None. Never
    raises: the run's own error is what the user must see."""
    try:
        if not _recordable(wh, run, err):
            return None
        entry = failed_entry(run, err, attempt)
        with wh.transaction():
            H.append(wh, entry)
    except Exception:  # noqa: BLE001 -- best effort: the run's error stands as it is
        return None
    err.failed_entry = entry.id
    return entry


def _recordable(wh, run, err: BaseException) -> bool:
    if not isinstance(err, StrataError) or wh.read_only:
        return False
    if any(d.code in NOT_A_MODEL_FAILURE for d in err.diagnostics):
        return False
    engine_error = run.failed[1] if run.failed is not None else None
    return not isinstance(engine_error, duckdb.InterruptException)


def failed_entry(run, err: StrataError, attempt: Attempt) -> H.HistoryEntry:
    """The entry: lists no snapshots (nothing was published), so no command takes it
    for a staleness base, a rollback target or a run gc keeps."""
    opts = run.opts
    # a model is in exactly one list: one downstream of a failed pin is "not built",
    # as the run's error says, even when a lane built and checked it before that pin
    # failed (its own violations are not reported: the same record with any number of
    # workers); only an error the run reports about the model itself puts it in
    # `failed` instead
    # downstream of a failed pin, or of the model the engine failed on (E080): never built
    stopped = set(run.pin_failed) | ({run.failed[0]} if run.failed is not None else set())
    not_built = _downstream_of(run, attempt.closure, stopped)
    failed = failed_models(run, err, set(not_built))
    not_built = {m: up for m, up in not_built.items() if m not in failed}
    results = run.results
    built = [m for m in attempt.closure
             if m in run.snap_of and m not in attempt.unfinished and m not in failed
             and m not in not_built
             and m in results and results[m].status in ("rebuilt", "reused")]
    finished = now_text()
    return H.HistoryEntry(
        id=sha(H.FAILED, attempt.run_id, opts.branch, attempt.started_at, finished)[:12],
        kind=H.FAILED, branch=opts.branch, started_at=attempt.started_at,
        finished_at=finished, models=list(attempt.selection),
        overrides=dict(opts.overrides), source_fingerprints=attempt.source_fingerprints,
        code_fingerprints=attempt.code_fingerprints, backfill_of=opts.backfill_of,
        reason=opts.reason, module=opts.module_path,
        failure={
            "run_id": attempt.run_id,
            "as": "stage" if opts.stage_only else opts.kind,
            # how it was asked for, so `replay` can say how to attempt it again
            "options": {"models": opts.models, "only_stale": opts.only_stale,
                        "full_refresh": opts.full_refresh, "stage_only": opts.stage_only},
            "attempted": list(attempt.closure),
            "failed": failed,
            "built": built,
            "not_built": not_built,
            "errors": [_said(d) for d in err.diagnostics],
        })


def _downstream_of(run, closure: list[str], failed: set[str]) -> dict[str, str]:
    """model -> the failed model upstream of it, as the run's pin error names them
    (a model a lane built before its input's pins were checked counts too, so the
    record is the same with any number of workers)."""
    out: dict[str, str] = {}
    for m in closure:
        up = next((u for u in run.module.models[m].models_read if u in failed or u in out),
                  None)
        if up is not None:
            out[m] = out.get(up, up)
    return out


def failed_models(run, err: StrataError, not_built: set[str] = frozenset()
                  ) -> dict[str, list[dict]]:
    """model -> [{code, message}] for every model that failed: each pin or join
    violation of each model not downstream of another's (`not_built`), the model the
    engine failed on, and any other diagnostic that names its model."""
    out: dict[str, list[dict]] = {}
    for model, violations in run.pin_failed.items():
        if model not in not_built:
            out[model] = [_said(v.diagnostic()) for v in violations]
    if run.failed is not None and run.failed[0] not in out:
        named = [d for d in err.diagnostics if _model_of(run, d) == run.failed[0]]
        out[run.failed[0]] = [_said(d) for d in named or err.diagnostics[:1]]
    for d in err.diagnostics:
        model = _model_of(run, d)
        if model is not None and model not in out:
            out[model] = [_said(d)]
    return {m: out[m] for m in [*run.module.order, *sorted(out)] if m in out}


def _model_of(run, d: Diagnostic) -> str | None:
    """The model a diagnostic is about: its span is the model's name, or its message
    starts `model `NAME``."""
    if d.span is not None:
        for name, info in run.module.models.items():
            if info.decl.name_span == d.span:
                return name
    found = _NAMED_MODEL.match(d.message)
    return found.group(1) if found and found.group(1) in run.module.models else None


def _said(d: Diagnostic) -> dict:
    """The diagnostic's code and its whole message (one line as strata words it; a
    name in it may hold U+2028, a line feed or any other character but a backtick,
    and is kept whole: shown, it is escaped where it is printed)."""
    return {"code": d.code, "message": d.message}
