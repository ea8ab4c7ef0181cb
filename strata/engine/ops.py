"""History operations on published runs: rollback, verify, replay --execute."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp

from dialects.base import CannotExpress
from strata.clock import now_text
from strata.diagnostics import Diagnostic, StrataError, fail
from strata.engine import history as H
from strata.engine.adapters.base import INTERNAL, Relation
from strata.engine.branches import (
    check_view_names,
    ensure_branch,
    list_branches,
    live_snapshots,
    switch_views,
)
from strata.engine.fingerprints import sha
from strata.engine.handle import MAIN_BRANCH
from strata.engine.staleness import drop_views, vanished_views
from strata.engine.warehouse import Warehouse
from strata.sqlgen.clock import RunClock, is_clock
from strata.textsafe import backticked, first_line

_NO_SNAPSHOTS_HINT = {
    "stage": "stage-only runs publish nothing",
    "gc": "a gc entry records what it collected, not snapshots; `strata history -o "
          "WAREHOUSE` lists the runs",
    "run": "`strata history -o WAREHOUSE` lists the runs and what they published",
    "quarantine": "a quarantine entry records the snapshots verify or a run found "
                  "damaged, not a run's snapshots",
}


def require_snapshots(wh: Warehouse, entry: H.HistoryEntry, action: str
                      ) -> dict[str, H.SnapshotRecord]:
    """The registry records of a run's snapshots; E076 when gc collected any."""
    if not entry.snapshots:
        raise fail("E073", f"run `{entry.id}` ({entry.kind}) has no snapshots to {action}",
                   None, _NO_SNAPSHOTS_HINT.get(entry.kind, _NO_SNAPSHOTS_HINT["run"]))
    records = {}
    for model, name in entry.snapshots.items():
        rec = H.snapshot(wh, name)
        if rec is None:
            raise fail("E076", f"snapshot `{name}` of run `{entry.id}` is not in the registry")
        if rec.collected_at is not None:
            raise fail("E076", f"cannot {action} run `{entry.id}`: its snapshot of `{model}` "
                       f"was collected by gc at {rec.collected_at}"
                       + (f" (gc run {rec.collected_by})" if rec.collected_by else ""), None,
                       "gc keeps live snapshots and the last runs of each branch; "
                       "use --keep-last to keep more")
        records[model] = rec
    return records


def refuse_failed(wh: Warehouse, entry: H.HistoryEntry) -> None:
    """E119: a failed run published nothing, so there is nothing to roll back to; the
    hint names the last entry before it that can be (what its branch still shows)."""
    if entry.kind != H.FAILED:
        return
    good = H.last_good_before(wh, entry.branch, entry.seq)
    hint = (f"the failed run changed nothing: `{entry.branch}` still shows what came before; "
            + (f"the last good entry before it is {good.kind} `{good.id}` ({good.started_at}):"
               f" `strata rollback {good.id} -o {shlex.quote(wh.label)}`" if good is not None
               else "no entry before it published snapshots"))
    raise fail("E119", f"cannot roll back to `{entry.id}`: it is a failed run "
               f"({failure_summary(entry)}) and published nothing", None, hint)


def failure_summary(entry: H.HistoryEntry) -> str:
    """`E080 in `m` at T` (the first failed model), for one-line messages."""
    failed = entry.failure.get("failed") or {}
    if failed:
        model, said = next(iter(failed.items()))
        more = f" and {len(failed) - 1} more" if len(failed) > 1 else ""
        what = f"{said[0]['code'] if said else 'error'} in {backticked(model)}{more}"
    else:
        errors = entry.failure.get("errors") or [{"code": "error"}]
        what = errors[0]["code"]
    return f"{what} at {entry.finished_at or entry.started_at}"


