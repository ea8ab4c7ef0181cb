"""Pins and join cardinality, checked in SQL on the engine before anything publishes.

No rows are pulled into Python except a small sample of offenders for the message.
A violation raises StrataError with a code in E060–E064.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from dialects import duckdb as duck
from strata.diagnostics import Diagnostic, StrataError
from strata.plan import Col, DeriveStage, JoinStage, PinSpec, Plan
from strata.semantics.checks import types_fit
from strata.semantics.types import Type
from strata.sqlgen.build import Relations, model_query

SAMPLE = 5


@dataclass
class CheckLog:
    """What was checked and what was skipped (and why), for --json and the display."""

    ran: list[str] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)
    statements: list[str] = field(default_factory=list)

    def sql(self, wh, statement: str):
        self.statements.append(statement)
        return wh.execute(statement)


def _cols(names) -> str:
    return ", ".join(exp.to_identifier(n, quoted=True).sql("duckdb") for n in names)


def _sample(rows, names) -> str:
    return "; ".join("(" + ", ".join(f"{n}={v!r}" for n, v in zip(names, r)) + ")"
                     for r in rows)


def pin_error(code: str, model: str, pin: PinSpec, message: str, notes=()) -> StrataError:
    return StrataError(Diagnostic(code, f"model `{model}`: {pin.describe()} violated: {message}",
                                  pin.span, "nothing was published", notes=tuple(notes)))


def check_pins(wh, relation_sql: str, plan: Plan, row_count: int, log: CheckLog) -> list[str]:
    """Check every pin of `plan` against the materialized relation; returns the names of
    the verified pins (e.g. `unique:id`)."""
    verified = []
    for pin in plan.pins:
        label = pin.describe()
        if pin.kind == "unique":
            cols = _cols(pin.columns)
            dupes = f"SELECT {cols}, count(*) AS n FROM {relation_sql} GROUP BY ALL HAVING count(*) > 1"
            count, extra = log.sql(wh, f"SELECT count(*), coalesce(sum(n), 0) FROM ({dupes})"
                                   ).fetchone()
            if count:
                sample = log.sql(wh, f"{dupes} ORDER BY n DESC LIMIT {SAMPLE}").fetchall()
                raise pin_error("E061", plan.model, pin,
                                f"{count} key value(s) shared by {extra} rows",
                                [f"sample (key, rows): {_sample(sample, [*pin.columns, 'rows'])}"])
            verified.append("unique:" + ",".join(sorted(pin.columns)))
        elif pin.kind == "not_null":
            cond = " OR ".join(f"{_cols([c])} IS NULL" for c in pin.columns)
            (count,) = log.sql(wh, f"SELECT count(*) FROM {relation_sql} WHERE {cond}").fetchone()
            if count:
                names = [c for c, _ in _columns(wh, relation_sql)]
                sample = log.sql(wh, f"SELECT * FROM {relation_sql} WHERE {cond} LIMIT {SAMPLE}"
                                 ).fetchall()
                raise pin_error("E062", plan.model, pin, f"{count} row(s) with NULL",
                                [f"sample rows: {_sample(sample, names)}"])
            verified.append("not_null:" + ",".join(sorted(pin.columns)))
        elif pin.kind == "rows":
            low, high = _bounds(pin)
            if not (low <= row_count <= high):
                raise pin_error("E063", plan.model, pin, f"the model has {row_count} rows")
            verified.append(label)
        elif pin.kind == "columns":
            actual = _columns(wh, relation_sql)
            problems = contract_problems_engine(pin.contract, actual)
            if problems:
                raise pin_error("E060", plan.model, pin, "; ".join(problems))
            verified.append(label)
        log.ran.append(label)
    return verified


def _bounds(pin: PinSpec) -> tuple[int, int]:
    big = 1 << 62
    if pin.op == "between":
        return pin.bounds[0], pin.bounds[1]
    value = pin.bounds[0]
    return {">=": (value, big), "<=": (0, value), "=": (value, value)}[pin.op]


def _columns(wh, relation_sql: str) -> list[tuple[str, str]]:
    return [(r[0], r[1]) for r in wh.execute(f"DESCRIBE SELECT * FROM {relation_sql}").fetchall()]


def contract_problems_engine(contract, actual: list[tuple[str, str]]) -> list[str]:
    have = dict(actual)
    want = dict(contract)
    problems = [f"`{n}` is missing" for n in want if n not in have]
    problems += [f"`{n}` is not in the contract" for n in have if n not in want]
    for name, declared in want.items():
        if name in have and not _kind_fits(declared, have[name]):
            problems.append(f"`{name}` is {have[name]}, the contract says {declared}")
    return problems


def _kind_fits(declared: Type, engine_type: str) -> bool:
    kind = duck.type_kind(engine_type)
    if declared.kind == "list":
        return kind.startswith("list<") and _kind_fits(declared.element, engine_type.strip()[:-2])
    if kind.startswith("other"):
        return False
    return types_fit(declared, Type(kind))


# ---------------------------------------------------------------- join cardinality
def check_joins(wh, plan: Plan, relations: Relations, relation_sql_of,
                verified_unique, log: CheckLog) -> None:
    """Every `join`/`join_left` without `many`: no left row may match two right rows.

    `verified_unique(ref, columns)` tells whether the right side's uniqueness on exactly
    those columns is already pinned and verified (then the check is skipped).
    """
    for index, stage in enumerate(plan.stages):
        if not isinstance(stage, JoinStage) or stage.many:
            continue
        label = f"join {stage.alias} on {', '.join(c.name for _, c in stage.keys) or '?'}"
        if not stage.keys:
            log.skipped.append({"check": f"join {stage.alias}", "reason":
                                "the condition is not a conjunction of equalities; fan-out "
                                "cannot be checked by key"})
            continue
        key_names = [c.name for _, c in stage.keys]
        if verified_unique(stage.relation, key_names):
            log.skipped.append({"check": label, "reason": f"`{stage.relation.name}` pins unique "
                                f"[{', '.join(key_names)}], verified"})
            continue
        right = relation_sql_of(stage.relation)
        cols = _cols(key_names)
        not_null = " AND ".join(f"{_cols([k])} IS NOT NULL" for k in key_names)
        dupes = (f"SELECT {cols}, count(*) AS n FROM {right} WHERE {not_null} "
                 f"GROUP BY ALL HAVING count(*) > 1")
        (count,) = log.sql(wh, f"SELECT count(*) FROM ({dupes})").fetchone()
        log.ran.append(label)
        if not count:
            continue
        # Duplicated right keys only matter when some left row matches them.
        left = _left_keys_query(plan, index, relations)
        match = " AND ".join(f"__l.{_cols([f'__k{i}'])} = __d.{_cols([k])}"
                             for i, k in enumerate(key_names))
        matched_sql = (f"WITH __left AS ({left}), __d AS ({dupes}) SELECT __d.* FROM __d "
                       f"WHERE EXISTS (SELECT 1 FROM __left AS __l WHERE {match}) "
                       f"ORDER BY n DESC")
        sample = log.sql(wh, matched_sql + f" LIMIT {SAMPLE}").fetchall()
        if sample:
            (total,) = log.sql(wh, f"SELECT count(*) FROM ({matched_sql})").fetchone()
            raise StrataError(Diagnostic(
                "E064", f"model `{plan.model}`: `join {stage.relation.name}` is many-to-one, but "
                f"{total} key value(s) of `{stage.alias}` match several rows",
                stage.span, "fix the data, or write `join many` if the fan-out is intended",
                notes=(f"key: {', '.join(key_names)}; sample (key, rows): "
                       f"{_sample(sample, [*key_names, 'rows'])}",)))


def _left_keys_query(plan: Plan, index: int, relations: Relations) -> str:
    """The left side's join key values, as a query: the plan cut before the join."""
    keys = [(Col(-(i + 1), f"__k{i}", Type("null")), node.copy())
            for i, (node, _) in enumerate(plan.stages[index].keys)]
    cut = Plan(plan.model, plan.base, [*plan.stages[:index], DeriveStage(keys)],
               [c for c, _ in keys], plan.reads)
    return model_query(cut, relations).sql(dialect="duckdb")
