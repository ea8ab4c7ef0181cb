"""Column lineage: where a model's column comes from, down to source columns, and
which model columns read a given column.

The resolver already knows every column's origin: a plan's expressions are SQLGlot
trees whose columns are `ColRef(id)`, and each id is made by exactly one step (read
from a relation, `let`, `join`, `expand`, `group`, `aggregate`, `derive`, `window`,
`select`, a set operation). Lineage follows those ids back through the steps, into
sub-pipelines and upstream models, until it reaches a source's column.

Lineage is of values: a column depends on the columns its expression reads
(a window's partition and order included). Rows kept or dropped by `filter`, a
join's `on` or `take` are not values of the column and are not followed.

Library functions return data (`Origin` trees, `Reader` trees, `edges`) so the CLI
(`strata lineage`) and a graph view draw the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from strata.diagnostics import did_you_mean, fail
from strata.plan import (
    AggregateStage,
    ColRef,
    ExpandStage,
    JoinStage,
    Plan,
    RelationRef,
    SetOpStage,
    WindowStage,
    colref,
)
from strata.semantics.module import Module


@dataclass(frozen=True)
class Origin:
    """A column and how it is made: `step` is the Strata step that makes it in
    `relation` ("source" for a source's own column), `expression` its formula with
    columns by name, `inputs` the columns it reads (empty for a source column)."""

    relation: str  # a model, a source, or `model/alias` for a sub-pipeline
    kind: str  # "source" | "model" | "inline" | "range" (rows made from nothing)
    column: str
    step: str
    expression: str | None = None
    inputs: tuple[Origin, ...] = ()

    @property
    def name(self) -> str:
        return f"{self.relation}.{self.column}"

    def sources(self) -> list[str]:
        """The source columns it reads in the end, `source.column`, sorted."""
        found: set[str] = set()
        stack = [self]
        while stack:
            node = stack.pop()
            if node.kind == "source":
                found.add(node.name)
            stack.extend(node.inputs)
        return sorted(found)

    def to_json(self) -> dict:
        return {"relation": self.relation, "kind": self.kind, "column": self.column,
                "step": self.step, "expression": self.expression,
                "inputs": [i.to_json() for i in self.inputs]}


@dataclass(frozen=True)
class Reader:
    """A column and the model columns that read it directly (`readers`), each with
    theirs: the downstream tree."""

    relation: str
    kind: str  # "source" | "model"
    column: str
    readers: tuple[Reader, ...] = ()

    @property
    def name(self) -> str:
        return f"{self.relation}.{self.column}"

    def to_json(self) -> dict:
        return {"relation": self.relation, "kind": self.kind, "column": self.column,
                "readers": [r.to_json() for r in self.readers]}


@dataclass
class _Made:
    """How one column id of a plan is made."""

    step: str
    expr: exp.Expression | None = None
    reads: RelationRef | None = None  # a relation's column, read by name
    name: str = ""


# ------------------------------------------------------------------ one plan's steps
def _steps(plan: Plan) -> tuple[dict[int, _Made], dict[int, str]]:
    """id -> how it is made, and id -> column name, for every column of the plan."""
    made: dict[int, _Made] = {}
    names: dict[int, str] = {}

    def define(col, how: _Made) -> None:
        names[col.id] = col.name
        if isinstance(how.expr, ColRef) and how.expr.col_id == col.id and how.reads is None:
            return  # passed through unchanged: keeps the step that made it
        made[col.id] = how

    for col in plan.base.columns:
        define(col, _Made("from", reads=plan.base.relation, name=col.name))
    for col, expr in plan.base.lets:
        define(col, _Made("let", expr))
    for stage in plan.stages:
        for col, how in _stage_columns(stage):
            define(col, how)
    return made, names


def _stage_columns(stage) -> list[tuple[object, _Made]]:
    if isinstance(stage, JoinStage):
        return [(c, _Made(f"join {stage.alias}", reads=stage.relation, name=c.name))
                for c in stage.columns]
    if isinstance(stage, ExpandStage):
        return [(stage.item, _Made("expand", stage.source))]
    if isinstance(stage, AggregateStage):
        return [(c, _Made("group", e)) for c, e in stage.keys] + \
            [(c, _Made("aggregate", e)) for c, e in stage.aggregates]
    if isinstance(stage, SetOpStage):
        # the combined column reads the left side's and the other relation's (by name)
        return [(col, _Made(stage.op, colref(left), reads=stage.relation, name=left.name))
                for left, col in zip(stage.left, stage.output)]
    items = getattr(stage, "items", None)
    if items is not None:  # derive, window, select
        step = "window" if isinstance(stage, WindowStage) else \
            "derive" if type(stage).__name__ == "DeriveStage" else "select"
        return [(c, _Made(step, e)) for c, e in items]
    return []


def _shown(expr: exp.Expression, names: dict[int, str]) -> str:
    """The formula with each column by its name."""
    def by_name(node: exp.Expression) -> exp.Expression:
        if isinstance(node, ColRef):
            return exp.column(names.get(node.col_id, f"#{node.col_id}"), quoted=False)
        return node

    return expr.transform(by_name, copy=True).sql()


def _read_ids(expr: exp.Expression | None) -> list[int]:
    if expr is None:
        return []
    ids = [expr.col_id] if isinstance(expr, ColRef) else \
        [n.col_id for n in expr.find_all(ColRef)]
    return list(dict.fromkeys(ids))


# ------------------------------------------------------------------ upstream
class _Tracer:
    """Follows columns back; each (relation, column) is traced once and shared."""

    def __init__(self, module: Module, deep: bool = True) -> None:
        self.module = module
        self.deep = deep  # False: stop at the first model or source column reached
        self.done: dict[tuple[str, str], Origin] = {}
        self.plans: dict[int, tuple[dict[int, _Made], dict[int, str]]] = {}

    def relation_column(self, ref: RelationRef, column: str, where: str) -> Origin:
        """`ref.column` read by the relation `where`: a sub-pipeline is named under it."""
        if ref.kind == "source":
            return Origin(ref.name, "source", column, "source")
        if ref.kind == "inline":
            return self.output(ref.plan, f"{where}/{ref.name}", "inline", column)
        if ref.kind == "series":  # the ints a range counts: made from nothing
            return Origin(f"{where}/{ref.name}", "range", column, "range")
        if not self.deep:
            return Origin(ref.name, "model", column, "model")
        return self.model_column(ref.name, column)

    def model_column(self, model: str, column: str) -> Origin:
        key = (model, column)
        if key not in self.done:
            self.done[key] = self.output(self.module.plan(model), model, "model", column)
        return self.done[key]

    def output(self, plan: Plan, where: str, kind: str, column: str) -> Origin:
        col = next(c for c in plan.output if c.name == column)
        return self.column(plan, where, kind, col.id)

    def column(self, plan: Plan, where: str, kind: str, col_id: int) -> Origin:
        steps = self.plans.get(id(plan))
        if steps is None:
            steps = self.plans[id(plan)] = _steps(plan)
        made, names = steps
        how = made[col_id]
        name = names[col_id]
        if how.reads is not None and how.expr is None:  # read from a relation
            return self.relation_column(how.reads, how.name, where)
        inputs = [self.column(plan, where, kind, i) for i in _read_ids(how.expr)]
        if how.reads is not None:  # a set operation: the other relation's column too
            inputs.append(self.relation_column(how.reads, how.name, where))
        if how.step == "select" and isinstance(how.expr, ColRef) and len(inputs) == 1 \
                and (inputs[0].relation, inputs[0].column) == (where, name):
            return inputs[0]  # `select x` keeps x as it is: not a step worth showing
        expression = _shown(how.expr, names) if how.expr is not None else None
        return Origin(where, kind, name, how.step, expression, tuple(inputs))


def column_lineage(module: Module, model: str, column: str) -> Origin:
    """Where `model.column` comes from: its steps, down to source columns.
    Unknown model: E010; unknown column: E011 (with a did-you-mean)."""
    check_column(module, model, column, sources=False)
    return _Tracer(module).model_column(model, column)


def model_lineage(module: Module, model: str) -> list[Origin]:
    """Every output column's lineage, in output order."""
    check_column(module, model, None, sources=False)
    tracer = _Tracer(module)
    return [tracer.model_column(model, c.name) for c in module.plan(model).output]


# ------------------------------------------------------------------ downstream
def edges(module: Module) -> list[tuple[str, str, str, str]]:
    """Every direct read between columns of the module: (relation, column) read by
    (model, column), through a model's own steps and sub-pipelines. The edges of
    a column graph; `downstream` walks them."""
    out: list[tuple[str, str, str, str]] = []
    tracer = _Tracer(module, deep=False)
    for model in module.order:
        if module.models[model].plan is None:
            continue
        for col in module.plan(model).output:
            origin = tracer.output(module.plan(model), model, "model", col.name)
            for rel, column in _boundary(origin):
                out.append((rel, column, model, col.name))
    return out


def _boundary(origin: Origin) -> list[tuple[str, str]]:
    """The model and source columns a shallow trace reached (its leaves)."""
    found: dict[tuple[str, str], None] = {}
    stack = list(origin.inputs) if origin.kind != "source" else [origin]
    while stack:
        node = stack.pop()
        if node.kind in ("source", "model") and not node.inputs:
            found[(node.relation, node.column)] = None
        else:
            stack.extend(node.inputs)
    return sorted(found)


def downstream(module: Module, relation: str, column: str) -> Reader:
    """Which model columns read `relation.column` (a source's or a model's), directly
    and through them, as a tree."""
    kind = check_column(module, relation, column, sources=True)
    readers: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for rel, col, model, out in edges(module):
        readers.setdefault((rel, col), []).append((model, out))

    def tree(rel: str, col: str, kind: str, seen: frozenset) -> Reader:
        below = [tree(m, c, "model", seen | {(m, c)}) for m, c in readers.get((rel, col), [])
                 if (m, c) not in seen]
        return Reader(rel, kind, col, tuple(below))

    return tree(relation, column, kind, frozenset({(relation, column)}))


def relation_downstream(module: Module, relation: str) -> list[Reader]:
    """The readers of every column of a model (in output order) or a source: what
    `lineage MODEL --downstream` shows for a name without a column."""
    kind = check_column(module, relation, None, sources=True)
    columns = ([c.name for c in module.plan(relation).output] if kind == "model"
               else [n for n, _ in module.sources[relation].columns])
    return [downstream(module, relation, column) for column in columns]


def reader_names(reader: Reader) -> list[str]:
    """Every model column below `reader`, `model.column`, sorted."""
    found: set[str] = set()
    stack = list(reader.readers)
    while stack:
        node = stack.pop()
        found.add(node.name)
        stack.extend(node.readers)
    return sorted(found)


# ------------------------------------------------------------------ names
def split_target(module: Module, target: str) -> tuple[str, str | None]:
    """`MODEL.COLUMN` -> (model, column); a model name may itself hold dots, so the
    split is the one whose left side names a model or source. `MODEL` alone ->
    (model, None)."""
    if target in module.models or target in module.sources:
        return target, None
    for i in range(len(target) - 1, 0, -1):
        if target[i] == "." and (target[:i] in module.models or target[:i] in module.sources):
            return target[:i], target[i + 1:]
    head = target.rsplit(".", 1)[0] if "." in target else target
    return head, None if "." not in target else target.rsplit(".", 1)[1]


def check_column(module: Module, relation: str, column: str | None, sources: bool) -> str:
    """'model' or 'source' for a known relation and column; else E010 / E011."""
    if relation in module.models and module.models[relation].plan is not None:
        columns = [c.name for c in module.plan(relation).output]
        kind = "model"
    elif sources and relation in module.sources:
        columns = [n for n, _ in module.sources[relation].columns]
        kind = "source"
    else:
        known = list(module.models) + (list(module.sources) if sources else [])
        what = "source or model" if sources else "model"
        raise fail("E010", f"unknown {what} `{relation}`", None,
                   did_you_mean(relation, known) or
                   f"{what}s: {', '.join(sorted(known)[:20])}")
    if column is not None and column not in columns:
        raise fail("E011", f"unknown column `{column}` of `{relation}`", None,
                   did_you_mean(column, columns) or f"columns: {', '.join(columns)}")
    return kind


def direct_lineage(module: Module, model: str) -> dict[str, Origin]:
    """How `model` itself makes each output column: its steps down to the first model
    or source column each reads, not past it (upstream models are theirs to explain).
    What `strata diff` compares to tell a changed formula from an unchanged one."""
    check_column(module, model, None, sources=False)
    tracer = _Tracer(module, deep=False)
    plan = module.plan(model)
    return {c.name: tracer.output(plan, model, "model", c.name) for c in plan.output}
