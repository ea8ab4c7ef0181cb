"""The compile side as a library: module → SQLGlot trees → SQL text per dialect.

`strata check/compile/build` call these and print; the engine calls them with its
own relation mapping (snapshot tables instead of live views).
"""

from __future__ import annotations

import datetime as dt
import math
import os
import sys
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation

from sqlglot import exp

import dialects
from dialects import routines
from dialects.base import Dialect
from strata.diagnostics import StrataError, did_you_mean, fail
from strata.plan import Plan, RelationRef
from strata.semantics.module import Module
from strata.semantics.types import Type
from strata.sqlgen.build import Relations, model_query
from strata.sqlgen.clock import RunClock
from strata.sqlgen.history import history_query
from strata.sqlgen.identifiers import check_model
from strata.sqlgen.literals import lit
from strata.sqlgen.names import ident, table
from strata.sqlgen.rewrites import (
    deleted_condition,
    delta_query,
    lookback_boundary,
    merge_query,
)
from strata.syntax.text import TOO_DEEP_HINT
from strata.textsafe import shown_name

WATERMARK_PLACEHOLDER = exp.Placeholder(this="watermark")


def view_name(model: str) -> str:
    return f"v_{model}"


def compile_relations(module: Module, dialect: Dialect,
                      clock: RunClock | None = None) -> Relations:
    """Relations as a reader of the warehouse sees them: sources by their physical
    table (or file), models by their live view; run_date() and run_timestamp() as
    `clock` binds them, or as `$run_date` placeholders (review files: the same text
    every day)."""

    def relation(ref: RelationRef, alias: str | None) -> exp.Expression:
        if ref.kind == "clock":
            return clock.literal(ref.name) if clock else exp.Placeholder(this=ref.name)
        if ref.kind == "model":
            node = table(view_name(ref.name))
        else:
            src = module.sources[ref.name]
            if src.file is not None:
                node = dialect.file_source(_shown_path(str(src.file)), ref.name,
                                           src.file_types())
            else:
                node = table(*src.physical)
        if alias and not (isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier)
                          and node.name == alias and not node.args.get("db")):
            node = node.copy()
            node.set("alias", exp.TableAlias(this=ident(alias)))
        return node

    return relation


def _shown_path(path: str) -> str:
    rel = os.path.relpath(path)
    return rel if not rel.startswith("..") else path


@dataclass(frozen=True)
class Statement:
    model: str
    label: str  # "full" or "incremental: upsert, pushdown"
    tree: exp.Expression | None  # as rendered (the dialect's rewrites applied); None
    sql: str                      # when the caller asked for the text alone


def parse_watermark(value: str, typ: Type, model: str):
    """--watermark VALUE as a typed value for the model's cdc_column."""
    try:
        if typ.kind == "int":
            return int(value)
        if typ.kind in ("double", "decimal"):
            number = float(value) if typ.kind == "double" else Decimal(value)
            if not math.isfinite(number):  # nan/inf would render as a bare word
                raise ValueError(value)
            return number
        if typ.kind == "date":
            return dt.date.fromisoformat(value)
        if typ.kind == "timestamp":
            return dt.datetime.fromisoformat(value)
        return value
    except (ValueError, InvalidOperation):
        raise fail("E084", f"--watermark `{value}` is not a {typ} (cdc_column of `{model}`)",
                   None, "dates are YYYY-MM-DD, timestamps 'YYYY-MM-DD HH:MM:SS'") from None


def select_models(module: Module, names: list[str] | None) -> list[str]:
    if not names:
        return list(module.order)
    unknown = [n for n in names if n not in module.models]
    if unknown:
        raise fail("E079", f"unknown model `{unknown[0]}` in --models", None,
                   did_you_mean(unknown[0], module.models) or
                   f"models: {', '.join(module.order)}")
    wanted = set(names)
    return [n for n in module.order if n in wanted]


def require_ok(module: Module) -> None:
    if module.errors:
        raise StrataError(module.errors)


def compile_statements(module: Module, dialect_name: str = dialects.DEFAULT,
                       models: list[str] | None = None,
                       watermark: str | None = None,
                       keep_trees: bool = True,
                       clock: RunClock | None | str = "now") -> list[Statement]:
    """Every statement `compile --show-sql` prints, in dependency order.

    keep_trees=False drops each tree once it is rendered: a caller that only prints
    the text then holds ~1 KB per model instead of ~80 KB, and the garbage collector,
    which scans every live object, no longer slows as the module grows. `clock`: the
    moment run_date()/run_timestamp() read ("now": as a run now would; the header says
    it), or None for `$run_date` placeholders (review files stay the same every day)."""
    require_ok(module)
    allow_deep_trees()
    if clock == "now":
        from strata.clock import run_clock

        clock = run_clock()
    dialect = dialects.get(dialect_name)
    relations = compile_relations(module, dialect, clock)
    out: list[Statement] = []
    selected = select_models(module, models)
    if watermark is not None and not any(_merges(module.plan(m)) for m in selected):
        raise fail("E084", "--watermark applies to incremental models (append or upsert "
                   "with a cdc_column); none of the selected models is one", None,
                   "select one with --models, or leave --watermark out")
    for name in selected:
        try:
            made = _model_statements(module, name, dialect, relations, watermark)
            if clock is not None and (reads := module.plan(name).clock):
                shown = ", ".join(f"{n}() = {clock.value(n)}" for n in sorted(reads))
                made = [replace(s, label=f"{s.label}; {shown}") for s in made]
            out.extend(made if keep_trees else
                       [Statement(s.model, s.label, None, s.sql) for s in made])
        except RecursionError:
            raise fail("E092", f"model `{name}` nests an expression too deeply to render",
                       module.models[name].decl.name_span, TOO_DEEP_HINT) from None
    return out


