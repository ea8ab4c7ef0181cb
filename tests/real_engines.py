"""Real engines for the differential suite: DuckDB in memory, a PostgreSQL server the
tests start in a temporary directory, and Spark in local mode. No mocks: the SQL that
`strata build` writes runs on the engine it was written for.

Every engine offers the same small interface, so a test loads identical data into
each and compares what they return:

    engine.name      how a test id names it: duckdb, postgres, spark
    engine.dialect   the Strata dialect whose SQL it runs
    engine.load(table, {"id": "int", "price": "decimal(10, 2)"}, rows)
                     (re)creates `table` with columns of those Strata types
    engine.rows(sql) the result as Python values: Decimal, float, int, str, bool,
                     date, datetime (naive), list, None

PostgreSQL: initdb/postgres from the machine (PATH, or /usr/lib/postgresql/*/bin), run
as an unprivileged user when the tests run as root (postgres refuses root), listening
only on a Unix socket inside the temporary directory, trust auth, fsync off. The
cluster is UTF8 with C collation (DuckDB orders text by code point, and C is the
PostgreSQL collation that does the same) and C.UTF-8 character classes (so upper
and lower know letters beyond ASCII, as DuckDB's do).

A test that needs a warehouse of its own gets a database of its own on that server
(`PostgresEngine.create_database`, dropped after it with its sessions ended). The
differential suite also runs on a database of that server whose collation is ICU's
en-US (`PostgresEngine.icu_engine`), as most installs order text.

Spark: pyspark in local mode (`local[2]`, 2 shuffle partitions, no UI), with Spark
4's default ANSI mode left on. Its session time zone is UTC; a Strata timestamp (no
zone) is loaded and read back as that UTC wall-clock time, so the JVM's and this
process's own zones do not matter.

Spark Connect: Spark's own server (pyspark's sbin/start-connect-server.sh, in the
foreground, `local[2]`), its Hive catalog (Derby) and warehouse in a temporary
directory, listening on a free localhost port; what a `strata -o sc://...` process
talks to without starting a JVM of its own. `SparkConnectServer.reset` drops every
database but `default` (and default's tables and views) between tests.
"""

from __future__ import annotations

import contextlib
import glob
import logging
import math
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import quote

import duckdb
from sqlglot import exp

from dialects import routines
from strata.semantics import types as T

ROOT = Path(__file__).resolve().parent.parent


class EngineUnavailable(Exception):
    """The engine's software is not on this machine (or would not start)."""


# ---------------------------------------------------------------------------
# Strata type names -> types, and Python values coerced to them


_DECIMAL = re.compile(r"decimal\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)$")


def parse_type(name: str) -> T.Type:
    """A Strata type as written in a module: int, double, decimal(p, s), text, bool,
    date, timestamp, list<T>."""
    text = name.strip().lower()
    if text.startswith("list<") and text.endswith(">"):
        return T.list_of(parse_type(text[5:-1]))
    if match := _DECIMAL.match(text):
        return T.decimal(int(match[1]), int(match[2]))
    if text in T.SCALAR_NAMES and text != "decimal":
        return T.Type(text)
    raise ValueError(f"not a Strata type: {name!r}")


def coerce(value: Any, typ: T.Type) -> Any:
    """`value` as the Python type an engine driver expects for a column of `typ` (an
    int for a double column becomes a float, a float for a decimal a Decimal)."""
    if value is None:
        return None
    if typ.kind == "list":
        return [coerce(v, typ.element) for v in value]
    if typ.kind == "double":
        return float(value)
    if typ.kind == "decimal":
        return value if isinstance(value, Decimal) else Decimal(str(value))
    if typ.kind == "int":
        return int(value)
    if typ.kind == "timestamp" and isinstance(value, str):
        return datetime.fromisoformat(value)
    if typ.kind == "date" and isinstance(value, str):
        return date.fromisoformat(value)
    return value


def _typed(columns: dict[str, str], rows: list[tuple]) -> tuple[list[T.Type], list[tuple]]:
    types = [parse_type(t) for t in columns.values()]
    for row in rows:
        if len(row) != len(types):
            raise ValueError(f"row {row!r} has {len(row)} values for {len(types)} columns")
    return types, [tuple(coerce(v, t) for v, t in zip(row, types, strict=True)) for row in rows]


