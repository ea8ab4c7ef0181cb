"""Garbage collection (SPEC §3.9): drop the snapshots no branch needs any more.

A snapshot is collected when no live view of any branch reads it, every history
entry that lists it is older than the cutoff, and none of those entries is among
the last N entries with snapshots of its branch. Identity reuse means one snapshot
can be listed by several runs: it stays while any kept run lists it. A layered
snapshot is a view over immutable base/layer tables; those tables stay while any
kept snapshot reads them (and a table snapshot read as a base stays uncollected).

Collection drops objects and marks registry records collected, never deletes
records or history: the `gc` entry lists what went, and `rollback`/`replay`/
`verify` of an affected run say which gc collected it and when (E076). Drops,
registry updates and the entry share one transaction (DuckDB has transactional
DDL), so a crash leaves either everything or nothing collected.

Freed blocks are reused by DuckDB but the file does not shrink by itself;
`compact_file` copies the database into a new file and renames it over the old.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

import duckdb
from sqlglot import exp

from strata.clock import now
from strata.diagnostics import fail
from strata.engine import bookkeeping as B
from strata.engine import history as H
from strata.engine.adapters.base import INTERNAL
from strata.engine.branches import branch_names, live_snapshots
from strata.engine.environment import crash_point
from strata.engine.fingerprints import sha
from strata.engine.handle import MAIN_BRANCH, q
from strata.engine.warehouse import Warehouse
from strata.textsafe import first_line

ALL_BRANCHES = "*"  # the branch of a gc entry that considered every branch
# Objects strata creates in the internal schema; anything else there is bookkeeping.
COLLECTABLE_PREFIXES = ("snap_", "layer_", "replay_")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DURATION = re.compile(r"^(?:\d+[smhdw])+$")
MAX_AGE_DAYS = 365_000


def parse_duration(text: str) -> dt.timedelta:
    """`30d`, `12h`, `90m`, `45s`, `2w`, `1d12h`; `0d` means every run. E082 otherwise."""
    compact = text.strip().lower().replace(" ", "")
    if not _DURATION.match(compact):
        raise fail("E082", f"invalid duration `{text}`", None,
                   "a whole number and a unit: 90m, 12h, 30d, 2w (s, m = minutes, h, d, w); "
                   "units may be combined: 1d12h")
    seconds = sum(int(n) * _UNITS[u] for n, u in re.findall(r"(\d+)([smhdw])", compact))
    if seconds > MAX_AGE_DAYS * 86400:  # a cutoff before year 1 overflowed the clock
        raise fail("E082", f"duration `{text}` is too long: at most {MAX_AGE_DAYS}d "
                   "(about a thousand years)", None,
                   f"--older-than {MAX_AGE_DAYS}d collects nothing by age: no run is that old")
    return dt.timedelta(seconds=seconds)


@dataclass(frozen=True)
class GcOptions:
    older_than: str = "30d"
    keep_last: int = 5
    branch: str | None = None  # only this branch's history is considered for collection
    dry_run: bool = False


@dataclass
class Collected:
    snapshot: str
    model: str
    runs: list[str]  # history entries listing it (now unusable for rollback/replay/verify)
    objects: list[str]  # what dropping it removes (its view/table, its own layers)


@dataclass
class GcReport:
    status: str  # collected | dry_run | nothing_to_do
    older_than: str
    cutoff: str
    keep_last: int
    branch: str | None
    collected: list[Collected] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # every object dropped, views first
    leftovers: list[str] = field(default_factory=list)  # objects no record mentions
    stale_files: list[str] = field(default_factory=list)  # a crashed compaction's copy
    kept: dict[str, str] = field(default_factory=dict)  # snapshot -> why it stays
    runs_affected: list[str] = field(default_factory=list)
    # storage used only by the dropped tables; None: the engine does not say (Spark)
    estimated_bytes: int | None = 0
    freed_bytes: int | None = None  # measured after the drop (blocks now free)
    file_bytes: int = 0  # file size before (and, without compaction, after)
    file_bytes_after: int | None = None
    compactable_bytes: int | None = None  # bytes a compacted file would need, about
    gc_id: str | None = None
    compacted: bool = False

    def to_json(self) -> dict:
        return asdict(self)


# ---------------------------------------------------------------- deciding
def plan(wh: Warehouse, opts: GcOptions) -> GcReport:
    """What gc would do, read only."""
    if opts.keep_last < 0:
        raise fail("E084", f"--keep-last must be 0 or more, not {opts.keep_last}")
    try:
        cutoff = now() - parse_duration(opts.older_than)
    except OverflowError:  # a clock (STRATA_NOW) near year 1: the cutoff is before it
        raise fail("E082", f"duration `{opts.older_than}` reaches before year 1") from None
    on_file = wh.adapter.compacts_file  # a DuckDB file: its size, a crashed copy
    report = GcReport("dry_run" if opts.dry_run else "collected", opts.older_than,
                      cutoff.isoformat(sep=" "), opts.keep_last, opts.branch,
                      file_bytes=_file_bytes(wh.path) if on_file else 0)
    if on_file:
        copy = stale_copy(wh.path)
        report.stale_files = [str(f) for f in (copy, Path(str(copy) + ".wal")) if f.exists()]
    if not wh.has_internal():
        report.status = "nothing_to_do" if not report.stale_files else report.status
        return report

    records = {r.name: r for r in H.snapshots(wh)}
    listed_by: dict[str, list[H.HistoryEntry]] = {}
    last_n: set[int] = set()
    per_branch: dict[str, int] = {}
    for entry in H.entries(wh):  # newest first
        # keep-last counts runs that published (a failed run lists nothing, keeps nothing)
        if entry.kind in ("stage", "gc", H.FAILED) or not entry.snapshots:
            continue
        seen = per_branch.get(entry.branch, 0)
        if seen < opts.keep_last:
            last_n.add(entry.seq)
        per_branch[entry.branch] = seen + 1
        for name in set(entry.snapshots.values()):
            listed_by.setdefault(name, []).append(entry)

    live = _live(wh)
    protected = _read_by_views(wh, set(wh.internal_objects()))

    kept: dict[str, str] = {}
    candidates: list[H.SnapshotRecord] = []
    for rec in records.values():
        if rec.collected_at is not None:
            continue
        why = _why_kept(rec, listed_by.get(rec.name, []), live, protected, last_n, cutoff,
                        opts)
        if why:
            kept[rec.name] = why
        else:
            candidates.append(rec)
    # Tables read by a kept snapshot stay; a table snapshot read as a base stays uncollected.
    while True:
        needed = {t: name for name in kept for t in records[name].tables}
        moved = [r for r in candidates if r.name in needed]
        if not moved:
            break
        for rec in moved:
            kept[rec.name] = f"read by the kept layered snapshot {needed[rec.name]}"
            candidates.remove(rec)

    keep_objects = set(protected) | set(live)
    for name in kept:
        keep_objects.add(name)
        keep_objects.update(records[name].tables)
    mentioned: set[str] = set()
    for rec in records.values():
        mentioned.update([rec.name, *rec.tables, *rec.parts.get("own", [])])
    objects = wh.internal_objects()
    drop = [n for n in objects if n.startswith(COLLECTABLE_PREFIXES) and n not in keep_objects]
    drop.sort(key=lambda n: (objects[n] != "view", n))  # views read tables: drop them first

    collected_names = {r.name for r in candidates}
    for rec in sorted(candidates, key=lambda r: (r.created_at, r.name)):
        mine = [o for o in dict.fromkeys([rec.name, *rec.tables, *rec.parts.get("own", [])])
                if o in drop]
        report.collected.append(Collected(rec.name, rec.model,
                                          [e.id for e in listed_by.get(rec.name, [])], mine))
    report.dropped = drop
    report.leftovers = [n for n in drop if n not in mentioned]
    report.kept = dict(sorted(kept.items()))
    report.runs_affected = sorted({e.id for name in collected_names
                                   for e in listed_by.get(name, [])})
    report.estimated_bytes = wh.adapter.storage_bytes(
        INTERNAL, [n for n in drop if objects[n] == "table"])
    used = wh.adapter.used_bytes() if on_file else None
    if used is not None:
        report.compactable_bytes = max(0, used - (report.estimated_bytes or 0))
    if not report.collected and not report.dropped and not report.stale_files:
        report.status = "nothing_to_do"
    return report


def _why_kept(rec: H.SnapshotRecord, entries: list[H.HistoryEntry], live: dict[str, str],
              protected: dict[str, str], last_n: set[int], cutoff: dt.datetime,
              opts: GcOptions) -> str | None:
    if rec.name in live:
        return live[rec.name]
    if rec.name in protected:
        return protected[rec.name]
    for entry in entries:
        if _time(entry.started_at) >= cutoff:
            return f"run {entry.id} on {entry.branch} is newer than the cutoff"
    for entry in entries:
        if entry.seq in last_n:
            return f"run {entry.id} is among the last {opts.keep_last} of {entry.branch}"
    if opts.branch is not None:
        if not any(e.branch == opts.branch for e in entries):
            return f"not in the history of {opts.branch} (--branch)"
        # a branch made from another lists that branch's snapshots too: outside the
        # scope of --branch, a run of the other branch still needs them
        other = next((e for e in entries if e.branch != opts.branch), None)
        if other is not None:
            return f"run {other.id} on {other.branch} lists it (outside --branch {opts.branch})"
    if not entries and _time(rec.created_at) >= cutoff:
        return "newer than the cutoff"
    return None


def _live(wh: Warehouse) -> dict[str, str]:
    """snapshot -> 'live on B (v_model)' for every branch's live views."""
    out: dict[str, str] = {}
    for branch in [MAIN_BRANCH, *branch_names(wh)]:
        for model, snap in sorted(live_snapshots(wh, branch).items()):
            out.setdefault(snap, f"live on {branch} (v_{model})")
    return out


