"""PostgreSQL through psycopg 3. Snapshots live in the internal schema, each branch's
views in its own schema, as on DuckDB; DDL is transactional, so publication is one
transaction exactly as on DuckDB.

The one-writer lock is a session-level advisory lock (`pg_try_advisory_lock`) on a
64-bit key derived from the database and the internal schema's name: held while this
connection lives, released by the server when it ends, however it ends (a killed
process's connection is closed by the kernel, and the server drops its locks).

The connection is in autocommit mode (one statement, one transaction) except inside
`transaction()`; its session settings fix what row text looks like (time zone, date
style, float digits), because the row hash hashes a row's text.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable
from typing import Any

from sqlglot import exp

from dialects import postgres as pg_dialect
from strata.diagnostics import fail
from strata.engine.adapters import pg_publication
from strata.engine.adapters.base import (
    INTERNAL,
    Adapter,
    Relation,
    as_text,
    engine_failure,
    wait_for,
)
from strata.engine.adapters.duckdb import relation_kinds
from strata.engine.locations import PostgresURL, scrub

# the session as the row hash needs it: a row's text must not depend on the server's
# or the login's defaults
SESSION = {"TimeZone": "UTC", "DateStyle": "ISO, YMD", "IntervalStyle": "postgres",
           "extra_float_digits": "1", "bytea_output": "hex"}
MAX_NAME_BYTES = pg_dialect.MAX_IDENTIFIER_BYTES  # NAMEDATALEN - 1


def lock_key(database: str, schema: str = INTERNAL) -> int:
    """The advisory lock's key: the first 8 bytes of a SHA-256, as a signed BIGINT.
    Computed here, not by the server's hashtext (which may change between versions)."""
    digest = hashlib.sha256(f"strata:{database}:{schema}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _fn(name: str, *args: exp.Expression) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=list(args))


def _lit(value: int | str) -> exp.Literal:
    return exp.Literal.number(value) if isinstance(value, int) else exp.Literal.string(value)


class PostgresAdapter(Adapter):
    dialect = pg_dialect.DIALECT
    extra = "postgres"
    transactional = True
    hash_sum_type = "NUMERIC"  # unbounded: a sum of BIGINT hashes never overflows it
    sums_bigint_exactly = True  # SUM(bigint) is NUMERIC: the same sum, no cast a row

    def __init__(self, location: PostgresURL, con: Any, schema: str = INTERNAL):
        super().__init__(location.redacted())
        self.location = location
        self.con = con
        # the database libpq chose when the URL names none (a service file's)
        self.key = lock_key(location.database or con.info.dbname, schema)
        # the view publication last asked to lock: the one a lock timeout names
        self.touching: Relation | None = None

    @classmethod
    def open(cls, location: PostgresURL, write: bool = True, lock_timeout: float = 10.0,
             schema: str = INTERNAL) -> PostgresAdapter:
        import psycopg

        options = " ".join(f"-c {k}={v.replace(' ', '')}" for k, v in SESSION.items())
        args = location.connect_args()
        if "options" in args:  # the URL's own options first; ours fix the row text
            options = f"{args.pop('options')} {options}"
        try:
            con = psycopg.connect(**args, options=options, autocommit=True,
                                  prepare_threshold=None, application_name="strata",
                                  connect_timeout=10)
        except psycopg.Error as err:
            # libpq's message may echo what it was given: every secret of the URL out
            said = scrub(str(err).strip(), location.secrets()) or type(err).__name__
            raise engine_failure(location.redacted(), said) from None
        adapter = cls(location, con, schema)
        if write:
            try:
                adapter.acquire_lock(lock_timeout)
            except BaseException:
                con.close()
                raise
        return adapter

    # ------------------------------------------------------------ lock
    def acquire_lock(self, timeout: float) -> None:
        def attempt() -> bool:
            (taken,) = self.rows(exp.select(_fn("pg_try_advisory_lock", _lit(self.key))))[0]
            return bool(taken)

        wait_for(attempt, timeout, self.where, self.lock_holder)
        self.locked = True

    def lock_holder(self) -> str | None:
        """Who holds the key: pid, application and since when, from pg_locks (a bigint
        key is stored as classid = its high 32 bits, objid = its low 32, objsubid 1)."""
        unsigned = self.key & 0xFFFFFFFFFFFFFFFF
        locks = exp.Table(this=exp.to_identifier("pg_locks"), alias=exp.TableAlias(
            this=exp.to_identifier("l")))
        activity = exp.Table(this=exp.to_identifier("pg_stat_activity"),
                             alias=exp.TableAlias(this=exp.to_identifier("a")))

        def col(table: str, name: str) -> exp.Column:
            return exp.column(name, table)

        conditions = [
            exp.EQ(this=col("l", "locktype"), expression=_lit("advisory")),
            exp.column("granted", "l"),
            exp.EQ(this=as_text(col("l", "classid")), expression=_lit(str(unsigned >> 32))),
            exp.EQ(this=as_text(col("l", "objid")), expression=_lit(str(unsigned & 0xFFFFFFFF))),
            exp.EQ(this=col("l", "objsubid"), expression=_lit(1)),
            exp.EQ(this=col("l", "database"), expression=exp.select(col("d", "oid")).from_(
                exp.Table(this=exp.to_identifier("pg_database"),
                          alias=exp.TableAlias(this=exp.to_identifier("d")))).where(
                exp.EQ(this=col("d", "datname"), expression=_fn("current_database"))
            ).subquery()),
        ]
        query = (exp.select(col("a", "pid"), col("a", "application_name"),
                            as_text(col("a", "backend_start")))
                 .from_(locks).join(activity, on=exp.EQ(this=col("l", "pid"),
                                                        expression=col("a", "pid")))
                 .where(exp.and_(*conditions)))
        found = self.rows(query)
        if not found:
            return None
        pid, application, since = found[0]
        return f"server process {pid}, {application or 'a client'}, connected {since}"

    def close(self) -> None:
        """Release the advisory lock, then close. Closing alone releases it too, but
        only once the server's backend has noticed the client left: a writer started
        right after this one closed could still find it held (E075 at a zero timeout)."""
        if self.locked and not self.con.closed:
            with contextlib.suppress(*self.engine_errors()):  # broken: closing frees it
                if not self.con.autocommit:
                    self.con.rollback()
                    self.con.autocommit = True
                self.rows(exp.select(_fn("pg_advisory_unlock", _lit(self.key))))
        self.locked = False
        self.con.close()

    # ------------------------------------------------------------ transactions
    def begin(self) -> None:
        self.con.autocommit = False  # psycopg then opens the transaction itself

    def commit(self) -> None:
        self.con.commit()
        self.con.autocommit = True

    def rollback(self) -> None:
        self.con.rollback()
        self.con.autocommit = True
        self.routines_made.forget()  # a function declared inside it is gone with it

    def publish_atomically(self, body: Callable[[], None], timeout: float,
                           new_tables: bool = True) -> None:
        """Once older snapshots are gone (where the run made tables), in attempts
        bounded by a short lock_timeout: readers never see an empty view nor queue
        behind publication for long (strata.engine.adapters.pg_publication)."""
        pg_publication.publish(self, body, timeout, new_tables)

    def lock_timeout_error(self) -> type[BaseException]:
        import psycopg

        return psycopg.errors.LockNotAvailable

    # ------------------------------------------------------------ statements
    def execute(self, tree: exp.Expression, params: list | None = None) -> None:
        with self.con.cursor() as cur:
            cur.execute(self.render(tree).encode(), params)

    def rows(self, tree: exp.Expression, params: list | None = None) -> list[tuple]:
        with self.con.cursor() as cur:
            cur.execute(self.render(tree).encode(), params)
            return [tuple(r) for r in cur.fetchall()] if cur.description else []

    def rows_text(self, text: str) -> list[tuple]:
        with self.con.cursor() as cur:
            cur.execute(self.with_routines(text).encode())
            return [tuple(r) for r in cur.fetchall()] if cur.description else []

    def execute_counted(self, tree: exp.Expression) -> int | None:
        """CREATE TABLE AS reports its rows in the command tag (`SELECT n`)."""
        with self.con.cursor() as cur:
            cur.execute(self.render(tree).encode())
            return cur.rowcount if cur.rowcount >= 0 else None

    def create_view(self, target: Relation, query: exp.Expression) -> None:
        """PostgreSQL's CREATE OR REPLACE VIEW must keep the old view's column names and
        types; a snapshot whose columns differ (a model edited, a source overridden
        with another integer width) needs the view dropped and made again. Both in the
        caller's transaction (publication is one), so a reader never misses the view;
        the first try runs under a savepoint so its failure does not end that
        transaction."""
        import psycopg

        self.touching = target
        try:
            with self.con.transaction():
                super().create_view(target, query)
        except psycopg.errors.InvalidTableDefinition:
            try:
                with self.con.transaction():
                    self.drop(target, "view")
                    super().create_view(target, query)
            except psycopg.errors.DependentObjectsStillExist as err:
                raise fail("E121", f"the live view `{target.schema}.{target.name}` must "
                           "change its columns, and a view that is not strata's reads it",
                           None, "nothing was published; drop or re-create the dependent "
                           "view after the run", notes=[n for n in [err.diag.message_detail] if n]) from None

    def drop(self, target: Relation, kind: str) -> None:
        self.touching = target  # a live view's drop in publication takes its lock too
        super().drop(target, kind)

    # ------------------------------------------------------------ run primitives
    def engine_errors(self) -> tuple[type[BaseException], ...]:
        import psycopg

        return (psycopg.Error,)

    def missing_relation(self, err: BaseException) -> bool:
        import psycopg

        return isinstance(err, (psycopg.errors.UndefinedTable,
                                psycopg.errors.InvalidSchemaName))

    def bad_value(self, err: BaseException) -> bool:
        import psycopg

        return isinstance(err, psycopg.errors.DataError)

    def lane(self) -> PostgresAdapter:
        """A connection of its own, without the lock (this process holds it): the
        lane's transactions are its own, as on DuckDB."""
        lane = type(self).open(self.location, write=False)
        lane.routines_made = self.routines_made  # one declaration of each, one at a time
        return lane

    def physical_name(self, logical: str) -> str:
        """PostgreSQL cuts a name past 63 bytes (silently, so two long names could meet):
        a long one keeps its head and gets a hash of the whole for a tail."""
        if len(logical.encode()) <= MAX_NAME_BYTES:
            return logical
        tail = "_" + hashlib.sha256(logical.encode()).hexdigest()[:16]
        head = logical.encode()[:MAX_NAME_BYTES - len(tail)].decode(errors="ignore")
        return head + tail

    def reads_file(self, path: str) -> bool:
        return False

    def load_table(self, target: Relation, columns: list[tuple[str, exp.DataType]],
                   batches) -> None:
        """CREATE TABLE with the declared types, then COPY the rows in (Arrow record
        batches, read locally): one round trip per batch, no INSERT per row."""
        schema = exp.Schema(this=target.table(), expressions=[
            exp.ColumnDef(this=exp.to_identifier(n, quoted=True), kind=t.copy())
            for n, t in columns])
        self.execute(exp.Create(this=schema, kind="TABLE"))
        copy = exp.Copy(this=target.table(), kind=True, files=[exp.var("STDIN")])
        with self.con.cursor() as cur, cur.copy(self.render(copy).encode()) as out:
            for batch in batches:
                for row in zip(*[c.to_pylist() for c in batch.columns], strict=True):
                    out.write_row(row)

    # ------------------------------------------------------------ catalogue
    def relations(self, schema: str) -> dict[str, str]:
        query = exp.select(exp.column("table_name"), exp.column("table_type")).from_(
            exp.Table(this=exp.to_identifier("tables"),
                      db=exp.to_identifier("information_schema"))).where(
            exp.EQ(this=exp.column("table_schema"), expression=_lit(schema)))
        return relation_kinds(self.rows(query))

    def columns(self, target: Relation) -> list[tuple[str, str]]:
        """format_type gives numeric(12,2) and bigint[] where information_schema says
        only numeric and ARRAY."""
        attribute = exp.Table(this=exp.to_identifier("pg_attribute"))
        regclass = exp.Cast(this=_lit(self.render(target.table())),
                            to=exp.DataType.build("REGCLASS", dialect="postgres"))
        query = (exp.select(exp.column("attname"),
                            _fn("format_type", exp.column("atttypid"), exp.column("atttypmod")))
                 .from_(attribute)
                 .where(exp.and_(exp.EQ(this=exp.column("attrelid"), expression=regclass),
                                 exp.GT(this=exp.column("attnum"), expression=_lit(0)),
                                 exp.Not(this=exp.column("attisdropped"))))
                 .order_by(exp.column("attnum")))
        return [(str(n), str(t)) for n, t in self.rows(query)]

    def query_columns(self, query: exp.Expression) -> list[tuple[str, str]]:
        """Through a temporary view, so the types read as `columns` reads a table's
        (numeric(12,2), not the driver's numeric; bigint, not int8)."""
        scratch = Relation("pg_temp", "strata_query_columns")
        self.create_view(scratch, query)
        try:
            return self.columns(scratch)
        finally:
            self.drop(scratch, "view")

    # ------------------------------------------------------------ bookkeeping (gc, branches)
    def view_texts(self, schema: str | None = None) -> list[tuple[str, str, str]]:
        """pg_views: the definition is the view's query (the server's own text)."""
        where = (exp.EQ(this=exp.column("schemaname"), expression=_lit(schema))
                 if schema is not None else
                 exp.Not(this=exp.In(this=exp.column("schemaname"), expressions=[
                     _lit(s) for s in ("pg_catalog", "information_schema", INTERNAL)])))
        query = (exp.select(exp.column("schemaname"), exp.column("viewname"),
                            exp.column("definition"))
                 .from_(exp.Table(this=exp.to_identifier("pg_views"))).where(where)
                 .order_by(exp.column("schemaname"), exp.column("viewname")))
        return [(str(a), str(b), str(c)) for a, b, c in self.rows(query)]

    def storage_bytes(self, schema: str, tables: list[str]) -> int | None:
        """pg_total_relation_size of each table (its heap, TOAST and indexes): what a
        DROP gives back to the file system at commit."""
        if not tables:
            return 0
        names = exp.In(this=exp.column("relname", "c"), expressions=[_lit(t) for t in tables])
        query = (exp.select(exp.Coalesce(this=exp.Sum(this=_fn(
                    "pg_total_relation_size", exp.column("oid", "c"))),
                    expressions=[_lit(0)]))
                 .from_(exp.Table(this=exp.to_identifier("pg_class"),
                                  alias=exp.TableAlias(this=exp.to_identifier("c"))))
                 .join(exp.Table(this=exp.to_identifier("pg_namespace"),
                                 alias=exp.TableAlias(this=exp.to_identifier("n"))),
                       on=exp.EQ(this=exp.column("oid", "n"),
                                 expression=exp.column("relnamespace", "c")))
                 .where(exp.and_(exp.EQ(this=exp.column("nspname", "n"), expression=_lit(schema)),
                                 names)))
        return int(self.rows(query)[0][0])

    def used_bytes(self) -> int | None:
        return int(self.rows(exp.select(_fn("pg_database_size", _fn("current_database"))))[0][0])

    # ------------------------------------------------------------ content hashes
    def row_hash_expr(self, columns: list[str]) -> exp.Expression:
        """hashtextextended(ROW(c1, c2, ...)::text, 0): a BIGINT of the row's text.
        The row's text keeps the columns' order, quotes a value that is empty or
        holds a comma, and leaves a NULL empty, so no two different rows share it;
        SESSION fixes the text of dates, times and doubles."""
        if not columns:
            return exp.Cast(this=exp.Literal.number(0), to=exp.DataType.build("BIGINT"))
        row = _fn("ROW", *[exp.column(exp.to_identifier(c, quoted=True)) for c in columns])
        return _fn("hashtextextended", as_text(row), _lit(0))
