"""Plan → SQLGlot tree: a `base` CTE, then one CTE per block of later stages, then
the final SELECT.

A block is one SELECT, filled in clause order (FROM, JOINs/UNNEST, WHERE,
GROUP BY, HAVING, projection). A step that cannot go into the open block in that
order closes it into a CTE and opens the next one. Computed columns are inlined
where they are used until a CTE holds them, so derive/select need no CTE of their
own. Only the columns later stages still read cross a CTE boundary.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from copy import deepcopy
from dataclasses import dataclass, field
from typing import NamedTuple

from sqlglot import exp

from strata.plan import (
    AggregateStage,
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
)
from strata.semantics.precedence import precedence
from strata.semantics.types import Type
from strata.sqlgen.names import aliased, column, ident, table

BASE = "base"
Relations = Callable[[RelationRef, "str | None"], exp.Expression]  # (relation, alias) -> FROM item


class Ref(NamedTuple):
    """A column read as `table.name`: what most environment entries are. Each use
    gets a fresh node made from it, so none is built only to be copied."""

    name: str
    table: str | None = None


Env = dict[int, "exp.Expression | Ref"]  # column id -> what reads that column here


def copy(node: exp.Expression | Ref) -> exp.Expression:
    """A fresh tree for an environment entry: `node.copy()`, three times faster for
    what is copied most, a column reference, which is rebuilt instead of going
    through SQLGlot's deep copy."""
    if type(node) is Ref:
        return column(node.name, node.table)
    if type(node) is exp.Column and _plain(node, {"this", "table"}):
        name, qualifier = node.args["this"], node.args.get("table")
        if _plain(name, {"this", "quoted"}) and (qualifier is None
                                                 or _plain(qualifier, {"this", "quoted"})):
            return exp.Column(
                this=exp.Identifier(this=name.this, quoted=name.quoted),
                table=None if qualifier is None else exp.Identifier(this=qualifier.this,
                                                                    quoted=qualifier.quoted))
    return node.copy()


def _plain(node: exp.Expression, args: set[str]) -> bool:
    """Nothing on the node but `args`: no comments, meta or type to carry over."""
    return (node.args.keys() <= args and not node.comments and node._meta is None
            and node._type is None)


def bind(node: exp.Expression, env: Env) -> exp.Expression:
    """A copy of `node` with every ColRef replaced by what reads that column here
    (in parentheses where the operator around it binds tighter).

    One pass, copying and replacing together (SQLGlot's deep copy, then a
    `transform` over the copy, walked the tree twice); iterative like the deep copy,
    so deep expressions do not recurse."""
    if isinstance(node, ColRef):
        return _read(node, env)
    root = node.__class__()
    stack = [(node, root)]
    while stack:
        source, target = stack.pop()
        if source.comments is not None:
            target.comments = list(source.comments)
        if source._type is not None:
            target._type = source._type.copy()
        if source._meta is not None:
            target._meta = deepcopy(source._meta)
        for key, value in source.args.items():
            if isinstance(value, exp.Expression):
                target.set(key, _bound_child(value, source, env, stack))
            elif type(value) is list:
                target.args[key] = []
                for item in value:
                    target.append(key, _bound_child(item, source, env, stack)
                                  if isinstance(item, exp.Expression) else item)
            else:
                target.args[key] = value
    return root


def _read(ref: ColRef, env: Env) -> exp.Expression:
    """What reads `ref` here, with the type the checker gave the reference, if any
    (see `semantics.expressions.typed`)."""
    bound = copy(env[ref.col_id])
    if ref._type is not None:
        bound.type = ref._type
    return bound


def _bound_child(child: exp.Expression, parent: exp.Expression, env: Env, stack: list):
    if isinstance(child, ColRef):
        bound = _read(child, env)
        level = precedence(parent)
        if level < 9 and precedence(bound) <= level:
            return exp.Paren(this=bound)
        return bound
    fresh = child.__class__()
    stack.append((child, fresh))
    return fresh


