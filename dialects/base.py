"""What an engine is, as data: its SQLGlot dialect and the few things that differ.

Each file beside this one describes one engine. `strata/` asks these objects and
never branches on a dialect's name.

Strata's meaning is DuckDB's (SPEC §2). SQLGlot renders a function by name, and some
engines mean something else by the same name (PostgreSQL rounds a double half to
even, Spark's EXTRACT(DAYOFWEEK) counts from 1, ...). Each dialect lists `rewrites`:
functions of one tree node that return the node spelled so the engine computes
DuckDB's result (or the node itself). They run bottom-up before rendering; the
helpers below are the shared ones, each dialect file picks and configures them.
Operands whose spelling depends on their type carry it as SQLGlot's `.type` (the
checker puts it there: `strata.semantics.expressions.typed`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import ErrorLevel, exp

from dialects.binding import Bind, rewrite_once
from dialects.grouped import aggregates_first
from dialects.routines import RoutineStyle

Rewrite = Callable[[exp.Expression], exp.Expression]


@dataclass(frozen=True)
class Dialect:
    name: str  # the name users pass to --dialect
    sqlglot: str  # SQLGlot's dialect name
    transactional_ddl: bool  # can CREATE/DROP VIEW commit atomically with inserts?
    create_or_replace_view: bool
    reads_files: bool  # can a query read a CSV/Parquet path directly?
    row_hash: str | None = None  # SQL function hashing a row, for fingerprints
    # is its fingerprint of a file it reads the reference one (DuckDB's own)? Elsewhere
    # a file source is fingerprinted by a local DuckDB (strata.engine.sources), so the
    # same file gives the same run id on every warehouse
    fingerprints_files: bool = False
    rewrites: tuple[Rewrite, ...] = ()  # node rewrites giving DuckDB's meaning here
    # the engine's type names (upper case, without a length or precision) -> Strata's
    # type kinds: source contracts and `pin columns` read real tables' types with them
    type_kinds: tuple[tuple[str, str], ...] = ()
    # how a merge matches a row's key with another's (NULL matching NULL); None: IS NOT
    # DISTINCT FROM, which an engine that cannot hash it joins row by row (see
    # `hashable_key_match`)
    key_match: Callable[[exp.Expression, exp.Expression, str], exp.Expression] | None = None
    # the bytes of an identifier the engine keeps (it drops the rest silently); None:
    # no limit a name meets (strata.sqlgen.identifiers checks names against it)
    max_identifier_bytes: int | None = None
    # how the engine computes a value once and names it (dialects/binding.py): every
    # operand a rewrite's spelling repeats is bound so; None: repeated as text
    bind: Bind | None = None
    # how the engine declares a function Strata owns (dialects/routines.py): a long
    # spelling, or one reading an operand twice, becomes a call of one; None: inline
    routines: RoutineStyle | None = None

    def match_key(self, left: exp.Expression, right: exp.Expression,
                  kind: str) -> exp.Expression:
        """`left IS NOT DISTINCT FROM right` as this engine joins it fast; `kind` is
        the key column's type kind (`type_kind`)."""
        if self.key_match is None:
            return exp.NullSafeEQ(this=left, expression=right)
        return self.key_match(left, right, kind)

    # ------------------------------------------------------------ engine type names
    def type_kind(self, engine_type: str) -> str:
        """'int', 'double', 'decimal', 'text', ..., 'list<kind>' or 'other:<TYPE>'."""
        t = engine_type.strip().upper()
        element = self.element_type(t)
        if element is not None:
            return f"list<{self.type_kind(element)}>"
        if t.startswith(("DECIMAL", "NUMERIC")):
            return "decimal"
        kinds = dict(self.type_kinds)
        return kinds.get(t) or kinds.get(t.split("(")[0].strip(), f"other:{t}")

    def element_type(self, engine_type: str) -> str | None:
        """The element type of a list type (`T[]`, `ARRAY<T>`), else None."""
        t = engine_type.strip()
        if t.endswith("[]"):
            return t[:-2]
        if t.upper().startswith("ARRAY<") and t.endswith(">"):
            return t[6:-1]
        return None

    def decimal_shape(self, engine_type: str) -> tuple[int, int] | None:
        """(precision, scale) of a `DECIMAL(p,s)` type name, or None for another type."""
        t = engine_type.strip().upper().replace(" ", "")
        if not t.startswith(("DECIMAL(", "NUMERIC(")) or not t.endswith(")"):
            return None
        inside = t[t.index("(") + 1:-1].split(",")
        try:
            return int(inside[0]), int(inside[1]) if len(inside) > 1 else 0
        except ValueError:
            return None

    def keeps_scale(self, engine_type: str, scale: int | None) -> bool:
        """Does a DECIMAL engine type keep to `scale` fraction digits (a contract's
        decimal(p, s))? A wider precision passes; more fraction digits do not (an
        unbounded NUMERIC cannot promise any scale, and passes as DuckDB's would)."""
        found = self.decimal_shape(engine_type)
        return scale is None or found is None or found[1] <= scale

    def file_source(self, path: str, source_name: str,
                    types: dict[str, exp.DataType] | None = None) -> exp.Expression:
        """The relation a `source x = file '...'` reads; `types` are the declared
        column types, for a reader that would otherwise guess them.

        Engines that cannot read files directly read the table named after the
        source: load the file into it first.
        """
        return exp.Table(this=exp.to_identifier(source_name, quoted=False))

    def render(self, tree: exp.Expression, pretty: bool = True, copy: bool = True) -> str:
        """The tree as SQL text. copy=False lets SQLGlot apply this engine's rewrites to
        `tree` itself instead of a deep copy: for a caller that drops the tree after."""
        # SQLGlot only logs a warning for what a dialect cannot express and renders
        # something wrong anyway; raising lets the compiler say E091 instead.
        if self.rewrites:
            tree = self.adapt(tree.copy() if copy else tree)
            copy = False
        return tree.sql(dialect=self.sqlglot, pretty=pretty, copy=copy,
                        unsupported_level=ErrorLevel.RAISE)

    def adapt(self, tree: exp.Expression) -> exp.Expression:
        """This engine's rewrites applied to a (private) tree, innermost nodes first, so
        a rewrite sees its operands already spelled for the engine. A grouped query
        whose spelling would copy an aggregate (which no binding can name) first
        computes its aggregates in an inner query (`aggregates_first`)."""
        if self.bind is not None:
            tree = aggregates_first(tree, lambda t: bottom_up(t, self.rewrites, self.bind,
                                                              self.routines))
        tree = bottom_up(tree, self.rewrites, self.bind, self.routines)
        if self.routines is not None:
            tree = self.routines.inline_refused(tree, self.bind)
        return tree


