"""Incremental merge at run time: watermark, delta layer, layered snapshot, compaction.

A merged snapshot never copies the previous rows: the delta is stored as a new
immutable layer table and the snapshot is a view composing the base table with its
layers (`rewrites.layered_query`). When the chain gets deep or the layers large, the
run compacts the composition into a new base table. Published tables are never
mutated either way.
"""

from __future__ import annotations

import datetime as dt
import math
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from sqlglot import exp

from strata.diagnostics import fail
from strata.engine import history as H
from strata.engine.adapters.base import INTERNAL, Adapter, Relation
from strata.engine.environment import crash_point
from strata.engine.fingerprints import EMPTY, RowHash
from strata.engine.handle import internal
from strata.engine.pins.checks import check_pins
from strata.engine.pins.results import CheckLog
from strata.engine.publication import adapter_of
from strata.engine.records import make_record
from strata.engine.sources import SourceHash, Split
from strata.engine.warehouse import Warehouse
from strata.plan import PinSpec, Plan, RelationRef
from strata.semantics.module import Module
from strata.sqlgen.build import model_query
from strata.sqlgen.clock import RunClock
from strata.sqlgen.history import history_query
from strata.sqlgen.literals import lit
from strata.sqlgen.names import ident, table
from strata.sqlgen.rewrites import (
    KeyMatch,
    deleted_condition,
    delta_query,
    keys_match,
    layered_query,
    lookback_boundary,
    not_true,
    null_safe,
    settled_query,
    settled_rows,
)

if TYPE_CHECKING:
    from strata.engine.run.options import ModelResult, RunOptions

OWN_PREFIXES = ("snap_", "layer_")


class Building(Protocol):
    """What a merge needs from the build that runs it (strata/engine/run/build.py),
    declared here so that this module never imports the run back."""

    ad: Adapter
    wh: Warehouse
    module: Module
    opts: RunOptions
    rid: str
    registry: H.Registry
    created: list[str]  # internal objects the build created (dropped on failure)
    verified: dict[str, list[str]]  # model -> the pins its snapshot passed
    moved: dict[str, str]  # model -> why its source change forbids a merge
    settled: dict[str, Split]  # model -> its drift hash from the source scan
    source_hashes: dict[str, SourceHash]  # source -> its row hash from the fingerprint
    clock: RunClock  # the run's date and time (a history's valid_from / valid_to)

    def relations(self, ref: RelationRef, alias: str | None) -> exp.Expression: ...

    def relation_sql_of(self, ref: RelationRef) -> str: ...

    def unique_name(self, wanted: str) -> str: ...

    def published_with_code(self, model: str, snapshot: str, code_fp: str) -> bool: ...

    def full(self, plan: Plan, code_fp: str, result: ModelResult,
             log: CheckLog) -> H.SnapshotRecord | None: ...


def merges(plan: Plan) -> bool:
    """Does the model merge onto its previous snapshot (append, upsert, history)?"""
    return plan.incremental is not None and plan.incremental.strategy in (
        "append", "upsert", "history")


@dataclass
class Merge:
    previous: H.SnapshotRecord
    watermark: object
    boundary: object  # the watermark less the lookback: the delta is cdc > boundary


