"""Names → definitions and references, built from the syntax tree of a resolved module.

The resolver keeps plans (columns by id), not where each column was written. This
walk follows a model's steps as the resolver does, types each expression with the
resolver's own `ExpressionTyper` (so a column's type is the compiler's), and records
for every name it meets the place that defines it: a source's column declaration,
a `let`/`derive`/`aggregate` item, a `select ... as` alias, an `expand ... as`. A
column read from a model is defined where that model defined it, so go-to-definition
crosses models. Steps the walk does not know (the language grows) still get their
column references recorded: every expression found in them is typed in the scope.

Only navigation reads this; diagnostics come from the compiler itself.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import re
from dataclasses import dataclass, field

from strata.diagnostics import Diagnostic, Span
from strata.plan import Col
from strata.semantics import types as T
from strata.semantics.expressions import ERROR, ExprContext, ExpressionTyper
from strata.semantics.module import Module
from strata.syntax import ast

_EXPRS = tuple(t for t in ast.Expr.__args__)  # the expression node classes


@dataclass(eq=False)
class Definition:
    kind: str  # source | model | test | column | function (a `fn`) | relation (a `with`)
    name: str
    span: Span  # the name as written
    type: T.Type | None = None
    origin: str = ""  # words for hover: where the column comes from
    owner: str | None = None  # the model or source a column belongs to
    columns: list[ColumnIn] = field(default_factory=list)  # a `with` relation's


@dataclass(frozen=True)
class Reference:
    span: Span
    target: Definition


@dataclass
class ScopeAt:
    """The columns in scope for a step: what completion offers inside it."""

    span: Span
    columns: list[ColumnIn]
    aliases: list[str]
    after: list[ColumnIn] = field(default_factory=list)  # the scope the step leaves


@dataclass
class ColumnIn:
    definition: Definition
    qualifier: str | None
    visible: bool = True


@dataclass
class Index:
    module: Module
    definitions: dict[str, Definition] = field(default_factory=dict)  # sources, models
    outputs: dict[str, list[ColumnIn]] = field(default_factory=dict)  # model -> output
    references: list[Reference] = field(default_factory=list)
    scopes: list[ScopeAt] = field(default_factory=list)
    column_defs: list[Definition] = field(default_factory=list)
    functions: dict[str, Definition] = field(default_factory=dict)  # the module's `fn`s
    relations: list[Definition] = field(default_factory=list)  # every model's `with`s
    parts: dict[str, _Part] = field(default_factory=dict)  # "model m", "source s", "fn"
    _lines: dict[str, list[str]] = field(default_factory=dict)
    _files: dict[str, tuple[list[Reference], list[ScopeAt]]] = field(default_factory=dict)

    # ------------------------------------------------------------ queries
    def at(self, file: str, line: int, column: int) -> Reference | None:
        """The innermost reference or definition under a 1-based position."""
        best: Reference | None = None
        for ref in self._here(file)[0]:
            if _contains(ref.span, line, column) and (best is None
                                                       or _size(ref.span) < _size(best.span)):
                best = ref
        return best

    def scope_at(self, file: str, line: int, column: int) -> ScopeAt | None:
        """The scope of the step under the cursor; on a line of its own (a step being
        written), the scope the step before it leaves."""
        scopes = self._here(file)[1]
        found = [s for s in scopes if _contains_wide(s.span, line, column)]
        if found:
            return min(found, key=lambda s: _size(s.span))
        before = [s for s in scopes if s.span.end_line < line]
        if not before:
            return None
        last = max(before, key=lambda s: (s.span.end_line, s.span.end_column))
        return ScopeAt(last.span, last.after, last.aliases)

    def covers(self, file: str) -> bool:
        """Does the index know the file's declarations (it parsed)?"""
        return any(d.span.file == file for d in self.definitions.values())

    def references_to(self, target: Definition) -> list[Reference]:
        return [r for r in self.references if r.target is target]

    def _here(self, file: str) -> tuple[list[Reference], list[ScopeAt]]:
        """The names written in `file` (each definition as a reference to itself) and
        its steps' scopes: from the parts of its declarations, once per index, so a
        request after an edit reads one file's share, not the module's."""
        found = self._files.get(file)
        if found is None:
            parts = [p for p in self.parts.values() if p.file in (file, None)]
            defs = [*(d for d in (*self.definitions.values(), *self.functions.values())
                      if d.span.file == file),
                    *(d for p in parts for d in (*p.column_defs, *p.relations)
                      if d.span.file == file)]
            refs = [Reference(d.span, d) for d in defs]
            refs += [r for p in parts for r in p.references if r.span.file == file]
            scopes = [s for p in parts for s in p.scopes if s.span.file == file]
            found = self._files[file] = (refs, scopes)
        return found

    def set_line(self, file: str, n: int, text: str) -> None:
        """The editor's line `n` as typed now (completion reads the words before the
        cursor, which the last check may not have seen)."""
        self.line(file, 1)
        lines = self._lines[file]
        lines.extend([""] * (n - len(lines)))
        lines[n - 1] = text

    def line(self, file: str, n: int) -> str:
        if file not in self._lines:
            self._lines[file] = self.module.files.get(file, "").split("\n")
        lines = self._lines[file]
        return lines[n - 1] if 0 < n <= len(lines) else ""