def rollback(wh: Warehouse, run_id: str, branch: str | None = None) -> H.HistoryEntry:
    entry = H.find(wh, run_id)
    refuse_failed(wh, entry)
    target = branch or entry.branch
    # first: an entry without snapshots (a gc's branch is `*`) is E073, not "unknown branch"
    records = require_snapshots(wh, entry, "roll back to")
    ensure_branch(wh, target)
    refuse_quarantined(wh, entry, records, target)
    views = {m: r.name for m, r in records.items()}
    # back to a whole-module run: exactly its views, so a model it did not have (added
    # or renamed since) loses its view; a --models run never recorded the others
    removed = (vanished_views(wh, live_snapshots(wh, target), views) if entry.complete
               else {})
    check_view_names(wh, target, views)  # before the entry: it commits first on Spark
    # the entry first, then the views: where there is no transaction (Spark) the entry is
    # the commit point and the next command rolls views forward to it (recover)
    with wh.transaction():
        out = H.HistoryEntry(id=sha("rollback", entry.id, entry.seq, target, now_text())[:12],
                             kind="rollback", branch=target, started_at=now_text(),
                             models=sorted(views), snapshots=views,
                             source_fingerprints=entry.source_fingerprints,
                             code_fingerprints=entry.code_fingerprints,
                             overrides=entry.overrides,
                             removed=removed, complete=entry.complete,
                             details={"rolled_back_to": entry.id, "rolled_back_seq": entry.seq})
        H.append(wh, out)
        switch_views(wh, target, views)
        drop_views(wh, target, removed)
    return out


@dataclass
class VerifyResult:
    model: str
    snapshot: str
    recorded: str
    actual: str
    rows: int
    ok: bool


def verify(wh: Warehouse, run_id: str) -> list[VerifyResult]:
    """Recompute each snapshot's content hash; E077 when any differs. A snapshot that
    differs (or whose storage is damaged) is quarantined first, when the warehouse can
    be written: no run reuses it again, and the next run rebuilds it. When it cannot
    (read-only file or folder), E077 says so in a note: the verdict is the same."""
    entry = H.find(wh, run_id)
    if entry.kind == H.FAILED:  # it published nothing: there is nothing to verify
        return []
    records = require_snapshots(wh, entry, "verify")
    results = []
    for model, rec in sorted(records.items()):
        names = [c for c, _ in rec.columns]
        table = Relation(INTERNAL, rec.name)
        try:
            hashed = wh.adapter.row_hash(table.table(), names)
            actual = hashed.digest(wh.adapter.snapshot_columns(table))
        except wh.adapter.engine_errors() as err:
            actual, hashed = _read_failure(wh, rec, err), None
        results.append(VerifyResult(model, rec.name, rec.content_hash, actual,
                                    hashed.count if hashed else -1, actual == rec.content_hash))
    bad = [r for r in results if not r.ok]
    if bad:
        found = {r.snapshot: (records[r.model], f"recorded {r.recorded}, now {r.actual}",
                              r.actual.startswith("unreadable: ")) for r in bad}
        unrecorded = _record_quarantine(wh, damage_verdicts(wh, found),
                                        f"verify of run {entry.id}")
        known = H.quarantined(wh)
        raise StrataError([Diagnostic(
            "E077", f"run `{entry.id}`: snapshot `{r.snapshot}` of `{r.model}` does not match "
            f"its recorded content hash", None, repair_hint(wh, entry, r.snapshot, r.model),
            notes=(f"recorded {r.recorded}, now {r.actual}",
                   *_quarantine_said(known.get(r.snapshot)),
                   *_not_recorded(unrecorded, r, known, wh.label))) for r in bad])
    return results


def _read_failure(wh: Warehouse, rec: H.SnapshotRecord, err: Exception) -> str:
    """verify's finding for a snapshot it could not read: `unreadable: ...` (a
    mismatch, quarantined) only when the error shows its storage damaged
    (damaged_storage). The whole file failing is E070; a passing failure (out of
    memory, interrupted) is E080 and quarantines nothing: it says nothing about the
    snapshot, and a healthy one must not be refused by every run after."""
    first = first_line(str(err), type(err).__name__)
    if wh.adapter.damaged_storage(err):
        return f"unreadable: {first}"
    raise wh.adapter.file_failure(err) or fail(
        "E080", f"verify: reading snapshot `{rec.name}` of `{rec.model}` failed in the "
        f"engine: {first}", None, "nothing was quarantined (this says nothing about the "
        "snapshot's storage): run verify again") from None


def _record_quarantine(wh: Warehouse, verdicts: dict[str, tuple[str, str]],
                       found_by: str) -> str | None:
    """Quarantine `verdicts` when the warehouse can be written; else why not (a
    read-only open, or the write refused: the folder may not hold FILE.wal)."""
    if wh.read_only:
        return wh.unwritable or f"the warehouse `{wh.label}` is open read-only"
    try:
        quarantine(wh, verdicts, found_by)
    except wh.adapter.engine_errors() as err:
        refused = wh.adapter.file_failure(err)
        if refused is None:
            raise
        return refused.diagnostics[0].message
    return None


