"""Spark: a local session whose catalog and tables live in a folder (`spark:DIR`), or
any cluster through Spark Connect (`sc://HOST:PORT`). Tables are Parquet, created
with CREATE TABLE AS; views live in the same catalog.

What Spark does not give, and what stands in for it:

- No multi-statement transaction (`transactional = False`): `transaction()` runs its
  block as it comes. A run's history entry is its commit point (one INSERT of one
  row: one file, renamed into place by the job commit). See
  docs/design/engines.md §5, "Spark publication", for what a reader sees while
  views switch and how the next command recovers a crash.
- No lock statement. `spark:DIR`: an exclusive `flock` on DIR/strata.lock, taken
  before the session starts (Derby, the local metastore, admits one JVM anyway; this
  says so as E075 instead of a Derby stack). The kernel releases it when the process
  ends, however it ends. `sc://`: the metastore's own atomicity: CREATE TABLE of a
  lock table fails for every writer but one (TABLE_OR_VIEW_ALREADY_EXISTS); the
  holder appends a heartbeat row every LEASE/4 seconds and drops the table when it
  closes. A lock whose newest heartbeat is older than LEASE (by the server's clock)
  was left by a crashed writer and is broken; so is one whose holder ran on this
  machine (same host name and PID namespace) and whose process is gone, at once
  (a writer killed here does not block the next command for a lease). Guarantee: exclusive while the holder
  is alive and heartbeating; two writers breaking the same stale lock in the same
  instant may both proceed (the metastore has no compare-and-delete), which needs
  a writer to have been dead for LEASE seconds first.

Under 1,000 lines on purpose: one engine, one adapter (docs/design/engines.md);
its lock, session and catalogue quirks read together.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import re
import socket
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from sqlglot import exp

from dialects import spark as spark_dialect
from strata.diagnostics import fail
from strata.engine.adapters.base import (
    INTERNAL,
    LOCK_HINT,
    NOOP_RECORD,
    Adapter,
    Hashed,
    Relation,
    engine_failure,
    owner_text,
    select_all,
    wait_for,
)
from strata.engine.adapters.spark_classes import ClassArchive, class_archive, finish_recording
from strata.engine.fingerprints import RowHash
from strata.engine.locations import SparkConnect, SparkDir
from strata.engine.markers import files_marker, folder_state

# table formats whose every change writes, replaces or removes whole files, so the
# files' listing is proof of the data (`SparkAdapter.table_marker`)
FILE_TABLES = frozenset({"parquet", "orc", "csv", "json", "text", "avro", "hive"})
LOCK_FILE = "strata.lock"
LOCK_TABLE = "writer_lock"
LEASE_SECONDS = 60.0


def encode_name(logical: str) -> str:
    """A table or schema name the Hive catalogue keeps as it is (it keeps only
    [a-z0-9_] and lower-cases the rest): lower-case letters, digits and `_` stay, `_`
    is doubled, anything else becomes _xHHHH_. Injective, so two models never share a
    table (`SparkAdapter.logical_name` decodes it)."""
    out = []
    for ch in logical:
        if ch == "_":
            out.append("__")
        elif ch.isascii() and (ch.islower() or ch.isdigit()):
            out.append(ch)
        else:
            out.append(f"_x{ord(ch):04x}_")
    return "".join(out)


def local_session(directory: str, app: str = "strata") -> Any:
    """A local Spark session whose Hive catalog (Derby) and managed tables live in
    `directory`, so tables and views outlive the process. UTC everywhere: the JVM's
    and the session's zone, as the differential suite runs Spark."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # `-o spark:DIR` says where the warehouse is: a SPARK_REMOTE inherited from the
    # shell (or the mode flag pyspark sets once a Connect session existed in this
    # process) would silently send it to a server instead
    for name in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED"):
        os.environ.pop(name, None)
    root = Path(directory)
    logs = Path(__file__).with_name("spark_log4j2.properties")  # errors only
    java = (f"-Duser.timezone=UTC -Dderby.system.home={root} "
            f"-Dlog4j2.configurationFile={logs.as_uri()}")
    archive = _new_jvm_archive()
    if archive is not None:  # this process starts a JVM: from the class archive
        java += " " + archive.java_options()
    metastore = f"jdbc:derby:;databaseName={root / 'metastore_db'};create=true"
    from pyspark import SparkConf

    conf = (SparkConf().setMaster("local[2]").setAppName(app)
            .set("spark.sql.catalogImplementation", "hive")
            .set("spark.sql.warehouse.dir", str(root / "warehouse"))
            .set("spark.hadoop.javax.jdo.option.ConnectionURL", metastore)
            .set("spark.driver.extraJavaOptions", java)
            .set("spark.sql.session.timeZone", "UTC")
            .set("spark.sql.shuffle.partitions", "2")
            .set("spark.ui.enabled", "false")
            .set("spark.ui.showConsoleProgress", "false")
            # a killed CREATE TABLE AS may leave its folder without a catalogue entry;
            # the next run's table of that name writes over it (engines.md §5)
            .set("spark.sql.legacy.allowNonEmptyLocationInCTAS", "true"))
    _quiet_gateway(conf, archive)
    session = SparkSession.builder.config(conf=conf).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)
    return session


