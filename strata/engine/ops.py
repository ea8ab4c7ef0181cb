"""History operations on published runs: rollback, verify, replay --execute."""

from __future__ import annotations

from dataclasses import dataclass, field

import duckdb

from strata.diagnostics import Diagnostic, StrataError, fail
from strata.engine import history as H
from strata.engine.branches import ensure_branch, switch_views
from strata.engine.clock import now_text
from strata.engine.fingerprints import row_hash, sha
from strata.engine.warehouse import Warehouse, internal

_NO_SNAPSHOTS_HINT = {
    "stage": "stage-only runs publish nothing",
    "gc": "a gc entry records what it collected, not snapshots; `strata history -o "
          "WAREHOUSE` lists the runs",
    "run": "`strata history -o WAREHOUSE` lists the runs and what they published",
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


def rollback(wh: Warehouse, run_id: str, branch: str | None = None) -> H.HistoryEntry:
    entry = H.find(wh, run_id)
    target = branch or entry.branch
    # first: an entry without snapshots (a gc's branch is `*`) is E073, not "unknown branch"
    records = require_snapshots(wh, entry, "roll back to")
    ensure_branch(wh, target)
    views = {m: r.name for m, r in records.items()}
    with wh.transaction():
        switch_views(wh, target, views)
        out = H.HistoryEntry(id=sha("rollback", entry.id, entry.seq, target, now_text())[:12],
                             kind="rollback", branch=target, started_at=now_text(),
                             models=sorted(views), snapshots=views,
                             source_fingerprints=entry.source_fingerprints,
                             code_fingerprints=entry.code_fingerprints,
                             overrides=entry.overrides,
                             details={"rolled_back_to": entry.id, "rolled_back_seq": entry.seq})
        H.append(wh, out)
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
    """Recompute each snapshot's content hash; E077 when any differs."""
    entry = H.find(wh, run_id)
    records = require_snapshots(wh, entry, "verify")
    results = []
    for model, rec in sorted(records.items()):
        names = [c for c, _ in rec.columns]
        try:
            hashed = row_hash(wh.con, internal(rec.name), names)
            schema = [(r[0], r[1]) for r in wh.execute(
                f"DESCRIBE SELECT * FROM {internal(rec.name)}").fetchall()]
            actual = hashed.digest(schema)
        except duckdb.Error as err:
            actual, hashed = f"unreadable: {str(err).splitlines()[0]}", None
        results.append(VerifyResult(model, rec.name, rec.content_hash, actual,
                                    hashed.count if hashed else -1, actual == rec.content_hash))
    bad = [r for r in results if not r.ok]
    if bad:
        raise StrataError([Diagnostic(
            "E077", f"run `{entry.id}`: snapshot `{r.snapshot}` of `{r.model}` does not match "
            f"its recorded content hash", None, "the snapshot was changed after it was "
            "published; roll back to another run or rebuild it",
            notes=(f"recorded {r.recorded}, now {r.actual}",)) for r in bad])
    return results


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
    scratch tables; compare content hashes; publish nothing, keep nothing."""
    import sqlglot
    from sqlglot import exp

    from strata.engine.fingerprints import describe, row_hash
    from strata.engine.sources import _first_line

    entry = H.find(wh, run_id)
    records = require_snapshots(wh, entry, "replay")
    recipe = entry.details.get("__replay")
    if not recipe:
        raise fail("E073", f"run `{entry.id}` ({entry.kind}) recorded no recipe to replay")
    replay = Replay(entry)
    scratch: dict[str, str] = {}
    try:
        for name, fp in recipe["source_fingerprints"].items():
            relation = recipe["sources"][name]
            try:
                schema = describe(wh.con, relation)
                columns = recipe["source_columns"][name]
                now_fp = row_hash(wh.con, relation, columns).digest(
                    [(n, t) for n, t in schema if n in set(columns)])
            except duckdb.Error as err:
                now_fp = f"unreadable: {_first_line(err)}"
            if now_fp != fp:
                replay.source_drift[name] = (fp, now_fp)
        upstream: dict[str, set[str]] = {}  # model -> the sources it reads, transitively
        for model in recipe["order"]:
            tree = sqlglot.parse_one(recipe["code"][model], read="duckdb")
            upstream[model] = set()
            for node in tree.find_all(exp.Table):
                if node.db == "__source":
                    upstream[model].add(node.name)
                elif node.db == "__model":
                    upstream[model] |= upstream.get(node.name, set())

            def bind(node):
                if isinstance(node, exp.Table) and node.db in ("__source", "__model"):
                    target = (recipe["sources"][node.name] if node.db == "__source"
                              else internal(scratch[node.name]))
                    new = sqlglot.parse_one(f"SELECT * FROM {target}", read="duckdb"
                                            ).args["from_"].this
                    if node.args.get("alias"):
                        new.set("alias", node.args["alias"].copy())
                    return new
                return node

            query = tree.transform(bind).sql(dialect="duckdb")
            name = f"replay_{entry.id}_{model}"
            wh.execute(f"DROP TABLE IF EXISTS {internal(name)}")
            wh.execute(f"CREATE TABLE {internal(name)} AS {query}")
            scratch[model] = name
            if model not in records:
                continue
            rec = records[model]
            schema = describe(wh.con, internal(name))
            actual = row_hash(wh.con, internal(name), [c for c, _ in schema]).digest(schema)
            ok = actual == rec.content_hash
            note = ""
            drifted = sorted(set(replay.source_drift) & upstream[model])
            if not ok and drifted:
                note = "sources changed since the run: " + ", ".join(drifted)
            elif not ok and _merged_in(entry, recipe, model):
                note = ("incremental model: its merged history legitimately differs from a full "
                        "recompute (rows changed without moving the watermark)")
            replay.results.append(ReplayResult(model, rec.content_hash, actual, ok, note))
    finally:
        for name in scratch.values():
            wh.execute(f"DROP TABLE IF EXISTS {internal(name)}")
    return replay