def _not_recorded(why: str | None, result: VerifyResult, known: dict[str, H.Quarantined],
                  path: str) -> list[str]:
    """E077's note when the verdict could not be recorded: what happens instead."""
    if why is None or result.snapshot in known:
        return []
    again = f"verify again where `{path}` can be written to quarantine it"
    if result.actual.startswith("unreadable: "):
        then = ("a run that reads it (a merge onto it, a model reading it) still finds it "
                "unreadable, quarantines it and rebuilds it; one that only computes the "
                f"same rows again may keep it: {again}")
    else:  # readable, other rows: a run would take it for the content it records
        then = ("until then a run may reuse it (it reads, and its record says it holds "
                f"what the run computes): {again}")
    return [f"not quarantined: verify could not record it ({why}); {then}"]


def unreadable_tables(wh: Warehouse, rec: H.SnapshotRecord) -> dict[str, str]:
    """table -> the engine's error, for each table of the snapshot that cannot be read
    in full (every column of every row: a damaged block fails only when read) because
    its storage is damaged (damaged_storage). The whole file failing is E070 at once;
    a passing failure (out of memory) is no evidence, and the table is not listed."""
    names = [c for c, _ in rec.columns]
    out = {}
    for table_name in rec.tables:
        try:
            wh.adapter.row_hash(Relation(INTERNAL, table_name).table(), names)
        except wh.adapter.engine_errors() as err:
            if wh.adapter.damaged_storage(err):
                out[table_name] = first_line(str(err))
            elif (whole := wh.adapter.file_failure(err)) is not None:
                raise whole from None
    return out


# ---------------------------------------------------------------- quarantine
def _quarantine_said(verdict: H.Quarantined | None) -> list[str]:
    if verdict is None:
        return []
    said = (f"quarantined by {verdict.found_by} (history entry {verdict.entry}): no run "
            "reuses it, and rollback to a run that lists it is refused (E096)")
    return [said]


def damage_verdicts(wh: Warehouse, found: dict[str, tuple[H.SnapshotRecord, str, bool]]
                    ) -> dict[str, tuple[str, str]]:
    """snapshot -> (model, why) for the snapshots `found` damaged (name -> (record, why,
    unreadable)) and every other uncollected snapshot reading a damaged table: the
    layered snapshots over an altered base, the older snapshots sharing a damaged
    layer or base. A table snapshot that reads but differs is itself the damaged
    table; of an unreadable snapshot, the tables that cannot be read are."""
    verdicts = {name: (rec.model, why) for name, (rec, why, _) in found.items()}
    damaged: dict[str, str] = {}
    for name, (rec, _, unreadable) in found.items():
        if unreadable:
            damaged.update(unreadable_tables(wh, rec))
        elif rec.kind == "table":
            damaged[name] = "its content differs from the recorded hash"
    if damaged:
        for other in H.snapshots(wh):
            hit = next((t for t in other.tables if t in damaged), None)
            if hit is not None and other.collected_at is None and other.name not in verdicts:
                why = (f"unreadable: {damaged[hit]}" if hit == other.name else
                       f"reads table {hit}, found damaged ({damaged[hit]})")
                verdicts[other.name] = (other.model, why)
    return verdicts


def quarantine(wh: Warehouse, verdicts: dict[str, tuple[str, str]],
               found_by: str) -> H.HistoryEntry | None:
    """Append a quarantine entry for the verdicts not quarantined yet (None: all were).
    The entry commits at once: a run that found the damage and then fails keeps it."""
    known = H.quarantined(wh)
    fresh = {name: v for name, v in verdicts.items() if name not in known}
    if not fresh:
        return None
    at = now_text()
    entry = H.quarantine_entry(sha("quarantine", found_by, *sorted(fresh), at)[:12], at,
                               found_by, fresh)
    with wh.transaction():
        H.append(wh, entry)
    return entry


def repair_hint(wh: Warehouse, entry: H.HistoryEntry, snapshot: str, model: str) -> str:
    """The command that replaces a damaged snapshot: a run on each branch whose view
    reads it (a quarantined snapshot is never reused: the run computes the model into
    a new table and repoints the view)."""
    commands = []
    for branch in [b["name"] for b in list_branches(wh)]:
        if live_snapshots(wh, branch).get(model) != snapshot:
            continue
        last = H.last_with_snapshots(wh, branch)
        module = (last.module if last and last.module else entry.module) or "MODULE"
        commands.append(f"`strata run {shlex.quote(module)} -o {shlex.quote(wh.label)}"
                        + (f" --branch {branch}`" if branch != MAIN_BRANCH else "`"))
    if not commands:
        return ("its storage no longer holds what was published; no branch's view reads "
                "it, no run will reuse it, and gc drops it")
    return ("its storage no longer holds what was published; " + " and ".join(commands)
            + f" rebuilds `{model}` into a new table and repoints the view")


