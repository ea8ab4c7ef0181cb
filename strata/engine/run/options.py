"""The data a run is asked with and answers with: its options, one result per model,
the report. Shared by every stage of strata/engine/run/ and by the commands."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from strata.engine import history as H
from strata.engine.handle import MAIN_BRANCH
from strata.sqlgen.clock import RunClock


@dataclass
class RunOptions:
    models: list[str] | None = None
    branch: str = MAIN_BRANCH
    overrides: dict[str, str] = field(default_factory=dict)
    only_stale: bool = False
    stage_only: bool = False
    full_refresh: bool = False
    full_refresh_models: list[str] | None = None  # --full-refresh with --models: only these
    # --reset-history: a full refresh may start merge_strategy history models over
    reset_history: bool = False
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
    # source -> "hashed" (its rows read) or "unchanged" (its change marker proved it)
    source_reads: dict[str, str] = field(default_factory=dict)

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
            "sources": dict(sorted(self.source_reads.items())),
        }


Progress = Callable[[ModelResult], None]
