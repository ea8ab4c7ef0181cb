"""The syntax tree: what the author wrote, with spans, before any name is resolved."""

from __future__ import annotations

from dataclasses import dataclass, field

from strata.diagnostics import Span


# ---------------------------------------------------------------- names
# Here, not in the parser, because the parse cache pickles them: loading a cached
# tree must not import the parser (and Lark with it).
class _Name(str):
    """An identifier with its span (a str, so it composes like one)."""

    span: Span

    def __new__(cls, text: str, span: Span):
        obj = super().__new__(cls, text)
        obj.span = span
        return obj

    def __reduce__(self):  # for the parse cache: str's own pickling would drop the span
        return _Name, (str(self), self.span)


class _Names(tuple):
    """A `[a, b]` list of names with its span and each name's span (a tuple of str)."""

    span: Span
    spans: tuple[Span, ...]

    def __new__(cls, names: list[_Name], span: Span):
        obj = super().__new__(cls, (str(n) for n in names))
        obj.span = span
        obj.spans = tuple(n.span for n in names)
        return obj

    def __reduce__(self):
        return _Names, ([_Name(n, s) for n, s in zip(self, self.spans)], self.span)


class QualifiedName(_Name):
    """`shared.orders`: a name of an imported module, behind its qualifier. Its own
    type, so a backticked name holding a dot (`` `a.b` ``) is never taken for one."""

    qualifier: str
    member: str

    def __new__(cls, qualifier: str, member: str, span: Span):
        obj = super().__new__(cls, f"{qualifier}.{member}", span)
        obj.qualifier, obj.member = str(qualifier), str(member)
        return obj

    def __reduce__(self):
        return QualifiedName, (self.qualifier, self.member, self.span)


# ---------------------------------------------------------------- types
@dataclass(frozen=True)
class TypeRef:
    name: str  # int, double, decimal, text, bool, date, timestamp, list
    args: tuple[int, ...] = ()
    element: TypeRef | None = None
    span: Span | None = field(default=None, compare=False)


# ---------------------------------------------------------------- expressions
@dataclass(frozen=True)
class Column:
    name: str
    qualifier: str | None
    span: Span = field(compare=False)


@dataclass(frozen=True)
class Literal:
    value: object  # int, float, Decimal, str, bool, None, date, datetime, list
    kind: str  # int, decimal, double, text, bool, null, date, timestamp
    span: Span = field(compare=False)


@dataclass(frozen=True)
class ListLit:
    items: tuple[Expr, ...]
    span: Span = field(compare=False)


@dataclass(frozen=True)
class Call:
    name: str
    args: tuple[Expr, ...]
    span: Span = field(compare=False)
    qualifier: str | None = None  # `shared.f(x)`: a function of an imported module


@dataclass(frozen=True)
class BinOp:
    op: str  # + - * / % || = != < <= > >= and or like
    left: Expr
    right: Expr
    span: Span = field(compare=False)


@dataclass(frozen=True)
class UnaryOp:
    op: str  # not, -
    operand: Expr
    span: Span = field(compare=False)


@dataclass(frozen=True)
class IsNull:
    operand: Expr
    negated: bool
    span: Span = field(compare=False)


@dataclass(frozen=True)
class InList:
    operand: Expr
    items: tuple[Expr, ...]
    negated: bool
    span: Span = field(compare=False)


@dataclass(frozen=True)
class Between:
    operand: Expr
    low: Expr
    high: Expr
    negated: bool
    span: Span = field(compare=False)


@dataclass(frozen=True)
class Case:
    whens: tuple[tuple[Expr, Expr], ...]
    default: Expr | None
    span: Span = field(compare=False)


@dataclass(frozen=True)
class Cast:
    operand: Expr
    to: TypeRef
    span: Span = field(compare=False)
    safe: bool = False  # try_cast: NULL where the cast would fail


@dataclass(frozen=True)
class Extract:
    part: str
    operand: Expr
    span: Span = field(compare=False)


Expr = (Column | Literal | ListLit | Call | BinOp | UnaryOp | IsNull | InList | Between | Case
        | Cast | Extract)


