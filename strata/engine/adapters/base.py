"""One engine behind one small interface: what a run needs from a warehouse.

The run decides *what* to build (selection, staleness, reuse by content, merges,
pins, history); an adapter decides *how* on its engine: connecting, the one-writer
lock, the publication transaction, and the handful of statements below, each built
here as a SQLGlot tree and rendered by the engine's `dialects/` file. What differs
between engines is data on the subclass (its dialect, the per-row hash function, the
type a sum of 64-bit hashes needs, whether DDL is transactional) plus the three
things no SQL can say: how to connect, how to lock and how to list the catalogue.

    adapter = open_adapter(parse_location("postgresql://u@%2Ftmp/db"))  # locked
    adapter.create_table_as(Relation(INTERNAL, "snap_1_m"), query)
    adapter.row_hash(Relation(INTERNAL, "snap_1_m").table(), ["id", "amount"])
    with adapter.transaction():          # Spark: no transaction (see `transactional`)
        adapter.create_view(Relation("main", "v_m"), select_all(...))
    adapter.close()                      # releases the lock
"""

from __future__ import annotations

import os
import re
import socket
import sys
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sqlglot import exp

from dialects import routines
from dialects.base import Dialect
from strata.diagnostics import StrataError, fail
from strata.engine.fingerprints import EMPTY, RowHash
from strata.engine.markers import FolderState
from strata.textsafe import escape_unprintable, first_line

INTERNAL = routines.SCHEMA  # "strata_internal": snapshots, bookkeeping, Strata's functions
LOCK_HINT = "wait for it to finish, or raise STRATA_LOCK_TIMEOUT (seconds) to wait longer"


@dataclass(frozen=True)
class Relation:
    """A table or view by schema and name, both quoted wherever they are rendered."""

    schema: str
    name: str

    def table(self, alias: str | None = None) -> exp.Table:
        node = exp.Table(this=exp.to_identifier(self.name, quoted=True),
                         db=exp.to_identifier(self.schema, quoted=True))
        if alias:
            node.set("alias", exp.TableAlias(this=exp.to_identifier(alias, quoted=True)))
        return node


@dataclass(frozen=True)
class Hashed:
    """A table built with its content hash (`Adapter.build_table_hashed`): what a run
    records of a new snapshot, without a statement of its own to hash it."""

    rows: int
    columns: list[tuple[str, str]]  # (column, the engine's type name), as the catalogue has them
    hash: RowHash

    @property
    def settled(self) -> tuple[list[tuple[str, str]], RowHash]:
        """(columns, row hash): what `Adapter.hash_tables` gives for the table."""
        return self.columns, self.hash


def select_all(relation: Relation) -> exp.Select:
    """SELECT * FROM relation: what a live view and a snapshot view say."""
    return exp.select(exp.Star()).from_(relation.table())


def owner_text() -> str:
    """Who holds a lock, as its error shows it: this process and machine."""
    return f"pid {os.getpid()} on {socket.gethostname()}"


def say_waiting(what: str, timeout: float) -> None:
    """The one line a wait for another writer prints, on stderr (escaped: a location
    is user text)."""
    print(escape_unprintable(f"waiting for the warehouse lock on {what} "
                             f"(up to {timeout:g} s)..."), file=sys.stderr)


def wait_for(attempt: Callable[[], bool], timeout: float, what: str,
             holder: Callable[[], str | None]) -> None:
    """Call `attempt` until it takes the lock or `timeout` seconds pass; then E075
    naming the location and, when the engine can tell, who holds it."""
    deadline = time.monotonic() + timeout
    said = False
    while not attempt():
        if time.monotonic() >= deadline:
            who = holder()
            raise fail("E075", f"the warehouse `{what}` is in use by another process"
                       + (f" ({who})" if who else ""), None, LOCK_HINT)
        if not said:
            say_waiting(what, timeout)
            said = True
        time.sleep(0.2)


# ---------------------------------------------------------------- bookkeeping trees
def count_star() -> exp.Count:
    return exp.Count(this=exp.Star())


def as_text(node: exp.Expression) -> exp.Cast:
    return exp.Cast(this=node, to=exp.DataType.build("TEXT"))


