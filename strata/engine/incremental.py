"""Incremental merge at run time: watermark, delta layer, layered snapshot, compaction.

A merged snapshot never copies the previous rows: the delta is stored as a new
immutable layer table and the snapshot is a view composing the base table with its
layers (`rewrites.layered_query`). When the chain gets deep or the layers large, the
run compacts the composition into a new base table. Published tables are never
mutated either way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from strata.engine import history as H
from strata.engine.fingerprints import RowHash, row_hash
from strata.engine.pins import CheckLog, check_pins
from strata.engine.warehouse import Warehouse, crash_point, internal
from strata.plan import Plan, PinSpec
from strata.sqlgen.literals import lit
from strata.sqlgen.names import table
from strata.sqlgen.rewrites import delta_query, layered_query

if TYPE_CHECKING:
    from strata.engine.materialize import ModelResult, Run

OWN_PREFIXES = ("snap_", "layer_")


@dataclass
class Merge:
    previous: H.SnapshotRecord
    watermark: object


def plan_merge(run: "Run", plan: Plan, code_fp: str, live: dict[str, str],
               result: "ModelResult") -> Merge | None:
    """The merge to do, or None for a full computation (with the reason noted)."""
    inc = plan.incremental
    if inc is None or inc.strategy not in ("append", "upsert"):
        return None
    opts = run.opts
    name = plan.model
    if opts.full_refresh and (opts.full_refresh_models is None or
                              name in opts.full_refresh_models):
        result.notes.append("--full-refresh: computed in full")
        return None
    if name in opts.force_full:
        result.notes.append("downstream of a corrected source: computed in full (a watermark "
                            "cannot see corrections to old rows)")
        return None
    prev_name = live.get(name)
    if prev_name is None:
        result.notes.append("first run: computed in full")
        return None
    previous = H.snapshot(run.wh, prev_name)
    if previous is None or previous.collected_at is not None:
        result.notes.append("no previous snapshot to merge with: computed in full")
        return None
    if previous.code_fp != code_fp:
        result.notes.append("code changed since the previous snapshot: computed in full")
        return None
    if previous.row_count == 0:
        result.notes.append("previous snapshot is empty: computed in full")
        return None
    cdc = _q(inc.cdc_column)
    (watermark,) = run.wh.execute(f"SELECT max({cdc}) FROM {internal(prev_name)}").fetchone()
    if watermark is None:
        result.notes.append(f"watermark max({inc.cdc_column}) is NULL: computed in full")
        return None
    return Merge(previous, watermark)


def build_layer(run: "Run", plan: Plan, code_fp: str, merge: Merge, result: "ModelResult",
                log: CheckLog) -> H.SnapshotRecord | None:
    from strata.engine.materialize import make_record, table_columns

    wh, inc, prev = run.wh, plan.incremental, merge.previous
    delta = delta_query(plan, run.relations, lit(merge.watermark))
    result.path = delta.path
    result.notes.append(f"watermark {inc.cdc_column} > {merge.watermark}")
    layer = run.unique_name(f"layer_{run.rid}_{plan.model}")
    wh.execute(f"CREATE TABLE {internal(layer)} AS {delta.tree.sql(dialect='duckdb')}")
    run.created.append(layer)
    crash_point(f"after_layer:{plan.model}")
    columns = table_columns(wh, layer)
    if [c for c, _ in columns] != [c for c, _ in prev.columns]:
        wh.drop(layer)
        run.created.remove(layer)
        result.notes.append("columns changed: computed in full")
        result.path = "full"
        return run._full(plan, code_fp, result, log)
    names = [c for c, _ in columns]
    delta_hash = row_hash(wh.con, internal(layer), names)
    result.delta_rows = delta_hash.count
    if delta_hash.count == 0:
        wh.drop(layer)
        run.created.remove(layer)
        result.status = "reused"
        result.snapshot = prev.name
        result.rows = prev.row_count
        result.notes.append("no rows past the watermark: previous snapshot reused")
        run.verified[plan.model] = prev.parts.get("verified", [])
        return None
    prev_hash = RowHash(prev.row_count, int(prev.hash_sum), int(prev.hash_xor))
    if inc.strategy == "append":
        new_hash = prev_hash.plus(delta_hash)
    else:
        match = " AND ".join(f"__d.{_q(k)} IS NOT DISTINCT FROM __p.{_q(k)}"
                             for k in inc.merge_keys)
        replaced = row_hash(wh.con, f"{internal(prev.name)} AS __p", names,
                            where=f"EXISTS (SELECT 1 FROM {internal(layer)} AS __d "
                                  f"WHERE {match})")
        new_hash = prev_hash.minus(replaced).plus(delta_hash)
    if prev.kind == "layered":
        base, layers = prev.parts["base"], list(prev.parts["layers"])
        layer_rows = list(prev.parts["layer_rows"])
        base_rows = prev.parts["base_rows"]
    else:
        base, layers, layer_rows, base_rows = prev.name, [], [], prev.row_count
    layers.append(layer)
    layer_rows.append(delta_hash.count)
    composed = layered_query(inc.strategy, names, [table("strata_internal", t)
                                                   for t in [base, *layers]], inc.merge_keys)
    snap = run.unique_name(f"snap_{run.rid}_{plan.model}")
    deep = len(layers) > inc.compact_layers
    large = sum(layer_rows) > inc.compact_ratio * max(1, base_rows)
    if deep or large:
        wh.execute(f"CREATE TABLE {internal(snap)} AS {composed.sql(dialect='duckdb')}")
        run.created.append(snap)
        result.path += ", compacted"
        result.notes.append(f"compacted {len(layers)} layer(s) into a new base table ("
                            + ("deeper than " + str(inc.compact_layers) if deep else
                               f"deltas above {inc.compact_ratio:.0%} of the base") + ")")
        kind, parts = "table", {}
    else:
        wh.execute(f"CREATE VIEW {internal(snap)} AS {composed.sql(dialect='duckdb')}")
        run.created.append(snap)
        kind = "layered"
        parts = {"strategy": inc.strategy, "keys": list(inc.merge_keys), "base": base,
                 "layers": layers, "layer_rows": layer_rows, "base_rows": base_rows,
                 "own": [layer]}
    crash_point(f"after_create:{plan.model}")
    result.rows = new_hash.count
    run.verified[plan.model] = _check_incremental_pins(run, plan, prev, snap, layer,
                                                       new_hash.count, log)
    if kind == "table":
        # the layer was folded in; it is not part of any snapshot
        wh.drop(layer)
        run.created.remove(layer)
    return make_record(snap, plan.model, run.rid, kind, new_hash, columns, code_fp, parts)


def _check_incremental_pins(run: "Run", plan: Plan, prev: H.SnapshotRecord, snap: str,
                            layer: str, rows: int, log: CheckLog) -> list[str]:
    """Pins on a merged snapshot. What the previous snapshot verified and the merge
    cannot break is checked on the delta only: not_null always; unique when the pin's
    columns are exactly the upsert keys (a delta row replaces every previous row with
    its key). Everything else is checked on the whole new snapshot."""
    inc = plan.incremental
    verified_before = set(prev.parts.get("verified", []))
    on_delta, on_whole = [], []
    for pin in plan.pins:
        key = f"{pin.kind}:" + ",".join(sorted(pin.columns))
        delta_enough = key in verified_before and (
            pin.kind == "not_null" or (pin.kind == "unique" and inc.strategy == "upsert"
                                       and set(pin.columns) == set(inc.merge_keys)))
        (on_delta if delta_enough else on_whole).append(pin)
    verified = []
    if on_delta:
        (delta_rows,) = run.wh.execute(f"SELECT count(*) FROM {internal(layer)}").fetchone()
        verified += check_pins(run.wh, internal(layer), _with_pins(plan, on_delta), delta_rows,
                               log)
        log.skipped.append({"check": ", ".join(p.describe() for p in on_delta),
                            "reason": "verified on the previous snapshot; checked on the delta"})
    if on_whole:
        verified += check_pins(run.wh, internal(snap), _with_pins(plan, on_whole), rows, log)
    return verified


def _with_pins(plan: Plan, pins: list[PinSpec]) -> Plan:
    from dataclasses import replace
    return replace(plan, pins=pins)


def _q(name: str) -> str:
    from sqlglot import exp
    return exp.to_identifier(name, quoted=True).sql("duckdb")


def cleanup_leftovers(wh: Warehouse) -> list[str]:
    """Drop internal snapshot/layer objects no registry row references: what a crashed
    run left behind. Views first (they read tables)."""
    referenced: set[str] = set()
    for rec in H.snapshots(wh):
        if rec.collected_at is None:
            referenced.add(rec.name)
            referenced.update(rec.tables)
    objects = wh.internal_objects()
    leftovers = [n for n, kind in objects.items()
                 if n.startswith(OWN_PREFIXES) and n not in referenced]
    leftovers.sort(key=lambda n: objects[n] != "view")
    for name in leftovers:
        wh.drop(name)
    return leftovers
