"""Compile-time rules on a resolved model: properties, incremental merge (E086–E089),
pins and contracts (E060, E065), and test blocks (E066)."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

from sqlglot import exp

from strata.diagnostics import Diagnostic, did_you_mean
from strata.plan import (
    AggregateStage,
    DeriveStage,
    FilterStage,
    Incremental,
    PinSpec,
    Plan,
    RelationRef,
)
from strata.semantics import types as T
from strata.semantics.expressions import ERROR, constant_value, literal_type, resolve_type
from strata.semantics.module import ModelInfo, Module
from strata.semantics.scopes import ModuleScope
from strata.sqlgen.clock import clock_column
from strata.syntax import ast

STRATEGIES = ("replace", "append", "upsert", "history")
# merge_strategy history: the columns a version of a key is valid between (run times)
HISTORY_COLUMNS = ("valid_from", "valid_to")
PROPERTIES = ("incremental", "merge_strategy", "merge_keys", "cdc_column", "compact_layers",
              "compact_ratio", "on_drift", "lookback", "delete_when")
ON_DRIFT = ("warn", "recompute", "fail", "ignore")
# lookback units, in seconds; a date cdc column takes whole days only
UNITS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 604800}
# the longest lookback every engine can subtract from a date or timestamp: an interval
# of 2^63 microseconds (DuckDB's and Spark's bound; a number past BIGINT is E036 already)
LOOKBACK_MAX_SECONDS = (2**63 - 1) // 1_000_000


def check_model(r: ModuleScope, decl: ast.ModelDecl, plan: Plan,
                defs: dict[int, exp.Expression], steps_ok: bool = True) -> Plan:
    """`steps_ok` False: a step already failed, so the output is incomplete and
    checks against it (cdc_column, merge_keys, pins) would only repeat that error."""
    props = _properties(r, decl)
    plan.incremental = _incremental(r, decl, plan, props, steps_ok)
    plan.pins = _pins(r, decl, plan) if steps_ok else []
    return plan


def _span_of(value, name: str, fallback):
    """The span of `name` inside a written `[a, b]` list, else `fallback`."""
    spans = getattr(value, "spans", ())
    for item, span in zip(value, spans):
        if item == name:
            return span
    return fallback


def _written(value) -> str:
    """A property value as the author wrote it, for messages."""
    if isinstance(value, tuple):
        return "[" + ", ".join(value) + "]"
    return str(value)


def _properties(r: ModuleScope, decl: ast.ModelDecl) -> dict[str, ast.Property]:
    props: dict[str, ast.Property] = {}
    for prop in decl.properties:
        if prop.name not in PROPERTIES:
            r.error("E019", f"unknown property `{prop.name}`", prop.span,
                    did_you_mean(prop.name, PROPERTIES)
                    or f"properties are: {', '.join(PROPERTIES)}")
            continue
        if prop.name in props:
            first = props[prop.name].span
            r.error("E018", f"property `{prop.name}` is set twice", prop.span,
                    f"first set at line {first.line}")
            continue
        props[prop.name] = prop
    return props


def _incremental(r: ModuleScope, decl: ast.ModelDecl, plan: Plan,
                 props: dict[str, ast.Property], steps_ok: bool = True) -> Incremental | None:
    strategy_prop = props.get("merge_strategy")
    strategy = "replace"
    if strategy_prop is not None:
        value = strategy_prop.value
        if not isinstance(value, str) or value not in STRATEGIES:
            shown = _written(value)
            guess = did_you_mean(value.lower() if isinstance(value, str) else shown.strip("[]"),
                                 STRATEGIES)
            r.error("E086", f"unknown merge_strategy `{shown}`", strategy_prop.value_span,
                    (guess + " (one name, no brackets)" if guess and isinstance(value, tuple)
                     else guess) or "merge_strategy is one of replace, append, upsert, history")
            return None
        strategy = value
    if "incremental" not in props and strategy_prop is None:
        for name in ("merge_keys", "cdc_column", "compact_layers", "compact_ratio",
                     "on_drift", "lookback", "delete_when"):
            if name in props:
                r.error("E019", f"`{name}` only applies to an incremental model",
                        props[name].span, "add `incremental` and a `merge_strategy`")
        return None
    output = {c.name: c for c in plan.output}
    ok = True
    if strategy in ("append", "upsert") and any(isinstance(s, AggregateStage)
                                                for s in plan.stages):
        r.error("E087", f"merge_strategy {strategy} on a model with group/aggregate",
                strategy_prop.value_span,
                "re-aggregating only the delta without re-reading what was merged is not "
                "sound; use merge_strategy: replace (a full rebuild)")
        ok = False
    cdc = props.get("cdc_column")
    cdc_name = None
    if cdc is not None:
        cdc_name = cdc.value if isinstance(cdc.value, str) else None
        if cdc_name is None:
            r.error("E088", f"cdc_column is one column name, not `{_written(cdc.value)}`",
                    cdc.value_span, "write `cdc_column: updated_at`")
            ok = False
        elif not steps_ok:
            ok = False
        elif cdc_name not in output:
            r.error("E088", f"cdc_column `{cdc_name}` is not an output column of "
                    f"`{decl.name}`", cdc.value_span,
                    did_you_mean(cdc_name, output) or
                    f"output columns: {', '.join(output)}")
            ok = False
        elif output[cdc_name].type.kind in ("list", "bool"):
            r.error("E088", f"cdc_column `{cdc_name}` is {output[cdc_name].type}: a "
                    "watermark needs an ordered scalar (number, date, timestamp, text)",
                    cdc.value_span)
            ok = False
    if cdc is not None and strategy == "history":
        r.error("E210", "merge_strategy history takes no `cdc_column`", cdc.span,
                "a history compares every column of each key with its open version: "
                "remove `cdc_column`")
        ok = False
    elif cdc is None and strategy in ("append", "upsert"):
        r.error("E088", f"merge_strategy {strategy} needs `cdc_column`",
                strategy_prop.value_span, "add `cdc_column: updated_at` (a monotone column)")
        ok = False
    keys_prop = props.get("merge_keys")
    keys: tuple[str, ...] = ()
    if keys_prop is not None:
        if not isinstance(keys_prop.value, tuple):
            r.error("E089", f"merge_keys is a list: `merge_keys: [{keys_prop.value}]`",
                    keys_prop.value_span)
            ok = False
        else:
            keys = keys_prop.value
    if strategy in ("upsert", "history") and (keys_prop is None
                                              or isinstance(keys_prop.value, tuple)):
        if not steps_ok:
            ok = False
        elif keys_prop is None or not keys:
            span = keys_prop.value_span if keys_prop else strategy_prop.value_span
            r.error("E089", f"merge_strategy {strategy} needs non-empty `merge_keys`", span,
                    "add `merge_keys: [id]`")
            ok = False
        else:
            bad = [k for k in keys if k not in output]
            if bad:
                r.error("E089", f"merge_keys {', '.join(f'`{b}`' for b in bad)} "
                        f"{'is not an output column' if len(bad) == 1 else 'are not output columns'}"
                        f" of `{decl.name}`", _span_of(keys, bad[0], keys_prop.value_span),
                        did_you_mean(bad[0], output) or f"output columns: {', '.join(output)}")
                ok = False
            twice = [k for i, k in enumerate(keys) if k in keys[:i]]
            if twice:
                spans = getattr(keys, "spans", ())
                span = spans[keys.index(twice[0], keys.index(twice[0]) + 1)] if spans else \
                    keys_prop.value_span
                r.error("E089", f"merge_keys lists `{twice[0]}` twice", span)
                ok = False
    layers, ratio = 8, 0.2
    if "compact_layers" in props:
        p = props["compact_layers"]
        if not isinstance(p.value, int) or isinstance(p.value, bool) or p.value < 1:
            r.error("E021", "compact_layers is a whole number >= 1", p.value_span)
            ok = False
        else:
            layers = p.value
    if "compact_ratio" in props:
        p = props["compact_ratio"]
        value = float(p.value) if isinstance(p.value, (int, float)) or hasattr(
            p.value, "as_tuple") else None
        if value is None or not 0 < value <= 10:
            r.error("E021", "compact_ratio is a fraction of the base rows, above 0 and at "
                    "most 10 (0.2 = compact when the deltas reach 20% of the base rows)",
                    p.value_span)
            ok = False
        else:
            ratio = value
    drift = _on_drift(r, props, strategy)
    cdc_type = output[cdc_name].type if cdc_name in output and steps_ok else None
    lookback = _lookback(r, props, strategy, cdc_type)
    deleted = _delete_when(r, decl, plan, props, strategy) if steps_ok else None
    if strategy == "history" and steps_ok and not _history_columns(r, decl, plan,
                                                                   strategy_prop):
        ok = False
    if not ok or drift is None or lookback is False or deleted is False:
        return None
    text = ""
    if deleted is not None:
        text = pin_text(deleted, plan)
        # the full computation drops the deleted rows: a last filter, so the model's
        # canonical SQL (compile, replay) says so; a delta is computed without it
        plan.stages.append(FilterStage(_not_true(deleted)))
    return Incremental(strategy, cdc_name, tuple(keys), layers, ratio, drift, lookback,
                       deleted, text, on_drift_written="on_drift" in props)


def _history_columns(r: ModuleScope, decl: ast.ModelDecl, plan: Plan,
                     strategy: ast.Property) -> bool:
    """merge_strategy history: the model's rows gain `valid_from` (the run's
    timestamp) and `valid_to` (NULL: the version is open), a last derive, so the
    first run (and the model's canonical SQL) is every row opened now; a merge then
    closes and opens versions (sqlgen/history.py). E211 when the model has either
    column already."""
    taken = [c.name for c in plan.output if c.name.lower() in HISTORY_COLUMNS]
    if taken:
        r.error("E211", f"merge_strategy history adds `valid_from` and `valid_to`, and "
                f"`{decl.name}` has `{taken[0]}` already", strategy.value_span,
                f"rename it in the model's `select` (`{taken[0]} as source_{taken[0]}`)")
        return False
    cols = [r.new_col(name, T.TIMESTAMP) for name in HISTORY_COLUMNS]
    opened = exp.cast(exp.Null(), exp.DataType.build("TIMESTAMP"))
    plan.stages.append(DeriveStage([(cols[0], clock_column("run_timestamp")),
                                    (cols[1], opened)]))
    plan.output = [*plan.output, *cols]
    plan.clock_stale = plan.clock  # unchanged rows open no version: the clock alone is no news
    plan.clock = plan.clock | {"run_timestamp"}
    return True


def _not_true(condition: exp.Expression) -> exp.Expression:
    """`NOT COALESCE(condition, FALSE)`: a row whose condition is NULL stays (a plain
    NOT would drop it, as `filter` drops NULL); spelled so every engine reads it."""
    return exp.Not(this=exp.Coalesce(this=condition.copy(), expressions=[exp.false()]))


def _merge_only(r: ModuleScope, prop: ast.Property, strategy: str, needs: tuple[str, ...]) -> bool:
    """E118 when a property is set on a model whose strategy it does not apply to."""
    if strategy in needs:
        return True
    r.error("E118", f"`{prop.name}` applies to merge_strategy {' or '.join(needs)}, not "
            f"{strategy}", prop.span,
            "append would add the re-read rows a second time; use merge_strategy: upsert"
            if strategy == "append" else
            "a history compares every row with its key's open version: it reads no "
            "watermark and deletes no key" if strategy == "history" else
            "a replace model is computed in full every run")
    return False


def _on_drift(r: ModuleScope, props: dict[str, ast.Property], strategy: str) -> str | None:
    p = props.get("on_drift")
    if p is None:
        return "warn"
    if not _merge_only(r, p, strategy, ("append", "upsert")):
        return None
    if not isinstance(p.value, str) or p.value not in ON_DRIFT:
        shown = _written(p.value)
        r.error("E114", f"unknown on_drift `{shown}`", p.value_span,
                did_you_mean(shown.lower(), ON_DRIFT) or
                "on_drift is one of warn (the default), recompute, fail, ignore")
        return None
    return p.value


def _lookback(r: ModuleScope, props: dict[str, ast.Property], strategy: str,
              cdc: T.Type | None):
    """The lookback as the run uses it: an int (or decimal) for a number cdc column,
    (count, unit) for a date or timestamp one; None when not set; False on an error."""
    p = props.get("lookback")
    if p is None:
        return None
    if not _merge_only(r, p, strategy, ("upsert",)):
        return False
    if cdc is None:
        return False  # the cdc column's own error is reported already
    value, kind = p.value, cdc.kind
    if kind in ("date", "timestamp"):
        unit = value.unit.lower().rstrip("s") if isinstance(value, ast.Duration) else None
        ok = (unit in UNITS and isinstance(value.count, int) and value.count >= 1
              and (kind == "timestamp" or UNITS[unit] % 86400 == 0))
        if ok and value.count * UNITS[unit] > LOOKBACK_MAX_SECONDS:
            r.error("E115", f"lookback `{_written(value)}` is longer than any engine's "
                    f"interval (at most {LOOKBACK_MAX_SECONDS // 604800:,} weeks)",
                    p.value_span, "a lookback longer than the data re-reads everything: "
                    "use `strata run --full-refresh` instead")
            return False
        if not ok:
            units = "days or weeks" if kind == "date" else "seconds, minutes, hours, days or weeks"
            r.error("E115", f"lookback `{_written(value)}` does not fit cdc_column of type "
                    f"{cdc}: it takes a whole number of {units}", p.value_span,
                    "write e.g. `lookback: 3 days`")
            return False
        return (value.count, unit)
    if kind in ("int", "decimal", "double"):
        number = value if isinstance(value, (int, float)) or hasattr(value, "as_tuple") \
            else None
        if isinstance(value, bool) or number is None or number <= 0 or (
                kind == "int" and not isinstance(number, int)):
            r.error("E115", f"lookback `{_written(value)}` does not fit cdc_column of type "
                    f"{cdc}: it takes a positive {'whole ' if kind == 'int' else ''}number "
                    "(re-read cdc values within that distance below the watermark)",
                    p.value_span, "write e.g. `lookback: 100`")
            return False
        return number
    r.error("E115", f"lookback needs a number, date or timestamp cdc_column, not {cdc}: "
            "no distance below a text watermark is defined", p.value_span,
            "remove lookback, or use a number or timestamp cdc column")
    return False


def _delete_when(r: ModuleScope, decl: ast.ModelDecl, plan: Plan,
                 props: dict[str, ast.Property], strategy: str):
    """The delete condition typed over the output columns (a ColRef tree), None when
    not set, False on an error (E116, or the typer's own code)."""
    p = props.get("delete_when")
    if p is None:
        return None
    if not _merge_only(r, p, strategy, ("upsert",)):
        return False
    typer, before = _typer(r, decl, plan, "delete_when"), len(r.diags)
    typed = typer.type(p.value)
    if len(r.diags) > before:
        return False
    if typed.aggregate or typed.type.kind != "bool" or not typed.refs:
        why = ("it is checked row by row: no aggregates" if typed.aggregate else
               "it reads no column: it would delete every key or none" if not typed.refs
               and typed.type.kind == "bool" else f"it is {typed.type}, not a condition")
        r.error("E116", f"delete_when is a condition on each delta row; {why}",
                p.value_span, "e.g. `delete_when: op = 'd'` or `delete_when: is_deleted`")
        return False
    return typed.node


def _pins(r: ModuleScope, decl: ast.ModelDecl, plan: Plan) -> list[PinSpec]:
    output = {c.name: c for c in plan.output}
    pins = []
    for pin in decl.pins:
        if pin.kind in ("unique", "not_null"):
            if not pin.columns:
                r.error("E065", f"pin {pin.kind} needs at least one column", pin.span)
                continue
            bad = [c for c in pin.columns if c not in output]
            for name in bad:
                r.error("E011", f"pin {pin.kind}: `{name}` is not an output column of "
                        f"`{decl.name}`", _span_of(pin.columns, name, pin.span),
                        did_you_mean(name, output))
            if bad:
                continue
            pins.append(PinSpec(pin.kind, tuple(pin.columns), span=pin.span))
        elif pin.kind == "rows":
            if any(b < 0 for b in pin.bounds) or (pin.op == "between"
                                                 and pin.bounds[0] > pin.bounds[1]):
                r.error("E065", "pin rows bounds must be >= 0 and low <= high", pin.span)
                continue
            pins.append(PinSpec("rows", op=pin.op, bounds=pin.bounds, span=pin.span))
        elif pin.kind == "columns":
            contract = []
            for col in pin.contract:
                typ = resolve_type(col.type, r.diags)
                if typ is not None:
                    contract.append((col.name, typ))
            problems = contract_problems(contract, [(c.name, c.type) for c in plan.output])
            if problems:
                r.error("E060", f"`pin columns` contract of `{decl.name}` does not match its "
                        f"output: {'; '.join(problems)}", pin.span,
                        "output: " + ", ".join(f"{c.name}: {c.type}" for c in plan.output))
                continue
            pins.append(PinSpec("columns", contract=tuple(contract), span=pin.span))
        elif pin.kind == "references":
            if pin.relation in r.module.models[decl.name].pins_after:
                continue  # its relation is not resolved yet: deferred_pins
            spec = _references(r, decl, plan, pin)
            if spec is not None:
                pins.append(spec)
        elif pin.kind == "accepted":
            spec = _accepted(r, decl, plan, pin)
            if spec is not None:
                pins.append(spec)
        elif pin.kind == "holds":
            spec = _holds(r, decl, plan, pin)
            if spec is not None:
                pins.append(spec)
    return pins


def deferred_pins(r: ModuleScope, info: ModelInfo) -> None:
    """The `pin references` of a model whose relation reads the model (ModelInfo.
    pins_after), checked once that relation is resolved, after every model: they
    join the model's pins, marked to be checked after both models are built. Those
    of an earlier pass are replaced (the editor keeps an unchanged model's plan)."""
    info.plan.pins = [p for p in info.plan.pins if not p.after]
    for pin in info.decl.pins:
        if pin.kind == "references" and pin.relation in info.pins_after:
            spec = _references(r, info.decl, info.plan, pin)
            if spec is not None:
                info.plan.pins.append(replace(spec, after=True))


def _unknown_columns(r: ModuleScope, pin: ast.Pin, names, have: dict, where: str) -> bool:
    """E011 for each of `names` not in `have`; True when all are there."""
    bad = [c for c in names if c not in have]
    for name in bad:
        r.error("E011", f"pin {pin.kind}: `{name}` is not a column of {where}",
                _span_of(names, name, pin.span), did_you_mean(name, have))
    return not bad


def _references(r: ModuleScope, decl: ast.ModelDecl, plan: Plan, pin: ast.Pin
                ) -> PinSpec | None:
    """`pin references [cols] -> rel [keys]`: dbt's relationships test. The relation is
    a model (built first: resolve makes it an upstream) or a source, or the model
    itself; as many keys as columns, each pair of comparable types (E065)."""
    output = {c.name: c.type for c in plan.output}
    if pin.relation == decl.name:
        ref, theirs = RelationRef("model", decl.name), output
    elif pin.relation in r.module.models:
        other = r.module.models[pin.relation].plan
        if other is None:  # its own errors are reported
            return None
        ref, theirs = RelationRef("model", pin.relation), {c.name: c.type for c in other.output}
    elif pin.relation in r.module.sources:
        ref = RelationRef("source", pin.relation)
        theirs = dict(r.module.sources[pin.relation].columns)
    else:
        return None  # E010 from the graph
    if not pin.columns or len(pin.columns) != len(pin.ref_columns):
        r.error("E065", f"pin references needs as many key columns of `{pin.relation}` as "
                f"columns of `{decl.name}` (at least one): [{', '.join(pin.columns)}] -> "
                f"[{', '.join(pin.ref_columns)}]", pin.span,
                "pair each column with the key it references: "
                "pin references [customer_id] -> customers [id]")
        return None
    ok = _unknown_columns(r, pin, pin.columns, output, f"`{decl.name}`")
    ok = _unknown_columns(r, pin, pin.ref_columns, theirs, f"`{pin.relation}`") and ok
    if not ok:
        return None
    for mine, key in zip(pin.columns, pin.ref_columns):
        if not T.comparable(output[mine], theirs[key]) and ERROR not in (output[mine],
                                                                         theirs[key]):
            r.error("E065", f"pin references: `{mine}` is {output[mine]} but "
                    f"`{pin.relation}.{key}` is {theirs[key]}: the values can never match",
                    pin.span, "reference a key of the same type, or cast the column in a "
                    "derive first")
            return None
    return PinSpec("references", tuple(pin.columns), span=pin.span, relation=ref,
                   ref_columns=tuple(pin.ref_columns))


def _typer(r: ModuleScope, decl: ast.ModelDecl, plan: Plan, what: str = "a pin"):
    """An expression typer over the model's output columns, for a pin's expression
    (or delete_when's)."""
    from strata.semantics.expressions import ExprContext, ExpressionTyper

    by_name = {c.name: c for c in plan.output}

    def lookup(ref: ast.Column):
        if ref.qualifier is None and ref.name in by_name:
            return by_name[ref.name]
        where = "a pin" if what == "a pin" else f"`{what}`"
        return Diagnostic("E011", f"unknown column `{ref.name}` in {where} of `{decl.name}`: "
                          f"{where} reads the model's output columns", ref.span,
                          did_you_mean(ref.name, by_name))

    return ExpressionTyper(ExprContext(lookup, "pin" if what == "a pin" else what,
                                       diagnostics=r.diags, clock_allowed=False,
                                       functions=r.functions))


def _accepted(r: ModuleScope, decl: ast.ModelDecl, plan: Plan, pin: ast.Pin) -> PinSpec | None:
    """`pin accepted col in (v, ...)`: dbt's accepted_values; constants of the column's
    type (E065)."""
    output = {c.name: c.type for c in plan.output}
    if not _unknown_columns(r, pin, pin.columns, output, f"`{decl.name}`"):
        return None
    column_type = output[pin.columns[0]]
    typer, before = _typer(r, decl, plan), len(r.diags)
    values = []
    for value in pin.values:
        typed = typer.type(value)
        if len(r.diags) > before:
            return None
        if typed.refs or typed.aggregate:
            r.error("E065", "pin accepted lists constant values, not columns or "
                    "computations over rows", value.span, "write the values: "
                    "pin accepted status in ('paid', 'void')")
            return None
        if typed.type.kind == "null":
            r.error("E065", "pin accepted: NULL is never an accepted value (a NULL passes "
                    "the pin already)", value.span, "add `pin not_null [...]` to forbid NULL")
            return None
        if not T.comparable(column_type, typed.type):
            r.error("E065", f"pin accepted: `{pin.columns[0]}` is {column_type} but a value "
                    f"is {typed.type}", value.span, "list values of the column's type")
            return None
        values.append(typed.node)
    text = ", ".join(v.sql("duckdb") for v in values)
    return PinSpec("accepted", tuple(pin.columns), span=pin.span, values=tuple(values),
                   text=text)


def _holds(r: ModuleScope, decl: ast.ModelDecl, plan: Plan, pin: ast.Pin) -> PinSpec | None:
    """`pin holds <condition>`: dbt's expression test, a bool over each output row
    (E065 otherwise, or for an aggregate)."""
    typer, before = _typer(r, decl, plan), len(r.diags)
    typed = typer.type(pin.expr)
    if len(r.diags) > before:
        return None
    if typed.aggregate:
        r.error("E065", "pin holds is checked row by row: no aggregates", pin.expr.span,
                "for a bound on the row count write `pin rows`; for a total, a model "
                "that aggregates, with its own pin")
        return None
    if typed.type.kind != "bool":
        r.error("E065", f"pin holds needs a condition (bool), not {typed.type}",
                pin.expr.span, "compare it: pin holds amount >= 0")
        return None
    return PinSpec("holds", span=pin.span, expr=typed.node, text=pin_text(typed.node, plan))


def pin_text(node: exp.Expression, plan: Plan) -> str:
    """A pin's condition as SQL over the output column names, for messages."""
    from strata.sqlgen.build import bind
    from strata.sqlgen.names import column

    return bind(node.copy(), {c.id: column(c.name) for c in plan.output}).sql("duckdb")


def types_fit(declared: T.Type, actual: T.Type) -> bool:
    """Contracts compare type kinds (a decimal's exact precision is the engine's)."""
    if ERROR in (declared, actual) or actual.kind == "null":
        return True
    if declared.kind == "list" or actual.kind == "list":
        return declared.kind == actual.kind and types_fit(declared.element, actual.element)
    return declared.kind == actual.kind


def contract_problems(contract: list[tuple[str, T.Type]],
                      actual: list[tuple[str, T.Type]]) -> list[str]:
    have = dict(actual)
    want = dict(contract)
    problems = [f"`{n}` is missing" for n in want if n not in have]
    problems += [f"`{n}` is not in the contract" for n in have if n not in want]
    problems += [f"`{n}` is {have[n]}, the contract says {t}" for n, t in want.items()
                 if n in have and not types_fit(t, have[n])]
    return problems


# ---------------------------------------------------------------- tests
def check_tests(module: Module) -> None:
    diags = module.diagnostics
    for test in module.tests.values():
        given: set[str] = set()
        for block in test.blocks:
            relation = block.relation
            if block.kind == "given":
                if relation in given:
                    diags.append(Diagnostic("E066", f"test `{test.name}`: `{relation}` is given "
                                            "twice", block.span, "list all its rows in one "
                                            "`given` block"))
                given.add(relation)
            elif any(b.kind == "given" and b.relation == relation for b in test.blocks):
                diags.append(Diagnostic("E066", f"test `{test.name}`: `{relation}` is both "
                                        "given and expected", block.span,
                                        "a given model's rows replace its output: expect a "
                                        "model computed from them"))
            if relation in module.sources:
                columns = dict(module.sources[relation].columns)
            elif relation in module.models:
                plan = module.models[relation].plan
                if plan is None:
                    continue
                columns = {c.name: c.type for c in plan.output}
            else:
                diags.append(Diagnostic("E010", f"test `{test.name}`: unknown source or model "
                                        f"`{relation}`", block.span,
                                        did_you_mean(relation, [*module.sources, *module.models])))
                continue
            if block.kind == "expect" and relation not in module.models:
                diags.append(Diagnostic("E066", f"test `{test.name}`: `expect` names a model; "
                                        f"`{relation}` is a source", block.span))
            for name in block.columns:
                if name not in columns:
                    diags.append(Diagnostic("E011", f"test `{test.name}`: `{relation}` has no "
                                            f"column `{name}`", block.span,
                                            did_you_mean(name, columns)))
            if len(set(block.columns)) != len(block.columns):
                diags.append(Diagnostic("E066", f"test `{test.name}`: a column is listed twice",
                                        block.span))
            for row, span in zip(block.rows, block.row_spans):
                if len(row) != len(block.columns):
                    diags.append(Diagnostic("E066", f"test `{test.name}`: row has {len(row)} "
                                            f"values for {len(block.columns)} columns", span,
                                            "one value per listed column"))
                    continue
                for name, value in zip(block.columns, row):
                    try:
                        v = constant_value(value)
                    except ValueError:
                        diags.append(Diagnostic("E066", f"test `{test.name}`: row values must "
                                                "be constants", value.span))
                        continue
                    want = columns.get(name)
                    if want is None or v is None:
                        continue
                    got = literal_type(v)
                    if not (T.unify(want, got) or T.comparable(want, got) or
                            (want.kind == "list" and got.kind == "list")):
                        diags.append(Diagnostic("E066", f"test `{test.name}`: `{name}` is {want}, "
                                                f"the row gives {got}", value.span))
                    elif (loss := _rounded_away(want, v)) is not None:
                        diags.append(Diagnostic("E066", f"test `{test.name}`: `{name}` is {want}, "
                                                f"the row gives {v}: {loss}",
                                                value.span, "give the value the column holds"))


def _rounded_away(want: T.Type, value) -> str | None:
    """Why a number would not reach the table as written (the engine rounds it into
    the column's type), or None: 1.5 into an int, 1.2555 into a decimal(12, 2)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        return None
    if want.kind == "int" and not isinstance(value, int) and value != int(value):
        return "not a whole number"
    if want.kind == "decimal" and want.scale is not None and not isinstance(value, int):
        exponent = Decimal(str(value)).normalize().as_tuple().exponent
        if isinstance(exponent, int) and -exponent > want.scale:
            return f"more than {want.scale} digits after the point"
    return None
