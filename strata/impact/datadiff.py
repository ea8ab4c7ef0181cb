"""The data diff: build what a change touches on a branch of its own and compare each
model's snapshot there with the base's published one, or compare two branches or two
runs. Equal content hashes are equal without reading a row; otherwise each pair is read
once: a full outer join on the model's key (its `unique` pin, else its merge keys), or,
for a model without a key, a join of row-hash buckets (counts only). Every statement is
a SQLGlot tree the warehouse's adapter renders for its engine."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from strata.diagnostics import fail
from strata.engine import bookkeeping as B
from strata.engine import history as H
from strata.engine.adapters.base import Relation
from strata.engine.branches import create_branch, ensure_branch, live_snapshots, schema_of
from strata.engine.fingerprints import sha
from strata.engine.warehouse import INTERNAL, Warehouse
from strata.semantics.module import Module


@dataclass
class ModelDiff:
    model: str
    equal: bool
    how: str  # "the same snapshot" | "equal content hash" | "full outer join on the key" | ...
    base_rows: int | None = None
    head_rows: int | None = None
    key: list[str] | None = None
    added: int = 0
    removed: int = 0
    changed: int = 0
    columns: dict[str, int] = field(default_factory=dict)  # column -> changed values
    samples: dict[str, list[dict]] = field(default_factory=dict)  # kind -> rows
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return dict(self.__dict__)


@dataclass
class DataDiff:
    branch: str | None  # the branch the change was built on (None: two branches/runs)
    models: dict[str, ModelDiff] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"branch": self.branch, "notes": self.notes,
                "models": {m: d.to_json() for m, d in self.models.items()}}


# ------------------------------------------------------------------ the module's change
def diff_module(base: Module, head: Module, impact, module_path: str, warehouse: str,
                base_branch: str, max_rows: int, keep_branch: bool,
                clock=None) -> DataDiff:
    """Build `head` on a new branch from `base_branch` (only what is stale there: the
    changed models and what they reach) and compare every model of both with the base
    branch's published snapshots. The branch is dropped afterwards unless kept."""
    from strata.engine.fingerprints import code_fingerprints
    from strata.engine.run import RunOptions, run

    wh = Warehouse.open(warehouse, read_only=True)  # a missing file is not created
    try:
        ensure_branch(wh, base_branch)
        if not live_snapshots(wh, base_branch):
            raise fail("E156", f"branch `{base_branch}` of `{wh.label}` has no published "
                       "snapshot to compare with", None,
                       f"build the base there first: strata run MODULE -o {wh.label}")
    finally:
        wh.close()
    wh = Warehouse.open(warehouse)
    try:
        base_live = live_snapshots(wh, base_branch)
        last = H.last_with_snapshots(wh, base_branch)
        built_from = last.code_fingerprints if last else {}
        branch = "diff_" + sha("diff", module_path, sorted(head.files.items()),
                               sorted(base_live.items()))[:12]
        if branch in {b for b in _branches(wh)}:
            _drop_branch(wh, branch)
        create_branch(wh, branch, base_branch)
    finally:
        wh.close()
    out = DataDiff(branch if keep_branch else None)
    base_fps = code_fingerprints(base)
    behind = sorted(m for m in base.order if m in base_live and built_from.get(m) != base_fps[m])
    if behind:
        out.notes.append(f"branch `{base_branch}` was not built from the base's code for "
                         f"{', '.join(behind)}: their differences include that")
    try:
        run(head, warehouse, RunOptions(branch=branch, only_stale=True,
                                        module_path=module_path, workers=4, clock=clock))
        wh = Warehouse.open(warehouse)
        try:
            head_live = live_snapshots(wh, branch)
            for name in head.order:
                if name in base_live and name in head_live:
                    out.models[name] = compare(wh, name, base_live[name], head_live[name],
                                               key_of(head, name), max_rows)
                elif name in head_live:
                    rec = H.records(wh, [head_live[name]]).get(head_live[name])
                    out.models[name] = ModelDiff(name, False, "a new model", None,
                                                 rec.row_count if rec else None)
        finally:
            wh.close()
    finally:
        if not keep_branch:
            wh = Warehouse.open(warehouse)
            try:
                _drop_branch(wh, branch)
            finally:
                wh.close()
        else:
            out.notes.append(f"kept branch `{branch}` (strata run ... --branch {branch})")
    return out