@dataclass
class Block:
    source: exp.Expression  # FROM item
    env: Env
    scope: list[Col]  # columns readable at this point, in order
    joins: list[exp.Join] = field(default_factory=list)
    where: list[exp.Expression] = field(default_factory=list)
    group: list[exp.Expression] | None = None  # set once aggregated ([] = whole table)
    group_sets: type[exp.Expression] | None = None  # exp.Rollup / exp.Cube around the keys
    having: list[exp.Expression] = field(default_factory=list)
    kind: str = "step"  # names the CTE when the block closes
    order: list[exp.Ordered] | None = None  # ORDER BY (a CTE keeps it only with LIMIT)
    limit: int | None = None
    distinct: bool = False
    windowed: bool = False  # computes window functions: WHERE/GROUP BY come before them

    def select(self, cols: list[Col], names: list[str] | None = None,
               ordered: bool = True) -> exp.Select:
        names = names or [c.name for c in cols]
        query = exp.Select(expressions=[aliased(copy(self.env[c.id]), n)
                                        for c, n in zip(cols, names)])
        if self.distinct:
            query.set("distinct", exp.Distinct())
        query.set("from_", exp.From(this=self.source.copy()))
        if self.joins:
            query.set("joins", [j.copy() for j in self.joins])
        if self.where:
            query.set("where", exp.Where(this=_conjoin(self.where)))
        if self.group:
            keys = [g.copy() for g in self.group]
            if self.group_sets is not None:
                keys = [self.group_sets(expressions=keys)]
            query.set("group", exp.Group(expressions=keys))
        if self.having:
            query.set("having", exp.Having(this=_conjoin(self.having)))
        if self.order and (ordered or self.limit is not None):
            query.set("order", exp.Order(expressions=[o.copy() for o in self.order]))
        if self.limit is not None:
            query.set("limit", exp.Limit(expression=exp.Literal.number(self.limit)))
        return query

    def settled(self) -> bool:
        """Does the block hold a step that what follows must not move before (a window,
        a LIMIT, a GROUP BY)? Then a filter, join or aggregate reads it as a CTE."""
        return self.windowed or self.limit is not None or self.group is not None


def _conjoin(preds: list[exp.Expression]) -> exp.Expression:
    out = preds[0].copy()
    if len(preds) > 1 and precedence(out) < 3:
        out = exp.Paren(this=out)
    for pred in preds[1:]:
        pred = pred.copy()
        if precedence(pred) < 3:
            pred = exp.Paren(this=pred)
        out = exp.And(this=out, expression=pred)
    return out


