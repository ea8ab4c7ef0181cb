"""The fixed function catalogue: each name maps to a SQLGlot node and a typing rule.

Nodes are built with `exp.func(name, ..., dialect="duckdb")`, which returns SQLGlot's
canonical node (DateTrunc, DateDiff, Year, ...), so every function transpiles to
every dialect. Names outside the catalogue are E016; non-deterministic ones E032.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from sqlglot import exp

from strata.semantics import types as T

Typer = Callable[[list[T.Type]], "T.Type | str"]  # a type, or an error message


@dataclass(frozen=True)
class Function:
    name: str
    min_args: int
    max_args: int | None
    typer: Typer
    build: Callable[[list[exp.Expression]], exp.Expression]
    aggregate: bool = False
    leading_unit: bool = False  # first argument is a unit string: 'day', 'month', ...
    # when the node depends on the argument types: (args, arg types) -> node
    build_typed: Callable[[list[exp.Expression], list[T.Type]], exp.Expression] | None = None


NON_DETERMINISTIC = {"now", "current_timestamp", "current_date", "current_time", "random",
                     "rand", "uuid", "gen_random_uuid", "today", "localtimestamp"}
DATE_UNIT_ORDER = ("year", "quarter", "month", "week", "day", "hour", "minute", "second")
DATE_UNITS = set(DATE_UNIT_ORDER)


def _duck(name: str) -> Callable[[list[exp.Expression]], exp.Expression]:
    # copy=False: the arguments are built for this call alone. The dialect object is
    # looked up once, not by name on every call.
    return lambda args: exp.func(name, *args, dialect=_duckdb(), copy=False)


@lru_cache(maxsize=1)
def _duckdb():
    from sqlglot.dialects.dialect import Dialect

    return Dialect.get_or_raise("duckdb")


def _same_as_first(args: list[T.Type]):
    return args[0]


def _need(pred, message):
    def typer(args):
        return message if not all(pred(a) for a in args if a.kind != "null") else None
    return typer


def _text(args):
    if any(a.kind not in ("text", "null") for a in args):
        return "expects text arguments"
    return T.TEXT


def _numeric_same(args):
    if args[0].kind not in ("int", "decimal", "double", "null"):
        return "expects a number"
    return args[0]


def _round(args):
    if args[0].kind not in ("int", "decimal", "double", "null"):
        return "expects a number"
    if len(args) > 1 and args[1].kind not in ("int", "null"):
        return "expects a whole number of digits as second argument"
    return args[0]


def _floor_ceil(args):
    if args[0].kind not in ("int", "decimal", "double", "null"):
        return "expects a number"
    return args[0] if args[0].kind != "decimal" else T.Type("decimal", args[0].precision, 0)


def _coalesce(args):
    result = args[0]
    for a in args[1:]:
        result = T.unify(result, a)
        if result is None:
            return "expects arguments of one type"
    return result


def _length(args):
    if args[0].kind not in ("text", "list", "null"):
        return "expects text or a list"
    return T.INT


def _substr(args):
    if args[0].kind not in ("text", "null") or any(a.kind not in ("int", "null") for a in args[1:]):
        return "expects (text, start int[, length int])"
    return T.TEXT


def _concat(args):
    return T.TEXT


def _date_trunc(args):
    if args[1].kind not in ("date", "timestamp", "null"):
        return "expects a date or timestamp"
    return args[1]


def _date_part(args):
    if args[0].kind not in ("date", "timestamp", "null"):
        return "expects a date or timestamp"
    return T.INT


def _date_diff(args):
    if any(a.kind not in ("date", "timestamp", "null") for a in args[1:]):
        return "expects two dates or timestamps"
    return T.INT


def _sum(args):
    a = args[0]
    if a.kind == "int":
        return T.INT
    if a.kind == "decimal":
        return T.Type("decimal", 38, a.scale)
    if a.kind in ("double", "null"):
        return T.DOUBLE
    return "expects a number"


def _avg(args):
    return T.DOUBLE if args[0].numeric or args[0].kind == "null" else "expects a number"


def _minmax(args):
    return args[0] if args[0].kind != "list" else "cannot order lists"


def _length_node(args: list[exp.Expression], types: list[T.Type]) -> exp.Expression:
    # a list's length is its element count: ArraySize renders as CARDINALITY, SIZE,
    # ARRAY_SIZE, ... (LENGTH of an array is an error on most engines)
    if types[0].kind == "list":
        return exp.ArraySize(this=args[0])
    return exp.Length(this=args[0])


def _date_trunc_node(args: list[exp.Expression], types: list[T.Type]) -> exp.Expression:
    if types[1].kind != "date":
        return exp.func("date_trunc", *args, dialect="duckdb")
    unit = args[0].name.lower()
    if unit in ("day", "hour", "minute", "second"):
        return args[1]  # a date is whole days already
    # DateTrunc, not TimestampTrunc: BigQuery's DATE_TRUNC, Spark's TRUNC. DuckDB and
    # Postgres still return a timestamp; the checker says date, so the SQL does too.
    node = exp.DateTrunc(this=args[1], unit=exp.Literal.string(unit.upper()))
    return exp.Cast(this=node, to=exp.DataType.build("DATE"))


def _count_star(args: list[exp.Expression]) -> exp.Expression:
    return exp.Count(this=args[0] if args else exp.Star())


CATALOGUE: dict[str, Function] = {f.name: f for f in [
    Function("coalesce", 1, None, _coalesce, _duck("coalesce")),
    Function("abs", 1, 1, _numeric_same, _duck("abs")),
    Function("round", 1, 2, _round, _duck("round")),
    Function("floor", 1, 1, _floor_ceil, _duck("floor")),
    Function("ceil", 1, 1, _floor_ceil, _duck("ceil")),
    Function("lower", 1, 1, _text, _duck("lower")),
    Function("upper", 1, 1, _text, _duck("upper")),
    Function("length", 1, 1, _length, lambda a: exp.Length(this=a[0]),
             build_typed=_length_node),
    Function("trim", 1, 1, _text, _duck("trim")),
    Function("substr", 2, 3, _substr, _duck("substr")),
    Function("concat", 1, None, _concat, _duck("concat")),
    Function("date_trunc", 2, 2, _date_trunc, _duck("date_trunc"), leading_unit=True,
             build_typed=_date_trunc_node),
    Function("year", 1, 1, _date_part, _duck("year")),
    Function("month", 1, 1, _date_part, _duck("month")),
    Function("day", 1, 1, _date_part, _duck("day")),
    Function("date_diff", 3, 3, _date_diff, _duck("date_diff"), leading_unit=True),
    # aggregates
    Function("count", 0, 1, lambda a: T.INT, _count_star, aggregate=True),
    Function("count_distinct", 1, 1, lambda a: T.INT,
             lambda a: exp.Count(this=exp.Distinct(expressions=[a[0]])), aggregate=True),
    Function("sum", 1, 1, _sum, lambda a: exp.Sum(this=a[0]), aggregate=True),
    Function("avg", 1, 1, _avg, lambda a: exp.Avg(this=a[0]), aggregate=True),
    Function("min", 1, 1, _minmax, lambda a: exp.Min(this=a[0]), aggregate=True),
    Function("max", 1, 1, _minmax, lambda a: exp.Max(this=a[0]), aggregate=True),
]}

EXTRACT_PARTS = {"year", "quarter", "month", "week", "day", "hour", "minute", "second",
                 "dayofweek", "dayofyear", "epoch"}