# Spark 4 starts its JVM with the JDK's incubating vector module, and the JVM says so
# on stderr at every start: a line every Spark command printed (issue 38)
JVM_NOISE = (b"WARNING: Using incubator modules: jdk.incubator.vector",)


def _new_jvm_archive() -> ClassArchive | None:
    """The class archive (spark_classes) for the JVM this process is about to start;
    None when it has one already, or no archive applies."""
    from pyspark import SparkContext
    from pyspark.find_spark_home import _find_spark_home

    if SparkContext._gateway is not None:
        return None
    return class_archive(_find_spark_home())


# the archive this process's JVM records as it exits (`stop_recording_jvm`)
_recording: list[tuple[ClassArchive, Any]] = []


def _quiet_gateway(conf: Any, archive: ClassArchive | None = None) -> None:
    """Start the local JVM (pyspark's own launcher, our conf) with its stderr read by a
    thread that passes every line on but the JVM's start-up notice. Nothing when this
    process has a JVM already."""
    from pyspark import SparkContext
    from pyspark.java_gateway import launch_gateway

    with SparkContext._lock:
        if SparkContext._gateway is not None:
            return
        gateway = launch_gateway(conf, popen_kwargs={"stderr": subprocess.PIPE})
        SparkContext._gateway, SparkContext._jvm = gateway, gateway.jvm
        if archive is not None and archive.recording is not None:
            _recording.append((archive, gateway))
    threading.Thread(target=_pass_on, args=(gateway.proc.stderr,), daemon=True,
                     name="strata-spark-stderr").start()


def stop_recording_jvm() -> None:
    """After the session stopped: when this process's JVM records the class archive,
    let it exit and write it (spark_classes.finish_recording); the next session in
    this process starts a JVM of its own, from the archive."""
    from pyspark import SparkContext

    while _recording:
        archive, gateway = _recording.pop()
        with SparkContext._lock:
            if SparkContext._gateway is gateway:
                SparkContext._gateway = SparkContext._jvm = None
        finish_recording(archive, gateway.proc)
        with contextlib.suppress(Exception):
            gateway.close()


def _pass_on(stream) -> None:
    for line in iter(stream.readline, b""):
        if line.rstrip().startswith(JVM_NOISE):
            continue
        try:
            sys.stderr.buffer.write(line)
            sys.stderr.flush()
        except (OSError, ValueError, AttributeError):  # stderr closed, or not bytes
            return


def _probe(session: Any) -> None:
    """Does the server answer? Asked with a short retry policy (about 2 s of waits): the
    client's default retries an unreachable server for at least 10 minutes, which is
    patience for a run in progress but no way to say that `-o` names nothing (E070).
    The default comes back for the session's real work."""
    from pyspark.sql.connect.client.retries import DefaultPolicy

    client = session.client
    policies = client.get_retry_policies()
    client.set_retry_policies([DefaultPolicy(max_retries=3, initial_backoff=250,
                                             max_backoff=1000)])
    # the client warns RETRIES_EXCEEDED (from whichever thread gave up) besides
    # raising; strata says it once, as E070
    warnings.filterwarnings("ignore", message=r"\[RETRIES_EXCEEDED\]")
    try:
        _frame(session, "SELECT 1").collect()  # one round trip (see `_frame`)
    finally:
        client.set_retry_policies(policies)


def _grpc_details(err: BaseException) -> BaseException | str:
    """A gRPC failure's `details = "..."` line (what went wrong: connection refused,
    unknown host), not the repr of the call object that heads its message."""
    found = re.search(r'details = "([^"]*)"', str(err))
    return found.group(1) if found else err