def _contains(span: Span, line: int, column: int) -> bool:
    return (span.line, span.column) <= (line, column) <= (span.end_line, span.end_column)


def _contains_wide(span: Span, line: int, column: int) -> bool:
    """A step's span, taken to the end of its last line (the cursor after a `|`)."""
    return span.line <= line <= span.end_line and (line > span.line or column >= span.column)


def _size(span: Span) -> tuple[int, int]:
    return (span.end_line - span.line, span.end_column - span.column)


# ---------------------------------------------------------------- building
@dataclass
class _Part:
    """What one declaration adds to the index (a model's references, scopes, column
    definitions, `with`s and output), kept by the next index while nothing it read
    changed: at 1,000 models an edit walks the edited file's models and the readers
    whose inputs changed, not the module."""

    decl: object = None
    file: str | None = None  # where all it holds is written (None: several files)
    reads: set[str] = field(default_factory=set)  # relation names looked up
    references: list[Reference] = field(default_factory=list)
    scopes: list[ScopeAt] = field(default_factory=list)
    column_defs: list[Definition] = field(default_factory=list)
    relations: list[Definition] = field(default_factory=list)
    outputs: list[ColumnIn] = field(default_factory=list)

    @property
    def signature(self) -> tuple:
        """What a reader's walk sees of it: its columns' names and types."""
        return tuple((c.definition.name, str(c.definition.type)) for c in self.outputs)


def build_index(module: Module, previous: Index | None = None) -> Index:
    """The index of `module`; with the `previous` one (of the module before an edit),
    every declaration whose syntax tree is the same object (its file was not parsed
    again) and whose inputs kept their columns is taken over as it was. A walked
    declaration whose columns are the same keeps its `Definition` objects (their
    places and types updated), so what its readers point at stays valid."""
    index = Index(module)
    old_parts = previous.parts if previous is not None else {}
    old_defs = previous.definitions if previous is not None else {}
    fns = tuple(fn.decl for fn in module.functions.values())
    same_fns = "fn" in old_parts and _same(old_parts["fn"].decl, fns)
    if not same_fns:
        old_parts = {}  # a model holds its calls' bodies: an edited `fn` walks them all
    changed = {n for n in old_defs if n not in module.sources and n not in module.models}
    walker = _Walker(index)
    for name, src in module.sources.items():
        index.definitions[name] = _kept_def(old_defs.get(name), "source", name,
                                            src.decl.name_span, f"source `{name}`", changed)
    for name, info in module.models.items():
        index.definitions[name] = _kept_def(old_defs.get(name), "model", name,
                                            info.decl.name_span, f"model `{name}`", changed)
    for name, src in module.sources.items():
        _settle(index, f"source {name}", src.decl, old_parts, changed, name,
                lambda s=src, n=name: _source_part(s, n))
    if same_fns:
        index.functions = previous.functions
        index.parts["fn"] = old_parts["fn"]
    else:
        index.parts["fn"] = walker.functions(module, fns)
    ordered = set(module.order)
    for name in [*module.order, *(m for m in module.models if m not in ordered)]:
        decl = module.models[name].decl
        _settle(index, f"model {name}", decl, old_parts, changed, name,
                lambda d=decl: walker.model(d))
    index.parts["tests"] = walker.tests(module)
    for part in index.parts.values():
        index.references.extend(part.references)
        index.scopes.extend(part.scopes)
        index.column_defs.extend(part.column_defs)
        index.relations.extend(part.relations)
    return index


