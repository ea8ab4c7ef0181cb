"""`strata run | plan | history | replay | verify | rollback | branch`."""

from __future__ import annotations

import os
import sys

import click

from strata.cachedirs import default_dir
from strata.cli.compile_cmds import (
    at_option,
    chosen_models,
    json_option,
    load_checked,
    selection_options,
)
from strata.cli.main import cli, console, handled, print_json
from strata.cli.render import terminal_text
from strata.clock import run_clock
from strata.compiler import select_models
from strata.diagnostics import fail
from strata.engine import history as H
from strata.engine import ops
from strata.engine.branches import create_branch, ensure_branch, list_branches, live_snapshots
from strata.engine.fingerprints import code_fingerprints
from strata.engine.handle import MAIN_BRANCH
from strata.engine.pins.planned import declared_unique, planned_checks
from strata.engine.run import ModelResult, RunOptions, RunReport, run
from strata.engine.sources import moved_relations, parse_overrides
from strata.engine.staleness import drift_plan, drift_summary, plan_reasons, vanished_views
from strata.engine.warehouse import Warehouse
from strata.textsafe import escape_unprintable, shown_name


def _warehouse(help_text: str):
    return click.option("-o", "--warehouse", "warehouse", required=True, type=click.Path(),
                        metavar="WAREHOUSE", help=help_text)


_KINDS = "a DuckDB file, postgresql://USER@HOST[:PORT]/DB, spark:DIR or sc://HOST:PORT"
warehouse_option = _warehouse(f"The warehouse: {_KINDS}.")
new_warehouse_option = _warehouse(f"The warehouse: {_KINDS} (set up if new).")
workers_option = click.option(
    "--workers", type=click.IntRange(1, 64), default=4, show_default=True,
    help="Build lanes: models built side by side; 1 builds one at a time.")
branch_option = click.option("--branch", default=MAIN_BRANCH, show_default=True,
                             help="Branch whose live views to use.")

_STATUS_STYLE = {"rebuilt": "green", "reused": "cyan", "kept": "dim"}


def progress_printer(as_json: bool):
    if as_json or not maybe_terminal():  # quiet when piped, without importing rich
        return None
    out = console()
    if not out.is_terminal:
        return None
    from rich.markup import escape

    def show(result: ModelResult) -> None:
        style = _STATUS_STYLE.get(result.status, "white")
        extra = []
        if result.path:
            extra.append(result.path + (", compacted" if result.compacted else ""))
        if result.delta_rows is not None:
            extra.append(f"delta {result.delta_rows} rows")
        if result.drift:  # issue 17: the rows at or below the watermark moved
            extra.append(f"drift ({result.drift['action']}): {result.drift['why']}")
        if result.rows is not None:
            extra.append(f"{result.rows} rows")
        if result.skipped_checks:
            extra.append(f"{len(result.skipped_checks)} check(s) skipped")
        tail = f"  [dim]{escape(', '.join(extra))}[/]" if extra else ""
        # the name as the SQL header shows it (escaped, quoted if need be), and as
        # text: a name `[/]` is not markup
        out.print(f"  [{style}]{result.status:<8}[/] {escape(f'{shown_name(result.model):<32}')} "
                  f"{result.seconds:6.2f}s{tail}")

    return show


def maybe_terminal() -> bool:
    """Could rich see a terminal? A tty, or rich's own overrides (TTY_COMPATIBLE,
    FORCE_COLOR); when not, plain output needs no rich."""
    return (sys.stdout.isatty() or os.environ.get("TTY_COMPATIBLE", "") not in ("", "0")
            or bool(os.environ.get("FORCE_COLOR")))


class _Plain:
    """print() with rich's signature, for output that is not a terminal (rich's
    imports cost ~20 ms of a command that prints three plain lines)."""

    def print(self, text: str, markup: bool = False, highlight: bool = False) -> None:
        print(terminal_text(text))


