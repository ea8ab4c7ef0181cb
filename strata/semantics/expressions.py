"""Typing and translation of one expression against a scope: AST → (SQLGlot tree, type).

Column references become `ColRef` nodes; operator precedence becomes explicit
`Paren` nodes (SQLGlot renders the tree as built). Errors are collected, not
raised, so one pass reports every problem; a failed sub-expression gets the
`error` type, which fits everywhere and silences follow-on errors.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal

from sqlglot import exp

from strata.diagnostics import Diagnostic, Span, did_you_mean
from strata.plan import Col, colref
from strata.semantics import functions as F
from strata.semantics import types as T
from strata.semantics import windows as W
from strata.semantics.precedence import wrap
from strata.semantics.userfunctions import UserFunction, argument_problem, inline
from strata.sqlgen.literals import lit
from strata.syntax import ast

ERROR = T.Type("error")

_ARITH = {"+": exp.Add, "-": exp.Sub, "*": exp.Mul, "/": exp.Div, "%": exp.Mod}
_COMPARE = {"=": exp.EQ, "!=": exp.NEQ, "<": exp.LT, "<=": exp.LTE, ">": exp.GT, ">=": exp.GTE}
_NULL_SAFE = {"is distinct from": exp.NullSafeNEQ, "is not distinct from": exp.NullSafeEQ}



def typed(item: Typed) -> exp.Expression:
    """The node of `item`, carrying its type as SQLGlot's `.type`: an operand whose
    rendering differs by type on some engine (round of a double, cast of a bool, a
    text compared with a timestamp) tells the dialect's rewrites (dialects/) what it is."""
    if item.type.kind != "error":
        item.node.type = item.type.to_sqlglot()
    return item.node


@dataclass
class Typed:
    node: exp.Expression
    type: T.Type
    refs: frozenset[int] = frozenset()
    aggregate: bool = False


Lookup = Callable[[ast.Column], "Col | Diagnostic"]


@dataclass
class ExprContext:
    """How names resolve and what is allowed where the expression stands."""

    lookup: Lookup
    where: str  # words for messages: "filter", "derive", "aggregate", ...
    allow_aggregate: bool = False
    group_keys: frozenset[int] | None = None  # in `aggregate`: columns usable bare
    grouping_sets: str | None = None  # in the `aggregate` of `group rollup/cube(...)`
    over: bool = False  # the derive after `window`: window functions allowed (windows.py)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    clock: set[str] | None = None  # the model's run_date()/run_timestamp() calls, noted
    # False in a pin or delete_when: they are checked against stored rows later (verify,
    # a merge's layers), where no run's clock is bound
    clock_allowed: bool = True
    # the module's `fn`s by name (definitions.Definitions while resolving, else the
    # module's dict of UserFunction): a call to one is inlined
    functions: object | None = None


