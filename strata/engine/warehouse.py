"""The warehouse: snapshots, live views, the snapshot registry and the append-only
history, on the engine `-o` names (a DuckDB file, PostgreSQL, Spark: see
strata.engine.locations and strata.engine.adapters).

Layout 2 (SPEC §3.1), the same on every engine:
  strata_internal.snap_<run>_<model>   immutable snapshot (a table, or a view over
                                       immutable base/layer tables when layered)
  strata_internal.layer_<run>_<model>  an incremental delta layer (immutable)
  <branch>.v_<model>                   live view: SELECT * FROM <snapshot>
  strata_internal.history / snapshots / branches / collections / meta
                                       bookkeeping, append-only (bookkeeping.py)
Names are the engine's physical names (adapter.physical_name: Spark keeps only
[a-z0-9_]). A DuckDB file of layout 1 (gc's collection in snapshots' columns) is
migrated by the first command that may write it.
"""

from __future__ import annotations

import os
import stat
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
from sqlglot import exp

from dialects.duckdb import is_database_file as _database_file
from strata.diagnostics import StrataError, fail
from strata.engine import bookkeeping as B
from strata.engine.adapters import open_adapter
from strata.engine.adapters.base import INTERNAL, Adapter, Relation, engine_failure
from strata.engine.adapters.duckdb import DuckDBAdapter
from strata.engine.adapters.duckdb_file import file_failure, truncated, write_trouble
from strata.engine.environment import env_seconds
from strata.engine.handle import MAIN_BRANCH
from strata.engine.locations import DuckDBFile, Location, parse_location
from strata.engine.publication import recover
from strata.textsafe import escape_unprintable

if TYPE_CHECKING:
    from strata.engine.history import HistoryRead

_HEADER_BYTES = 3 * 4096  # DuckDB's file header and its two database headers
# the bookkeeping layout (bookkeeping.TABLES); version 1 (DuckDB files written before
# issue 18) kept gc's collection in snapshots.collected_at/collected_by, and is
# migrated on the first open that may write (`_migrate`)
SCHEMA_VERSION = 2


def _check_location(target: Path, path: str, create: bool) -> None:
    """What `-o` names must be a DuckDB file (or nothing yet, to create one), judged
    before DuckDB opens it: DuckDB would block forever on a FIFO, read a device without
    end, and a path the OS refuses (too long, a loop of links) raised OSError (E000)."""
    try:
        info = target.stat() if target.exists() else None
        folder_missing = target.parent and not target.parent.exists()
    except OSError as err:
        raise fail("E070", f"cannot use `{path}` as the warehouse: "
                   f"{err.strerror or err}") from None
    if info is None:
        if not create:
            raise fail("E070", f"no warehouse at `{path}`", None,
                       "run `strata run MODULE -o " + path + "` first")
        if folder_missing:
            raise fail("E070", f"cannot create the warehouse `{path}`: the folder "
                       f"`{target.parent}` does not exist")
        return
    if stat.S_ISDIR(info.st_mode):
        raise fail("E070", f"`{path}` is a directory, not a warehouse file")
    if not stat.S_ISREG(info.st_mode):
        raise fail("E070", f"`{path}` is not a regular file (a pipe, device or socket), "
                   "not a warehouse file", None, "-o names a DuckDB database file")
    if info.st_size > 0 and not _database_file(target):
        raise fail("E070", f"`{path}` is not a DuckDB database file", None,
                   "-o names the warehouse (a DuckDB file, created if missing); a CSV or "
                   "Parquet file is read through a source: source s = file 'path' { ... }")


class NotDuckDB(TypeError):
    """`wh.con` / `wh.execute` (DuckDB text) asked of a warehouse on another engine:
    a bug in the caller, which must go through `wh.adapter` there. Loud on purpose:
    DuckDB text sent to PostgreSQL or Spark would fail later and less clearly."""