def key_of(module: Module, model: str) -> list[str] | None:
    """The columns a model's rows are told apart by: its `unique` pin, else its merge
    keys; None for a model without a key."""
    if model not in module.models or module.models[model].plan is None:
        return None
    plan = module.plan(model)
    for pin in plan.pins:
        if pin.kind == "unique" and pin.columns:
            return list(pin.columns)
    if plan.incremental is not None and plan.incremental.merge_keys:
        return list(plan.incremental.merge_keys)
    return None


def _branches(wh: Warehouse) -> list[str]:
    from strata.engine.branches import branch_names

    return branch_names(wh)


def _drop_branch(wh: Warehouse, branch: str) -> None:
    """The diff's branch gone: its views, its schema and its row in the branch list (its
    history entries stay, as every entry does; its snapshots are gc's once unread)."""
    from strata.engine.staleness import drop_views

    views = live_snapshots(wh, branch)
    with wh.transaction():
        drop_views(wh, branch, views)
        wh.run(exp.Drop(tables=[exp.Table(db=_id(schema_of(wh, branch)))], kind="SCHEMA",
                        exists=True))
        wh.adapter.delete_rows(B.BRANCHES.relation, exp.EQ(
            this=B.col("name"), expression=exp.Literal.string(branch)))


# ------------------------------------------------------------------ branches, runs
def diff_branches(warehouse: str, runs: tuple[str, str] | None,
                  branches: tuple[str, str] | None, max_rows: int) -> DataDiff:
    """The data diff between two branches' live snapshots, or two runs' snapshots."""
    wh = Warehouse.open(warehouse, read_only=True)
    try:
        if runs:
            first, second = (H.find(wh, r) for r in runs)
            left, right = first.snapshots, second.snapshots
            if not left or not right:
                raise fail("E156", "a run without snapshots (a failed run) has no data to "
                           "compare", None, "`strata history -o WAREHOUSE` lists the runs")
        else:
            for b in branches:
                ensure_branch(wh, b)
            left, right = (live_snapshots(wh, b) for b in branches)
        keys = _registered_keys(wh, right)
        out = DataDiff(None)
        for model in sorted(set(left) | set(right)):
            if model not in left or model not in right:
                out.models[model] = ModelDiff(model, False, "only in the second" if model in right
                                              else "only in the first")
                continue
            out.models[model] = compare(wh, model, left[model], right[model],
                                        keys.get(model), max_rows)
        return out
    finally:
        wh.close()


def _registered_keys(wh: Warehouse, snaps: dict[str, str]) -> dict[str, list[str]]:
    """A model's key as its newest run recorded it: the `pin unique [..]` among the
    checks it ran or skipped (history entry details). None said: compared by row hash."""
    keys: dict[str, list[str]] = {}
    prefix = "pin unique ["
    for entry in H.entries(wh):
        for model, said in entry.details.items():
            if model not in snaps or model in keys or not isinstance(said, dict):
                continue
            checks = [*(said.get("checks") or []),
                      *(c.get("check", "") for c in said.get("skipped_checks") or []
                        if isinstance(c, dict))]
            for text in checks:
                if isinstance(text, str) and text.startswith(prefix) and text.endswith("]"):
                    keys[model] = [c.strip() for c in text[len(prefix):-1].split(",")]
                    break
    return keys