class ExpressionTyper:
    def __init__(self, ctx: ExprContext):
        self.ctx = ctx
        self._in_aggregate = False

    def error(self, code: str, message: str, span: Span, hint: str | None = None) -> Typed:
        self.ctx.diagnostics.append(Diagnostic(code, message, span, hint))
        return Typed(exp.Null(), ERROR)

    def type(self, node: ast.Expr) -> Typed:
        method = getattr(self, "_" + type(node).__name__.lower())
        return method(node)

    # ------------------------------------------------------------ leaves
    def _column(self, node: ast.Column) -> Typed:
        found = self.ctx.lookup(node)
        if isinstance(found, Diagnostic):
            self.ctx.diagnostics.append(found)
            return Typed(exp.Null(), ERROR)
        if (self.ctx.group_keys is not None and not self._in_aggregate
                and found.id not in self.ctx.group_keys):
            return self.error("E037", f"`{node.name}` is neither grouped nor aggregated",
                              node.span, f"add it to `group`, or wrap it: max({node.name})")
        return Typed(colref(found), found.type, frozenset({found.id}))

    def _literal(self, node: ast.Literal) -> Typed:
        kind = node.kind
        if kind == "interval":
            return self.error("E184", "an interval is the step of a range, not a value",
                              node.span, "shift a date with date_add('month', 1, d), or "
                              "count dates with range(a, b, interval '1 month')")
        if kind == "decimal":
            digits = node.value.as_tuple()
            scale = max(0, -digits.exponent)
            precision = max(len(digits.digits), scale + 1)
            return Typed(lit(node.value), T.Type("decimal", precision, scale))
        return Typed(lit(node.value), {"int": T.INT, "double": T.DOUBLE, "text": T.TEXT,
                                       "bool": T.BOOL, "null": T.NULL, "date": T.DATE,
                                       "timestamp": T.TIMESTAMP}[kind])

    def _listlit(self, node: ast.ListLit) -> Typed:
        items = [self.type(i) for i in node.items]
        element = T.NULL
        for item, src in zip(items, node.items):
            unified = T.unify(element, item.type) if item.type != ERROR else element
            if unified is None:
                return self.error("E039", f"list items of different types: {element} and "
                                  f"{item.type}", src.span)
            element = unified
        if element.kind == "null":
            element = T.TEXT
        return Typed(exp.Array(expressions=[i.node for i in items]), T.list_of(element),
                     _refs(items), _agg(items))

    # ------------------------------------------------------------ operators
    def _binop(self, node: ast.BinOp) -> Typed:
        left, right = self.type(node.left), self.type(node.right)
        refs, agg = _refs([left, right]), _agg([left, right])
        op = node.op
        if op in ("and", "or"):
            for side, src in ((left, node.left), (right, node.right)):
                if side.type not in (T.BOOL, T.NULL, ERROR):
                    self.error("E034", f"`{op}` needs boolean operands, found {side.type}",
                               src.span)
            cls, level = (exp.And, 2) if op == "and" else (exp.Or, 1)
            return Typed(cls(this=wrap(left.node, level), expression=wrap(right.node, level, True)),
                         T.BOOL, refs, agg)
        if ERROR in (left.type, right.type):
            return Typed(exp.Null(), ERROR, refs, agg)
        if op in _ARITH:
            result = T.arithmetic(op, left.type, right.type)
            if result is None:
                return self.error("E030", f"cannot apply `{op}` to {left.type} and "
                                  f"{right.type}", node.span,
                                  "use `||` to join text" if op == "+" and T.TEXT in
                                  (left.type, right.type) else None)
            if result.temporal:
                return Typed(_shift_days(op, left.node, right.node, result), result, refs, agg)
            cls = _ARITH[op]
            level = 6 if op in "+-" else 7
            # typed operands: `%` of a double is spelled otherwise on some engines
            return Typed(cls(this=wrap(typed(left), level),
                             expression=wrap(typed(right), level, True)), result, refs, agg)
        if op == "||":
            if not all(t.kind in ("text", "null") for t in (left.type, right.type)):
                return self.error("E030", f"`||` joins text, found {left.type} and "
                                  f"{right.type}", node.span, "cast(x as text) first")
            return Typed(exp.DPipe(this=wrap(left.node, 5), expression=wrap(right.node, 5, True),
                                   safe=True), T.TEXT, refs, agg)
        if op == "like":
            if not all(t.kind in ("text", "null") for t in (left.type, right.type)):
                return self.error("E030", f"`like` compares text, found {left.type} and "
                                  f"{right.type}", node.span)
            return Typed(exp.Like(this=wrap(left.node, 5), expression=wrap(right.node, 5)),
                         T.BOOL, refs, agg)
        if not T.comparable(left.type, right.type):
            return self.error("E030", f"cannot compare {left.type} with {right.type}", node.span)
        if op in _NULL_SAFE:  # true/false, never NULL: NULL is not distinct from NULL
            return Typed(_NULL_SAFE[op](this=wrap(typed(left), 5), expression=wrap(typed(right), 5)),
                         T.BOOL, refs, agg)
        return Typed(_COMPARE[op](this=wrap(typed(left), 5), expression=wrap(typed(right), 5)),
                     T.BOOL, refs, agg)

    def _unaryop(self, node: ast.UnaryOp) -> Typed:
        inner = self.type(node.operand)
        if node.op == "not":
            if inner.type not in (T.BOOL, T.NULL, ERROR):
                return self.error("E034", f"`not` needs a boolean, found {inner.type}", node.span)
            return Typed(exp.Not(this=wrap(inner.node, 4)), T.BOOL, inner.refs, inner.aggregate)
        if inner.type != ERROR and not inner.type.numeric and inner.type.kind != "null":
            return self.error("E030", f"cannot negate {inner.type}", node.span)
        return Typed(exp.Neg(this=wrap(inner.node, 8)), inner.type, inner.refs, inner.aggregate)

    def _isnull(self, node: ast.IsNull) -> Typed:
        inner = self.type(node.operand)
        check = exp.Is(this=wrap(inner.node, 5), expression=exp.Null())
        return Typed(exp.Not(this=check) if node.negated else check, T.BOOL, inner.refs,
                     inner.aggregate)

    def _inlist(self, node: ast.InList) -> Typed:
        inner = self.type(node.operand)
        items = [self.type(i) for i in node.items]
        for item, src in zip(items, node.items):
            if ERROR not in (inner.type, item.type) and not T.comparable(inner.type, item.type):
                self.error("E030", f"cannot compare {inner.type} with {item.type}", src.span)
        check = exp.In(this=wrap(inner.node, 5), expressions=[i.node for i in items])
        all_ = [inner, *items]
        return Typed(exp.Not(this=check) if node.negated else check, T.BOOL, _refs(all_),
                     _agg(all_))

    def _between(self, node: ast.Between) -> Typed:
        parts = [self.type(n) for n in (node.operand, node.low, node.high)]
        for part, src in zip(parts[1:], (node.low, node.high)):
            if ERROR not in (parts[0].type, part.type) and not T.comparable(parts[0].type, part.type):
                self.error("E030", f"cannot compare {parts[0].type} with {part.type}", src.span)
        check = exp.Between(this=wrap(typed(parts[0]), 5), low=wrap(typed(parts[1]), 5),
                            high=wrap(typed(parts[2]), 5))
        return Typed(exp.Not(this=check) if node.negated else check, T.BOOL, _refs(parts),
                     _agg(parts))

    def _case(self, node: ast.Case) -> Typed:
        ifs, parts, result = [], [], T.NULL
        for cond, value in node.whens:
            c, v = self.type(cond), self.type(value)
            parts += [c, v]
            if c.type not in (T.BOOL, T.NULL, ERROR):
                self.error("E034", f"`when` needs a boolean, found {c.type}", cond.span)
            result = self._unify_branch(result, v, value.span)
            ifs.append(exp.If(this=c.node, true=v.node))
        default = None
        if node.default is not None:
            d = self.type(node.default)
            parts.append(d)
            result = self._unify_branch(result, d, node.default.span)
            default = d.node
        return Typed(exp.Case(ifs=ifs, default=default), result, _refs(parts), _agg(parts))

    def _unify_branch(self, current: T.Type, branch: Typed, span: Span) -> T.Type:
        if ERROR in (current, branch.type):
            return ERROR
        unified = T.unify(current, branch.type)
        if unified is None:
            self.error("E039", f"branches of different types: {current} and {branch.type}",
                       span, "cast one branch so both have the same type")
            return ERROR
        return unified

    def _cast(self, node: ast.Cast) -> Typed:
        inner = self.type(node.operand)
        target = resolve_type(node.to, self.ctx.diagnostics)
        if target is None:
            return Typed(exp.Null(), ERROR, inner.refs, inner.aggregate)
        if inner.type != ERROR and not T.castable(inner.type, target):
            return self.error("E035", f"cannot cast {inner.type} to {target}", node.span)
        if node.safe and inner.type != ERROR:
            built = F.try_cast(typed(inner), inner.type, target)
            if isinstance(built, str):
                return self.error("E035", built, node.span, "use cast(x as T), which fails loudly")
            return Typed(built, target, inner.refs, inner.aggregate)
        return Typed(exp.Cast(this=typed(inner), to=target.to_sqlglot()), target, inner.refs,
                     inner.aggregate)

    def _extract(self, node: ast.Extract) -> Typed:
        inner = self.type(node.operand)
        if node.part not in F.EXTRACT_PARTS:
            return self.error("E031", f"unknown date part `{node.part}`", node.span,
                              did_you_mean(node.part, F.EXTRACT_PARTS))
        if inner.type not in (T.DATE, T.TIMESTAMP, T.NULL, ERROR):
            return self.error("E031", f"extract needs a date or timestamp, found {inner.type}",
                              node.span)
        # epoch keeps the fraction of a second (DuckDB: DOUBLE); every other part is whole
        part_type = T.DOUBLE if node.part == "epoch" else T.INT
        return Typed(exp.Extract(this=exp.Var(this=node.part.upper()), expression=typed(inner)),
                     part_type, inner.refs, inner.aggregate)

    # ------------------------------------------------------------ functions
    def _call(self, node: ast.Call) -> Typed:
        name = node.name
        if name == "grouping":
            return self._grouping(node)
        if self.ctx.functions is not None and name in self.ctx.functions:
            return self._user_call(node)
        if name in F.NON_DETERMINISTIC:
            return self.error("E032", f"`{name}()` is not deterministic", node.span,
                              F.CLOCK_HINT)
        fn = F.CATALOGUE.get(name)
        if name in F.CLOCK_FUNCTIONS and not self.ctx.clock_allowed:
            return self.error("E032", f"`{name}()` cannot be used in `{self.ctx.where}`",
                              node.span, "a pin or delete_when is checked against stored "
                              "rows on later runs too, where another clock holds; filter "
                              "or derive with it in the model's steps instead")
        if name in F.CLOCK_FUNCTIONS and self.ctx.clock is not None:
            self.ctx.clock.add(name)
        if fn is None and name in W.WINDOW_FUNCTIONS:  # row_number, lag, ... (windows.py)
            if not self.ctx.over:
                return self.error("E097", f"window function `{name}()` outside a window",
                                  node.span, W.OUTSIDE_HINT)
            fn = W.WINDOW_FUNCTIONS[name]
        if fn is None:
            known = [*F.CATALOGUE, *(self.ctx.functions or ())]
            return self.error("E016", f"unknown function `{name}`", node.span,
                              F.INSTEAD.get(name) or did_you_mean(name, known))
        if fn.aggregate and not self.ctx.allow_aggregate:
            return self.error("E033", f"aggregate `{name}` outside `aggregate`", node.span,
                              f"aggregates belong in an `aggregate` step, not in "
                              f"`{self.ctx.where}`")
        if fn.aggregate and self._in_aggregate:
            return self.error("E033", f"aggregate `{name}` inside another aggregate", node.span)
        count = len(node.args)
        if count < fn.min_args or (fn.max_args is not None and count > fn.max_args):
            want = (f"{fn.min_args}" if fn.min_args == fn.max_args else
                    f"{fn.min_args} to {fn.max_args}" if fn.max_args is not None else
                    f"at least {fn.min_args}")
            return self.error("E031", f"`{name}` takes {want} argument(s), found {count}",
                              node.span)
        if fn.check is not None:
            problem = fn.check(list(node.args))
            if problem:
                return self.error("E031", f"`{name}` {problem}", node.span)
        args_src = list(node.args)
        unit: exp.Expression | None = None
        if fn.leading_unit:
            first = args_src.pop(0)
            if isinstance(first, ast.Literal) and first.kind == "text" and \
                    first.value.lower() not in F.DATE_UNITS:
                return self.error("E031", f"`{name}`: unknown unit '{first.value}'", first.span,
                                  did_you_mean(first.value.lower().rstrip("s"), F.DATE_UNITS)
                                  or "units: " + ", ".join(f"'{u}'" for u in F.DATE_UNIT_ORDER))
            if not (isinstance(first, ast.Literal) and first.kind == "text"):
                return self.error("E031", f"`{name}` needs a unit string first, such as 'day' or "
                                  f"'month'", first.span)
            unit = exp.Literal.string(first.value.lower())
        previous = self._in_aggregate
        self._in_aggregate = previous or fn.aggregate
        try:
            args = [self.type(a) for a in args_src]
        finally:
            self._in_aggregate = previous
        if any(a.type == ERROR for a in args):
            return Typed(exp.Null(), ERROR, _refs(args), True if fn.aggregate else _agg(args))
        arg_types = ([T.TEXT] if unit is not None else []) + [a.type for a in args]
        if fn.unit_typer is not None and unit is not None:
            result = fn.unit_typer(unit.name, arg_types)
        else:
            result = fn.typer(arg_types) if args or fn.min_args == 0 else T.INT
        if isinstance(result, str):
            shown = ", ".join(str(t) for t in arg_types)
            return self.error("E031", f"`{name}` {result} (found {shown})", node.span)
        nodes = ([unit] if unit is not None else []) + [typed(a) for a in args]
        node = fn.build_typed(nodes, arg_types) if fn.build_typed else fn.build(nodes)
        return Typed(node, result, _refs(args), fn.aggregate or _agg(args))


    def _grouping(self, node: ast.Call) -> Typed:
        """grouping(k): 1 on the rows where a rollup or cube left key k out (its NULL is
        the subtotal's, not the data's), else 0; a key of the group, in its `aggregate`."""
        if self.ctx.grouping_sets is None:
            return self.error("E186", "`grouping()` outside the `aggregate` of a rollup or "
                              "cube", node.span, "group by `rollup(a, b)` or `cube(a, b)` "
                              "and tell its subtotal rows apart there: `aggregate n = "
                              "count(), is_total = grouping(a)`")
        arg = node.args[0] if len(node.args) == 1 else None
        found = self.ctx.lookup(arg) if isinstance(arg, ast.Column) else None
        if isinstance(found, Diagnostic):
            self.ctx.diagnostics.append(found)
            return Typed(exp.Null(), ERROR)
        if found is None or found.id not in (self.ctx.group_keys or ()):
            return self.error("E186", "`grouping()` takes one key of the group", node.span,
                              "name a key of the rollup or cube: `grouping(region)`")
        # Spark's GROUPING is a TINYINT: a BIGINT on every engine, as Strata's int
        call = exp.Grouping(expressions=[colref(found)])
        return Typed(exp.Cast(this=call, to=T.INT.to_sqlglot()), T.INT, frozenset({found.id}),
                     True)

    def _user_call(self, node: ast.Call) -> Typed:
        """A call of a module's `fn`: its body inlined over the arguments."""
        name = node.name
        recursion = getattr(self.ctx.functions, "recursion", None)
        loop = recursion(name, node.span) if recursion is not None else None
        if loop is not None:
            self.ctx.diagnostics.append(loop)
            return Typed(exp.Null(), ERROR)
        fn = self.ctx.functions.get(name)
        args = [self.type(a) for a in node.args]
        refs, agg = _refs(args), _agg(args)
        if not isinstance(fn, UserFunction):  # its definition's errors are reported
            return Typed(exp.Null(), ERROR, refs, agg)
        if len(args) != len(fn.params):
            return self.error("E031", f"`{name}` takes {len(fn.params)} argument(s), found "
                              f"{len(args)}", node.span, f"`{fn.signature}`, at {fn.where}")
        if any(a.type == ERROR for a in args):
            return Typed(exp.Null(), ERROR, refs, agg)
        for i, (arg, src) in enumerate(zip(args, node.args)):
            problem = argument_problem(fn, i, arg.type)
            if problem is not None:
                return self.error("E031", problem, src.span,
                                  f"cast it: `cast(... as {fn.params[i].type})` (`{fn.signature}`)")
        if fn.clock and not self.ctx.clock_allowed:
            return self.error("E032", f"`{name}()` reads {', '.join(sorted(fn.clock))}() and "
                              f"cannot be used in `{self.ctx.where}`", node.span,
                              "a pin or delete_when is checked against stored rows on later "
                              "runs too, where another clock holds")
        if self.ctx.clock is not None:
            self.ctx.clock.update(fn.clock)
        return Typed(inline(fn, [a.node for a in args], [a.type for a in args]), fn.returns,
                     refs, agg)


