"""The append-only run history and the snapshot registry, as plain data."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, fields

from strata.diagnostics import fail
from strata.engine import bookkeeping as B
from strata.engine.handle import MAIN_BRANCH, WarehouseHandle


def dumps(value) -> str:
    """The JSON text an entry or a registry row keeps: keys sorted, so equal values
    are equal text."""
    return json.dumps(value, sort_keys=True, default=str)


@dataclass
class HistoryEntry:
    id: str
    kind: str  # run | backfill | rollback | stage | branch | gc | quarantine | failed
    branch: str
    started_at: str
    finished_at: str | None = None
    models: list[str] = field(default_factory=list)
    overrides: dict[str, str] = field(default_factory=dict)
    source_fingerprints: dict[str, str] = field(default_factory=dict)
    # source -> its change marker record (strata.engine.markers.Recorded as JSON): the
    # next run reuses the fingerprint while the marker has not moved
    source_markers: dict[str, dict] = field(default_factory=dict)
    code_fingerprints: dict[str, str] = field(default_factory=dict)
    snapshots: dict[str, str] = field(default_factory=dict)
    rebuilt: list[str] = field(default_factory=list)
    reused: list[str] = field(default_factory=list)
    backfill_of: str | None = None
    reason: str | None = None
    module: str | None = None
    details: dict = field(default_factory=dict)  # per-model paths, checks, gc lists ...
    # model -> snapshot of each live view this entry dropped (its model left the
    # module, or a rollback to a run without it): rollback to an earlier run
    # recreates them, and gc sees those snapshots free once nothing else keeps them
    removed: dict[str, str] = field(default_factory=dict)
    # its snapshots are the branch's whole set of views after it (a run of the whole
    # module, or a rollback to one): a rollback to it drops the views it did not have
    complete: bool = False
    # a `failed` entry only (FAILED below): what the run attempted and what failed
    failure: dict = field(default_factory=dict)
    seq: int = 0

    @property
    def status(self) -> str:
        """`failed` for the record of a run that failed, else `ok`."""
        return "failed" if self.kind == FAILED else "ok"

    def to_json(self) -> dict:
        # shallow: the entry is only serialized (asdict deep-copies every nested
        # dict, ~0.1 s for the details of a 1,000-model run)
        return {f.name: getattr(self, f.name) for f in fields(self)}


def append(wh: WarehouseHandle, entry: HistoryEntry) -> HistoryEntry:
    """Append an entry (inside the caller's transaction when there is one). On an
    engine without transactions this one-row INSERT is the publication's commit
    point (bookkeeping.visible)."""
    if getattr(wh, "history_read", None) is not None:
        wh.history_read = None  # read before this entry: the history moved on
    entry.seq = int(wh.rows(B.next_seq())[0][0])
    wh.run(B.insert(B.HISTORY, [{
        "seq": entry.seq, "id": entry.id, "kind": entry.kind, "branch": entry.branch,
        "started_at": entry.started_at, "entry": dumps(entry.to_json())}]))
    return entry


def _load(row) -> HistoryEntry:
    data = json.loads(row[0])
    data["seq"] = int(row[1])
    known = HistoryEntry.__dataclass_fields__
    return HistoryEntry(**{k: v for k, v in data.items() if k in known})


def entries(wh: WarehouseHandle, branch: str | None = None) -> list[HistoryEntry]:
    """Newest first."""
    if not wh.has_internal():
        return []
    return [_load(r) for r in wh.rows(B.history(branch=branch))]


def entries_with_id(wh: WarehouseHandle, run_id: str) -> list[HistoryEntry]:
    """Every entry under exactly this id, newest first (a run repeated with the same
    content keeps its id)."""
    if not wh.has_internal():
        return []
    return [_load(r) for r in wh.rows(B.history(run_id=run_id))]


def find(wh: WarehouseHandle, run_id: str) -> HistoryEntry:
    """The newest entry with this id (or a unique prefix of at least 4 characters)."""
    if not wh.has_internal():
        raise fail("E073", f"unknown run id `{run_id}`: the warehouse has no history yet")
    rows = wh.rows(B.history(run_id=run_id, limit=1))
    if not rows and len(run_id) >= 4:
        rows = wh.rows(B.history(id_prefix=run_id, columns=(
            B.col("entry"), B.col("seq"), B.col("id"))))
        if len({r[2] for r in rows}) > 1:
            raise fail("E073", f"run id prefix `{run_id}` is ambiguous", None,
                       "give more characters")
    if not rows:
        raise fail("E073", f"unknown run id `{run_id}`", None,
                   "`strata history -o WAREHOUSE` lists the runs")
    return _load(rows[0])


def relations_read(wh: WarehouseHandle, run_id: str) -> dict[str, str] | None:
    """{source: relation} as the run with this id read them (its replay recipe), or
    None when no entry says. Taken out of the entry by the engine: the entry of a big
    module holds every model's SQL, which Python need not parse for this."""
    sources = B.json_text(wh.adapter, B.col("entry"), "details", "__replay", "sources")
    found = wh.rows(B.history(run_id=run_id, columns=(sources,), limit=1))
    if not found or found[0][0] is None:
        return None
    read = json.loads(found[0][0])
    return read if isinstance(read, dict) else None


def last_good_before(wh: WarehouseHandle, branch: str, seq: int) -> HistoryEntry | None:
    """The newest entry on the branch before `seq` that a rollback can return to (it
    lists snapshots; a failed run never does)."""
    return next((e for e in entries(wh, branch)
                 if e.seq < seq and e.snapshots and e.kind in ROLLBACK_TARGETS), None)


_PAGE = 8  # entries read at a time, newest first (the first page nearly always holds it)


BASE_KINDS = ("run", "backfill", "branch")  # a staleness base's: the published but a rollback


def last_with_snapshots(wh: WarehouseHandle, branch: str) -> HistoryEntry | None:
    """The staleness base: the newest run or backfill on the branch that published
    snapshots (stage-only runs, rollbacks and failed runs never serve); else what the
    branch was created from."""
    return _newest_with_snapshots(wh, branch, BASE_KINDS)


def last_published(wh: WarehouseHandle, branch: str) -> HistoryEntry | None:
    """The newest entry on the branch that set its live views (a run, backfill,
    rollback or branch creation with snapshots): what every view of the branch must
    read. `recover` rolls views forward to it where publication has no transaction."""
    return _newest_with_snapshots(wh, branch, ROLLBACK_TARGETS)


def _newest_with_snapshots(wh: WarehouseHandle, branch: str, kinds: tuple[str, ...]
                           ) -> HistoryEntry | None:
    if not wh.has_internal():
        return None
    # newest first, a page at a time: an entry holds the run's whole recipe, so
    # parsing the branch's entire history on every run would grow with it
    below: int | None = None
    while True:
        query = B.history(branch=branch, kinds=kinds, limit=_PAGE)
        if below is not None:
            query = query.where(B.below_seq(below), copy=False)
        page = wh.rows(query)
        for row in page:
            entry = _load(row)
            if entry.snapshots:
                return entry
        if len(page) < _PAGE:
            return None
        below = int(page[-1][1])


# ---------------------------------------------------------------- failed runs
# A run (or backfill) that fails on a model publishes nothing; once it has cleaned
# up, it appends a `failed` entry (best effort: strata/engine/failures.py) so the
# history and `strata graph` can say what failed. The entry lists no snapshots and
# its kind is none of the kinds a staleness base, a rollback, gc's keep-last or a
# branch is ever taken from.
FAILED = "failed"
ROLLBACK_TARGETS = ("run", "backfill", "rollback", "branch")


def failures_by_model(wh: WarehouseHandle, branch: str) -> dict[str, HistoryEntry]:
    """model -> the newest failed entry on the branch in which that model failed
    (its code, message and time are in `entry.failure`). One query over failed
    entries only."""
    if not wh.has_internal():
        return {}
    out: dict[str, HistoryEntry] = {}
    for row in wh.rows(B.history(branch=branch, kinds=(FAILED,))):
        entry = _load(row)
        for model in entry.failure.get("failed", {}):
            out.setdefault(model, entry)
    return out


def last_built_seq(wh: WarehouseHandle, branch: str) -> dict[str, int]:
    """model -> seq of the newest run or backfill on the branch that published a
    snapshot of it (its last successful build)."""
    if not wh.has_internal():
        return {}
    out: dict[str, int] = {}
    built = B.json_text(wh.adapter, B.col("entry"), "snapshots")
    for seq, models in wh.rows(B.history(branch=branch, kinds=("run", "backfill"),
                                         columns=(B.col("seq"), built), newest_first=False)):
        for model in json.loads(models or "{}"):
            out[model] = int(seq)
    return out


# ---------------------------------------------------------------- snapshot registry
@dataclass
class SnapshotRecord:
    name: str
    model: str
    run_id: str
    kind: str  # table | layered
    content_hash: str
    row_count: int
    hash_sum: str
    hash_xor: str
    columns: list[list[str]]  # [name, engine type]
    code_fp: str
    parts: dict  # layered: {"strategy", "keys", "base", "layers": [...], "layer_rows": [...]}
    created_at: str
    collected_at: str | None = None
    collected_by: str | None = None

    @property
    def tables(self) -> list[str]:
        """Every immutable table this snapshot reads."""
        if self.kind == "layered":
            return [self.parts["base"], *self.parts["layers"]]
        return [self.name]


_COLUMNS = tuple(c.name for c in B.SNAPSHOTS.columns)  # + collected_at, collected_by


def _record(row) -> SnapshotRecord:
    values = list(row)
    values[5] = int(values[5])
    values[8] = json.loads(values[8])
    values[10] = json.loads(values[10])
    values[11] = str(values[11])
    values[12] = str(values[12]) if values[12] is not None else None
    return SnapshotRecord(*values)


def _row(rec: SnapshotRecord) -> dict:
    return {"name": rec.name, "model": rec.model, "run_id": rec.run_id, "kind": rec.kind,
            "content_hash": rec.content_hash, "row_count": rec.row_count,
            "hash_sum": rec.hash_sum, "hash_xor": rec.hash_xor,
            "columns": dumps(rec.columns), "code_fp": rec.code_fp, "parts": dumps(rec.parts),
            "created_at": rec.created_at}


def register(wh: WarehouseHandle, rec: SnapshotRecord) -> None:
    register_many(wh, [rec])


def register_many(wh: WarehouseHandle, records: list[SnapshotRecord]) -> None:
    """Register many snapshots in few statements (one INSERT per record cost ~2-5 ms
    each on a 1,000-model run): the adapter's `insert_rows` (DuckDB: one JSON
    document the engine unnests; elsewhere multi-row VALUES). A record collected at
    birth (never: gc collects) would need a `collections` row too."""
    if not records:
        return
    insert_rows(wh, B.SNAPSHOTS, [_row(rec) for rec in records])


_CHUNK = 500  # rows per multi-row INSERT


def insert_rows(wh: WarehouseHandle, table: B.Table, rows: list[dict]) -> None:
    """Rows into a bookkeeping table: the adapter's bulk path where it has one
    (DuckDB: one JSON parameter), else INSERT ... VALUES in chunks."""
    if not rows:
        return
    columns = [(c.name, c.type) for c in table.columns]
    if wh.adapter.bulk_insert(table.relation, columns,
                              [tuple(row.get(name) for name, _ in columns) for row in rows]):
        return
    for start in range(0, len(rows), _CHUNK):
        wh.run(B.insert(table, rows[start:start + _CHUNK]))


def _registry(wh: WarehouseHandle, *, names=None, models=None, **filters) -> list[tuple]:
    """Registry rows (bookkeeping.registry), the name or model list through the
    adapter's in_list (DuckDB: one JSON parameter, not a literal per value)."""
    where, params = None, None
    if names is not None:
        where, params = wh.adapter.in_list(B.col("name", "s"), names)
    elif models is not None:
        where, params = wh.adapter.in_list(B.col("model", "s"), models)
    query = B.registry(where=where, **filters)
    return wh.adapter.rows(query, params) if params is not None else wh.rows(query)


def records(wh: WarehouseHandle, names) -> dict[str, SnapshotRecord]:
    """The registry records of these snapshot names (missing names are absent), in one
    query."""
    names = sorted(set(names))
    if not names or not wh.has_internal():
        return {}
    return {r.name: r for r in map(_record, _registry(wh, names=names))}


class Registry:
    """Every visible registry record, read in one query: what a run asks of the
    registry (its base run's records, identity reuse, what a crashed run left behind,
    the snapshots merges and join checks read) without one query per question. Through
    Spark Connect each registry query is a join of three tables costing ~0.5-1 s; a run
    asked four, and one more per merge and per join check. Read when first asked
    (`later`): a run with nothing to do never asks. Valid until the reader writes
    registry rows (a run: at publication)."""

    def __init__(self, records: list[SnapshotRecord] | None = None, *,
                 read: Callable[[], list[SnapshotRecord]] | None = None) -> None:
        self._records = records
        self._read = read
        self._by_name: dict[str, SnapshotRecord] | None = None

    @classmethod
    def later(cls, read: Callable[[], list[SnapshotRecord]]) -> Registry:
        """A registry read by `read` the first time a question needs it."""
        return cls(read=read)

    @property
    def was_read(self) -> bool:
        return self._records is not None

    @property
    def records(self) -> list[SnapshotRecord]:  # newest first, as `snapshots` lists them
        if self._records is None:
            self._records = self._read() if self._read is not None else []
        return self._records

    @property
    def by_name(self) -> dict[str, SnapshotRecord]:
        if self._by_name is None:
            self._by_name = {r.name: r for r in self.records}
        return self._by_name

    def of(self, names) -> dict[str, SnapshotRecord]:
        """The records of these snapshot names (as `records`)."""
        return {n: self.by_name[n] for n in names if n in self.by_name}

    def content_index(self, models, exclude=frozenset()) -> dict[tuple[str, str], str]:
        """(model, content_hash) -> the newest uncollected snapshot with that content,
        for identity reuse (ties by creation: the greatest name). Snapshots in
        `exclude` (the quarantined: their storage no longer holds that content) are
        never offered."""
        wanted = set(models)
        found: dict[tuple[str, str], str] = {}
        for r in sorted(self.records, key=lambda r: (r.created_at, r.name)):
            if r.model in wanted and r.collected_at is None and r.name not in exclude:
                found[(r.model, r.content_hash)] = r.name
        return found

    def referenced(self) -> set[str]:
        """Every object an uncollected snapshot reads (its view and its tables)."""
        return {n for r in self.records if r.collected_at is None for n in (r.name, *r.tables)}


def read_registry(wh: WarehouseHandle) -> Registry:
    return Registry(snapshots(wh))


def registry_later(wh: WarehouseHandle) -> Registry:
    """The registry, read when a question first needs it (a run with nothing to do
    asks none)."""
    return Registry.later(lambda: snapshots(wh))


def snapshot(wh: WarehouseHandle, name: str) -> SnapshotRecord | None:
    if not wh.has_internal():
        return None
    rows = wh.rows(B.registry(names=[name]))
    return _record(rows[0]) if rows else None


def snapshots(wh: WarehouseHandle, model: str | None = None) -> list[SnapshotRecord]:
    if not wh.has_internal():
        return []
    return [_record(r) for r in wh.rows(B.registry(model=model))]


def same_content(wh: WarehouseHandle, model: str, content_hash: str,
                 exclude: str | None = None) -> SnapshotRecord | None:
    """An existing, uncollected snapshot of `model` with this content (identity reuse)."""
    if not wh.has_internal():
        return None
    for row in wh.rows(B.registry(model=model, content_hash=content_hash, uncollected=True)):
        if row[0] != exclude:
            return _record(row)
    return None


# ---------------------------------------------------------------- quarantine
# A snapshot whose storage no longer holds its recorded content (a flipped byte
# makes DuckDB refuse the block; an UPDATE changes rows) is quarantined: `verify`,
# or a run that could not read it, appends a `quarantine` entry to the history.
# Nothing is rewritten: the registry record stays as it was published, the damaged
# table stays for gc. A quarantined snapshot is never reused by identity, kept as up
# to date, merged onto or rolled back to; the next run computes its content into a
# new table and repoints the views.
QUARANTINE = "quarantine"
EVERY_BRANCH = "*"  # a snapshot table is shared by branches: the verdict is for all


@dataclass(frozen=True)
class Quarantined:
    snapshot: str
    model: str
    why: str  # what was found: "recorded X, now unreadable: ...", "reads table T ..."
    entry: str  # the quarantine entry's id
    found_by: str  # "verify of run R" | "run R"
    at: str


def quarantined(wh: WarehouseHandle) -> dict[str, Quarantined]:
    """snapshot name -> its quarantine verdict (the first one), from the history's
    quarantine entries only: one query, whatever the length of the history."""
    if not wh.has_internal():
        return {}
    out: dict[str, Quarantined] = {}
    found_by = B.json_text(wh.adapter, B.col("entry"), "details", "found_by")
    verdicts = B.json_text(wh.adapter, B.col("entry"), "details", "quarantined")
    query = B.history(kinds=(QUARANTINE,), newest_first=False, columns=(
        B.col("id"), B.col("started_at"), found_by, verdicts))
    for entry_id, started, by, said in wh.rows(query):
        _add_verdicts(out, entry_id, str(started), by or "", json.loads(said or "{}"))
    return out


def _add_verdicts(out: dict[str, Quarantined], entry_id: str, at: str, found_by: str,
                  said: dict) -> None:
    for name, verdict in said.items():
        out.setdefault(name, Quarantined(name, verdict["model"], verdict["why"], entry_id,
                                         found_by, at))


@dataclass(frozen=True)
class HistoryRead:
    """What a command that writes asks of the history before it does, read in one
    query (bookkeeping.history_read): each branch's newest published entries (a page,
    newest first: recover's roll-forward target and a run's staleness base are nearly
    always in it) and every quarantine verdict. On Spark each question was a job of its
    own. Read by `recover` on opening (every branch) or by the run (its branch), and
    taken once by the run (publication.take_history_read)."""

    pages: dict[str, list[HistoryEntry]]  # branch -> its newest ROLLBACK_TARGETS entries
    quarantined: dict[str, Quarantined]

    def published(self, wh: WarehouseHandle, branch: str) -> HistoryEntry | None:
        """As `last_published`: the newest entry that set the branch's live views."""
        return self._newest(wh, branch, ROLLBACK_TARGETS)

    def base(self, wh: WarehouseHandle, branch: str) -> HistoryEntry | None:
        """As `last_with_snapshots`: the branch's staleness base."""
        return self._newest(wh, branch, BASE_KINDS)

    def _newest(self, wh: WarehouseHandle, branch: str,
                kinds: tuple[str, ...]) -> HistoryEntry | None:
        page = self.pages.get(branch, [])
        found = next((e for e in page if e.kind in kinds and e.snapshots), None)
        if found is not None or len(page) < _PAGE:  # a short page is the whole history
            return found
        return _newest_with_snapshots(wh, branch, kinds)  # past the page: read on


def read_history(wh: WarehouseHandle, branch: str | None = None) -> HistoryRead:
    """The HistoryRead of `branch`, or of every branch (None: what `recover` needs)."""
    if not wh.has_internal():
        return HistoryRead({}, {})
    pages: dict[str, list[HistoryEntry]] = {}
    verdicts: list[tuple[HistoryEntry, str]] = []
    for row in wh.rows(B.history_read(kinds=ROLLBACK_TARGETS, page=_PAGE,
                                      verdicts=QUARANTINE, branch=branch,
                                      main=MAIN_BRANCH)):
        entry = _load(row)
        if entry.kind == QUARANTINE:
            verdicts.append((entry, str(row[2])))
        else:
            pages.setdefault(entry.branch, []).append(entry)
    quarantined: dict[str, Quarantined] = {}
    for entry, at in sorted(verdicts, key=lambda found: found[0].seq):
        _add_verdicts(quarantined, entry.id, at, entry.details.get("found_by") or "",
                      entry.details.get("quarantined") or {})
    return HistoryRead({b: sorted(page, key=lambda e: -e.seq) for b, page in pages.items()},
                       quarantined)


def quarantine_entry(entry_id: str, at: str, found_by: str,
                     verdicts: dict[str, tuple[str, str]]) -> HistoryEntry:
    """The history entry that quarantines `verdicts` (snapshot -> (model, why))."""
    return HistoryEntry(
        id=entry_id, kind=QUARANTINE, branch=EVERY_BRANCH, started_at=at, finished_at=at,
        models=sorted({model for model, _ in verdicts.values()}),
        details={"found_by": found_by,
                 "quarantined": {name: {"model": model, "why": why}
                                 for name, (model, why) in sorted(verdicts.items())}})