class CannotExpress(Exception):
    """Raised by a rewrite for a construct the engine cannot express faithfully;
    the compiler reports it as E091 naming the dialect."""


def bottom_up(tree: exp.Expression, rewrites: tuple[Rewrite, ...],
              bind: Bind | None = None,
              routines: RoutineStyle | None = None) -> exp.Expression:
    """Apply the first rewrite that changes a node, children before parents. (SQLGlot's
    `transform` runs top-down and skips what a rewrite returned, so a rewrite wrapping
    its node would leave the node's operands unrewritten.) With `bind`, an operand the
    new spelling reads twice is computed once (`rewrite_once`)."""
    root = tree
    for node in reversed(list(tree.dfs())):
        parent, key, index = node.parent, node.arg_key, node.index
        new = rewrite_once(node, rewrites, bind, routines) if bind else \
            _first_change(node, rewrites)
        if new is node:
            continue
        if new.type is None and node.type is not None:
            new.type = node.type  # same value, spelled otherwise: outer rewrites ask
        if node is root:
            root = new
        else:
            parent.set(key, new, index)
    return root


def _first_change(node: exp.Expression, rewrites: tuple[Rewrite, ...]) -> exp.Expression:
    for rewrite in rewrites:
        new = rewrite(node)
        if new is not node:
            return new
    return node


# ---------------------------------------------------------------- small builders

def cast(node: exp.Expression, to: str | exp.DataType) -> exp.Cast:
    target = to.copy() if isinstance(to, exp.DataType) else exp.DataType.build(to)
    return exp.Cast(this=node, to=target)


