"""Rows from nothing (issue 40): `range(a, b [, step])` wherever a relation goes.

`range(a, b, step)` is the rows a, a + step, a + 2·step, ... that come before b (after
b for a negative step): half-open, like Python's and DuckDB's range. Its one column is
named by the relation's name (`from range(1, 4) as n` is n = 1, 2, 3; without `as`,
`range`). Bounds are ints, dates or timestamps; the step is an int literal for ints
(default 1) and an interval literal for dates and timestamps (`interval '1 month'`;
default one day for dates). A bound is a constant: literals, run_date(),
run_timestamp(), and expressions of them; one reading a column is E180.

Every range is a series of ints (dialects/series.py spells it per engine). A date or
timestamp range is `date_add(unit, i, a)` for the offsets i = 0, k, 2k, ... up to the
units between the bounds (date_diff), kept while before b: the catalogue's own date
functions, so the rows are the same on every engine (a month step from the 31st gives
the last day of shorter months and then the 31st again, as date_add does).

What the check can know, it says: a step of 0 or of the wrong kind (E181), literal
bounds a step never joins, which give no rows (E182), and more than LIMIT rows from
literal bounds (E183).
"""

from __future__ import annotations

import calendar
import datetime as dt
from typing import Protocol

from sqlglot import exp

from dialects.series import series
from strata.diagnostics import Diagnostic, Span
from strata.plan import BaseScope, Plan, RelationRef
from strata.semantics import functions as F
from strata.semantics import types as T
from strata.semantics.expressions import ERROR, ExprContext, ExpressionTyper, Typed, typed
from strata.semantics.scopes import ModuleScope
from strata.syntax import ast


class Reader(Protocol):
    """What a range asks of the model reading it (`steps.ModelResolver`, which calls
    `range_relation`)."""

    r: ModuleScope
    decl: ast.ModelDecl
    clock: set[str]

    def error(self, code: str, message: str, span: Span | None,
              hint: str | None = None) -> None: ...


LIMIT = 10_000_000  # rows a range of literal bounds may make
GENERATOR = "range"
HINT = F.ROW_GENERATOR_HINT
DATE_STEPS = ("year", "quarter", "month", "week", "day")
TIME_STEPS = ("hour", "minute", "second")
_FIXED = {"week": dt.timedelta(weeks=1), "day": dt.timedelta(days=1),
          "hour": dt.timedelta(hours=1), "minute": dt.timedelta(minutes=1),
          "second": dt.timedelta(seconds=1)}
_MONTHS = {"year": 12, "quarter": 3, "month": 1}
OFFSET = "__offset"  # the series column of a date or timestamp range (never visible)


def range_relation(mr: Reader, call: ast.RelationCall,
                   alias: str) -> tuple[RelationRef, list[tuple[str, T.Type]]] | None:
    """The relation `call` makes (an inline plan over a series), or None after saying
    what is wrong."""
    if call.name != GENERATOR:
        mr.error("E185", f"`{call.name}(...)` is not a relation", call.span,
                 HINT if call.name in F.ROW_GENERATOR_NAMES else
                 f"a relation is a source, a model, a sub-pipeline `(from x | ...)` or "
                 f"`range(a, b, step)`; `{call.name}` is none of them")
        return None
    if not 2 <= len(call.args) <= 3:
        mr.error("E031", f"`range` takes 2 or 3 arguments (a, b[, step]), found "
                 f"{len(call.args)}", call.span, HINT)
        return None
    bounds = [_bound(mr, arg) for arg in call.args[:2]]
    if any(b is None for b in bounds):
        return None
    kind = _kind(mr, call, bounds)
    if kind is None:
        return None
    step = _step(mr, call, kind)
    if step is None:
        return None
    count, unit = step
    if not _size_ok(mr, call, kind, count, unit):
        return None
    if kind == "int":
        plan = _int_plan(mr, alias, bounds[0], bounds[1], count)
    else:
        plan = _time_plan(mr, call, alias, kind, count, unit)
    if plan is None:
        return None
    return RelationRef("inline", alias, plan), [(c.name, c.type) for c in plan.output]


# ---------------------------------------------------------------- checks
def _bound(mr: Reader, arg: ast.Expr) -> Typed | None:
    """A bound typed where no column can be read (E180)."""
    before = len(mr.r.diags)
    result = _typer(mr, {}).type(arg)
    if len(mr.r.diags) > before or result.type == ERROR:
        return None
    return result


