"""Content fingerprints (SPEC §3.2): code, source data, snapshot content, run ids.

Hashes are SHA-256 (never CRC32). Row content is an order-independent aggregate of
a per-row hash (count, sum, xor) computed by the engine, so no row is pulled into
Python; the three parts add up, which lets layered snapshots derive their hash
from their layers.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from sqlglot import exp

from dialects import duckdb as duck
from strata.plan import Plan, RelationRef
from strata.semantics.module import Module
from strata.sqlgen.build import model_query
from strata.sqlgen.clock import clock_column
from strata.sqlgen.names import table


def sha(*parts) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(json.dumps(part, sort_keys=True, default=str).encode())
        h.update(b"\x00")
    return h.hexdigest()


@dataclass(frozen=True)
class RowHash:
    """count, sum and xor of per-row hashes; `digest` adds the schema."""

    count: int
    total: int
    xor: int

    def plus(self, other: RowHash) -> RowHash:
        return RowHash(self.count + other.count, self.total + other.total, self.xor ^ other.xor)

    def minus(self, other: RowHash) -> RowHash:
        return RowHash(self.count - other.count, self.total - other.total, self.xor ^ other.xor)

    def digest(self, schema: list[tuple[str, str]]) -> str:
        return sha("rows", schema, self.count, str(self.total), str(self.xor))[:32]


EMPTY = RowHash(0, 0, 0)


def row_hash(con, relation_sql: str, columns: list[str], where: str | None = None) -> RowHash:
    """The row-hash aggregate of `relation_sql` (a FROM item), optionally filtered."""
    query = f"SELECT {duck.row_hash_aggregate(columns)} FROM {relation_sql}"
    if where:
        query += f" WHERE {where}"
    count, total, xor = con.execute(query).fetchone()
    return RowHash(int(count), int(total), int(xor))


def row_hashes(con, relations: list[tuple[str, list[str]]]) -> list[RowHash]:
    """The row-hash aggregates of many (relation, columns) in one query: the rows'
    hashes of every relation in one UNION ALL, aggregated by one GROUP BY. On small
    tables the statement, not the rows, is the cost; one aggregate over the union is
    ~2x cheaper than a union of per-table aggregates (DuckDB plans each of those as
    its own pipeline). A relation without rows has no group: EMPTY. One relation
    alone (a lane's commit of one large table, most of them) is one plain aggregate:
    no GROUP BY to build a hash table for (a fifth less time on 1e5-row tables)."""
    if not relations:
        return []
    if len(relations) == 1:
        relation, columns = relations[0]
        return [row_hash(con, relation, columns)]
    rows = " UNION ALL ".join(
        f"SELECT {i} AS __i, {duck.row_hash_expr(columns)} AS __h FROM {relation}"
        for i, (relation, columns) in enumerate(relations))
    query = f"SELECT __i, {duck.row_hash_parts('__h')} FROM ({rows}) GROUP BY __i"
    found = {r[0]: RowHash(int(r[1]), int(r[2]), int(r[3]))
             for r in con.execute(query).fetchall()}
    return [found.get(i, EMPTY) for i in range(len(relations))]


def describe(con, relation_sql: str) -> list[tuple[str, str]]:
    """(column, engine type) of a relation, without reading its rows."""
    rows = con.execute(f"DESCRIBE SELECT * FROM {relation_sql}").fetchall()
    return [(r[0], r[1]) for r in rows]


# ---------------------------------------------------------------- code
def _canonical_relation(ref: RelationRef, alias: str | None) -> exp.Expression:
    if ref.kind == "clock":  # the placeholder stays: the code does not move with time
        return clock_column(ref.name)
    return table("__" + ref.kind, ref.name, alias=alias)


def canonical_sql(plan: Plan) -> str:
    """A model's SQL with relations by logical name (`__source.x`, `__model.y`)."""
    # a fresh tree, rendered once: the generator may work on it in place
    return model_query(plan, _canonical_relation).sql(dialect="duckdb", copy=False)


def model_code(plan: Plan, sql: str | None = None) -> str:
    """The normalized compiled tree of one model (relations by logical name)."""
    tree = sql if sql is not None else canonical_sql(plan)
    inc = plan.incremental
    extra = {
        "incremental": _incremental_code(inc) if inc else None,
        "pins": [p.describe() for p in plan.pins],
    }
    return tree + "\n" + json.dumps(extra, sort_keys=True, default=str)


# issue 17's properties at their defaults: left out of the code, so a warehouse built
# before they existed keeps its code fingerprints (no model is recomputed in full for
# an upgrade); delete_when is a tree over column ids, its text (delete_text) stands in.
# on_drift is part of the code only as written: its default changed (recompute, then
# warn since issue 33), and a model without the line must keep its fingerprint, since
# a recomputed append log would lose the rows its source no longer holds
_UNWRITTEN = {"lookback": None, "delete_when": None, "delete_text": ""}


def _incremental_code(inc) -> dict:
    code = {k: v for k, v in inc.__dict__.items()
            if k not in _UNWRITTEN or (k != "delete_when" and v != _UNWRITTEN[k])}
    del code["on_drift_written"]
    if not inc.on_drift_written:
        del code["on_drift"]
    return code


def code_fingerprints(module: Module, names: list[str] | None = None,
                      canonical: dict[str, str] | None = None) -> dict[str, str]:
    """Transitive code fingerprints: a model's tree plus its sources' declarations plus
    its upstream models' fingerprints. `canonical`, when given, receives each model's
    canonical SQL (rendered once here; the run's replay recipe stores the same text)."""
    fps: dict[str, str] = {}
    wanted = module.upstream(names) if names is not None else set(module.order)
    for name in module.order:
        if name not in wanted:
            continue
        info = module.models[name]
        sources = {s: [(c, str(t)) for c, t in module.sources[s].columns]
                   for s in sorted(info.sources_read)}
        upstream = {m: fps[m] for m in sorted(info.models_read)}
        sql = canonical_sql(info.plan)
        if canonical is not None:
            canonical[name] = sql
        fps[name] = sha("model", name, model_code(info.plan, sql), sources, upstream)[:32]
    return fps


@lru_cache(maxsize=1)
def compiler_key() -> str:
    """A hash of everything besides the module that shapes a model's compiled SQL:
    strata's and the dialects' own source files and sqlglot's version."""
    import sqlglot

    # by this module's own file, not `import strata`: a folder named `strata` in the
    # working directory (a project's models) shadows the package under `python -m`
    h = hashlib.sha256(sqlglot.__version__.encode())
    for root in (Path(__file__).resolve().parents[1], Path(duck.__file__).resolve().parent):
        for path in sorted(root.rglob("*")):
            if path.suffix in (".py", ".lark"):
                h.update(str(path.relative_to(root.parent)).encode() + b"\x00")
                h.update(path.read_bytes())
    return h.hexdigest()


def module_key(module: Module) -> str:
    """Same key = same module text compiled by the same compiler = same code
    fingerprints and canonical SQL."""
    return sha("module", sorted(module.files.items()), compiler_key())[:32]


def reusable_code_fingerprints(entry, key: str, names: list[str],
                               canonical: dict[str, str]) -> dict[str, str] | None:
    """A previous run's code fingerprints and canonical SQL, when that run compiled the
    very same module text with the very same compiler (`module_key`): rendering every
    model again would give the same text (~1 ms a model). None when anything differs
    or a model is missing from that run."""
    if entry is None or entry.details.get("__code_key") != key:
        return None
    fps = entry.code_fingerprints
    code = entry.details.get("__replay", {}).get("code", {})
    if not all(m in fps and m in code for m in names):
        return None
    canonical.update({m: code[m] for m in names})
    return {m: fps[m] for m in names}


def run_id(branch: str, selection: list[str], code_fps: dict[str, str],
           source_fps: dict[str, str], previous: dict[str, str], extra=None) -> str:
    """Same data + same selection = same id."""
    return sha("run", branch, sorted(selection), code_fps, source_fps, previous, extra)[:12]