@dataclass(frozen=True)
class Drift:
    """What detection found (issue 17): the full result's rows at or below the
    boundary are not what the merge keeps there, so the merge differs from a full
    refresh. For append (issue 33) only rows the source holds and the log does not
    count (`unlogged`): a log keeps the rows its source has since dropped (`gone`),
    as the delivery note's `previous UNION ALL delta` says, so those are no drift."""

    boundary: object
    rows_now: int  # rows of a full computation at or below the boundary
    rows_expected: int  # rows the previous snapshot holds there (less what the delta replaces)
    action: str  # warn | recompute | fail
    strategy: str = "upsert"
    unlogged: int = 0  # append: rows at or below the watermark the log will never get
    gone: int = 0  # append: logged rows the source no longer holds (kept)

    @property
    def found(self) -> bool:
        """Whether the merge differs from a full refresh in a way the model must hear
        of: for append, only rows it will never log."""
        return self.strategy != "append" or self.unlogged > 0

    @property
    def why(self) -> str:
        if self.strategy == "append":
            return self._append_why()
        diff = self.rows_now - self.rows_expected
        if diff > 0:
            return (f"{diff} more row(s) at or below the watermark than the previous "
                    "snapshot holds (late rows, NULL cdc values, or rows changed without "
                    "moving the cdc column)")
        if diff < 0:
            return (f"{-diff} row(s) of the previous snapshot gone from the source at or "
                    "below the watermark (deleted, or changed without moving the cdc "
                    "column)")
        return ("the same number of rows at or below the watermark, with different "
                "content (rows changed without moving the cdc column)")

    def _append_why(self) -> str:
        parts = []
        if self.unlogged:
            parts.append(f"{self.unlogged} row(s) at or below the watermark are in the "
                         "source but not in the log, and a merge will never add them "
                         "(late rows, NULL cdc values, or rows changed without moving the "
                         "cdc column)")
        if self.gone:
            parts.append(f"{self.gone} logged row(s) are no longer in the source: kept "
                         "(an append log keeps what it logged)")
        return "; ".join(parts)

    def to_json(self) -> dict:
        out = {"boundary": str(self.boundary), "rows_now": self.rows_now,
               "rows_expected": self.rows_expected, "why": self.why, "action": self.action}
        if self.strategy == "append":
            out |= {"unlogged": self.unlogged, "gone": self.gone}
        return out


def plan_merge(build: Building, plan: Plan, code_fp: str, live: dict[str, str],
               result: ModelResult) -> Merge | None:
    """The merge to do, or None for a full computation (with the reason noted)."""
    inc = plan.incremental
    if inc is not None and inc.strategy == "history":
        return _history_merge(build, plan, live, result)
    if inc is None or inc.strategy not in ("append", "upsert"):
        return None
    opts = build.opts
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
    previous = build.registry.by_name.get(prev_name)
    if previous is None or previous.collected_at is not None:
        result.notes.append("no previous snapshot to merge with: computed in full")
        return None
    if previous.code_fp != code_fp and not build.published_with_code(name, prev_name, code_fp):
        result.notes.append("code changed since the previous snapshot: computed in full")
        return None
    if name in build.moved:
        result.notes.append(build.moved[name])
        return None
    if previous.row_count == 0:
        result.notes.append("previous snapshot is empty: computed in full")
        return None
    watermark = read_watermark(build.ad, previous, cdc_node(plan))
    if watermark is None:
        result.notes.append(f"watermark max({inc.cdc_column}) is NULL: computed in full")
        return None
    if _at_the_end(watermark):
        result.notes.append(f"watermark max({inc.cdc_column}) is {watermark}: nothing can "
                            "be past it, computed in full")
        return None
    if not _exact(build.ad, previous, cdc_node(plan), watermark):
        result.notes.append(f"watermark max({inc.cdc_column}) = {watermark} has no exact "
                            "literal (e.g. a TIMESTAMP_NS read as microseconds): computed in "
                            "full")
        return None
    boundary = lookback_boundary(watermark, inc.lookback)
    if boundary is None:
        result.notes.append(f"watermark {watermark} less lookback {_shown(inc.lookback)} is "
                            "out of the column's range: computed in full")
        return None
    return Merge(previous, watermark, boundary)


def _history_merge(build: Building, plan: Plan, live: dict[str, str],
                   result: ModelResult) -> Merge | None:
    """A history merges onto its live snapshot whatever changed since (its code, what
    its sources read): the history is that snapshot and no source holds its past.
    Computed in full only on its first run, or when `--full-refresh --reset-history`
    starts it over; a whole-module `--full-refresh` merges it as usual (run/decide.py
    refuses one naming it in `--models`, and a backfill, without it)."""
    previous = build.registry.by_name.get(live.get(plan.model, ""))
    if previous is None or previous.collected_at is not None:
        result.notes.append("first run of the history: every row opened now")
        return None
    if not holds_history(previous):
        result.notes.append("the previous snapshot is no history (the model was not one): "
                            "every row opened now")
        return None
    opts = build.opts
    if opts.full_refresh and (opts.full_refresh_models is None
                              or plan.model in opts.full_refresh_models):
        if opts.reset_history:
            result.notes.append("--reset-history: the history starts over, every row opened now")
            return None
        result.notes.append("--full-refresh keeps the history (its past is in no source): "
                            "merged as usual; `--reset-history` starts it over")
    return Merge(previous, None, None)