# ---------------------------------------------------------------- declarations
@dataclass(frozen=True)
class Meta:
    """`description: '...'`, `owner: '...'`, `tags: [a, b]` on a source, a model or a
    column: what a reader of the data should know. Never part of the compiled SQL,
    so never part of a model's content identity."""

    description: str | None = None
    owner: str | None = None
    tags: tuple[str, ...] = ()
    span: Span | None = field(default=None, compare=False)

    def __bool__(self) -> bool:
        return bool(self.description or self.owner or self.tags)


NO_META = Meta()


@dataclass(frozen=True)
class ColumnDecl:
    name: str
    type: TypeRef
    span: Span
    meta: Meta = NO_META


@dataclass(frozen=True)
class ColumnMeta:
    """`column amount { description: '...' }` in a model: one output column's meta."""

    name: str
    meta: Meta
    span: Span
    name_span: Span


@dataclass(frozen=True)
class SourceDecl:
    name: str
    columns: tuple[ColumnDecl, ...]
    table: tuple[str, ...] | None  # physical name parts, e.g. ("raw", "crm_customers")
    file: str | None  # path as written, relative to the declaring file
    span: Span
    name_span: Span
    meta: Meta = NO_META


@dataclass(frozen=True)
class NamedExpr:
    name: str
    expr: Expr
    span: Span


@dataclass(frozen=True)
class SelectItem:
    expr: Expr
    alias: str | None
    span: Span


# ---- steps
@dataclass(frozen=True)
class From:
    relation: str | Pipeline | RelationCall
    alias: str | None
    span: Span


@dataclass(frozen=True)
class Let:
    items: tuple[NamedExpr, ...]
    span: Span


@dataclass(frozen=True)
class Filter:
    predicate: Expr
    span: Span


@dataclass(frozen=True)
class Join:
    relation: str | Pipeline | RelationCall
    alias: str | None
    on: Expr | None  # None for join_cross
    left: bool  # join_left
    many: bool  # opt out of the many-to-one check
    span: Span
    kind: str = "inner"  # inner, left, full, cross, semi, anti


@dataclass(frozen=True)
class Expand:
    column: Column
    item: str
    span: Span


@dataclass(frozen=True)
class Group:
    keys: tuple[Column, ...]
    span: Span
    sets: str | None = None  # rollup | cube: the grouping sets the keys make


@dataclass(frozen=True)
class Aggregate:
    items: tuple[NamedExpr, ...]
    span: Span


@dataclass(frozen=True)
class Derive:
    items: tuple[NamedExpr, ...]
    span: Span


@dataclass(frozen=True)
class Select:
    items: tuple[SelectItem, ...]  # an item whose expr is a Star: columns in scope
    span: Span


@dataclass(frozen=True)
class SetOp:
    op: str  # union, union_distinct, except, intersect
    relation: str | Pipeline | RelationCall
    span: Span


@dataclass(frozen=True)
class Star:
    """`*` in `select`: every column in scope, in order; `rel.*`: every column of the
    relation `rel` (hidden ones too); either `except` the names after it."""

    span: Span
    relation: str | None = None  # `rel.*`
    exclude: tuple[str, ...] = ()  # `* except a, b`
    exclude_spans: tuple[Span, ...] = field(default=(), compare=False)
    relation_span: Span | None = field(default=None, compare=False)


@dataclass(frozen=True)
class SortKey:
    expr: Expr
    desc: bool
    nulls_first: bool | None  # None: as DuckDB (nulls last)
    span: Span


@dataclass(frozen=True)
class Sort:
    keys: tuple[SortKey, ...]
    span: Span


@dataclass(frozen=True)
class Take:
    count: int
    by: tuple[Column, ...]  # top-N per group of these keys
    span: Span


@dataclass(frozen=True)
class Distinct:
    by: tuple[Column, ...]  # empty: whole rows
    order: tuple[SortKey, ...]  # which row of a `by` group is kept: the first
    span: Span


@dataclass(frozen=True)
class FrameBound:
    kind: str  # unbounded, current, offset
    side: str | None  # preceding, following
    offset: int | None
    span: Span


@dataclass(frozen=True)
class Frame:
    kind: str  # rows, range
    start: FrameBound
    end: FrameBound
    span: Span