def _shift_days(op: str, when: exp.Expression, days: exp.Expression,
                typ: T.Type) -> exp.Expression:
    """`date ± n` / `timestamp ± n` (n days) as SQLGlot's date arithmetic, so each
    dialect spells it its way (DuckDB has no TIMESTAMP + INTEGER, Trino and BigQuery
    no DATE + INTEGER), cast back to the checker's type (DuckDB and Postgres turn a
    date plus an interval into a timestamp)."""
    if typ.kind == "date":
        cls = exp.DateAdd if op == "+" else exp.DateSub
    else:  # TimestampSub has no Trino spelling: add the negated count instead
        cls = exp.TimestampAdd
        if op == "-":
            days = exp.Neg(this=wrap(days, 8))
    node = cls(this=when, expression=days, unit=exp.var("DAY"))
    return exp.Cast(this=node, to=typ.to_sqlglot())


def _refs(items: list[Typed]) -> frozenset[int]:
    out: frozenset[int] = frozenset()
    for i in items:
        out |= i.refs
    return out


def _agg(items: list[Typed]) -> bool:
    return any(i.aggregate for i in items)


def resolve_type(ref: ast.TypeRef, diagnostics: list[Diagnostic]) -> T.Type | None:
    if ref.name == "list":
        element = resolve_type(ref.element, diagnostics)
        return T.list_of(element) if element else None
    if ref.name == "decimal":
        if len(ref.args) not in (0, 2) or (ref.args and not (
                1 <= ref.args[0] <= 38 and 0 <= ref.args[1] <= ref.args[0])):
            diagnostics.append(Diagnostic("E020", "decimal takes (precision, scale) with "
                                          "1 <= precision <= 38 and 0 <= scale <= precision",
                                          ref.span))
            return None
        return T.Type("decimal", *(ref.args or (18, 3)))
    if ref.name in T.SCALAR_NAMES and not ref.args:
        return T.Type(ref.name)
    hint = did_you_mean(ref.name, [*T.SCALAR_NAMES, "list"])
    aliases = {"integer": "int", "bigint": "int", "varchar": "text", "string": "text",
               "boolean": "bool", "float": "double", "datetime": "timestamp"}
    if ref.name in aliases:
        hint = f"did you mean `{aliases[ref.name]}`?"
    if ref.name == "numeric":  # SQL's decimal, as dbt models cast to it
        shown = f"decimal({', '.join(str(a) for a in ref.args)})" if ref.args else "decimal(p, s)"
        hint = f"write `{shown}`"
    diagnostics.append(Diagnostic("E020", f"unknown type `{ref.name}`"
                                  + (" with arguments" if ref.args and ref.name in
                                     T.SCALAR_NAMES else ""), ref.span,
                                  hint or "types are int, double, decimal(p, s), text, bool, "
                                          "date, timestamp, list<T>"))
    return None


def constant_value(node: ast.Expr):
    """The Python value of a constant row value in a test block, or raises ValueError."""
    if isinstance(node, ast.Literal):
        return node.value
    if isinstance(node, ast.ListLit):
        return [constant_value(i) for i in node.items]
    if isinstance(node, ast.UnaryOp) and node.op == "-":
        inner = constant_value(node.operand)
        if isinstance(inner, (int, float, Decimal)):
            return -inner
    if isinstance(node, ast.Cast):
        return constant_value(node.operand)
    raise ValueError("not a constant")


def literal_type(value) -> T.Type:
    if value is None:
        return T.NULL
    if isinstance(value, bool):
        return T.BOOL
    if isinstance(value, int):
        return T.INT
    if isinstance(value, Decimal):
        return T.decimal()
    if isinstance(value, float):
        return T.DOUBLE
    if isinstance(value, dt.datetime):
        return T.TIMESTAMP
    if isinstance(value, dt.date):
        return T.DATE
    if isinstance(value, list):
        return T.list_of(literal_type(value[0]) if value else T.NULL)
    return T.TEXT