def holds_history(record: H.SnapshotRecord | None) -> bool:
    """Is this snapshot a history (a model switched to `history` starts one)?"""
    return record is not None and record.collected_at is None and \
        {"valid_from", "valid_to"} <= {c for c, _ in record.columns}


def build_history(build: Building, plan: Plan, code_fp: str, merge: Merge,
                  result: ModelResult, log: CheckLog) -> H.SnapshotRecord:
    """The history merged with the model's rows now into a new table
    (sqlgen/history.py), its pins checked. E214 when its columns (names or engine
    types) are not the previous snapshot's: the versions could not share a table."""
    ad, prev = build.ad, merge.previous
    names = [c.name for c in plan.output]
    span, hint = build.module.models[plan.model].decl.name_span, \
        HISTORY_RESET_HINT.format(model=plan.model)
    if [c for c, _ in prev.columns] != names:
        raise fail("E214", f"the history of `{plan.model}` has columns "
                   f"{', '.join(c for c, _ in prev.columns)}; the model now gives "
                   f"{', '.join(names)}", span, hint)
    tree = history_query(names, table(INTERNAL, prev.name),
                         model_query(plan, build.relations), build.clock.literal("run_timestamp"),
                         key_match(ad, prev.columns))
    snap = build.unique_name(f"snap_{build.rid}_{plan.model}")
    result.path = "history"
    result.sql = ad.render(tree)
    ad.build_table(Relation(INTERNAL, snap), tree, result.sql)
    build.created.append(snap)
    crash_point(f"after_create:{plan.model}")
    columns, hashed = ad.hash_tables(INTERNAL, [snap])[snap]
    if [list(c) for c in columns] != [list(c) for c in prev.columns]:
        raise fail("E214", f"the history of `{plan.model}` has columns "
                   f"{_typed(prev.columns)}; merged now they are {_typed(columns)}", span, hint)
    result.rows = hashed.count
    result.delta_rows = hashed.count - prev.row_count
    result.notes.append(f"history merged at {build.clock.value('run_timestamp')}: "
                        f"{hashed.count - prev.row_count} version(s) opened")
    build.verified[plan.model] = check_pins(ad, internal(snap), plan, hashed.count, log,
                                            None, build.relation_sql_of)
    return make_record(snap, plan.model, build.rid, "table", hashed, columns, code_fp, {})


HISTORY_RESET_HINT = ("its past versions are in no source: to start the history over "
                      "(every row opened now, the old versions left to the snapshots of "
                      "earlier runs), run with `--full-refresh --reset-history --models "
                      "{model}`")


def _typed(columns) -> str:
    return ", ".join(f"{c} {t}" for c, t in columns)


def _shown(lookback) -> str:
    if isinstance(lookback, tuple):
        return f"{lookback[0]} {lookback[1]}s"
    return str(lookback)


def sources_moved(module: Module, previous: dict[str, H.SnapshotRecord],
                  relations_read: Mapping[str, dict[str, str] | None],
                  relation_text: Callable[[str], str]) -> dict[str, str]:
    """model -> why it is computed in full, for the models about to merge onto their
    `previous` snapshot whose sources now read another relation. Decided before the
    run id (pure over what the run read: `relations_read`, run id -> {source: relation}
    that run read; `relation_text`, a source's relation now): a merge and a full
    computation over the same data may give different rows, so they must not share
    an id."""
    moved = {}
    for model, record in previous.items():
        why = _moved_source(module, model, relations_read.get(record.run_id), relation_text)
        if why is not None:
            moved[model] = why
    return moved


def _moved_source(module: Module, model: str, read: dict[str, str] | None,
                  relation_text: Callable[[str], str]) -> str | None:
    """Why the previous snapshot cannot be merged onto, when a source the model reads
    is read from another relation than when that snapshot was built (an --override
    for one run, a backfill's corrected table, a file source moved): the delta past
    the watermark would be mixed with the other relation's rows. Merging onto a run
    with an `orders_sample` override, say, would keep the sample and lose every
    older row of `orders`. None when every source reads what it read then."""
    if read is None:
        return ("the run that built the previous snapshot does not say what its sources "
                "read: computed in full")
    for source in sorted(module.sources_upstream(model)):
        now = relation_text(source)
        if read.get(source) != now:
            then = read.get(source, "nothing")
            return (f"source `{source}` is read from `{now}` now, from `{then}` when the "
                    "previous snapshot was built: computed in full")
    return None


