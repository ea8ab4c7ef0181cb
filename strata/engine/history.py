"""The append-only run history and the snapshot registry, as plain data."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields

from strata.diagnostics import fail
from strata.engine.warehouse import TEXT_LIST, Warehouse, dumps, internal, text_list


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


def append(wh: Warehouse, entry: HistoryEntry) -> HistoryEntry:
    """Append an entry (inside the caller's transaction when there is one)."""
    row = wh.execute(f"SELECT coalesce(max(seq), 0) + 1 FROM {internal('history')}").fetchone()
    entry.seq = int(row[0])
    wh.execute(f"INSERT INTO {internal('history')} VALUES (?, ?, ?, ?, ?, ?)",
               [entry.seq, entry.id, entry.kind, entry.branch, entry.started_at,
                dumps(entry.to_json())])
    return entry


def _load(row) -> HistoryEntry:
    data = json.loads(row[0])
    data["seq"] = row[1]
    known = HistoryEntry.__dataclass_fields__
    return HistoryEntry(**{k: v for k, v in data.items() if k in known})


def entries(wh: Warehouse, branch: str | None = None) -> list[HistoryEntry]:
    """Newest first."""
    if not wh.has_internal():
        return []
    sql = f"SELECT entry, seq FROM {internal('history')}"
    params: list = []
    if branch is not None:
        sql += " WHERE branch = ?"
        params.append(branch)
    sql += " ORDER BY seq DESC"
    return [_load(r) for r in wh.execute(sql, params).fetchall()]


def entries_with_id(wh: Warehouse, run_id: str) -> list[HistoryEntry]:
    """Every entry under exactly this id, newest first (a run repeated with the same
    content keeps its id)."""
    if not wh.has_internal():
        return []
    rows = wh.execute(f"SELECT entry, seq FROM {internal('history')} WHERE id = ? "
                      "ORDER BY seq DESC", [run_id]).fetchall()
    return [_load(r) for r in rows]


def find(wh: Warehouse, run_id: str) -> HistoryEntry:
    """The newest entry with this id (or a unique prefix of at least 4 characters)."""
    if not wh.has_internal():
        raise fail("E073", f"unknown run id `{run_id}`: the warehouse has no history yet")
    rows = wh.execute(f"SELECT entry, seq FROM {internal('history')} WHERE id = ? "
                      "ORDER BY seq DESC LIMIT 1", [run_id]).fetchall()
    if not rows and len(run_id) >= 4:
        rows = wh.execute(f"SELECT entry, seq, id FROM {internal('history')} "
                          "WHERE starts_with(id, ?) ORDER BY seq DESC", [run_id]).fetchall()
        if len({r[2] for r in rows}) > 1:
            raise fail("E073", f"run id prefix `{run_id}` is ambiguous", None,
                       "give more characters")
    if not rows:
        raise fail("E073", f"unknown run id `{run_id}`", None,
                   "`strata history -o WAREHOUSE` lists the runs")
    return _load(rows[0])


def relations_read(wh: Warehouse, run_id: str) -> dict[str, str] | None:
    """{source: relation} as the run with this id read them (its replay recipe), or
    None when no entry says. Taken out of the entry by DuckDB: the entry of a big
    module holds every model's SQL, which Python need not parse for this."""
    row = wh.execute(f"SELECT json_extract_string(entry, '$.details.__replay.sources') FROM "
                     f"{internal('history')} WHERE id = ? ORDER BY seq DESC LIMIT 1",
                     [run_id]).fetchone()
    if row is None or row[0] is None:
        return None
    read = json.loads(row[0])
    return read if isinstance(read, dict) else None


def last_good_before(wh: Warehouse, branch: str, seq: int) -> HistoryEntry | None:
    """The newest entry on the branch before `seq` that a rollback can return to (it
    lists snapshots; a failed run never does)."""
    return next((e for e in entries(wh, branch)
                 if e.seq < seq and e.snapshots and e.kind in ROLLBACK_TARGETS), None)


def last_with_snapshots(wh: Warehouse, branch: str) -> HistoryEntry | None:
    """The staleness base: the newest run or backfill on the branch that published
    snapshots (stage-only runs, rollbacks and failed runs never serve); else what the
    branch was created from."""
    if not wh.has_internal():
        return None
    # newest first, one entry at a time: an entry holds the run's whole recipe, so
    # parsing the branch's entire history on every run would grow with it
    cursor = wh.execute(f"SELECT entry, seq FROM {internal('history')} WHERE branch = ? AND "
                        "kind IN ('run', 'backfill', 'branch') ORDER BY seq DESC", [branch])
    while (row := cursor.fetchone()) is not None:
        entry = _load(row)
        if entry.snapshots:
            return entry
    return None


# ---------------------------------------------------------------- failed runs
# A run (or backfill) that fails on a model publishes nothing; once it has cleaned
# up, it appends a `failed` entry (best effort: strata/engine/failures.py) so the
# history and `strata graph` can say what failed. The entry lists no snapshots and
# its kind is none of the kinds a staleness base, a rollback, gc's keep-last or a
# branch is ever taken from.
FAILED = "failed"
ROLLBACK_TARGETS = ("run", "backfill", "rollback", "branch")


def failures_by_model(wh: Warehouse, branch: str) -> dict[str, HistoryEntry]:
    """model -> the newest failed entry on the branch in which that model failed
    (its code, message and time are in `entry.failure`). One query over failed
    entries only."""
    if not wh.has_internal():
        return {}
    out: dict[str, HistoryEntry] = {}
    for row in wh.execute(f"SELECT entry, seq FROM {internal('history')} WHERE branch = ? "
                          "AND kind = ? ORDER BY seq DESC", [branch, FAILED]).fetchall():
        entry = _load(row)
        for model in entry.failure.get("failed", {}):
            out.setdefault(model, entry)
    return out


def last_built_seq(wh: Warehouse, branch: str) -> dict[str, int]:
    """model -> seq of the newest run or backfill on the branch that published a
    snapshot of it (its last successful build)."""
    if not wh.has_internal():
        return {}
    out: dict[str, int] = {}
    for seq, models in wh.execute(
            "SELECT seq, json_extract_string(entry, '$.snapshots') FROM "
            f"{internal('history')} WHERE branch = ? AND kind IN ('run', 'backfill') "
            "ORDER BY seq", [branch]).fetchall():
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


_COLUMNS = ("name, model, run_id, kind, content_hash, row_count, hash_sum, hash_xor, columns, "
            "code_fp, parts, created_at, collected_at, collected_by")


def _record(row) -> SnapshotRecord:
    values = list(row)
    values[8] = json.loads(values[8])
    values[10] = json.loads(values[10])
    values[11] = str(values[11])
    values[12] = str(values[12]) if values[12] is not None else None
    return SnapshotRecord(*values)


def register(wh: Warehouse, rec: SnapshotRecord) -> None:
    wh.execute(f"INSERT INTO {internal('snapshots')} ({_COLUMNS}) VALUES "
               "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
               [rec.name, rec.model, rec.run_id, rec.kind, rec.content_hash, rec.row_count,
                rec.hash_sum, rec.hash_xor, dumps(rec.columns), rec.code_fp, dumps(rec.parts),
                rec.created_at, rec.collected_at, rec.collected_by])


def register_many(wh: Warehouse, records: list[SnapshotRecord]) -> None:
    """Register many snapshots in one INSERT: the records' columns go in as one JSON
    document that the engine parses and unnests side by side (one INSERT per record
    cost ~2-5 ms each on a 1,000-model run; Python lists as parameters, see
    warehouse.TEXT_LIST, ~1 ms a record on DuckDB 1.5)."""
    if not records:
        return
    names = _COLUMNS.split(", ")
    columns = dict(zip(names, [
        [rec.name for rec in records], [rec.model for rec in records],
        [rec.run_id for rec in records], [rec.kind for rec in records],
        [rec.content_hash for rec in records], [rec.row_count for rec in records],
        [rec.hash_sum for rec in records], [rec.hash_xor for rec in records],
        [dumps(rec.columns) for rec in records], [rec.code_fp for rec in records],
        [dumps(rec.parts) for rec in records], [rec.created_at for rec in records],
        [rec.collected_at for rec in records], [rec.collected_by for rec in records]],
        strict=True))
    # text for every column but row_count (TIMESTAMP columns take the text as written)
    shape = json.dumps({n: ["BIGINT" if n == "row_count" else "VARCHAR"] for n in names})
    unnested = ", ".join(f'unnest(j."{n}")' for n in names)
    wh.execute(f"INSERT INTO {internal('snapshots')} ({_COLUMNS}) SELECT {unnested} "
               f"FROM (SELECT from_json(?::VARCHAR, '{shape}') AS j)",
               [json.dumps(columns, default=str)])


def records(wh: Warehouse, names) -> dict[str, SnapshotRecord]:
    """The registry records of these snapshot names (missing names are absent), in one
    query."""
    names = sorted(set(names))
    if not names or not wh.has_internal():
        return {}
    rows = wh.execute(f"SELECT {_COLUMNS} FROM {internal('snapshots')} "
                      f"WHERE name IN (SELECT {TEXT_LIST})", [text_list(names)]).fetchall()
    return {r.name: r for r in map(_record, rows)}


def content_index(wh: Warehouse, models, exclude=frozenset()) -> dict[tuple[str, str], str]:
    """(model, content_hash) -> the newest uncollected snapshot with that content, for
    identity reuse without one registry query per model. Snapshots in `exclude` (the
    quarantined: their storage no longer holds that content) are never offered."""
    models = sorted(set(models))
    if not models or not wh.has_internal():
        return {}
    rows = wh.execute(f"SELECT model, content_hash, name FROM {internal('snapshots')} "
                      f"WHERE collected_at IS NULL AND model IN (SELECT {TEXT_LIST}) "
                      "ORDER BY created_at, name", [text_list(models)]).fetchall()
    return {(model, content): name for model, content, name in rows  # newest wins
            if name not in exclude}


def snapshot(wh: Warehouse, name: str) -> SnapshotRecord | None:
    if not wh.has_internal():
        return None
    row = wh.execute(f"SELECT {_COLUMNS} FROM {internal('snapshots')} WHERE name = ?",
                     [name]).fetchone()
    return _record(row) if row else None


def snapshots(wh: Warehouse, model: str | None = None) -> list[SnapshotRecord]:
    sql = f"SELECT {_COLUMNS} FROM {internal('snapshots')}"
    params: list = []
    if model is not None:
        sql += " WHERE model = ?"
        params.append(model)
    return [_record(r) for r in wh.execute(sql + " ORDER BY created_at DESC, name",
                                           params).fetchall()]


def same_content(wh: Warehouse, model: str, content_hash: str,
                 exclude: str | None = None) -> SnapshotRecord | None:
    """An existing, uncollected snapshot of `model` with this content (identity reuse)."""
    row = wh.execute(f"SELECT {_COLUMNS} FROM {internal('snapshots')} WHERE model = ? AND "
                     "content_hash = ? AND collected_at IS NULL AND name != ? "
                     "ORDER BY created_at DESC LIMIT 1",
                     [model, content_hash, exclude or ""]).fetchone()
    return _record(row) if row else None


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


def quarantined(wh: Warehouse) -> dict[str, Quarantined]:
    """snapshot name -> its quarantine verdict (the first one), from the history's
    quarantine entries only: one query, whatever the length of the history."""
    if not wh.has_internal():
        return {}
    out: dict[str, Quarantined] = {}
    for entry_id, started, found_by, verdicts in wh.execute(
            "SELECT id, started_at, json_extract_string(entry, '$.details.found_by'), "
            "json_extract_string(entry, '$.details.quarantined') "
            f"FROM {internal('history')} WHERE kind = ? ORDER BY seq", [QUARANTINE]
    ).fetchall():
        for name, verdict in json.loads(verdicts or "{}").items():
            out.setdefault(name, Quarantined(name, verdict["model"], verdict["why"], entry_id,
                                             found_by or "", str(started)))
    return out


def quarantine_entry(entry_id: str, at: str, found_by: str,
                     verdicts: dict[str, tuple[str, str]]) -> HistoryEntry:
    """The history entry that quarantines `verdicts` (snapshot -> (model, why))."""
    return HistoryEntry(
        id=entry_id, kind=QUARANTINE, branch=EVERY_BRANCH, started_at=at, finished_at=at,
        models=sorted({model for model, _ in verdicts.values()}),
        details={"found_by": found_by,
                 "quarantined": {name: {"model": model, "why": why}
                                 for name, (model, why) in sorted(verdicts.items())}})
