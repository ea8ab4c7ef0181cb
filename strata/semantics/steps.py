"""One model's steps, in order, each reading and replacing the model's scope: from,
let, filter, join, expand, group/aggregate, derive, select, set operations, sort,
take, distinct, window; and the model's `with` relations (`Withs`), resolved as
sub-pipelines. One job in one place: every step reads and changes the same state
(scope, phase, stages, definitions), so the class is not cut by step.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from strata.diagnostics import Diagnostic, Span, did_you_mean
from strata.plan import (
    AggregateStage,
    BaseScope,
    Col,
    ColRef,
    DeriveStage,
    DistinctStage,
    ExpandStage,
    FilterStage,
    JoinStage,
    OrderKey,
    Plan,
    RelationRef,
    SelectStage,
    SemiJoinStage,
    SetOpStage,
    SortStage,
    TakeStage,
    WindowStage,
    colref,
)
from strata.semantics import checks
from strata.semantics import functions as F
from strata.semantics import types as T
from strata.semantics import windows as W
from strata.semantics.expressions import ERROR, ExprContext, ExpressionTyper
from strata.semantics.expressions import typed as typed_node
from strata.semantics.ranges import range_relation
from strata.semantics.scopes import CASE_NOTE, Entry, ModuleScope, Scope, duplicate, same_name
from strata.syntax import ast


class ModelResolver:
    """Walks one model's steps, keeping the scope, and builds its Plan."""

    def __init__(self, resolver: ModuleScope, decl: ast.ModelDecl, inline: bool = False,
                 withs: Withs | None = None):
        self.r = resolver
        self.decl = decl
        self.inline = inline  # a sub-pipeline: no properties or pins of its own
        # the model's `with` relations, shared by its sub-pipelines
        self.withs = withs if withs is not None else Withs(self, decl.withs)
        self.sort: list[OrderKey] | None = None  # the order `take` keeps rows in
        self.inlines = 0  # sub-pipelines named so far (their CTE names)
        self.scope = Scope()
        self.base: BaseScope | None = None
        self.base_ids: set[int] = set()
        self.stages: list = []
        self.reads: list[RelationRef] = []
        self.clock: set[str] = set()  # run_date()/run_timestamp() read by the model
        self.phase = "base"  # until the first join, expand, group or set operation
        self.selected = False  # a `select` replaced the scope (no `let` after it)
        self.defs: dict[int, exp.Expression] = {}  # computed col id -> its expression
        # a relation read has errors (said already): its columns are unknown, so an
        # unknown column says nothing more
        self.broken = False
        # sets of column ids no two rows of the scope share (W.key_columns): an order
        # holding one of them has no ties to break
        self.unique: list[frozenset[int]] = []

    def error(self, code: str, message: str, span: Span | None, hint: str | None = None) -> None:
        self.r.error(code, message, span, hint)

    def typer(self, where: str, **kw) -> ExpressionTyper:
        scope = self.scope  # the scope as it is now: steps replace self.scope later
        return ExpressionTyper(ExprContext(lambda ref: self.lookup(scope, ref), where,
                                           diagnostics=self.r.diags, clock=self.clock,
                                           functions=self.r.functions, **kw))

    def lookup(self, scope: Scope, ref: ast.Column) -> Col | Diagnostic:
        """`scope.lookup`, naming the model in an unknown-column error (SPEC §4)."""
        found = scope.lookup(ref)
        if isinstance(found, Diagnostic) and found.code == "E011" and ref.qualifier is None \
                and ref.name.lower() in F.NON_DETERMINISTIC:
            # `current_date` as SQL writes it: a function without parentheses
            return Diagnostic("E032", f"`{ref.name}` is not deterministic", ref.span,
                              F.CLOCK_HINT)
        if isinstance(found, Diagnostic) and found.code == "E011" and self.broken:
            return self.r.new_col(ref.name, ERROR, ref.qualifier)
        if isinstance(found, Diagnostic) and found.code == "E011":
            found = replace(found, message=f"{found.message} in model `{self.decl.name}`")
        return found

    def _read(self, ref: RelationRef) -> None:
        if ref.kind != "inline" and ref not in self.reads:
            self.reads.append(ref)

    def run(self) -> Plan | None:
        before = len(self.r.diags)
        steps = self.decl.steps
        if not steps or not isinstance(steps[0], ast.From):
            span = steps[0].span if steps else self.decl.name_span
            self.error("E050", f"model `{self.decl.name}` must start with `from`", span,
                       "write `from <source or model>` as the first step")
            return None
        if not self.inline:
            self.withs.check_places(steps[0])
        self._from(steps[0])
        step_list = list(steps[1:])
        i = 0
        while i < len(step_list):
            step = step_list[i]
            if isinstance(step, ast.Group):
                nxt = step_list[i + 1] if i + 1 < len(step_list) else None
                if not isinstance(nxt, ast.Aggregate):
                    self.error("E053", "`group` must be followed by `aggregate`", step.span,
                               "write `aggregate n = count(), ...` on the next line")
                    i += 1
                    continue
                self._aggregate(nxt, step)
                i += 2
                continue
            if isinstance(step, ast.Window):
                nxt = step_list[i + 1] if i + 1 < len(step_list) else None
                if not isinstance(nxt, ast.Derive):
                    self.error("E098", "`window` must be followed by `derive`", step.span,
                               "compute over the window on the next line: "
                               "`derive n = row_number(), running = sum(amount)`")
                    i += 1
                    continue
                self._window(step, nxt)
                i += 2
                continue
            if isinstance(step, ast.From):
                self._from_again(step)
            else:
                getattr(self, "_" + type(step).__name__.lower())(step)
            i += 1
        output = self._output()
        if not self.inline:
            self.withs.finish()
        plan = Plan(self.decl.name, self.base, self.stages, output, self.reads,
                    clock=frozenset(self.clock))
        if self.inline:
            return plan
        return checks.check_model(self.r, self.decl, plan, self.defs,
                                  steps_ok=len(self.r.diags) == before)

    # ------------------------------------------------------------ steps
    def _from(self, step: ast.From) -> None:
        alias = step.alias or _default_alias(step.relation)
        ref, columns = self._relation(step.relation, alias, step.span)
        cols = [self.r.new_col(n, t, alias) for n, t in columns]
        self.base = BaseScope(ref, alias, cols)
        self.base_ids = {c.id for c in cols}
        self.scope.aliases.append(alias)
        for col in cols:
            self.scope.add(col)
        upstream = self.r.module.models.get(ref.name) if ref.kind == "model" else None
        self.unique = W.pinned_unique(upstream.plan if upstream else None, cols)
        self._read(ref)

    def _relation(self, relation: str | ast.Pipeline | ast.RelationCall,
                  alias: str, span: Span | None = None,
                  ) -> tuple[RelationRef, list[tuple[str, T.Type]]]:
        """A relation by name (a `with` of the model's, else a source or model), or a
        sub-pipeline resolved into a plan of its own (its relations join this model's
        reads; it is never a model of the module), or the rows of a range
        (semantics/ranges.py)."""
        if isinstance(relation, str):
            if relation in self.withs:
                ref, columns, reads = self.withs.read(relation, span)
                for read in reads:
                    self._read(read)
                self.broken |= ref.plan is None
                return ref, columns
            return self.r.relation_columns(relation)
        if isinstance(relation, ast.RelationCall):
            made = range_relation(self, relation, alias)
            # a broken range still has its one column, untyped: what reads it says nothing
            return made if made is not None else (RelationRef("inline", alias),
                                                  [(alias, ERROR)])
        decl = replace(self.decl, steps=relation.steps, properties=(), pins=(), withs=())
        inner = ModelResolver(self.r, decl, inline=True, withs=self.withs)
        inner.clock = self.clock  # the model reads what its sub-pipelines read
        plan = inner.run()
        for ref in inner.reads:
            self._read(ref)
        if plan is None:
            self.broken = True
            return RelationRef("inline", alias), []
        self.inlines += 1
        ref = RelationRef("inline", f"{alias}", plan)
        return ref, [(c.name, c.type) for c in plan.output]

    def _from_again(self, step: ast.From) -> None:
        self.error("E050", "a model has exactly one `from`", step.span,
                   "to read another relation use `join`, or a set operation such as `union`")

    def _let(self, step: ast.Let) -> None:
        if self.phase != "base":
            self.error("E051", "`let` after a join, expand, group or set operation", step.span,
                       "`let` adds columns to the base scope; use `derive` here")
            return
        if self.selected:
            # the base scope is behind the `select`: a `let` here would be computed
            # before it, over columns the select dropped or renamed
            self.error("E051", "`let` after `select`", step.span,
                       "`let` adds columns to the base scope, before the `select`: move it "
                       "up, or use `derive` here")
            return
        for item in step.items:
            typed = self._typed_base(item.expr, "let")
            if self._clash(item.name, item.span):
                continue
            col = self.r.new_col(item.name, typed.type)
            node = _inline(typed_node(typed), self.defs)
            self.base.lets.append((col, node))
            self.defs[col.id] = node
            self.base_ids.add(col.id)
            self.scope.add(col)

    def _typed_base(self, expr: ast.Expr, where: str):
        """Type an expression against the base scope only (source columns and lets)."""
        base_scope = Scope([e for e in self.scope.entries if e.col.id in self.base_ids],
                           [self.base.alias])
        typer = ExpressionTyper(ExprContext(lambda ref: self.lookup(base_scope, ref), where,
                                            diagnostics=self.r.diags, clock=self.clock,
                                            functions=self.r.functions))
        return typer.type(expr)

    def _filter(self, step: ast.Filter) -> None:
        typed = self.typer("filter").type(step.predicate)
        if typed.type not in (T.BOOL, T.NULL, ERROR):
            self.error("E034", f"a filter must be boolean, found {typed.type}",
                       step.predicate.span, "compare it: e.g. `filter amount > 0`")
            return
        if typed.type == ERROR:
            return
        node = _inline(typed_node(typed), self.defs)
        if self.phase == "base" and typed.refs <= self.base_ids:
            self.base.preds.append(node)
        else:
            self.stages.append(FilterStage(node))

    def _join(self, step: ast.Join) -> None:
        self.phase = "post"
        if isinstance(step.relation, ast.Pipeline) and step.alias is None:
            self.error("E104", "a sub-pipeline needs a name to join it", step.relation.span,
                       "name it after the parentheses: `join (from orders | ...) as o on "
                       "o.customer_id = id`")
            return
        alias = step.alias or _default_alias(step.relation)
        if alias in self.scope.aliases:
            shown = step.relation if isinstance(step.relation, str) else "(...)"
            self.error("E017", f"relation name `{alias}` is already used in this model",
                       step.span, f"give it another name: `join {shown} as x on ...`")
            return
        ref, columns = self._relation(step.relation, alias, step.span)
        if step.kind in ("semi", "anti"):
            self._semi_join(step, ref, columns, alias)
            return
        left_names = {e.col.name for e in self.scope.entries if e.visible}
        own_names = {e.col.name for e in self.scope.entries if e.visible and not e.joined}
        joined_names = {e.col.name: e for e in self.scope.entries if e.visible and e.joined}
        cols = [self.r.new_col(n, t, alias) for n, t in columns]
        self.scope.aliases.append(alias)
        for col in cols:
            if col.name in joined_names and col.name not in own_names:
                # two joined relations bring it, the left side does not: ambiguous
                joined_names[col.name].ambiguous = True
                joined_names[col.name].output = False
                self.scope.add(col, ambiguous=True, output=False, joined=True)
            elif col.name in left_names:
                self.scope.add(col, visible=False, output=False, joined=True)
            else:
                self.scope.add(col, joined=True)
        if step.many or step.kind in ("cross", "full"):
            # a left row may now be several rows; a full join adds the unmatched right
            # rows, each with NULL for every left column
            self.unique = []
        if step.kind == "cross":
            self.stages.append(JoinStage(ref, alias, exp.true(), False, True, cols, [],
                                         step.span, "cross"))
            self._read(ref)
            return
        typed = self.typer("join").type(step.on)
        if typed.type not in (T.BOOL, T.NULL, ERROR):
            self.error("E034", f"a join condition must be boolean, found {typed.type}",
                       step.on.span)
        right_ids = {c.id for c in cols}
        if typed.type != ERROR and not typed.refs & right_ids:
            self.error("E034", f"the join condition never reads `{alias}`", step.on.span,
                       f"compare a column of `{alias}`: `on customer_id = {alias}.id`, or "
                       f"join every row with `join_cross {alias}`")
        on = _inline(typed_node(typed), self.defs)
        keys = _equi_keys(on, right_ids, {c.id: c for c in cols})
        self.stages.append(JoinStage(ref, alias, on, step.left, step.many, cols, keys, step.span,
                                     step.kind))
        self._read(ref)

    def _semi_join(self, step: ast.Join, ref: RelationRef, columns, alias: str) -> None:
        """join_semi / join_anti: the right side is readable in `on` only."""
        cols = [self.r.new_col(n, t, alias) for n, t in columns]
        on_scope = Scope(list(self.scope.entries), [*self.scope.aliases, alias])
        visible = {e.col.name for e in self.scope.entries if e.visible}
        for col in cols:
            on_scope.add(col, visible=col.name not in visible, output=False)
        typer = ExpressionTyper(ExprContext(lambda r: self.lookup(on_scope, r), "join",
                                            diagnostics=self.r.diags, clock=self.clock,
                                            functions=self.r.functions))
        typed = typer.type(step.on)
        if typed.type not in (T.BOOL, T.NULL, ERROR):
            self.error("E034", f"a join condition must be boolean, found {typed.type}",
                       step.on.span)
            return
        if typed.type != ERROR and not typed.refs & {c.id for c in cols}:
            self.error("E034", f"the join condition never reads `{alias}`", step.on.span,
                       f"compare a column of `{alias}`: `on customer_id = {alias}.id`")
            return
        self.stages.append(SemiJoinStage(ref, alias, _inline(typed_node(typed), self.defs),
                                         step.kind == "anti", cols))
        self._read(ref)

    def _expand(self, step: ast.Expand) -> None:
        self.phase = "post"
        typed = self.typer("expand").type(step.column)
        if typed.type == ERROR:
            return
        if typed.type.kind != "list":
            self.error("E038", f"`expand` needs a list column, `{step.column.name}` is "
                       f"{typed.type}", step.column.span)
            return
        if self._clash(step.item, step.span):
            return
        item = self.r.new_col(step.item, typed.type.element)
        self.scope.add(item)
        self.unique = []
        self.stages.append(ExpandStage(_inline(typed_node(typed), self.defs), item,
                                       f"__expand_{len(self.stages) + 1}"))

    def _aggregate(self, step: ast.Aggregate, group: ast.Group | None = None) -> None:
        self.phase = "post"
        keys: list[tuple[Col, exp.Expression]] = []
        key_ids: set[int] = set()
        new_scope = Scope(aliases=[])
        for key in (group.keys if group else ()):
            found = self.lookup(self.scope, key)
            if isinstance(found, Diagnostic):
                self.r.diags.append(found)
                continue
            key_ids.add(found.id)
            out = self.r.new_col(found.name, found.type, found.qualifier)
            keys.append((out, _inline(colref(found), self.defs)))
            new_scope.add(out)
            if found.qualifier and found.qualifier not in new_scope.aliases:
                new_scope.aliases.append(found.qualifier)
        aggs: list[tuple[Col, exp.Expression]] = []
        for item in step.items:
            typer = self.typer("aggregate", allow_aggregate=True, group_keys=frozenset(key_ids),
                               grouping_sets=group.sets if group else None)
            typed = typer.type(item.expr)
            if typed.type != ERROR and not typed.aggregate:
                self.error("E037", f"`{item.name}` aggregates nothing", item.expr.span,
                           "use an aggregate such as count(), sum(x), min(x), max(x), avg(x)")
                continue
            other = next((c.name for c, _ in [*keys, *aggs] if same_name(c.name, item.name)),
                         None)
            if other is not None:
                message, hint = duplicate(item.name, other, "is defined twice")
                self.error("E015", message, item.span, hint)
                continue
            col = self.r.new_col(item.name, typed.type)
            aggs.append((col, _inline(typed_node(typed), self.defs)))
            new_scope.add(col)
        self.stages.append(AggregateStage(keys, aggs, group.sets if group else None))
        self.scope = new_scope
        # one row per group (GROUP BY puts NULLs in one group); grouping sets give a
        # row per set, with NULL for the keys a set leaves out
        self.unique = [] if group and group.sets else [frozenset(c.id for c, _ in keys)]
        self.sort = None  # groups have no order

    def _group(self, step: ast.Group) -> None:  # pragma: no cover - handled in run()
        raise AssertionError

    def _derive(self, step: ast.Derive) -> None:
        items = []
        for item in step.items:
            typed = self.typer("derive").type(item.expr)
            if self._clash(item.name, item.span):
                continue
            col = self.r.new_col(item.name, typed.type)
            node = _inline(typed_node(typed), self.defs)
            self.defs[col.id] = node
            items.append((col, node))
            self.scope.add(col)
        self.stages.append(DeriveStage(items))

    def _star_items(self, star: ast.Star) -> list[ast.SelectItem]:
        """`*`: every output column in scope; `rel.*`: every column of `rel`, hidden
        ones too; as `select` items, less the `except` ones."""
        shown = f"{star.relation}.*" if star.relation is not None else "*"
        if star.relation is None:
            cols = self.scope.output_cols()
        elif star.relation not in self.scope.aliases:
            self.error("E017", f"unknown relation `{star.relation}` in `select {shown}`",
                       star.relation_span or star.span,
                       did_you_mean(star.relation, self.scope.aliases)
                       or (f"relations here: {', '.join(self.scope.aliases)}"
                           if self.scope.aliases else
                           "no relation is in scope here: a `select` or `group` before "
                           "this one replaced them with its own columns"))
            return []
        else:
            cols = [e.col for e in self.scope.entries if e.col.qualifier == star.relation]
        names = [c.name for c in cols]
        spans = star.exclude_spans or (star.span,) * len(star.exclude)
        for name, span in zip(star.exclude, spans):
            if name not in names:
                self.error("E011", f"unknown column `{name}` in `select {shown} except` of "
                           f"model `{self.decl.name}`", span, did_you_mean(name, names))
        excluded = set(star.exclude)
        if excluded and excluded >= set(names):
            self.error("E054", f"`select {shown} except` leaves no column", star.span,
                       "keep at least one column")
        if star.relation is not None:
            return [ast.SelectItem(ast.Column(c.name, c.qualifier, star.span), None, star.span)
                    for c in cols if c.name not in excluded]
        return [ast.SelectItem(ast.Column(c.name, c.qualifier if c.qualifier and
                                          not self.scope.visible(c.name) else None, star.span),
                               None, star.span)
                for c in cols if c.name not in excluded]

    def _select(self, step: ast.Select) -> None:
        items = []
        # case-folded name -> (the name, what selected it, the column it reads or None)
        names: dict[str, tuple[str, ast.Star | ast.SelectItem, Col | None]] = {}
        new_scope = Scope(aliases=[])
        written: list[tuple[ast.SelectItem, ast.Star | None]] = []
        for item in step.items:
            if isinstance(item.expr, ast.Star):
                written.extend((i, item.expr) for i in self._star_items(item.expr))
            else:
                written.append((item, None))
        for item, star in written:
            typed = self.typer("select").type(item.expr)
            name = item.alias or (item.expr.name if isinstance(item.expr, ast.Column) else None)
            if name is None:
                self.error("E054", "a computed `select` item needs a name", item.span,
                           "add `as name`, or compute it with `derive`")
                continue
            found = self.scope.lookup(item.expr) if isinstance(item.expr, ast.Column) else None
            read = found if isinstance(found, Col) else None
            if name.lower() in names and typed.type != ERROR:
                self._selected_twice(item, star, name, read, names[name.lower()])
                continue
            names[name.lower()] = (name, star or item, read)
            col = self.r.new_col(name, typed.type)
            node = _inline(typed_node(typed), self.defs)
            self.defs[col.id] = node
            items.append((col, node))
            new_scope.add(col)
        self.stages.append(SelectStage(items))
        self.scope = new_scope
        self.selected = True
        self.sort = None  # the select may drop what the sort reads

    def _selected_twice(self, item: ast.SelectItem, star: ast.Star | None, name: str,
                        read: Col | None, first: tuple[str, ast.Star | ast.SelectItem,
                                                      Col | None]) -> None:
        """E015 for a `select` naming two columns alike, saying which items did: a `*`
        selects columns the author never wrote, so "selected twice" alone misleads."""
        other, by, other_read = first
        if star is None and not isinstance(by, ast.Star):
            message, hint = duplicate(name, other, "is selected twice",
                                       hint="rename one with `as`")
            self.error("E015", message, item.span, hint)
            return
        case = "" if other == name else f" ({CASE_NOTE})"
        of = f" (of `{other_read.qualifier}`)" if other_read is not None and \
            other_read.qualifier else ""
        if star is None:  # an item after a `*` that selected the name already
            shown = "*" if by.relation is None else f"{by.relation}.*"
            if read is not None and other_read is not None and read.id == other_read.id:
                self.error("E015", f"column `{name}` is already selected by `{shown}`",
                           item.span, f"leave it out, or select a copy under another name: "
                           f"`{_written(item)} as {name}_2`")
                return
            self.error("E015", f"`{_written(item)}` is named like the column `{other}`{of} "
                       f"that `{shown}` selects{case}", item.span,
                       f"name it: `{_written(item)} as {_suggested(item, name)}`, or select it "
                       f"first and leave the other out: `select {_written(item)}, {shown} "
                       f"except {other}`")
            return
        shown = "*" if star.relation is None else f"{star.relation}.*"
        if isinstance(by, ast.Star):
            first_shown = "*" if by.relation is None else f"{by.relation}.*"
            what = "selects" if first_shown != shown else "selects already"
            self.error("E015", f"`{shown}` selects `{_written(item)}`, named like the column "
                       f"`{other}`{of} that `{first_shown}` {what}{case}", star.span,
                       f"leave one out: `{shown} except {name}` (as the last item), or "
                       f"select it under another name: `{_written(item)} as "
                       f"{_suggested(item, name)}`")
            return
        self.error("E015", f"`{shown}` selects `{_written(item)}`, named like `{other}` "
                   f"selected before it{case}", star.span,
                   f"leave it out: `{shown} except {name}` (as the last item)")

    def _setop(self, step: ast.SetOp) -> None:
        self.phase = "post"
        # a range's one column is named like this side's, when it has one column
        left_cols = self.scope.output_cols()
        name = (left_cols[0].name if isinstance(step.relation, ast.RelationCall)
                and len(left_cols) == 1 else f"__{step.op}")
        ref, columns = self._relation(step.relation, name, step.span)
        if not isinstance(step.relation, str):
            step = replace(step, relation="(...)")
        left = self.scope.output_cols()
        by_name = {n: t for n, t in columns}
        left_names = [c.name for c in left]
        missing = [n for n in left_names if n not in by_name]
        extra = [n for n in by_name if n not in left_names]
        if missing or extra:
            parts = []
            if missing:
                parts.append(f"`{step.relation}` lacks {', '.join(f'`{m}`' for m in missing)}")
            if extra:
                parts.append(f"it has {', '.join(f'`{m}`' for m in extra)} that this model "
                             f"does not")
            self.error("E052", f"`{step.op} {step.relation}`: columns differ: "
                       + "; ".join(parts), step.span, "select the same columns on both sides")
            return
        output, right = [], []
        for col in left:
            other = by_name[col.name]
            unified = T.unify(col.type, other) if ERROR not in (col.type, other) else col.type
            if unified is None:
                self.error("E052", f"`{step.op} {step.relation}`: column `{col.name}` is "
                           f"{col.type} here and {other} there", step.span,
                           "cast one side so both have the same type")
                return
            right.append(self.r.new_col(col.name, other, step.relation))
            output.append(self.r.new_col(col.name, unified))
        self.stages.append(SetOpStage(step.op, ref, left, right, output))
        self.sort = None
        self.unique = []
        self.scope = Scope(aliases=[])
        for col in output:
            self.scope.add(col)
        self._read(ref)

    # ------------------------------------------------------------ sort, take, distinct, window
    def _order(self, keys: tuple[ast.SortKey, ...], where: str) -> list[OrderKey]:
        out = []
        for key in keys:
            typed = self.typer(where).type(key.expr)
            if typed.type == ERROR:
                continue
            if typed.type.kind == "list":
                self.error("E030", f"cannot order by a list ({typed.type})", key.expr.span,
                           "order by a scalar, e.g. length(tags)")
                continue
            node = _inline(typed_node(typed), self.defs)
            node.type = typed.type.to_sqlglot()  # a text key is collated where engines differ
            out.append(OrderKey(node, key.desc, bool(key.nulls_first)))
        return out

    def _keys(self, columns: tuple[ast.Column, ...]) -> list[exp.Expression]:
        out = []
        for key in columns:
            found = self.lookup(self.scope, key)
            if isinstance(found, Diagnostic):
                self.r.diags.append(found)
                continue
            out.append(colref(found))
        return out

    def _sort(self, step: ast.Sort) -> None:
        self.sort = self._order(step.keys, "sort")
        self.stages.append(SortStage(self.sort))

    def _take(self, step: ast.Take) -> None:
        self.phase = "post"
        if self.sort is None:
            self.error("E100", "`take` without `sort`: which rows it keeps is not defined",
                       step.span, f"sort first: `sort ordered_at desc` then `take {step.count}`"
                       + (" (a `select` or `aggregate` since the last sort loses its order)"
                          if self.selected or any(isinstance(s, AggregateStage)
                                                  for s in self.stages) else ""))
            return
        order = [OrderKey(k.expr.copy(), k.desc, k.nulls_first) for k in self.sort]
        by = self._keys(step.by)
        order += self._ties(order, by)
        self.stages.append(TakeStage(step.count, order, by))

    def _distinct(self, step: ast.Distinct) -> None:
        self.phase = "post"
        if step.by and not step.order:
            keys = ", ".join(c.name for c in step.by)
            self.error("E101", "`distinct by` without `order`: which row of a key it keeps is "
                       "not defined", step.span,
                       f"say which row to keep: `distinct by {keys} order updated_at desc` "
                       "keeps the latest")
            return
        by = self._keys(step.by)
        order = self._order(step.order, "distinct")
        if by:
            order += self._ties(order, by)
        self.stages.append(DistinctStage(by, order,
                                         [] if step.by else self.scope.output_cols()))
        if not step.by:  # rows are compared on what they output: only that stays
            self.scope = Scope([Entry(c) for c in self.scope.output_cols()],
                               list(self.scope.aliases))

    def _window(self, step: ast.Window, derive: ast.Derive) -> None:
        self.phase = "post"
        partition = self._keys(step.by)
        keys = self._order(step.order, "window")
        order = [k.node(k.expr) for k in keys]
        frame = self._frame(step, order)
        total = [*order, *(k.node(k.expr) for k in self._ties(keys, partition))]
        items = []
        for item in derive.items:
            typer = self.typer("window", allow_aggregate=True, over=True)
            typed = typer.type(item.expr)
            if self._clash(item.name, item.span):
                continue
            node, calls = W.over(_inline(typed_node(typed), self.defs), partition, order, frame,
                                 total)
            if typed.type != ERROR and not calls:
                self.error("E098", f"`{item.name}` computes nothing over the window",
                           item.expr.span, "use a window function or an aggregate, e.g. "
                           "row_number(), lag(x), sum(x); plain columns go in `derive`")
                continue
            unordered = next((c for c in calls if W.needs_order(c)), None)
            if unordered is not None and not order:
                self.error("E099", f"`{item.name}` needs an ordered window", item.expr.span,
                           "order the window: `window by k order t`; without an order "
                           "the result would change from run to run")
                continue
            edge = next((c for c in calls if order and isinstance(c, W.FRAMED_VALUES)
                         and W.tie_free(c, partition, order, frame, total) is None), None)
            if edge is not None:
                name = "first_value" if isinstance(edge, exp.FirstValue) else "last_value"
                self.error("E111", f"`{name}` over a range frame with an offset reads a row among ties",
                           item.expr.span,
                           "a range frame bound an offset away from the current row holds "
                           "tied rows (or none): count rows instead, `rows between 3 "
                           "preceding and current row` (Strata orders ties by the "
                           "remaining columns)")
                continue
            extreme = next((c for c in calls if W.is_arg_extreme(c)), None)
            if extreme is not None:
                name = "arg_min" if isinstance(extreme, exp.ArgMin) else "arg_max"
                self.error("E189", f"`{name}` over a window", item.expr.span,
                           "order the window by what picks the row and take its value: "
                           f"`window by k order by_column{' desc' if name == 'arg_max' else ''}"
                           ", x` then `derive v = first_value(x)`; or aggregate per group "
                           "with `group k` and `aggregate`")
                continue
            if any(W.is_distinct_aggregate(c) for c in calls):
                self.error("E102", "`count_distinct` over a window", item.expr.span,
                           "PostgreSQL and Spark have no DISTINCT aggregate over a window: "
                           "aggregate in a sub-pipeline and join it instead")
                continue
            col = self.r.new_col(item.name, typed.type)
            self.defs[col.id] = node
            items.append((col, node))
            self.scope.add(col)
        self.stages.append(WindowStage(items))

    def _frame(self, step: ast.Window, order: list) -> exp.WindowSpec | None:
        frame = step.frame
        if frame is None:
            return None
        if not order:
            self.error("E099", f"a `{frame.kind}` frame on a window without `order`",
                       frame.span, "a frame counts rows before and after in an order: "
                       "`window by k order t rows between 2 preceding and current row`")
            return None
        bounds = [(b.kind, b.side, b.offset) for b in (frame.start, frame.end)]
        if W.bound_position(*bounds[0]) > W.bound_position(*bounds[1]) or \
                bounds[0][:2] == ("unbounded", "following") or \
                bounds[1][:2] == ("unbounded", "preceding"):
            self.error("E105", "the frame starts after it ends", frame.span,
                       "write the earlier bound first: `rows between 3 preceding and "
                       "current row`")
            return None
        if frame.kind == "range" and any(b[0] == "offset" for b in bounds) and len(order) != 1:
            self.error("E103", "a `range` frame with an offset needs exactly one `order` key",
                       frame.span, "order by one number or date, or count rows: "
                       "`rows between 3 preceding and current row`")
            return None
        key = order[0].this.type
        if frame.kind == "range" and any(b[0] == "offset" for b in bounds) and key is not None \
                and not key.is_type("BIGINT", "INT", "DOUBLE", "DECIMAL", "NULL"):
            self.error("E113", f"a `range` frame with an offset on a {key.sql().lower()} order "
                       "key", frame.span,
                       "a range offset is a number in the key's own units, and engines read "
                       "one on a date or timestamp differently (days, an interval, an error): "
                       "order by a number, e.g. `date_diff('day', date '2000-01-01', day)`, "
                       "or count rows: `rows between 3 preceding and current row`")
            return None
        return W.frame_spec(frame.kind, *bounds)

    def _ties(self, keys: list[OrderKey], by: list[exp.Expression]) -> list[OrderKey]:
        """The tie-breakers after an order: the rest of a unique key of the scope
        (none when the order holds one), else the scope's other columns
        (windows.tie_breakers)."""
        known = W.plain_keys([*by, *(k.expr for k in keys)])
        cols = [e.col for e in self.scope.entries]
        key = W.key_columns(cols, known, self.unique, self.defs)
        return W.tie_breakers(cols if key is None else key, self.defs, known)

    # ------------------------------------------------------------ helpers
    def _clash(self, name: str, span: Span) -> bool:
        if self.scope.visible(name):
            self.error("E015", f"column `{name}` already exists", span,
                       f"pick another name, and rename it in the final `select` "
                       f"(`select ..., new_name as {name}`)")
            return True
        other = self.scope.visible_like(name)
        if other is not None:
            message, hint = duplicate(name, other, "", hint="pick another name")
            self.error("E015", message, span, hint)
            # in scope all the same, untyped, so what reads it says nothing more
            self.scope.add(self.r.new_col(name, ERROR))
            return True
        return False

    def _output(self) -> list[Col]:
        return self.scope.output_cols()