@dataclass
class Warehouse:
    """The warehouse a command works on: its engine behind `adapter` (every engine),
    the bookkeeping tables in the internal schema, and the writer lock while open
    for writing. `label` is what messages show (the DuckDB path; another engine's
    location with its password hidden). `con` is the DuckDB connection, for the
    DuckDB-only fast paths; on another engine it raises NotDuckDB."""

    path: str  # the DuckDB file, or (another engine) the same text as `label`
    _con: duckdb.DuckDBPyConnection | None
    read_only: bool = False
    _internal_ready: bool = False
    # why a caller that asked to write got the file read-only (open_to_record), or None
    unwritable: str | None = None
    adapter: Adapter | None = None
    label: str = ""
    location: Location | None = None
    # the history as `recover` read it on opening (every branch's newest entries, the
    # quarantine verdicts), for the run that follows to take instead of reading it
    # again (publication.take_history_read); taken once, gone when an entry is appended
    history_read: HistoryRead | None = None

    def __post_init__(self) -> None:
        if self.adapter is None:  # a DuckDB connection: its adapter wraps it
            self.location = self.location or DuckDBFile(self.path)
            self.adapter = DuckDBAdapter(self.location, self._con)
            self.adapter.locked = not self.read_only
        self.label = self.label or self.path

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        if self._con is None:
            raise NotDuckDB(f"the warehouse `{self.label}` is not a DuckDB file: "
                            "go through wh.adapter")
        return self._con

    @con.setter
    def con(self, value) -> None:  # tests wrap the connection to count statements
        self._con = value
        if isinstance(self.adapter, DuckDBAdapter):
            self.adapter.con = value

    @property
    def on_duckdb(self) -> bool:
        """Is `con` there (the DuckDB-only fast paths may run)?"""
        return self._con is not None

    # ------------------------------------------------------------ opening
    @classmethod
    def open(cls, path: str, read_only: bool = False, create: bool = True,
             lock_timeout: float | None = None) -> Warehouse:
        """Open (and create) the warehouse `-o` names (a DuckDB file path, a
        postgresql:// URL, spark:DIR or sc://HOST:PORT; E070 for anything else).
        Another process holding it is E075 after waiting up to `lock_timeout` seconds
        (STRATA_LOCK_TIMEOUT, default 10)."""
        location = parse_location(path)
        timeout = lock_timeout if lock_timeout is not None else env_lock_timeout()
        if not isinstance(location, DuckDBFile):
            return cls._open_engine(location, read_only, create, timeout)
        target = Path(path)
        _check_location(target, path, create)
        deadline = time.monotonic() + timeout
        said = False
        while True:
            try:
                if read_only and not target.exists():
                    # nothing to read yet: an empty in-memory database answers every
                    # question (no history, no views) and no file is created
                    con = duckdb.connect(":memory:")
                else:
                    con = duckdb.connect(str(target), read_only=read_only)
                con.execute("SET enable_progress_bar = false")
                break
            except duckdb.IOException as err:
                message = str(err)
                if "lock" not in message.lower():
                    failure = file_failure(path, err)
                    if failure is not None and not read_only and write_trouble(path, err):
                        raise _CannotWrite(failure) from None
                    raise failure or fail(
                        "E070", f"cannot open the warehouse `{path}`: {message}") from None
                if time.monotonic() >= deadline:
                    holder = _lock_holder(message)
                    raise fail("E075", f"the warehouse `{path}` is in use by another process"
                               + (f" ({holder})" if holder else ""), None,
                               "wait for it to finish, or raise STRATA_LOCK_TIMEOUT "
                               "(seconds) to wait longer") from None
                if not said:
                    _say_waiting(path, timeout)
                    said = True
                time.sleep(0.2)
            except duckdb.Error as err:
                raise fail("E070", f"cannot open the warehouse `{path}`: {err}", None,
                           "is it a DuckDB database file?") from None
        wh = cls(str(target), con, read_only)
        if not wh.read_only:
            wh._check_whole()
            wh._setup()
            wh.recover()
        elif wh.layout() == 1:  # upgraded by a writable open, then read as asked
            wh.close()
            cls._upgrade(path, timeout)
            return cls.open(path, read_only=True, create=create, lock_timeout=timeout)
        else:
            wh._check_version()
        return wh

    @classmethod
    def _upgrade(cls, path: str, timeout: float) -> None:
        """Migrate a layout 1 file for a command that only reads: a writable open
        does it; a file this process may not write says so (E083)."""
        try:
            cls.open(path, create=False, lock_timeout=timeout).close()
        except _CannotWrite as err:
            raise fail("E083", f"the warehouse `{path}` has layout version 1 and cannot be "
                       "upgraded to version 2 here: " + err.why, None,
                       "open it once with a strata command that writes, where it may be "
                       "written (run, gc, rollback)") from None

    @classmethod
    def _open_engine(cls, location: Location, read_only: bool, create: bool,
                     timeout: float) -> Warehouse:
        """A warehouse on a database server or Spark: the adapter connects (and, to
        write, takes the writer lock). Without `create`, a database with no strata
        warehouse in it is E070, as a missing DuckDB file is."""
        adapter = open_adapter(location, write=not read_only, lock_timeout=timeout)
        adapter.remember_catalogue()  # one command's: it lists the catalogue once
        label = location.redacted()
        wh = cls(label, None, read_only, adapter=adapter, label=label, location=location)
        try:
            if not create and not wh.has_internal():
                raise fail("E070", f"no warehouse at `{label}`", None,
                           f"run `strata run MODULE -o {label}` first")
            if read_only:
                wh._check_version()
            else:
                wh._setup()
                wh.recover()
        except BaseException:
            adapter.close()
            raise
        return wh

    @classmethod
    def open_to_record(cls, path: str) -> Warehouse:
        """For a command that reads and records what it found (verify's quarantine):
        writable when this process may write the file, else read-only with
        `unwritable` saying why. Recording is a bonus there, not the job: a file
        nobody may write (permission, read-only file system) is still verified, as
        it was before verify recorded anything."""
        try:
            return cls.open(path, create=False)
        except _CannotWrite as err:
            wh = cls.open(path, read_only=True, create=False)
            wh.unwritable = err.why
            return wh

    def _check_whole(self) -> None:
        """E070 before a command writes anything when the file is shorter than the
        blocks its own header counts (truncated: a copy cut short). DuckDB finds that
        only when a read reaches the missing part: a run found it after building
        tables into the broken file (and quarantined healthy snapshots there)."""
        try:
            blocks, block_size = self.con.execute(
                "SELECT total_blocks - free_blocks, block_size FROM pragma_database_size() "
                "WHERE database_name = current_database()").fetchone()
        except (duckdb.Error, TypeError):
            return  # nothing to compare with: DuckDB's own reads still say it
        # each block in use has its own number below the block count: the file holds at
        # least as many (free ones may be missing at its end: DuckDB cuts them off)
        need, have = _HEADER_BYTES + blocks * block_size, os.path.getsize(self.path)
        if blocks and have < need:
            self.con.close()
            raise truncated(self.path, f"the file holds {have} bytes; its header "
                             f"counts {blocks} blocks in use of {block_size} bytes "
                             f"({need} bytes)")

    def _setup(self) -> None:
        # set up already: read (migrate a layout 1 file). Without meta's version the
        # setup was cut short (Spark has no transaction to undo it): done again, as
        # every step of it may be
        found = self.layout()
        if found is not None:
            self._check_version(found)
            return
        try:
            with self.transaction():  # all of it or nothing, should we be killed here
                B.setup(self.adapter)
                self.adapter.create_schema(MAIN_BRANCH)
        except duckdb.Error as err:
            raise fail("E070", f"cannot prepare the warehouse `{self.path}`: {err}") from None
        except self.adapter.engine_errors() as err:  # psycopg's, pyspark's
            raise engine_failure(self.label, err) from None
        self._internal_ready = True

    def recover(self) -> None:
        """What every command that writes does first: where publication has no
        transaction (Spark), roll each branch's views forward to its newest entry (a
        crash between a commit point and the end of its view switch). Nothing to do
        elsewhere (publication.recover)."""
        recover(self)

    def layout(self) -> int | None:
        """The layout version recorded in meta (None: no warehouse set up yet)."""
        if not self.has_internal():
            return None
        row = next(iter(self.adapter.rows(B.layout_version())), None)
        return int(row[0]) if row is not None else None

    def _check_version(self, found: int | None = None) -> None:
        """E083 for a layout this strata does not read (a layout 1 file is migrated
        when writable). `found`: the version its caller read already (meta is one
        query, a round trip on a server)."""
        found = found if found is not None else self.layout()
        if found == 1 and not self.read_only:
            self._migrate()
        elif found is not None and found != SCHEMA_VERSION:
            raise fail("E083", f"the warehouse `{self.label}` has layout version {found}; "
                       f"this strata reads version {SCHEMA_VERSION}",
                       None, "a command that writes upgrades a layout 1 warehouse (run, gc, "
                       "rollback, branch create)" if found == 1 else None)

    def _migrate(self) -> None:
        """Layout 1 -> 2, in one transaction: gc's collections move from columns of
        `snapshots` (an UPDATE, which Spark cannot do) to the append-only
        `collections` table; meta says 2. Registry rows, history and every table and
        view stay as they are."""
        snapshots, collections = B.SNAPSHOTS.relation.table(), B.COLLECTIONS.relation
        collected = exp.select(*[B.col(c.name) for c in B.COLLECTIONS.columns]).from_(
            snapshots).where(exp.Not(this=exp.Is(this=B.col("collected_at"),
                                                  expression=exp.Null())))
        with self.transaction():
            self.run(B.create_table(B.COLLECTIONS, self.adapter))
            self.run(exp.insert(collected, collections.table()))
            for column in ("collected_at", "collected_by"):
                self.run(exp.Alter(this=snapshots.copy(), kind="TABLE", actions=[
                    exp.Drop(tables=[B.col(column)], kind="COLUMN")]))
            self.run(exp.update(B.META.relation.table(), {
                "value": exp.Literal.string(str(SCHEMA_VERSION))},
                where=exp.EQ(this=B.col("key"), expression=exp.Literal.string(
                    "schema_version"))))

    def close(self) -> None:
        self.adapter.close()

    # ------------------------------------------------------------ helpers
    def sql(self, tree: exp.Expression) -> str:
        return tree.sql(dialect="duckdb")

    def execute(self, statement: str, params: list | None = None):
        """DuckDB text (DuckDB only; another engine raises NotDuckDB)."""
        return self.con.execute(statement, params or [])

    def rows(self, tree: exp.Expression) -> list[tuple]:
        """One query tree, rendered for the warehouse's engine: its rows."""
        return self.adapter.rows(tree)

    def run(self, tree: exp.Expression) -> None:
        """One statement tree, rendered for the warehouse's engine."""
        self.adapter.execute(tree)

    @contextmanager
    def transaction(self):
        """One transaction (DuckDB, PostgreSQL); on Spark the block runs as it comes
        (the history entry is the commit point there)."""
        with self.adapter.transaction():
            yield

    def has_internal(self) -> bool:
        # once set up, always set up (nothing drops the internal schema): asked once,
        # not before every registry lookup (a catalogue query costs ~1 ms a call)
        if self._internal_ready:
            return True
        self._internal_ready = "history" in self.adapter.relations(INTERNAL)
        return self._internal_ready

    def internal_objects(self) -> dict[str, str]:
        """name -> 'table' | 'view' for every object in the internal schema."""
        return self.adapter.relations(INTERNAL)

    def table_exists(self, schema: str, name: str) -> bool:
        return name in self.adapter.relations(schema)

    def drop(self, name: str, kind: str | None = None) -> None:
        """Drop an unreferenced internal object (a leftover or a collected snapshot).
        A caller that knows the kind ('table' | 'view') spares the catalog lookup."""
        kind = kind or self.internal_objects().get(name)
        if kind in ("view", "table"):
            self.adapter.drop(Relation(INTERNAL, name), kind)