def refuse_quarantined(wh: Warehouse, entry: H.HistoryEntry,
                       records: dict[str, H.SnapshotRecord], branch: str) -> None:
    """E096 when a snapshot the run lists is quarantined: its view would be unreadable
    (or show altered rows)."""
    known = H.quarantined(wh)
    bad = [(model, known[rec.name]) for model, rec in sorted(records.items())
           if rec.name in known]
    if not bad:
        return
    module = entry.module or "MODULE"
    command = (f"strata run {shlex.quote(module)} -o {shlex.quote(wh.label)}"
               + (f" --branch {branch}" if branch != MAIN_BRANCH else ""))
    raise StrataError([Diagnostic(
        "E096", f"cannot roll back to run `{entry.id}`: its snapshot `{q.snapshot}` of "
        f"`{model}` is quarantined ({q.found_by} found it damaged at {q.at})", None,
        f"a run rebuilds it from the module and sources as they are now: `{command}`; "
        "or roll back to another run (`strata history -o WAREHOUSE` lists them)",
        notes=(q.why,)) for model, q in bad])


def rerun_command(wh: Warehouse, entry: H.HistoryEntry) -> str:
    """The command that attempts a failed run again: the same module, selection,
    branch and overrides (a backfill: the same run, corrections and reason)."""
    from strata.engine.sources import override_text

    module = shlex.quote(entry.module or "MODULE")
    where = f"-o {shlex.quote(wh.label)}"
    if entry.failure.get("as") == "backfill" and entry.backfill_of:
        sources = " ".join(f"--source {shlex.quote(override_text(s, t))}"
                           for s, t in sorted(entry.overrides.items()))
        return (f"strata backfill {module} {entry.backfill_of} {sources} --reason "
                f"{shlex.quote(entry.reason or '')} {where}")
    asked = entry.failure.get("options") or {}
    parts = ["strata run", module, where]
    if asked.get("models"):
        parts.append(f"--models {shlex.quote(','.join(asked['models']))}")
    if entry.branch != MAIN_BRANCH:
        parts.append(f"--branch {shlex.quote(entry.branch)}")
    parts += [f"--{flag.replace('_', '-')}" for flag in ("only_stale", "full_refresh",
                                                          "stage_only") if asked.get(flag)]
    parts += [f"--override {shlex.quote(override_text(s, t))}" for s, t in sorted(entry.overrides.items())]
    return " ".join(parts)


@dataclass
class ReplayResult:
    model: str
    recorded: str
    recomputed: str
    ok: bool
    note: str = ""


@dataclass
class Replay:
    entry: H.HistoryEntry
    results: list[ReplayResult] = field(default_factory=list)
    source_drift: dict[str, tuple[str, str]] = field(default_factory=dict)


def _merged_in(entry: H.HistoryEntry, recipe: dict, model: str) -> bool:
    """Did the run's snapshot of `model` come from merging (not a full computation)?
    Only then may it differ from a full recompute over unchanged sources."""
    if not recipe.get("merges", {}).get(model):
        return False
    return (entry.details.get(model) or {}).get("path") != "full"


def replay_execute(wh: Warehouse, run_id: str) -> Replay:
    """Recompute every model of a run in full, from the SQL the run recorded, into
    scratch tables; compare content hashes; publish nothing, keep nothing.

    A rollback or branch entry built nothing and records no SQL: each of its snapshots
    is recomputed from the recipe of the run that built it (the registry says which),
    so `replay --execute` verifies what that entry pointed the views at."""
    entry = H.find(wh, run_id)
    if entry.kind == H.FAILED:
        rerun = rerun_command(wh, entry)
        # only `run` has --stage-only (a backfill's rerun is `strata backfill ...`)
        staged = (" (add --stage-only to check without publishing)"
                  if rerun.startswith("strata run ") else "")
        raise fail("E120", f"cannot replay --execute `{entry.id}`: it is a failed run "
                   f"({failure_summary(entry)}); it recorded no content to compare with",
                   None, "`strata replay ID` (without --execute) shows what failed; to try "
                   f"it again: `{rerun}`{staged}")
    records = require_snapshots(wh, entry, "replay")
    replay = Replay(entry)
    for builder, recipe, wanted in _recipes(wh, entry, records):
        _replay_recipe(wh, builder, recipe, wanted, replay)
    return replay