def _create_table(table: str, columns: dict[str, str], dialect: str) -> str:
    """CREATE TABLE for `columns`, rendered by SQLGlot for `dialect`."""
    schema = exp.Schema(this=exp.to_table(table), expressions=[
        exp.ColumnDef(this=exp.to_identifier(name, quoted=True),
                      kind=parse_type(typ).to_sqlglot())
        for name, typ in columns.items()])
    return exp.Create(this=schema, kind="TABLE").sql(dialect=dialect)


def _drop_table(table: str, dialect: str) -> str:
    return exp.Drop(tables=[exp.to_table(table)], kind="TABLE", exists=True).sql(dialect=dialect)


def _insert(table: str, width: int, dialect: str, mark: str) -> str:
    """INSERT INTO table VALUES (<mark>, ...): the driver binds the values."""
    values = exp.Tuple(expressions=[exp.var(mark) for _ in range(width)])
    return exp.insert(exp.values([values]), exp.to_table(table)).sql(dialect=dialect)


# ---------------------------------------------------------------------------
# DuckDB


@dataclass
class DuckDBEngine:
    """DuckDB in memory: the engine whose results are Strata's meaning (SPEC §2)."""

    name: str = "duckdb"
    dialect: str = "duckdb"
    con: duckdb.DuckDBPyConnection = field(default_factory=duckdb.connect)

    def load(self, table: str, columns: dict[str, str], rows: list[tuple]) -> None:
        _, values = _typed(columns, rows)
        self.con.execute(_drop_table(table, "duckdb"))
        self.con.execute(_create_table(table, columns, "duckdb"))
        if values:
            self.con.executemany(_insert(table, len(columns), "duckdb", "?"), values)

    def rows(self, sql: str) -> list[tuple]:
        # relative file paths in the SQL are relative to the repository root, where
        # `strata build` ran (tests/example_modules.py)
        with contextlib.chdir(ROOT):
            return [tuple(r) for r in self.con.execute(sql).fetchall()]

    def close(self) -> None:
        self.con.close()


# ---------------------------------------------------------------------------
# PostgreSQL


def _pg_bindir() -> Path:
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    # the newest version installed (numerically: 15 after 9.6)
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                        key=lambda p: [int(n) for n in re.findall(r"\d+", p)])
    if candidates:
        return Path(candidates[-1]).parent
    raise EngineUnavailable("PostgreSQL: no `initdb` on PATH or in /usr/lib/postgresql")