# ------------------------------------------------------------------ one pair
def compare(wh: Warehouse, model: str, base_snap: str, head_snap: str,
            key: list[str] | None, max_rows: int) -> ModelDiff:
    if base_snap == head_snap:
        return ModelDiff(model, True, "the same snapshot: not read")
    recs = H.records(wh, [base_snap, head_snap])
    a, b = recs.get(base_snap), recs.get(head_snap)
    if a is not None and b is not None and a.content_hash == b.content_hash:
        return ModelDiff(model, True, "equal content hash: not read", a.row_count, b.row_count)
    acols = {c[0]: c[1] for c in (a.columns if a else wh.adapter.columns(Relation(INTERNAL, base_snap)))}
    bcols = {c[0]: c[1] for c in (b.columns if b else wh.adapter.columns(Relation(INTERNAL, head_snap)))}
    diff = ModelDiff(model, False, "", a.row_count if a else None, b.row_count if b else None)
    gone = [c for c in acols if c not in bcols]
    new = [c for c in bcols if c not in acols]
    retyped = [c for c in acols if c in bcols and acols[c] != bcols[c]]
    if gone:
        diff.notes.append("columns only in the base: " + ", ".join(gone))
    if new:
        diff.notes.append("columns only in the head: " + ", ".join(new))
    if retyped:
        diff.notes.append("columns of another type (values not compared): " + ", ".join(
            f"{c} {acols[c]} -> {bcols[c]}" for c in retyped))
    common = [c for c in acols if c in bcols and c not in retyped]
    base_rel, head_rel = Relation(INTERNAL, base_snap), Relation(INTERNAL, head_snap)
    if key and all(k in common for k in key):
        diff.key = list(key)
        diff.how = "full outer join on the key"
        _by_key(wh, diff, base_rel, head_rel, key, [c for c in common if c not in key], max_rows)
    else:
        diff.how = "row-hash buckets (no key: counts only)"
        if key:
            diff.notes.append(f"key [{', '.join(key)}] is not in both: compared by row hash")
        _by_hash(wh, diff, base_rel, head_rel, common)
    diff.equal = not (diff.added or diff.removed or diff.changed or gone or new or retyped)
    return diff


def _id(name: str) -> exp.Identifier:
    return exp.to_identifier(name, quoted=True)


def _col(name: str, table: str) -> exp.Column:
    return exp.column(_id(name), table=_id(table))


def _side(rel: Relation, columns: list[str]) -> exp.Select:
    return exp.select(*(_col(c, "t") for c in columns),
                      exp.alias_(exp.Literal.number(1), "__in", quoted=True)).from_(rel.table("t"))


