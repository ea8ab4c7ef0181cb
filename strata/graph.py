"""The model graph (`strata graph`): sources and models, what each reads, and, with a
warehouse, each model's state (up to date, stale and why, never built, failed: its
last attempt failed after its last successful build), rows and last runs.

`build_graph` returns data (`Graph`); `mermaid` and `dot` render it as text, and
`strata.graph_html.page` as one self-contained HTML page. The same data feeds all
three, so what the page shows is what the text says.

Names may hold any character but a backtick (a newline, `"`, `<`, ESC): every
renderer writes them in its own escaped form, never raw.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from strata.compiler import compile_statements, format_statements, select_models
from strata.engine.handle import MAIN_BRANCH
from strata.lineage import edges as column_edges
from strata.lineage import model_lineage
from strata.semantics import metadata
from strata.semantics.module import Module
from strata.textsafe import escape_unprintable, shown_name

SQL_DIALECT = "duckdb"  # the SQL a panel shows: the engine the warehouse runs on
HISTORY_SHOWN = 10  # runs listed per model, newest first


@dataclass
class Node:
    """A source or a model, with what a person asks of it in the graph."""

    name: str
    kind: str  # "source" | "model"
    columns: list[tuple[str, str]]  # (name, type)
    sql: str = ""
    pins: list[str] = field(default_factory=list)
    lineage: list[dict] = field(default_factory=list)  # per column: sources, step
    state: str | None = None  # up to date | stale | never built | failed (None: no warehouse)
    reason: str | None = None  # why it is stale, or what failed and when
    # state `failed`: {"entry", "run_id", "at", "errors": [{"code", "message"}]}
    failure: dict | None = None
    rows: int | None = None
    last_run: str | None = None
    history: list[dict] = field(default_factory=list)
    # description, owner, tags (semantics/metadata.py), and a description per column
    meta: dict = field(default_factory=lambda: {"description": None, "owner": None,
                                                "tags": []})
    column_descriptions: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"name": self.name, "kind": self.kind, **self.meta,
                "columns": [list(c) for c in self.columns],
                "column_descriptions": self.column_descriptions, "sql": self.sql,
                "pins": self.pins, "lineage": self.lineage, "state": self.state,
                "reason": self.reason, "rows": self.rows, "last_run": self.last_run,
                "history": self.history, "failure": self.failure}


@dataclass
class Graph:
    nodes: list[Node]  # sources first, then models upstream first
    edges: list[tuple[str, str]]  # (read relation, reading model)
    warehouse: str | None = None
    branch: str | None = None

    def to_json(self) -> dict:
        return {"nodes": [n.to_json() for n in self.nodes],
                "edges": [list(e) for e in self.edges],
                "warehouse": self.warehouse, "branch": self.branch}


def build_graph(module: Module, warehouse: str | None = None,
                branch: str = MAIN_BRANCH, models: list[str] | None = None) -> Graph:
    """The module's graph; with `warehouse` (opened read-only), each model's state;
    with `models`, only those models and the sources they read (edges between them)."""
    nodes = [Node(s.name, "source", [(c, str(t)) for c, t in s.columns])
             for s in module.sources.values()]
    sql = _sql_by_model(module)
    reads = _column_reads(module)
    for name in module.order:
        plan = module.plan(name)
        nodes.append(Node(name, "model", [(c.name, str(c.type)) for c in plan.output],
                          sql=sql.get(name, ""), pins=[p.describe() for p in plan.pins],
                          lineage=_lineage(module, name, reads)))
    for node in nodes:
        node.meta = metadata.to_json(metadata.of_relation(module, node.name))
        node.column_descriptions = {c: m.description for c, m in
                                    metadata.columns_of(module, node.name).items()
                                    if m.description}
    found: list[tuple[str, str]] = []
    for name in module.order:
        info = module.models[name]
        for rel in [*info.sources_read, *info.models_read]:
            if (rel, name) not in found:
                found.append((rel, name))
    graph = Graph(nodes, found)
    if models is not None:
        graph = _only(graph, module, models)
    if warehouse is not None:
        _add_state(module, graph, warehouse, branch)
    return graph


def _only(graph: Graph, module: Module, models: list[str]) -> Graph:
    """The part of the graph a selection draws: its models, the sources they read,
    and the edges between those (an upstream model left out is not drawn)."""
    kept = {"model": set(select_models(module, models))}
    kept["source"] = {s for m in kept["model"] for s in module.models[m].sources_read}
    drawn = kept["model"] | kept["source"]
    return Graph([n for n in graph.nodes if n.name in kept[n.kind]],
                 [(a, b) for a, b in graph.edges if a in drawn and b in kept["model"]])


def _sql_by_model(module: Module) -> dict[str, str]:
    out: dict[str, list] = {}
    for statement in compile_statements(module, SQL_DIALECT, keep_trees=False):
        out.setdefault(statement.model, []).append(statement)
    return {m: format_statements(s).rstrip("\n") for m, s in out.items()}


def _column_reads(module: Module) -> dict[tuple[str, str], list[str]]:
    """(model, column) -> the `relation.column`s it reads directly."""
    out: dict[tuple[str, str], list[str]] = {}
    for rel, col, model, column in column_edges(module):
        out.setdefault((model, column), []).append(f"{rel}.{col}")
    return out


def _lineage(module: Module, model: str, reads) -> list[dict]:
    return [{"column": o.column, "step": o.step, "expression": o.expression,
             "reads": reads.get((model, o.column), []), "sources": o.sources()}
            for o in model_lineage(module, model)]


# ------------------------------------------------------------------ warehouse state
def _add_state(module: Module, graph: Graph, path: str, branch: str) -> None:
    # the engine (DuckDB) is imported only when a warehouse is asked for
    from strata.engine import history as H
    from strata.engine.branches import ensure_branch, live_snapshots
    from strata.engine.fingerprints import code_fingerprints
    from strata.engine.locations import redact
    from strata.engine.sources import moved_relations
    from strata.engine.staleness import plan_reasons
    from strata.engine.warehouse import Warehouse

    wh = Warehouse.open(path, read_only=True, create=False)
    try:
        ensure_branch(wh, branch)
        base = H.last_with_snapshots(wh, branch)
        live = live_snapshots(wh, branch)
        read_then = (base.details.get("__replay") or {}).get("sources", {}) if base else {}
        code_fps = code_fingerprints(module, module.order)
        reasons = plan_reasons(module, module.order, code_fps, base, live,
                               moved_relations(module, read_then), H.quarantined(wh))
        records = H.records(wh, live.values())
        runs = H.entries(wh, branch)
        failed = _failed_since_built(H.failures_by_model(wh, branch),
                                     H.last_built_seq(wh, branch))
    finally:
        wh.close()
    # the page and the text formats show where the state came from: never a secret
    graph.warehouse, graph.branch = redact(path), branch
    for node in graph.nodes:
        if node.kind != "model":
            continue
        node.state, node.reason = _state(reasons[node.name])
        if node.name in failed:
            node.state, node.reason, node.failure = _failed_state(
                node.name, failed[node.name], code_fps[node.name])
        record = records.get(live.get(node.name, ""))
        node.rows = record.row_count if record is not None else None
        node.history = _history(node.name, runs)
        node.last_run = node.history[0]["finished_at"] if node.history else None


def _failed_since_built(failures: dict, built_seq: dict[str, int]) -> dict:
    """model -> its newest failed entry, for the models whose most recent attempt
    failed after their last successful build on the branch."""
    return {m: e for m, e in failures.items() if e.seq > built_seq.get(m, 0)}


def _failed_state(model: str, entry, code_fp: str) -> tuple[str, str, dict]:
    """(`failed`, why, the failure) from the failed run's entry: the error, when, and
    whether the model's code changed since (a fix not run yet)."""
    errors = entry.failure["failed"][model]
    at = entry.finished_at or entry.started_at
    first = errors[0] if errors else {"code": "error", "message": "failed"}
    why = f"{first['code']} at {at} (failed run {entry.id}): {first['message']}"
    if entry.code_fingerprints.get(model) not in (None, code_fp):
        why += "; its code changed since"
    return "failed", why, {"entry": entry.id, "run_id": entry.failure.get("run_id"),
                           "at": at, "errors": errors}