class _CannotWrite(StrataError):
    """Opening for writing failed only because the file may not be written (E070 as
    file_failure says it; `why` is its message): a read-only open may still work."""

    def __init__(self, failure: StrataError):
        super().__init__(failure.diagnostics)
        self.why = failure.diagnostics[0].message


def _say_waiting(path: str, timeout: float) -> None:
    """The one line a wait for another process's lock prints, on stderr. The path is
    user text (a folder may be named with ESC or a carriage return): escaped as every
    terminal line is (strata.textsafe, what the CLI's console uses), so it cannot
    drive the terminal; the engine does not import the CLI for it."""
    import sys

    print(escape_unprintable(f"waiting for the warehouse lock on {path} "
                             f"(up to {timeout:g} s)..."), file=sys.stderr)


def _lock_holder(message: str) -> str | None:
    marker = "PID"
    if marker in message:
        tail = message[message.index(marker):].split(")")[0]
        return tail.strip()
    return None


# ---------------------------------------------------------------- the environment
LOCK_TIMEOUT_DEFAULT = 10.0
LOCK_TIMEOUT_MAX = 86400.0  # a day: past that a wait is a hang, not patience


def env_lock_timeout() -> float:
    """STRATA_LOCK_TIMEOUT as seconds, read on every open so a bad value is E084 on
    every command that opens a warehouse, not only when another process holds the lock
    (and never a ValueError)."""
    return env_seconds("STRATA_LOCK_TIMEOUT", LOCK_TIMEOUT_DEFAULT, LOCK_TIMEOUT_MAX,
                       "it is how long to wait for another process's lock on the "
                       f"warehouse: 0 fails at once, {LOCK_TIMEOUT_MAX:g} waits up to a day")