def _recipes(wh: Warehouse, entry: H.HistoryEntry, records: dict[str, H.SnapshotRecord]
             ) -> list[tuple[H.HistoryEntry, dict, dict[str, H.SnapshotRecord]]]:
    """(builder, recipe, the snapshots it recomputes): the entry's own recipe, or for an
    entry that built nothing (rollback, branch) the recipe of each snapshot's builder."""
    recipe = entry.details.get("__replay")
    if recipe:
        return [(entry, recipe, records)]
    by_run: dict[str, dict[str, H.SnapshotRecord]] = {}
    for model, rec in records.items():
        by_run.setdefault(rec.run_id, {})[model] = rec
    out = []
    for builder_id, wanted in sorted(by_run.items()):
        builder = _builder(wh, builder_id)
        recipe = builder.details.get("__replay") if builder is not None else None
        if not recipe:
            raise fail("E073", f"run `{entry.id}` ({entry.kind}) points at snapshots of run "
                       f"`{builder_id}`, which recorded no recipe to replay", None,
                       "`strata verify` checks the snapshots' recorded content instead")
        out.append((builder, recipe, wanted))
    return out


def _builder(wh: Warehouse, run_id: str) -> H.HistoryEntry | None:
    """The newest entry of a run that built snapshots under this id and kept a recipe."""
    return next((c for c in H.entries_with_id(wh, run_id) if c.details.get("__replay")), None)


def _relation_tree(text: str) -> exp.Expression:
    """A recorded relation (DuckDB text of a FROM item: a table, a file read) as a tree."""
    return sqlglot.parse_one(f"SELECT * FROM {text}", read="duckdb").args["from_"].this


def _source_fingerprint(wh: Warehouse, relation: str, columns: list[str]) -> str:
    """A source's fingerprint now, as the run computed it: in the engine, or for a
    file the engine cannot read (the recorded relation is DuckDB's read of it), with
    a local DuckDB, as the run checked and fingerprinted it before loading it."""
    from strata.engine.adapters.duckdb import DuckDBAdapter
    from strata.engine.sources import _first_line

    said = _fingerprint_in(wh.adapter, relation, columns)
    if not isinstance(said, Exception):
        return said
    local = DuckDBAdapter.memory()
    try:
        found = _fingerprint_in(local, relation, columns)
    finally:
        local.close()
    return found if isinstance(found, str) else f"unreadable: {_first_line(said)}"


def _fingerprint_in(ad, relation: str, columns: list[str]) -> str | Exception:
    tree = _relation_tree(relation)
    try:
        schema = ad.query_columns(exp.select(exp.Star()).from_(tree.copy()))
        return ad.row_hash(tree, columns).digest(
            [(n, t) for n, t in schema if n in set(columns)])
    except (*ad.engine_errors(), CannotExpress) as err:
        return err


def _source_read(wh: Warehouse, name: str, recipe: dict, loaded: dict[str, str],
                 own: bool) -> exp.Expression:
    """What the recomputation reads for a source: as the engine read it where the run
    recorded that (with the engine's own SQL), else the table the run loaded a file
    into (a file the engine cannot read in place, by its fingerprint:
    strata_internal.src_<source>_<fp12>), else the recorded DuckDB relation."""
    engine_read = (recipe.get("engine_sources") or {}).get(name)
    if own and engine_read is not None:
        return sqlglot.parse_one(engine_read, read=wh.adapter.dialect.sqlglot).args[
            "from_"].this
    fingerprint = recipe["source_fingerprints"].get(name, "")
    table = wh.adapter.physical_name(f"src_{name}_{fingerprint[:12]}")
    if table in loaded:
        return Relation(INTERNAL, table).table()
    return _relation_tree(recipe["sources"][name])


def _recorded_query(ad, recipe: dict, model: str) -> tuple[exp.Expression, bool]:
    """The model's query as the run recorded it, and whether that is the engine's own
    SQL: recorded where the engine's rewrites needed the compiled tree (Spark sums
    integers in DECIMAL(38, 0), say), which a replay no longer has; else the
    canonical DuckDB text."""
    own = (recipe.get("engine_code") or {}).get(model)
    if own is not None:
        return sqlglot.parse_one(own, read=ad.dialect.sqlglot), True
    return sqlglot.parse_one(recipe["code"][model], read="duckdb"), False