def _at_the_end(value) -> bool:
    """A watermark nothing can be past, or that Python cannot hold exactly: NaN (it
    sorts above every double), +inf, and DuckDB's 'infinity' date/timestamp, which
    reaches Python as date.max/datetime.max (so `> datetime.max` would pick the
    infinite rows up again on every run). A delta past it would be empty or wrong
    forever; the model is recomputed while such a value is its maximum."""
    if isinstance(value, float):
        return not math.isfinite(value)
    return isinstance(value, dt.date) and value in (dt.date.max, dt.datetime.max)


def _exact(ad: Adapter, previous: H.SnapshotRecord, cdc: exp.Column, watermark) -> bool:
    """Whether the literal of the watermark is the maximum itself. A value the Python
    client rounds (TIMESTAMP_NS arrives as microseconds) would put the maximum row
    itself past the watermark: appended again on every run."""
    return ad.count(_own(_newest(previous)), exp.GT(this=cdc, expression=lit(watermark))) == 0


def _newest(previous: H.SnapshotRecord) -> str:
    return previous.parts["layers"][-1] if previous.kind == "layered" else previous.name


def read_watermark(ad: Adapter, previous: H.SnapshotRecord, cdc: exp.Column):
    """MAX(cdc_column) of the previous snapshot, as the typed value the engine returns.

    A layered snapshot's maximum is its newest layer's: every layer holds only rows
    with cdc_column above the maximum of the snapshot it was merged onto, and no
    later layer exists to replace them. So the watermark is read from that small
    table, not by evaluating the composed view (an anti-join over the base)."""
    ((value,),) = ad.rows(exp.select(exp.Max(this=cdc)).from_(_own(_newest(previous))))
    return value


def cdc_node(plan: Plan) -> exp.Column:
    """The snapshot's cdc column, carrying its type: the dialects compare and take the
    maximum of text by DuckDB's code points where the engine's collation orders
    otherwise (PostgreSQL in en_US), so the watermark is DuckDB's."""
    col = _col(plan.incremental.cdc_column)
    out = next(c for c in plan.output if c.name == plan.incremental.cdc_column)
    col.type = out.type.to_sqlglot()
    return col