def is_a(node: exp.Expression, *types: str) -> bool:
    """Does the checker's type on `node` match one of `types` (SQLGlot type names)?"""
    return node.type is not None and node.is_type(*types)


NUMBERS = ("BIGINT", "DOUBLE", "DECIMAL")


def _unit(node: exp.Expression) -> str:
    unit = node.args.get("unit")
    return unit.name.upper() if unit is not None else ""


def num(value: float) -> exp.Literal:
    return exp.Literal.number(value)


# ---------------------------------------------------------------- date arithmetic

def whole_weeks(node: exp.Expression) -> exp.Expression:
    """DuckDB's date_diff('week', a, b) counts whole weeks (days / 7, toward zero); an
    engine whose own week difference counts week boundaries, or rounds, gets that."""
    if isinstance(node, exp.DateDiff) and _unit(node) == "WEEK":
        days = exp.DateDiff(this=node.this, expression=node.expression, unit=exp.var("DAY"))
        return exp.IntDiv(this=days, expression=num(7))
    return node


def whole_weeks_of_dates(node: exp.Expression) -> exp.Expression:
    """whole_weeks where the engine's day difference of timestamps counts elapsed days
    (PostgreSQL rounds them, Spark truncates) and DuckDB's day boundaries: Monday
    23:00 to next Monday 01:00 is 7 days, 1 week. The days are those between the
    dates; the quotient a BIGINT (PostgreSQL's DIV is numeric)."""
    if isinstance(node, exp.DateDiff) and _unit(node) == "WEEK":
        days = exp.DateDiff(this=cast(node.this, "DATE"), expression=cast(node.expression, "DATE"),
                            unit=exp.var("DAY"))
        return cast(exp.IntDiv(this=days, expression=num(7)), "BIGINT")
    return node


def month_boundaries_by_fields(node: exp.Expression) -> exp.Expression:
    """date_diff('month' | 'quarter', a, b) as DuckDB counts it (boundaries crossed),
    from the fields of a and b: (year(b) - year(a)) * 12 + month(b) - month(a). For an
    engine whose own spelling reads each operand twice (SQLGlot's AGE of truncated
    values, for PostgreSQL): here each is read as a value the engine may name once."""
    if not (isinstance(node, exp.DateDiff) and _unit(node) in ("MONTH", "QUARTER")):
        return node
    end, start = node.this, node.expression
    per_year = 12 if _unit(node) == "MONTH" else 4

    def between(part: str) -> exp.Expression:
        return exp.Paren(this=exp.Sub(this=exp.Extract(this=exp.var(part), expression=end.copy()),
                                      expression=exp.Extract(this=exp.var(part),
                                                             expression=start.copy())))

    months = exp.Add(this=exp.Mul(this=between("YEAR"), expression=num(per_year)),
                     expression=between(_unit(node)))
    return cast(months, "BIGINT")


def boundaries(node: exp.Expression) -> exp.Expression:
    """DuckDB's date_diff counts unit boundaries crossed (2024-01-31 to 2024-02-01 is
    one month); Spark's DATEDIFF(unit, ..) and Trino's date_diff count whole units elapsed (zero). Whole
    units between the truncated values are the boundaries."""
    if isinstance(node, exp.DateDiff) and node.args.get("date_part_boundary"):
        unit = node.args["unit"]
        return exp.DateDiff(this=exp.TimestampTrunc(this=node.this, unit=unit.copy()),
                            expression=exp.TimestampTrunc(this=node.expression,
                                                          unit=unit.copy()),
                            unit=unit.copy())
    return node


# ---------------------------------------------------------------- extract

# How an engine spells extract(part from x) with DuckDB's result, per part: a function
# of the operand. Parts not listed render as EXTRACT(PART FROM x).
PartSpelling = Callable[[exp.Expression], exp.Expression]


def field(name: str) -> PartSpelling:
    """EXTRACT(NAME FROM x): the engine's own name for DuckDB's part."""
    return lambda x: exp.Extract(this=exp.var(name), expression=x)