class QueryBuilder:
    def __init__(self, plan: Plan, relations: Relations, parent: QueryBuilder | None = None):
        self.plan = plan
        self.relations = relations
        # a sub-pipeline's CTEs go into the outer query's WITH, named apart from its own
        self.ctes: list[exp.CTE] = parent.ctes if parent else []
        # CTE names must not shadow a table the query reads by its bare name (a
        # source called `base` or `combined`) or a join alias in a later SELECT.
        self.cte_names: set[str] = parent.cte_names if parent else set()
        # `with` relations already in self.ctes: the plan's id -> its CTE's name
        self.shared: dict[int, str] = parent.shared if parent else {}
        self.cte_names |= self._names_in_use()
        self.needed = self._liveness()
        self.hidden = itertools.count(1)  # ids of columns only the SQL needs (negative)

    def relation(self, ref: RelationRef, alias: str | None) -> exp.Expression:
        """The FROM item of a relation; a sub-pipeline becomes a CTE of this query, a
        `with` relation one CTE however many steps read it, a range its series."""
        if ref.kind == "series":
            return _series(ref, alias or ref.name, self.plan.base.columns[0].name)
        if ref.kind != "inline":
            return self.relations(ref, alias)
        if _bare_series(ref.plan):  # `range(...)` of ints: the series itself, no CTE
            plan = ref.plan
            return _series(plan.base.relation, alias or plan.base.alias, plan.output[0].name)
        if ref.shared:
            name = self.shared.get(id(ref.plan))
            if name is None:
                name = self._shared_cte(ref)
                self.shared[id(ref.plan)] = name
        else:
            inner = QueryBuilder(ref.plan, self.relations, parent=self)
            if ref.plan.base.relation.kind == "series" and not ref.plan.stages:
                # a range of dates or timestamps: its base scope is its rows, one CTE
                body = inner._base_query(only=ref.plan.output)
            else:
                body = inner.body()
            name = self._add_cte(alias or ref.name, body)
        node = table(name)
        if alias and alias != name:
            node.set("alias", exp.TableAlias(this=ident(alias)))
        return node

    def _shared_cte(self, ref: RelationRef) -> str:
        """The CTE of a `with` relation, named after it. When its pipeline ends by
        passing its last CTE's columns through unchanged, that CTE takes the name
        instead of being read by one more."""
        inner = QueryBuilder(ref.plan, self.relations, parent=self)
        count = len(self.ctes)
        body = inner.body()
        last = self.ctes[-1] if len(self.ctes) > count else None
        if last is not None and _passes_through(body, last):
            self.ctes.pop()
            return self._add_cte(ref.name, last.this)
        return self._add_cte(ref.name, body)

    def _names_in_use(self) -> set[str]:
        # a join of a `with` by its own name reads the CTE of that name
        names = {s.alias for s in self.plan.stages if isinstance(s, (JoinStage, SemiJoinStage))
                 and not (s.relation.shared and s.alias == s.relation.name)}
        for ref in self.plan.reads:
            node = self.relations(ref, None)
            if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier) \
                    and not node.args.get("db"):
                names.add(node.name)
        return names

    # ------------------------------------------------------------ liveness
    def _liveness(self) -> list[set[int]]:
        """needed[i]: ids read by stages[i:] or the output."""
        needed = [set() for _ in range(len(self.plan.stages) + 1)]
        current = {c.id for c in self.plan.output}
        needed[-1] = set(current)
        for i in range(len(self.plan.stages) - 1, -1, -1):
            current = current | _stage_refs(self.plan.stages[i])
            needed[i] = set(current)
        return needed

    # ------------------------------------------------------------ building
    def build(self) -> exp.Select:
        final = self.body()
        if self.ctes:
            final.set("with_", exp.With(expressions=self.ctes))
        return final

    def body(self) -> exp.Select:
        """The final SELECT; its CTEs are in self.ctes."""
        block = self._base()
        for i, stage in enumerate(self.plan.stages):
            block = self._stage(block, stage, i)
        return block.select(self.plan.output)

    def _base(self) -> Block:
        base = self.plan.base
        query = self._base_query()
        name = self._add_cte(BASE, query)
        scope = [*base.columns, *(c for c, _ in base.lets)]
        return Block(table(name), {c.id: Ref(c.name, name) for c in scope}, scope)

    def _base_query(self, only: list[Col] | None = None) -> exp.Select:
        """The base scope's SELECT: the relation's columns and the lets (or `only`
        these of them), where the base predicates hold."""
        base = self.plan.base
        env: Env = {c.id: Ref(c.name, base.alias) for c in base.columns}
        projection = [aliased(copy(env[c.id]), c.name) for c in base.columns]
        for col, node in base.lets:
            env[col.id] = bind(node, env)
            projection.append(aliased(copy(env[col.id]), col.name))
        if only is not None:
            kept = {c.id for c in only}
            scope = [*base.columns, *(c for c, _ in base.lets)]
            projection = [p for c, p in zip(scope, projection) if c.id in kept]
        query = exp.Select(expressions=projection)
        query.set("from_", exp.From(this=self.relation(base.relation, base.alias)))
        if base.preds:
            query.set("where", exp.Where(this=_conjoin([bind(p, env) for p in base.preds])))
        return query

    def _add_cte(self, name: str, query: exp.Expression) -> str:
        unique, n = name, 1
        while unique in self.cte_names:
            n += 1
            unique = f"{name}_{n}"
        self.cte_names.add(unique)
        self.ctes.append(exp.CTE(this=query, alias=exp.TableAlias(this=ident(unique))))
        return unique

    def _close(self, block: Block, index: int, extra: list[Col] = (),
               exact: list[Col] | None = None) -> Block:
        """Turn the open block into a CTE holding the columns stages[index:] still read
        (and `extra`, columns only the SQL reads; or `exact`, the rows `distinct`
        compares)."""
        # a CTE needs a column even when later stages read none of them (`count()`
        # over an aggregate's rows): the rows are what they count
        live = exact if exact is not None else (
            [c for c in block.scope if c.id in self.needed[index]] or block.scope[:1])
        live = [*live, *extra]
        names = _unique_names(live)
        name = self._add_cte(block.kind, block.select(live, names, ordered=False))
        env: Env = {c.id: Ref(n, name) for c, n in zip(live, names)}
        return Block(table(name), env, live)

    def _stage(self, block: Block, stage, index: int) -> Block:
        if isinstance(stage, (SortStage, TakeStage, DistinctStage, WindowStage, SemiJoinStage)):
            return self._new_step(block, stage, index)
        if isinstance(stage, JoinStage):
            # a full join keeps right rows no left row matched: a filter before it
            # (WHERE, EXISTS) must not see them
            if block.settled() or (stage.kind == "full" and block.where):
                block = self._close(block, index)
            on_env = dict(block.env)
            for col in stage.columns:
                on_env[col.id] = Ref(col.name, stage.alias)
            relation = self.relation(stage.relation, stage.alias)
            if stage.kind == "cross":
                join = exp.Join(this=relation, kind="CROSS")
            else:
                join = exp.Join(this=relation, on=bind(stage.on, on_env))
            if stage.left:
                join.set("side", "LEFT")
            elif stage.kind == "full":
                join.set("side", "FULL")
            block.joins.append(join)
            block.env = on_env
            block.scope = [*block.scope, *stage.columns]
            block.kind = "joined"
            return block
        if isinstance(stage, ExpandStage):
            if block.settled():
                block = self._close(block, index)
            item = ident(stage.item.name)
            item.type = stage.item.type.to_sqlglot()  # for an engine whose items are untyped
            unnest = exp.Unnest(expressions=[bind(stage.source, block.env)],
                                alias=exp.TableAlias(this=ident(stage.alias), columns=[item]))
            block.joins.append(exp.Join(this=unnest, kind="CROSS"))
            block.env[stage.item.id] = Ref(stage.item.name, stage.alias)
            block.scope = [*block.scope, stage.item]
            block.kind = "expanded"
            return block
        if isinstance(stage, FilterStage):
            if block.windowed or block.limit is not None:  # QUALIFY: after the window
                block = self._close(block, index)
            pred = bind(stage.predicate, block.env)
            (block.having if block.group is not None else block.where).append(pred)
            return block
        if isinstance(stage, AggregateStage):
            if block.settled():
                block = self._close(block, index)
            keys = [bind(node, block.env) for _, node in stage.keys]
            aggs = [bind(node, block.env) for _, node in stage.aggregates]
            block.group = keys
            block.group_sets = {"rollup": exp.Rollup, "cube": exp.Cube}.get(stage.sets)
            for (col, _), node in zip(stage.keys, keys):
                block.env[col.id] = node
            for (col, _), node in zip(stage.aggregates, aggs):
                block.env[col.id] = node
            block.scope = [c for c, _ in stage.keys] + [c for c, _ in stage.aggregates]
            block.kind = "aggregated"
            return block
        if isinstance(stage, (DeriveStage, SelectStage)):
            for col, node in stage.items:
                block.env[col.id] = bind(node, block.env)
            cols = [c for c, _ in stage.items]
            block.scope = cols if isinstance(stage, SelectStage) else [*block.scope, *cols]
            return block
        if isinstance(stage, SetOpStage):
            return self._setop(block, stage, index)
        raise AssertionError(stage)

    def _setop(self, block: Block, stage: SetOpStage, index: int) -> Block:
        if block.limit is not None:  # a set operation's operand has no LIMIT of its own
            block = self._close(block, index)
        names = [c.name for c in stage.left]
        left = block.select(stage.left, names, ordered=False)
        if self.ctes and left.args.get("with_"):
            left.set("with_", None)
        other = exp.Select(expressions=[column(n) for n in names])
        other.set("from_", exp.From(this=self.relation(stage.relation, None)))
        kinds = {"union": (exp.Union, False), "union_distinct": (exp.Union, True),
                 "except": (exp.Except, True), "intersect": (exp.Intersect, True)}
        cls, distinct = kinds[stage.op]
        combined = cls(this=left, expression=other, distinct=distinct)
        name = self._add_cte("combined", combined)
        env: Env = {c.id: Ref(c.name, name) for c in stage.output}
        return Block(table(name), env, list(stage.output))


    # ------------------------------------------------------------ issue 16 steps
    def _new_step(self, block: Block, stage, index: int) -> Block:
        if isinstance(stage, SortStage):
            if block.limit is not None:  # sorting the rows `take` kept
                block = self._close(block, index)
            block.order = self._ordered(stage.keys, block.env)
            return block
        if isinstance(stage, WindowStage):
            # a window over a window's result reads it from a CTE (no nested OVER)
            if block.settled():
                block = self._close(block, index)
            for col, node in stage.items:
                block.env[col.id] = bind(node, block.env)
            block.scope = [*block.scope, *(c for c, _ in stage.items)]
            block.windowed = True
            block.kind = "windowed"
            return block
        if isinstance(stage, SemiJoinStage):
            if block.settled():
                block = self._close(block, index)
            env = dict(block.env)
            for col in stage.columns:
                env[col.id] = Ref(col.name, stage.alias)
            probe = exp.Select(expressions=[exp.Literal.number(1)])
            probe.set("from_", exp.From(this=self.relation(stage.relation, stage.alias)))
            probe.set("where", exp.Where(this=bind(stage.on, env)))
            found = exp.Exists(this=probe)
            block.where.append(exp.Not(this=found) if stage.anti else found)
            return block
        if isinstance(stage, TakeStage) and not stage.by:
            if block.limit is not None:
                block = self._close(block, index)
            block.order = self._ordered(stage.order, block.env)
            block.limit = stage.count
            return block
        if isinstance(stage, DistinctStage) and not stage.by:
            if block.limit is not None or block.group is not None:
                block = self._close(block, index)
            block.distinct = True
            return self._close(block, index, exact=stage.columns)
        # top-N per group (`take N by k`) or the first row per key (`distinct by k order o`)
        count = stage.count if isinstance(stage, TakeStage) else 1
        return self._first_per_group(block, stage.by, stage.order, count, index)

    def _first_per_group(self, block: Block, by: list[exp.Expression], order: list[OrderKey],
                         count: int, index: int) -> Block:
        """Rows numbered per group in the order, then the first `count` of each: what
        QUALIFY row_number() OVER (...) <= count means, as a CTE and a WHERE (every
        engine has those; PostgreSQL has no QUALIFY)."""
        if block.settled():
            block = self._close(block, index)
        number = Col(-next(self.hidden), "__row", Type("int"))
        window = exp.Window(this=exp.RowNumber(), over="OVER",
                            partition_by=[bind(k, block.env) for k in by])
        if order:
            window.set("order", exp.Order(expressions=self._ordered(order, block.env)))
        block.env[number.id] = window
        block = self._close(block, index, extra=[number])
        kept = exp.LTE(this=copy(block.env[number.id]), expression=exp.Literal.number(count))
        block.where.append(kept)
        block.scope = [c for c in block.scope if c.id != number.id]
        return block

    @staticmethod
    def _ordered(keys: list[OrderKey], env: Env) -> list[exp.Ordered]:
        return [k.node(bind(k.expr, env)) for k in keys]