def print_report(report: RunReport, as_json: bool) -> None:
    if as_json:
        print_json(report.to_json())
        return
    out = console() if maybe_terminal() else _Plain()
    if report.status == "up_to_date":
        out.print("everything up to date (nothing to do)", markup=False)
        return
    verb = {"published": "published", "staged": "staged (not published)"}[report.status]
    kind = report.entry.kind if report.entry else "run"
    out.print(f"{verb} {kind} {report.run_id} on {report.branch}: "
              f"{len(report.rebuilt)} rebuilt, {len(report.reused)} reused "
              f"({report.seconds:.2f}s)", markup=False)
    for model in report.removed:
        out.print(f"  removed: v_{model} (model no longer in the module)", markup=False,
                  highlight=False)
    for note in report.notes:  # e.g. a damaged snapshot found, quarantined, run again
        out.print(f"  note: {note}", markup=False, highlight=False)
    for result in report.results:
        for note in result.notes:
            if note.startswith(("computed in full", "first run")):
                continue
            if result.status == "rebuilt" or "reused" in note or note.startswith("warning"):
                out.print(f"  note: {result.model}: {note}", markup=False, highlight=False)


@cli.command(name="run")
@click.argument("module", type=click.Path())
@new_warehouse_option
@selection_options
@branch_option
@click.option("--override", "overrides", multiple=True, metavar="SOURCE=TABLE",
              help="Point a source at another table for this run (repeatable).")
@click.option("--only-stale", is_flag=True, help="Rebuild only what changed (code or data).")
@click.option("--stage-only", is_flag=True, help="Execute and check pins; publish nothing.")
@click.option("--full-refresh", is_flag=True,
              help="Recompute incremental models from scratch (all, or those in --models).")
@click.option("--reset-history", is_flag=True,
              help="With --full-refresh: let it start `merge_strategy: history` models over "
                   "(their past versions are in no source; refused without this flag).")
@workers_option
@at_option
@json_option
@handled
def run_cmd(module: str, warehouse: str, models: str | None, select: tuple[str, ...],
            exclude: tuple[str, ...], branch: str, overrides: tuple[str, ...], only_stale: bool, stage_only: bool, full_refresh: bool,
            reset_history: bool, workers: int, at: str | None, as_json: bool) -> None:
    """Materialize MODULE's models (and their upstream) into WAREHOUSE."""
    mod = load_checked(module)
    names = chosen_models(mod, models, select, exclude)
    opts = RunOptions(models=names, branch=branch, overrides=parse_overrides(overrides, mod),
                      only_stale=only_stale, stage_only=stage_only, full_refresh=full_refresh,
                      full_refresh_models=names if full_refresh and names else None,
                      reset_history=reset_history, module_path=module, code_cache=default_dir("code"), workers=workers,
                      clock=run_clock(at))
    report = run(mod, warehouse, opts, progress_printer(as_json))
    print_report(report, as_json)


