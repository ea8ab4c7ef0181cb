"""Stage 5 of a run: write. A settled run publishes its history entry, registry rows
and view switches (strata/engine/publication.py: atomic, or by its commit point); a
staged run appends its entry and drops its tables. A failed one quarantines what it
found damaged and starts over, or appends its `failed` entry (best effort)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from strata.engine import failures
from strata.engine import history as H
from strata.engine.environment import crash_point
from strata.engine.publication import adapter_of
from strata.engine.publication import publish as publish_entry
from strata.engine.run.build import drop_created
from strata.engine.run.options import RunReport
from strata.engine.run.settle import Failed, Records
from strata.engine.warehouse import Warehouse


@dataclass(frozen=True)
class StartOver:
    """A snapshot the run read turned out unreadable and is now quarantined: the run
    is done again from the start (nothing was published)."""

    note: str


def publish(records: Records, wh: Warehouse) -> RunReport:
    """The history entry, and publication (a staged run: the entry alone)."""
    plan = records.plan
    crash_point("before_publish")
    if plan.options.stage_only:
        drop_created(adapter_of(wh), records.created)
        H.append(wh, records.entry)
    else:
        publish_entry(wh, records.entry, records.new_records, records.snap_of,
                      plan.state.live, plan.state.removed)
    report = records.report
    report.entry = records.entry
    report.seconds = time.perf_counter() - plan.state.started
    return report


def conclude_failure(failed: Failed, wh: Warehouse) -> StartOver | BaseException:
    """Quarantine what the failed model found damaged and start over; else (nothing
    new to quarantine) record the failure: the error to raise."""
    from strata.engine.ops import damage_verdicts, quarantine

    found, err = failed.quarantine, failed.error
    entry = (quarantine(wh, damage_verdicts(wh, found), f"a run on {failed.failure.opts.branch}")
             if found else None)
    if entry is not None:
        names = ", ".join(f"`{n}` of `{r.model}`" for n, (r, _, _) in sorted(found.items()))
        return StartOver(f"snapshot {names} could not be read (damaged storage): "
                         f"quarantined (history entry {entry.id}), and the run started "
                         "over without it")
    failures.record(wh, failed.failure, err, failed.attempt)  # best effort, never raises
    return err