def row_hash_select(row: exp.Expression, wide: exp.DataType | None,
                    relation: exp.Expression | None = None) -> exp.Select:
    """count, sum and xor of the per-row hash `row` (SPEC §3.2): an order-independent
    content hash whose parts add up, so a layered snapshot's hash is its layers'. The
    sum is taken in `wide` (64-bit hashes overflow BIGINT; None: the engine's SUM of
    BIGINT is wide already) and both sums are returned as text, which every engine and
    driver hands back exactly."""
    total = exp.Coalesce(this=exp.Sum(this=row if wide is None else exp.Cast(
        this=row, to=wide.copy())), expressions=[exp.Literal.number(0)])
    xor = exp.Coalesce(this=exp.Anonymous(this="bit_xor", expressions=[row.copy()]),
                       expressions=[exp.Literal.number(0)])
    query = exp.select(count_star(), as_text(total), as_text(xor))
    return query.from_(relation) if relation is not None else query


def quoted_columns(columns: list[str]) -> list[exp.Column]:
    return [exp.column(exp.to_identifier(c, quoted=True)) for c in columns]


# ---------------------------------------------------------------- the interface
# the record a run with nothing to do leaves in an own folder (strata.engine.run.quiet)
NOOP_RECORD = "strata_noop.json"


class Adapter(ABC):
    """A connection to one warehouse, holding its writer lock when opened to write.

    Class attributes are the engine's data; a fourth engine sets them and implements
    the abstract methods, nothing else."""

    dialect: Dialect
    # Strata's pip extra that installs this engine's Python client ('' for none)
    extra: str = ""
    # Do the registry rows, the view switches and the history entry commit in one
    # transaction? False (Spark): the history entry is the commit point; see
    # strata/engine/publication.py and docs/design/engines.md §5.
    transactional: bool = True
    # the type the sum of 64-bit row hashes is taken in
    hash_sum_type: str = "DECIMAL(38, 0)"
    # Is the engine's SUM of BIGINT that type already, exactly? Then no row's hash is
    # cast (PostgreSQL: SUM(bigint) is NUMERIC, summed in 128-bit integers; a cast to
    # NUMERIC a row made a 1e6-row fingerprint about a sixth slower)
    sums_bigint_exactly: bool = False
    # what a CREATE TABLE AS adds (Spark: USING PARQUET)
    table_properties: tuple[exp.Expression, ...] = ()
    # DuckDB's bitstring_agg/bit_count, for the one-scan uniqueness check of integer
    # keys (strata.engine.pins.results: CheckLog.bitmaps); others group by the key
    bitmap_distinct: bool = False
    # Does the engine keep PRIMARY KEY / NOT NULL on bookkeeping tables? (Spark: no)
    constraints: bool = True

    def __init__(self, where: str):
        self.where = where  # the redacted location, for every message
        self.locked = False
        # the functions Strata owns declared in this session (dialects/routines.py),
        # shared with the adapter's lanes
        self.routines_made = routines.Made()
        # the folder the whole warehouse lives in, held by this process alone, and its
        # state before the engine started (strata.engine.run.quiet); None elsewhere
        self.own_folder: Path | None = None
        self.folder_before: FolderState | None = None
        # called once the engine stopped, the folder still held (`when_stopped`)
        self.stopped_calls: list[Callable[[], None]] = []

    @classmethod
    @contextmanager
    def held_folder(cls, location, lock_timeout: float) -> Iterator[Path | None]:
        """The folder the whole warehouse at `location` lives in, held against other
        Strata processes without starting the engine; None where there is none."""
        yield None

    def when_stopped(self, call: Callable[[], None]) -> None:
        """Call `call` after the engine stopped and before `own_folder` is released
        (nothing where there is no own folder)."""
        if self.own_folder is not None:
            self.stopped_calls.append(call)

    @staticmethod
    def not_state(rel: str) -> bool:
        """Files in `own_folder` that say nothing of the warehouse (a lock, a log)."""
        return False

    @staticmethod
    def written_by_engine(rel: str) -> bool:
        """Files in `own_folder` the engine writes while it runs, even for a read
        (a catalogue's database files)."""
        return False

    def table_folder(self, relation: exp.Expression) -> Path | None:
        """The local folder holding every file of a source table, where the engine
        reads a table's files from one (None by default)."""
        return None

    # ------------------------------------------------------------ connection and lock
    @abstractmethod
    def close(self) -> None:
        """Release the lock (if held) and the connection."""

    @abstractmethod
    def acquire_lock(self, timeout: float) -> None:
        """Become the one writer, waiting up to `timeout` seconds; E075 otherwise."""

    # ------------------------------------------------------------ transactions
    def begin(self) -> None:
        self.execute(exp.Transaction())

    def commit(self) -> None:
        self.execute(exp.Commit())

    def rollback(self) -> None:
        self.execute(exp.Rollback())

    def publish_atomically(self, body: Callable[[], None], timeout: float,
                           new_tables: bool = True) -> None:
        """Run publication's `body` in one transaction. `timeout` (seconds) bounds how
        long an engine whose readers can hold publication back waits for them
        (PostgreSQL: E140 past it; `new_tables`: does a view switch to a table this
        run made?); nothing to wait for here (DuckDB: no other process has the file
        open while this one writes it)."""
        with self.transaction():
            body()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One transaction around the block: all of it or nothing. An engine without
        transactions (transactional=False) runs the block as it comes."""
        if not self.transactional:
            yield
            return
        self.begin()
        try:
            yield
        except BaseException:
            try:
                self.rollback()
            except self.engine_errors():
                pass  # the failure ended the transaction already: its error is the one
            raise
        self.commit()

    # ------------------------------------------------------------ statements
    def render(self, tree: exp.Expression) -> str:
        """The statement in the engine's SQL; the functions Strata owns that it calls
        are declared first (once a session), so whatever runs the text finds them."""
        return self.with_routines(self.dialect.render(tree, pretty=False))

    def with_routines(self, text: str) -> str:
        """`text`, once each function Strata owns that it calls exists here."""
        if self.dialect.routines is not None:
            self.routines_made.ensure(text, self.rows_text)
        return text

    @abstractmethod
    def execute(self, tree: exp.Expression) -> None:
        """Run one statement for its effect."""

    @abstractmethod
    def rows(self, tree: exp.Expression) -> list[tuple]:
        """Run one query; its rows as Python values."""

    # ------------------------------------------------------------ DDL
    def create_schema(self, schema: str) -> None:
        self.execute(exp.Create(this=exp.Table(db=exp.to_identifier(schema, quoted=True)),
                                kind="SCHEMA", exists=True))

    def create_table_as(self, target: Relation, query: exp.Expression) -> int | None:
        """A new table holding the query's rows (never replacing one: snapshots are
        immutable, a name already taken is a bug the engine reports). The rows it
        wrote when the engine says so in the same round trip, else None."""
        properties = (exp.Properties(expressions=[p.copy() for p in self.table_properties])
                      if self.table_properties else None)
        return self.execute_counted(exp.Create(this=target.table(), kind="TABLE",
                                               expression=query, properties=properties))

    def execute_counted(self, tree: exp.Expression) -> int | None:
        """Run a statement that writes rows; how many, when the engine says (None)."""
        self.execute(tree)
        return None

    def create_view(self, target: Relation, query: exp.Expression) -> None:
        """CREATE OR REPLACE VIEW: a live view's switch to another snapshot."""
        self.execute(exp.Create(this=target.table(), kind="VIEW", replace=True,
                                expression=query))

    def point_view(self, target: Relation, snapshot: Relation) -> None:
        """Point a live view at one snapshot (SELECT * FROM it): publication does this
        once a model, so an engine may say it without a tree to render."""
        self.create_view(target, select_all(snapshot))

    def drop(self, target: Relation, kind: str) -> None:
        """Drop a table or a view ('table' | 'view'), if it exists."""
        self.execute(exp.Drop(tables=[target.table()], kind=kind.upper(), exists=True))

    def delete_rows(self, target: Relation, where: exp.Expression) -> None:
        """Remove the rows of a bookkeeping table that meet `where` (a diff's branch
        leaving the branch list; history and registry rows are never removed)."""
        self.execute(exp.delete(target.table(), where=where))

    # ------------------------------------------------------------ catalogue
    def remember_catalogue(self) -> None:
        """From now on this adapter serves one command, which writes every change it
        makes through it: an engine whose catalogue calls are costly round trips may
        keep what it lists (relations, view texts) and keep it up to date with the
        command's own DDL instead of listing again. Nothing to do by default."""

    @abstractmethod
    def relations(self, schema: str) -> dict[str, str]:
        """name -> 'table' | 'view' for every relation in `schema` ({} if it is absent)."""

    @abstractmethod
    def columns(self, target: Relation) -> list[tuple[str, str]]:
        """(column, the engine's type name) of a table or view, in order."""

    @abstractmethod
    def query_columns(self, query: exp.Expression) -> list[tuple[str, str]]:
        """(column, the engine's type name) of a query's result, without reading rows
        (a pin check's key expressions, a source read through an override)."""

    def json_document(self, text: exp.Expression) -> exp.Expression:
        """A JSON document held as text, as the engine's JSON functions take it."""
        return exp.Cast(this=text, to=exp.DataType.build("JSON"))

    # ------------------------------------------------------------ content hashes
    @abstractmethod
    def row_hash_expr(self, columns: list[str]) -> exp.Expression:
        """A 64-bit hash of one row's `columns`, in the engine's own function (a
        constant for no columns). Equal rows hash alike, a NULL differs from every
        value, and the columns' order matters."""

    def _wide_sum(self) -> exp.DataType | None:
        """The type each row's hash is cast to before the sum (None: not cast)."""
        if self.sums_bigint_exactly:
            return None
        return exp.DataType.build(self.hash_sum_type, dialect=self.dialect.sqlglot)

    def row_hash_aggregates(self, columns: list[str]) -> list[exp.Expression]:
        """count, sum and xor of the rows' hashes: the select list of `row_hash_query`,
        for an engine that aggregates them elsewhere (the same expressions, so the
        same values)."""
        return row_hash_select(self.row_hash_expr(columns), self._wide_sum()).expressions

    def row_hash_query(self, relation: exp.Expression, columns: list[str],
                       where: exp.Expression | None = None) -> exp.Select:
        query = row_hash_select(self.row_hash_expr(columns), self._wide_sum(), relation)
        return query.where(where) if where is not None else query

    def row_hash(self, relation: exp.Expression, columns: list[str],
                 where: exp.Expression | None = None) -> RowHash:
        """The row-hash aggregate of a relation (a table node, or a subquery), of the
        rows meeting `where` when given."""
        found = self.rows(self.row_hash_query(relation, columns, where))
        if not found:
            return EMPTY
        count, total, xor = found[0]
        return RowHash(int(count), int(total), int(xor))

    # ------------------------------------------------------------ run primitives
    # What a run's build needs (strata.engine.run, lanes, incremental, sources).
    # Does a run relink a model's canonical text (rendered once, as DuckDB SQL, for its
    # code fingerprint) instead of rendering its tree again? Only where that text is
    # this engine's own SQL; `build_table` then gets text, not a tree.
    relinks_canonical_text: bool = False
    # Can drift detection hash a model's settled rows in the same scan as its
    # source's fingerprint? (The folded scan is DuckDB text: strata.engine.sources.)
    folds_split_scans: bool = False

    @property
    def batches_builds(self) -> bool:
        """Do a run's CREATE TABLEs share build transactions (many tables to one
        commit)? Only with transactional DDL; elsewhere each one commits alone."""
        return self.transactional

    def engine_errors(self) -> tuple[type[BaseException], ...]:
        """What this engine's statements raise when they fail (a run turns them into
        coded errors naming the model)."""
        return ()

    def missing_relation(self, err: BaseException) -> bool:
        """Does `err` say a table or view does not exist? (A source's table: E071.)"""
        return False

    def bad_value(self, err: BaseException) -> bool:
        """Does `err` say a value does not fit its type? (A source's data: E072.)"""
        return False

    def lane(self) -> Adapter:
        """A connection of its own for a build lane's thread (strata.engine.lanes),
        without the writer lock: its own transactions on the same warehouse. An
        engine whose session is thread-safe and has no transactions returns itself."""
        return self

    def close_lane(self, lane: Adapter) -> None:
        if lane is not self:
            lane.close()

    def build_table(self, target: Relation, query: exp.Expression | None,
                    text: str | None = None) -> int | None:
        """CREATE TABLE target AS query, and the rows it holds where the engine says so
        in the same round trip; None where it does not (Spark): a run takes the count
        from the table's content hash, which counts the rows anyway, instead of a
        query of its own (a Spark job each: ~0.4 s on a tiny table). `text` is the
        query rendered for this engine already; an engine that relinks canonical text
        may get only text."""
        if query is None:
            raise TypeError(f"{type(self).__name__} builds from a tree, not from text")
        rows = self.create_table_as(target, query)
        return None if rows is None else int(rows)

    def build_table_hashed(self, target: Relation, query: exp.Expression | None,
                           text: str | None = None) -> Hashed | None:
        """`build_table` with the new table's content hash computed by the statement that
        writes it, where the engine can (Spark: the hash is otherwise a job of its own
        reading every table just written): its rows, its columns as the catalogue
        records them, and the row hash `hash_tables` would give. None, having built
        nothing, where it cannot: the caller builds with `build_table` and hashes the
        table after. Not here: DuckDB and PostgreSQL hash a new table in a cheap
        statement of the same connection."""
        return None

    def count(self, relation: exp.Expression, where: exp.Expression | None = None) -> int:
        query = exp.select(count_star()).from_(relation)
        (found,) = self.rows(query.where(where) if where is not None else query)[0]
        return int(found)

    def checkpoint(self) -> None:
        """Write what the build logged into the database file, where the engine keeps a
        write-ahead log of its own to fold (DuckDB); nothing elsewhere."""

    def columns_many(self, schema: str, names: list[str]) -> dict[str, list[tuple[str, str]]]:
        """(column, type) of many tables of one schema; a catalogue query each unless
        the engine answers for all at once."""
        return {n: self.columns(Relation(schema, n)) for n in names}

    def snapshot_columns(self, target: Relation) -> list[tuple[str, str]]:
        """(column, type) of a snapshot table, as its content hash records them."""
        return self.columns(target)

    def row_hashes(self, relations: list[tuple[exp.Expression, list[str]]]) -> list[RowHash]:
        """The row-hash aggregates of many (relation, columns) in one statement: the
        rows' hashes of all of them in one UNION ALL, aggregated per relation."""
        if len(relations) <= 1:
            return [self.row_hash(r, c) for r, c in relations]
        parts = [exp.select(exp.alias_(exp.Literal.number(i), "__i"),
                            exp.alias_(self.row_hash_expr(columns), "__h")).from_(relation)
                 for i, (relation, columns) in enumerate(relations)]
        union = parts[0]
        for part in parts[1:]:
            union = exp.union(union, part, distinct=False)
        aggregate = row_hash_select(exp.column("__h"), self._wide_sum(),
                                    exp.Subquery(this=union, alias=exp.TableAlias(
                                        this=exp.to_identifier("__u"))))
        aggregate = aggregate.select(exp.column("__i"), append=True).group_by(
            exp.column("__i"))
        found = {int(r[3]): RowHash(int(r[0]), int(r[1]), int(r[2]))
                 for r in self.rows(aggregate)}
        return [found.get(i, EMPTY) for i in range(len(relations))]

    def hash_tables(self, schema: str, names: list[str]
                    ) -> dict[str, tuple[list[tuple[str, str]], RowHash]]:
        """name -> (columns, row hash) of tables just built: what a run records of a
        new snapshot (strata.engine.lanes runs it on the hasher's connection)."""
        columns = (self.columns_many(schema, names) if len(names) > 1
                   else {n: self.snapshot_columns(Relation(schema, n)) for n in names})
        hashes = self.row_hashes([(Relation(schema, n).table(), [c for c, _ in columns[n]])
                                  for n in names])
        return {n: (columns[n], h) for n, h in zip(names, hashes, strict=True)}

    def physical_name(self, logical: str) -> str:
        """The name a table gets in the engine for a snapshot, layer or loaded source
        named `logical` (strata's own names: snap_<run>_<model>, ...). Identity
        where the engine keeps any name as given; injective everywhere."""
        return logical

    def reads_file(self, path: str) -> bool:
        """Can a query read this file in place? Else a run loads it into a table
        (`load_table`) and reads that."""
        return self.dialect.reads_files

    # Does the engine read a file in place from the file system this process sees?
    # Then the file's own times and inode are proof that it has not changed
    # (strata.engine.markers). Not on a server reading its own disk (Spark Connect).
    shares_files: bool = True

    def table_marker(self, relation: exp.Expression) -> str | None:
        """Proof that a source table's data has not changed since the same marker was
        taken (strata.engine.markers), or None where the engine keeps none: then the
        source is hashed on every run. None by default (a DuckDB or PostgreSQL table
        keeps nothing every change must move)."""
        return None

    def load_table(self, target: Relation, data) -> None:
        """A new table holding an Arrow table's rows (a file source, read locally)."""
        raise NotImplementedError(f"{type(self).__name__} reads files in place")

    def rows_text(self, text: str) -> list[tuple]:
        """The rows of a statement rendered for this engine already (from a tree, by
        `render` or this dialect's `render`: pins keep the text of what they ran)."""
        raise NotImplementedError

    def file_failure(self, err: BaseException) -> StrataError | None:
        """E070 when `err` is the warehouse's own storage failing (not a model's data);
        None where the engine cannot tell (its server says what failed)."""
        return None

    def damaged_storage(self, err: BaseException) -> bool:
        """Does `err`, raised reading one table, show that table's storage damaged (so
        the snapshot holding it is quarantined)? Only where the engine checks it."""
        return False

    def in_list(self, column: exp.Expression, values) -> tuple[exp.Expression, list | None]:
        """`column IN (values)` for many text values, and the statement's parameters
        (None: none; the values are literals). For `rows(tree, params)`."""
        return exp.In(this=column, expressions=[exp.Literal.string(str(v)) for v in values]
                      ) if values else exp.false(), None


    # ------------------------------------------------------------ bookkeeping (gc, branches)
    # Can `strata gc --compact-file` rewrite the warehouse into a smaller copy? Only a
    # DuckDB file: PostgreSQL's server reclaims space itself (VACUUM), and Spark's DROP
    # TABLE deletes a managed table's files.
    compacts_file: bool = False

    def schema_exists(self, schema: str) -> bool:
        """Is there a schema of that name (a branch's, or one a user made)?"""
        query = exp.select(count_star()).from_(exp.Table(
            this=exp.to_identifier("schemata"), db=exp.to_identifier("information_schema")
        )).where(exp.EQ(this=exp.column("schema_name"), expression=exp.Literal.string(schema)))
        return bool(self.rows(query)[0][0])

    def view_texts(self, schema: str | None = None) -> list[tuple[str, str, str]]:
        """(schema, view, its SQL text) of the views in `schema`, or (None) in every
        schema but the internal one and the engine's own: what reads a snapshot."""
        raise NotImplementedError(f"{type(self).__name__} lists no view texts")

    def view_targets(self, schema: str, prefix: str = "") -> dict[str, str]:
        """view -> the internal table it reads, for views in `schema` named `prefix`...
        that read exactly one internal table and nothing else (a live view)."""
        out = {}
        for _, name, text in self.view_texts(schema):
            if name.startswith(prefix):
                target = view_target(text, self.dialect.sqlglot)
                if target is not None:
                    out[name] = target
        return out

    def logical_name(self, physical: str) -> str:
        """The inverse of `physical_name` (a view's model from its name)."""
        return physical

    def storage_bytes(self, schema: str, tables: list[str]) -> int | None:
        """Bytes only these tables occupy (what dropping them frees), or None where the
        engine does not say."""
        return None

    def used_bytes(self) -> int | None:
        """Bytes the warehouse's data occupies, or None where the engine does not say."""
        return None

    def bulk_insert(self, target: Relation, columns: list[tuple[str, str]],
                    rows: list[tuple]) -> bool:
        """Insert many rows faster than a VALUES list where the engine can (True);
        False: the caller writes INSERT ... VALUES."""
        return False