def build_layer(build: Building, plan: Plan, code_fp: str, merge: Merge, result: ModelResult,
                log: CheckLog) -> H.SnapshotRecord | None:
    if plan.incremental.strategy == "history":
        return build_history(build, plan, code_fp, merge, result, log)
    ad, inc, prev = build.ad, plan.incremental, merge.previous
    delta = delta_query(plan, build.relations, lit(merge.boundary))
    result.path = delta.path
    result.notes.append(f"watermark {inc.cdc_column} > {merge.watermark}" + (
        f", re-reading the lookback ({inc.cdc_column} > {merge.boundary})"
        if inc.lookback is not None else ""))
    layer = build.unique_name(f"layer_{build.rid}_{plan.model}")
    query = ad.render(delta.tree)
    result.sql = query  # the statement that ran, for --json and the pushdown tests
    ad.build_table(Relation(INTERNAL, layer), delta.tree, query)
    build.created.append(layer)
    crash_point(f"after_layer:{plan.model}")
    columns = ad.snapshot_columns(Relation(INTERNAL, layer))
    if [list(c) for c in columns] != [list(c) for c in prev.columns]:
        # Names or engine types drifted (e.g. a source column INTEGER -> BIGINT, which
        # the contract accepts): a union would silently cast, and row hashes of
        # differently typed values do not add up. Recompute in full.
        ad.drop(Relation(INTERNAL, layer), "table")
        build.created.remove(layer)
        result.notes.append("columns or their types changed since the previous snapshot: "
                            "computed in full")
        result.path = "full"
        result.delta_rows = None
        return build.full(plan, code_fp, result, log)
    names = [c for c, _ in columns]
    deleted = deleted_condition(plan)
    delta_hash = ad.row_hash(_own(layer), names)  # deletion rows included
    kept_hash = delta_hash if deleted is None else ad.row_hash(_own(layer), names,
                                                               not_true(deleted))
    result.delta_rows = delta_hash.count
    prev_hash = RowHash(prev.row_count, int(prev.hash_sum), int(prev.hash_xor))
    if prev.kind == "layered":
        base, layers = prev.parts["base"], list(prev.parts["layers"])
        layer_rows = list(prev.parts["layer_rows"])
        base_rows = prev.parts["base_rows"]
    else:
        base, layers, layer_rows, base_rows = prev.name, [], [], prev.row_count
    deep = len(layers) + 1 > inc.compact_layers
    large = sum(layer_rows) + delta_hash.count > inc.compact_ratio * max(1, base_rows)
    replaced = EMPTY
    # what the delta replaces: for detection, for a layered snapshot's derived hash, and
    # to tell a delta of deletions that delete nothing; a compaction hashes its table
    needed = inc.on_drift != "ignore" or not (deep or large) or kept_hash.count == 0
    if inc.strategy == "upsert" and delta_hash.count and needed:
        replaced = replaced_rows_hash(ad, names, inc.merge_keys, [base, *layers], layer,
                                      deleted, key_match(ad, columns))
    drift = detect_drift(build, plan, merge, names, prev_hash.minus(replaced),
                         (columns, delta_hash))
    if drift is not None and _drifted(build, plan, drift, layer, result):
        return build.full(plan, code_fp, result, log)
    if kept_hash.count == 0 and replaced.count == 0:
        _reuse_previous(build, plan, prev, layer, result, deletions=delta_hash.count > 0)
        return None
    tables = [base, *layers, layer]
    composed = layered_query(inc.strategy, names, [table(INTERNAL, t) for t in tables],
                             inc.merge_keys, deleted, key_match(ad, columns))
    snap = build.unique_name(f"snap_{build.rid}_{plan.model}")
    if deep or large:
        ad.build_table(Relation(INTERNAL, snap), composed, ad.render(composed))
        build.created.append(snap)
        # The compacted table is hashed directly: one scan of it is cheaper than the
        # replaced-rows probe of a deep chain, and equal to the derived hash by design.
        new_hash = ad.row_hash(_own(snap), names)
        result.compacted = True
        result.notes.append(f"compacted {len(tables) - 1} layer(s) into a new base table ("
                            + ("deeper than " + str(inc.compact_layers) if deep else
                               f"deltas above {inc.compact_ratio:.0%} of the base") + ")")
        kind, parts = "table", {}
    else:
        new_hash = prev_hash.minus(replaced).plus(kept_hash)
        ad.create_view(Relation(INTERNAL, snap), composed)
        build.created.append(snap)
        kind = "layered"
        parts = {"strategy": inc.strategy, "keys": list(inc.merge_keys), "base": base,
                 "layers": tables[1:], "layer_rows": [*layer_rows, delta_hash.count],
                 "base_rows": base_rows, "own": [layer]}
    crash_point(f"after_create:{plan.model}")
    result.rows = new_hash.count
    build.verified[plan.model] = _check_incremental_pins(build, plan, prev, snap, layer,
                                                       new_hash.count, log)
    if kind == "table":
        # the layer was folded in; it is not part of any snapshot
        ad.drop(Relation(INTERNAL, layer), "table")
        build.created.remove(layer)
    return make_record(snap, plan.model, build.rid, kind, new_hash, columns, code_fp, parts)


def _drifted(build: Building, plan: Plan, drift: Drift, layer: str, result: ModelResult) -> bool:
    """Record the drift on the model's result; True when the model is to be computed
    in full instead (on_drift: recompute), its layer dropped. Rows an append log keeps
    after its source dropped them are only noted: they are the log's, not drift."""
    if not drift.found:
        result.notes.append(f"{drift.why}; `{refresh_command(build, plan.model)}` rebuilds "
                            "the log from what the source holds now")
        return False
    result.drift = drift.to_json()
    if drift.action == "recompute":
        build.ad.drop(Relation(INTERNAL, layer), "table")
        build.created.remove(layer)
        rebuilt = (": the log is rebuilt from what the source holds now"
                   if drift.strategy == "append" else "")
        result.notes.append(f"drift at or below the watermark: {drift.why}: computed in "
                            f"full (on_drift: recompute){rebuilt}")
        result.path = "full"
        result.delta_rows = None
        return True
    result.notes.append(f"warning: drift at or below the watermark: {drift.why}: merged "
                        f"as usual (on_drift: {drift.action}); "
                        f"`{refresh_command(build, plan.model)}` recomputes it")
    return False