def _pid_namespace() -> str:
    """This process's PID namespace (two containers may share a host name, not this)."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return "?"


def lock_owner() -> str:
    """The lock table's owner text: who holds it (as errors show it), and where its
    process id means something."""
    return f"{owner_text()} [{_pid_namespace()}]"


_OWNER = re.compile(r"^pid (\d+) on (.+) \[(.+)\]$")


def dead_here(owner: str | None) -> bool:
    """The lock's holder ran on this machine, in this PID namespace, and its process
    is gone: a writer killed moments ago need not block the next command for a whole
    lease. (A recycled pid only makes the holder look alive: the lease still ends it.)"""
    found = _OWNER.match(owner or "")
    if not found or found[2] != socket.gethostname() or found[3] != _pid_namespace():
        return False
    try:
        os.kill(int(found[1]), 0)
    except ProcessLookupError:
        return True
    except OSError:  # alive, owned by another user
        return False
    return False


def not_warehouse_state(rel: str) -> bool:
    """Files in DIR that say nothing of the warehouse: the lock, Derby's log of its own
    messages, the no-op record (run/quiet.py) and a file being written by rename."""
    return rel in (LOCK_FILE, "derby.log", NOOP_RECORD) or rel.startswith(".strata-")


class DirLock:
    """An exclusive flock on DIR/strata.lock; the file says who holds it."""

    def __init__(self, directory: str):
        self.path = Path(directory) / LOCK_FILE
        self.fd: int | None = None

    def try_take(self) -> bool:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, owner_text().encode())
        self.fd = fd
        return True

    def holder(self) -> str | None:
        with contextlib.suppress(OSError):
            return self.path.read_text().strip() or None
        return None

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing the descriptor releases the flock
            self.fd = None


def _is_connect(session: Any) -> bool:
    return type(session).__module__.startswith("pyspark.sql.connect")


def _frame(session: Any, text: str) -> Any:
    """A frame for a statement read for its rows, made without a round trip: on Spark
    Connect over the SQL relation itself (parsed and run by the server when the frame
    is collected); a local session's `sql` analyses in this process anyway."""
    if not _is_connect(session):
        return session.sql(text)
    from pyspark.sql.connect.dataframe import DataFrame
    from pyspark.sql.connect.plan import SQL

    return DataFrame(SQL(text), session)


def _ran(frame: Any) -> bool:
    """Did `session.sql` run the statement already? Always in a local session (Spark
    runs commands eagerly); on Spark Connect when the server answered with the
    command's result (a cached relation), not with a plan still to run."""
    plan = getattr(frame, "_plan", None)
    if plan is None:
        return True
    from pyspark.sql.connect.plan import CachedRelation

    return isinstance(plan, CachedRelation)


# the names saveAsTable's parser takes as they are: physical names (`encode_name`)
_PLAIN = re.compile(r"[a-z0-9_]+")


def _observer(session: Any) -> tuple[Any, Any]:
    """`expr` and a new Observation of the session's kind (a process may hold a
    Connect client and a local session: pyspark's own choice follows the process)."""
    if _is_connect(session):
        from pyspark.sql.connect.functions.builtin import expr
        from pyspark.sql.connect.observation import Observation
    else:
        from pyspark.sql.functions.builtin import expr
        from pyspark.sql.observation import Observation
    return expr, Observation()


def _observed(observation: Any, count: int) -> list | None:
    """The observed metrics m0..m{count-1} of an action that has returned, or None
    where one is missing: a Connect client's `get` is {} when the server sent none. A
    local session completes an observation as its query ends, before the action
    returns; one not complete then is taken as missing (`get` would wait for it)."""
    handle = getattr(observation, "_jo", None)
    if handle is not None and not handle.future().isCompleted():
        return None
    found = observation.get
    names = [f"m{i}" for i in range(count)]
    if not all(found.get(n) is not None for n in names):
        return None
    return [found[n] for n in names]


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _view_text(info: str) -> str | None:
    """The `View Text` of SHOW TABLE EXTENDED's `information` (`key: value` lines; a
    view's text may span lines). Spark keeps the text twice, as `View Text` and
    `View Original Text`; the split is taken where both agree, and only if exactly
    one place does (else None: the caller asks DESCRIBE)."""
    head, tail = "\nView Text: ", "\nView Original Text: "
    start = info.find(head)
    if start < 0:
        return None
    start += len(head)
    found = []
    at = info.find(tail, start)
    while at >= 0:
        text = info[start:at]
        if info.startswith(text + "\n", at + len(tail)):
            found.append(text)
        at = info.find(tail, at + 1)
    return found[0] if len(found) == 1 else None