def _read_by_views(wh: Warehouse, objects: set[str]) -> dict[str, str]:
    """Internal objects that any view outside the internal schema names (a user's own
    view over a snapshot included): DuckDB does not track view dependencies, so a
    drop would break such a view silently. Matched on the view's words, conservatively."""
    out: dict[str, str] = {}
    plain = {o for o in objects if re.fullmatch(r"\w+", o)}
    for schema, view, sql in wh.adapter.view_texts():
        words = set(re.findall(r"\w+", sql or ""))
        hits = (plain & words) | {o for o in objects - plain if o in (sql or "")}
        for name in hits:
            out.setdefault(name, f"read by the view {schema}.{view}")
    return out


def _time(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(str(text))


# ---------------------------------------------------------------- space
def _file_bytes(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


# ---------------------------------------------------------------- collecting
def collect(wh: Warehouse, opts: GcOptions) -> GcReport:
    """Plan, then (unless a dry run) drop and record it, all in one transaction."""
    report = plan(wh, opts)
    if opts.dry_run or report.status == "nothing_to_do":
        return report
    for name in report.stale_files:  # we hold the lock: no compaction is running
        Path(name).unlink(missing_ok=True)
    if not report.collected and not report.dropped:
        return report
    stamp = now().isoformat(sep=" ")
    report.gc_id = sha("gc", stamp, report.dropped,
                       [c.snapshot for c in report.collected])[:12]
    wh.adapter.checkpoint()  # so the used-block count below is what the file holds
    used_before = wh.adapter.used_bytes()
    entry = H.HistoryEntry(
        id=report.gc_id, kind="gc", branch=opts.branch or ALL_BRANCHES, started_at=stamp,
        models=sorted({c.model for c in report.collected}),
        details={"older_than": opts.older_than, "cutoff": report.cutoff,
                 "keep_last": opts.keep_last, "branch": opts.branch,
                 "collected": [asdict(c) for c in report.collected],
                 "dropped": report.dropped, "leftovers": report.leftovers,
                 "runs_affected": report.runs_affected,
                 "estimated_bytes": report.estimated_bytes})
    with wh.transaction():
        for name in report.dropped:
            wh.drop(name)
        names = [c.snapshot for c in report.collected]
        if names:  # appended rows: bookkeeping is append-only on every engine
            H.insert_rows(wh, B.COLLECTIONS, [
                {"name": n, "collected_at": stamp, "collected_by": report.gc_id}
                for n in names])
        H.append(wh, entry)
        crash_point("gc_before_commit")
    entry.finished_at = now().isoformat(sep=" ")
    wh.adapter.checkpoint()
    used_after = wh.adapter.used_bytes()
    if used_before is not None and used_after is not None:
        report.freed_bytes = max(0, used_before - used_after)
    if wh.adapter.compacts_file:
        report.file_bytes_after = _file_bytes(wh.path)
    return report


# ---------------------------------------------------------------- compaction
@dataclass
class Compaction:
    bytes_before: int
    bytes_after: int


def compact_file(wh: Warehouse) -> Compaction:
    """Shrink the file: copy the whole database into a new file next to it
    (`COPY FROM DATABASE`), check the copy holds the same catalogue and row counts,
    then rename it over the original while this process still holds the original's
    lock (so no writer can slip in between). Closes `wh`: its connection reads the
    replaced file. A crash before the rename leaves the original untouched and a
    `*.strata-compact` file that the next compaction removes."""
    path = Path(wh.path).resolve()  # through a symlink: replace the file, keep the link
    temp = stale_copy(path)
    wal = Path(str(path) + ".wal")
    wh.execute("CHECKPOINT")
    if wal.exists() and wal.stat().st_size > 0:
        raise fail("E070", f"cannot compact `{path}`: its write-ahead log was not "
                   "checkpointed", None, "run `CHECKPOINT` on it and try again")
    before = _file_bytes(str(path))
    for stale in (temp, Path(str(temp) + ".wal")):
        stale.unlink(missing_ok=True)
    (source,) = wh.execute("SELECT current_database()").fetchone()
    alias = "__strata_compact"
    attached = False
    try:
        wh.execute(f"ATTACH {exp.Literal.string(str(temp)).sql('duckdb')} AS {q(alias)}")
        attached = True
        wh.execute(f"COPY FROM DATABASE {q(source)} TO {q(alias)}")
        mismatch = _catalogue(wh, source) != _catalogue(wh, alias)
        wh.execute(f"DETACH {q(alias)}")
        attached = False
        if mismatch:
            raise fail("E070", f"cannot compact `{path}`: the copy does not hold the same "
                       "objects and rows; the original is untouched")
        if Path(str(temp) + ".wal").exists():
            raise fail("E070", f"cannot compact `{path}`: the copy was not checkpointed; "
                       "the original is untouched")
        os.chmod(temp, path.stat().st_mode & 0o7777)
        crash_point("compact_before_replace")
        os.replace(temp, path)
        _fsync_dir(path.parent)
    except duckdb.Error as err:
        raise fail("E070", f"cannot compact `{path}`: {first_line(str(err))}; the "
                   "original is untouched") from None
    finally:
        if attached:
            try:
                wh.execute(f"DETACH {q(alias)}")
            except duckdb.Error:
                pass
        temp.unlink(missing_ok=True)
    wh.close()
    return Compaction(before, _file_bytes(str(path)))


def stale_copy(path: str | Path) -> Path:
    """Where compaction writes its copy; one left there is what a crash left."""
    path = Path(path).resolve()
    return path.with_name(path.name + ".strata-compact")


def _catalogue(wh: Warehouse, database: str) -> list[tuple]:
    """What must survive a copy: every table with its exact row count, every view with
    its SQL, sequences, macros, types and indexes, by name."""
    out: list[tuple] = []
    for schema, name in wh.execute(
            "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = ? "
            "ORDER BY ALL", [database]).fetchall():
        (rows,) = wh.execute(f"SELECT count(*) FROM {q(database, schema, name)}").fetchone()
        out.append(("table", schema, name, rows))
    queries = {
        "view": "SELECT schema_name, view_name, sql FROM duckdb_views() WHERE NOT internal",
        "sequence": "SELECT schema_name, sequence_name, last_value FROM duckdb_sequences()",
        "macro": "SELECT schema_name, function_name, NULL FROM duckdb_functions() "
                 "WHERE NOT internal AND function_type LIKE '%macro%'",
        "type": "SELECT schema_name, type_name, NULL FROM duckdb_types() WHERE NOT internal",
        "index": "SELECT schema_name, index_name, table_name FROM duckdb_indexes()",
    }
    for kind, sql in queries.items():
        rows = wh.execute(f"{sql} AND database_name = ? ORDER BY ALL" if "WHERE" in sql else
                          f"{sql} WHERE database_name = ? ORDER BY ALL", [database]).fetchall()
        out.extend((kind, *r) for r in rows)
    return out


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