def shifted(name: str, minus: int = 0, modulo: int | None = None) -> PartSpelling:
    """EXTRACT(NAME FROM x) - minus, or % modulo: a day of week counted otherwise
    (Sunday 1, or ISO's Monday 1 .. Sunday 7) made DuckDB's Sunday 0 .. Saturday 6."""
    def spell(x: exp.Expression) -> exp.Expression:
        part = exp.Extract(this=exp.var(name), expression=x)
        if modulo is not None:
            return exp.Mod(this=part, expression=num(modulo))
        return exp.Sub(this=part, expression=num(minus))
    return spell


def whole_second(x: exp.Expression) -> exp.Expression:
    """DuckDB's second is whole (59 for 59.5); an engine keeping the fraction floors it
    (of a date read as a timestamp: some engines refuse a date's second)."""
    operand = cast(x, "TIMESTAMP") if is_a(x, "DATE") else x
    return cast(exp.Floor(this=exp.Extract(this=exp.var("SECOND"), expression=operand)),
                "BIGINT")


def time_of_day(part: str) -> PartSpelling:
    """hour/minute/second of a date are 0 in DuckDB; an engine refusing them for a
    date reads the date as a timestamp first."""
    def spell(x: exp.Expression) -> exp.Expression:
        operand = cast(x, "TIMESTAMP") if is_a(x, "DATE") else x
        return exp.Extract(this=exp.var(part), expression=operand)
    return spell


def extract_rewrite(parts: dict[str, PartSpelling], whole: str | None = None,
                    epoch: str | None = None) -> Rewrite:
    """The rewrite spelling each extract part by `parts`; `whole` casts integer parts
    to that type (for an engine whose EXTRACT returns a decimal), `epoch` casts the
    epoch (DuckDB: a double with the fraction of a second)."""
    def rewrite(node: exp.Expression) -> exp.Expression:
        if not isinstance(node, exp.Extract):
            return node
        part = node.this.name.upper()
        spell = parts.get(part)
        new = spell(node.expression) if spell else node
        if part == "EPOCH":
            return cast(new, epoch) if epoch else new
        if whole and not (isinstance(new, exp.Cast) and new.to.is_type("BIGINT")):
            return cast(new, whole)
        return new
    return rewrite


def epoch_from_fields(x: exp.Expression) -> exp.Expression:
    """Seconds since 1970-01-01 of the wall-clock time (a timestamp has no zone in
    Strata): days * 86400 + hour * 3600 + minute * 60 + second with its fraction, the
    days a BIGINT.
    For an engine whose own epoch counts from the session's zone, or has none."""
    # UNIX_DATE is an INT: times 86400 it overflows 32 bits before 1901-12-14 and
    # after 2038-01-19 (ANSI raises), so the days are a BIGINT first
    day = cast(exp.Anonymous(this="UNIX_DATE", expressions=[cast(x.copy(), "DATE")]), "BIGINT")
    parts = [exp.Mul(this=day, expression=num(86400))]
    if is_a(x, "DATE"):
        return cast(parts[0], "DOUBLE")
    for name, factor in (("HOUR", 3600), ("MINUTE", 60)):
        parts.append(exp.Mul(this=exp.Extract(this=exp.var(name), expression=x.copy()),
                             expression=num(factor)))
    parts.append(exp.Extract(this=exp.var("SECOND"), expression=x.copy()))
    total = parts[0]
    for part in parts[1:]:
        total = exp.Add(this=total, expression=part)
    return cast(total, "DOUBLE")


# ---------------------------------------------------------------- arithmetic

def double_division(node: exp.Expression) -> exp.Expression:
    """Strata's `/` is a double on every operand type (DuckDB's), where engines divide
    decimals as decimals (Spark keeps about 6 fraction digits) or integers as
    integers: divide the operands as doubles."""
    if isinstance(node, exp.Div) and not node.args.get("typed"):
        return exp.Div(this=_as_double(node.this), expression=_as_double(node.expression),
                       typed=True)
    return node


def _as_double(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.Cast) and node.to.is_type("DOUBLE"):
        return node
    return cast(node.this if isinstance(node, exp.Paren) else node, "DOUBLE")


def double_average(node: exp.Expression) -> exp.Expression:
    """DuckDB's avg is a double for every number; engines average decimals as decimals
    (rounded to a few digits) or integers as decimals: average the doubles."""
    if isinstance(node, exp.Avg) and not is_a(node.this, "DOUBLE") and \
            not (isinstance(node.this, exp.Cast) and node.this.to.is_type("DOUBLE")):
        return exp.Avg(this=cast(node.this, "DOUBLE"))
    return node