@dataclass(frozen=True)
class Window:
    by: tuple[Column, ...]
    order: tuple[SortKey, ...]
    frame: Frame | None
    span: Span


@dataclass(frozen=True)
class RelationCall:
    """`range(a, b, step)`: rows made from nothing, where a relation goes."""

    name: str
    args: tuple[Expr, ...]
    span: Span


@dataclass(frozen=True)
class Pipeline:
    """`(from x | filter ... | group ... | aggregate ...)`: a relation shaped in place."""

    steps: tuple[Step, ...]
    span: Span


Step = (From | Let | Filter | Join | Expand | Group | Aggregate | Derive | Select | SetOp
        | Sort | Take | Distinct | Window)


@dataclass(frozen=True)
class With:
    """`with name = (from x | ...)`: a relation of one model, read by name."""

    name: str
    pipeline: Pipeline
    span: Span
    name_span: Span


# ---- properties
@dataclass(frozen=True)
class Duration:
    """`3 days`: a property value that is a count and a unit (lookback)."""

    count: object  # int | Decimal, as written
    unit: str

    def __str__(self) -> str:
        return f"{self.count} {self.unit}"


@dataclass(frozen=True)
class Property:
    """`name: value` or a bare flag (`incremental`)."""

    name: str
    value: object  # str | int | float | tuple[str, ...] | True
    span: Span
    value_span: Span


@dataclass(frozen=True)
class Pin:
    kind: str  # unique, not_null, rows, columns, references, accepted, holds
    columns: tuple[str, ...] = ()
    op: str | None = None  # for rows: >=, <=, =, between
    bounds: tuple[int, ...] = ()
    contract: tuple[ColumnDecl, ...] = ()
    span: Span | None = None
    relation: str | None = None  # references: the relation whose key is referenced
    ref_columns: tuple[str, ...] = ()  # references: that relation's key columns
    values: tuple[Expr, ...] = ()  # accepted: the values a column may hold
    expr: Expr | None = None  # holds: the condition every row must meet


@dataclass(frozen=True)
class ModelDecl:
    name: str
    steps: tuple[Step, ...]
    properties: tuple[Property, ...]
    pins: tuple[Pin, ...]
    span: Span
    name_span: Span
    withs: tuple[With, ...] = ()  # `with name = (...)`, in the order written
    meta: Meta = NO_META  # description, owner, tags
    column_meta: tuple[ColumnMeta, ...] = ()  # `column c { ... }`, in the order written


# ---- tests
@dataclass(frozen=True)
class RowsBlock:
    kind: str  # given | expect
    relation: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Expr, ...], ...]
    row_spans: tuple[Span, ...]
    span: Span


@dataclass(frozen=True)
class TestDecl:
    name: str
    blocks: tuple[RowsBlock, ...]
    span: Span
    name_span: Span


# ---- functions
@dataclass(frozen=True)
class Param:
    name: str
    type: TypeRef
    span: Span


@dataclass(frozen=True)
class FunctionDecl:
    """`fn name(p: type, ...) -> type = expr`: an expression over its parameters."""

    name: str
    params: tuple[Param, ...]
    returns: TypeRef
    body: Expr
    span: Span
    name_span: Span


# ---- imports
@dataclass(frozen=True)
class ImportName:
    """`stg_orders` or `cents_to_dollars as dollars` in an import's list."""

    name: str
    alias: str | None
    span: Span

    @property
    def local(self) -> str:
        return self.alias or self.name


@dataclass(frozen=True)
class ImportDecl:
    """`import '../shared' [as shared] [{ name [as alias], ... }]`."""

    path: str  # as written, relative to the importing file
    alias: str | None  # the qualifier; None: the path's last part
    names: tuple[ImportName, ...]
    span: Span
    path_span: Span
    alias_span: Span | None = None


Declaration = SourceDecl | ModelDecl | TestDecl | FunctionDecl | ImportDecl


@dataclass(frozen=True)
class ModuleFile:
    path: str
    declarations: tuple[Declaration, ...]
    qualified: bool = False  # writes `m.name` (a name of an imported module) somewhere