def _by_key(wh: Warehouse, diff: ModelDiff, base_rel: Relation, head_rel: Relation,
            key: list[str], values: list[str], max_rows: int) -> None:
    """One pass: a full outer join on the key; each row classified (removed, added,
    changed, same), the rows that differ numbered per kind so that the first
    `max_rows` of each come back with the counts (window sums over the differing rows)."""
    columns = [*key, *values]
    on = exp.and_(*(exp.EQ(this=_col(k, "a"), expression=_col(k, "b")) for k in key))
    absent_b = exp.Is(this=_col("__in", "b"), expression=exp.Null())
    absent_a = exp.Is(this=_col("__in", "a"), expression=exp.Null())
    distinct = [exp.NullSafeNEQ(this=_col(c, "a"), expression=_col(c, "b")) for c in values]
    kind = exp.Case(ifs=[exp.If(this=absent_b, true=exp.Literal.string("removed")),
                         exp.If(this=absent_a, true=exp.Literal.string("added"))]
                    + ([exp.If(this=exp.or_(*distinct), true=exp.Literal.string("changed"))]
                       if distinct else []),
                    default=exp.Literal.string("same"))
    both = exp.and_(exp.Not(this=absent_a), exp.Not(this=absent_b))
    flags = [exp.alias_(exp.Case(ifs=[exp.If(this=exp.and_(both, d), true=exp.Literal.number(1))],
                                 default=exp.Literal.number(0)), f"__d{i}", quoted=True)
             for i, d in enumerate(distinct)]
    order = [exp.alias_(exp.Coalesce(this=_col(k, "a"), expressions=[_col(k, "b")]),
                        f"__k{i}", quoted=True) for i, k in enumerate(key)]
    sides = [exp.alias_(_col(c, side), f"__{side}{i}", quoted=True)
             for side in ("a", "b") for i, c in enumerate(columns)]
    joined = exp.select(exp.alias_(kind, "__kind", quoted=True), *flags, *order, *sides).from_(
        exp.Subquery(this=_side(base_rel, columns), alias=exp.TableAlias(this=_id("a")))).join(
        exp.Subquery(this=_side(head_rel, columns), alias=exp.TableAlias(this=_id("b"))),
        on=on, join_type="FULL OUTER")
    kind_col = exp.column(_id("__kind"))
    windows = [
        exp.alias_(exp.Window(this=exp.RowNumber(), partition_by=[kind_col.copy()],
                              order=exp.Order(expressions=[exp.Ordered(this=exp.column(_id(f"__k{i}")))
                                                           for i in range(len(key))])),
                   "__rn", quoted=True),
        exp.alias_(exp.Window(this=exp.Count(this=exp.Star()), partition_by=[kind_col.copy()]),
                   "__n", quoted=True),
        *(exp.alias_(exp.Window(this=exp.Sum(this=exp.column(_id(f"__d{i}")))), f"__s{i}",
                     quoted=True) for i in range(len(values)))]
    differing = exp.select(exp.column(_id("__kind")),
                           *(exp.column(_id(f"__{s}{i}")) for s in ("a", "b")
                             for i in range(len(columns))), *windows).from_(
        exp.Subquery(this=joined, alias=exp.TableAlias(this=_id("j")))).where(
        exp.NEQ(this=kind_col.copy(), expression=exp.Literal.string("same")))
    query = exp.select(exp.Star()).from_(
        exp.Subquery(this=differing, alias=exp.TableAlias(this=_id("d")))).where(
        exp.LTE(this=exp.column(_id("__rn")), expression=exp.Literal.number(max(1, max_rows))))
    rows = wh.rows(query)
    width = len(columns)
    diff.columns = {c: 0 for c in values}
    for row in rows:
        kind_name = row[0]
        a_vals, b_vals = row[1:1 + width], row[1 + width:1 + 2 * width]
        rn, n = row[1 + 2 * width], row[2 + 2 * width]
        sums = row[3 + 2 * width:]
        setattr(diff, kind_name, int(n))
        for c, s in zip(values, sums):
            diff.columns[c] = int(s or 0)
        if rn <= max_rows:
            if kind_name == "removed":
                sample = dict(zip(columns, map(_shown, a_vals)))
            elif kind_name == "added":
                sample = dict(zip(columns, map(_shown, b_vals)))
            else:
                sample = {c: _shown(x) if c in key or x == y else f"{_shown(x)} -> {_shown(y)}"
                          for c, x, y in zip(columns, a_vals, b_vals)}
            diff.samples.setdefault(kind_name, []).append(sample)
    if diff.removed + diff.added + diff.changed > 0 and max_rows:
        shown = sum(len(v) for v in diff.samples.values())
        diff.notes.append(f"samples: the first {shown} differing rows by key "
                          f"(at most {max_rows} of each kind; --max-rows)")


def _shown(value) -> str:
    return "NULL" if value is None else str(value)


def _by_hash(wh: Warehouse, diff: ModelDiff, base_rel: Relation, head_rel: Relation,
             columns: list[str]) -> None:
    """Keyless: rows counted per row hash on each side; a full outer join of the two
    bucket lists gives the rows only in the base and only in the head."""
    def buckets(rel: Relation) -> exp.Select:
        return exp.select(exp.alias_(wh.adapter.row_hash_expr(columns), "h", quoted=True),
                          exp.alias_(exp.Count(this=exp.Star()), "n", quoted=True)).from_(
            rel.table()).group_by(exp.Literal.number(1))

    def n(side: str) -> exp.Expression:
        return exp.Coalesce(this=_col("n", side), expressions=[exp.Literal.number(0)])

    def surplus(x: str, y: str) -> exp.Expression:
        return exp.Sum(this=exp.Case(ifs=[exp.If(this=exp.GT(this=n(x), expression=n(y)),
                                                 true=exp.Sub(this=n(x), expression=n(y)))],
                                     default=exp.Literal.number(0)))

    query = exp.select(surplus("a", "b"), surplus("b", "a")).from_(
        exp.Subquery(this=buckets(base_rel), alias=exp.TableAlias(this=_id("a")))).join(
        exp.Subquery(this=buckets(head_rel), alias=exp.TableAlias(this=_id("b"))),
        on=exp.EQ(this=_col("h", "a"), expression=_col("h", "b")), join_type="FULL OUTER")
    removed, added = wh.rows(query)[0]
    diff.removed, diff.added = int(removed or 0), int(added or 0)