def _default_alias(relation: str | ast.Pipeline | ast.RelationCall) -> str:
    """The name a relation has in a model without `as`."""
    if isinstance(relation, str):
        return relation
    return relation.name if isinstance(relation, ast.RelationCall) else "sub"


class Withs:
    """A model's `with` relations: each resolved (into a plan of its own, as a
    sub-pipeline is) the first time a step reads it, in any order, and once only.
    A `with` read while it is being resolved closes a loop (E172). What is never read
    is resolved at the end, so its errors are said too, and then is E171."""

    def __init__(self, owner: ModelResolver, decls: tuple[ast.With, ...]):
        self.owner = owner
        self.decls: dict[str, ast.With] = {}
        self.done: dict[str, tuple[RelationRef, list[tuple[str, T.Type]],
                                   list[RelationRef]]] = {}
        self.resolving: list[str] = []
        self.read_ones: set[str] = set()
        self.failed: set[str] = set()  # resolved with errors: unread or not, said already
        module = owner.r.module
        for decl in decls:
            first = self.decls.get(decl.name)
            clash = "source" if decl.name in module.sources else \
                "model" if decl.name in module.models else None
            if first is not None:
                owner.error("E170", f"`with {decl.name}` is declared twice in model "
                            f"`{owner.decl.name}`", decl.name_span,
                            f"give each `with` of a model its own name (the first "
                            f"`{decl.name}` is {decl.name_span.line - first.name_span.line} "
                            "line(s) above)" if first.name_span.line != decl.name_span.line
                            else "give each `with` of a model its own name")
            elif clash is not None:
                owner.error("E170", f"`with {decl.name}` has the name of a {clash} of the "
                            "module", decl.name_span,
                            f"name it otherwise (e.g. `{decl.name}_2`): inside the model "
                            f"`{decl.name}` would mean one of the two")
            else:
                self.decls[decl.name] = decl

    def __contains__(self, name: str) -> bool:
        return name in self.decls

    def check_places(self, first_step: ast.Step) -> None:
        """E173 for a `with` written after the model's first step."""
        start = (first_step.span.line, first_step.span.column)
        for decl in self.decls.values():
            if (decl.span.line, decl.span.column) > start:
                self.owner.error("E173", f"`with {decl.name}` after the first step of model "
                                 f"`{self.owner.decl.name}`", decl.span,
                                 "write the model's `with` relations at its top, before "
                                 "`from`")

    def read(self, name: str, span: Span | None,
             ) -> tuple[RelationRef, list[tuple[str, T.Type]], list[RelationRef]]:
        """(relation, its columns, the relations it reads) of the `with` `name`."""
        self.read_ones.add(name)
        if name in self.done:
            return self.done[name]
        if name in self.resolving:
            loop = [*self.resolving[self.resolving.index(name):], name]
            message = (f"`with {name}` reads itself" if len(loop) == 2 else
                       "`with` relations read each other: " + " -> ".join(loop))
            self.owner.error("E172", message, span or self.decls[name].span,
                             "a `with` reads sources, models and the `with` relations "
                             "that do not read it back")
            return RelationRef("inline", name), [], []
        decl = self.decls[name]
        self.resolving.append(name)
        before = len(self.owner.r.diags)
        try:
            model = replace(self.owner.decl, steps=decl.pipeline.steps, properties=(),
                            pins=(), withs=())
            inner = ModelResolver(self.owner.r, model, inline=True, withs=self)
            inner.clock = self.owner.clock
            plan = inner.run()
        finally:
            self.resolving.pop()
        if len(self.owner.r.diags) > before:
            self.failed.add(name)
        if plan is None or name in self.failed:  # its readers say nothing more
            found = (RelationRef("inline", name), [], list(inner.reads))
        else:
            found = (RelationRef("inline", name, plan, shared=True),
                     [(c.name, c.type) for c in plan.output], list(inner.reads))
        self.done[name] = found
        return found

    def finish(self) -> None:
        """Resolve what no step read (its errors are the model's too), then E171."""
        for name, decl in self.decls.items():
            if name not in self.read_ones:
                self.read(name, decl.span)
                self.read_ones.discard(name)
        for name, decl in self.decls.items():
            if name not in self.read_ones and name not in self.failed:
                self.owner.error("E171", f"`with {name}` is never read in model "
                                 f"`{self.owner.decl.name}`", decl.name_span,
                                 f"read it (`from {name}`, `join {name} as x on ...`), or "
                                 "remove it")


