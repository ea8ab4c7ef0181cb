"""Branches: a schema of live views each (`main` for the default branch). A branch
is zero-copy: creating one copies views, never rows."""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp

from strata.diagnostics import Diagnostic, StrataError, fail
from strata.engine import history as H
from strata.engine.clock import now_text
from strata.engine.fingerprints import sha
from strata.engine.warehouse import (
    INTERNAL,
    MAIN_BRANCH,
    TEXT_LIST,
    Warehouse,
    crash_point,
    internal,
    q,
    text_list,
)

VIEW_PREFIX = "v_"
_BRANCH_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def branch_exists(wh: Warehouse, name: str) -> bool:
    if name == MAIN_BRANCH:
        return True
    if not wh.has_internal():
        return False
    row = wh.execute(f"SELECT count(*) FROM {internal('branches')} WHERE name = ?",
                     [name]).fetchone()
    return bool(row[0])


def ensure_branch(wh: Warehouse, name: str) -> None:
    if not branch_exists(wh, name):
        raise fail("E074", f"unknown branch `{name}`", None,
                   f"create it first: strata branch create {name} --from main -o {wh.path}"
                   if _BRANCH_NAME.match(name) else
                   "a branch name is letters, digits and _ (starting with a letter or _)")


def list_branches(wh: Warehouse) -> list[dict]:
    out = [{"name": MAIN_BRANCH, "from_branch": None, "created_at": None,
            "views": len(live_snapshots(wh, MAIN_BRANCH))}]
    if not wh.has_internal():
        return out
    for name, created, origin in wh.execute(
            f"SELECT name, created_at, from_branch FROM {internal('branches')} ORDER BY name"
    ).fetchall():
        out.append({"name": name, "from_branch": origin, "created_at": str(created),
                    "views": len(live_snapshots(wh, name))})
    return out


def live_snapshots(wh: Warehouse, branch: str) -> dict[str, str]:
    """model -> the snapshot its live view reads, read from the views themselves."""
    rows = wh.execute("SELECT view_name, sql FROM duckdb_views() WHERE schema_name = ? AND "
                      "NOT internal AND starts_with(view_name, ?)",
                      [branch, VIEW_PREFIX]).fetchall()
    out = {}
    for view, sql in rows:
        target = _snapshot_of(sql)
        if target:
            out[view[len(VIEW_PREFIX):]] = target
    return out


# The statement switch_views writes, as DuckDB stores it: read without a SQL parser
# (parsing every view costs ~1 ms each, a second on a 1,000-model branch).
_OWN_VIEW = re.compile(r'^CREATE VIEW .+ AS SELECT \* FROM ' + INTERNAL +
                       r'\.(?:"((?:[^"]|"")+)"|([A-Za-z_][A-Za-z0-9_]*));?\s*$', re.DOTALL)


def _snapshot_of(sql: str) -> str | None:
    own = _OWN_VIEW.match(sql)
    if own:
        return own.group(1).replace('""', '"') if own.group(1) is not None else own.group(2)
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except sqlglot.errors.ParseError:
        return None
    query = tree.expression if isinstance(tree, exp.Create) else tree
    tables = list(query.find_all(exp.Table)) if query is not None else []
    if len(tables) == 1 and tables[0].db == INTERNAL:
        return tables[0].name
    return None


def check_view_names(wh: Warehouse, branch: str, models) -> None:
    """E094 when the name of a model's live view (`branch.v_model`) holds a table, or
    a view strata did not write (one that reads no snapshot): CREATE OR REPLACE VIEW
    fails on a table (DuckDB's E000 "Existing object ... is of type Table") and would
    silently replace someone's view. Asked before anything is built or repointed."""
    wanted = {(VIEW_PREFIX + m).lower(): m for m in models}  # DuckDB folds case
    if not wanted:
        return
    found = [(name, "table", None) for (name,) in wh.execute(
        "SELECT table_name FROM duckdb_tables() WHERE schema_name = ? "
        f"AND lower(table_name) IN (SELECT {TEXT_LIST})", [branch, text_list(wanted)]
    ).fetchall()]
    found += [(name, "view", sql) for name, sql in wh.execute(
        "SELECT view_name, sql FROM duckdb_views() WHERE schema_name = ? AND NOT internal "
        f"AND lower(view_name) IN (SELECT {TEXT_LIST})", [branch, text_list(wanted)]
    ).fetchall()]
    foreign = [(name, kind) for name, kind, sql in found
               if kind == "table" or _snapshot_of(sql) is None]
    if foreign:
        raise StrataError([Diagnostic(
            "E094", f"`{branch}.{name}` is a {kind} strata did not create, in the place of "
            f"the live view of model `{wanted[name.lower()]}`", None,
            f"nothing was published; rename or drop it (ALTER {kind.upper()} "
            f"{q(branch, name)} RENAME TO {name}_own), or publish on another branch "
            "(--branch)") for name, kind in sorted(foreign)])


def switch_views(wh: Warehouse, branch: str, snapshots: dict[str, str],
                 current: dict[str, str] | None = None) -> None:
    """Point each model's live view at its snapshot (inside the caller's transaction).
    Views that `current` (live_snapshots) shows already there are left alone."""
    check_view_names(wh, branch, snapshots)
    wh.execute(f"CREATE SCHEMA IF NOT EXISTS {q(branch)}")
    for model, snap in snapshots.items():
        if current is not None and current.get(model) == snap:
            continue
        wh.execute(f"CREATE OR REPLACE VIEW {q(branch, VIEW_PREFIX + model)} AS "
                   f"SELECT * FROM {internal(snap)}")
        crash_point(f"after_view:{model}")


def create_branch(wh: Warehouse, name: str, source: str) -> H.HistoryEntry:
    if not _BRANCH_NAME.match(name):
        raise fail("E084", f"invalid branch name `{name}`", None,
                   "use letters, digits and _ (starting with a letter or _)")
    if name == INTERNAL or name.startswith("strata"):
        raise fail("E084", f"`{name}` is reserved", None, "pick another branch name")
    if branch_exists(wh, name):
        raise fail("E081", f"branch `{name}` already exists")
    ensure_branch(wh, source)
    if _schema_exists(wh, name):
        raise fail("E081", f"a schema named `{name}` already exists in the warehouse", None,
                   "pick another branch name")
    views = live_snapshots(wh, source)
    base = H.last_with_snapshots(wh, source)
    with wh.transaction():
        wh.execute(f"INSERT INTO {internal('branches')} VALUES (?, ?, ?, ?, ?)",
                   [name, name, now_text(), source, base.seq if base else None])
        switch_views(wh, name, views)
        entry = H.HistoryEntry(
            id=sha("branch", name, source, now_text())[:12], kind="branch", branch=name, started_at=now_text(),
            models=sorted(views), snapshots=views,
            source_fingerprints=base.source_fingerprints if base else {},
            code_fingerprints=base.code_fingerprints if base else {},
            overrides=base.overrides if base else {},
            details={"from_branch": source})
        H.append(wh, entry)
    return entry


def _schema_exists(wh: Warehouse, name: str) -> bool:
    row = wh.execute("SELECT count(*) FROM duckdb_schemas() WHERE schema_name = ?",
                     [name]).fetchone()
    return bool(row[0])
