"""Reading rows back out of a warehouse (`strata show`, `strata sql`): a model's live
view found by the model's name, as publication names it (branches.view_of: the
branch's schema, `v_` + the model, encoded where the engine keeps only some names, as
on Spark), so nobody needs to know the view's physical name; or one read-only query.

Both read at most `limit` rows (one more is asked for, to say whether there were
more), and every failure is a coded diagnostic: E195 (no live view of that model),
E196 (SQL that cannot be read), E197 (not one query that only reads), E198 (the engine
refused the query)."""

from __future__ import annotations

from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from strata.diagnostics import StrataError, did_you_mean, fail
from strata.engine.adapters.base import select_all
from strata.engine.branches import ensure_branch, live_snapshots, view_of
from strata.engine.warehouse import Warehouse

DEFAULT_LIMIT = 100


@dataclass(frozen=True)
class Rows:
    """What a read returned: the columns (name, the engine's type), at most `limit`
    rows, and whether the relation held more."""

    source: str  # what was read: `main.v_orders` (as the engine names it) or "query"
    columns: list[tuple[str, str]]
    rows: list[tuple]
    truncated: bool

    def to_json(self) -> dict:
        names = [name for name, _ in self.columns]
        return {"source": self.source,
                "columns": [{"name": n, "type": t} for n, t in self.columns],
                "rows": [dict(zip(names, row, strict=False)) for row in self.rows],
                "truncated": self.truncated}


def model_rows(wh: Warehouse, model: str, branch: str, limit: int = DEFAULT_LIMIT) -> Rows:
    """The rows of `model`'s live view on `branch` (E074 for an unknown branch, E195
    when the model has no live view there)."""
    ensure_branch(wh, branch)
    live = live_snapshots(wh, branch)
    if model not in live:
        raise _not_live(wh, model, branch, sorted(live))
    view = view_of(wh, branch, model)
    columns = _engine_says(wh, lambda: wh.adapter.columns(view))
    rows = _engine_says(wh, lambda: wh.adapter.rows(select_all(view).limit(limit + 1)))
    return Rows(f"{view.schema}.{view.name}", columns, rows[:limit], len(rows) > limit)


def query_rows(wh: Warehouse, text: str, limit: int = DEFAULT_LIMIT) -> Rows:
    """The rows of one read-only query, written in the warehouse's SQL dialect."""
    query = read_query(text, wh.adapter.dialect.sqlglot)
    columns = _engine_says(wh, lambda: wh.adapter.query_columns(query))
    limited = exp.select(exp.Star()).from_(query.subquery("q")).limit(limit + 1)
    rows = _engine_says(wh, lambda: wh.adapter.rows(limited))
    return Rows("query", columns, rows[:limit], len(rows) > limit)


def read_query(text: str, dialect: str) -> exp.Query:
    """`text` as one query that only reads (SELECT, WITH, a set operation): anything
    else is refused before the engine sees it, so `strata sql` never writes."""
    try:
        statements = [s for s in sqlglot.parse(text, read=dialect) if s is not None]
    except SqlglotError as err:
        raise fail("E196", f"cannot read the SQL: {_first_line(err)}", None,
                   f"write one query in the warehouse's SQL ({dialect}), e.g. "
                   "\"SELECT * FROM main.v_orders\"") from None
    if len(statements) != 1:
        raise fail("E197", f"`strata sql` runs one query; got {len(statements)} statements",
                   None, "run each query with its own `strata sql`")
    query = statements[0]
    if not isinstance(query, exp.Query) or query.args.get("into") is not None or any(
            isinstance(node, exp.DML | exp.DDL) for node in query.walk()):
        raise fail("E197", f"`strata sql` only reads: `{_opening(query)}` is no query "
                   "that only reads", None,
                   "write a SELECT (or WITH ... SELECT); models change only through "
                   "`strata run`")
    return query


def _opening(statement: exp.Expression) -> str:
    """The first words of a statement, as the engine would render them."""
    words = statement.sql().split()
    return " ".join(words[:2])[:60]


def _not_live(wh: Warehouse, model: str, branch: str, live: list[str]) -> StrataError:
    if not live:
        hint = f"nothing is published on `{branch}` yet: strata run MODULE -o {wh.label}"
    else:
        hint = did_you_mean(model, live) or f"models with a live view: {', '.join(live[:20])}"
    return fail("E195", f"model `{model}` has no live view on branch `{branch}`", None, hint)


def _engine_says(wh: Warehouse, read):
    """`read()`, with the engine's refusal as E198 (its own words, first line)."""
    try:
        return read()
    except wh.adapter.engine_errors() as err:
        raise fail("E198", f"the warehouse refused the query: {_first_line(err)}", None,
                   "`strata sql` takes the engine's own SQL; views are "
                   "BRANCH.v_MODEL (encoded on Spark: `strata show MODEL` finds them)") from None


def _first_line(err: BaseException) -> str:
    lines = str(err).strip().splitlines()
    return (lines[0] if lines else type(err).__name__)[:500]