@cli.command(name="plan")
@click.argument("module", type=click.Path())
@warehouse_option
@selection_options
@branch_option
@at_option
@json_option
@handled
def plan_cmd(module: str, warehouse: str, models: str | None, select: tuple[str, ...],
             exclude: tuple[str, ...], branch: str, at: str | None, as_json: bool) -> None:
    """Show which models a run would rebuild and why, without executing any."""
    mod = load_checked(module)
    names = chosen_models(mod, models, select, exclude)
    selection = select_models(mod, names)
    closure = [m for m in mod.order if m in mod.upstream(selection)]
    code_fps = code_fingerprints(mod, closure)
    clock = run_clock(at).fingerprints({n for m in closure for n in mod.plan(m).clock})
    wh = Warehouse.open(warehouse, read_only=True)
    try:
        ensure_branch(wh, branch)
        base = H.last_with_snapshots(wh, branch)
        read_then = (base.details.get("__replay") or {}).get("sources", {}) if base else {}
        live = live_snapshots(wh, branch)
        reasons = plan_reasons(mod, closure, code_fps, base, live,
                               moved_relations(mod, read_then), H.quarantined(wh), clock)
        # what a run of the whole module would drop (a --models run drops nothing)
        removed = {} if names else vanished_views(wh, live, mod.models)
    finally:
        wh.close()
    drift = drift_plan(mod, closure, base)
    note = ("data staleness (changed sources) is decided only by `run --only-stale` and "
            "`backfill`, which read the data; plan reads none")
    # what a rebuild checks (pins, join fan-out) and what it skips, and why
    checks = {m: planned_checks(mod.plan(m), declared_unique(
        {n: mod.plan(n) for n in closure})) for m in closure}
    if as_json:
        print_json({"branch": branch, "base_run": base.id if base else None,
                    "removed": [{"model": m, "view": f"v_{m}", "snapshot": s,
                                 "reason": "model no longer in the module"}
                                for m, s in removed.items()],
                    "models": [{"model": m, "reason": r,
                                "rebuild": not r.startswith("up to date"),
                                "checks": checks[m][0], "skipped_checks": checks[m][1],
                                **({"drift": drift[m]} if m in drift else {})}
                               for m, r in reasons.items()], "note": note, "clock": clock})
        return
    out = console()
    out.print(f"plan for branch {branch} (last run: {base.id if base else 'none'})",
              markup=False)
    for key, value in clock.items():  # what run_date()/run_timestamp() would read
        readers = [m for m in closure if key[:-2] in mod.plan(m).clock]
        out.print(f"  {key} = {value} (read by {', '.join(readers)}; --at sets it)",
                  markup=False)
    for model in removed:  # first: the one change no model line shows
        out.print(f"  - removed: v_{model} (model no longer in the module)", markup=False)
    for model, reason in reasons.items():
        mark = "=" if reason.startswith("up to date") else "+"
        out.print(f"  {mark} {model:<32} {reason}", markup=False)
        for skipped in checks[model][1]:
            out.print(f"      skip {skipped['check']}: {skipped['reason']}", markup=False)
        if model in drift:
            out.print(f"      drift: {drift[model]['text']}", markup=False)
    out.print(f"note: {note}", markup=False)


@cli.command(name="history")
@warehouse_option
@click.option("--branch", default=None, help="Only this branch.")
@click.option("--limit", default=None, type=int, help="At most this many entries.")
@json_option
@handled
def history_cmd(warehouse: str, branch: str | None, limit: int | None, as_json: bool) -> None:
    """List runs, newest first."""
    if limit is not None and limit < 1:  # -2 sliced off the two oldest; 0 said "no runs yet"
        raise fail("E084", f"--limit must be 1 or more, not {limit}", None,
                   "leave it out to list every entry")
    wh = Warehouse.open(warehouse, read_only=True, create=False)
    try:
        if branch is not None:
            ensure_branch(wh, branch)
        items = H.entries(wh, branch)
        if limit is not None:
            items = items[:limit]
        collected_by = _collected_by(wh, items)
    finally:
        wh.close()
    if as_json:
        print_json([{**_public(e), "status": e.status, "collected_by": collected_by[e.seq]}
                    for e in items])
        return
    out = console()
    if not items:
        out.print("no runs yet", markup=False)
    # columns as wide as their widest entry (`quarantine` is 10 wide, a branch any
    # width), at least as wide as before, so every row's columns line up
    id_w, kind_w, branch_w = (max([least, *(len(terminal_text(getattr(e, key)))
                                            for e in items)])
                              for key, least in (("id", 12), ("kind", 8), ("branch", 10)))
    for e in items:
        extra = ""
        if e.backfill_of:
            extra = f"  backfill_of={e.backfill_of} reason={e.reason!r}"
        if e.kind == "rollback":
            extra = f"  to {e.details.get('rolled_back_to')}"
        counts = f"rebuilt={len(e.rebuilt)} reused={len(e.reused)}"
        if e.kind == "gc":  # it built nothing: say what it took away
            counts = (f"collected={len(e.details.get('collected', []))} "
                      f"leftovers={len(e.details.get('leftovers', []))}")
        if e.kind == "quarantine":  # a verdict, not a build
            counts = f"quarantined={len(e.details.get('quarantined', {}))}"
        if e.kind == H.FAILED:  # published nothing: say what failed
            counts = f"FAILED {ops.failure_summary(e)}"
        if drifted := drift_summary(e):
            extra += f"  drift: {drifted}"
        if collected_by[e.seq]:
            extra += f"  collected by gc {collected_by[e.seq]}"
        row = "  ".join(_padded(v, w) for v, w in ((e.id, id_w), (e.kind, kind_w),
                                                    (e.branch, branch_w)))
        out.print(f"{row}  {e.started_at}  {counts}{extra}", markup=False, highlight=False)