def clock_reads(module: Module, name: str) -> set[str]:
    """run_date()/run_timestamp() a model's rows depend on: its own calls and those of
    every model upstream of it."""
    return {n for m in module.upstream([name]) for n in module.plan(m).clock}


def _merges(plan) -> bool:
    return plan.incremental is not None and plan.incremental.strategy in ("append", "upsert")


def _model_statements(module: Module, name: str, dialect: Dialect, relations: Relations,
                      watermark: str | None) -> list[Statement]:
    # Each tree is built for its statement alone, so rendering may rewrite it in
    # place (copy=False): a deep copy per statement was a fifth of a compile.
    out: list[Statement] = []
    plan = module.plan(name)
    tree = model_query(plan, relations)
    check_model(module, name, tree, dialect)  # names the engine would cut alike: E091
    out.append(Statement(name, "full", tree, render(tree, dialect, copy=False)))
    inc = plan.incremental
    if inc and inc.strategy in ("append", "upsert"):
        cdc_type = next(c.type for c in plan.output if c.name == inc.cdc_column)
        mark = (lit(_boundary(parse_watermark(watermark, cdc_type, name), plan))
                if watermark is not None else WATERMARK_PLACEHOLDER.copy())
        delta = delta_query(plan, relations, mark)
        tree = _merged(plan, delta.tree, table(view_name(plan.model)))
        label = f"incremental: {inc.strategy}, {delta.path}"
        out.append(Statement(name, label, tree, render(tree, dialect, copy=False)))
    elif inc and inc.strategy == "history":
        tree = history_query([c.name for c in plan.output], table(view_name(plan.model)),
                             model_query(plan, relations),
                             relations(RelationRef("clock", "run_timestamp"), None))
        out.append(Statement(name, "incremental: history", tree,
                             render(tree, dialect, copy=False)))
    return out


def _boundary(watermark, plan: Plan):
    """What the delta reads past: the watermark less the model's lookback, as a run
    computes it, so `compile --watermark X` shows the statement a run at X executes."""
    inc = plan.incremental
    boundary = lookback_boundary(watermark, inc.lookback)
    if boundary is None:
        raise fail("E084", f"--watermark `{watermark}` less the lookback of `{plan.model}` "
                   f"is out of range for its cdc_column `{inc.cdc_column}`")
    return boundary


def incremental_tree(plan: Plan, relations: Relations, watermark: exp.Expression,
                     previous: exp.Expression | None = None) -> exp.Expression:
    delta = delta_query(plan, relations, watermark).tree
    previous = previous if previous is not None else table(view_name(plan.model))
    return _merged(plan, delta, previous)


def _merged(plan: Plan, delta: exp.Expression, previous: exp.Expression) -> exp.Expression:
    inc = plan.incremental
    return merge_query(inc.strategy, [c.name for c in plan.output], previous, delta,
                       inc.merge_keys, deleted_condition(plan))


# Python frames SQLGlot may use rendering one model: it rewrites and prints trees
# recursively, and an expression nested 30 deep, emulated on PostgreSQL or Spark, took
# up to ~2,500 (Python's default 1,000 made it E092). Past this, E092 still says so;
# kept low enough that the C stack of a lane thread (8 MiB) holds the frames that are C calls.
RENDER_FRAMES = 4000


def allow_deep_trees() -> None:
    """Raise the interpreter's recursion limit to RENDER_FRAMES (never lower it)."""
    if sys.getrecursionlimit() < RENDER_FRAMES:
        sys.setrecursionlimit(RENDER_FRAMES)


def render(tree: exp.Expression, dialect: Dialect, pretty: bool = True,
           copy: bool = True) -> str:
    allow_deep_trees()
    try:
        return dialect.render(tree, pretty=pretty, copy=copy)
    except RecursionError:
        raise
    except Exception as err:  # noqa: BLE001  SQLGlot raises UnsupportedError and others
        raise fail("E091", f"{dialect.name} cannot express this query: {err}", None) from None


def format_statements(statements: list[Statement], functions: bool = True) -> str:
    """The statements as one script, headed by the functions Strata owns that they
    call (dialects/routines.py): what a reviewer reads is all that runs. functions=
    False: the statements alone, for files read beside the functions' own."""
    head = routines.heading(s.sql for s in statements) if functions else ""
    return head + "".join(f"{header(s)}\n{s.sql};\n\n" for s in statements)


def header(statement: Statement) -> str:
    """`-- model NAME (full)`: the name as `shown_name` writes it, which holds no line
    end of any engine (`\\r`, `\\x0b`, `\\x85`, U+2028, ...), so the comment ends
    where the line does and a name cannot smuggle a statement after it."""
    return f"-- model {shown_name(statement.model)} ({statement.label})"