def half_away(y: exp.Expression, copies: Callable[[], exp.Expression]) -> exp.Expression:
    """y rounded half away from zero, in double arithmetic and exactly (C's round(),
    which DuckDB's round uses): trunc(y) + sign(y) when |y - trunc(y)| >= 0.5."""
    trunc = exp.Trunc(this=copies())
    step = exp.Sign(this=copies())
    fraction = exp.Abs(this=exp.Sub(this=y, expression=trunc.copy()))
    return exp.Case(ifs=[exp.If(this=exp.GTE(this=fraction, expression=num(0.5)),
                                true=exp.Add(this=trunc.copy(), expression=step))],
                    default=trunc)


def double_round(node: exp.Expression) -> exp.Expression:
    """DuckDB's round of a double with n digits is round(x * 10^n) / 10^n, halves away
    from zero (round(2.5) = 3, round(1.005, 2) = 1.0): spelled out for an engine whose
    ROUND of a double rounds half to even or has no digits argument for a double."""
    if not isinstance(node, exp.Round) or not is_a(node.this, "DOUBLE"):
        return node
    x = node.this
    if node.args.get("decimals") is None:
        return half_away(x, x.copy)
    return double_round_digits(node)


def double_round_digits(node: exp.Expression) -> exp.Expression:
    """round(x, n) of a double as DuckDB computes it, for an engine whose ROUND(x) is
    DuckDB's but whose ROUND(x, n) rounds the decimal text of x (Spark: 1.005 -> 1.01)."""
    x, digits = node.this, node.args.get("decimals")
    if not isinstance(node, exp.Round) or not is_a(x, "DOUBLE") or digits is None:
        return node
    scale = exp.Pow(this=cast(num(10), "DOUBLE"), expression=digits)

    def scaled() -> exp.Expression:
        return exp.Mul(this=_operand(x.copy()), expression=scale.copy())

    return exp.Div(this=exp.Paren(this=half_away(scaled(), scaled)),
                   expression=scale.copy(), typed=True)


def _operand(x: exp.Expression) -> exp.Expression:
    """`x` in parentheses unless it is one term already."""
    if isinstance(x, (exp.Column, exp.Literal, exp.Func, exp.Paren, exp.Cast)):
        return x
    return exp.Paren(this=x)


def numeric_round(node: exp.Expression) -> exp.Expression:
    """round of an int or decimal, halves away from zero, with DuckDB's result type:
    an engine rounding in NUMERIC and returning NUMERIC."""
    if not isinstance(node, exp.Round) or not is_a(node.this, "BIGINT", "DECIMAL"):
        return node
    inner = node.this if is_a(node.this, "DECIMAL") else cast(node.this, "DECIMAL")
    rounded = exp.Round(this=inner, decimals=node.args.get("decimals"))
    return cast(rounded, rounded_type(node.this.type, node.args.get("decimals")))


def rounded_type(operand: exp.DataType, digits: exp.Expression | None) -> exp.DataType:
    """DuckDB's type of round(decimal(p, s), n): decimal(p, n) with n clipped to [0, s]
    (round(9999.99) is a decimal(6, 0) holding 10000, which decimal(6, 2) cannot)."""
    shape = [e.this.this for e in operand.expressions] if operand.is_type("DECIMAL") else []
    if len(shape) != 2:
        return operand
    scale = min(max(int_literal(digits) or 0, 0), int(shape[1]))
    return exp.DataType.build(f"DECIMAL({shape[0]}, {scale})")