def _padded(value: str, width: int) -> str:
    """`value` as the terminal shows it (escaped), padded to `width`."""
    shown = terminal_text(value)
    return shown + " " * (width - len(shown))


def _collected_by(wh: Warehouse, entries: list[H.HistoryEntry]) -> dict[int, str | None]:
    """entry seq -> the gc that collected one of its snapshots (so the run can no longer
    be rolled back to, replayed or verified: E076), or None."""
    names = {s for e in entries for s in e.snapshots.values()}
    gone = {r.name: r.collected_by for r in H.records(wh, names).values()
            if r.collected_at is not None}
    return {e.seq: next((gone[s] for s in e.snapshots.values() if s in gone), None)
            for e in entries}


def _public(entry: H.HistoryEntry) -> dict:
    data = entry.to_json()
    data["details"] = {k: v for k, v in data["details"].items() if not k.startswith("__")}
    return data


@cli.command(name="replay")
@click.argument("run_id")
@warehouse_option
@click.option("--execute", is_flag=True,
              help="Recompute the run in full into scratch tables and compare content.")
@json_option
@handled
def replay_cmd(run_id: str, warehouse: str, execute: bool, as_json: bool) -> None:
    """Show a run's whole history entry; --execute re-runs it to verify it."""
    wh = Warehouse.open(warehouse, read_only=not execute, create=False)
    try:
        entry = H.find(wh, run_id)
        collected_by = _collected_by(wh, [entry])[entry.seq]
        replay = ops.replay_execute(wh, run_id) if execute else None
    finally:
        wh.close()
    data = {**_public(entry), "status": entry.status, "collected_by": collected_by}
    if replay is not None:
        data["replay"] = {"source_drift": {k: {"recorded": a, "now": b}
                                           for k, (a, b) in replay.source_drift.items()},
                          "models": [r.__dict__ for r in replay.results],
                          "ok": all(r.ok or r.note.startswith("incremental")
                                    for r in replay.results)}
    if as_json:
        print_json(data)
    else:
        out = console()
        for key in ("id", "kind", "branch", "started_at", "backfill_of", "reason", "models",
                    "overrides", "source_fingerprints", "snapshots", "rebuilt", "reused"):
            out.print(f"{key}: {data[key]}", markup=False, highlight=False)
        for line in _failure_lines(entry):
            out.print(line, markup=False, highlight=False)
        if replay is not None:
            for name, (a, b) in replay.source_drift.items():
                out.print(f"source {name} changed since the run ({a} -> {b})", markup=False)
            for r in replay.results:
                word = "match" if r.ok else "DIFFERS"
                out.print(f"  {word:<8} {r.model}" + (f"  ({r.note})" if r.note else ""),
                          markup=False)
    if replay is not None and not data["replay"]["ok"]:
        sys.exit(1)