def _typer(mr: Reader, columns: dict[str, object]) -> ExpressionTyper:
    def lookup(ref: ast.Column):
        if ref.qualifier is None and ref.name in columns:
            return columns[ref.name]
        if ref.qualifier is None and ref.name.lower() in F.NON_DETERMINISTIC:
            return Diagnostic("E032", f"`{ref.name}` is not deterministic", ref.span,
                              F.CLOCK_HINT)
        shown = f"{ref.qualifier}.{ref.name}" if ref.qualifier else ref.name
        return Diagnostic("E180", f"a bound of `range` reads the column `{shown}`", ref.span,
                          "a range's bounds are constants: literals, run_date(), "
                          "run_timestamp() and expressions of them; to keep the rows of a "
                          "range between columns, join it: `join many range(...) as d on "
                          "d >= start_day and d < end_day`")
    return ExpressionTyper(ExprContext(lookup, "range", diagnostics=mr.r.diags,
                                       clock=mr.clock))


def _kind(mr: Reader, call: ast.RelationCall, bounds: list[Typed]) -> str | None:
    kinds = [b.type.kind for b in bounds]
    if kinds[0] == kinds[1] and kinds[0] in ("int", "date", "timestamp"):
        return kinds[0]
    mr.error("E031", f"`range` counts from one int, date or timestamp to another, found "
             f"{bounds[0].type} and {bounds[1].type}", call.span,
             "cast a bound so both have one type: `cast(run_timestamp() as date)`")
    return None


def _step(mr: Reader, call: ast.RelationCall, kind: str) -> tuple[int, str | None] | None:
    """(count, unit) of the step: unit None for ints."""
    arg = call.args[2] if len(call.args) > 2 else None
    span = arg.span if arg is not None else call.span
    if kind == "int":
        if arg is None:
            return 1, None
        if not (isinstance(arg, ast.Literal) and arg.kind == "int"):
            what = "an interval, not a whole number" if _is_interval(arg) else "not a whole-number literal"
            return _bad_step(mr, span, f"the step of a range of ints is {what}",
                             "step by a whole number: `range(0, 100, 5)`")
        if arg.value == 0:
            return _bad_step(mr, span, "a step of 0 never reaches the end",
                             "step by a whole number other than 0: 1 counts up, -1 down")
        return arg.value, None
    if arg is None:
        if kind == "date":
            return 1, "day"
        return _bad_step(mr, span, "a range of timestamps needs a step",
                         "give it as an interval: `range(a, b, interval '1 hour')`")
    if not _is_interval(arg):
        return _bad_step(mr, span, f"the step of a range of {kind}s is not an interval literal",
                         "step by an interval: `interval '1 day'`, `interval '1 month'`, "
                         "`interval '-7 days'`")
    step = arg.value
    if step.count == 0:
        return _bad_step(mr, span, "a step of 0 never reaches the end",
                         "step by an interval other than 0: `interval '1 day'` counts up, "
                         "`interval '-1 day'` down")
    if kind == "date" and step.unit in TIME_STEPS:
        return _bad_step(mr, span, f"a range of dates steps by whole days, not by {step.unit}s",
                         "step by days, weeks, months, quarters or years, or count "
                         "timestamps: `range(cast(a as timestamp), cast(b as timestamp), "
                         f"interval '1 {step.unit}')`")
    return step.count, step.unit


def _is_interval(arg: ast.Expr) -> bool:
    return isinstance(arg, ast.Literal) and arg.kind == "interval"


def _bad_step(mr: Reader, span: Span, message: str, hint: str) -> None:
    mr.error("E181", message, span, hint)


def _size_ok(mr: Reader, call: ast.RelationCall, kind: str, count: int,
             unit: str | None) -> bool:
    """With literal bounds, the number of rows is known: none is E182, more than LIMIT
    E183."""
    first, end = (_literal(a) for a in call.args[:2])
    if first is None or end is None:
        return True  # run_date() and expressions: only the run knows
    rows = _rows(first, end, count, unit)
    shown = f"interval '{count} {unit}'" if unit else str(count)
    if rows == 0:
        way = "up" if count > 0 else "down"
        mr.error("E182", f"`range` gives no rows: from {_shown(first)} a step of {shown} "
                 f"counts {way}, never {'before' if count > 0 else 'after'} "
                 f"{_shown(end)}", call.span,
                 "the end is not included: swap the bounds, or step the other way "
                 f"({'-1' if count > 0 else '1'}" + (f" {unit}" if unit else "") + ")")
        return False
    if rows > LIMIT:
        mr.error("E183", f"`range` makes {rows:,} rows, more than {LIMIT:,}", call.span,
                 "narrow the bounds or take a larger step; a spine of days from 1900 "
                 "to 2100 is 73,049 rows")
        return False
    return True


