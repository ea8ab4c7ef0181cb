"""Join cardinality: no left row of a `join`/`join_left` without `many` may match two
right rows. Skipped when the right side is proven or pinned unique on the join key.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from dialects import duckdb as duck
from strata.engine.pins.distinct import (
    Key,
    bitmap_distinct,
    bitmap_slot,
    has_duplicates,
    key_bounds,
)
from strata.engine.pins.results import NOTHING_PUBLISHED, CheckLog, PinError, Violation
from strata.engine.pins.trees import (
    WITH_ARG,
    count_star,
    descending,
    grouped_having_many,
    int_literal,
    is_null,
    limited,
    named_table,
    quoted_column,
    relation_columns,
    relation_tree,
    select_from,
)
from strata.plan import (
    AggregateStage,
    Col,
    ColRef,
    DeriveStage,
    FilterStage,
    JoinStage,
    Plan,
    SelectStage,
)
from strata.semantics.types import Type
from strata.sqlgen.build import Relations, bind, model_query
from strata.sqlgen.names import column


@dataclass
class JoinKeys:
    """A join condition split for the fan-out check."""

    keys: list[tuple[exp.Expression, exp.Expression]]  # (left expr, right expr) equalities
    right_filters: list[exp.Expression]  # conjuncts reading only the right side
    left_filters: list[exp.Expression]  # conjuncts reading only the left side
    mixed: list[exp.Expression]  # anything else reading both sides (a range, an `or`)

    def names(self, stage: JoinStage) -> list[str]:
        """The right keys as the author reads them: column names, or the expression."""
        env = {c.id: column(c.name) for c in stage.columns}
        by_id = {c.id: c.name for c in stage.columns}
        return [by_id[r.col_id] if isinstance(r, ColRef) and r.col_id in by_id
                else bind(r, env).sql("duckdb") for _, r in self.keys]

    def plain_columns(self, stage: JoinStage) -> list[str] | None:
        """The right key columns when every right key is a bare column."""
        by_id = {c.id: c.name for c in stage.columns}
        if all(isinstance(r, ColRef) and r.col_id in by_id for _, r in self.keys):
            return [by_id[r.col_id] for _, r in self.keys]
        return None


def split_join(stage: JoinStage) -> JoinKeys:
    """Equalities between a left-side expression and a right-side one are keys;
    conjuncts on one side only filter that side; the rest (a range condition, an `or`
    across both sides) is `mixed`."""
    right_ids = {c.id for c in stage.columns}
    on = stage.on
    conjuncts = list(on.flatten()) if isinstance(on, exp.And) else [on]
    out = JoinKeys([], [], [], [])
    for conj in conjuncts:
        while isinstance(conj, exp.Paren):
            conj = conj.this
        refs = _refs(conj)
        if not refs & right_ids:
            out.left_filters.append(conj)
            continue
        if refs <= right_ids:
            out.right_filters.append(conj)
            continue
        if isinstance(conj, exp.EQ):
            a, b = conj.this, conj.expression
            ra, rb = _refs(a), _refs(b)
            if rb and rb <= right_ids and not ra & right_ids:
                out.keys.append((a, b))
                continue
            if ra and ra <= right_ids and not rb & right_ids:
                out.keys.append((b, a))
                continue
        out.mixed.append(conj)
    return out


def _refs(node: exp.Expression) -> set[int]:
    return {n.col_id for n in node.find_all(ColRef)}


def join_label(plan: Plan, stage: JoinStage) -> str:
    """`join customers as c on customer_id = c.id`: the join as the author wrote it."""
    word = "join_left" if stage.left else "join"
    many = " many" if stage.many else ""
    alias = f" as {stage.alias}" if stage.alias != stage.relation.name else ""
    env = {i: column(n) for i, n in _col_names(plan).items()}
    env.update({c.id: column(c.name, stage.alias) for c in stage.columns})
    on = bind(stage.on, env).sql("duckdb")
    return f"{word}{many} {stage.relation.name}{alias} on {on}"


def _col_names(plan: Plan) -> dict[int, str]:
    """Every column id of the plan -> its name, to show expressions as written."""
    out = {c.id: c.name for c in plan.base.columns}
    out.update({c.id: c.name for c, _ in plan.base.lets})
    for stage in plan.stages:
        if isinstance(stage, JoinStage):
            out.update({c.id: c.name for c in stage.columns})
        elif isinstance(stage, AggregateStage):
            out.update({c.id: c.name for c, _ in [*stage.keys, *stage.aggregates]})
        elif isinstance(stage, (DeriveStage, SelectStage)):
            out.update({c.id: c.name for c, _ in stage.items})
        elif hasattr(stage, "item"):
            out[stage.item.id] = stage.item.name
        elif hasattr(stage, "output"):
            out.update({c.id: c.name for c in stage.output})
    return out


def check_joins(wh, plan: Plan, relations: Relations, relation_sql_of,
                verified_unique, log: CheckLog, unique_rights: set | None = None) -> None:
    """Every `join`/`join_left` without `many`: no left row may match two right rows.

    `verified_unique(ref, columns)` tells whether the right side's uniqueness on exactly
    those columns is pinned and verified (then the check is skipped, and says why).
    `unique_rights`, kept by a run, remembers right sides already found unique on a
    key: the tables a run reads do not change, and many models join the same
    dimension on the same key.
    """
    found: list[Violation] = []
    for index, stage in enumerate(plan.stages):
        if not isinstance(stage, JoinStage):
            continue
        label = join_label(plan, stage)
        if stage.many:
            log.skip(label, "`many`: the join may match several rows")
            continue
        split = split_join(stage)
        plain = split.plain_columns(stage) if split.keys else None
        inline = stage.relation.kind == "inline"  # a sub-pipeline: no pins of its own
        if plain is not None and not inline and verified_unique(stage.relation, plain):
            log.skip(label, f"`{stage.relation.name}` pins unique [{', '.join(plain)}], "
                     "verified")
            continue
        log.ran.append(label)
        right = (exp.Subquery(this=model_query(stage.relation.plan, relations))
                 if inline else relation_tree(relation_sql_of(stage.relation)))
        violation = _fan_out(wh, plan, index, stage, split, label, relations,
                             right, log, unique_rights)
        if violation is not None:
            found.append(violation)
    if found:
        raise PinError(found)


def _fan_out(wh, plan: Plan, index: int, stage: JoinStage, split: JoinKeys, label: str,
             relations: Relations, right: exp.Expression, log: CheckLog,
             unique_rights: set | None = None) -> Violation | None:
    """Unique right keys (after the right-only conditions) cannot fan out: one cheap
    pass on the right side settles most joins. Otherwise the duplicated keys some left
    row matches are the violation; with conditions across both sides besides the keys,
    the join itself is counted per left row."""
    if not split.keys:
        return _fan_out_exact(wh, plan, index, stage, label, relations, right, log)
    env = {c.id: column(c.name, "__r") for c in stage.columns}
    rights = [bind(r, env) for _, r in split.keys]
    conds = [exp.Not(this=is_null(exp.Paren(this=r))) for r in rights]
    conds += [exp.Paren(this=bind(f, env)) for f in split.right_filters]
    where = exp.and_(*conds, copy=False)
    relation = relation_tree(right, "__r")
    # what this run found unique already, by the text of the right keys' query
    settled = log.render(select_from(rights, relation, where))
    if unique_rights is not None and settled in unique_rights:
        return None  # this run found these right keys unique already
    keys_only = exp.Subquery(this=select_from(rights, relation),  # PostgreSQL: an alias
                             alias=exp.TableAlias(this=exp.to_identifier("__k")))
    types = [t for _, t in relation_columns(wh, keys_only, log)]
    key = Key(tuple(rights), log.bitmaps and all(t.upper() in duck.INTEGER_TYPES
                                                  for t in types), null_is_value=False)
    suspect = True
    if key.integer:
        (bounds,) = key_bounds(wh, relation, [key], where, log)
        (total,) = log.rows(wh, select_from([count_star()], relation, where))[0]
        slot = bitmap_slot(key, bounds, total)
        if slot is not None:
            (distinct,) = log.rows(wh, select_from([bitmap_distinct(*slot)], relation, where))[0]
            suspect = distinct != total
        else:
            suspect = has_duplicates(wh, relation, key, where, log)
    else:
        suspect = has_duplicates(wh, relation, key, where, log)
    if not suspect:
        if unique_rights is not None:
            unique_rights.add(settled)
        return None
    if split.mixed:
        return _fan_out_exact(wh, plan, index, stage, label, relations, right, log)
    # Duplicated right keys only matter when some left row matches them.
    names = [f"__k{i}" for i in range(len(rights))]
    n = "__rows"
    left = _left_keys_query(plan, index, split, relations)

    def with_ctes(query: exp.Select) -> exp.Select:
        items = [exp.alias_(r, k, quoted=True, copy=False) for r, k in zip(rights, names)]
        items.append(exp.alias_(count_star(), n, copy=False))
        dupes = grouped_having_many(select_from(items, relation, where), list(rights))
        query.set(WITH_ARG, exp.With(
            expressions=[exp.CTE(this=left, alias=exp.TableAlias(
                this=exp.to_identifier("__left"))),
                exp.CTE(this=dupes, alias=exp.TableAlias(this=exp.to_identifier("__d")))]))
        return query

    def match() -> exp.Expression:
        return exp.and_(*[exp.EQ(this=quoted_column(k, "__l"), expression=quoted_column(k, "__d"))
                          for k in names], copy=False)

    def exists(relation: exp.Expression) -> exp.Exists:
        return exp.Exists(this=select_from([int_literal(1)], relation, match()))

    matched = select_from([exp.Column(this=exp.Star(), table=exp.to_identifier("__d"))],
                      named_table("__d"), exists(named_table("__left", "__l")))
    sample = log.rows(wh, with_ctes(limited(matched, [descending(exp.column(n))])))
    if not sample:
        return None
    counts = exp.Select(expressions=[
        exp.Subquery(this=select_from([count_star()], named_table("__d"), exists(named_table("__left", "__l")))),
        exp.Subquery(this=select_from([count_star()], named_table("__left", "__l"), exists(named_table("__d"))))])
    keys, left_rows = log.rows(wh, with_ctes(counts))[0]
    shown = split.names(stage)
    return Violation(
        "E064", plan.model, f"many-to-one `{label}`", int(left_rows),
        f"{keys} key value(s) of `{stage.alias}` match several rows; {left_rows} left row(s) "
        f"would be repeated",
        tuple(dict(zip([*shown, "rows"], r)) for r in sample), stage.span,
        "fix the data, or write `join many` if the fan-out is intended; " + NOTHING_PUBLISHED)


def _fan_out_exact(wh, plan: Plan, index: int, stage: JoinStage, label: str,
                   relations: Relations, right: exp.Expression, log: CheckLog
                   ) -> Violation | None:
    """Any condition: number the left rows, join them to the right side with the
    model's own condition, and count the left rows matched more than once."""
    right_ids = {c.id for c in stage.columns}
    left_ids = sorted(_refs(stage.on) - right_ids)
    names = _col_names(plan)
    cols = [(Col(-(k + 1), f"__c{k}", Type("null")), colref_of(i)) for k, i in enumerate(left_ids)]
    if not cols:  # the condition reads only the right side: every left row matches alike
        cols = [(Col(-1, "__c0", Type("null")), exp.Literal.number(1))]
    cut = Plan(plan.model, plan.base, [*plan.stages[:index], DeriveStage(cols)],
               [c for c, _ in cols], plan.reads)
    left = model_query(cut, relations)
    env = {i: column(f"__c{k}", "__l") for k, i in enumerate(left_ids)}
    env.update({c.id: column(c.name, "__r") for c in stage.columns})
    on = bind(stage.on, env)
    row = exp.column("__row", "__l")
    numbered = select_from([exp.alias_(exp.Window(this=exp.RowNumber()), "__row", copy=False),
                        exp.Star()], exp.Subquery(this=left, alias=exp.TableAlias(
                            this=exp.to_identifier("__x"))))
    matches = select_from([exp.alias_(row.copy(), "__row", copy=False),
                       exp.alias_(count_star(), "__n", copy=False)], named_table("__left", "__l"))
    matches.set("joins", [exp.Join(this=relation_tree(right, "__r"), on=on)])
    matches = grouped_having_many(matches, [row.copy()])
    shown = [quoted_column(c.name, "__l") for c, _ in cols]
    query = select_from([*shown, exp.column("__n", "__m"), exp.Window(this=count_star())],
                    named_table("__m"))
    query.set("joins", [exp.Join(this=named_table("__left", "__l"), on=exp.EQ(
        this=row.copy(), expression=exp.column("__row", "__m")))])
    query.set(WITH_ARG, exp.With(expressions=[
        exp.CTE(this=numbered, alias=exp.TableAlias(this=exp.to_identifier("__left"))),
        exp.CTE(this=matches, alias=exp.TableAlias(this=exp.to_identifier("__m")))]))
    sample = log.rows(wh, limited(query, [descending(exp.column("__n", "__m"))]))
    if not sample:
        return None
    left_rows = sample[0][-1]
    keys = [names.get(i, f"__c{k}") for k, i in enumerate(left_ids)] or ["row"]
    return Violation(
        "E064", plan.model, f"many-to-one `{label}`", int(left_rows),
        f"{left_rows} left row(s) match several rows of `{stage.alias}`",
        tuple(dict(zip([*keys, "matches"], r[:-1])) for r in sample), stage.span,
        "fix the data, or write `join many` if the fan-out is intended; " + NOTHING_PUBLISHED)


def colref_of(col_id: int) -> ColRef:
    return ColRef(this=col_id)


def _left_keys_query(plan: Plan, index: int, split: JoinKeys, relations: Relations
                     ) -> exp.Select:
    """The left side's join key values, as a query: the plan cut before the join."""
    keys = [(Col(-(i + 1), f"__k{i}", Type("null")), node.copy())
            for i, (node, _) in enumerate(split.keys)]
    filters = [FilterStage(f.copy()) for f in split.left_filters]
    cut = Plan(plan.model, plan.base, [*plan.stages[:index], *filters, DeriveStage(keys)],
               [c for c, _ in keys], plan.reads)
    return model_query(cut, relations)