def _failure_lines(entry: H.HistoryEntry) -> list[str]:
    """What a failed run's entry says, for `replay`: what it attempted, each failed
    model's errors, what it had built (and did not publish), what it never built."""
    if entry.kind != H.FAILED:
        return []
    failure = entry.failure
    lines = [(f"status: failed ({failure.get('as', 'run')} {failure.get('run_id')}, "
              f"finished {entry.finished_at}); nothing was published"),
             f"attempted: {failure.get('attempted', [])}"]
    for model, said in (failure.get("failed") or {}).items():
        lines += [f"failed: {model}: error[{d['code']}] {d['message']}" for d in said]
    if not failure.get("failed"):
        lines += [f"error[{d['code']}] {d['message']}" for d in failure.get("errors", [])]
    lines.append(f"built, not published: {failure.get('built', [])}")
    lines += [f"not built: {model} (upstream `{up}` failed)"
              for model, up in (failure.get("not_built") or {}).items()]
    # one line each: a name or message may hold a line feed (the console keeps those)
    return [escape_unprintable(line) for line in lines]


@cli.command(name="verify")
@click.argument("run_id")
@warehouse_option
@json_option
@handled
def verify_cmd(run_id: str, warehouse: str, as_json: bool) -> None:
    """Recompute each snapshot's content hash of RUN_ID and compare with the record."""
    # writable when it may be: a damaged snapshot is quarantined (a history entry) so no
    # run reuses it; a file this user may not write is verified read-only all the same
    wh = Warehouse.open_to_record(warehouse)
    try:
        entry = H.find(wh, run_id)
        results = ops.verify(wh, run_id)
    finally:
        wh.close()
    skipped = (f"`{entry.id}` is a failed run ({ops.failure_summary(entry)}): it published "
               "no snapshots, nothing to verify") if entry.kind == H.FAILED else None
    if as_json:
        print_json({"run_id": run_id, "ok": True, "snapshots": [r.__dict__ for r in results],
                    **({"skipped": skipped} if skipped else {})})
    elif skipped:
        console().print(f"skipped: {skipped}", markup=False)
    else:
        for r in results:
            console().print(f"  ok  {r.model:<32} {r.snapshot} ({r.rows} rows)", markup=False)
        console().print(f"verified {len(results)} snapshots of run {run_id}", markup=False)


@cli.command(name="rollback")
@click.argument("run_id")
@warehouse_option
@click.option("--branch", default=None, help="Branch to repoint (default: the run's).")
@json_option
@handled
def rollback_cmd(run_id: str, warehouse: str, branch: str | None, as_json: bool) -> None:
    """Repoint the branch's live views to RUN_ID's snapshots (drops nothing)."""
    wh = Warehouse.open(warehouse, create=False)
    try:
        entry = ops.rollback(wh, run_id, branch)
    finally:
        wh.close()
    if as_json:
        print_json(_public(entry))
    else:
        console().print(f"rolled back {entry.branch} to run "
                        f"{entry.details.get('rolled_back_to')}: {len(entry.snapshots)} views "
                        f"repointed (history entry {entry.id})", markup=False)


@cli.group(name="branch")
def branch_group() -> None:
    """Zero-copy branches: a schema of live views each."""


@branch_group.command(name="create")
@click.argument("name")
@click.option("--from", "source", default=MAIN_BRANCH, show_default=True,
              help="Branch to copy the views of.")
@warehouse_option
@json_option
@handled
def branch_create(name: str, source: str, warehouse: str, as_json: bool) -> None:
    """Create branch NAME from another branch's live views (no data is copied)."""
    wh = Warehouse.open(warehouse, create=False)
    try:
        entry = create_branch(wh, name, source)
    finally:
        wh.close()
    if as_json:
        print_json({"branch": name, "from": source, "views": entry.snapshots})
    else:
        console().print(f"created branch {name} from {source} ({len(entry.snapshots)} views)",
                        markup=False)


@branch_group.command(name="list")
@warehouse_option
@json_option
@handled
def branch_list(warehouse: str, as_json: bool) -> None:
    """List branches."""
    wh = Warehouse.open(warehouse, read_only=True, create=False)
    try:
        items = list_branches(wh)
    finally:
        wh.close()
    if as_json:
        print_json(items)
    else:
        for b in items:
            origin = f" (from {b['from_branch']})" if b["from_branch"] else ""
            console().print(f"{b['name']}{origin}: {b['views']} views", markup=False)
