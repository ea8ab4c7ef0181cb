"""`run --only-stale`: which models are stale, source by source, against the last
run with snapshots on the branch (SPEC §3.4 and the delivery note)."""

from __future__ import annotations

from strata.engine import history as H
from strata.engine.branches import view_of
from strata.engine.environment import crash_point
from strata.engine.handle import WarehouseHandle
from strata.semantics.module import Module


def stale_models(module: Module, closure: list[str], code_fps: dict[str, str],
                 source_fps: dict[str, str], base: H.HistoryEntry | None,
                 live: dict[str, str], registry: H.Registry,
                 standing: frozenset[str] = frozenset()) -> dict[str, str]:
    """model -> why it must be rebuilt. Empty means nothing to do. `standing`: base
    snapshots whose object the internal schema still holds; gc drops a snapshot's
    objects before (or in the transaction where) it records the collection, so one
    standing was not collected, and the registry is not asked about it."""
    if base is None:
        return {m: "never built on this branch" for m in closure}
    changed = {s for s, fp in source_fps.items() if base.source_fingerprints.get(s) != fp}
    clock = clock_changes(module, closure, source_fps, base) if changed else {}
    reasons: dict[str, str] = {}
    for name in closure:
        reason = None
        if name not in base.snapshots:
            reason = "not in the last run"
        elif base.code_fingerprints.get(name) != code_fps[name]:
            reason = "code changed"
        else:
            hit = sorted(module.sources_upstream(name) & changed)
            if hit:
                reason = f"source `{hit[0]}` changed"
            elif name in clock:
                reason = clock[name]
            elif live.get(name) != base.snapshots[name]:
                reason = "live view differs from the last run"
            elif base.snapshots[name] not in standing:
                record = registry.by_name.get(base.snapshots[name])
                if record is None or record.collected_at is not None:
                    reason = "its last snapshot was collected"
        if reason:
            reasons[name] = reason
    return reasons


def clock_changes(module: Module, closure: list[str], source_fps: dict[str, str],
                   base: H.HistoryEntry) -> dict[str, str]:
    """model -> why it is stale because the run's clock moved: it, or a model it
    reads, calls run_date()/run_timestamp() and the value differs from the last run's
    (recorded beside the sources' fingerprints as `run_date()`)."""
    moved = {}
    for key, value in source_fps.items():
        if key.endswith("()") and base.source_fingerprints.get(key) != value:
            then = base.source_fingerprints.get(key, "not read")
            moved[key[:-2]] = f"`{key}` changed ({then} -> {value})"
    if not moved:
        return {}
    reads: dict[str, set[str]] = {}
    for name in module.order:  # upstream first: a model reads what its inputs read
        if name in closure:
            info = module.models[name]
            plan = module.plan(name)
            own = plan.clock if plan.clock_stale is None else plan.clock_stale
            reads[name] = set(own).union(
                *(reads.get(m, set()) for m in info.models_read))
    return {m: moved[min(r & set(moved))] for m, r in reads.items() if r & set(moved)}


def quarantined_models(models: list[str], base: H.HistoryEntry | None,
                       live: dict[str, str],
                       quarantined: dict[str, H.Quarantined]) -> dict[str, str]:
    """model -> why it must be rebuilt though its code and sources did not change: its
    live or last snapshot is quarantined (verify, or a run, found its storage
    damaged), and a run never keeps one. `plan` and `run --only-stale` both ask
    this, so what plan says a run will rebuild is what it rebuilds."""
    out = {}
    for name in models:
        snaps = [live.get(name), base.snapshots.get(name) if base else None]
        damaged = next((s for s in snaps if s in quarantined), None)
        if damaged is not None:
            verdict = quarantined[damaged]
            out[name] = f"snapshot `{damaged}` quarantined by {verdict.found_by}: {verdict.why}"
    return out


def plan_reasons(module: Module, models: list[str], code_fps: dict[str, str],
                 base: H.HistoryEntry | None, live: dict[str, str],
                 moved: dict[str, str] | None = None,
                 quarantined: dict[str, H.Quarantined] | None = None,
                 clock: dict[str, str] | None = None) -> dict[str, str]:
    """What `strata plan` can tell without reading data: code, presence, live views,
    sources the module now points at another table or file (`moved`: source -> what
    it reads now), quarantined snapshots (read from the history, not the data), and
    the run's clock (`clock`: `run_date()` -> the value a run now would bind)."""
    out = {}
    moved = moved or {}
    ticked = clock_changes(module, models, clock, base) if clock and base else {}
    damaged = quarantined_models(models, base, live, quarantined or {})
    for name in models:
        hit = sorted(module.sources_upstream(name) & set(moved))
        if base is None or name not in base.snapshots:
            out[name] = "not yet built"
        elif base.code_fingerprints.get(name) != code_fps[name]:
            out[name] = "code changed"
        elif hit:
            out[name] = f"source `{hit[0]}` now reads `{moved[hit[0]]}`"
        elif name in ticked:
            out[name] = ticked[name]
        elif live.get(name) != base.snapshots[name]:
            out[name] = "live view differs from the last run"
        elif name in damaged:
            out[name] = damaged[name]
        else:
            out[name] = "up to date (code)"
    return out


def vanished_views(wh: WarehouseHandle, live: dict[str, str], keep) -> dict[str, str]:
    """model -> snapshot for each live view of a model not in `keep` (names compared
    as DuckDB compares them, ignoring case) that is Strata's own: it reads one
    snapshot and the registry records that snapshot as this model's. A view or table
    of the user's named `v_x` never qualifies (it reads no snapshot, or another's)."""
    kept = {name.lower() for name in keep}
    gone = {m: s for m, s in live.items() if m.lower() not in kept}
    if not gone:
        return {}
    records = H.records(wh, gone.values())
    return {m: s for m, s in sorted(gone.items())
            if s in records and records[s].model == m}


def drop_views(wh: WarehouseHandle, branch: str, models) -> None:
    """Drop the live views of `models` on `branch`, inside the caller's publication
    transaction (where DDL is transactional a crash before the commit keeps them; on Spark
    `recover` finishes the drop).
    The snapshots stay; gc collects them once nothing keeps them."""
    for model in models:
        wh.adapter.drop(view_of(wh, branch, model), "view")
        crash_point(f"after_drop_view:{model}")


def drift_plan(module: Module, models: list[str], base: H.HistoryEntry | None
               ) -> dict[str, dict]:
    """model -> what a run checks for its drift (issue 17) and what the last run found,
    for the merging incremental models: `plan` reads no data, so it says what the
    next merge will compare, and the last run's verdict from its history entry."""
    out = {}
    for name in models:
        inc = module.plan(name).incremental
        if inc is None or inc.strategy not in ("append", "upsert"):
            continue
        checks = ("not checked (on_drift: ignore)" if inc.on_drift == "ignore" else
                  f"a merge compares the rows at or below the watermark{' less the lookback' if inc.lookback is not None else ''} "
                  f"with the previous snapshot (on_drift: {inc.on_drift})")
        last = (base.details.get(name) or {}).get("drift") if base else None
        found = (f"; the last run ({base.id}) found drift: {last['why']} ({last['action']})"
                 if last else "")
        out[name] = {"on_drift": inc.on_drift, "last": last, "text": checks + found}
    return out


def drift_summary(entry: H.HistoryEntry) -> str:
    """`model (action)` for each model whose merge found drift in a run's entry."""
    found = [f"{m} ({d['drift']['action']})" for m, d in sorted(entry.details.items())
             if isinstance(d, dict) and isinstance(d.get("drift"), dict)]
    return ", ".join(found)