def _scratch_table(wh: Warehouse, target: Relation, tree: exp.Expression,
                   own: bool) -> None:
    """CREATE TABLE target AS the recomputed model. The engine's own recorded SQL goes
    back as written (generated again without Strata's rewrites: they were applied
    when it was recorded); DuckDB text runs as is where the engine is DuckDB, else it
    is rendered for the engine (E091 where the engine cannot express it)."""
    ad = wh.adapter
    ad.drop(target, "table")
    if own:
        properties = (exp.Properties(expressions=[p.copy() for p in ad.table_properties])
                      if ad.table_properties else None)
        ad.rows_text(exp.Create(this=target.table(), kind="TABLE", expression=tree,
                                properties=properties).sql(dialect=ad.dialect.sqlglot))
        return
    if ad.relinks_canonical_text:
        ad.build_table(target, None, text=tree.sql(dialect="duckdb"))
        return
    try:
        ad.build_table(target, tree)
    except CannotExpress as err:
        raise fail("E091", f"replay --execute: {ad.dialect.name} cannot express the recorded "
                   f"SQL of `{target.name}`: {err}") from None


def recorded_clock(fingerprints: dict[str, str]) -> RunClock | None:
    """The clock a run bound run_date()/run_timestamp() to, from what it recorded
    beside its sources' fingerprints (None when no model of it read the clock)."""
    text = fingerprints.get("run_timestamp()") or fingerprints.get("run_date()")
    return RunClock.parse(text) if text else None


def _replay_recipe(wh: Warehouse, entry: H.HistoryEntry, recipe: dict,
                   records: dict[str, H.SnapshotRecord], replay: Replay) -> None:
    """Recompute the models of `entry`'s recipe into scratch tables, comparing those in
    `records` with what they recorded."""
    ad = wh.adapter
    scratch: dict[str, str] = {}
    loaded = ad.relations(INTERNAL)  # src_ tables of files loaded by runs
    try:
        clock = recorded_clock(recipe["source_fingerprints"])
        for name, fp in recipe["source_fingerprints"].items():
            if name not in recipe["sources"]:  # `run_date()`: the run's clock, not data
                continue
            now_fp = _source_fingerprint(wh, recipe["sources"][name],
                                         recipe["source_columns"][name])
            if now_fp != fp:
                replay.source_drift[name] = (fp, now_fp)
        upstream: dict[str, set[str]] = {}  # model -> the sources it reads, transitively
        for model in recipe["order"]:
            tree, own = _recorded_query(ad, recipe, model)
            upstream[model] = set()
            for node in tree.find_all(exp.Table):
                if node.db == "__source":
                    upstream[model].add(node.name)
                elif node.db == "__model":
                    upstream[model] |= upstream.get(node.name, set())

            def bind(node, own=own):
                if is_clock(node):  # the run's date and time, as recorded
                    return clock.literal(node.name)
                if isinstance(node, exp.Table) and node.db in ("__source", "__model"):
                    new = (_source_read(wh, node.name, recipe, loaded, own)
                           if node.db == "__source"
                           else Relation(INTERNAL, scratch[node.name]).table())
                    if node.args.get("alias"):
                        new.set("alias", node.args["alias"].copy())
                    return new
                return node

            target = Relation(INTERNAL, ad.physical_name(f"replay_{entry.id}_{model}"))
            _scratch_table(wh, target, tree.transform(bind), own)
            scratch[model] = target.name
            if model not in records:
                continue
            rec = records[model]
            schema = ad.snapshot_columns(target)
            actual = ad.row_hash(target.table(), [c for c, _ in schema]).digest(schema)
            ok = actual == rec.content_hash
            note = ""
            drifted = sorted(set(replay.source_drift) & upstream[model])
            if not ok and drifted:
                note = "sources changed since the run: " + ", ".join(drifted)
            elif not ok and (entry.details.get(model) or {}).get("path") == "history":
                note = ("merge_strategy history: its versions before this run are in no "
                        "source, so a full recompute gives only the rows of this run")
            elif not ok and _merged_in(entry, recipe, model):
                note = ("incremental model: its merged history legitimately differs from a full "
                        "recompute (rows changed without moving the watermark)")
            replay.results.append(ReplayResult(model, rec.content_hash, actual, ok, note))
    finally:
        for name in scratch.values():
            ad.drop(Relation(INTERNAL, name), "table")