class CatalogueMemory:
    """What one command learnt of the catalogue (relations and view texts by schema),
    so it is listed once, not before every step that asks (a Spark Connect catalogue
    call is a round trip; a run asked for the branch's views five times). Only while
    `on` (Warehouse turns it on for a command: an adapter used for longer is asked
    afresh). The command's own DDL keeps it true: a view it creates or drops, a table
    it creates or drops, is written here too; any other DDL forgets the schema."""

    def __init__(self) -> None:
        self.on = False
        self._relations: dict[str, dict[str, str]] = {}
        self._views: dict[str, dict[str, str]] = {}
        self._schemas: set[str] = set()  # known to exist
        self._lock = threading.Lock()  # build lanes share this adapter

    def relations(self, schema: str) -> dict[str, str] | None:
        with self._lock:
            found = self._relations.get(schema)
            return dict(found) if found is not None else None

    def views(self, schema: str) -> dict[str, str] | None:
        with self._lock:
            found = self._views.get(schema)
            return dict(found) if found is not None else None

    def keep_relations(self, schema: str, found: dict[str, str], exists: bool) -> None:
        if self.on:
            with self._lock:
                self._relations[schema] = dict(found)
                if exists:
                    self._schemas.add(schema)

    def has_schema(self, schema: str) -> bool:
        with self._lock:
            return schema in self._schemas

    def keep_views(self, schema: str, found: dict[str, str]) -> None:
        if self.on:
            with self._lock:
                self._views[schema] = dict(found)

    def added(self, target: Relation, kind: str, text: str | None = None) -> None:
        with self._lock:
            if target.schema in self._relations:
                self._relations[target.schema][target.name] = kind
            views = self._views.get(target.schema)
            if views is not None:
                if kind == "view" and text is not None:
                    views[target.name] = text
                else:
                    views.pop(target.name, None)

    def removed(self, target: Relation) -> None:
        with self._lock:
            self._relations.get(target.schema, {}).pop(target.name, None)
            self._views.get(target.schema, {}).pop(target.name, None)

    def forget(self, schema: str | None = None) -> None:
        with self._lock:
            for kept in (self._relations, self._views):
                if schema is None:
                    kept.clear()
                else:
                    kept.pop(schema, None)
            if schema is None:
                self._schemas.clear()
            else:
                self._schemas.discard(schema)

    def changed(self, tree: exp.Expression) -> None:
        """Keep up with one statement the command ran."""
        if not (self._relations or self._views or self._schemas):
            return
        # CREATE TABLE t (columns) holds its table inside a schema node
        made = tree.this.this if isinstance(tree, exp.Create) and isinstance(
            tree.this, exp.Schema) else tree.this
        if isinstance(tree, exp.Create) and isinstance(made, exp.Table) \
                and made.name and str(tree.args.get("kind")).upper() in ("TABLE", "VIEW"):
            kind = str(tree.args.get("kind")).lower()
            query = tree.expression
            text = query.sql(dialect=spark_dialect.DIALECT.sqlglot) \
                if kind == "view" and query is not None else None
            self.added(Relation(made.db, made.name), kind, text)
        elif isinstance(tree, exp.Drop) and str(tree.args.get("kind")).upper() in (
                "TABLE", "VIEW"):
            for table in tree.args.get("tables") or []:
                if isinstance(table, exp.Table):
                    self.removed(Relation(table.db, table.name))
        elif isinstance(tree, exp.Create) and str(tree.args.get("kind")).upper() == "SCHEMA":
            # an existing schema stays as it was; a new one was listed empty
            with self._lock:
                self._schemas.add(tree.this.db if isinstance(tree.this, exp.Table)
                                  else tree.this.name)
        elif isinstance(tree, (exp.Create, exp.Drop, exp.Alter, exp.Command)):
            self.forget()


