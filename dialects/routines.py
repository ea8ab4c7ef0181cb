"""Functions Strata owns: an emulation's long spelling written once, called by name.

Some of DuckDB's meanings take a page to spell on another engine (the exact round of a
double is ~1.7 kB, DuckDB's division by zero reads its divisor three times). Spelled
at every call, a model is as long as its calls times their spellings, and a reviewer
reads the same CASE again and again (`region_sales` was 106 lines on PostgreSQL
against DuckDB's 25). Where the engine has functions it runs fast, a spelling that
would copy a computed operand (a column is as short as a parameter), or is long,
becomes a function of its operands:

    strata_internal.strata_round_5c1f0e9a2b(strata_internal.strata_div_0d3e..(a, b))

created in the warehouse's internal schema before a run (`Made.ensure`, called by
the adapters) and printed at the head of `compile --show-sql` and `build` output, so
the SQL a reviewer reads stays self-contained. Each operand is an argument, written
once where the author wrote it, however deep the nesting.

A function's name ends with a hash of its whole definition: one name always means one
body, so creating it again is harmless, two runs never disagree about it, and the SQL
an old snapshot recorded keeps its meaning. Nothing drops them (they hold no data).

Only values of plain types cross a function's boundary (`PLAIN`): a parameter's
declared type is a cast on the way in, and a DECIMAL(p, s), a TIMESTAMP or a list
would be converted where the inline spelling kept the engine's own type (a decimal
argument passes where the engine has a type holding any decimal unchanged:
PostgreSQL's NUMERIC; a result is never a decimal, whose declared scale PostgreSQL
drops from a function's result). Anything
else, and any spelling holding an aggregate, a window, a subquery or a lambda (which
cannot move into a function body), is bound inline as before (dialects/binding.py).
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from sqlglot import ErrorLevel, exp

SCHEMA = "strata_internal"  # the warehouse's internal schema (strata.engine.adapters.base)
CALLED = f"{SCHEMA}.strata_"  # unquoted, as a call renders (tables are quoted)
NAME = re.compile(r"\b" + SCHEMA + r"\.(strata_[a-z0-9_]+_[0-9a-f]{10})\b")
# types whose values pass through a parameter unchanged on every engine
PLAIN = frozenset({exp.DataType.Type.DOUBLE, exp.DataType.Type.BIGINT,
                   exp.DataType.Type.INT, exp.DataType.Type.BOOLEAN, exp.DataType.Type.TEXT,
                   exp.DataType.Type.VARCHAR})
NOT_IN_A_BODY = (exp.AggFunc, exp.Window, exp.Select, exp.Subquery, exp.UDTF, exp.Lambda,
                 exp.Star, exp.Placeholder)
# a spelling at least this many nodes long is a function even if it copies no computed
# operand: a reviewer reads its name instead (the exact text of a double is ~90 nodes)
LONG = 60
PARAMETERS = "abcdefghijklmnopqrstuvwxyz"

# the statement declaring each function this process has spelled, by name; global on
# purpose: a name is a hash of its statement, so no two definitions ever meet here
_DEFINITIONS: dict[str, str] = {}
_BODIES: dict[str, tuple[list[str], exp.Expression]] = {}  # its parameters and body
CALLS = "strata_calls_routine"  # node meta: the function a call calls
# node meta of dialects/grouped.py's trial: a column standing for an aggregate
AGGREGATE_STAND_IN = "strata_aggregate_stand_in"


@dataclass(frozen=True)
class Routine:
    name: str  # unqualified; it lives in SCHEMA
    definition: str  # the CREATE statement, in the engine's SQL


Declare = Callable[[str, list[tuple[str, str]], str, str], str]
# (qualified name, [(parameter, type)], result type, body) -> the CREATE statement


@dataclass(frozen=True)
class RoutineStyle:
    """How one engine declares a function of one expression."""

    sqlglot: str  # SQLGlot's dialect name, for the body and the types
    declare: Declare
    # the engine's type that takes any decimal unchanged (PostgreSQL's NUMERIC without a
    # precision), for a decimal argument; None: decimals stay inline
    any_decimal: str | None = None
    # where the engine refuses a call of one (Spark: ORDER BY, a lambda, a generator);
    # there the call is spelled inline again, each argument bound once by `bind`
    refused_at: Callable[[exp.Expression], bool] | None = None

    def call(self, node: exp.Expression, spelling: exp.Expression,
             operands: dict[str, exp.Expression]) -> exp.Expression | None:
        """`spelling` (of `node`, its operands standing aside as columns named by the
        keys of `operands`) as a call of a function of those operands; None where a
        function would not pay (no computed operand copied, a short spelling) or
        cannot hold it (see the module's docstring)."""
        if self.refused_at is not None and self.refused_at(node):
            return None  # spelled inline, as where the engine has no functions
        reads = _reads(spelling, operands)
        copied = [n for n, k in reads.items() if k > 1 and not simple(operands[n])]
        if not reads or (not copied and _size(spelling) < LONG):
            return None  # a column read twice is as short as a parameter read twice
        if not _plain(node.type) or any(not self._passes(type_of(operands[n])) for n in reads):
            return None
        if any(isinstance(n, NOT_IN_A_BODY) for n in spelling.walk()):
            return None
        names = dict(zip(reads, _parameter_names(len(reads)), strict=True))
        body = _with_parameters(spelling, names, operands)
        if body is None:
            return None
        routine = self._routine(_label(node), [(names[n], type_of(operands[n])) for n in reads],
                                node.type, body)
        called = exp.Dot(this=exp.to_identifier(SCHEMA),
                         expression=exp.Anonymous(this=routine.name,
                                                  expressions=[operands[n] for n in reads]))
        called.type = node.type
        called.meta[CALLS] = routine.name
        _BODIES[routine.name] = (list(names.values()), body)
        return called

    def inline_refused(self, tree: exp.Expression,
                       bind: Callable[..., exp.Expression]) -> exp.Expression:
        """Each call where the engine refuses one spelled inline again, innermost first,
        each argument bound once (`bind`: dialects/binding.py), so the text stays linear."""
        if self.refused_at is None:
            return tree
        calls = [n for n in tree.walk() if isinstance(n, exp.Dot) and n.meta.get(CALLS)]
        for call in reversed(calls):  # a call's arguments come after it in the walk
            if not self.refused_at(call):
                continue
            inline = _inline(call, bind)
            if call is tree:
                tree = inline
            else:
                call.replace(inline)
        return tree

    def _passes(self, t: exp.DataType | None) -> bool:
        """Does an argument of type `t` reach the body unchanged?"""
        return _plain(t) or (self.any_decimal is not None and isinstance(t, exp.DataType)
                             and t.this == exp.DataType.Type.DECIMAL)

    def _parameter_type(self, t: exp.DataType) -> str:
        if t.this == exp.DataType.Type.DECIMAL and self.any_decimal is not None:
            return self.any_decimal
        return _type_sql(t, self.sqlglot)

    def _routine(self, label: str, params: list[tuple[str, exp.DataType]],
                 returns: exp.DataType, body: exp.Expression) -> Routine:
        typed = [(p, self._parameter_type(t)) for p, t in params]
        text = body.sql(dialect=self.sqlglot, pretty=True,
                        unsupported_level=ErrorLevel.RAISE)
        result = _type_sql(returns, self.sqlglot)
        digest = hashlib.sha256(repr((self.sqlglot, typed, result, text)).encode())
        name = f"strata_{label}_{digest.hexdigest()[:10]}"
        definition = self.declare(f"{SCHEMA}.{name}", typed, result, text)
        _DEFINITIONS[name] = definition
        return Routine(name, definition)


def used_in(texts: Iterable[str]) -> list[Routine]:
    """The functions Strata owns that these SQL texts call, each once, in the order
    first called (those this process has not spelled are left to the warehouse, which
    holds every one a run made: see the module's docstring)."""
    found: dict[str, Routine] = {}
    for text in texts:
        for name in NAME.findall(text):
            if name not in found and name in _DEFINITIONS:
                found[name] = Routine(name, _DEFINITIONS[name])
    return list(found.values())


def heading(texts: Iterable[str]) -> str:
    """The CREATE statements of the functions `texts` call, as the head of a script
    (empty when they call none)."""
    routines = used_in(texts)
    if not routines:
        return ""
    return (f"-- functions Strata owns, created in {SCHEMA} before a run\n"
            + "".join(f"{r.definition};\n\n" for r in routines))


@dataclass
class Made:
    """The functions made in one warehouse session, shared by an adapter and its lanes
    (one lock: two lanes never declare the same function at once)."""

    names: set[str] = field(default_factory=set)
    lock: threading.RLock = field(default_factory=threading.RLock)

    def ensure(self, text: str, run: Callable[[str], object]) -> None:
        """Declare, with `run`, each function `text` calls that this session has not
        (a name counts as made while its statement runs: `run` may pass its own text
        back here)."""
        if CALLED not in text:  # most statements: one substring test
            return
        needed = [r for r in used_in([text]) if r.name not in self.names]
        if not needed:
            return
        with self.lock:
            for routine in needed:
                if routine.name in self.names:
                    continue
                self.names.add(routine.name)
                try:
                    run(routine.definition)
                except BaseException:
                    self.names.discard(routine.name)
                    raise

    def forget(self) -> None:
        """After a rollback: what was declared inside it is gone."""
        with self.lock:
            self.names.clear()


# ---------------------------------------------------------------- the spelling

def type_of(x: exp.Expression) -> exp.DataType | None:
    """An operand's type: its own, or its inside's (a parenthesized operand)."""
    return x.type if x.type is not None else x.unnest().type


def simple(x: exp.Expression) -> bool:
    """A column or a constant (in a cast, a sign, parentheses): cheap to copy. Not a
    column standing for an aggregate in dialects/grouped.py's trial, which must
    decide as the real tree will."""
    while isinstance(x, (exp.Cast, exp.Paren, exp.Neg)):
        x = x.this
    if isinstance(x, exp.Column) and x.meta.get(AGGREGATE_STAND_IN):
        return False
    return isinstance(x, (exp.Column, exp.Literal, exp.Null, exp.Boolean))


def _inline(call: exp.Dot, bind: Callable[..., exp.Expression]) -> exp.Expression:
    """The call's body with its arguments, each bound once by `bind` (a cheap one, a
    column or SUM(x), copied: a later argument's binding would hold the earlier one's
    aggregate inside its lambda)."""
    from dialects.binding import cheap  # binding.py calls the routines: imported here

    params, body = _BODIES[call.meta[CALLS]]
    args = call.expression.expressions

    def spelled(bound: list[exp.Expression]) -> exp.Expression:
        by_name = dict(zip(params, bound, strict=True))
        return body.copy().transform(
            lambda n: by_name[n.name].copy() if isinstance(n, exp.Column)
            and not n.table and n.name in by_name else n, copy=False)

    def bound_from(i: int, bound: list[exp.Expression]) -> exp.Expression:
        if i == len(args):
            return spelled(bound)
        if cheap(args[i]):
            return bound_from(i + 1, [*bound, args[i]])
        value = "__p" + str(i)
        return bind(args[i], lambda v: bound_from(i + 1, [*bound, v]), value)

    inline = bound_from(0, [])
    inline.type = call.type
    return inline


def refused_in_order_lambda_or_generator(node: exp.Expression) -> bool:
    """Spark: a SQL function is refused in a query's ORDER BY (a window's is fine),
    inside a lambda and in a generator's argument (measured on Spark 4: an analysis
    error each; fine in SELECT, WHERE, GROUP BY, HAVING, JOIN ON, windows, aggregates)."""
    child, parent = node, node.parent
    while parent is not None:
        if isinstance(parent, (exp.Lambda, exp.UDTF, exp.Explode, exp.Unnest)):
            return True
        if isinstance(parent, exp.Order) and not isinstance(parent.parent, exp.Window) \
                and child.arg_key == "expressions":
            return True
        child, parent = parent, parent.parent
    return False


def _reads(spelling: exp.Expression, operands: dict[str, exp.Expression]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for column in spelling.find_all(exp.Column):
        if column.name in operands and not column.table:
            counts[column.name] = counts.get(column.name, 0) + 1
    return {n: counts[n] for n in operands if n in counts}


def _size(spelling: exp.Expression) -> int:
    return sum(1 for _ in spelling.walk())


def _plain(t: exp.DataType | None) -> bool:
    return isinstance(t, exp.DataType) and t.this in PLAIN


def _type_sql(t: exp.DataType, dialect: str) -> str:
    """A parameter's type: a text of any length is the engine's text type."""
    if t.this == exp.DataType.Type.VARCHAR:
        t = exp.DataType.build("text")
    return t.sql(dialect=dialect)


def _parameter_names(n: int) -> list[str]:
    return [PARAMETERS[i] if i < len(PARAMETERS) else f"a{i}" for i in range(n)]


def _with_parameters(spelling: exp.Expression, names: dict[str, str],
                     operands: dict[str, exp.Expression]) -> exp.Expression | None:
    """The spelling with each stand-in read as its parameter; None if it reads any
    other column (a function body sees only its parameters)."""
    body = spelling.copy()
    for column in list(body.find_all(exp.Column)):
        if column.table or column.name not in operands:
            return None
        parameter = exp.column(names[column.name])
        if column is body:
            return parameter
        column.replace(parameter)
    return body


def _label(node: exp.Expression) -> str:
    """What the function computes, for its name: round, div, cast_to_text, ..."""
    if isinstance(node, exp.Cast):
        return f"cast_to_{node.to.this.value.lower()}"
    name = node.name if isinstance(node, exp.Anonymous) else node.key
    return re.sub(r"[^a-z0-9_]", "", name.lower())[:30] or "value"


# ---------------------------------------------------------------- the engines' styles

def _signature(name: str, params: list[tuple[str, str]]) -> str:
    return f"{name}({', '.join(f'{p} {t}' for p, t in params)})"


def plpgsql(name: str, params: list[tuple[str, str]], returns: str, body: str) -> str:
    """PostgreSQL: PL/pgSQL, whose expressions run without a plan per call. A LANGUAGE
    sql function reading a parameter twice is not inlined when its argument is costly,
    and ran 5-13x slower than PL/pgSQL (1e6 rows, round(a / b, 2): fenced subquery
    0.58 s, LANGUAGE sql 3.2 s, PL/pgSQL 0.37 s; nested 8 deep: 4.6 s, 24.5 s, 1.9 s)."""
    return (f"CREATE OR REPLACE FUNCTION {_signature(name, params)} RETURNS {returns}\n"
            f"LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $strata$\nBEGIN\n"
            f"RETURN {body};\nEND\n$strata$")


def sql_returning(name: str, params: list[tuple[str, str]], returns: str, body: str) -> str:
    """Spark: a SQL function, which Spark inlines into the plan (1e6 rows, round(a / b,
    2): 0.41 s against the lambda binding's 0.45 s; nested 8 deep 0.62 s)."""
    return (f"CREATE FUNCTION IF NOT EXISTS {_signature(name, params)} RETURNS {returns}\n"
            f"RETURN {body}")


def sql_routine(name: str, params: list[tuple[str, str]], returns: str, body: str) -> str:
    """Trino: a SQL routine of the catalogue's schema (Trino has no IF NOT EXISTS
    here; the same name is the same body, so replacing it changes nothing)."""
    return (f"CREATE OR REPLACE FUNCTION {_signature(name, params)} RETURNS {returns}\n"
            f"RETURN {body}")


def sql_as(name: str, params: list[tuple[str, str]], returns: str, body: str) -> str:
    """BigQuery: a SQL function of the dataset."""
    return (f"CREATE FUNCTION IF NOT EXISTS {_signature(name, params)} RETURNS {returns}\n"
            f"AS (\n  {body}\n)")