def _literal(arg: ast.Expr):
    if isinstance(arg, ast.Literal) and arg.kind in ("int", "date", "timestamp"):
        return arg.value
    return None


def _shown(value) -> str:
    if isinstance(value, dt.datetime):
        return f"timestamp '{value.isoformat(sep=' ')}'"
    if isinstance(value, dt.date):
        return f"date '{value.isoformat()}'"
    return str(value)


def _rows(first, end, count: int, unit: str | None) -> int:
    """How many of first, first + step, ... come before `end` (after it going down)."""
    if unit is None:
        span = end - first if count > 0 else first - end
        return max(0, -(-span // abs(count)))
    if unit in _FIXED:
        if isinstance(first, dt.datetime) != isinstance(end, dt.datetime):
            return 1  # pragma: no cover - bounds are of one kind
        step = _FIXED[unit] * abs(count)
        span = end - first if count > 0 else first - end
        return max(0, -(-span // step))
    months = _MONTHS[unit] * count
    apart = (end.year - first.year) * 12 + end.month - first.month
    n = max(0, apart // months - 1)
    while _before(_add_months(first, n * months), end, count):
        n += 1
        if n > LIMIT:
            break
    return n


def _before(value, end, count: int) -> bool:
    if value is None:
        return False
    return value < end if count > 0 else value > end


def _add_months(value, months: int):
    """DuckDB's date_add of months: the day clamped to the month's last; None past the
    calendar's years."""
    total = value.year * 12 + value.month - 1 + months
    year, month = divmod(total, 12)
    if not 1 <= year <= 9999:
        return None
    day = min(value.day, calendar.monthrange(year, month + 1)[1])
    return value.replace(year=year, month=month + 1, day=day)


# ---------------------------------------------------------------- plans
def _int_plan(mr: Reader, alias: str, first: Typed, end: Typed, step: int) -> Plan:
    col = mr.r.new_col(alias, T.INT, alias)
    ref = RelationRef("series", alias, series=series(typed(first), typed(end), step))
    return Plan(mr.decl.name, BaseScope(ref, alias, [col]), [], [col], [],
                clock=frozenset(mr.clock))


def _time_plan(mr: Reader, call: ast.RelationCall, alias: str, kind: str, count: int,
               unit: str) -> Plan | None:
    """date_add(unit, i, a) for i in the series [0, date_diff(unit, a, b) ± 1) by
    `count`, kept while before b (after b going down)."""
    offset_name = OFFSET if alias != OFFSET else OFFSET + "_2"
    offset = mr.r.new_col(offset_name, T.INT, alias)
    first, end = call.args[:2]
    span = call.span

    def unit_lit() -> ast.Literal:
        return ast.Literal(unit, "text", span)

    diff = ast.Call("date_diff", (unit_lit(), first, end), span)
    stop_ast = ast.BinOp("+" if count > 0 else "-", diff, ast.Literal(1, "int", span), span)
    value_ast = ast.Call("date_add", (unit_lit(), ast.Column(offset_name, None, span), first),
                         span)
    keep_ast = ast.BinOp("<" if count > 0 else ">", value_ast, end, span)
    typer = _typer(mr, {offset_name: offset})
    stop, value, keep = (typer.type(e) for e in (stop_ast, value_ast, keep_ast))
    if ERROR in (stop.type, value.type, keep.type):  # pragma: no cover - bounds are checked
        return None
    col = mr.r.new_col(alias, value.type)
    ref = RelationRef("series", alias, series=series(exp.Literal.number(0), typed(stop), count))
    base = BaseScope(ref, alias, [offset], lets=[(col, value.node)], preds=[keep.node])
    return Plan(mr.decl.name, base, [], [col], [], clock=frozenset(mr.clock))