def refresh_command(build: Building, model: str) -> str:
    """The command that recomputes one model in full, ready to paste (the warehouse as
    its location shows itself: a password never appears)."""
    module = build.opts.module_path or "MODULE"
    where = build.wh.location.redacted() if build.wh.location is not None else "WAREHOUSE"
    return (f"strata run {shlex.quote(module)} -o {shlex.quote(where)} --full-refresh "
            f"--models {shlex.quote(model)}")


def _reuse_previous(build: Building, plan: Plan, prev: H.SnapshotRecord, layer: str,
                    result: ModelResult, deletions: bool) -> None:
    """Nothing to add and nothing to remove: the previous snapshot stays the model's."""
    build.ad.drop(Relation(INTERNAL, layer), "table")
    build.created.remove(layer)
    result.status = "reused"
    result.snapshot = prev.name
    result.rows = prev.row_count
    result.notes.append("the rows past the watermark delete no key: previous snapshot "
                        "reused" if deletions else
                        "no rows past the watermark: previous snapshot reused")
    build.verified[plan.model] = prev.parts.get("verified", [])


def merge_candidates(module: Module, closure: list[str], opts: RunOptions,
                     live: dict[str, str]) -> dict[str, str]:
    """model -> the live snapshot it would merge onto: only a model that really merges
    reads its previous snapshot (a kept or fully recomputed one does not depend on
    what the live view shows)."""
    return {m: live[m] for m in closure if m in live and merges(module.plan(m))
            and m not in opts.force_full and m not in opts.keep}


def scan_splits(ad: Adapter, module: Module, closure: list[str], opts: RunOptions,
                live: dict[str, str], registry: H.Registry,
                quarantined) -> dict[str, list[Split]]:
    """source -> the settled rows (`rewrites.settled_rows`) of the models about to
    merge that the source's fingerprint scan can hash too, at the boundary their
    merge will use (read now from their live snapshot: a cheap query on its newest
    table). A guess made before the run decides anything: a model that ends up not
    merging, or at another boundary, ignores it and `detect_drift` scans on its own.
    One alias per source (the first model's); the others scan on their own."""
    if (opts.full_refresh and opts.full_refresh_models is None) or \
            not ad.folds_split_scans:  # elsewhere detection scans on its own
        return {}
    candidates = {}
    for name in closure:
        plan = module.plan(name)
        inc = plan.incremental
        if (inc is None or inc.strategy not in ("append", "upsert") or inc.on_drift ==
                "ignore" or name in opts.force_full or name in opts.keep
                or plan.reads[0].kind != "source"):
            continue
        candidates[name] = plan
    if not candidates:
        return {}
    records = registry.of(live[m] for m in candidates if m in live)
    out: dict[str, list[Split]] = {}
    for name, plan in candidates.items():
        record = records.get(live.get(name, ""))
        if (record is None or record.collected_at is not None or record.row_count == 0
                or record.name in quarantined):  # never read a damaged table ahead
            continue
        split = _split(ad, plan, record)
        source = plan.reads[0].name
        if split is not None and all(s.alias == split.alias for s in out.get(source, [])):
            out.setdefault(source, []).append(split)
    return out


def _split(ad: Adapter, plan: Plan, previous: H.SnapshotRecord) -> Split | None:
    inc = plan.incremental
    try:
        watermark = read_watermark(ad, previous, cdc_node(plan))
    except ad.engine_errors():  # a guess: the merge itself reports what fails
        return None
    boundary = lookback_boundary(watermark, inc.lookback) if watermark is not None else None
    if boundary is None or _at_the_end(watermark):
        return None
    rows = settled_rows(plan, lit(boundary))
    if rows is None:
        return None
    plain = all(isinstance(r, exp.Column) and r.table == rows.alias for r in rows.rows)
    try:
        text = [r.sql(dialect="duckdb") for r in rows.rows]
        keep = rows.keep.sql(dialect="duckdb")
        past = rows.past.sql(dialect="duckdb") if not rows.filters else None
    except ValueError:  # a node only the model's own rendering knows: scan on its own
        return None
    return Split(plan.model, boundary, rows.alias, text, keep,
                 tuple(r.name for r in rows.rows) if plain else None, past)