def int_literal(node: exp.Expression | None) -> int | None:
    """The value of a whole-number literal (-2 is Neg(2)), else None."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Neg):
        inner = int_literal(node.this)
        return -inner if inner is not None else None
    if isinstance(node, exp.Literal) and not node.is_string:
        try:
            return int(node.this)
        except ValueError:
            return None
    return None


# ---------------------------------------------------------------- like

def like_without_escape(clause: bool) -> Rewrite:
    """DuckDB's `like` has no escape character (a backslash is a backslash); engines
    whose LIKE escapes with a backslash by default, or to be sure of one, get every
    backslash doubled and, where `clause`, an explicit ESCAPE '\\'."""
    def rewrite(node: exp.Expression) -> exp.Expression:
        if not isinstance(node, exp.Like) or isinstance(node.parent, exp.Escape):
            return node
        pattern = node.expression
        if isinstance(pattern, exp.Literal) and pattern.is_string:
            doubled = exp.Literal.string(pattern.this.replace("\\", "\\\\"))
        else:
            doubled = exp.Anonymous(this="REPLACE", expressions=[
                pattern, exp.Literal.string("\\"), exp.Literal.string("\\\\")])
        like = exp.Like(this=node.this, expression=doubled)
        if not clause:
            return like
        return exp.Escape(this=like, expression=exp.Literal.string("\\"))
    return rewrite


# ---------------------------------------------------------------- casts

def _cast_from(node: exp.Expression, sources: tuple[str, ...], targets: tuple[str, ...]) -> bool:
    return (isinstance(node, exp.Cast) and node.to.is_type(*targets)
            and is_a(node.this, *sources))


def bool_to_number_via_int(node: exp.Expression) -> exp.Expression:
    """cast(b as int) is 1/0 in DuckDB; PostgreSQL casts a boolean to INTEGER only."""
    if _cast_from(node, ("BOOLEAN",), NUMBERS):
        return cast(cast(node.this, "INT"), node.to)
    return node


def number_to_bool_by_comparison(node: exp.Expression) -> exp.Expression:
    """cast(x as bool) of a number is x <> 0 in DuckDB; PostgreSQL casts only an
    INTEGER to boolean."""
    if _cast_from(node, NUMBERS, ("BOOLEAN",)):
        return exp.Paren(this=exp.NEQ(this=node.this, expression=num(0)))
    return node


def decimal_to_int_rounds(node: exp.Expression) -> exp.Expression:
    """cast(10.50 as int) is 11 in DuckDB (halves away from zero); Spark truncates."""
    if _cast_from(node, ("DECIMAL",), ("BIGINT",)):
        return cast(exp.Round(this=node.this), node.to)
    return node


def double_to_int_half_even(spell: Callable[[exp.Expression], exp.Expression]) -> Rewrite:
    """cast(x as int) of a double rounds halves to even in DuckDB (2.5 -> 2, 0.75 ->
    1); `spell` is the engine's half-to-even rounding of the operand."""
    def rewrite(node: exp.Expression) -> exp.Expression:
        if _cast_from(node, ("DOUBLE",), ("BIGINT",)):
            return cast(spell(node.this), node.to)
        return node
    return rewrite


def bround(x: exp.Expression) -> exp.Expression:
    """Spark's BROUND: HALF_EVEN."""
    return exp.Anonymous(this="BROUND", expressions=[x])


def half_even_by_halves(x: exp.Expression) -> exp.Expression:
    """Half to even from a ROUND that rounds halves away from zero: a value exactly
    halfway rounds to 2 * round(x / 2)."""
    trunc = exp.Trunc(this=x.copy())
    halfway = exp.EQ(this=exp.Abs(this=exp.Sub(this=x.copy(), expression=trunc)),
                     expression=num(0.5))
    even = exp.Mul(this=num(2), expression=exp.Round(
        this=exp.Div(this=x.copy(), expression=num(2), typed=True)))
    return exp.Case(ifs=[exp.If(this=halfway, true=even)], default=exp.Round(this=x))


def text_meets_time(node: exp.Expression) -> exp.Expression:
    """DuckDB compares a text with a date or timestamp by reading the text as one;
    an engine that does not coerce it gets the cast written out."""
    if not isinstance(node, (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE)):
        return node
    left, right = node.this.unnest(), node.expression.unnest()
    for text, other, key in ((left, right, "this"), (right, left, "expression")):
        if is_a(text, "TEXT", "VARCHAR") and is_a(other, "DATE", "TIMESTAMP"):
            sides = {"this": node.this, "expression": node.expression}
            sides[key] = cast(sides[key], other.type)
            return type(node)(**sides)
    return node