def _bare_series(plan: Plan | None) -> bool:
    """Is this plan the rows of a series as they are (a range of ints)?"""
    return (plan is not None and plan.base.relation.kind == "series" and not plan.base.lets
            and not plan.base.preds and not plan.stages)


def _series(ref: RelationRef, alias: str, column_name: str) -> exp.Expression:
    """A series' FROM item, read as `alias.column_name`."""
    node = ref.series.copy()
    node.set("alias", exp.TableAlias(this=ident(alias), columns=[ident(column_name)]))
    return node


def _passes_through(query: exp.Expression, cte: exp.CTE) -> bool:
    """Is `query` `SELECT t.a, t.b, ... FROM t` over every column of the CTE `t`, in
    its order, and nothing else?"""
    source = query.args.get("from_")
    if not isinstance(query, exp.Select) or source is None or \
            not isinstance(source.this, exp.Table) or source.this.name != cte.alias or \
            source.this.alias or \
            any(query.args.get(k) for k in ("joins", "where", "group", "having", "order",
                                            "limit", "distinct", "qualify", "with_")):
        return False
    inner = cte.this
    if not isinstance(inner, exp.Select):
        return False
    outputs = [s.alias_or_name for s in inner.selects]
    return len(query.selects) == len(outputs) and all(
        isinstance(s, exp.Column) and s.table == cte.alias and s.name == name
        for s, name in zip(query.selects, outputs))