def _server_user() -> pwd.struct_passwd | None:
    """Who runs the server: this process's user, unless that is root, which postgres
    refuses; then the `postgres` account, or `nobody`."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            return pwd.getpwnam(name)
    raise EngineUnavailable("PostgreSQL: running as root and no `postgres` or `nobody` user")


@dataclass
class PostgresServer:
    """A throwaway cluster in `root`, reachable only through its Unix socket there."""

    root: Path
    bindir: Path
    user: pwd.struct_passwd | None

    @property
    def data(self) -> Path:
        return self.root / "data"

    def _run(self, *args: str) -> subprocess.CompletedProcess:
        cmd = [str(self.bindir / args[0]), *args[1:]]
        if self.user is not None and shutil.which("setpriv"):
            cmd = ["setpriv", f"--reuid={self.user.pw_uid}", f"--regid={self.user.pw_gid}",
                   "--clear-groups", "--", *cmd]
        elif self.user is not None:
            cmd = ["runuser", "-u", self.user.pw_name, "--", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                              cwd=self.root, check=False)

    def start(self) -> None:
        if self.user is not None:
            os.chown(self.root, self.user.pw_uid, self.user.pw_gid)
        done = self._run("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust",
                         "-E", "UTF8", "--lc-collate=C", "--lc-ctype=C.UTF-8",
                         "--no-sync")
        if done.returncode != 0:
            raise EngineUnavailable(f"PostgreSQL initdb failed: {done.stderr.strip()}")
        with open(self.data / "postgresql.conf", "a") as conf:
            conf.write(f"\nlisten_addresses = ''\nunix_socket_directories = '{self.root}'\n"
                       "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
                       "timezone = 'UTC'\nmax_connections = 20\n")
        done = self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "server.log"),
                         "-w", "-t", "60", "start")
        if done.returncode != 0:
            log = (self.root / "server.log").read_text(errors="replace")[-2000:]
            raise EngineUnavailable(f"PostgreSQL did not start: {done.stderr.strip()}\n{log}")

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")


# a database collated by ICU's en-US (its character classes C.UTF-8, as the cluster's)
ICU_OPTIONS = (" TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER icu ICU_LOCALE 'en-US' "
               "LC_COLLATE 'C' LC_CTYPE 'C.UTF-8'")


def declare_functions(engine: Any, sql: str, create_schema: str) -> None:
    """The functions Strata owns that `sql` calls (dialects/routines.py), declared
    in `strata_internal` first, as an adapter does before running it."""
    if routines.CALLED not in sql or not routines.used_in([sql]):
        return
    made = engine.__dict__.setdefault("_functions_made", routines.Made())
    if not made.names:
        engine_run(engine, create_schema)
    made.ensure(sql, lambda text: engine_run(engine, text))


def engine_run(engine: Any, text: str) -> None:
    if hasattr(engine, "con"):
        with engine.con.cursor() as cur:
            cur.execute(text)
    else:
        engine.session.sql(text).collect()


@dataclass
class PostgresEngine:
    """PostgreSQL through psycopg 3, autocommit: one statement, one transaction."""

    server: PostgresServer
    con: Any
    name: str = "postgres"
    dialect: str = "postgres"
    database: str | None = None  # a database of the server's this engine alone uses

    def load(self, table: str, columns: dict[str, str], rows: list[tuple]) -> None:
        _, values = _typed(columns, rows)
        with self.con.cursor() as cur:
            cur.execute(_drop_table(table, "postgres"))
            cur.execute(_create_table(table, columns, "postgres"))
            if values:
                cur.executemany(_insert(table, len(columns), "postgres", "%s"), values)

    def rows(self, sql: str) -> list[tuple]:
        declare_functions(self, sql, 'CREATE SCHEMA IF NOT EXISTS "strata_internal"')
        with self.con.cursor() as cur:
            # autocommit: a failed statement leaves the connection usable
            cur.execute(sql)
            return [tuple(r) for r in cur.fetchall()] if cur.description else []

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.con.close()
        if self.database is not None:
            return  # the server is the session engine's, which stops it
        self.server.stop()
        shutil.rmtree(self.server.root, ignore_errors=True)

    def icu_engine(self) -> PostgresEngine:
        """The same server's database `strata_icu`, whose collation is ICU's en-US (the
        default of most installs orders text so: '_' and '~' before digits, 'a' before
        'B'), as an engine of its own: text comparisons that must mean DuckDB's code
        point order say so there, or differ. A database, not a second server."""
        import psycopg

        self.con.execute('CREATE DATABASE "strata_icu"' + ICU_OPTIONS)
        con = psycopg.connect(host=str(self.server.root), user="postgres", dbname="strata_icu",
                              autocommit=True, prepare_threshold=None)
        return PostgresEngine(self.server, con, name="postgres_icu", database="strata_icu")

    def url(self, database: str = "postgres") -> str:
        """The `-o` location of `database` on this server: its Unix socket folder,
        percent-encoded as the host (strata/engine/locations.py)."""
        return f"postgresql://postgres@{quote(str(self.server.root), safe='')}/{database}"

    def create_database(self, icu: bool = False) -> str:
        """A new empty database (a copy of template1) with a name of its own; `icu`:
        collated by ICU's en-US instead (a copy of template0, as PostgreSQL requires)."""
        name = "w_" + uuid.uuid4().hex[:12]
        create = exp.Create(this=exp.to_identifier(name, quoted=True), kind="DATABASE")
        self.con.execute(create.sql(dialect="postgres") + (ICU_OPTIONS if icu else ""))
        return name

    def drop_database(self, name: str) -> None:
        """Drop `name`, ending its sessions first (a writer the test killed may still
        be connected until the server notices; DROP refuses a database in use)."""
        from psycopg.errors import ObjectInUse

        drop = exp.Drop(tables=[exp.Table(this=exp.to_identifier(name, quoted=True))],
                        kind="DATABASE", exists=True).sql(dialect="postgres")
        for attempt in range(5):
            self.con.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                             "WHERE datname = %s AND pid <> pg_backend_pid()", [name])
            try:
                self.con.execute(drop)
                return
            except ObjectInUse:  # a session connected in between, or not yet gone
                if attempt == 4:
                    raise
                time.sleep(0.2)


