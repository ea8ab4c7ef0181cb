"""Descriptions, owners and tags (issue 40 item 9): what a module says about its
sources, models and columns, as dbt keeps it in YAML.

The parser puts them in `ast.Meta` beside the declaration; nothing here reaches a
plan, so a description or a tag never changes a model's SQL, its code fingerprint or
its content identity. This module answers the questions the commands ask (hover,
the graph page, `strata lineage`, `tag:` selectors) from the resolved `Module`.
"""

from __future__ import annotations

from strata.diagnostics import Diagnostic, did_you_mean
from strata.plan import Plan
from strata.semantics.module import Module
from strata.syntax import ast


def of_relation(module: Module, name: str) -> ast.Meta:
    """The meta of a model or source (empty when it has none, or is neither)."""
    if name in module.models:
        return module.models[name].decl.meta
    if name in module.sources:
        return module.sources[name].decl.meta
    return ast.NO_META


def of_column(module: Module, relation: str, column: str) -> ast.Meta:
    """The meta of a model's output column (`column c { ... }`) or a source's column."""
    if relation in module.models:
        for item in module.models[relation].decl.column_meta:
            if item.name == column:
                return item.meta
    elif relation in module.sources:
        for col in module.sources[relation].decl.columns:
            if col.name == column:
                return col.meta
    return ast.NO_META


def columns_of(module: Module, relation: str) -> dict[str, ast.Meta]:
    """Every described column of a model or source, by name."""
    if relation in module.models:
        return {c.name: c.meta for c in module.models[relation].decl.column_meta}
    if relation in module.sources:
        return {c.name: c.meta for c in module.sources[relation].decl.columns if c.meta}
    return {}


def lines(meta: ast.Meta) -> list[str]:
    """The meta as a few lines of plain text, the same in hover, graph and lineage."""
    out = []
    if meta.description:
        out.append(meta.description)
    if meta.owner:
        out.append(f"owner: {meta.owner}")
    if meta.tags:
        out.append("tags: " + ", ".join(meta.tags))
    return out


def to_json(meta: ast.Meta) -> dict:
    return {"description": meta.description, "owner": meta.owner, "tags": list(meta.tags)}


def tagged(module: Module, tag: str) -> set[str]:
    """The models carrying `tag`."""
    return {name for name, info in module.models.items() if tag in info.decl.meta.tags}


def all_tags(module: Module) -> list[str]:
    return sorted({t for info in module.models.values() for t in info.decl.meta.tags})


def check_columns(decl: ast.ModelDecl, plan: Plan) -> list[Diagnostic]:
    """E206 for `column c { ... }` naming no output column of the model, or a column
    described twice."""
    out = [c.name for c in plan.output]
    seen: dict[str, ast.ColumnMeta] = {}
    found = []
    for item in decl.column_meta:
        if item.name not in out:
            found.append(Diagnostic(
                "E206", f"model `{decl.name}` has no output column `{item.name}` to describe",
                item.name_span, did_you_mean(item.name, out)
                or f"its columns: {', '.join(out)}"))
        elif item.name in seen:
            first = seen[item.name].span
            found.append(Diagnostic("E206", f"column `{item.name}` is described twice",
                                    item.name_span, f"first at line {first.line}"))
        seen.setdefault(item.name, item)
    return found