def _same(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


def _kept_def(old: Definition | None, kind: str, name: str, span: Span, origin: str,
              changed: set[str]) -> Definition:
    """A source's or model's definition: the previous object when there is one of the
    same kind (readers kept point at it), at its place now."""
    if old is None or old.kind != kind:
        changed.add(name)
        return Definition(kind, name, span, None, origin)
    old.span = span
    return old


def _settle(index: Index, key: str, decl, old_parts: dict[str, _Part], changed: set[str],
            name: str, walk) -> None:
    """Take the previous part over, or walk the declaration again; a walked one whose
    signature differs makes its readers walk again."""
    old = old_parts.get(key)
    if old is not None and old.decl is decl and changed.isdisjoint(old.reads):
        part = old
    else:
        part = walk()
        part.decl = decl
        part.file = decl.span.file
        if old is None or not _adopt(old, part):
            changed.add(name)
    index.parts[key] = part
    index.outputs[name] = part.outputs


def _adopt(old: _Part, new: _Part) -> bool:
    """Make `new` point at `old`'s column definitions where it defines the same
    columns (each updated in place), so readers walked against `old` stay right.
    False when the columns differ: the readers must walk again."""
    if old.signature != new.signature:
        return False
    own_old = {id(d) for d in old.column_defs}
    own_new = {id(d) for d in new.column_defs}
    swap: dict[int, Definition] = {}
    for before, now in zip(old.outputs, new.outputs, strict=True):
        if before.definition is now.definition:
            continue
        if id(before.definition) not in own_old or id(now.definition) not in own_new:
            return False
        kept = before.definition
        kept.span, kept.type, kept.origin, kept.owner = (now.definition.span, now.definition.type,
                                                         now.definition.origin,
                                                         now.definition.owner)
        swap[id(now.definition)] = kept

    def mapped(d: Definition) -> Definition:
        return swap.get(id(d), d)

    new.column_defs = [mapped(d) for d in new.column_defs]
    new.references = [Reference(r.span, mapped(r.target)) for r in new.references]
    for col in (*new.outputs, *(c for s in new.scopes for c in (*s.columns, *s.after)),
                *(c for d in new.relations for c in d.columns)):
        col.definition = mapped(col.definition)
    return True


def _source_part(src, name: str) -> _Part:
    part = _Part()
    types = dict(src.columns)
    for col in src.decl.columns:
        d = Definition("column", col.name, _name_span(col.span, col.name),
                       types.get(col.name, ERROR), f"column of source `{name}`", name)
        part.column_defs.append(d)
        part.outputs.append(ColumnIn(d, None))
    return part


@functools.cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls) if f.name != "span")


def _name_span(span: Span, name: str) -> Span:
    """The name at the start of a span (`id: int`, `total = ...`)."""
    return Span(span.file, span.line, span.column, span.line, span.column + len(name))


