"""A no-op proven without starting the engine, where the whole warehouse lives in one
folder this process can hold (`-o spark:DIR`: its Hive catalogue and every table).

A local Spark process spends seconds starting a JVM and a Hive metastore before it
can ask whether anything changed; dbt decides from files and never starts Spark for
nothing. So a run that found nothing to do leaves a record in DIR (`strata_noop.json`):
what it was asked (`_key`: the module's text and compiler, the selection, the branch),
the state of every entry under DIR (`markers.FolderState`) and the markers of the file
sources it read elsewhere. The next `run --only-stale` asked the same, holding DIR's
lock, compares; only when nothing under DIR and no file source moved does it answer
from the record, without a JVM. Anything else, or any doubt, is the usual run.

Why the record is proof (a missed change would publish a stale model as up to date):
- everything a run decides from, but its file sources, lives under DIR: the catalogue
  (Derby's files), the history, registry and branches (tables), the live views, the
  source tables (a table is taken only when its location folder is under DIR);
- the folder's state is taken after the JVM stopped its session but still holds the
  metastore (Derby admits one JVM: no catalogue change can slip in before it), and
  only when no data file moved since before the JVM started, so the state recorded
  is the state the run read;
- a file changed in the same clock tick as the state keeps its times, so files with
  unsettled times are compared by content (`FolderState.moved_by`);
- file sources outside DIR: their marker taken again at the end must equal the one the
  run read them by, and at the next run again.
Runs that read the clock, backfills, overrides and every other flag take the usual path.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from strata.compiler import select_models
from strata.diagnostics import StrataError
from strata.engine.adapters import ADAPTERS
from strata.engine.adapters.base import NOOP_RECORD, Adapter
from strata.engine.fingerprints import module_key, sha
from strata.engine.locations import parse_location
from strata.engine.markers import FolderState, files_marker, folder_state
from strata.engine.publication import adapter_of
from strata.engine.run.decide import decide, up_to_date_report
from strata.engine.run.observe import Observed, SourcesRead, observe
from strata.engine.run.options import RunOptions, RunReport
from strata.engine.sources import relation_sql
from strata.engine.warehouse import Warehouse, env_lock_timeout
from strata.safefiles import Place, open_folder, write_file
from strata.semantics.module import Module

VERSION = 1


def proven_noop(module: Module, warehouse: str, opts: RunOptions) -> RunReport | None:
    """The report of a run with nothing to do, when the record a no-op left proves
    nothing changed since; None: run as usual."""
    closure = _closure(module, opts)
    if closure is None:
        return None
    location = parse_location(warehouse)
    adapter = ADAPTERS.get(type(location))
    if adapter is None:
        return None
    with adapter.held_folder(location, env_lock_timeout()) as folder:
        if folder is None:
            return None
        record = _read(folder)
        if record is None or record.get("key") != _key(module, opts, closure):
            return None
        state = FolderState.from_json(record.get("folder"))
        if state is None or not state.still(folder, adapter.not_state):
            return None
        if not _files_unmoved(record.get("files")):
            return None
        return _report(record.get("report"))


def arrange(ad: Adapter, module: Module, opts: RunOptions, state: Observed,
            sources: SourcesRead, report: RunReport,
            before: FolderState | None = None) -> None:
    """After a run found nothing to do: leave the record once the engine stopped,
    where it can be proof (see the module docstring). `before`: the folder's state
    before the reads that found nothing to do (default: before the engine started)."""
    before = before or ad.folder_before
    if ad.own_folder is None or before is None or _closure(module, opts) != state.closure:
        return
    files = []
    for name, binding in sorted(sources.bindings.items()):
        known = sources.recorded.get(name)
        src = module.sources[name]
        if known is None:
            return  # no marker proved it: only a read can tell next time
        if src.file is not None and binding.override is None:
            files.append([str(src.file), [relation_sql(binding)], known.marker])
            continue
        folder = ad.table_folder(binding.engine_relation)
        if folder is None or not folder.resolve().is_relative_to(ad.own_folder.resolve()):
            return
    key = _key(module, opts, state.closure)
    ad.when_stopped(lambda: _record(ad, before, key, files, report))


def after_publishing(wh: Warehouse, module: Module, opts: RunOptions,
                     read: SourcesRead) -> None:
    """After a run published: ask again, as `run --only-stale` would, whether anything
    is left to do (one history read and the sources' markers on the warm session),
    so that the next no-op is answered from the record too, not only the second.
    Not where a source the run read had no marker for proof (asking would hash it)."""
    ad = adapter_of(wh)
    if ad.own_folder is None or opts.kind != "run" or opts.stage_only or \
            read.recorded.keys() != read.bindings.keys():
        return
    asked = replace(opts, only_stale=True, full_refresh=False, full_refresh_models=None,
                    reset_history=False, force_full=set())
    if _closure(module, asked) is None:
        return
    before = folder_state(ad.own_folder, ad.not_state)
    if before is None:
        return
    state, registry, sources = observe(module, wh, asked)
    plan = decide(module, registry, sources, asked, state)
    if isinstance(plan, RunReport):
        plan.source_reads = sources.reads
        arrange(ad, module, asked, state, sources, plan, before)


def _record(ad: Adapter, before: FolderState, key: str, files: list,
            report: RunReport) -> None:
    folder = ad.own_folder
    after = folder_state(folder, ad.not_state)

    def engine_or_not_state(rel: str) -> bool:
        return ad.not_state(rel) or ad.written_by_engine(rel)

    if after is None or before.moved_by(after, folder, engine_or_not_state):
        return  # a data file moved while the run read: the next run reads again
    if not _files_unmoved(files):
        return
    text = json.dumps({
        "version": VERSION, "key": key, "folder": after.to_json(), "files": files,
        "report": {"run_id": report.run_id, "branch": report.branch,
                   "kept": [[r.model, r.snapshot] for r in report.results],
                   "sources": sorted(report.source_reads)}})
    try:
        write_file(Place.given(folder) / NOOP_RECORD, text)
    except (OSError, StrataError):
        pass  # no record: the next run asks the engine


def _closure(module: Module, opts: RunOptions) -> list[str] | None:
    """The models a plain `run --only-stale` reads, when no model reads the clock;
    None for any other kind of run."""
    if not opts.only_stale or opts.kind != "run" or opts.stage_only or opts.full_refresh \
            or opts.reset_history or opts.backfill_of \
            or opts.keep or opts.rebuild is not None or opts.force_full \
            or opts.source_fingerprints or opts.skip_if_published or opts.overrides:
        return None
    wanted = module.upstream(select_models(module, opts.models))
    closure = [m for m in module.order if m in wanted]
    if any(module.plan(m).clock for m in closure):
        return None  # a new moment may make them stale
    return closure


def _key(module: Module, opts: RunOptions, closure: list[str]) -> str:
    return sha("quiet", VERSION, module_key(module), opts.branch, closure)[:32]


def _files_unmoved(files) -> bool:
    try:
        return all(marker is not None and files_marker([Path(path)], tuple(identity)) == marker
                   for path, identity, marker in files)
    except (TypeError, ValueError):
        return False


def _read(folder: Path) -> dict | None:
    try:
        with open_folder(Place.given(folder)) as opened:
            text = opened.read_text(NOOP_RECORD)
        record = json.loads(text) if text else None
    except (OSError, StrataError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get("version") == VERSION else None


def _report(data) -> RunReport | None:
    try:
        kept = [(str(m), str(s)) for m, s in data["kept"]]
        report = up_to_date_report(str(data["run_id"]), str(data["branch"]), kept)
        report.source_reads = {str(s): "unchanged" for s in data["sources"]}
        return report
    except (TypeError, KeyError, ValueError):
        return None