def detect_drift(build: Building, plan: Plan, merge: Merge, names: list[str],
                 expected: RowHash,
                 layer: tuple[list[tuple[str, str]], RowHash] | None = None) -> Drift | None:
    """Does the full result, at or below the boundary, still hold exactly the rows the
    previous snapshot holds there (`expected`: all of it for append; for upsert, less
    the rows whose keys the delta brings again)? Both sides are order-independent row
    hashes of the same columns and types, so equal hashes mean equal multisets (up to
    a 64-bit collision on sum and xor together). The merge equals a full refresh
    exactly when they are equal: the delta is the rest of the full result.
    For append, unequal hashes are told apart by one more query: rows the source holds
    and the log does not (drift) or only logged rows the source dropped (not drift).
    None when they are equal, or on_drift is `ignore`. `layer`: the delta layer's
    columns (with engine types) and row hash, when it was just built."""
    inc = plan.incremental
    if inc.on_drift == "ignore":
        return None
    scanned = build.settled.get(plan.model)
    if scanned is not None and scanned.found is not None and \
            scanned.boundary == merge.boundary and type(scanned.boundary) is type(merge.boundary):
        now = scanned.found  # hashed in the source fingerprint's scan
    else:
        now = (_settled_less_layer(build, plan, merge, names, layer)
               or build.ad.row_hash(_settled(build, plan, merge), names))
    if now == expected:
        return None
    drift = Drift(merge.boundary, now.count, expected.count, inc.on_drift, inc.strategy)
    if inc.strategy == "append":
        unlogged = _unlogged_rows(build, plan, merge, names)
        drift = replace(drift, unlogged=unlogged,
                        gone=expected.count - (now.count - unlogged))
    if inc.on_drift == "fail" and drift.found:
        raise fail("E117", f"incremental model `{plan.model}` drifted from a full refresh: "
                   f"{drift.why} (at or below {inc.cdc_column} = {merge.boundary}: "
                   f"{now.count} row(s) now, {expected.count} in the previous snapshot)",
                   build.module.models[plan.model].decl.name_span,
                   f"`{refresh_command(build, plan.model)}` recomputes it; "
                   "`on_drift: recompute` does so by itself; nothing was published")
    return drift


def _settled_less_layer(build: Building, plan: Plan, merge: Merge, names: list[str],
                        layer: tuple[list[tuple[str, str]], RowHash] | None
                        ) -> RowHash | None:
    """The settled rows' hash without reading them: a model that passes its one
    source's declared columns through, in order, filtering nothing, holds every source
    row, so its rows at or below the boundary are the source's less those past it,
    which are exactly the delta layer just built (`cdc > boundary`): the hash the
    fingerprint read less the layer's. Only where the fingerprint was hashed on this
    engine this run and the layer's columns have the source's engine types (the same
    per-row hash); None otherwise (then the settled rows are scanned: PostgreSQL
    spent as long on that scan as on the fingerprint, 0.67 s at 1e6 rows)."""
    read = plan.reads[0]
    if layer is None or read.kind != "source" or read.name not in build.source_hashes:
        return None
    source = build.source_hashes[read.name]
    columns, delta = layer
    declared = [n for n, _ in source.columns]
    if names != declared or [tuple(c) for c in columns] != list(source.columns):
        return None
    rows = settled_rows(plan, lit(merge.boundary))
    if rows is None or rows.filters or [
            r.name if isinstance(r, exp.Column) and r.table == rows.alias else None
            for r in rows.rows] != declared:
        return None
    return source.rows.minus(delta)


def _settled(build: Building, plan: Plan, merge: Merge) -> exp.Subquery:
    """The full result's rows at or below the merge's boundary, as a FROM item."""
    query = settled_query(plan, build.relations, lit(merge.boundary)).tree
    return exp.Subquery(this=query, alias=exp.TableAlias(this=ident("__settled")))


