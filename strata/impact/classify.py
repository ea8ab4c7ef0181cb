"""What a change does to each model, decided from the two modules' plans and column
lineage, without reading data. Each model gets a status and the rules that decided it:

| status | rule | when |
|---|---|---|
| added / removed | model-added / model-removed | the model is only in one side |
| breaking | column-removed, column-renamed, column-retyped | an output column went, got another name (same formula), or another type |
| breaking | rows-filtered, join-changed, key-changed | a filter / take / distinct / semi join, a join, or a grouping / distinct / merge key differs |
| breaking | changed-column-read-downstream | a column's formula changed and another model reads it |
| breaking | does-not-compile | the model (or one it reads) has errors after the change |
| non-breaking | columns-added, changed-column-unread, order-changed, sql-changed | only new columns; a changed formula nothing reads; only the order of rows; SQL that differs while no column, row or key does |
| metadata | pins-only, description-only, formatting-only | the compiled SQL is the same: nothing to rebuild (description-only: a description, owner or tags) |
| reached | reads-changed | unchanged itself, but it reads a breaking change upstream |

"Same formula" is the column's direct lineage (`lineage.direct_lineage`): its steps
down to the first model or source column it reads. Which columns a change reaches is
column lineage (`lineage.edges`) in both modules: who read a column before the change
and who reads it after.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from sqlglot import exp

from strata.engine.fingerprints import canonical_sql, model_code
from strata.lineage import Origin, direct_lineage, edges
from strata.plan import (
    AggregateStage,
    Col,
    ColRef,
    DistinctStage,
    ExpandStage,
    FilterStage,
    JoinStage,
    Plan,
    SemiJoinStage,
    SetOpStage,
    SortStage,
    TakeStage,
)
from strata.semantics.module import Module
from strata.syntax import ast

BREAKING, NON_BREAKING, METADATA = "breaking", "non-breaking", "metadata"
ADDED, REMOVED, REACHED, UNCHANGED = "added", "removed", "reached", "unchanged"
# the order a report lists statuses in: what needs a reviewer first
STATUS_ORDER = (BREAKING, REMOVED, ADDED, NON_BREAKING, REACHED, METADATA, UNCHANGED)


@dataclass(frozen=True)
class Finding:
    rule: str
    text: str

    def to_json(self) -> dict:
        return {"rule": self.rule, "text": self.text}


@dataclass(frozen=True)
class ColumnChange:
    column: str
    change: str  # added | removed | renamed | retyped | values
    detail: str
    readers: tuple[str, ...] = ()  # every downstream `model.column` it reaches

    def to_json(self) -> dict:
        return {"column": self.column, "change": self.change, "detail": self.detail,
                "readers": list(self.readers)}


@dataclass
class ModelChange:
    model: str
    status: str
    code_changed: bool
    findings: list[Finding] = field(default_factory=list)
    columns: list[ColumnChange] = field(default_factory=list)
    downstream: list[str] = field(default_factory=list)  # models whose rows it reaches
    # why `downstream` is reached: "rows" (filtered or joined differently), "does not
    # compile", "removed"; None when only columns reach (ColumnChange.readers)
    rows_reason: str | None = None
    reached_by: list[str] = field(default_factory=list)  # `model.column` / `model (rows)`

    @property
    def rebuild(self) -> bool:
        return self.status in (BREAKING, NON_BREAKING, ADDED, REACHED)

    def to_json(self) -> dict:
        return {"model": self.model, "status": self.status, "code_changed": self.code_changed,
                "rebuild": self.rebuild, "rules": [f.rule for f in self.findings],
                "findings": [f.to_json() for f in self.findings],
                "columns": [c.to_json() for c in self.columns],
                "downstream_models": self.downstream, "reached_by": self.reached_by}


@dataclass
class Impact:
    base: str  # the base's label
    changes: dict[str, ModelChange]  # every model of both sides, head order first
    errors: list = field(default_factory=list)  # the head's diagnostics, when it has errors

    def by_status(self, status: str) -> list[ModelChange]:
        return [c for c in self.changes.values() if c.status == status]

    def counts(self) -> dict[str, int]:
        return {s: len(self.by_status(s)) for s in STATUS_ORDER}

    def to_json(self) -> dict:
        return {"base": self.base, "counts": self.counts(),
                "models": [c.to_json() for c in self.changes.values()],
                "errors": [d.to_json() for d in self.errors]}


# ------------------------------------------------------------------ the plans' parts
def _names(plan: Plan) -> dict[int, str]:
    """column id -> its name as the model reads it (`alias.name` for a join's)."""
    out: dict[int, str] = {}

    def add(col) -> None:
        if not isinstance(col, Col):
            return
        out[col.id] = f"{col.qualifier}.{col.name}" if col.qualifier else col.name

    for col in plan.base.columns:
        add(col)
    for col, _ in plan.base.lets:
        add(col)
    for stage in plan.stages:
        for attr in ("columns", "output", "left", "right"):
            found = getattr(stage, attr, None)
            for col in found if isinstance(found, list) else []:
                add(col)
        for attr in ("items", "keys", "aggregates"):
            for pair in getattr(stage, attr, None) or []:
                if isinstance(pair, tuple):
                    add(pair[0])
        if isinstance(stage, ExpandStage):
            add(stage.item)
    return out


def _text(node: exp.Expression | None, names: dict[int, str]) -> str:
    if node is None:
        return ""

    def by_name(n: exp.Expression) -> exp.Expression:
        if isinstance(n, ColRef):
            return exp.column(names.get(n.col_id, f"#{n.col_id}"), quoted=False)
        return n

    return node.transform(by_name, copy=True).sql()


def _order(keys, names) -> str:
    return ", ".join(_text(k.expr, names) + (" desc" if k.desc else "") for k in keys)


def _relation(ref) -> str:
    return ref.name if ref.kind != "inline" else f"({ref.name})"


def row_parts(plan: Plan) -> dict[str, list[str]]:
    """The parts of a plan that decide which rows it has: filters (and take, distinct,
    semi/anti joins), joins (and the base relation, set operations, expand), keys
    (grouping, distinct by, merge keys) and the order of rows, each as text."""
    names = _names(plan)
    parts: dict[str, list[str]] = {"filters": [], "joins": [f"from {_relation(plan.base.relation)}"],
                                   "keys": [], "order": []}
    parts["filters"] += [f"filter {_text(p, names)}" for p in plan.base.preds]
    for stage in plan.stages:
        if isinstance(stage, FilterStage):
            parts["filters"].append(f"filter {_text(stage.predicate, names)}")
        elif isinstance(stage, TakeStage):
            by = f" by {', '.join(_text(b, names) for b in stage.by)}" if stage.by else ""
            parts["filters"].append(f"take {stage.count}{by} order {_order(stage.order, names)}")
        elif isinstance(stage, DistinctStage):
            parts["keys" if stage.by else "filters"].append(
                f"distinct by {', '.join(_text(b, names) for b in stage.by)} order "
                f"{_order(stage.order, names)}" if stage.by else "distinct")
        elif isinstance(stage, SemiJoinStage):
            parts["filters"].append(f"join_{'anti' if stage.anti else 'semi'} "
                                    f"{_relation(stage.relation)} on {_text(stage.on, names)}")
        elif isinstance(stage, JoinStage):
            parts["joins"].append(f"join_{stage.kind} {_relation(stage.relation)} as "
                                  f"{stage.alias} on {_text(stage.on, names)}")
        elif isinstance(stage, SetOpStage):
            parts["joins"].append(f"{stage.op} {_relation(stage.relation)}")
        elif isinstance(stage, ExpandStage):
            parts["joins"].append(f"expand {_text(stage.source, names)}")
        elif isinstance(stage, AggregateStage):
            sets = f"{stage.sets}" if stage.sets else "group"
            parts["keys"].append(f"{sets} {', '.join(_text(e, names) for _, e in stage.keys)}")
        elif isinstance(stage, SortStage):
            parts["order"].append(f"sort {_order(stage.keys, names)}")
    if plan.incremental is not None:
        inc = plan.incremental
        parts["keys"].append(f"merge_strategy {inc.strategy} keys "
                             f"{', '.join(inc.merge_keys)} cdc {inc.cdc_column}")
    return parts


def _formula(origin: Origin, new: frozenset[str] = frozenset()) -> str:
    """A column's direct lineage without its own name: equal for a renamed column.
    Window order keys over `new` columns (ones only this side's scope has) are left
    out: Strata orders ties by every column of the scope, so a column added upstream
    lengthens each window's tie-breakers without changing a value the user's order
    decides."""
    data = origin.to_json()
    data.pop("column")
    data.pop("relation")
    _strip_ties(data, new)  # both sides: the same rendering
    return json.dumps(data, sort_keys=True)


def _strip_ties(node: dict, new: frozenset[str]) -> None:
    text = node.get("expression")
    if text and "OVER" in text.upper():
        import sqlglot

        tree = sqlglot.parse_one(text, read="duckdb")
        for window in tree.find_all(exp.Window):
            order = window.args.get("order")
            if order is None:
                continue
            kept = [k for k in order.expressions
                    if not ({c.name for c in k.find_all(exp.Column)} <= new
                            and any(True for _ in k.find_all(exp.Column)))]
            order.set("expressions", kept)
        node["expression"] = tree.sql(dialect="duckdb")
        # the tie-breaker's own input goes with it
        node["inputs"] = [i for i in node.get("inputs", ())
                          if not (i["column"] in new and i["kind"] in ("model", "source"))]
    for child in node.get("inputs", ()):
        _strip_ties(child, new)


def _meta_changes(base: ast.ModelDecl, head: ast.ModelDecl) -> str:
    """What of a model's description, owner, tags or column descriptions differs, in
    words ("" when none does)."""
    parts = [key for key in ("description", "owner", "tags")
             if getattr(base.meta, key) != getattr(head.meta, key)]
    bcols = {c.name: c.meta for c in base.column_meta}
    hcols = {c.name: c.meta for c in head.column_meta}
    parts += [f"column `{c}`" for c in sorted(set(bcols) | set(hcols), key=str)
              if bcols.get(c) != hcols.get(c)]
    return ", ".join(parts)


def _decl_text(module: Module, model: str) -> str:
    span = module.models[model].decl.span
    lines = module.files.get(span.file, "").split("\n")[span.line - 1:span.end_line]
    return "\n".join(lines)


# ------------------------------------------------------------------ downstream
class _Readers:
    """Who reads a column, directly and through others, in either module."""

    def __init__(self, *modules: Module) -> None:
        self.direct: dict[tuple[str, str], set[tuple[str, str]]] = {}
        for module in modules:
            for rel, col, model, out in edges(module):
                self.direct.setdefault((rel, col), set()).add((model, out))

    def of(self, model: str, column: str) -> list[str]:
        seen: set[tuple[str, str]] = set()
        stack = [(model, column)]
        while stack:
            for reader in self.direct.get(stack.pop(), ()):
                if reader not in seen and reader[0] != model:
                    seen.add(reader)
                    stack.append(reader)
        return sorted(f"{m}.{c}" for m, c in seen)


def _downstream(modules: list[Module], model: str) -> list[str]:
    found: set[str] = set()
    for module in modules:
        if model in module.models:
            found |= module.downstream({model})
    found.discard(model)
    order = {m: i for module in modules for i, m in enumerate(module.order)}
    return sorted(found, key=lambda m: (order.get(m, 0), m))


# ------------------------------------------------------------------ one model
def _compare(base: Module, head: Module, name: str, readers: _Readers) -> ModelChange:
    bplan, hplan = base.plan(name), head.plan(name)
    bsql, hsql = canonical_sql(bplan), canonical_sql(hplan)
    if model_code(bplan, bsql) == model_code(hplan, hsql):
        described = _meta_changes(base.models[name].decl, head.models[name].decl)
        if described:
            return ModelChange(name, METADATA, False, [Finding(
                "description-only", f"{described} changed; the compiled SQL is the same: "
                "nothing to rebuild")])
        if _decl_text(base, name) != _decl_text(head, name):
            return ModelChange(name, METADATA, False, [Finding(
                "formatting-only", "comments or formatting changed; the compiled SQL is "
                "the same: nothing to rebuild")])
        return ModelChange(name, UNCHANGED, False)
    bpins = [p.describe() for p in bplan.pins]
    hpins = [p.describe() for p in hplan.pins]
    if model_code(bplan, bsql).replace(json.dumps(bpins), "") == \
            model_code(hplan, hsql).replace(json.dumps(hpins), ""):
        gone = [p for p in bpins if p not in hpins]
        new = [p for p in hpins if p not in bpins]
        text = "; ".join([*(f"removed `{p}`" for p in gone), *(f"added `{p}`" for p in new)])
        return ModelChange(name, METADATA, False, [Finding(
            "pins-only", f"pins changed ({text}); the compiled SQL is the same: "
            "nothing to rebuild")])
    change = ModelChange(name, NON_BREAKING, True)
    btypes = {c.name: str(c.type) for c in bplan.output}
    htypes = {c.name: str(c.type) for c in hplan.output}
    blin, hlin = direct_lineage(base, name), direct_lineage(head, name)
    gone = [c for c in btypes if c not in htypes]
    new = [c for c in htypes if c not in btypes]
    bscope = {n.rsplit(".", 1)[-1] for n in _names(bplan).values()}
    hscope = {n.rsplit(".", 1)[-1] for n in _names(hplan).values()}
    only_head, only_base = frozenset(hscope - bscope), frozenset(bscope - hscope)
    for old in gone:
        twin = next((c for c in new if _formula(hlin[c]) == _formula(blin[old])
                     and htypes[c] == btypes[old]), None)
        reach = readers.of(name, old)
        if twin is not None:
            new.remove(twin)
            change.columns.append(ColumnChange(old, "renamed", f"{old} -> {twin}", tuple(reach)))
            change.findings.append(Finding("column-renamed", f"`{old}` is now `{twin}` "
                                           "(the same formula)"))
        else:
            change.columns.append(ColumnChange(old, "removed", f"{old} ({btypes[old]})",
                                               tuple(reach)))
            change.findings.append(Finding("column-removed", f"`{old}` is gone"))
    for col in new:
        change.columns.append(ColumnChange(col, "added", f"{col} ({htypes[col]})"))
    unread: list[str] = []
    for col in (c for c in htypes if c in btypes):
        reach = readers.of(name, col)
        if htypes[col] != btypes[col]:
            change.columns.append(ColumnChange(col, "retyped", f"{btypes[col]} -> {htypes[col]}",
                                               tuple(reach)))
            change.findings.append(Finding("column-retyped", f"`{col}` was {btypes[col]}, "
                                           f"is {htypes[col]}"))
        elif _formula(hlin[col], only_head) != _formula(blin[col], only_base):
            before = blin[col].expression or blin[col].step
            after = hlin[col].expression or hlin[col].step
            change.columns.append(ColumnChange(col, "values", f"{before} -> {after}", tuple(reach)))
            if reach:
                change.findings.append(Finding(
                    "changed-column-read-downstream",
                    f"`{col}` is computed differently ({before} -> {after}) and "
                    f"{len(reach)} downstream column(s) read it"))
            else:
                unread.append(col)
    bparts, hparts = row_parts(bplan), row_parts(hplan)
    rules = {"filters": "rows-filtered", "joins": "join-changed", "keys": "key-changed"}
    for part, rule in rules.items():
        if bparts[part] != hparts[part]:
            before = "; ".join(bparts[part]) or "(none)"
            after = "; ".join(hparts[part]) or "(none)"
            change.findings.append(Finding(rule, f"{before}  ->  {after}"))
    rows_differ = any(bparts[p] != hparts[p] for p in rules)
    if rows_differ:
        change.downstream = _downstream([base, head], name)
        change.rows_reason = "rows"
    if change.findings:
        change.status = BREAKING
    else:
        added = [c.column for c in change.columns if c.change == "added"]
        if added:
            change.findings.append(Finding("columns-added", "only new columns: "
                                           + ", ".join(f"`{c}`" for c in added)))
        if unread:
            change.findings.append(Finding(
                "changed-column-unread", "computed differently, read by no other model: "
                + ", ".join(f"`{c}`" for c in unread)))
        if bparts["order"] != hparts["order"]:
            change.findings.append(Finding("order-changed", "only the order of the rows"))
        if not change.findings:
            change.findings.append(Finding(
                "sql-changed", "the compiled SQL changed, but no column, row or key did "
                "(it carries a new upstream column through, say)"))
    if change.status == BREAKING and not change.downstream:
        change.downstream = sorted({r.split(".", 1)[0] for c in change.columns
                                    for r in c.readers},
                                   key=lambda m: head.order.index(m) if m in head.order else 0)
    return change


def _model_errors(head: Module, name: str) -> list[str]:
    span = head.models[name].decl.span
    return [f"error[{d.code}]: {d.message}" for d in head.errors
            if d.span is not None and d.span.file == span.file
            and span.line <= d.span.line <= span.end_line]


def classify(base: Module, head: Module, base_label: str = "base") -> Impact:
    """Every model of both modules: its status and the rules that decided it. `base`
    must compile; `head` may not (its broken models are breaking: does-not-compile)."""
    readers = _Readers(base, head)
    changes: dict[str, ModelChange] = {}
    for name in [*head.order, *(m for m in head.models if m not in head.order)]:
        if name not in base.models:
            changes[name] = ModelChange(name, ADDED, True, [Finding("model-added",
                                                                    "a new model")])
        elif head.models[name].plan is None:
            own = _model_errors(head, name)
            broken = [m for m in head.models[name].models_read
                      if head.models[m].plan is None] if not own else []
            text = "; ".join(own) if own else \
                f"it reads {', '.join(f'`{m}`' for m in broken) or 'a model'} that does not compile"
            changes[name] = ModelChange(name, BREAKING, True, [Finding("does-not-compile", text)],
                                        downstream=_downstream([base], name),
                                        rows_reason="does not compile")
        else:
            changes[name] = _compare(base, head, name, readers)
    for name in base.order:
        if name not in head.models:
            changes[name] = ModelChange(name, REMOVED, True, [Finding(
                "model-removed", "the model is gone; its view is dropped by the next run")],
                downstream=_downstream([base], name), rows_reason="removed")
    _mark_reached(changes)
    _mark_sources(base, head, changes)
    return Impact(base_label, changes, head.errors if head.errors else [])


def _mark_sources(base: Module, head: Module, changes: dict[str, ModelChange]) -> None:
    """A source declared otherwise (its columns, types, table or file) reaches every
    model that reads it: they are rebuilt on other input."""
    def declared(module: Module, name: str) -> tuple:
        info = module.sources[name]
        # a file by its place relative to the module (an imported module's file
        # sources lie beside it: `../shared/data/x.csv`)
        return ([(c, str(t)) for c, t in info.columns], info.table,
                os.path.relpath(info.file, module.root) if info.file else None)

    moved = [s for s in head.sources if s in base.sources
             and declared(base, s) != declared(head, s)]
    for source in moved:
        for name, info in head.models.items():
            change = changes.get(name)
            if change is None or source not in info.sources_read:
                continue
            change.reached_by.append(f"source {source}")
            if change.status in (UNCHANGED, METADATA, REACHED):
                change.status = REACHED
                change.findings = [Finding("reads-changed", "unchanged itself; reads "
                                           + ", ".join(change.reached_by))]


def _mark_reached(changes: dict[str, ModelChange]) -> None:
    """Every model a breaking change reaches, through a column it reads or its rows."""
    for change in list(changes.values()):
        if change.status not in (BREAKING, REMOVED):
            continue
        by_model: dict[str, list[str]] = {}
        for col in change.columns:
            for reader in col.readers:
                by_model.setdefault(reader.split(".", 1)[0], []).append(
                    f"{change.model}.{col.column}")
        for model in change.downstream if change.rows_reason else ():
            by_model.setdefault(model, []).append(f"{change.model} ({change.rows_reason})")
        for model, why in by_model.items():
            target = changes.get(model)
            if target is None or target is change:
                continue
            target.reached_by += [w for w in dict.fromkeys(why) if w not in target.reached_by]
            if target.status in (UNCHANGED, METADATA):
                target.status = REACHED
                target.findings = [Finding("reads-changed", "unchanged itself; reads "
                                           + ", ".join(target.reached_by))]
            elif target.status == REACHED:
                target.findings = [Finding("reads-changed", "unchanged itself; reads "
                                           + ", ".join(target.reached_by))]
