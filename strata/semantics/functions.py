"""The fixed function catalogue: each name maps to a SQLGlot node and a typing rule.

Nodes are built with `exp.func(name, ..., dialect="duckdb")`, which returns SQLGlot's
canonical node (DateTrunc, DateDiff, Year, ...), so every function transpiles to
every dialect. Names outside the catalogue are E016; non-deterministic ones E032.

Each entry also carries its user documentation (`signature`, `doc`, and an
`example` with DuckDB's result), from which docs/LANGUAGE.md is written and which
tests/test_functions_catalogue.py runs. A function whose SQL some engine means
otherwise is tagged (`TAG` in the node's meta, with the Strata name): the
dialects' function tables (dialects/functions.py) spell it per engine, or refuse it
(E091) where the engine cannot express DuckDB's result.

Over 700 lines on purpose: one job, the catalogue, whose table (CATALOGUE, at the
end) names each entry's typing rule and node builder defined above it; split, every
rule would only become public to be named from elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from functools import lru_cache

from sqlglot import exp

from dialects import regex
from dialects.formats import format_tokens
from dialects.json_text import json_path_steps
from dialects.spelling import TAG
from strata.semantics import types as T
from strata.sqlgen.clock import NAMES, clock_column
from strata.syntax import ast

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
    # arguments that must be literals (a format, a pattern): the source arguments ->
    # an error message, or None
    check: Callable[[list[ast.Expr]], str | None] | None = None
    # for a leading-unit function whose type depends on the unit: (unit, types) -> type
    unit_typer: Callable[[str, list[T.Type]], T.Type | str] | None = None
    signature: str = ""  # `name(arg type, ...) -> type`, for the docs
    doc: str = ""  # one line: what it returns, and on NULL
    example: tuple[str, object] = ("", None)  # (a Strata expression, DuckDB's result)




NON_DETERMINISTIC = {"now", "current_timestamp", "current_date", "current_time", "random",
                     "rand", "uuid", "gen_random_uuid", "today", "localtimestamp",
                     # any row of the group, whichever the engine meets first
                     "any_value", "arbitrary"}
CLOCK_FUNCTIONS = NAMES  # run_date, run_timestamp (strata/sqlgen/clock.py)
# E032's hint: the run's clock keeps content identity where now() would not
CLOCK_HINT = ("it would give a new result on every statement and break content identity; "
              "use run_date() or run_timestamp(): the moment the run started, bound once "
              "and recorded in its history")
# names deliberately left out, with what to write instead (the E016 hint)
INSTEAD = {
    # DuckDB's hash is an unsigned 64-bit value no other engine computes, outside
    # Strata's int, and not promised to stay the same across DuckDB versions: a
    # surrogate key from it would change with the engine
    "hash": "for a surrogate key use md5(...) (of cast(x as text), or of a || '|' || b): "
            "the same digest on every engine",
    "listagg": "string_agg(x, ',')", "group_concat": "string_agg(x, ',')",
}
# rows from nothing are a relation, not a function (strata/semantics/ranges.py)
ROW_GENERATOR_HINT = ("rows from nothing are a relation in Strata: `from range(1, 11) as n`, "
                      "`from range(date '2024-01-01', run_date(), interval '1 day') as day` "
                      "(half-open: the end is not included)")
ROW_GENERATOR_NAMES = ("generate_series", "generate_array", "generate_date_array", "sequence",
                       "array_generate_range", "range", "generator")
INSTEAD.update({name: ROW_GENERATOR_HINT for name in ROW_GENERATOR_NAMES})
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
    if len(args) == 1 and args[0].kind == "decimal":
        # DuckDB's round(decimal(p, s)) is a decimal(p, 0): round(9999.99) = 10000
        return T.Type("decimal", args[0].precision, 0)
    return args[0]


def _check_digits(args):
    """round's digits are a literal: DuckDB rounds a decimal to a constant scale only,
    and its round of a double takes an INTEGER (Strata's int column is a BIGINT)."""
    if len(args) < 2 or _literal_int(args[1]) is not None:
        return None
    return "needs a whole-number literal of digits, such as round(x, 2) or round(x, -3)"


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


def _concat_node(args: list[exp.Expression], types: list[T.Type]) -> exp.Expression:
    """CONCAT of the arguments, each one not text cast to text first: DuckDB writes a
    bool `true`, a double its shortest digits (`1000000000000000.0`), and skips a NULL;
    an engine's CONCAT of the raw values writes its own (PostgreSQL `t`, Spark
    `1.0E15`, a NULL literal Spark cannot type). The casts are spelled per engine."""
    texts = [a if t.kind in ("text", "list") else _to_text(a) for a, t in zip(args, types)]
    return exp.func("concat", *texts, dialect=_duckdb(), copy=False)


def _to_text(node: exp.Expression) -> exp.Expression:
    cast = exp.Cast(this=node, to=exp.DataType.build("TEXT"))
    cast.type = T.TEXT.to_sqlglot()
    return cast


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


# ---------------------------------------------------------------- issue 16: more functions

def tagged(name: str, node: exp.Expression) -> exp.Expression:
    """`node` marked as catalogue function `name`, so a dialect can spell it its way."""
    node.meta[TAG] = name
    return node


def _double(x: exp.Expression) -> exp.Expression:
    """x as a double: each engine computes these functions of a double alike (of an int
    or decimal, PostgreSQL answers NUMERIC, DuckDB a DECIMAL median)."""
    if x.type is not None and x.type.is_type("DOUBLE"):
        return x
    return exp.Cast(this=x, to=exp.DataType.build("DOUBLE"))


def _args(*kinds: tuple[str, ...], result: T.Type | None = None):
    """A typer for fixed argument kinds (each a tuple of kinds; NULL fits all);
    the result is `result`, or the first argument's type."""
    words = " and ".join("/".join(k) for k in kinds)

    def typer(args):
        for a, allowed in zip(args, kinds):
            if a.kind not in (*allowed, "null"):
                return f"expects {words}"
        return result if result is not None else args[0]
    return typer


NUM = ("int", "decimal", "double")
TXT = ("text",)
WHEN = ("date", "timestamp")


def _unified(args):
    result = args[0]
    for a in args[1:]:
        result = T.unify(result, a)
        if result is None:
            return "expects arguments of one type"
    if result.kind == "list":
        return "cannot order lists"
    return result


def _nullif(args):
    if T.unify(args[0], args[1]) is None or not T.comparable(args[0], args[1]):
        return "expects two values of one type"
    return args[0] if args[0].kind != "null" else args[1]


def _literal_text(arg: ast.Expr) -> str | None:
    return arg.value if isinstance(arg, ast.Literal) and arg.kind == "text" else None


def _literal_int(arg: ast.Expr) -> int | None:
    if isinstance(arg, ast.UnaryOp) and arg.op == "-":
        inner = _literal_int(arg.operand)
        return -inner if inner is not None else None
    return arg.value if isinstance(arg, ast.Literal) and arg.kind == "int" else None


def _literal_number(arg: ast.Expr):
    if isinstance(arg, ast.Literal) and arg.kind in ("int", "decimal", "double"):
        return arg.value
    return None


def _check_fill(args):
    fill = _literal_text(args[2])
    return None if fill else "needs a non-empty text literal to pad with, such as ' ' or '0'"


def _check_split(args):
    delimiter, index = _literal_text(args[1]), _literal_int(args[2])
    if not delimiter:
        return "needs a non-empty text literal as delimiter"
    if not index:
        return "needs a whole-number literal position: 1 is the first part, -1 the last"
    return None


def _check_separator(args):
    return None if _literal_text(args[1]) is not None else "needs a text literal separator"


def _check_fraction(args):
    q = _literal_number(args[1])
    return None if q is not None and 0 <= q <= 1 else "needs a literal fraction in [0, 1]"


def _check_format(args):
    fmt = _literal_text(args[1])
    if fmt is None:
        return "needs a text literal format, such as '%Y-%m-%d'"
    tokens = format_tokens(fmt)
    return tokens if isinstance(tokens, str) else None


def _pattern(args) -> regex.Pattern | str:
    text = _literal_text(args[1])
    if text is None:
        return "needs a text literal pattern, such as '[0-9]+'"
    parsed = regex.parse(text)
    return f"pattern {text!r} {parsed}" if isinstance(parsed, str) else parsed


def _check_pattern(args):
    parsed = _pattern(args)
    return parsed if isinstance(parsed, str) else None


def _check_replace(args):
    parsed = _pattern(args)
    if isinstance(parsed, str):
        return parsed
    text = _literal_text(args[2])
    if text is None:
        return "needs a text literal replacement"
    pieces = regex.replacement(text)
    if isinstance(pieces, str):
        return f"replacement {text!r} {pieces}"
    missing = [n for kind, n in pieces if kind == "group" and int(n) > parsed.groups]
    if missing:
        return f"replacement names group {missing[0]}; the pattern has {parsed.groups}"
    if len(args) > 3 and _literal_text(args[3]) != "g":
        return "takes 'g' (every match) as fourth argument, or none (the first match)"
    return None


def _check_extract(args):
    parsed = _pattern(args)
    if isinstance(parsed, str):
        return parsed
    group = _literal_int(args[2]) if len(args) > 2 else 0
    if group is None or not 0 <= group <= parsed.groups:
        return (f"needs a literal group number from 0 (the whole match) to {parsed.groups} "
                "(the pattern's groups)")
    return None


# ------------------------------------------------------------ builders

def _fn(name: str, cls: type[exp.Func], *keys: str, cast_double: bool = False):
    """Build node `cls` with the arguments under `keys`, tagged `name`."""
    def build(args):
        values = [_double(a) if cast_double else a for a in args]
        return tagged(name, cls(**dict(zip(keys, values))))
    return build


def _anon(name: str, sql_name: str):
    return lambda args: tagged(name, exp.Anonymous(this=sql_name, expressions=list(args)))


def _math(name: str, cls: type[exp.Func]):
    return lambda args: tagged(name, cls(this=_double(args[0])))


def _sign(args):
    return tagged("sign", exp.Cast(this=exp.Sign(this=args[0]),
                                   to=exp.DataType.build("BIGINT")))


def _log10(args):
    return tagged("log10", exp.Log(this=exp.Literal.number(10), expression=_double(args[0])))


def _contains(args):
    return tagged("contains", exp.GT(this=exp.StrPosition(this=args[0], substr=args[1]),
                                     expression=exp.Literal.number(0)))


def _pad(name: str, left: bool):
    def build(args):
        # DuckDB's lpad takes an INTEGER width, and no BIGINT narrows to it implicitly
        width = exp.Cast(this=args[1], to=exp.DataType.build("INT"))
        return tagged(name, exp.Pad(this=args[0], expression=width, fill_pattern=args[2],
                                    is_left=left))
    return build


def _count_if(args):
    """COUNT(CASE WHEN b THEN 1 END): 0 on no rows or no true, on every engine."""
    case = exp.Case(ifs=[exp.If(this=args[0], true=exp.Literal.number(1))])
    return exp.Count(this=case)


def _string_agg(args):
    """The non-NULL values joined in ascending code-point order: an order-free
    aggregate, so a snapshot's content hash does not depend on the engine's plan."""
    value, separator = args
    order = exp.Order(this=value, expressions=[exp.Ordered(this=value.copy(),
                                                           nulls_first=False)])
    return tagged("string_agg", exp.GroupConcat(this=order, separator=separator))


def _list_agg_type(args):
    if args[0].kind == "list":
        return "cannot order lists"
    return T.list_of(args[0] if args[0].kind != "null" else T.TEXT)


def _list_agg(args):
    """The non-NULL values as a list in ascending order (text by code point): order-free,
    so a snapshot's content does not depend on the engine's plan; NULL for none."""
    value = args[0]
    agg = exp.ArrayAgg(this=exp.Order(this=value, expressions=[
        exp.Ordered(this=value.copy(), nulls_first=False)]))
    kept = exp.Not(this=exp.Is(this=value.copy(), expression=exp.Null()))
    return tagged("list_agg", exp.Filter(this=agg, expression=exp.Where(this=kept)))


def _arg_extreme_type(args):
    if args[0].kind == "list" or args[1].kind == "list":
        return "cannot order lists"
    return args[0]


def _operand(x: exp.Expression) -> exp.Expression:
    """x as one term, for `x IS NULL` (a plan's column reference is bound in
    parentheses where needed)."""
    if isinstance(x, (exp.Column, exp.Literal, exp.Func, exp.Paren, exp.Cast)) or \
            type(x).__name__ == "ColRef":
        return x
    return exp.Paren(this=x)


def _arg_extreme(name: str, cls: type[exp.AggFunc]):
    """arg_min/arg_max(x, by): x of the row with the smallest (largest) `by` among the
    rows where neither is NULL (DuckDB's arg_min skips both), ties broken by x itself:
    the last item of the smallest (largest) (by, x) pair, so every engine and every plan
    gives the same row. DuckDB alone would return whichever tied row it met first."""
    def build(args):
        value, by = args
        kept = exp.and_(exp.Not(this=exp.Is(this=_operand(value.copy()), expression=exp.Null())),
                        exp.Not(this=exp.Is(this=_operand(by.copy()), expression=exp.Null())),
                        copy=False)
        pair = exp.Tuple(expressions=[by, value.copy()])
        return tagged(name, exp.Filter(this=cls(this=value, expression=pair),
                                       expression=exp.Where(this=kept)))
    return build


def _median(args):
    return tagged("median", exp.Median(this=_double(args[0])))


def _quantile(args):
    return tagged("quantile_cont", exp.PercentileCont(this=_double(args[0]),
                                                     expression=args[1]))


def _date_add_node(sign: int):
    def build(args: list[exp.Expression], types: list[T.Type]) -> exp.Expression:
        unit, count, when = args
        name = original = unit.name.lower()
        if sign < 0:
            count = exp.Neg(this=exp.Paren(this=count))
        factor = {"quarter": ("month", 3), "week": ("day", 7)}.get(name)
        if factor:
            name = factor[0]
            count = exp.Mul(this=exp.Paren(this=count), expression=exp.Literal.number(factor[1]))
        result = _date_add_type(original, types)
        if types[2].kind == "date" and result == T.TIMESTAMP:
            when = exp.Cast(this=when, to=exp.DataType.build("TIMESTAMP"))
        node = exp.TimestampAdd(this=when, expression=count, unit=exp.var(name.upper()))
        return tagged("date_add", exp.Cast(this=node, to=result.to_sqlglot()))
    return build


def _date_add_type(unit: str, args: list[T.Type]) -> T.Type | str:
    """A date plus days (or more) is a date; plus hours, minutes or seconds, or a
    timestamp plus anything, a timestamp."""
    if args[1].kind not in ("int", "null") or args[2].kind not in (*WHEN, "null"):
        return "expects (unit, int, date or timestamp)"
    if args[2].kind == "date" and unit not in TIME_UNITS:
        return T.DATE
    return T.TIMESTAMP


TIME_UNITS = ("hour", "minute", "second")


def _typed_by_unit(args):
    return _date_add_type("day", args)  # without a known unit (unit_typer knows it)


def _strftime(args):
    return tagged("strftime", exp.TimeToStr(this=args[0], format=args[1]))


def _json_text(args):
    """The text of a string leaf only: DuckDB's JSON_EXTRACT_STRING also prints numbers
    (1.50 as '1.5', 1e2 as '100.0') and objects, in forms no other engine prints."""
    document, path = args
    is_string = exp.EQ(this=exp.Anonymous(this="JSON_TYPE", expressions=[document.copy(), path.copy()]),
                       expression=exp.Literal.string("VARCHAR"))
    text = exp.Anonymous(this="JSON_EXTRACT_STRING", expressions=[document, path])
    return tagged("json_text", exp.Case(ifs=[exp.If(this=is_string, true=text)]))


def _check_json_path(args):
    path = _literal_text(args[1])
    if path is None:
        return "needs a text literal path, such as '$.a.b[0]'"
    steps = json_path_steps(path)
    return steps if isinstance(steps, str) else None


# the codes strptime reads: numbers only (names such as %b are read in the engine's
# locale, and no engine but DuckDB has been checked to read them alike)
STRPTIME_CODES = ("Y", "y", "m", "d", "H", "M", "S", "f", "%")


def _strptime(args):
    return tagged("strptime", exp.Anonymous(this="STRPTIME", expressions=list(args)))


def _check_parse_format(args):
    fmt = _literal_text(args[1])
    if fmt is None:
        return "needs a text literal format, such as '%Y-%m-%d %H:%M:%S'"
    tokens = format_tokens(fmt)
    if isinstance(tokens, str):
        return tokens
    names = [v for k, v in tokens if k == "code" and v not in STRPTIME_CODES]
    if names:
        return (f"reads numbers only: `%{names[0]}` is not read; codes: "
                + " ".join("%" + c for c in STRPTIME_CODES))
    return None


def _make_date(args):
    return tagged("make_date", exp.Anonymous(this="MAKE_DATE", expressions=list(args)))


def _split_part(args):
    return tagged("split_part", exp.SplitPart(this=args[0], delimiter=args[1],
                                              part_index=args[2]))


def _regexp(name: str, default: exp.Expression | None = None):
    """REGEXP_MATCHES / REGEXP_REPLACE / REGEXP_EXTRACT as DuckDB spells them, the
    pattern as written (dialects/regex.py renders it for the other engines); an
    omitted group is 0."""
    def build(args):
        extra = [default.copy()] if default is not None and len(args) == 2 else []
        return tagged(name, exp.Anonymous(this=name.upper(), expressions=[*args, *extra]))
    return build


def _extremes(name: str, cls: type[exp.Func]):
    def build(args):
        return tagged(name, cls(this=args[0], expressions=list(args[1:]), ignore_nulls=True))
    return build


# ---------------------------------------------------------------- try_cast

# what try_cast reads text as: each engine's spelling reproduces DuckDB's accepted
# forms exactly (dialects/functions.py), so NULL means the same on every engine
TRY_CAST_TARGETS = ("int", "bool")

def _cannot_fail(source: T.Type, target: T.Type) -> bool:
    """Casts that succeed on every value, which try_cast leaves plain."""
    if target.kind == "text" or source.kind == "null" or source == target:
        return True
    pairs = {("int", "double"), ("decimal", "double"), ("date", "timestamp"),
             ("timestamp", "date"), ("bool", "int"), ("int", "bool")}
    return (source.kind, target.kind) in pairs


def try_cast(node: exp.Expression, source: T.Type, target: T.Type) -> exp.Expression | str:
    """try_cast(x as T): DuckDB's TRY_CAST, tagged so each engine spells its accepted
    forms; or the plain cast where none can fail; or what is not supported."""
    if source.kind == "text" and target.kind in TRY_CAST_TARGETS:
        return tagged("try_cast", exp.TryCast(this=node, to=target.to_sqlglot()))
    if _cannot_fail(source, target):
        return exp.Cast(this=node, to=target.to_sqlglot())
    return (f"try_cast of {source} to {target} is not supported: it reads text as "
            f"{' or '.join(TRY_CAST_TARGETS)}, and leaves casts that cannot fail plain")


CATALOGUE: dict[str, Function] = {f.name: f for f in [
    Function("coalesce", 1, None, _coalesce, _duck("coalesce"),
             signature="coalesce(x: T, ...) -> T",
             doc="the first argument that is not NULL; NULL when all are",
             example=("coalesce(null, 2, 3)", 2)),
    Function("abs", 1, 1, _numeric_same, _duck("abs"),
             signature="abs(x: number) -> same type", doc="absolute value; NULL on NULL",
             example=("abs(-2.5)", Decimal("2.5"))),
    Function("round", 1, 2, _round, _duck("round"), check=_check_digits,
             signature="round(x: number[, digits: int]) -> same type",
             doc="x rounded to `digits` (default 0; negative: tens, hundreds), halves away "
                 "from zero (a decimal(p, s) without digits is a decimal(p, 0)); NULL on NULL",
             example=("round(2.5)", Decimal(3))),
    Function("floor", 1, 1, _floor_ceil, _duck("floor"),
             signature="floor(x: number) -> same type (a decimal's scale 0)",
             doc="the largest whole number <= x; NULL on NULL", example=("floor(-1.5)", Decimal(-2))),
    Function("ceil", 1, 1, _floor_ceil, _duck("ceil"),
             signature="ceil(x: number) -> same type (a decimal's scale 0)",
             doc="the smallest whole number >= x; NULL on NULL", example=("ceil(1.2)", Decimal(2))),
    Function("lower", 1, 1, _text, _duck("lower"), signature="lower(s: text) -> text",
             doc="s in lower case (Unicode); NULL on NULL", example=("lower('ÄB')", "äb")),
    Function("upper", 1, 1, _text, _duck("upper"), signature="upper(s: text) -> text",
             doc="s in upper case (Unicode); NULL on NULL", example=("upper('äb')", "ÄB")),
    Function("length", 1, 1, _length, lambda a: exp.Length(this=a[0]),
             build_typed=_length_node, signature="length(x: text | list<T>) -> int",
             doc="characters of a text, items of a list; NULL on NULL",
             example=("length('日本')", 2)),
    Function("trim", 1, 1, _text, _duck("trim"), signature="trim(s: text) -> text",
             doc="s without the spaces (Unicode space separators) at both ends; NULL on NULL",
             example=("trim('  a b ')", "a b")),
    Function("substr", 2, 3, _substr, _duck("substr"),
             signature="substr(s: text, start: int[, length: int]) -> text",
             doc="`length` characters of s from `start` (1 is the first; negative counts "
                 "from the end); NULL on NULL", example=("substr('strata', 2, 3)", "tra")),
    Function("concat", 1, None, _concat, _duck("concat"), build_typed=_concat_node,
             signature="concat(x, ...) -> text",
             doc="the arguments as text, joined; a NULL argument counts as ''",
             example=("concat('a', null, 1)", "a1")),
    Function("date_trunc", 2, 2, _date_trunc, _duck("date_trunc"), leading_unit=True,
             build_typed=_date_trunc_node,
             signature="date_trunc(unit, x: date | timestamp) -> same type",
             doc="x truncated to the start of its year, quarter, month, week (Monday), day, "
                 "hour, minute or second; NULL on NULL",
             example=("date_trunc('month', date '2024-02-29')", date(2024, 2, 1))),
    Function("year", 1, 1, _date_part, _duck("year"),
             signature="year(x: date | timestamp) -> int", doc="the year; NULL on NULL",
             example=("year(date '2024-02-29')", 2024)),
    Function("month", 1, 1, _date_part, _duck("month"),
             signature="month(x: date | timestamp) -> int", doc="the month, 1-12; NULL on NULL",
             example=("month(date '2024-02-29')", 2)),
    Function("day", 1, 1, _date_part, _duck("day"),
             signature="day(x: date | timestamp) -> int",
             doc="the day of the month, 1-31; NULL on NULL",
             example=("day(date '2024-02-29')", 29)),
    Function("date_diff", 3, 3, _date_diff, _duck("date_diff"), leading_unit=True,
             signature="date_diff(unit, a: date | timestamp, b: date | timestamp) -> int",
             doc="unit boundaries crossed from a to b (whole weeks for 'week'); NULL on NULL",
             example=("date_diff('month', date '2024-01-31', date '2024-02-01')", 1)),
    # ---- text (issue 16)
    Function("nullif", 2, 2, _nullif, _fn("nullif", exp.Nullif, "this", "expression"),
             signature="nullif(a: T, b: T) -> T",
             doc="NULL when a = b, else a (a NULL a or b gives a)",
             example=("nullif(0, 0)", None)),
    Function("greatest", 2, None, _unified, _extremes("greatest", exp.Greatest),
             signature="greatest(x: T, ...) -> T",
             doc="the largest argument, NULLs skipped (NULL when all are); text by code "
                 "point, NaN above every number",
             example=("greatest(1, null, 3)", 3)),
    Function("least", 2, None, _unified, _extremes("least", exp.Least),
             signature="least(x: T, ...) -> T",
             doc="the smallest argument, NULLs skipped (NULL when all are); text by code "
                 "point", example=("least(1, null, 3)", 1)),
    Function("replace", 3, 3, _args(TXT, TXT, TXT, result=T.TEXT),
             _fn("replace", exp.Replace, "this", "expression", "replacement"),
             signature="replace(s: text, from: text, to: text) -> text",
             doc="s with every `from` replaced by `to` (an empty `from` replaces nothing); "
                 "NULL on NULL", example=("replace('a-b-c', '-', '+')", "a+b+c")),
    Function("strpos", 2, 2, _args(TXT, TXT, result=T.INT),
             _fn("strpos", exp.StrPosition, "this", "substr"),
             signature="strpos(s: text, part: text) -> int",
             doc="the character position of the first `part` in s (1-based), 0 when absent, "
                 "1 for ''; NULL on NULL", example=("strpos('banana', 'na')", 3)),
    Function("contains", 2, 2, _args(TXT, TXT, result=T.BOOL), _contains,
             signature="contains(s: text, part: text) -> bool",
             doc="does s contain `part` (always for '')? NULL on NULL",
             example=("contains('banana', 'nan')", True)),
    Function("starts_with", 2, 2, _args(TXT, TXT, result=T.BOOL),
             _fn("starts_with", exp.StartsWith, "this", "expression"),
             signature="starts_with(s: text, prefix: text) -> bool",
             doc="does s start with `prefix`? NULL on NULL",
             example=("starts_with('banana', 'ban')", True)),
    Function("ends_with", 2, 2, _args(TXT, TXT, result=T.BOOL),
             _fn("ends_with", exp.EndsWith, "this", "expression"),
             signature="ends_with(s: text, suffix: text) -> bool",
             doc="does s end with `suffix`? NULL on NULL",
             example=("ends_with('banana', 'na')", True)),
    Function("lpad", 3, 3, _args(TXT, ("int",), TXT, result=T.TEXT), _pad("lpad", True),
             check=_check_fill,
             signature="lpad(s: text, width: int, fill: text literal) -> text",
             doc="s padded on the left with `fill` to `width` characters, or cut to its "
                 "first `width`; NULL on NULL", example=("lpad('7', 3, '0')", "007")),
    Function("rpad", 3, 3, _args(TXT, ("int",), TXT, result=T.TEXT), _pad("rpad", False),
             check=_check_fill,
             signature="rpad(s: text, width: int, fill: text literal) -> text",
             doc="s padded on the right with `fill` to `width` characters, or cut to its "
                 "first `width`; NULL on NULL", example=("rpad('ab', 5, 'xy')", "abxyx")),
    Function("left", 2, 2, _args(TXT, ("int",), result=T.TEXT),
             _fn("left", exp.Left, "this", "expression"),
             signature="left(s: text, n: int) -> text",
             doc="the first n characters of s (n < 0: all but the last -n); NULL on NULL",
             example=("left('strata', -2)", "stra")),
    Function("right", 2, 2, _args(TXT, ("int",), result=T.TEXT),
             _fn("right", exp.Right, "this", "expression"),
             signature="right(s: text, n: int) -> text",
             doc="the last n characters of s (n < 0: all but the first -n); NULL on NULL",
             example=("right('strata', 2)", "ta")),
    Function("split_part", 3, 3, _args(TXT, TXT, ("int",), result=T.TEXT), _split_part,
             check=_check_split,
             signature="split_part(s: text, delimiter: text literal, n: int literal) -> text",
             doc="the n-th part of s split at `delimiter` (1 the first, -1 the last), '' past "
                 "the end; NULL on NULL", example=("split_part('a,b,c', ',', -1)", "c")),
    # ---- the run's date and time (issue 40): bound once when a run starts, recorded in
    # its history entry; a model reading one is stale when its value changes
    Function("run_date", 0, 0, lambda types: T.DATE, lambda args: clock_column("run_date"),
             signature="run_date() -> date",
             doc="the date the run started (`--at` or STRATA_NOW set it; replay, verify "
                 "and backfill reuse the recorded one); the model rebuilds when it changes",
             example=("run_date() > date '2000-01-01'", True)),
    Function("run_timestamp", 0, 0, lambda types: T.TIMESTAMP,
             lambda args: clock_column("run_timestamp"),
             signature="run_timestamp() -> timestamp",
             doc="the moment the run started, to the second (as run_date(); every run "
                 "has a new one, so a model reading it rebuilds on every run)",
             example=("run_timestamp() > timestamp '2000-01-01 00:00:00'", True)),
    Function("md5", 1, 1, _args(TXT, result=T.TEXT), _fn("md5", exp.MD5, "this"),
             signature="md5(s: text) -> text",
             doc="the MD5 digest of s's UTF-8 bytes, 32 lowercase hex digits (a portable "
                 "surrogate key); NULL on NULL",
             example=("md5('abc')", "900150983cd24fb0d6963f7d28e17f72")),
    # ---- regular expressions (issue 16): RE2's meaning, a portable pattern subset
    Function("regexp_matches", 2, 2, _args(TXT, TXT, result=T.BOOL),
             _regexp("regexp_matches"), check=_check_pattern,
             signature="regexp_matches(s: text, pattern: text literal) -> bool",
             doc="does `pattern` match anywhere in s? Patterns: characters, `.` (not a "
                 "newline), [classes], \\d \\w \\s (ASCII), ^ $, ( ), (?: ), |, ? * + {n,m} "
                 "(lazy with ?); NULL on NULL",
             example=("regexp_matches('order-42', '-[0-9]+$')", True)),
    Function("regexp_replace", 3, 4, _args(TXT, TXT, TXT, TXT, result=T.TEXT),
             _regexp("regexp_replace"), check=_check_replace,
             signature="regexp_replace(s: text, pattern: text literal, replacement: text "
                       "literal[, 'g']) -> text",
             doc="s with the first match of `pattern` (every match with 'g') replaced; "
                 "\\1-\\9 in `replacement` are groups, \\0 the match; NULL on NULL",
             example=("regexp_replace('a-b-c', '-([a-z])', '+\\1', 'g')", "a+b+c")),
    Function("regexp_extract", 2, 3, _args(TXT, TXT, ("int",), result=T.TEXT),
             _regexp("regexp_extract", exp.Literal.number(0)), check=_check_extract,
             signature="regexp_extract(s: text, pattern: text literal[, group: int literal]) "
                       "-> text",
             doc="the first match of `pattern` in s, or its group `group` (0: the whole "
                 "match); '' when nothing matches; NULL on NULL",
             example=("regexp_extract('order-42', '([a-z]+)-([0-9]+)', 2)", "42")),
    # ---- numbers (issue 16): each a double of the double; DuckDB's IEEE results
    Function("sign", 1, 1, _args(NUM, result=T.INT), _sign,
             signature="sign(x: number) -> int",
             doc="-1, 0 or 1 (0 for -0.0 and NaN); NULL on NULL", example=("sign(-2.5)", -1)),
    Function("power", 2, 2, _args(NUM, NUM, result=T.DOUBLE),
             _fn("power", exp.Pow, "this", "expression", cast_double=True),
             signature="power(x: number, y: number) -> double",
             doc="x to the power y, as a double (NaN for a negative x to a fraction, "
                 "Infinity for 0 to a negative power); NULL on NULL",
             example=("power(2, 10)", 1024.0)),
    Function("sqrt", 1, 1, _args(NUM, result=T.DOUBLE), _math("sqrt", exp.Sqrt),
             signature="sqrt(x: number) -> double",
             doc="the square root (NaN below 0); NULL on NULL", example=("sqrt(16)", 4.0)),
    Function("ln", 1, 1, _args(NUM, result=T.DOUBLE), _math("ln", exp.Ln),
             signature="ln(x: number) -> double",
             doc="the natural logarithm (-Infinity at 0, NaN below); NULL on NULL",
             example=("ln(1)", 0.0)),
    Function("log10", 1, 1, _args(NUM, result=T.DOUBLE), _log10,
             signature="log10(x: number) -> double",
             doc="the base-10 logarithm (-Infinity at 0, NaN below); NULL on NULL",
             example=("log10(1000)", 3.0)),
    Function("exp", 1, 1, _args(NUM, result=T.DOUBLE), _math("exp", exp.Exp),
             signature="exp(x: number) -> double",
             doc="e to the power x (Infinity past about 709.78, 0 below about -745.13); "
                 "NULL on NULL", example=("exp(0)", 1.0)),
    # ---- dates (issue 16)
    Function("date_add", 3, 3, _typed_by_unit, _duck("date_add"), leading_unit=True,
             build_typed=_date_add_node(1), unit_typer=_date_add_type,
             signature="date_add(unit, n: int, x: date | timestamp) -> same type",
             doc="x plus n units (a month past the end of the shorter month gives its last "
                 "day); a date stays a date for year/quarter/month/week/day; NULL on NULL",
             example=("date_add('month', 1, date '2024-01-31')", date(2024, 2, 29))),
    Function("date_sub", 3, 3, _typed_by_unit, _duck("date_add"), leading_unit=True,
             build_typed=_date_add_node(-1), unit_typer=_date_add_type,
             signature="date_sub(unit, n: int, x: date | timestamp) -> same type",
             doc="x minus n units, as date_add(unit, -n, x); NULL on NULL",
             example=("date_sub('year', 1, date '2024-02-29')", date(2023, 2, 28))),
    Function("make_date", 3, 3, _args(("int",), ("int",), ("int",), result=T.DATE),
             _make_date, signature="make_date(year: int, month: int, day: int) -> date",
             doc="the date of that year, month and day (an error on DuckDB when there is "
                 "none); NULL on NULL", example=("make_date(2024, 2, 29)", date(2024, 2, 29))),
    Function("strftime", 2, 2, _args(WHEN, TXT, result=T.TEXT), _strftime,
             check=_check_format,
             signature="strftime(x: date | timestamp, format: text literal) -> text",
             doc="x printed by `format`: %Y %y %m %d %H %M %S %f %j %b %B %a %A %% and "
                 "the characters ` -/:.,;_T()[]#+` between (English names); NULL on NULL",
             example=("strftime(timestamp '2024-02-29 13:04:05', '%Y-%m-%dT%H:%M')",
                      "2024-02-29T13:04")),
    Function("strptime", 2, 2, _args(TXT, TXT, result=T.TIMESTAMP), _strptime,
             check=_check_parse_format,
             signature="strptime(s: text, format: text literal) -> timestamp",
             doc="s read by `format` (%Y %y %m %d %H %M %S %f %% and the characters of "
                 "strftime between) as DuckDB reads it: fields of 1 or 2 digits, %Y of 1 to 4, "
                 "%y 69-99 as 19xx, spaces around; an error when s does not match or names no "
                 "day; NULL on NULL",
             example=("strptime('2024-2-29 13:04:05', '%Y-%m-%d %H:%M:%S')",
                      datetime(2024, 2, 29, 13, 4, 5))),
    # ---- JSON (issue 16)
    Function("json_text", 2, 2, _args(TXT, TXT, result=T.TEXT), _json_text,
             check=_check_json_path,
             signature="json_text(j: text, path: text literal) -> text",
             doc="the text of the string at `path` (`$`, then `.key` and `[n]` steps) in the "
                 "JSON document j, the first of duplicate keys; NULL when the path is missing "
                 "or holds null, a number, a bool, an array or an object; malformed JSON is "
                 "an error; NULL on NULL",
             example=("json_text('{\"a\": [{\"b\": \"caf\\u00e9\"}]}', '$.a[0].b')", "café")),
    # aggregates
    Function("count", 0, 1, lambda a: T.INT, _count_star, aggregate=True,
             signature="count() / count(x) -> int",
             doc="rows in the group / rows where x is not NULL; 0 on no rows",
             example=("count(amount)", 3)),
    Function("count_distinct", 1, 1, lambda a: T.INT,
             lambda a: exp.Count(this=exp.Distinct(expressions=[a[0]])), aggregate=True,
             signature="count_distinct(x) -> int",
             doc="distinct non-NULL values of x; 0 on no rows",
             example=("count_distinct(status)", 2)),
    Function("sum", 1, 1, _sum, lambda a: exp.Sum(this=a[0]), aggregate=True,
             signature="sum(x: number) -> int | decimal(38, s) | double",
             doc="the sum of the non-NULL values; NULL on no values",
             example=("sum(amount)", Decimal("12.00"))),
    Function("avg", 1, 1, _avg, lambda a: exp.Avg(this=a[0]), aggregate=True,
             signature="avg(x: number) -> double",
             doc="the mean of the non-NULL values; NULL on no values",
             example=("avg(amount)", 4.0)),
    Function("min", 1, 1, _minmax, lambda a: exp.Min(this=a[0]), aggregate=True,
             signature="min(x: T) -> T", doc="the smallest non-NULL value; NULL on no values",
             example=("min(amount)", Decimal("1.00"))),
    Function("max", 1, 1, _minmax, lambda a: exp.Max(this=a[0]), aggregate=True,
             signature="max(x: T) -> T", doc="the largest non-NULL value; NULL on no values",
             example=("max(amount)", Decimal("7.00"))),
    Function("stddev", 1, 1, _args(NUM, result=T.DOUBLE),
             _fn("stddev", exp.Stddev, "this", cast_double=True), aggregate=True,
             signature="stddev(x: number) -> double",
             doc="the sample standard deviation (stddev_samp) of the non-NULL values; NULL "
                 "on fewer than two", example=("stddev(amount)", 3.0)),
    Function("stddev_pop", 1, 1, _args(NUM, result=T.DOUBLE),
             _fn("stddev_pop", exp.StddevPop, "this", cast_double=True), aggregate=True,
             signature="stddev_pop(x: number) -> double",
             doc="the population standard deviation of the non-NULL values; NULL on none",
             example=("stddev_pop(amount)", 6 ** 0.5)),
    Function("variance", 1, 1, _args(NUM, result=T.DOUBLE),
             _fn("variance", exp.Variance, "this", cast_double=True), aggregate=True,
             signature="variance(x: number) -> double",
             doc="the sample variance (var_samp) of the non-NULL values; NULL on fewer "
                 "than two", example=("variance(amount)", 9.0)),
    Function("var_pop", 1, 1, _args(NUM, result=T.DOUBLE),
             _fn("var_pop", exp.VariancePop, "this", cast_double=True), aggregate=True,
             signature="var_pop(x: number) -> double",
             doc="the population variance of the non-NULL values; NULL on none",
             example=("var_pop(amount)", 6.0)),
    Function("median", 1, 1, _args(NUM, result=T.DOUBLE), _median, aggregate=True,
             signature="median(x: number) -> double",
             doc="the middle non-NULL value, the mean of the two middle ones for an even "
                 "count (quantile_cont(x, 0.5)); NULL on none",
             example=("median(amount)", 4.0)),
    Function("quantile_cont", 2, 2, _args(NUM, NUM, result=T.DOUBLE), _quantile,
             aggregate=True, check=_check_fraction,
             signature="quantile_cont(x: number, q: literal in [0, 1]) -> double",
             doc="the q-quantile of the non-NULL values, interpolated between the two "
                 "nearest; NULL on none", example=("quantile_cont(amount, 0.25)", 2.5)),
    Function("bool_and", 1, 1, _args(("bool",), result=T.BOOL),
             _fn("bool_and", exp.LogicalAnd, "this"), aggregate=True,
             signature="bool_and(b: bool) -> bool",
             doc="are all non-NULL values true? NULL on none",
             example=("bool_and(amount > 0)", True)),
    Function("bool_or", 1, 1, _args(("bool",), result=T.BOOL),
             _fn("bool_or", exp.LogicalOr, "this"), aggregate=True,
             signature="bool_or(b: bool) -> bool",
             doc="is any non-NULL value true? NULL on none",
             example=("bool_or(amount > 5)", True)),
    Function("count_if", 1, 1, _args(("bool",), result=T.INT), _count_if, aggregate=True,
             signature="count_if(b: bool) -> int", doc="rows where b is true; 0 on none",
             example=("count_if(status = 'paid')", 2)),
    Function("arg_min", 2, 2, _arg_extreme_type, _arg_extreme("arg_min", exp.ArgMin),
             aggregate=True,
             signature="arg_min(x: T, by: U) -> T",
             doc="x of the row with the smallest `by`, among rows where neither is NULL; "
                 "of tied rows, the smallest x (the same row on every engine); NULL on none",
             example=("arg_min(id, status)", 1)),
    Function("arg_max", 2, 2, _arg_extreme_type, _arg_extreme("arg_max", exp.ArgMax),
             aggregate=True,
             signature="arg_max(x: T, by: U) -> T",
             doc="x of the row with the largest `by`, among rows where neither is NULL; "
                 "of tied rows, the largest x (the same row on every engine); NULL on none",
             example=("arg_max(id, status = 'paid')", 3)),
    Function("list_agg", 1, 1, _list_agg_type, _list_agg, aggregate=True,
             signature="list_agg(x: T) -> list<T>",
             doc="the non-NULL values as a list in ascending order (text by code point; the "
                 "same list on every engine); NULL on none",
             example=("list_agg(status)", ["paid", "paid", "void"])),
    Function("string_agg", 2, 2, _args(TXT, TXT, result=T.TEXT), _string_agg,
             aggregate=True, check=_check_separator,
             signature="string_agg(s: text, separator: text literal) -> text",
             doc="the non-NULL values in ascending code-point order, joined by `separator` "
                 "(the same text on every engine); NULL on none",
             example=("string_agg(status, ',')", "paid,paid,void")),
]}

EXTRACT_PARTS = {"year", "quarter", "month", "week", "day", "hour", "minute", "second",
                 "dayofweek", "dayofyear", "epoch"}