def start_postgres() -> PostgresEngine:
    """A fresh PostgreSQL server in a temporary directory, and a connection to it."""
    try:
        import psycopg
    except ImportError as err:
        raise EngineUnavailable("PostgreSQL: psycopg is not installed") from err
    server = PostgresServer(Path(tempfile.mkdtemp(prefix="strata-pg-")), _pg_bindir(),
                            _server_user())
    try:
        server.start()
        # no prepared statements: a table reloaded with other column types would
        # reuse an INSERT prepared for the old ones (a None then binds as text)
        con = psycopg.connect(host=str(server.root), user="postgres", dbname="postgres",
                              autocommit=True, prepare_threshold=None)
    except BaseException:
        server.stop()
        shutil.rmtree(server.root, ignore_errors=True)
        raise
    return PostgresEngine(server, con)


# ---------------------------------------------------------------------------
# Spark


def _spark_type(typ: T.Type):
    from pyspark.sql import types as S

    if typ.kind == "list":
        return S.ArrayType(_spark_type(typ.element), containsNull=True)
    if typ.kind == "decimal":
        return S.DecimalType(typ.precision, typ.scale)
    return {"int": S.LongType(), "double": S.DoubleType(), "text": S.StringType(),
            "bool": S.BooleanType(), "date": S.DateType(),
            "timestamp": S.TimestampType()}[typ.kind]


def _to_spark(value: Any, typ: T.Type) -> Any:
    """A naive timestamp is UTC wall-clock time: made aware so pyspark does not read
    it in this process's zone."""
    if value is None:
        return None
    if typ.kind == "list":
        return [_to_spark(v, typ.element) for v in value]
    if typ.kind == "timestamp":
        return value.replace(tzinfo=UTC)
    return value


def _from_spark(value: Any) -> Any:
    """pyspark returns a TIMESTAMP as a naive datetime in this process's zone: back to
    the UTC wall-clock time; a Row inside an array as a tuple."""
    if isinstance(value, datetime) and value.tzinfo is None:
        return value.astimezone(UTC).replace(tzinfo=None)
    if isinstance(value, list):
        return [_from_spark(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_from_spark(v) for v in value)
    return value


@dataclass
class SparkEngine:
    """One local Spark session; tables are temporary views over in-memory data."""

    session: Any
    warehouse: Path
    name: str = "spark"
    dialect: str = "spark"

    def load(self, table: str, columns: dict[str, str], rows: list[tuple]) -> None:
        from pyspark.sql import types as S

        types, values = _typed(columns, rows)
        schema = S.StructType([S.StructField(n, _spark_type(t), True)
                               for n, t in zip(columns, types, strict=True)])
        data = [tuple(_to_spark(v, t) for v, t in zip(row, types, strict=True))
                for row in values]
        frame = self.session.createDataFrame(data, schema=schema, verifySchema=False)
        frame.createOrReplaceTempView(table)

    def rows(self, sql: str) -> list[tuple]:
        declare_functions(self, sql, "CREATE DATABASE IF NOT EXISTS strata_internal")
        return [tuple(_from_spark(v) for v in r) for r in self.session.sql(sql).collect()]

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.session.stop()
        shutil.rmtree(self.warehouse, ignore_errors=True)


def start_spark() -> SparkEngine:
    """A local Spark session, started with the repository root as its working
    directory: relative file paths in built SQL are relative to where `build` ran."""
    try:
        from pyspark.sql import SparkSession
    except ImportError as err:
        raise EngineUnavailable("Spark: pyspark is not installed") from err
    if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
        raise EngineUnavailable("Spark: no `java` on PATH and no JAVA_HOME")
    # the driver binds to loopback: no lookup of this machine's name, no warning about it
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    warehouse = Path(tempfile.mkdtemp(prefix="strata-spark-"))
    utc = "-Duser.timezone=UTC -Dderby.system.home=" + str(warehouse)
    builder = (SparkSession.builder.master("local[2]").appName("strata-differential")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.default.parallelism", "2")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.warehouse.dir", str(warehouse / "warehouse"))
               .config("spark.driver.extraJavaOptions", utc)
               .config("spark.driver.memory", "1g")
               .config("spark.sql.adaptive.enabled", "false")
               # tiny tables: compiling a whole stage costs more than it saves
               .config("spark.sql.codegen.wholeStage", "false"))
    try:
        with contextlib.chdir(ROOT):
            session = builder.getOrCreate()
    except Exception as err:
        shutil.rmtree(warehouse, ignore_errors=True)
        raise EngineUnavailable(f"Spark did not start: {err}") from err
    session.sparkContext.setLogLevel("ERROR")
    # pyspark logs every failed statement with its JVM stack (tens of KB) before
    # raising; the test reports the error itself, so the log only buries CI's output
    logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)
    return SparkEngine(session, warehouse)