def _written(item: ast.SelectItem) -> str:
    """A select item as a message quotes it: `o.id`, `id`, or its alias."""
    expr = item.expr
    if isinstance(expr, ast.Column):
        return f"{expr.qualifier}.{expr.name}" if expr.qualifier else expr.name
    return item.alias or "..."


def _suggested(item: ast.SelectItem, name: str) -> str:
    """A new name for a select item that clashes: its relation's name before it."""
    expr = item.expr
    if isinstance(expr, ast.Column) and expr.qualifier:
        return f"{expr.qualifier}_{name}"
    return f"{name}_2"


def _inline(node: exp.Expression, defs: dict[int, exp.Expression]) -> exp.Expression:
    """Keep ColRefs to columns a later CTE can hold; computed columns stay references too.

    Plans reference computed columns by id; sqlgen decides whether a CTE holds them or
    their expression is inlined. Nothing to do here but copy, so plans never share nodes.
    """
    return node.copy()


def _equi_keys(on: exp.Expression, right_ids: set[int],
               right_cols: dict[int, Col]) -> list[tuple[exp.Expression, Col]]:
    """(left expression, right column) pairs when `on` is a conjunction of equalities."""
    conjuncts = list(on.flatten()) if isinstance(on, exp.And) else [on]
    keys = []
    for conj in conjuncts:
        while isinstance(conj, exp.Paren):
            conj = conj.this
        if not isinstance(conj, exp.EQ):
            return []
        a, b = conj.this, conj.expression
        a_ids = {n.col_id for n in a.find_all(ColRef)}
        b_ids = {n.col_id for n in b.find_all(ColRef)}
        if isinstance(b, ColRef) and b.col_id in right_ids and not a_ids & right_ids:
            keys.append((a, right_cols[b.col_id]))
        elif isinstance(a, ColRef) and a.col_id in right_ids and not b_ids & right_ids:
            keys.append((b, right_cols[a.col_id]))
        else:
            return []
    return keys