class _Walker:
    """Walks every model's steps, keeping a scope of `ColumnIn`s."""

    def __init__(self, index: Index):
        self.index = index
        self.out = _Part()  # where what the walk finds goes: the model's part
        self.ids = itertools.count(1)
        self.by_id: dict[int, ColumnIn] = {}
        self.on_scope: tuple[list[ColumnIn], list[str]] = ([], [])  # the last join's
        self.withs: dict[str, Definition] = {}  # the model's `with` relations, by name

    # ------------------------------------------------------------ models and tests
    def functions(self, module: Module, decls: tuple) -> _Part:
        """The module's `fn`s: their definitions, parameters and bodies."""
        self.out = part = _Part(decl=decls)
        for name, fn in module.functions.items():
            self.index.functions[name] = Definition("function", name, fn.decl.name_span,
                                                    fn.returns, f"fn `{name}`")
        for fn in module.functions.values():
            self.function(fn.decl)
        return part

    def tests(self, module: Module) -> _Part:
        self.out = part = _Part()
        for name, test in module.tests.items():
            self.index.definitions["test " + name] = Definition("test", name, test.name_span)
        for test in module.tests.values():
            self.test(test)
        return part

    def function(self, decl: ast.FunctionDecl) -> None:
        """A `fn`'s parameters, and where its body reads them."""
        params = []
        for param in decl.params:
            d = Definition("column", param.name, _name_span(param.span, param.name),
                           self.index.module.functions[decl.name].params[len(params)].type,
                           f"parameter of fn `{decl.name}`")
            self.out.column_defs.append(d)
            params.append(ColumnIn(d, None))
        self._expr(decl.body, params, [])

    def model(self, decl: ast.ModelDecl) -> _Part:
        self.out = part = _Part()
        self.withs = {}
        try:
            for item in decl.withs:  # each reads the ones before it
                cols = self.pipeline(item.pipeline.steps, decl.name)
                d = Definition("relation", item.name, item.name_span, None,
                               f"`with` in `{decl.name}`", decl.name,
                               [ColumnIn(c.definition, None) for c in cols if c.visible])
                self.out.relations.append(d)
                self.withs[item.name] = d
            out = self.pipeline(decl.steps, decl.name)
        except RecursionError:
            out = []
        part.outputs = [ColumnIn(c.definition, None) for c in out
                        if c.visible or c.qualifier is None]
        for prop in decl.properties:
            self._name_refs(prop.value, prop.value_span, part.outputs)
        for pin in decl.pins:
            if pin.span is not None:
                self._name_refs(pin.columns, pin.span, part.outputs)
        return part

    def test(self, decl: ast.TestDecl) -> None:
        for block in decl.blocks:
            target = self.index.definitions.get(block.relation)
            span = self._word(block.span, block.relation)
            if target is not None and span is not None:
                self.out.references.append(Reference(span, target))
            if target is not None:
                self._name_refs(block.columns, block.span,
                                self.index.outputs.get(block.relation, []), skip=1)

    def _name_refs(self, value, span: Span, outputs: list[ColumnIn], skip: int = 0) -> None:
        """Column names written as plain names (pins, merge keys, a test's header)."""
        names = value if isinstance(value, tuple) else (value,) if isinstance(value, str) else ()
        cols = {c.definition.name: c.definition for c in outputs}
        text = "\n".join(self.index.line(span.file, n)
                         for n in range(span.line, span.end_line + 1))
        for name in names:
            if name not in cols:
                continue
            for m in itertools.islice(re.finditer(rf"\b{re.escape(name)}\b", text), skip, None):
                line = span.line + text.count("\n", 0, m.start())
                start = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
                self.out.references.append(Reference(
                    Span(span.file, line, start, line, start + len(name)), cols[name]))
                break

    # ------------------------------------------------------------ steps
    def pipeline(self, steps: tuple, owner: str) -> list[ColumnIn]:
        scope: list[ColumnIn] = []
        aliases: list[str] = []
        keys: list[ColumnIn] = []  # of a `group`, for the `aggregate` after it
        over = False
        for step in steps:
            at = ScopeAt(step.span, list(scope), list(aliases))
            self.out.scopes.append(at)
            scope, aliases, keys, over = self._step(step, scope, aliases, keys, over, owner)
            at.after = list(scope)
            if isinstance(step, ast.Join):  # its `on` reads the joined relation too
                at.columns, at.aliases = self.on_scope
        return scope

    def _step(self, step, scope: list[ColumnIn], aliases: list[str], keys: list[ColumnIn],
              over: bool, owner: str) -> tuple:
        """One step: the scope, aliases, pending group keys and window flag it leaves."""
        kind = type(step).__name__
        if kind == "From":
            scope, aliases = [], []
            self._relation(step, scope, aliases, step.alias)
        elif kind == "Join":
            right = self._relation(step, [], aliases, step.alias)
            self.on_scope = ([*scope, *right], list(aliases))
            if step.kind in ("semi", "anti"):
                self._expr(step.on, [*scope, *right], aliases)
                aliases.pop()
            else:
                names = {c.definition.name for c in scope if c.visible}
                for c in right:
                    c.visible = c.definition.name not in names
                scope.extend(right)
                self._expr(step.on, scope, aliases)
        elif kind in ("Let", "Derive"):
            for item in step.items:  # an item reads the ones before it
                typ = self._expr(item.expr, scope, aliases, over=over)
                scope.append(ColumnIn(self._define(item.name, item.span, typ,
                                                   f"`{kind.lower()}` in `{owner}`", owner),
                                      None))
            over = False
        elif kind == "Aggregate":  # over the rows before it: the keys, then the items
            out = keys
            for item in step.items:
                typ = self._expr(item.expr, scope, aliases, aggregate=True)
                out.append(ColumnIn(self._define(item.name, item.span, typ,
                                                 f"`aggregate` in `{owner}`", owner), None))
            scope, aliases, keys = out, [], []
        elif kind == "Group":
            keys = []
            for key in step.keys:
                self._expr(key, scope, aliases)
                found = self._find(key, scope)
                if found is not None:
                    keys.append(ColumnIn(found.definition, None))
        elif kind == "Window":
            self._exprs(step, scope, aliases)
            over = True
        elif kind == "Expand":
            typ = self._expr(step.column, scope, aliases)
            span = self._word(step.span, step.item, after=" as ") or step.span
            element = typ.element if typ is not None and typ.element else ERROR
            d = self._define(step.item, span, element, f"`expand` in `{owner}`", owner)
            scope.append(ColumnIn(d, None))
        elif kind == "Select":
            scope = self._select(step, scope, aliases, owner)
        elif kind == "SetOp":
            self._relation(step, [], [], None)
        else:  # filter, sort, take, distinct, and steps to come: references only
            self._exprs(step, scope, aliases)
        return scope, aliases, keys, over

    def _select(self, step: ast.Select, scope: list[ColumnIn], aliases: list[str],
                owner: str) -> list[ColumnIn]:
        out: list[ColumnIn] = []
        for item in step.items:
            if isinstance(item.expr, ast.Star):
                star = item.expr
                out.extend(ColumnIn(c.definition, c.qualifier) for c in scope
                           if (c.qualifier == star.relation if star.relation is not None
                               else c.visible) and c.definition.name not in star.exclude)
                continue
            typ = self._expr(item.expr, scope, aliases)
            if item.alias is None and isinstance(item.expr, ast.Column):
                found = self._find(item.expr, scope)
                if found is not None:
                    out.append(ColumnIn(found.definition, None))
                continue
            if item.alias is not None:
                span = self._word(item.span, item.alias, after=" as ") or item.span
                out.append(ColumnIn(self._define(item.alias, span, typ,
                                                 f"`select` in `{owner}`", owner), None))
        return out

    def _relation(self, step, scope: list[ColumnIn], aliases: list[str],
                  alias: str | None) -> list[ColumnIn]:
        """The columns of a from/join/set operation's relation, added to `scope`."""
        relation = step.relation
        if isinstance(relation, ast.Pipeline):
            cols = self.pipeline(relation.steps, "sub-pipeline")
            name = alias or "sub"
        elif isinstance(relation, ast.RelationCall):  # range(...): one column, its name
            name = alias or relation.name
            for arg in relation.args:
                self._exprs(arg, [], aliases)
            cols = []
        else:
            own = self.withs.get(relation)  # a `with` of the model hides a model
            self.out.reads.add(relation)
            target = own or self.index.definitions.get(relation)
            span = self._word(step.span, relation, skip_first=True)
            if target is not None and span is not None:
                self.out.references.append(Reference(span, target))
            cols = own.columns if own is not None else self.index.outputs.get(relation, [])
            name = alias or relation
        if alias is not None:
            self._word(step.span, alias, after=" as ")
        aliases.append(name)
        fresh = [ColumnIn(c.definition, name) for c in cols]
        scope.extend(fresh)
        return fresh

    # ------------------------------------------------------------ expressions
    def _exprs(self, node, scope: list[ColumnIn], aliases: list[str]) -> None:
        """Type every expression found inside a step (dataclass fields, tuples)."""
        if isinstance(node, _EXPRS):
            self._expr(node, scope, aliases)
        elif isinstance(node, ast.Pipeline):
            self.pipeline(node.steps, "sub-pipeline")
        elif isinstance(node, tuple):
            for item in node:
                self._exprs(item, scope, aliases)
        elif dataclasses.is_dataclass(node):
            for f in dataclasses.fields(node):
                self._exprs(getattr(node, f.name), scope, aliases)

    def _expr(self, expr, scope: list[ColumnIn], aliases: list[str], aggregate: bool = False,
              over: bool = False) -> T.Type | None:
        if expr is None:
            return None

        def lookup(ref: ast.Column) -> Col | Diagnostic:
            found = self._find(ref, scope)
            if found is None:
                return Diagnostic("E011", "unknown", ref.span)
            self.out.references.append(Reference(ref.span, found.definition))
            col_id = next(self.ids)
            self.by_id[col_id] = found
            return Col(col_id, ref.name, found.definition.type or ERROR, found.qualifier)

        ctx = ExprContext(lookup, "lsp", allow_aggregate=aggregate or over, over=over,
                          diagnostics=[], functions=self.index.module.functions)
        if self.index.functions:  # most modules have no `fn`: no walk for calls
            self._calls(expr)
        try:
            return ExpressionTyper(ctx).type(expr).type
        except (RecursionError, KeyError, TypeError, ValueError, AttributeError):
            return None

    def _calls(self, node) -> None:
        """Each call of a module's `fn` in an expression, as a reference to it."""
        if isinstance(node, ast.Call):
            target = self.index.functions.get(node.name)
            if target is not None:
                self.out.references.append(Reference(_name_span(node.span, node.name),
                                                       target))
        if isinstance(node, tuple):
            for item in node:
                self._calls(item)
        elif dataclasses.is_dataclass(node) and not isinstance(node, Span | ast.Pipeline):
            for name in _field_names(type(node)):
                self._calls(getattr(node, name))

    @staticmethod
    def _find(ref: ast.Column, scope: list[ColumnIn]) -> ColumnIn | None:
        for col in reversed(scope):
            if col.definition.name != ref.name:
                continue
            if ref.qualifier is None and col.visible:
                return col
            if ref.qualifier is not None and col.qualifier == ref.qualifier:
                return col
        return None

    def _define(self, name: str, span: Span, typ: T.Type | None, origin: str,
                owner: str) -> Definition:
        d = Definition("column", name, _name_span(span, name), typ or ERROR, origin, owner)
        self.out.column_defs.append(d)
        return d

    def _word(self, span: Span, word: str, after: str | None = None,
              skip_first: bool = False) -> Span | None:
        """Where `word` is written inside `span` (names the tree keeps as plain text):
        after `after` when given, else the first whole-word match (past the step's
        keyword when `skip_first`)."""
        for n in range(span.line, span.end_line + 1):
            text = self.index.line(span.file, n)
            lo = span.column - 1 if n == span.line else 0
            hi = span.end_column - 1 if n == span.end_line else len(text)
            segment = text[lo:hi]
            start = 0
            if after is not None:
                at = segment.rfind(after)
                if at < 0:
                    continue
                start = at + len(after)
            elif skip_first and n == span.line:
                start = len(segment.split(None, 1)[0]) if segment.strip() else 0
            m = re.compile(rf"\b{re.escape(word)}\b").search(segment, start)
            if m:
                col = lo + m.start() + 1
                return Span(span.file, n, col, n, col + len(word))
        return None
