"""Text → syntax tree with spans (Lark LALR), and module loading (file or directory).

Every failure here becomes a diagnostic: unexpected tokens (E001), bytes that are
not UTF-8 (E002), unterminated strings (E003), an empty module (E004) and an
unreadable path (E005); the words a syntax error says are in errors.py.

Over 700 lines on purpose: `_ToAst` is one method per grammar rule and reads best
in one place beside the grammar it mirrors (grammar.lark).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from pathlib import Path

from lark import Lark, Token, Transformer, Tree, v_args
from lark.exceptions import (
    UnexpectedInput,
    VisitError,
)

from strata.cachedirs import cache_home, private_dir
from strata.diagnostics import Diagnostic, Span, StrataError, fail
from strata.syntax import ast
from strata.syntax.ast import _Name, _Names
from strata.syntax.errors import syntax_diagnostic
from strata.syntax.text import TOO_DEEP_HINT, _refuse_nul, read_text  # noqa: F401  (re-exported)

GRAMMAR_PATH = Path(__file__).with_name("grammar.lark")

# A separator is noise right after these tokens (the statement goes on) ...
_CONTINUES_AFTER = {"LBRACE", "COMMA", "EQ", "CMP_OP", "ROWS_OP", "PLUS", "MINUS", "STAR",
                    "SLASH", "PERCENT", "CONCAT", "AND", "OR", "NOT", "LIKE", "COLON", "ON",
                    "AS", "CASE", "WHEN", "THEN", "ELSE", "IN", "IS", "BETWEEN", "_SEP", "PIPE"}
_OPEN = {"LPAR", "LSQB"}
_CLOSE = {"RPAR", "RSQB"}

GROUPING_SETS = ("rollup", "cube")  # `group rollup(a, b)`, `group cube(a, b)`
_INT_MAX = 2**63 - 1  # `int` is 64-bit (SPEC §1.3)
_DECIMAL_DIGITS = 38  # the widest decimal DuckDB, PostgreSQL's typed columns and Spark share


def _precision(value: Decimal) -> int:
    """The digits a decimal literal's type needs (as the typer gives it: 0.001 is
    decimal(4, 3))."""
    digits = value.as_tuple()
    return max(len(digits.digits), max(0, -digits.exponent) + 1)

# a literal of the right shape whose values do not exist (2024-02-30, hour 25)
_DATE_SHAPE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TIMESTAMP_SHAPE = re.compile(r"^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$")


class SeparatorPostLex:
    """Keep only the newlines that end a statement inside a block.

    `always_accept` also puts NAME in the lexer of every parser state: a keyword is
    then only ever a whole word. Without it, where a name cannot come (after an
    operand) the contextual lexer knew only the keywords, and cut `and` off `andy`
    (`a andy` read as `a and y`); with NAME there, `andy` is one name (Lark retypes a
    name that is exactly a keyword), and a name where none may stand is E001."""

    always_accept = ("_SEP", "NAME")

    def process(self, stream):
        braces = brackets = 0
        prev = None
        for tok in stream:
            kind = tok.type
            if kind == "_SEP":
                if braces > 0 and brackets == 0 and prev not in _CONTINUES_AFTER:
                    prev = kind
                    yield tok
                continue
            if kind == "LBRACE":
                braces += 1
            elif kind == "RBRACE":
                braces = max(0, braces - 1)
            elif kind in _OPEN:
                brackets += 1
            elif kind in _CLOSE:
                brackets = max(0, brackets - 1)
            # `>` may close `list<T>` at the end of a line; it never continues one;
            # nor does the `*` of `select *` or `select o.*` (an item, not a product).
            if kind == "CMP_OP" and tok == ">":
                kind = "GT"
            elif kind == "STAR" and prev in ("SELECT", "COMMA", "DOT"):
                kind = "STAR_ITEM"
            prev = kind
            yield tok


@lru_cache(maxsize=1)
def _lark() -> Lark:
    # Building the LALR tables takes ~0.3 s, a third of a whole `strata run` process;
    # loading them back ~0.03 s. Lark checks the cached file against the grammar,
    # options and its own version, and rebuilds when it is missing, stale or
    # unreadable; postlex and propagate_positions are applied after loading.
    return Lark(GRAMMAR_PATH.read_text(), parser="lalr", lexer="contextual",
                postlex=SeparatorPostLex(), propagate_positions=True, maybe_placeholders=False,
                cache=_tables_file())


def _tables_file() -> str | bool:
    """Where the LALR tables are kept: in Strata's cache folder, private to the user,
    also under STRATA_NO_CACHE (they are the compiled grammar, like bytecode, not a
    project's data). Never Lark's default (`cache=True`): a file in the shared temp
    folder with a predictable name, which Lark unpickles; another local user could
    plant it first. False (build every time) when no private folder can be had."""
    import sys

    import lark

    directory = private_dir(cache_home() / "grammar")
    if directory is None:
        return False
    python = "{}.{}".format(*sys.version_info[:2])
    return str(directory / f"lalr-py{python}-lark{lark.__version__}.tables")


def _span(file: str, meta) -> Span:
    if getattr(meta, "empty", False) or not hasattr(meta, "line"):
        return Span(file, 1, 1, 1, 1)
    return Span(file, meta.line, meta.column, meta.end_line, meta.end_column)


def _tok_span(file: str, tok: Token) -> Span:
    return Span(file, tok.line, tok.column, tok.end_line or tok.line,
                tok.end_column or tok.column + len(tok))


def _name_text(tok: Token) -> str:
    text = str(tok)
    return text[1:-1] if text.startswith("`") else text


@dataclass(frozen=True)
class _Spanned:
    """A number or string property value on its way up, with where it was written."""

    value: object
    span: Span


# the properties that describe rather than compute (ast.Meta)
META_KEYS = ("description", "owner", "tags")


@dataclass(frozen=True)
class _MetaItem:
    """`description: '...'` or `tags: [a, b]` on its way up into an ast.Meta."""

    key: _Name
    value: object  # str (a string), _Name (a bare word), _Names, a number
    span: Span


def _meta(items: list[_MetaItem], span: Span, where: str) -> ast.Meta:
    """The Meta of a source, model or column from its items: E019 for a key that is
    not one, E018 for one given twice, E205 for a value of the wrong kind."""
    found: dict[str, object] = {}
    for item in items:
        key = str(item.key)
        if key not in META_KEYS:
            raise fail("E019", f"unknown property `{key}` {where}", item.key.span,
                       "a source or a column describes itself with "
                       f"{', '.join(META_KEYS)}")
        if key in found:
            raise fail("E018", f"property `{key}` is set twice {where}", item.span)
        text = key != "tags"
        if text and (not isinstance(item.value, str) or isinstance(item.value, _Name)):
            raise fail("E205", f"`{key}:` takes a string", item.span,
                       f"quote it: `{key}: '...'`")
        if not text and not isinstance(item.value, _Names):
            raise fail("E205", "`tags:` takes a list of names", item.span,
                       "e.g. `tags: [finance, nightly]`")
        found[key] = item.value
    return ast.Meta(found.get("description"), found.get("owner"),
                    tuple(found.get("tags", ())), span)


def _cut(children):
    return [c for c in children if not isinstance(c, Token) or c.type not in ("_SEP",)]


@v_args(meta=True)
class _ToAst(Transformer):
    def __init__(self, file: str):
        super().__init__()
        self.file = file
        self.qualified = False  # a `m.name` was read (imports.py rewrites it)

    def S(self, meta) -> Span:
        return _span(self.file, meta)

    # ------------------------------------------------------------ names, types
    def NAME(self, tok: Token) -> _Name:  # a token callback: NAME is a terminal
        if tok == "``":  # no engine has a column or table without a name
            raise fail("E001", "a quoted name cannot be empty", _tok_span(self.file, tok),
                       "write a name between the backticks")
        return _Name(_name_text(tok), _tok_span(self.file, tok))

    def simple_type(self, meta, children):
        name, *args = children
        # a long argument is refused by the type's own range check (E020)
        return ast.TypeRef(str(name).lower(), tuple(_whole(a) for a in args), None,
                           self.S(meta))

    def list_type(self, meta, children):
        opening, element, closing = children
        for tok, want in ((opening, "<"), (closing, ">")):
            if str(tok) != want:
                raise fail("E001", f"unexpected `{tok}`", _tok_span(self.file, tok),
                           f"a list type is written `list<T>`: expected `{want}`")
        return ast.TypeRef("list", (), element, self.S(meta))

    # ------------------------------------------------------------ declarations
    def start(self, meta, children):
        return list(children)

    def source_col(self, meta, children):
        name, typ, *block = children
        return ast.ColumnDecl(str(name), typ, name.span,
                              block[0] if block else ast.NO_META)

    def source_items(self, meta, children):
        return [c for c in children if isinstance(c, (ast.ColumnDecl, _MetaItem))]

    def meta_text(self, meta, children):
        key, value = children
        return _MetaItem(key, _unquote(value), self.S(meta))

    def meta_names(self, meta, children):
        key, value = children
        return _MetaItem(key, value, self.S(meta))

    def meta_block(self, meta, children):
        return _meta([c for c in children if isinstance(c, _MetaItem)], self.S(meta),
                     "of a column")

    def column_meta(self, meta, children):
        name, block = children
        return ast.ColumnMeta(str(name), block, self.S(meta), name.span)

    def import_decl(self, meta, children):
        path, *rest = children
        alias = rest.pop(0) if rest and isinstance(rest[0], _Name) else None
        names = rest[0] if rest else []
        return ast.ImportDecl(_unquote(path), str(alias) if alias else None, tuple(names),
                              self.S(meta), _tok_span(self.file, path),
                              alias.span if alias else None)

    def import_names(self, meta, children):
        return [c for c in children if isinstance(c, ast.ImportName)]

    def import_name(self, meta, children):
        name, *alias = children
        return ast.ImportName(str(name), str(alias[0]) if alias else None, self.S(meta))

    def qualified_relation(self, meta, children):
        qualifier, name = children
        self.qualified = True
        return ast.QualifiedName(qualifier, name, self.S(meta))

    def relation_name(self, meta, children):
        if len(children) == 2:
            return self.qualified_relation(meta, children)
        return children[0]

    def col_decl(self, meta, children):
        name, typ = children
        return ast.ColumnDecl(str(name), typ, name.span)

    def col_decls(self, meta, children):
        return [c for c in children if isinstance(c, ast.ColumnDecl)]

    def file_target(self, meta, children):
        _eq, kw, path = children
        return ("file", kw, _unquote(path))

    def table_target(self, meta, children):
        return ("table", tuple(str(c) for c in children[1:]))

    def source(self, meta, children):
        name = children[0]
        target = None
        columns: list[ast.ColumnDecl] = []
        for child in children[1:]:
            if isinstance(child, tuple):
                target = child
            elif isinstance(child, list):
                columns = child
        meta_items = [c for c in columns if isinstance(c, _MetaItem)]
        columns = [c for c in columns if isinstance(c, ast.ColumnDecl)]
        described = _meta(meta_items, self.S(meta), f"of source `{name}`")
        table = file = None
        if target and target[0] == "file":
            if str(target[1]) != "file":
                raise fail("E001", f"expected `file` before the path, found `{target[1]}`",
                           target[1].span, "a file: `source name = file 'path.csv' { ... }`; "
                           "a table is named without quotes: `source name = schema.table "
                           "{ ... }`")
            file = target[2]
        elif target:
            table = target[1]
        return ast.SourceDecl(str(name), tuple(columns), table, file, self.S(meta), name.span,
                              described)

    def model(self, meta, children):
        name, *items = children
        steps, props, pins, withs, metas, columns = [], [], [], [], [], []
        for item in items:
            if isinstance(item, _MetaItem):
                metas.append(item)
            elif isinstance(item, ast.ColumnMeta):
                columns.append(item)
            elif isinstance(item, ast.Property):
                props.append(item)
            elif isinstance(item, ast.Pin):
                pins.append(item)
            elif isinstance(item, ast.With):
                withs.append(item)
            else:
                steps.append(item)
        described = _meta(metas, metas[0].span if metas else self.S(meta),
                          f"of model `{name}`")
        return ast.ModelDecl(str(name), tuple(steps), tuple(props), tuple(pins), self.S(meta),
                             name.span, tuple(withs), described, tuple(columns))

    def with_step(self, meta, children):
        name, _eq, pipeline = children
        return ast.With(str(name), pipeline, self.S(meta), name.span)

    def test(self, meta, children):
        name, *blocks = children
        return ast.TestDecl(str(name), tuple(blocks), self.S(meta), name.span)

    def function(self, meta, children):
        name, *rest = children
        params = tuple(c for c in rest if isinstance(c, ast.Param))
        returns = next(c for c in rest if isinstance(c, ast.TypeRef))
        return ast.FunctionDecl(str(name), params, returns, rest[-1], self.S(meta), name.span)

    def param(self, meta, children):
        name, typ = children
        return ast.Param(str(name), typ, name.span)

    def rows_block(self, meta, children):
        kind, relation, header, *rows = children
        return ast.RowsBlock(str(kind), relation, tuple(header), tuple(r[0] for r in rows),
                             tuple(r[1] for r in rows), self.S(meta))

    def header(self, meta, children):
        return [str(c) for c in children]

    def row(self, meta, children):
        return (tuple(children), self.S(meta))

    # ------------------------------------------------------------ steps
    def from_step(self, meta, children):
        alias = str(children[1]) if len(children) > 1 else None
        return ast.From(_relation(children[0]), alias, self.S(meta))

    def relation_call(self, meta, children):
        name = children[0]
        args = children[1] if len(children) > 1 else []
        return ast.RelationCall(str(name).lower(), tuple(args), self.S(meta))

    def pipeline(self, meta, children):
        steps = [c for c in children if not (isinstance(c, Token) and c.type == "PIPE")]
        return ast.Pipeline(tuple(steps), self.S(meta))

    def named(self, meta, children):
        name, _eq, expr = children
        return ast.NamedExpr(str(name), expr, name.span)

    def let_step(self, meta, children):
        return ast.Let(tuple(children), self.S(meta))

    def filter_step(self, meta, children):
        return ast.Filter(children[0], self.S(meta))

    def join_step(self, meta, children):
        kw = children[0]
        kind = {"JOIN": "inner", "JOIN_LEFT": "left", "JOIN_FULL": "full", "JOIN_CROSS": "cross",
                "JOIN_SEMI": "semi", "JOIN_ANTI": "anti"}[kw.type]
        many = any(isinstance(c, Token) and c.type == "MANY" for c in children)
        rest = [c for c in children[1:] if not (isinstance(c, Token) and c.type == "MANY")]
        relation, *rest = rest
        if kind == "cross":  # no condition: every left row with every right row
            alias = str(rest[0]) if rest else None
            return ast.Join(_relation(relation), alias, None, False, True, self.S(meta), kind)
        alias = str(rest[0]) if len(rest) == 2 else None
        return ast.Join(_relation(relation), alias, rest[-1], kind == "left", many, self.S(meta),
                        kind)

    def expand_step(self, meta, children):
        return ast.Expand(children[0], str(children[1]), self.S(meta))

    def group_step(self, meta, children):
        return ast.Group(tuple(children), self.S(meta))

    def group_sets(self, meta, children):
        kind, *keys = children
        if str(kind).lower() not in GROUPING_SETS:
            raise fail("E187", f"`group {kind}(...)` is not a grouping of Strata",
                       kind.span, "group by every prefix of the keys with `group rollup(a, b)` "
                       "(a and b, a alone, all rows), or by every subset with "
                       "`group cube(a, b)`; plain keys are `group a, b`")
        return ast.Group(tuple(keys), self.S(meta), str(kind).lower())

    def aggregate_step(self, meta, children):
        return ast.Aggregate(tuple(children), self.S(meta))

    def derive_step(self, meta, children):
        return ast.Derive(tuple(children), self.S(meta))

    def select_item(self, meta, children):
        alias = str(children[1]) if len(children) > 1 else None
        return ast.SelectItem(children[0], alias, self.S(meta))

    def select_step(self, meta, children):
        return ast.Select(tuple(children), self.S(meta))

    def select_star(self, meta, children):
        return ast.SelectItem(ast.Star(self.S(meta)), None, self.S(meta))

    def select_rel_star(self, meta, children):
        relation = children[0]
        return ast.SelectItem(ast.Star(self.S(meta), relation, relation_span=relation.span),
                              None, self.S(meta))

    def star_except(self, meta, children):
        relation = children[0] if isinstance(children[0], _Name) else None
        star = next(c for c in children if isinstance(c, Token) and c.type == "STAR")
        names = [c for c in children[children.index(star) + 2:] if isinstance(c, _Name)]
        end = _tok_span(self.file, star)
        start = relation.span if relation is not None else end
        span = Span(self.file, start.line, start.column, end.end_line, end.end_column)
        star_node = ast.Star(span, relation, tuple(str(n) for n in names),
                             tuple(n.span for n in names),
                             relation.span if relation is not None else None)
        return ast.SelectItem(star_node, None, self.S(meta))

    def setop_step(self, meta, children):
        return ast.SetOp(str(children[0]), _relation(children[1]), self.S(meta))

    # ------------------------------------------------------------ sort, take, distinct, window
    def sort_key(self, meta, children):
        expr, *words = children
        kinds = [w.type for w in words]
        nulls_first = None
        if "NULLS" in kinds:
            nulls_first = "FIRST" in kinds
        return ast.SortKey(expr, "DESC" in kinds, nulls_first, self.S(meta))

    def sort_step(self, meta, children):
        return ast.Sort(tuple(children), self.S(meta))

    def take_step(self, meta, children):
        count, *by = children
        value = _whole(count)
        if value > _INT_MAX:
            raise fail("E036", f"the integer {_shown(count)} is out of range", self.S(meta),
                       f"take at most {_INT_MAX} rows")
        return ast.Take(value, tuple(by), self.S(meta))

    def distinct_step(self, meta, children):
        by = tuple(c for c in children if isinstance(c, ast.Column))
        order = tuple(c for c in children if isinstance(c, ast.SortKey))
        return ast.Distinct(by, order, self.S(meta))

    def window_step(self, meta, children):
        by = tuple(c for c in children if isinstance(c, ast.Column))
        order = tuple(c for c in children if isinstance(c, ast.SortKey))
        frame = next((c for c in children if isinstance(c, ast.Frame)), None)
        return ast.Window(by, order, frame, self.S(meta))

    def frame(self, meta, children):
        kind, start, end = children
        return ast.Frame(str(kind).lower(), start, end, self.S(meta))

    def frame_unbounded(self, meta, children):
        return ast.FrameBound("unbounded", str(children[0]).lower(), None, self.S(meta))

    def frame_current(self, meta, children):
        return ast.FrameBound("current", None, None, self.S(meta))

    def frame_offset(self, meta, children):
        count, side = children
        value = _whole(count)
        if value > _INT_MAX:
            raise fail("E036", f"the integer {_shown(count)} is out of range", self.S(meta),
                       f"a frame offset is at most {_INT_MAX}")
        return ast.FrameBound("offset", str(side).lower(), value, self.S(meta))

    # ------------------------------------------------------------ pins, properties
    def name_list(self, meta, children):
        return _Names([c for c in children if isinstance(c, _Name)], self.S(meta))

    def signed_int(self, meta, children):
        value = _whole(children[-1])
        if value > _INT_MAX:  # a row count is a 64-bit integer in every engine
            raise fail("E036", f"the integer {_shown(children[-1])} is out of range",
                       self.S(meta), f"a row count is at most {_INT_MAX}")
        return -value if len(children) == 2 else value

    def pin_unique(self, meta, children):
        return ast.Pin("unique", columns=children[0], span=self.S(meta))

    def pin_not_null(self, meta, children):
        return ast.Pin("not_null", columns=children[0], span=self.S(meta))

    def pin_rows(self, meta, children):
        op, bound = children
        return ast.Pin("rows", op=str(op), bounds=(bound,), span=self.S(meta))

    def pin_rows_between(self, meta, children):
        return ast.Pin("rows", op="between", bounds=(children[0], children[1]), span=self.S(meta))

    def pin_columns(self, meta, children):
        contract = children[0] if children else []
        return ast.Pin("columns", contract=tuple(contract), span=self.S(meta))

    def pin_references(self, meta, children):
        columns, relation, keys = children
        return ast.Pin("references", columns=columns, relation=relation,
                       ref_columns=keys, span=self.S(meta))

    def pin_accepted(self, meta, children):
        name, values = children
        return ast.Pin("accepted", columns=(str(name),), values=tuple(values),
                       span=self.S(meta))

    def pin_holds(self, meta, children):
        return ast.Pin("holds", expr=children[0], span=self.S(meta))

    def flag_property(self, meta, children):
        span = self.S(meta)
        return ast.Property("incremental", True, span, span)

    def value_property(self, meta, children):
        name, value = children
        if name in META_KEYS:  # described, not computed: kept apart from properties
            text = value.value if isinstance(value, _Spanned) else value
            return _MetaItem(name, text, self.S(meta))
        value_span = getattr(value, "span", None) or self.S(meta)
        if isinstance(value, (_Name, _Spanned)):
            value = value.value if isinstance(value, _Spanned) else str(value)
        return ast.Property(str(name), value, self.S(meta), value_span)

    def prop_number(self, meta, children):
        value = _number(children[0])
        if isinstance(value, int) and value > _INT_MAX:
            raise fail("E036", f"the integer {_shown(children[0])} is out of range",
                       self.S(meta), f"a whole-number property is at most {_INT_MAX}")
        return _Spanned(value, self.S(meta))

    def prop_string(self, meta, children):
        return _Spanned(_unquote(children[0]), self.S(meta))

    def prop_duration(self, meta, children):
        count, unit = children
        return _Spanned(ast.Duration(_number(count), str(unit)), self.S(meta))

    def expr_property(self, meta, children):
        (value,) = children
        return ast.Property("delete_when", value, self.S(meta), value.span)

    # ------------------------------------------------------------ expressions
    def column(self, meta, children):
        if len(children) == 2:
            return ast.Column(str(children[1]), str(children[0]), self.S(meta))
        return ast.Column(str(children[0]), None, self.S(meta))

    def number(self, meta, children):
        value = _number(children[0])
        if isinstance(value, float) and not math.isfinite(value):
            # 1e999 is inf in Python, and `inf` in SQL would read as a column name
            raise fail("E036", f"the number {_shown(children[0])} is out of range",
                       self.S(meta), "a double holds up to about 1.8e308")
        if isinstance(value, int) and value > _INT_MAX:
            # the engine would widen it (HUGEINT, then a type of its own), not an `int`
            raise fail("E036", f"the integer {_shown(children[0])} is out of range", self.S(meta),
                       f"int is 64-bit, up to {_INT_MAX}; for a larger number write a "
                       "double, e.g. 1e20")
        if isinstance(value, Decimal) and _precision(value) > _DECIMAL_DIGITS:
            # DuckDB read it as a double (precision silently lost), PostgreSQL kept it
            # exact and Spark refused it: no decimal type means the same past 38 digits
            raise fail("E036", f"the decimal {_shown(children[0])} needs "
                       f"{_precision(value)} digits; a decimal holds at most "
                       f"{_DECIMAL_DIGITS}", self.S(meta),
                       "drop digits, or write it as a double with an exponent, e.g. 1.5e40")
        kind = "int" if isinstance(value, int) else ("decimal" if isinstance(value, Decimal) else "double")
        return ast.Literal(value, kind, self.S(meta))

    def string(self, meta, children):
        return ast.Literal(_unquote(children[0]), "text", self.S(meta))

    def true(self, meta, children):
        return ast.Literal(True, "bool", self.S(meta))

    def false(self, meta, children):
        return ast.Literal(False, "bool", self.S(meta))

    def null(self, meta, children):
        return ast.Literal(None, "null", self.S(meta))

    def typed_literal(self, meta, children):
        kw, text = children
        kind = str(kw).lower()
        raw = _unquote(text)
        span = self.S(meta)
        try:
            if kind == "date":
                return ast.Literal(dt.date.fromisoformat(raw), "date", span)
            if kind == "timestamp":
                return ast.Literal(dt.datetime.fromisoformat(raw), "timestamp", span)
        except ValueError as err:
            shaped = _DATE_SHAPE.match(raw) if kind == "date" else _TIMESTAMP_SHAPE.match(raw)
            raise fail("E036", f"invalid {kind} literal '{raw}'", span,
                       f"no such {kind}: {err}" if shaped else
                       "dates are 'YYYY-MM-DD', timestamps 'YYYY-MM-DD HH:MM:SS'") from None
        if kind == "interval":
            return ast.Literal(_interval(raw, span), "interval", span)
        raise fail("E001", f"unexpected string after `{kw}`", span,
                   "typed literals are `date '...'`, `timestamp '...'` and `interval '...'`")

    def list_literal(self, meta, children):
        items = children[0] if children else []
        return ast.ListLit(tuple(items), self.S(meta))

    def expr_list(self, meta, children):
        return list(children)

    def qualified_call(self, meta, children):
        qualifier, name, *args = children
        self.qualified = True
        return ast.Call(str(name).lower(), tuple(args[0] if args else ()), self.S(meta),
                        str(qualifier))

    def call(self, meta, children):
        name = children[0]
        args = children[1] if len(children) > 1 else []
        return ast.Call(str(name).lower(), tuple(args), self.S(meta))

    def binop(self, meta, children):
        left, op, right = children
        text = str(op).lower()
        if text == "<>":
            text = "!="
        return ast.BinOp(text, left, right, self.S(meta))

    def neg(self, meta, children):
        operand = children[-1]
        if isinstance(operand, ast.Literal) and operand.kind in ("int", "decimal", "double"):
            return ast.Literal(-operand.value, operand.kind, self.S(meta))
        return ast.UnaryOp("-", operand, self.S(meta))

    def not_op(self, meta, children):
        return ast.UnaryOp("not", children[-1], self.S(meta))

    def is_null(self, meta, children):
        return ast.IsNull(children[0], False, self.S(meta))

    def is_not_null(self, meta, children):
        return ast.IsNull(children[0], True, self.S(meta))

    def is_distinct(self, meta, children):
        return ast.BinOp("is distinct from", children[0], children[-1], self.S(meta))

    def is_not_distinct(self, meta, children):
        return ast.BinOp("is not distinct from", children[0], children[-1], self.S(meta))

    def in_list(self, meta, children):
        return ast.InList(children[0], tuple(children[1]), False, self.S(meta))

    def not_in_list(self, meta, children):
        return ast.InList(children[0], tuple(children[1]), True, self.S(meta))

    def between(self, meta, children):
        return ast.Between(children[0], children[1], children[2], False, self.S(meta))

    def not_between(self, meta, children):
        return ast.Between(children[0], children[1], children[2], True, self.S(meta))

    def not_like(self, meta, children):
        like = ast.BinOp("like", children[0], children[1], self.S(meta))
        return ast.UnaryOp("not", like, self.S(meta))

    def when_clause(self, meta, children):
        return (children[0], children[1])

    def case(self, meta, children):
        whens = tuple(c for c in children if isinstance(c, tuple))
        rest = [c for c in children if not isinstance(c, tuple)]
        return ast.Case(whens, rest[0] if rest else None, self.S(meta))

    def cast(self, meta, children):
        return ast.Cast(children[0], children[1], self.S(meta))

    def try_cast(self, meta, children):
        return ast.Cast(children[0], children[1], self.S(meta), safe=True)

    def extract(self, meta, children):
        return ast.Extract(str(children[0]).lower(), children[1], self.S(meta))


def _relation(node) -> str | ast.Pipeline | ast.RelationCall:
    """A relation as written: a name, a sub-pipeline or a generator call."""
    if isinstance(node, (ast.Pipeline, ast.RelationCall, ast.QualifiedName)):
        return node
    return str(node)


_INTERVAL = re.compile(r"^\s*([+-]?\d{1,18})\s+(year|quarter|month|week|day|hour|minute|second)"
                       r"s?\s*$", re.IGNORECASE)


def _interval(text: str, span) -> ast.Duration:
    """`interval '7 days'`: a whole number of one unit (a range's step)."""
    found = _INTERVAL.match(text)
    if found is None:
        raise fail("E184", f"invalid interval literal '{text}'", span,
                   "an interval is a whole number and a unit: `interval '1 day'`, "
                   "`interval '3 months'`, `interval '-1 week'` (units: year, quarter, month, "
                   "week, day, hour, minute, second)")
    return ast.Duration(int(found.group(1)), found.group(2).lower())


def _unquote(tok) -> str:
    return str(tok)[1:-1].replace("''", "'")


def _number(tok) -> int | float | Decimal:
    text = str(tok)
    if "e" in text.lower():
        return float(text)
    if "." in text:
        try:
            return Decimal(text)
        except InvalidOperation:  # pragma: no cover - the lexer only passes digits
            return float(text)
    return _whole(text)


# 2**63 - 1 has 19 digits. Longer integers are out of every range Strata has, and are
# never converted: int() refuses more than 4,300 digits (ValueError, E000), and is slow
# on long ones before that.
_WHOLE_DIGITS_MAX = 19
_TOO_BIG = 10 ** (_WHOLE_DIGITS_MAX + 1)  # stands for any integer past int64


def _whole(tok) -> int:
    """The value of a run of digits; _TOO_BIG for one of more than 19 significant
    digits, which every caller then refuses as out of range."""
    text = str(tok).lstrip("0")
    if len(text) > _WHOLE_DIGITS_MAX:
        return _TOO_BIG
    return int(text or "0")


def _shown(tok) -> str:
    """A number as a message quotes it: a long one cut, with its length."""
    text = str(tok)
    return text if len(text) <= 40 else f"{text[:20]}...({len(text)} characters)"


# ---------------------------------------------------------------- entry points
def parse_text(text: str, file: str = "<string>") -> ast.ModuleFile:
    """Parse one file's text. Raises StrataError (E001/E002/E003/E036/E092) on bad
    input, with one diagnostic per broken declaration."""
    _refuse_nul(text, file)
    try:
        tree = _lark().parse(text)
    except UnexpectedInput as err:
        raise StrataError(_syntax_errors(file, text, err)) from None
    transformer = _ToAst(file)
    decls, errors = [], []
    for child in tree.children:  # declarations: one failing does not hide the next
        try:
            decls.append(_transform(transformer, file, child))
        except StrataError as err:
            errors.extend(err.diagnostics)
    if errors:
        raise StrataError(errors)
    return ast.ModuleFile(file, tuple(decls), transformer.qualified)


def _transform(transformer: _ToAst, file: str, decl: Tree):
    try:
        return transformer.transform(decl)
    except VisitError as err:
        if isinstance(err.orig_exc, StrataError):
            raise err.orig_exc from None
        if isinstance(err.orig_exc, RecursionError):
            raise _too_deep(file, decl) from None
        raise
    except RecursionError:
        raise _too_deep(file, decl) from None


# Where a declaration may start when the text is cut into declarations after a
# syntax error: a line that begins (column 1) with a declaration keyword.
_DECLARATION_START = re.compile(r"^(?:source|model|test|fn|import)\b", re.MULTILINE)


def _syntax_errors(file: str, text: str, err: UnexpectedInput) -> list[Diagnostic]:
    """The first syntax error, then the first of every later declaration.

    LALR stops at the first error; to report the others in the same pass, the text
    after it is cut into declarations and each is parsed on its own. A declaration
    that parses alone adds nothing, so the cut can only lose errors, never invent one.
    """
    first = syntax_diagnostic(file, text, err)
    found = [first]
    starts = [m.start() for m in _DECLARATION_START.finditer(text)]
    line, counted = 1, 0  # lines counted on from the previous start: linear, not per start
    for i, start in enumerate(starts):
        line += text.count("\n", counted, start)
        counted = start
        if first.span is None or line <= first.span.line:
            continue
        chunk = text[start:starts[i + 1] if i + 1 < len(starts) else len(text)]
        try:
            tree = _lark().parse(chunk)
            for decl in tree.children:
                _transform(_ToAst(file), file, decl)
        except UnexpectedInput as chunk_err:
            found.append(_shifted(syntax_diagnostic(file, chunk, chunk_err), line - 1))
        except StrataError as chunk_err:  # a bad literal, found while building the tree
            found.extend(_shifted(d, line - 1) for d in chunk_err.diagnostics)
    return found


def _shifted(diag: Diagnostic, lines: int) -> Diagnostic:
    span = diag.span
    if span is None or lines == 0:
        return diag
    return replace(diag, span=replace(span, line=span.line + lines,
                                      end_line=span.end_line + lines))


def _too_deep(file: str, decl: Tree) -> StrataError:
    """E092 at the statement holding the deepest expression (found without recursion)."""
    deepest, where = 0, decl
    stack = [(decl, 0, decl)]
    while stack:
        node, depth, statement = stack.pop()
        if depth == 1:  # declaration -> statement
            statement = node
        if depth > deepest:
            deepest, where = depth, statement
        stack.extend((c, depth + 1, statement) for c in node.children if isinstance(c, Tree))
    return fail("E092", f"an expression nested {deepest - 1} levels deep is too deep to compile",
                _span(file, where.meta), TOO_DEEP_HINT)
