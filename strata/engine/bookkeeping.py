"""The warehouse's own tables as SQLGlot trees: one builder per bookkeeping statement,
engine-free, executed through an adapter (`strata.engine.adapters`), which renders
each tree for its engine.

Phase 1 of issue 18 (see docs/design/engines.md §3): the statements that
`history.py`, `branches.py`, `gc.py` and `warehouse.py` write as DuckDB text today, as
trees, checked on DuckDB, PostgreSQL and Spark. Nothing calls this module yet; the
next phase moves those modules onto it.

The layout is the one `warehouse.py` creates (layout 1) with one change every engine
needs (layout 2, proposed): a snapshot's collection by gc is an appended row of
`collections` instead of an UPDATE of `snapshots` (Spark tables take no UPDATE), so
every bookkeeping table is append-only. Keys are PRIMARY KEY and columns NOT NULL
where the engine keeps constraints (`adapter.constraints`); on Spark uniqueness rests
on the writer lock.

Registry rows count only once their run's history entry exists (`visible`): on Spark,
where publication has no transaction, the history entry is the commit point, and the
registry rows written just before it must stay invisible if the run dies between.
On DuckDB and PostgreSQL the rows and the entry commit together, so the condition
always holds there.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from sqlglot import exp

from strata.engine.adapters.base import INTERNAL, Adapter, Relation

LAYOUT_VERSION = 2
PUBLISHING_KINDS = ("run", "backfill")  # history kinds whose entry registers snapshots


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # a SQLGlot type name, rendered per engine (TEXT is STRING on Spark)
    required: bool = True


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[Column, ...]
    key: tuple[str, ...] = ()

    @property
    def relation(self) -> Relation:
        return Relation(INTERNAL, self.name)

    def type_of(self, column: str) -> str:
        return next(c.type for c in self.columns if c.name == column)


def _cols(*spec: str) -> tuple[Column, ...]:
    """`name TYPE` or `name TYPE?` (the ? makes it nullable)."""
    out = []
    for item in spec:
        name, typ = item.split()
        out.append(Column(name, typ.rstrip("?"), not typ.endswith("?")))
    return tuple(out)


META = Table("meta", _cols("key TEXT", "value TEXT?"), ("key",))
HISTORY = Table("history", _cols("seq BIGINT", "id TEXT", "kind TEXT", "branch TEXT",
                                 "started_at TIMESTAMP", "entry TEXT"), ("seq",))
SNAPSHOTS = Table("snapshots", _cols(
    "name TEXT", "model TEXT", "run_id TEXT", "kind TEXT", "content_hash TEXT",
    "row_count BIGINT", "hash_sum TEXT", "hash_xor TEXT", "columns TEXT", "code_fp TEXT",
    "parts TEXT", "created_at TIMESTAMP"), ("name",))
BRANCHES = Table("branches", _cols("name TEXT", "schema_name TEXT", "created_at TIMESTAMP",
                                   "from_branch TEXT?", "from_seq BIGINT?"), ("name",))
COLLECTIONS = Table("collections", _cols("name TEXT", "collected_at TIMESTAMP",
                                         "collected_by TEXT"))
TABLES = (META, HISTORY, SNAPSHOTS, BRANCHES, COLLECTIONS)


# ---------------------------------------------------------------- small nodes
def _id(name: str) -> exp.Identifier:
    return exp.to_identifier(name, quoted=True)


def col(name: str, table: str | None = None) -> exp.Column:
    return exp.Column(this=_id(name), table=_id(table) if table else None)


def value(v, typ: str | None = None) -> exp.Expression:
    """A Python value as a literal node; a timestamp or date (or its ISO text for a
    TIMESTAMP column) cast, so every engine reads it as one."""
    if isinstance(v, datetime) or (typ == "TIMESTAMP" and isinstance(v, str)):
        text = v.isoformat(sep=" ") if isinstance(v, datetime) else v
        return exp.Cast(this=exp.Literal.string(text), to=exp.DataType.build("TIMESTAMP"))
    if isinstance(v, date):
        return exp.Cast(this=exp.Literal.string(v.isoformat()), to=exp.DataType.build("DATE"))
    return exp.convert(v)


def _from(query: exp.Select, relation: exp.Expression) -> exp.Select:
    query.set("from_" if "from_" in exp.Select.arg_types else "from", exp.From(this=relation))
    return query


def _eq(a: exp.Expression, b: exp.Expression) -> exp.EQ:
    return exp.EQ(this=a, expression=b)


# ---------------------------------------------------------------- layout
def create_table(table: Table, adapter: Adapter) -> exp.Create:
    """CREATE TABLE IF NOT EXISTS with the table's columns; NOT NULL and the key where
    the engine keeps constraints; the engine's table properties (Spark: Parquet)."""
    defs: list[exp.Expression] = []
    for c in table.columns:
        constraints = ([exp.ColumnConstraint(kind=exp.NotNullColumnConstraint())]
                       if c.required and adapter.constraints else None)
        defs.append(exp.ColumnDef(this=_id(c.name), kind=exp.DataType.build(c.type),
                                  constraints=constraints))
    if table.key and adapter.constraints:
        defs.append(exp.PrimaryKey(expressions=[_id(k) for k in table.key]))
    properties = (exp.Properties(expressions=[p.copy() for p in adapter.table_properties])
                  if adapter.table_properties else None)
    return exp.Create(this=exp.Schema(this=table.relation.table(), expressions=defs),
                      kind="TABLE", exists=True, properties=properties)