class SparkAdapter(Adapter):
    dialect = spark_dialect.DIALECT
    extra = "spark"
    transactional = False
    hash_sum_type = "DECIMAL(38, 0)"
    table_properties = (exp.FileFormatProperty(this=exp.var("PARQUET")),)
    constraints = False  # a Parquet table keeps no key; the writer lock stands in

    def delete_rows(self, target: Relation, where: exp.Expression) -> None:
        """A Parquet table takes no DELETE: the rows kept are copied aside and written
        back over the table (INSERT OVERWRITE), then the copy is dropped. Spark has no
        transaction; the writer lock keeps other writers out meanwhile."""
        kept = Relation(target.schema, target.name + "_kept")
        self.drop(kept, "table")
        self.create_table_as(kept, exp.select(exp.Star()).from_(target.table()).where(
            exp.Not(this=exp.Paren(this=where))))
        self.execute(exp.insert(exp.select(exp.Star()).from_(kept.table()), target.table(),
                                overwrite=True))
        self.drop(kept, "table")

    def __init__(self, session: Any, where: str, schema: str = INTERNAL,
                 lease: float = LEASE_SECONDS):
        super().__init__(where)
        self.session = session
        self.schema = schema
        self.lease = lease
        self.dir_lock: DirLock | None = None
        self.owns_session = False
        self._beat: threading.Event | None = None
        self.catalogue = CatalogueMemory()

    # ------------------------------------------------------------ opening
    @classmethod
    def open(cls, location: SparkDir | SparkConnect, write: bool = True,
             lock_timeout: float = 10.0, schema: str = INTERNAL) -> SparkAdapter:
        if isinstance(location, SparkDir):
            return cls._open_dir(location, write, lock_timeout, schema)
        return cls._open_connect(location, write, lock_timeout, schema)

    @classmethod
    def _open_dir(cls, location: SparkDir, write: bool, lock_timeout: float,
                  schema: str) -> SparkAdapter:
        from pyspark import SparkContext

        where = location.redacted()
        try:
            os.makedirs(location.directory, exist_ok=True)
        except OSError as err:
            raise engine_failure(where, err) from None
        lock = DirLock(location.directory)
        # Derby admits one JVM per metastore: a reader waits for the writer as well
        wait_for(lock.try_take, lock_timeout, where, lock.holder)
        if SparkContext._active_spark_context is not None:
            lock.release()
            raise fail("E070", f"cannot open the warehouse `{where}`: this process runs "
                       "another Spark session already", None,
                       "one process opens one local Spark warehouse")
        from pyspark.errors import PySparkException

        # the folder as it was before this process's JVM touched it (run/quiet.py)
        before = folder_state(Path(location.directory), cls.not_state)
        try:
            session = local_session(location.directory)
        except (PySparkException, OSError) as err:
            lock.release()
            raise engine_failure(where, err) from None
        adapter = cls(session, where, schema)
        adapter.dir_lock, adapter.owns_session, adapter.locked = lock, True, write
        adapter.own_folder, adapter.folder_before = Path(location.directory), before
        return adapter

    not_state = staticmethod(not_warehouse_state)

    @staticmethod
    def written_by_engine(rel: str) -> bool:
        """Derby's database files: the metastore writes them at every start."""
        return rel == "metastore_db" or rel.startswith("metastore_db/")

    @classmethod
    @contextlib.contextmanager
    def held_folder(cls, location, lock_timeout: float) -> Iterator[Path | None]:
        """spark:DIR: DIR, under its flock (the lock every Strata process takes before
        it starts a JVM there); nothing for a Connect server."""
        if not isinstance(location, SparkDir) or not os.path.isdir(location.directory):
            yield None
            return
        lock = DirLock(location.directory)
        wait_for(lock.try_take, lock_timeout, location.redacted(), lock.holder)
        try:
            yield Path(location.directory)
        finally:
            lock.release()

    @classmethod
    def _open_connect(cls, location: SparkConnect, write: bool, lock_timeout: float,
                      schema: str) -> SparkAdapter:
        from pyspark.errors import PySparkException
        from pyspark.sql import SparkSession

        token = dict(location.params).get("token")
        session = None
        try:
            session = SparkSession.builder.remote(location.remote()).create()
            _probe(session)
            session.conf.set("spark.sql.legacy.allowNonEmptyLocationInCTAS", "true")
        except (PySparkException, OSError) as err:
            if session is not None:  # its channel would keep the process alive; not
                with contextlib.suppress(Exception):  # stop(): it asks the server again
                    session.client.close()
            raise engine_failure(location.redacted(), _grpc_details(err), token) from None
        adapter = cls(session, location.redacted(), schema)
        adapter.owns_session = True
        if write:
            try:
                adapter.acquire_lock(lock_timeout)
            except BaseException:
                adapter.close()
                raise
        return adapter

    # ------------------------------------------------------------ lock (Spark Connect)
    def _lock_relation(self) -> Relation:
        return Relation(self.schema, LOCK_TABLE)

    def acquire_lock(self, timeout: float) -> None:
        """The lock table (see the module docstring). For spark:DIR the folder's flock,
        taken by `open`, is the lock."""
        if self.dir_lock is not None:
            if not self.locked:
                raise fail("E075", f"the warehouse `{self.where}` was opened read-only",
                           None, LOCK_HINT)
            return
        self.create_schema(self.schema)
        wait_for(self._try_lock_table, timeout, self.where, self.lock_holder)
        self.locked = True
        self._beat = threading.Event()
        threading.Thread(target=self._heartbeat, args=(self._beat,), daemon=True).start()

    def _try_lock_table(self) -> bool:
        from pyspark.errors import AnalysisException

        claim = exp.select(exp.alias_(exp.Literal.string(lock_owner()), "owner"),
                           exp.alias_(exp.CurrentTimestamp(), "heartbeat"))
        try:
            self.create_table_as(self._lock_relation(), claim)
            return True
        except AnalysisException as err:
            if "ALREADY_EXISTS" not in str(err):
                raise
        if self._stale():
            self.drop(self._lock_relation(), "table")
        return False

    def _lock_state(self) -> tuple[str | None, float | None]:
        """(owner, seconds since its newest heartbeat by the server's clock)."""
        from pyspark.errors import AnalysisException

        lock = self._lock_relation().table()
        age = exp.Sub(this=exp.Anonymous(this="unix_timestamp", expressions=[]),
                      expression=exp.Anonymous(this="unix_timestamp", expressions=[
                          exp.Max(this=exp.column("heartbeat"))]))
        query = exp.select(exp.Max(this=exp.column("owner")), age).from_(lock)
        try:
            found = self.rows(query)
        except AnalysisException:
            return None, None  # released meanwhile
        owner, seconds = found[0] if found else (None, None)
        return owner, None if seconds is None else float(seconds)

    def _stale(self) -> bool:
        owner, age = self._lock_state()
        return (age is not None and age > self.lease) or dead_here(owner)

    def lock_holder(self) -> str | None:
        if self.dir_lock is not None:
            return self.dir_lock.holder()
        owner, age = self._lock_state()
        if owner is None:
            return None
        return f"{owner}, last heartbeat {age:.0f} s ago; abandoned after {self.lease:g} s"

    def _heartbeat(self, stop: threading.Event) -> None:
        row = exp.select(exp.Literal.string(lock_owner()), exp.CurrentTimestamp())
        while not stop.wait(self.lease / 4):
            with contextlib.suppress(Exception):  # a missed beat only ages the lease
                self.execute(exp.insert(row, self._lock_relation().table()))

    def close(self) -> None:
        if self._beat is not None:
            self._beat.set()
            self._beat = None
            if self.locked:
                with contextlib.suppress(Exception):
                    self.drop(self._lock_relation(), "table")
        self.locked = False
        if self.owns_session:
            with contextlib.suppress(Exception):
                self.session.stop()
            # the JVM still holds the metastore (Derby admits one): no other process
            # can change the catalogue while these look at the folder
            calls, self.stopped_calls = self.stopped_calls, []
            for call in calls:
                call()
            stop_recording_jvm()
        if self.dir_lock is not None:
            self.dir_lock.release()

    # ------------------------------------------------------------ transactions
    def begin(self) -> None:
        raise TypeError("Spark has no transactions: publication commits by its history "
                        "entry (check `transactional`)")

    commit = rollback = begin

    # ------------------------------------------------------------ statements
    # Through Spark Connect each `session.sql(text)` is a round trip of its own (the
    # server runs a command there, or analyses a query and hands its plan back), and
    # each `.collect()` another (~0.05-0.2 s each): a statement costs one where it can.
    def execute(self, tree: exp.Expression, params: list | None = None) -> None:
        """A command runs eagerly inside `session.sql` (on Spark Connect and in a local
        session alike): collecting its result would be a second round trip returning
        nothing. A frame that is still lazy (no command after all) is collected."""
        frame = self.session.sql(self.render(tree))
        if not _ran(frame):
            frame.collect()
        self.catalogue.changed(tree)

    def rows(self, tree: exp.Expression, params: list | None = None) -> list[tuple]:
        return [tuple(r) for r in self._query(self.render(tree)).collect()]

    def _query(self, text: str) -> Any:
        """A frame for a statement read for its rows (a query, DESCRIBE, SHOW) without a
        round trip: on Spark Connect a frame over the SQL relation itself (the server
        parses and runs it when the frame is collected), not `session.sql`, which asks
        the server first and runs it again on `.collect()` in a second trip."""
        return _frame(self.session, text)

    def rows_text(self, text: str) -> list[tuple]:
        return [tuple(r) for r in self.session.sql(self.with_routines(text)).collect()]

    # ------------------------------------------------------------ run primitives
    def engine_errors(self) -> tuple[type[BaseException], ...]:
        from pyspark.errors import PySparkException

        return (PySparkException,)

    def missing_relation(self, err: BaseException) -> bool:
        return any(k in str(err) for k in ("TABLE_OR_VIEW_NOT_FOUND", "SCHEMA_NOT_FOUND",
                                           "PATH_NOT_FOUND"))

    def bad_value(self, err: BaseException) -> bool:
        return any(k in str(err) for k in ("CAST_INVALID_INPUT", "NUMERIC_VALUE_OUT_OF_RANGE",
                                           "CAST_OVERFLOW"))

    def physical_name(self, logical: str) -> str:
        return encode_name(logical)

    def logical_name(self, physical: str) -> str:
        """The inverse of `physical_name`: `__` is `_`, `_xHHHH_` the character HHHH."""
        out, i = [], 0
        while i < len(physical):
            if physical.startswith("__", i):
                out.append("_")
                i += 2
            elif physical.startswith("_x", i) and physical.find("_", i + 2) > i + 2:
                end = physical.find("_", i + 2)
                try:
                    out.append(chr(int(physical[i + 2:end], 16)))
                    i = end + 1
                except ValueError:  # not one of ours: as it stands
                    out.append(physical[i])
                    i += 1
            else:
                out.append(physical[i])
                i += 1
        return "".join(out)

    def reads_file(self, path: str) -> bool:
        """Parquet in place; a CSV is loaded (Spark's CSV reader infers other types)."""
        return path.lower().endswith((".parquet", ".pq"))

    @property
    def shares_files(self) -> bool:
        """A local session reads the files this process sees; a Connect server its own."""
        return not _is_connect(self.session)

    def table_folder(self, relation: exp.Expression) -> Path | None:
        """A local file-format table's location folder (where every file it reads
        is: Spark lists a Hive table's location)."""
        info = self._file_table(relation)
        if info is None:
            return None
        location = urlparse(info["Location"])
        return Path(unquote(location.path)) if location.scheme == "file" else None

    def _file_table(self, relation: exp.Expression) -> dict[str, str] | None:
        """DESCRIBE TABLE EXTENDED of a managed or external table of a file format at
        a local location; None for anything else (a view, Delta, hdfs:, no table)."""
        if _is_connect(self.session) or not isinstance(relation, exp.Table):
            return None
        try:
            described = self.session.sql(
                f"DESCRIBE TABLE EXTENDED {self.render(relation)}").collect()
        except self.engine_errors():
            return None
        info = {str(r[0]).strip(): str(r[1]).strip() for r in described if r[0]}
        if info.get("Type") not in ("MANAGED", "EXTERNAL") or \
                info.get("Provider", "").lower() not in FILE_TABLES or \
                not info.get("Location", "").startswith("file:"):
            return None
        return info

    def table_marker(self, relation: exp.Expression) -> str | None:
        """The files a file-format table reads, as its catalogue lists them after a
        REFRESH (what a scan would read; a folder stands for the files under it, as a
        Hive table lists its location), stat'ed here (strata.engine.markers): every
        INSERT, INSERT OVERWRITE or TRUNCATE writes or removes files, and a file
        changed in place moves its change time. None, so the source is hashed, for a
        view (its text may change over the same files), a format that changes data
        without new files (Delta's deletion vectors), files this process cannot stat
        (hdfs:, s3a:) and Spark Connect (the server's files)."""
        info = self._file_table(relation)
        if info is None:
            return None
        name = self.render(relation)
        try:
            self.session.sql(f"REFRESH TABLE {name}").collect()
            files = [urlparse(f) for f in self.session.sql(f"SELECT * FROM {name}").inputFiles()]
        except self.engine_errors():
            return None  # no such table: the contract check says so (E071)
        if any(f.scheme != "file" for f in files):
            return None
        identity = [info.get(k) for k in ("Type", "Provider", "Location", "Created Time")]
        return files_marker([Path(unquote(f.path)) for f in files], identity)

    def load_table(self, target: Relation, columns: list[tuple[str, exp.DataType]],
                   batches) -> None:
        """The rows as an Arrow table into a Parquet table (Spark Connect uploads it)."""
        import pyarrow as pa

        data = pa.Table.from_batches(list(batches))
        frame = self.session.createDataFrame(data)
        # the parts are physical names ([a-z0-9_]): no quoting (saveAsTable's name
        # parser refuses some quoted names the SQL parser reads)
        frame.write.format("parquet").saveAsTable(f"{target.schema}.{target.name}")
        self.catalogue.added(target, "table")

    def build_table_hashed(self, target: Relation, query: exp.Expression | None,
                           text: str | None = None) -> Hashed | None:
        """CREATE TABLE AS and the new table's content hash in one job: the query's
        frame observed (`DataFrame.observe`: the aggregates of `row_hash_query`, over
        the rows as they are written) and written by `saveAsTable` in the CTAS's
        format. Spark plans both as the same command (CreateDataSourceTableAsSelect):
        the same provider, columns and types, and a folder a killed writer left met
        alike (written over when empty, refused when it holds files: Spark 4.3, any
        allowNonEmptyLocationInCTAS). Hashing after was a second
        job reading every table just written. The record's columns still come from
        the catalogue; where they are not the frame's (names or types), or a metric
        did not come back, the table is hashed after as before: never a hash the
        table's own would not equal. None (nothing built) where the CTAS has
        properties besides its format, or a name saveAsTable would parse otherwise."""
        written = self._table_format()
        if written is None or not all(_PLAIN.fullmatch(n) for n in (target.schema, target.name)):
            return None
        frame = self._query(self.render(query) if query is not None else self.with_routines(text))
        made = frame.dtypes  # analysed, no job (Connect: one round trip)
        expr, observation = _observer(self.session)
        metrics = [expr(self.dialect.render(m, pretty=False)).alias(f"m{i}")
                   for i, m in enumerate(self.row_hash_aggregates([c for c, _ in made]))]
        frame.observe(observation, *metrics).write.format(written).saveAsTable(
            f"{target.schema}.{target.name}")
        self.catalogue.added(target, "table")
        columns = self.snapshot_columns(target)
        found = _observed(observation, len(metrics))
        if found is None or [list(c) for c in columns] != [list(c) for c in made]:
            hashed = self.hash_tables(target.schema, [target.name])[target.name][1]
        else:
            hashed = RowHash(*(int(v) for v in found))
        return Hashed(hashed.count, columns, hashed)

    def _table_format(self) -> str | None:
        """The format a CTAS gives its tables (`table_properties`), when that is all it
        gives them."""
        props = self.table_properties
        if len(props) == 1 and isinstance(props[0], exp.FileFormatProperty):
            return props[0].name
        return None

    # ------------------------------------------------------------ catalogue
    def remember_catalogue(self) -> None:
        self.catalogue.on = True

    def relations(self, schema: str) -> dict[str, str]:
        """Spark SQL has no information_schema: SHOW TABLES names every table and view
        of the schema, SHOW VIEWS says which are views. Not `catalog.listTables`: it
        fetches each table's metadata from the metastore, one call a table (3.5 s for
        62 tables on a local Derby catalog where the two SHOWs took 0.44 s), and the
        internal schema grows by a table a model a run. A missing schema is {}
        (SCHEMA_NOT_FOUND: no databaseExists round trip before it)."""
        known = self.catalogue.relations(schema)
        if known is not None:
            return known
        from pyspark.errors import AnalysisException

        try:
            listed = self._names(f"SHOW TABLES IN {_quoted(schema)}")
        except AnalysisException as err:
            if "SCHEMA_NOT_FOUND" not in str(err):
                raise
            listed = None
        views = self._names(f"SHOW VIEWS IN {_quoted(schema)}") if listed else set()
        found = {name: "view" if name in views else "table" for name in listed or ()}
        self.catalogue.keep_relations(schema, found, exists=listed is not None)
        return dict(found)

    def _names(self, show: str) -> set[str]:
        """The non-temporary names a SHOW TABLES / SHOW VIEWS lists (namespace, name,
        isTemporary: a session's temporary views are listed in every schema)."""
        return {row[1] for row in self._query(show).collect() if not row[2]}

    def create_schema(self, schema: str) -> None:
        """CREATE SCHEMA IF NOT EXISTS, skipped where this command listed the schema
        (or made it) already: a round trip that changes nothing."""
        if not self.catalogue.has_schema(schema):
            super().create_schema(schema)

    def columns(self, target: Relation) -> list[tuple[str, str]]:
        # through SQL, not session.table(name): its name parser refuses a quoted
        # name holding a backtick, which the SQL parser reads
        return list(self._query(self.render(select_all(target).limit(0))).dtypes)

    def query_columns(self, query: exp.Expression) -> list[tuple[str, str]]:
        """The analyzed plan's schema: Spark resolves it without running a job."""
        return list(self._query(self.render(query)).dtypes)

    # ------------------------------------------------------------ bookkeeping (gc, branches)
    def schema_exists(self, schema: str) -> bool:
        return bool(self.session.catalog.databaseExists(schema))

    def view_texts(self, schema: str | None = None) -> list[tuple[str, str, str]]:
        """Each view's text as the metastore keeps it (`View Text`: what CREATE VIEW
        said). Without a schema: every database but the internal one."""
        catalog = self.session.catalog
        schemas = ([schema] if schema is not None else
                   sorted(d.name for d in catalog.listDatabases() if d.name != self.schema))
        return [(name, view, text) for name in schemas
                for view, text in sorted(self._schema_views(name).items())]

    def _schema_views(self, schema: str) -> dict[str, str]:
        """view -> its text in one schema, from one SHOW TABLE EXTENDED (every table's
        type and view text in one round trip; DESCRIBE asked once a view). Kept for
        the command when the warehouse remembers its catalogue."""
        known = self.catalogue.views(schema)
        if known is not None:
            return known
        from pyspark.errors import AnalysisException

        show = f"SHOW TABLE EXTENDED IN {_quoted(schema)} LIKE '*'"
        try:
            listed = self._query(show).collect()
        except AnalysisException as err:
            if "SCHEMA_NOT_FOUND" not in str(err):
                raise
            listed = None
        kinds, texts = {}, {}
        for row in listed or []:
            if row.isTemporary:
                continue
            info = str(row.information)
            is_view = "\nType: VIEW\n" in info
            kinds[row.tableName] = "view" if is_view else "table"
            if is_view:
                text = _view_text(info)
                texts[row.tableName] = text if text is not None else self._described(
                    Relation(schema, row.tableName))
        texts = {n: t for n, t in texts.items() if t is not None}
        self.catalogue.keep_relations(schema, kinds, exists=listed is not None)
        self.catalogue.keep_views(schema, texts)
        return dict(texts)

    def _described(self, view: Relation) -> str | None:
        """A view's text from DESCRIBE TABLE EXTENDED (where SHOW TABLE EXTENDED's
        listing cannot be split unambiguously)."""
        described = self.rows(exp.Describe(this=view.table(), style="EXTENDED"))
        text = next((r[1] for r in described if r[0] == "View Text"), None)
        return None if text is None else str(text)

    def json_document(self, text: exp.Expression) -> exp.Expression:
        """GET_JSON_OBJECT reads JSON text itself (SQLGlot spells a cast to JSON as
        TO_JSON, which would quote the text as a string)."""
        return text

    # ------------------------------------------------------------ content hashes
    def row_hash_expr(self, columns: list[str]) -> exp.Expression:
        """xxhash64 over each column and whether it is NULL: xxhash64 skips a NULL
        argument, so (NULL, 1) and (1, NULL) would hash alike without the flags."""
        if not columns:
            return exp.Cast(this=exp.Literal.number(0), to=exp.DataType.build("BIGINT"))
        args: list[exp.Expression] = []
        for name in columns:
            col = exp.column(exp.to_identifier(name, quoted=True))
            args += [col, exp.Is(this=col.copy(), expression=exp.Null())]
        return exp.Anonymous(this="xxhash64", expressions=args)
