"""A run: values flowing one way through five stages, each a module of its own.

    observe  (module, warehouse, options) -> Observed, Registry, SourcesRead
    decide   (module, registry, sources, options, observed) -> RunPlan   (pure)
    build    (RunPlan, warehouse) -> Built                  (the engine, building)
    settle   (Built) -> Records | Failed                    (pure)
    publish  (Records, warehouse) -> RunReport;  conclude_failure(Failed) -> StartOver | error

This module is the driver: it opens the warehouse, passes each stage's value to the
next, and starts over when a failed build found a snapshot it read damaged (now
quarantined: each start over quarantines one more snapshot, so this ends)."""

from __future__ import annotations

import time

from strata.compiler import require_ok, select_models

# aliased: a stage function must not shadow its module as an attribute of this package
from strata.engine.publication import adapter_of
from strata.engine.run import quiet
from strata.engine.run.build import build as build_plan
from strata.engine.run.decide import decide as decide_plan
from strata.engine.run.observe import observe as observe_run
from strata.engine.run.options import ModelResult, Progress, RunOptions, RunReport
from strata.engine.run.publish import StartOver, conclude_failure
from strata.engine.run.publish import publish as publish_records
from strata.engine.run.settle import Failed
from strata.engine.run.settle import settle as settle_built
from strata.engine.warehouse import Warehouse
from strata.semantics.module import Module

__all__ = ["ModelResult", "Progress", "RunOptions", "RunReport", "execute", "run"]


def run(module: Module, warehouse: str, opts: RunOptions,
        progress: Progress | None = None) -> RunReport:
    """Open the warehouse (locking it), run, close."""
    require_ok(module)
    select_models(module, opts.models)  # unknown models fail before the file is touched
    proven = quiet.proven_noop(module, warehouse, opts)  # no engine started for nothing
    if proven is not None:
        return proven
    wh = Warehouse.open(warehouse)
    try:
        return execute(module, wh, opts, progress)
    finally:
        wh.close()


def execute(module: Module, wh: Warehouse, opts: RunOptions,
            progress: Progress | None = None) -> RunReport:
    """The run on an open warehouse, started over as often as a failed build found
    a damaged snapshot to quarantine; the notes say each time."""
    notes: list[str] = []
    while True:
        outcome = attempt(module, wh, opts, progress)
        if isinstance(outcome, StartOver):
            notes.append(outcome.note)
            continue
        outcome.notes[:0] = notes
        return outcome


def attempt(module: Module, wh: Warehouse, opts: RunOptions,
            progress: Progress | None = None) -> RunReport | StartOver:
    """One pass through the stages; raises the run's error when it failed."""
    state, registry, sources = observe_run(module, wh, opts)
    plan = decide_plan(module, registry, sources, opts, state)
    if isinstance(plan, RunReport):  # nothing to do
        plan.seconds = time.perf_counter() - state.started
        plan.fingerprint_seconds = sources.seconds
        plan.source_reads = sources.reads
        quiet.arrange(adapter_of(wh), module, opts, state, sources, plan)
        return plan
    settled = settle_built(build_plan(plan, wh, progress))
    if isinstance(settled, Failed):
        outcome = conclude_failure(settled, wh)
        if isinstance(outcome, StartOver):
            return outcome
        raise outcome
    report = publish_records(settled, wh)
    quiet.after_publishing(wh, module, opts, sources)
    return report
