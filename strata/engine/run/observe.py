"""Stage 1 of a run: read what the decision needs, and nothing else. The sources are
checked and fingerprinted (drift detection rides that scan), the module's code
fingerprinted, the history (base and quarantine verdicts: one read) and the live views
read once, the registry the first time a question needs it (a no-op asks none); the
decision (decide.py) is then pure over these values.

Writes nothing but what a failure needs to say early: E091 (names the engine would
cut alike), E074 (unknown branch) and E094 (a live view's name is taken) are raised
here, before any work, in that order."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from strata.clock import now, now_text
from strata.compiler import require_ok, select_models
from strata.engine import code_cache, incremental, staleness
from strata.engine import history as H
from strata.engine.adapters.base import Adapter
from strata.engine.branches import check_view_names, ensure_branch, live_snapshots
from strata.engine.environment import crash_point
from strata.engine.fingerprints import (
    _canonical_relation,
    code_fingerprints,
    module_key,
    reusable_code_fingerprints,
)
from strata.engine.markers import Recorded, recorded_of
from strata.engine.publication import adapter_of, take_history_read
from strata.engine.run.options import RunOptions
from strata.engine.sources import SourceBinding, SourceHash, Split, bind_source, prepare
from strata.engine.warehouse import Warehouse
from strata.semantics.module import Module
from strata.sqlgen.clock import RunClock
from strata.sqlgen.identifiers import check_models


@dataclass(frozen=True)
class SourcesRead:
    """Each source the closure reads: how it is bound, its fingerprint, its rows."""

    bindings: dict[str, SourceBinding]
    fingerprints: dict[str, str]
    rows: dict[str, int]  # source -> rows, when this run counted them
    settled: dict[str, Split]  # model -> its drift hash, from its source's scan
    seconds: float  # spent fingerprinting
    # source -> the marker record the run's entry keeps (markers.py), where one is proof
    recorded: dict[str, Recorded] = field(default_factory=dict)
    # source -> "hashed" (its rows read) or "unchanged" (its marker proved it)
    reads: dict[str, str] = field(default_factory=dict)
    # source -> its row hash as the engine read it for this run's fingerprint
    hashes: dict[str, SourceHash] = field(default_factory=dict)


@dataclass(frozen=True)
class Observed:
    """The rest of what the run read before deciding: its moment, its closure, the
    code's fingerprints and the warehouse's state."""

    started: float  # perf_counter at the start
    started_at: str
    clock: RunClock
    selection: list[str]
    closure: list[str]  # the selection and everything upstream, in module order
    code_key: str
    code_fps: dict[str, str]
    canonical: dict[str, str]  # model -> its canonical SQL, where rendered
    quarantined: dict[str, H.Quarantined]
    base: H.HistoryEntry | None  # the staleness base: the branch's last run with snapshots
    live: dict[str, str]  # model -> the snapshot its live view shows now
    removed: dict[str, str]  # model -> snapshot, for views of models gone from the module
    # run id -> {source: relation} that run read, for the snapshots merges would read
    # (read when first asked: only a run with something to merge asks)
    relations_read: Mapping[str, dict[str, str] | None]
    published: list[H.HistoryEntry] | None  # the branch's entries (skip_if_published)
    # the base's snapshots the live views read whose objects stand (never collected):
    # staleness need not ask the registry about them
    standing: frozenset[str] = frozenset()


def observe(module: Module, wh: Warehouse,
            opts: RunOptions) -> tuple[Observed, H.Registry, SourcesRead]:
    """What the run read: its state, the registry (one query, when first asked) and
    its sources."""
    started = time.perf_counter()
    clock = opts.clock or RunClock(now())
    started_at = now_text()
    ad = adapter_of(wh)
    require_ok(module)
    selection = select_models(module, opts.models)
    wanted = module.upstream(selection)  # once: not once per model of the module
    closure = [m for m in module.order if m in wanted]
    check_models(module, closure, ad.dialect, _canonical_relation)  # E091, nothing built
    ensure_branch(wh, opts.branch)
    # one history read (recover's on opening, else this branch's): the staleness base,
    # and the snapshots verify (or a run) found damaged: never reused, kept or merged onto
    read = take_history_read(wh) or H.read_history(wh, opts.branch)
    quarantined = read.quarantined
    base = read.base(wh, opts.branch)
    registry = H.registry_later(wh)  # read once a question needs it: a no-op asks none
    live = live_snapshots(wh, opts.branch)
    sources = _read_sources(ad, module, closure, opts, live, registry, quarantined,
                            recorded_of(base.source_markers) if base else {})
    crash_point("after_fingerprints")

    code_key, canonical = module_key(module), {}
    code_fps = (reusable_code_fingerprints(base, code_key, closure, canonical)
                or _code_fingerprints(module, closure, opts, code_key, canonical))
    if not opts.stage_only:  # E094: a name a live view needs is taken, before any work
        check_view_names(wh, opts.branch, closure)
    removed = (staleness.vanished_views(wh, live, module.models)
               if publishes_whole(opts) else {})
    state = Observed(
        started, started_at, clock, selection, closure, code_key, code_fps, canonical,
        quarantined, base, live, removed,
        ReadLater(lambda: _relations_read(wh, module, closure, opts, live, registry,
                                          quarantined)),
        H.entries(wh, opts.branch) if opts.skip_if_published else None,
        _standing(wh, base, live) if opts.only_stale else frozenset())
    return state, registry, sources


class ReadLater(Mapping):
    """A mapping read from the warehouse the first time it is asked: what only a run
    with work to do needs (a no-op on Spark saved a job per read)."""

    def __init__(self, read: Callable[[], dict]) -> None:
        self._read, self._found = read, None

    def _values(self) -> dict:
        if self._found is None:
            self._found = self._read()
        return self._found

    def __getitem__(self, key):
        return self._values()[key]

    def __iter__(self):
        return iter(self._values())

    def __len__(self) -> int:
        return len(self._values())


def _standing(wh: Warehouse, base: H.HistoryEntry | None,
              live: dict[str, str]) -> frozenset[str]:
    """The base's snapshots that live views read and whose objects the internal schema
    holds: gc never collects a snapshot a live view reads, and drops a snapshot's
    objects before (or with) recording its collection. One catalogue listing (on Spark
    the command's, listed already), not a registry query."""
    kept = {s for m, s in (base.snapshots.items() if base else ()) if live.get(m) == s}
    if not kept:
        return frozenset()
    return frozenset(kept & set(wh.internal_objects()))


def publishes_whole(opts: RunOptions) -> bool:
    """A run of the whole module publishes the module's whole set of views: those of
    models no longer in it go (a --models run says nothing about the others)."""
    return not opts.models and not opts.stage_only and opts.kind == "run"


def _read_sources(ad: Adapter, module: Module, closure: list[str], opts: RunOptions,
                  live: dict[str, str], registry: H.Registry, quarantined,
                  known: dict[str, Recorded]) -> SourcesRead:
    """Each source checked and fingerprinted; hashed only where its marker moved since
    `known` (the base entry's records) or no marker is proof."""
    t0 = time.perf_counter()
    names = sorted({s for m in closure for s in module.models[m].sources_read})
    bindings: dict[str, SourceBinding] = {}
    fps: dict[str, str] = {}
    rows: dict[str, int] = {}
    recorded: dict[str, Recorded] = {}
    reads: dict[str, str] = {}
    hashes: dict[str, SourceHash] = {}
    # drift detection rides the fingerprint's scan
    splits = incremental.scan_splits(ad, module, closure, opts, live, registry, quarantined)
    for name in names:
        src = module.sources[name]
        found = prepare(ad, src, bind_source(src, opts.overrides.get(name)),
                        splits.get(name), known.get(name))
        bindings[name] = found.binding
        reads[name] = "hashed" if found.hashed else "unchanged"
        if found.recorded is not None:
            recorded[name] = found.recorded
        if opts.source_fingerprints.get(name):
            fps[name] = opts.source_fingerprints[name]
        else:
            fps[name], rows[name] = found.fingerprint, found.rows
            if found.engine_hash is not None:
                hashes[name] = found.engine_hash
    settled = {s.model: s for found in splits.values() for s in found}
    return SourcesRead(bindings, fps, rows, settled, time.perf_counter() - t0, recorded,
                       reads, hashes)


def _code_fingerprints(module: Module, closure: list[str], opts: RunOptions, key: str,
                       canonical: dict[str, str]) -> dict[str, str]:
    """From the on-disk code cache when this module text was compiled before by
    this compiler, else rendered (and kept there)."""
    cached = code_cache.load(opts.code_cache, key, closure)
    if cached is not None:
        fps, found = cached
        canonical.update(found)
        return fps
    fps = code_fingerprints(module, closure, canonical)
    code_cache.store(opts.code_cache, key, fps, canonical)
    return fps


def _relations_read(wh: Warehouse, module: Module, closure: list[str], opts: RunOptions,
                    live: dict[str, str], registry: H.Registry,
                    quarantined) -> dict[str, dict[str, str] | None]:
    """What the runs that built the snapshots merges would read read from their
    sources (decide compares it with what they read now)."""
    previous = incremental.merge_candidates(module, closure, opts, live)
    records = registry.of(s for s in previous.values() if s not in quarantined)
    return {run_id: H.relations_read(wh, run_id)
            for run_id in dict.fromkeys(r.run_id for r in records.values())}
