"""Branches: a schema of live views each (`main` for the default branch). A branch
is zero-copy: creating one copies views, never rows."""

from __future__ import annotations

import re

from sqlglot import exp

from strata.clock import now_text
from strata.diagnostics import Diagnostic, StrataError, fail
from strata.engine import bookkeeping as B
from strata.engine import history as H
from strata.engine.adapters.base import INTERNAL, Relation
from strata.engine.environment import crash_point
from strata.engine.fingerprints import sha
from strata.engine.handle import MAIN_BRANCH, WarehouseHandle, q

VIEW_PREFIX = "v_"
_BRANCH_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def branch_exists(wh: WarehouseHandle, name: str) -> bool:
    if name == MAIN_BRANCH:
        return True
    if not wh.has_internal():
        return False
    query = exp.select(exp.Count(this=exp.Star())).from_(B.BRANCHES.relation.table()).where(
        exp.EQ(this=B.col("name"), expression=exp.Literal.string(name)))
    return bool(wh.rows(query)[0][0])


def ensure_branch(wh: WarehouseHandle, name: str) -> None:
    if not branch_exists(wh, name):
        raise fail("E074", f"unknown branch `{name}`", None,
                   f"create it first: strata branch create {name} --from main -o {wh.label}"
                   if _BRANCH_NAME.match(name) else
                   "a branch name is letters, digits and _ (starting with a letter or _)")


def branch_names(wh: WarehouseHandle) -> list[str]:
    """Every branch but main, by name."""
    if not wh.has_internal():
        return []
    query = exp.select(B.col("name")).from_(B.BRANCHES.relation.table()).order_by(B.col("name"))
    return [r[0] for r in wh.rows(query)]


def list_branches(wh: WarehouseHandle) -> list[dict]:
    out = [{"name": MAIN_BRANCH, "from_branch": None, "created_at": None,
            "views": len(live_snapshots(wh, MAIN_BRANCH))}]
    if not wh.has_internal():
        return out
    query = exp.select(B.col("name"), B.col("created_at"), B.col("from_branch")).from_(
        B.BRANCHES.relation.table()).order_by(B.col("name"))
    for name, created, origin in wh.rows(query):
        out.append({"name": name, "from_branch": origin, "created_at": str(created),
                    "views": len(live_snapshots(wh, name))})
    return out


def schema_of(wh: WarehouseHandle, branch: str) -> str:
    """The schema holding the branch's views (the branch's name, encoded where the
    engine keeps only some names: adapter.physical_name)."""
    return wh.adapter.physical_name(branch)


def view_of(wh: WarehouseHandle, branch: str, model: str) -> Relation:
    """The live view of `model` on `branch`."""
    return Relation(schema_of(wh, branch), wh.adapter.physical_name(VIEW_PREFIX + model))


def live_snapshots(wh: WarehouseHandle, branch: str) -> dict[str, str]:
    """model -> the snapshot its live view reads, read from the views themselves."""
    ad = wh.adapter
    prefix = ad.physical_name(VIEW_PREFIX)
    out = {}
    for view, target in ad.view_targets(schema_of(wh, branch), prefix).items():
        name = ad.logical_name(view)
        if name.startswith(VIEW_PREFIX):
            out[name[len(VIEW_PREFIX):]] = target
    return out


def check_view_names(wh: WarehouseHandle, branch: str, models) -> None:
    """E094 when the name of a model's live view (`branch.v_model`) holds a table, or
    a view strata did not write (one that reads no snapshot): CREATE OR REPLACE VIEW
    fails on a table (DuckDB's E000 "Existing object ... is of type Table") and would
    silently replace someone's view. Asked before anything is built or repointed."""
    ad = wh.adapter
    # DuckDB folds case; Spark's names are lower case already (physical_name)
    wanted = {ad.physical_name(VIEW_PREFIX + m).lower(): m for m in models}
    if not wanted:
        return
    schema = schema_of(wh, branch)
    found = {n: kind for n, kind in ad.relations(schema).items() if n.lower() in wanted}
    if not found:
        return
    ours = ad.view_targets(schema) if "view" in found.values() else {}
    foreign = [(name, kind) for name, kind in found.items()
               if kind == "table" or name not in ours]
    if foreign:
        raise StrataError([Diagnostic(
            "E094", f"`{branch}.{name}` is a {kind} strata did not create, in the place of "
            f"the live view of model `{wanted[name.lower()]}`", None,
            f"nothing was published; rename or drop it (ALTER {kind.upper()} "
            f"{q(branch, name)} RENAME TO {name}_own), or publish on another branch "
            "(--branch)") for name, kind in sorted(foreign)])


def switch_views(wh: WarehouseHandle, branch: str, snapshots: dict[str, str],
                 current: dict[str, str] | None = None) -> None:
    """Point each model's live view at its snapshot (inside the caller's transaction).
    Views that `current` (live_snapshots) shows already there are left alone."""
    check_view_names(wh, branch, snapshots)
    wh.adapter.create_schema(schema_of(wh, branch))
    for model, snap in snapshots.items():
        if current is not None and current.get(model) == snap:
            continue
        wh.adapter.point_view(view_of(wh, branch, model), Relation(INTERNAL, snap))
        crash_point(f"after_view:{model}")


def create_branch(wh: WarehouseHandle, name: str, source: str) -> H.HistoryEntry:
    if not _BRANCH_NAME.match(name):
        raise fail("E084", f"invalid branch name `{name}`", None,
                   "use letters, digits and _ (starting with a letter or _)")
    if name == INTERNAL or name.startswith("strata"):
        raise fail("E084", f"`{name}` is reserved", None, "pick another branch name")
    if branch_exists(wh, name):
        raise fail("E081", f"branch `{name}` already exists")
    ensure_branch(wh, source)
    if wh.adapter.schema_exists(schema_of(wh, name)):
        raise fail("E081", f"a schema named `{name}` already exists in the warehouse", None,
                   "pick another branch name")
    views = live_snapshots(wh, source)
    base = H.last_with_snapshots(wh, source)
    with wh.transaction():
        wh.run(B.insert(B.BRANCHES, [{
            "name": name, "schema_name": schema_of(wh, name), "created_at": now_text(),
            "from_branch": source, "from_seq": base.seq if base else None}]))
        entry = H.HistoryEntry(
            id=sha("branch", name, source, now_text())[:12], kind="branch", branch=name, started_at=now_text(),
            models=sorted(views), snapshots=views,
            source_fingerprints=base.source_fingerprints if base else {},
            code_fingerprints=base.code_fingerprints if base else {},
            overrides=base.overrides if base else {},
            details={"from_branch": source})
        # the entry before the views (the commit point where there is no transaction)
        H.append(wh, entry)
        switch_views(wh, name, views)
    return entry