def _state(reason: str) -> tuple[str, str | None]:
    """plan's reason -> (state, why): the words `strata plan` prints."""
    if reason.startswith("up to date"):
        return "up to date", None
    if reason == "not yet built":
        return "never built", None
    return "stale", reason


def _history(model: str, runs) -> list[dict]:
    """The runs that built or kept `model`, newest first: id, kind, when, what it did
    (rebuilt / reused / kept), rows."""
    out = []
    for entry in runs:
        if entry.kind == "failed":  # an attempt: what became of this model in it
            if model in entry.failure.get("attempted", []):
                out.append({"run": entry.id, "kind": entry.kind,
                            "finished_at": entry.finished_at or entry.started_at,
                            "status": _attempt_status(model, entry.failure), "rows": None})
            continue
        detail = entry.details.get(model)
        if model not in entry.snapshots and not isinstance(detail, dict):
            continue
        detail = detail if isinstance(detail, dict) else {}
        out.append({"run": entry.id, "kind": entry.kind,
                    "finished_at": entry.finished_at or entry.started_at,
                    "status": detail.get("status"), "rows": detail.get("rows")})
    out.sort(key=lambda r: r["finished_at"] or "", reverse=True)
    return out[:HISTORY_SHOWN]


def _attempt_status(model: str, failure: dict) -> str:
    if model in failure.get("failed", {}):
        errors = failure["failed"][model]
        return "failed: " + ", ".join(e["code"] for e in errors)
    if model in failure.get("built", []):
        return "built, not published"
    if model in failure.get("not_built", {}):
        return f"not built (upstream `{failure['not_built'][model]}` failed)"
    return "not published"