# the statement a live view is, as the engine stores it, read without a SQL parser
# (parsing every view costs ~1 ms each, a second on a 1,000-model branch)
_OWN_VIEW = re.compile(r'^CREATE VIEW .+ AS SELECT \* FROM "?' + INTERNAL +
                       r'"?\.(?:"((?:[^"]|"")+)"|([A-Za-z_][A-Za-z0-9_]*));?\s*$', re.DOTALL)


def view_target(text: str, dialect: str) -> str | None:
    """The one internal table a view's SQL reads, else None (a view that reads
    several relations or anything outside the internal schema)."""
    own = _OWN_VIEW.match(text)
    if own:
        return own.group(1).replace('""', '"') if own.group(1) is not None else own.group(2)
    import sqlglot

    try:
        tree = sqlglot.parse_one(text, read=dialect)
    except sqlglot.errors.SqlglotError:
        return None
    query = tree.expression if isinstance(tree, exp.Create) else tree
    tables = list(query.find_all(exp.Table)) if query is not None else []
    if len(tables) == 1 and tables[0].db == INTERNAL:
        return tables[0].name
    return None


def engine_failure(where: str, err: BaseException | str, secret: str | None = None
                   ) -> StrataError:
    """E070 for a location that cannot be reached, saying what the engine said (its
    first line, or the text given) with any secret the message might echo taken out."""
    first = first_line(str(err), type(err).__name__)
    if secret:
        first = first.replace(secret, "***")
    return fail("E070", f"cannot open the warehouse `{where}`: {first}", None,
                "is the server running and the location right? -o takes a DuckDB file, "
                "postgresql://USER[:PASSWORD]@HOST[:PORT]/DB, spark:DIR or sc://HOST:PORT")