def typed_items(node: exp.Expression) -> exp.Expression:
    """An engine whose unnested items are untyped (Snowflake's FLATTEN yields VARIANT:
    a string comes back quoted) reads each item of an expand cast to the list's
    element type, which sqlgen puts on the alias column."""
    if not isinstance(node, exp.Select):
        return node
    items = {}
    for join in node.args.get("joins") or []:
        unnest = join.this
        alias = unnest.args.get("alias") if isinstance(unnest, exp.Unnest) else None
        if alias is None:
            continue
        for column in alias.columns:
            if column.type is not None:
                items[(alias.name, column.name)] = column.type
    if not items:
        return node
    for column in list(node.find_all(exp.Column)):
        typ = items.get((column.table, column.name))
        if typ is None or isinstance(column.parent, exp.Cast):
            continue
        typed = cast(column.copy(), typ)
        if column.parent is node and column.arg_key == "expressions":
            # a selected item keeps its name: `CAST(x.tag AS VARCHAR) AS tag`
            typed = exp.alias_(typed, column.output_name, quoted=column.this.quoted)
        column.replace(typed)
    return node.copy()


# ---------------------------------------------------------------- merge key matches
_KEY_DEFAULTS: dict[str, Callable[[], exp.Expression]] = {
    "int": lambda: exp.Literal.number(0),
    "decimal": lambda: exp.Literal.number(0),
    "double": lambda: exp.Literal.number(0),
    "text": lambda: exp.Literal.string(""),
    "bool": lambda: exp.false(),
    "date": lambda: exp.cast(exp.Literal.string("1970-01-01"), "DATE"),
    "timestamp": lambda: exp.cast(exp.Literal.string("1970-01-01 00:00:00"), "TIMESTAMP"),
}


def hashable_key_match(left: exp.Expression, right: exp.Expression,
                       kind: str) -> exp.Expression:
    """`left IS NOT DISTINCT FROM right` as two equalities a hash join can use:
    `coalesce(l, d) = coalesce(r, d) AND (l IS NULL) = (r IS NULL)`, d a value of the
    key's type. PostgreSQL plans IS NOT DISTINCT FROM as a nested loop: an upsert's
    probe of a 1e4-row delta against a 1e6-row snapshot ran for minutes. The same
    truth table: both NULL match, one NULL does not, else l = r. Unknown kinds keep
    IS NOT DISTINCT FROM."""
    default = _KEY_DEFAULTS.get(kind)
    if default is None:
        return exp.NullSafeEQ(this=left, expression=right)
    values = exp.EQ(this=exp.Coalesce(this=left.copy(), expressions=[default()]),
                    expression=exp.Coalesce(this=right.copy(), expressions=[default()]))
    nulls = exp.EQ(this=exp.Paren(this=exp.Is(this=left.copy(), expression=exp.Null())),
                   expression=exp.Paren(this=exp.Is(this=right.copy(), expression=exp.Null())))
    return exp.And(this=values, expression=nulls)


# ---------------------------------------------------------------- windowed aggregates

def over_each_aggregate(node: exp.Expression) -> exp.Expression:
    """An aggregate an engine spells as an expression of aggregates (Spark's string_agg:
    `CASE WHEN COUNT(x) = 0 THEN NULL ELSE ARRAY_JOIN(ARRAY_SORT(COLLECT_LIST(x)), ..)
    END`) cannot take OVER as a whole (`CASE .. END OVER (..)` does not parse): each
    aggregate call inside it takes the window instead."""
    if not isinstance(node, exp.Window) or isinstance(node.this, (exp.AggFunc, exp.Filter)) \
            or not any(True for _ in _outer_aggregates(node.this)):
        return node
    body = node.this.copy()
    for call in list(_outer_aggregates(body)):
        window = node.copy()
        window.set("this", call.copy())
        if call is body:
            return window
        call.replace(window)
    return body


def _outer_aggregates(body: exp.Expression):
    """The aggregate calls in `body` not inside another aggregate or a window."""
    for n in body.walk():
        if isinstance(n, exp.AggFunc) and not any(
                isinstance(a, (exp.AggFunc, exp.Window)) for a in _up_to(n, body)):
            yield n


def _up_to(node: exp.Expression, root: exp.Expression):
    while node is not root and node.parent is not None:
        node = node.parent
        yield node