# ------------------------------------------------------------------ text renderers
def _ids(graph: Graph) -> dict[str, str]:
    """Each node's id in a text format: n0, n1, ... (a name may hold anything)."""
    return {n.name: f"n{i}" for i, n in enumerate(graph.nodes)}


def _status_line(node: Node) -> str:
    if node.state is None:
        return ""
    text = node.state + (f": {node.reason}" if node.reason else "")
    # the rows of the snapshot the live view shows, apart from the state's reason
    # (a failed pin's reason has a count of its own)
    text += f" (live view: {node.rows} rows)" if node.rows is not None else ""
    return escape_unprintable(text)  # a reason may name a source


def mermaid(graph: Graph) -> str:
    """A Mermaid flowchart, left to right; sources as rounded boxes."""
    ids = _ids(graph)
    lines = ["flowchart LR"]
    for node in graph.nodes:
        label = _mermaid_text(shown_name(node.name))
        status = _status_line(node)
        if status:
            label += "<br/>" + _mermaid_text(status)
        shape = ('(["', '"])') if node.kind == "source" else ('["', '"]')
        lines.append(f"  {ids[node.name]}{shape[0]}{label}{shape[1]}")
    for src, dst in graph.edges:
        lines.append(f"  {ids[src]} --> {ids[dst]}")
    for node in graph.nodes:
        if node.state is not None:
            lines.append(f"  class {ids[node.name]} {node.state.replace(' ', '_')}")
    if any(n.state for n in graph.nodes):
        lines += ["  classDef up_to_date fill:#dff5e1,stroke:#2e7d32",
                  "  classDef stale fill:#fff4d6,stroke:#b26a00",
                  "  classDef never_built fill:#eeeeee,stroke:#777777,stroke-dasharray:4",
                  "  classDef failed fill:#fde2e1,stroke:#c62828,stroke-width:2px"]
    return "\n".join(lines) + "\n"


def _mermaid_text(text: str) -> str:
    """Every character but letters, digits, space and `_.,:-()` as Mermaid's `#NNN;`
    entity, so no quote, bracket, `<` or line end in a name ends the label."""
    return "".join(ch if ch.isalnum() and ch.isascii() or ch in " _.,:-()" else f"#{ord(ch)};"
                   for ch in text)


def dot(graph: Graph) -> str:
    """A Graphviz digraph, left to right; sources as ellipses."""
    ids = _ids(graph)
    fill = {"up to date": "#dff5e1", "stale": "#fff4d6", "never built": "#eeeeee",
            "failed": "#fde2e1"}
    lines = ["digraph strata {", "  rankdir=LR;", '  node [shape=box, fontname="Helvetica"];']
    for node in graph.nodes:
        label = shown_name(node.name)
        status = _status_line(node)
        if status:
            label += "\n" + status
        attrs = [f"label={_dot_string(label)}"]
        if node.kind == "source":
            attrs.append("shape=ellipse")
        if node.state in fill:
            attrs += ["style=filled", f'fillcolor="{fill[node.state]}"']
        lines.append(f"  {ids[node.name]} [{', '.join(attrs)}];")
    for src, dst in graph.edges:
        lines.append(f"  {ids[src]} -> {ids[dst]};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dot_string(text: str) -> str:
    """A DOT quoted string: `\\` and `"` escaped; a line end becomes DOT's `\\n`.
    `shown_name` has already written every other unprintable character as text."""
    body = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{body}"'