def setup(adapter: Adapter) -> None:
    """The internal schema, its tables and the layout version (written once)."""
    adapter.create_schema(INTERNAL)
    for table in TABLES:
        adapter.execute(create_table(table, adapter))
    if not adapter.rows(layout_version()):
        adapter.execute(insert(META, [{"key": "schema_version",
                                       "value": str(LAYOUT_VERSION)}]))


def layout_version() -> exp.Select:
    query = exp.Select(expressions=[col("value")])
    return _from(query, META.relation.table()).where(
        _eq(col("key"), exp.Literal.string("schema_version")))


# ---------------------------------------------------------------- writing
def insert(table: Table, rows: list[dict]) -> exp.Insert:
    """INSERT INTO table (columns) VALUES (...), ...: every column of the table, in its
    order; a key missing from a row is NULL."""
    names = [c.name for c in table.columns]
    tuples = [exp.Tuple(expressions=[value(row.get(n), table.type_of(n)) for n in names])
              for row in rows]
    target = exp.Schema(this=table.relation.table(), expressions=[_id(n) for n in names])
    return exp.Insert(this=target, expression=exp.Values(expressions=tuples))


def next_seq() -> exp.Select:
    """The next history sequence number (under the writer lock: no one else appends)."""
    top = exp.Coalesce(this=exp.Max(this=col("seq")), expressions=[exp.Literal.number(0)])
    return _from(exp.Select(expressions=[exp.Add(this=top, expression=exp.Literal.number(1))]),
                 HISTORY.relation.table())


# ---------------------------------------------------------------- reading history
def json_text(adapter: Adapter, column: exp.Expression, *path: str) -> exp.Expression:
    """The text at `$.path...` of a JSON document held as text (an object's JSON
    text for an object). SQLGlot spells it per engine: DuckDB `->>`, PostgreSQL
    JSON_EXTRACT_PATH_TEXT, Spark GET_JSON_OBJECT."""
    json_path = exp.JSONPath(expressions=[exp.JSONPathRoot(),
                                          *[exp.JSONPathKey(this=p) for p in path]])
    return exp.JSONExtractScalar(this=adapter.json_document(column), expression=json_path)


def history(*, branch: str | None = None, run_id: str | None = None,
            id_prefix: str | None = None, kinds: tuple[str, ...] = (),
            columns: tuple[exp.Expression, ...] | None = None,
            newest_first: bool = True, limit: int | None = None) -> exp.Select:
    """Entries (entry, seq by default), filtered, in sequence order."""
    items = list(columns) if columns is not None else [col("entry"), col("seq")]
    conditions: list[exp.Expression] = []
    if branch is not None:
        conditions.append(_eq(col("branch"), exp.Literal.string(branch)))
    if run_id is not None:
        conditions.append(_eq(col("id"), exp.Literal.string(run_id)))
    if id_prefix is not None:
        conditions.append(exp.StartsWith(this=col("id"),
                                         expression=exp.Literal.string(id_prefix)))
    if kinds:
        conditions.append(exp.In(this=col("kind"),
                                 expressions=[exp.Literal.string(k) for k in kinds]))
    query = _from(exp.Select(expressions=items), HISTORY.relation.table())
    if conditions:
        query = query.where(exp.and_(*conditions, copy=False), copy=False)
    query = query.order_by(exp.Ordered(this=col("seq"), desc=newest_first), copy=False)
    return query.limit(limit, copy=False) if limit is not None else query