def _unique_names(cols: list[Col]) -> list[str]:
    names: list[str] = []
    taken: set[str] = set()
    for col in cols:
        name = col.name
        if name in taken and col.qualifier:
            name = f"{col.qualifier}_{col.name}"
        base, n = name, 1
        while name in taken:
            n += 1
            name = f"{base}_{n}"
        taken.add(name)
        names.append(name)
    return names


def _stage_refs(stage) -> set[int]:
    nodes: list[exp.Expression] = []
    if isinstance(stage, JoinStage):
        nodes = [stage.on]
    elif isinstance(stage, ExpandStage):
        nodes = [stage.source]
    elif isinstance(stage, FilterStage):
        nodes = [stage.predicate]
    elif isinstance(stage, AggregateStage):
        nodes = [n for _, n in stage.keys] + [n for _, n in stage.aggregates]
    elif isinstance(stage, (DeriveStage, SelectStage)):
        nodes = [n for _, n in stage.items]
    elif isinstance(stage, SetOpStage):
        return {c.id for c in stage.left}
    elif isinstance(stage, SemiJoinStage):
        nodes = [stage.on]
    elif isinstance(stage, SortStage):
        nodes = [k.expr for k in stage.keys]
    elif isinstance(stage, (TakeStage, DistinctStage)):
        nodes = [*stage.by, *(k.expr for k in stage.order)]
        if isinstance(stage, DistinctStage):
            return _refs_of(nodes) | {c.id for c in stage.columns}
    return _refs_of(nodes)


def _refs_of(nodes: list[exp.Expression]) -> set[int]:
    out: set[int] = set()
    for node in nodes:
        if isinstance(node, ColRef):
            out.add(node.col_id)
        out.update(n.col_id for n in node.find_all(ColRef))
    return out


def model_query(plan: Plan, relations: Relations) -> exp.Select:
    """The model's full query as a SQLGlot tree; run_date()/run_timestamp() as
    `relations` binds the clock (`RelationRef("clock", name)`)."""
    tree = QueryBuilder(plan, relations).build()
    if plan.clock:
        from strata.sqlgen.clock import bind_clock

        tree = bind_clock(tree, relations)
    return tree