def _unlogged_rows(build: Building, plan: Plan, merge: Merge, names: list[str]) -> int:
    """How many rows of the full result at or below the watermark an append log does
    not hold (as a multiset: `settled EXCEPT ALL previous`, NULLs equal): rows the
    source gained or changed where no delta will ever look. One scan of each side,
    paid only when the cheap hash comparison already found a difference."""
    cols = [exp.column(exp.to_identifier(n, quoted=True)) for n in names]
    now = exp.select(*[c.copy() for c in cols]).from_(_settled(build, plan, merge))
    logged = exp.select(*[c.copy() for c in cols]).from_(_own(merge.previous.name))
    missing = exp.Except(this=now, expression=logged, distinct=False)
    query = exp.select(exp.Count(this=exp.Star())).from_(
        exp.Subquery(this=missing, alias=exp.TableAlias(this=ident("__unlogged"))))
    ((found,),) = build.ad.rows(query)
    return int(found)


def key_match(ad: Adapter, columns: list[tuple[str, str]]) -> KeyMatch:
    """How the engine matches merge keys (NULL with NULL) fast, by each key column's
    type as the engine reports it (`Dialect.match_key`)."""
    kinds = {name: ad.dialect.type_kind(engine_type) for name, engine_type in columns}
    return lambda left, right, key: ad.dialect.match_key(left, right, kinds.get(key, ""))


def replaced_rows_hash(ad: Adapter, names: list[str], keys: tuple[str, ...],
                       tables: list[str], layer: str,
                       deleted: exp.Expression | None = None,
                       match: KeyMatch = null_safe) -> RowHash:
    """The row-hash aggregate of the previous snapshot's rows that the new layer
    replaces (an upsert drops them), computed on the previous snapshot's tables.

    Each table contributes the rows still visible in the previous snapshot (no later
    table holds their key) whose key is in the new layer: the semi-join against the
    small layer comes first, so the base is probed once and the anti-join against
    earlier layers only sees the few matching rows. Evaluating the previous layered
    view instead would anti-join the whole base before filtering.
    """
    parts = [table(INTERNAL, t) for t in tables]
    composed = layered_query("upsert", names, parts, keys, deleted, match)
    selects = list(composed.flatten()) if isinstance(composed, exp.Union) else [composed]
    for part in selects:
        probe = exp.Select(expressions=[exp.Literal.number(1)]).from_(
            table(INTERNAL, layer, alias="__d")).where(keys_match(keys, "__d", "__t", match))
        semi = exp.Exists(this=probe)
        where = part.args.get("where")
        part.set("where", exp.Where(this=semi if where is None else
                                    exp.And(this=semi, expression=where.this)))
    sub = exp.Subquery(this=composed, alias=exp.TableAlias(this=ident("__r")))
    return ad.row_hash(sub, names)


def _check_incremental_pins(build: Building, plan: Plan, prev: H.SnapshotRecord, snap: str,
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
        delta_rows = build.ad.count(_own(layer))
        verified += check_pins(build.ad, internal(layer), _with_pins(plan, on_delta), delta_rows,
                               log)
        log.skipped.append({"check": ", ".join(p.describe() for p in on_delta),
                            "reason": "verified on the previous snapshot; checked on the delta"})
    if on_whole:
        verified += check_pins(build.ad, internal(snap), _with_pins(plan, on_whole), rows, log,
                               relation_sql_of=build.relation_sql_of)
    return verified


def _with_pins(plan: Plan, pins: list[PinSpec]) -> Plan:
    return replace(plan, pins=pins)


def _col(name: str) -> exp.Column:
    return exp.column(exp.to_identifier(name, quoted=True))


def _own(name: str) -> exp.Table:
    """One of the warehouse's own tables (a snapshot, a layer), as a FROM item."""
    return Relation(INTERNAL, name).table()


def cleanup_leftovers(wh: Warehouse, registry: H.Registry | None = None) -> list[str]:
    """Drop internal snapshot/layer objects no registry row references: what a crashed
    run left behind. Views first (they read tables). `registry`: as the caller read it
    (a run reads it once for its whole decision)."""
    ad = adapter_of(wh)
    referenced = (registry or H.read_registry(wh)).referenced()
    objects = ad.relations(INTERNAL)
    own = tuple(ad.physical_name(p) for p in OWN_PREFIXES)
    leftovers = [n for n, kind in objects.items()
                 if n.startswith(own) and n not in referenced]
    leftovers.sort(key=lambda n: objects[n] != "view")
    for name in leftovers:
        ad.drop(Relation(INTERNAL, name), objects[name])
    return leftovers