def history_read(*, kinds: tuple[str, ...], page: int, verdicts: str,
                 branch: str | None, main: str) -> exp.Union:
    """One statement for what a command reads of the history before it writes: every
    entry of kind `verdicts`, and each branch's newest `page` entries of `kinds`
    (`branch`'s only, or those of `main` and of every branch the branch list holds),
    as (entry, seq, started_at), unordered:

        SELECT entry, seq, started_at FROM history WHERE kind = 'quarantine'
        UNION ALL
        SELECT entry, seq, started_at FROM (
          SELECT entry, seq, started_at, ROW_NUMBER() OVER (PARTITION BY branch
            ORDER BY seq DESC) AS rn FROM history
          WHERE kind IN (...) AND (branch = 'main' OR branch IN (SELECT name FROM branches))
        ) AS p WHERE rn <= 8

    (on Spark each statement is a job: this was three, one per question)."""
    items = ("entry", "seq", "started_at")
    of_kind = _from(exp.Select(expressions=[col(c) for c in items]),
                    HISTORY.relation.table()).where(
        _eq(col("kind"), exp.Literal.string(verdicts)), copy=False)
    if branch is not None:
        mine: exp.Expression = _eq(col("branch"), exp.Literal.string(branch))
    else:
        listed = _from(exp.Select(expressions=[col("name")]), BRANCHES.relation.table())
        mine = exp.paren(exp.or_(_eq(col("branch"), exp.Literal.string(main)),
                                 exp.In(this=col("branch"), query=exp.Subquery(this=listed)),
                                 copy=False), copy=False)
    rank = exp.Window(this=exp.RowNumber(), partition_by=[col("branch")],
                      order=exp.Order(expressions=[exp.Ordered(this=col("seq"), desc=True)]))
    ranked = _from(exp.Select(expressions=[*(col(c) for c in items),
                                           exp.alias_(rank, "rn", quoted=True)]),
                   HISTORY.relation.table()).where(exp.and_(
                       exp.In(this=col("kind"),
                              expressions=[exp.Literal.string(k) for k in kinds]),
                       mine, copy=False), copy=False)
    newest = _from(exp.Select(expressions=[col(c) for c in items]),
                   exp.Subquery(this=ranked, alias=exp.TableAlias(this=_id("p")))).where(
        exp.LTE(this=col("rn"), expression=exp.Literal.number(page)), copy=False)
    return exp.union(of_kind, newest, distinct=False)


def below_seq(seq: int) -> exp.LT:
    """seq < N: the next page of a newest-first read."""
    return exp.LT(this=col("seq"), expression=exp.Literal.number(seq))


# ---------------------------------------------------------------- the registry
def visible() -> exp.Expression:
    """A registry row (aliased `s`) whose run's history entry exists (module doc)."""
    published = history(columns=(col("id"),), kinds=PUBLISHING_KINDS)
    published.set("order", None)
    return exp.In(this=col("run_id", "s"), query=exp.Subquery(this=published))


def registry(*, names: list[str] | None = None, model: str | None = None,
             content_hash: str | None = None, uncollected: bool = False,
             columns: tuple[str, ...] | None = None, where: exp.Expression | None = None,
             oldest_first: bool = False) -> exp.Select:
    """Registry rows (every column of `snapshots`, and `collected_at`/`collected_by`
    from `collections`: NULL for a live snapshot), newest first (by creation, then
    name), only visible ones. `where`: one more condition over `s` (an adapter's
    in_list)."""
    wanted = columns or tuple(c.name for c in SNAPSHOTS.columns)
    items: list[exp.Expression] = [col(n, "s") for n in wanted]
    items += [col("collected_at", "c"), col("collected_by", "c")]
    conditions = [visible()]
    if names is not None:
        conditions.append(exp.In(this=col("name", "s"),
                                 expressions=[exp.Literal.string(n) for n in names]))
    if model is not None:
        conditions.append(_eq(col("model", "s"), exp.Literal.string(model)))
    if content_hash is not None:
        conditions.append(_eq(col("content_hash", "s"), exp.Literal.string(content_hash)))
    if uncollected:
        conditions.append(exp.Is(this=col("name", "c"), expression=exp.Null()))
    if where is not None:
        conditions.append(where)
    query = _from(exp.Select(expressions=items), SNAPSHOTS.relation.table("s"))
    query = query.join(COLLECTIONS.relation.table("c"), on=_eq(col("name", "c"),
                                                                col("name", "s")),
                       join_type="LEFT", copy=False)
    query = query.where(exp.and_(*conditions, copy=False), copy=False)
    return query.order_by(exp.Ordered(this=col("created_at", "s"), desc=not oldest_first),
                          exp.Ordered(this=col("name", "s")), copy=False)


def collect(names: list[str], at: str, by: str) -> exp.Insert:
    """gc's collection of snapshots: appended rows, never an UPDATE."""
    return insert(COLLECTIONS, [{"name": n, "collected_at": at, "collected_by": by}
                                for n in names])