# ---------------------------------------------------------------------------
# Spark Connect


def free_port() -> int:
    """A localhost TCP port nobody listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


@dataclass
class SparkConnectServer:
    """A Spark Connect server this process started, and a Connect client to it that
    cleans its catalog between tests."""

    root: Path
    port: int
    process: subprocess.Popen
    client: Any = None
    owns_root: bool = True  # False: a warehouse folder the caller keeps

    @property
    def url(self) -> str:
        return f"sc://127.0.0.1:{self.port}"

    def log_tail(self) -> str:
        logs = sorted((self.root / "logs").glob("*.out")) + [self.root / "server.out"]
        return "\n".join(p.read_text(errors="replace")[-2000:] for p in logs if p.exists())

    def reset(self) -> None:
        """Every database but `default` dropped with what it holds, and default's own
        tables and views: the next test starts from an empty catalog."""
        for (name,) in self.client.sql("SHOW DATABASES").collect():
            if name != "default":
                self._drop(exp.Table(this=exp.to_identifier(name, quoted=True)), "DATABASE")
        for table in self.client.catalog.listTables("default"):
            if not table.isTemporary:
                self._drop(exp.Table(this=exp.to_identifier(table.name, quoted=True),
                                     db=exp.to_identifier("default", quoted=True)),
                           "VIEW" if table.tableType == "VIEW" else "TABLE")

    def _drop(self, target: exp.Table, kind: str) -> None:
        drop = exp.Drop(tables=[target], kind=kind, exists=True, cascade=kind == "DATABASE")
        self.client.sql(drop.sql(dialect="spark")).collect()

    def close(self) -> None:
        if self.client is not None:
            with contextlib.suppress(Exception):
                self.client.client.close()  # not stop(): that asks the server again
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=60)
        if self.owns_root:
            shutil.rmtree(self.root, ignore_errors=True)


# A JVM that lives for a few statements spends most of its CPU in the JIT's optimising
# compiler (C2): a test's short-lived Spark (a `spark:DIR` CLI process, a server started
# for one test) stops at C1. Measured on the spark:DIR kill test: 154 -> 87 CPU-seconds.
# The session's long-lived server keeps C2: there C1-only was 20% slower.
SHORT_LIVED_JVM = "-XX:TieredStopAtLevel=1"


def _connect_server_command(root: Path, port: int, short_lived: bool = False,
                            conf: dict[str, str] | None = None
                            ) -> tuple[list[str], dict[str, str]]:
    """spark-submit's command for a server on `port` in `root`; `conf` overrides the
    tests' settings (bench/engines/run.py: the same session as `spark:DIR`)."""
    import pyspark

    home = Path(pyspark.__file__).parent
    script = home / "sbin" / "start-connect-server.sh"
    if not script.exists():
        raise EngineUnavailable(f"Spark Connect: no {script}")
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOG_DIR": str(root / "logs"),
           "SPARK_PID_DIR": str(root / "logs"), "SPARK_LOCAL_IP": "127.0.0.1"}
    for name in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED"):
        env.pop(name, None)
    metastore = f"jdbc:derby:;databaseName={root / 'metastore_db'};create=true"
    settings = {"spark.connect.grpc.binding.port": str(port),
                "spark.connect.grpc.binding.address": "127.0.0.1",
                "spark.ui.enabled": "false",
                "spark.sql.catalogImplementation": "hive",
                "spark.sql.warehouse.dir": str(root / "warehouse"),
                "spark.hadoop.javax.jdo.option.ConnectionURL": metastore,
                "spark.sql.session.timeZone": "UTC",
                "spark.sql.shuffle.partitions": "2",
                "spark.driver.memory": "1g",
                # as the local session (start_spark): the tests' tables are tiny, where
                # adaptive re-planning and compiling whole stages cost more than they save
                "spark.sql.adaptive.enabled": "false",
                "spark.sql.codegen.wholeStage": "false", **(conf or {})}
    cmd = [str(script), "--wait", "--master", "local[2]"]
    for key, value in settings.items():
        cmd += ["--conf", f"{key}={value}"]
    java = f"-Duser.timezone=UTC -Dderby.system.home={root}"
    cmd += ["--driver-java-options", f"{java} {SHORT_LIVED_JVM}" if short_lived else java]
    return cmd, env


def connect_client(url: str) -> Any:
    """A Connect session to `url`. pyspark marks the whole process as Connect's
    (SPARK_CONNECT_MODE_ENABLED) once one exists, which would turn a local session
    started later in this process (spark_engine) into a Connect client: unmarked."""
    from pyspark.sql import SparkSession

    before = os.environ.get("SPARK_CONNECT_MODE_ENABLED")
    try:
        return SparkSession.builder.remote(url).create()
    finally:
        if before is None:
            os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)
        else:
            os.environ["SPARK_CONNECT_MODE_ENABLED"] = before


def start_spark_connect(seconds: float = 180, root: Path | None = None,
                        short_lived: bool = False, conf: dict[str, str] | None = None
                        ) -> SparkConnectServer:
    """A Spark Connect server on a free localhost port, its catalog in a temporary
    directory, or in `root`: a `spark:DIR` warehouse's folder (its Derby metastore and
    tables), kept when the server stops. Returns once a client's first query is
    answered. `short_lived`: a server for a few statements (SHORT_LIVED_JVM); `conf`:
    Spark settings over the tests' own."""
    try:
        import grpc  # noqa: F401  (the Connect client's transport)
        import pyspark  # noqa: F401
    except ImportError as err:
        raise EngineUnavailable(f"Spark Connect: {err.name} is not installed") from err
    if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
        raise EngineUnavailable("Spark: no `java` on PATH and no JAVA_HOME")
    owns_root = root is None
    root = Path(tempfile.mkdtemp(prefix="strata-sc-")) if root is None else root
    port = free_port()
    cmd, env = _connect_server_command(root, port, short_lived, conf)
    with open(root / "server.out", "wb") as out:
        process = subprocess.Popen(cmd, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
    server = SparkConnectServer(root, port, process, owns_root=owns_root)
    try:
        deadline = time.monotonic() + seconds
        while not _listening(port):
            if process.poll() is not None:
                raise EngineUnavailable(f"Spark Connect server exited:\n{server.log_tail()}")
            if time.monotonic() > deadline:
                raise EngineUnavailable(f"Spark Connect server not listening after "
                                        f"{seconds:.0f} s:\n{server.log_tail()}")
            time.sleep(0.3)
        server.client = connect_client(server.url)
        server.client.sql("SELECT 1").collect()
    except BaseException:
        server.close()
        raise
    return server


# ---------------------------------------------------------------------------
# Comparing results


REL_TOL = 1e-9  # doubles: relative tolerance (and this much absolute near zero)


def same_value(a: Any, b: Any) -> bool:
    """Equal as Strata means it: doubles within REL_TOL (NaN equals NaN), decimals and
    integers exactly by value, timestamps exactly, lists element by element."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, float) or isinstance(b, float):
        if not all(isinstance(v, int | float | Decimal) for v in (a, b)):
            return False
        x, y = float(a), float(b)
        if math.isnan(x) or math.isnan(y):
            return math.isnan(x) and math.isnan(y)
        return math.isclose(x, y, rel_tol=REL_TOL, abs_tol=REL_TOL)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, int | Decimal) and isinstance(b, int | Decimal):
        return a == b
    return type(a) is type(b) and a == b


def same_row(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))


def multiset_difference(expected: list[tuple], got: list[tuple]
                        ) -> tuple[list[tuple], list[tuple]]:
    """(rows expected but not got, rows got but not expected), each row matched at
    most once: the two results are equal as multisets when both lists are empty."""
    remaining = list(got)
    missing: list[tuple] = []
    for row in expected:
        for i, candidate in enumerate(remaining):
            if same_row(row, candidate):
                del remaining[i]
                break
        else:
            missing.append(row)
    return missing, remaining
