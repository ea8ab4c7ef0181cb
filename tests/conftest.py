"""Session fixtures: the real engines of the differential suite and of the engine
suites (tests/real_engines.py).

    duckdb_engine      session: DuckDB in memory
    postgres_engine    session: a PostgreSQL server in a temporary directory, reached
                       only through its Unix socket there (.server.root)
    postgres_icu_engine session: that server's database `strata_icu`, collated by ICU's
                       en-US, as an engine of its own
    spark_engine       session: a local Spark session in this process (in-memory
                       catalog, temporary views)
    pg_warehouse_url   per test: `postgresql://postgres@<percent-quoted socket dir>/<db>`,
                       a database of its own on the session's server, created empty
                       for the test and dropped after it (its sessions ended first)
    spark_connect      session: a Spark Connect server (Hive catalog and warehouse in a
                       temporary directory, a free localhost port), stopped at the end
    spark_connect_url  per test: `sc://127.0.0.1:<port>` of that server; after the test
                       every database but `default` is dropped, and default's tables
                       and views, so each test starts from an empty catalog
    connect_mode_undone per test: a Connect client made in the test does not turn a
                       later local Spark session of this process into one

Each engine starts at most once per test process, on first use. Where one is missing
from the machine its tests are skipped, except in CI (env CI set, and not to
0/false/no), where a missing engine fails them: `.ci/run` installs them all, so a skip
there would hide a broken setup.

Parallel runs (`pytest -n 2 --dist loadgroup`, pytest-xdist, as `.ci/run` does): each
worker is a process of its own, with its own session fixtures (its own PostgreSQL
server, in its own temporary directory). The tests that use Spark (a Spark fixture,
or a parameter named `*engine*`/`*adapter*` set to `spark`/`spark_engine`) form two
xdist groups, one per Spark JVM: `spark-connect` (the tests that reach the Spark
Connect server: its fixtures, or `engine_wh` set to `spark`) and `spark` (the rest,
on the test process's own local Spark session). Each group runs on one worker, so
each JVM starts once per run; they are the two largest groups, so pytest-xdist hands
them to the two workers first and the two JVMs' tests run side by side (one group
held every Spark test, the critical path of the whole run: 19 minutes). pytest-xdist 3.8 does not
apply groups under pytest 9.2 (its loadgroup renames node ids, which 9.2 ignores:
pytest-xdist issue 1386); until it does, each worker that meets a Spark test starts
its own Spark, which is correct, only slower: pyproject pins pytest < 9.2 for it.
"""

from __future__ import annotations

import os

# A Spark Connect client in a test process runs gRPC's poller threads, and gRPC's
# fork handlers (on by default in grpcio 1.85) restart them in a child forked for a
# preexec_fn (the hostile-environment tests'); the child then closes every inherited
# descriptor before exec and the restarted poller aborts it (SIGABRT, "epoll_wait
# error: Bad file descriptor"). Set before anything imports grpc.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")

import pytest
from real_engines import (
    DuckDBEngine,
    EngineUnavailable,
    PostgresEngine,
    SparkConnectServer,
    SparkEngine,
    start_postgres,
    start_spark,
    start_spark_connect,
)

CONNECT_FIXTURES = frozenset({"spark_connect", "spark_connect_url"})
SPARK_FIXTURES = frozenset({"spark_engine"}) | CONNECT_FIXTURES
# a parameter that picks the engine (`adapter`, `engine`, `engine_name`: a name with
# "adapter" or "engine" in it) set to Spark; a `dialect` parameter only compiles
SPARK_PARAMS = frozenset({"spark", "spark_engine"})
# the parameters whose Spark case is the Spark Connect server (tests/engine_warehouses.py)
CONNECT_PARAMS = frozenset({"engine_wh"})
SPARK_GROUP = "spark"
SPARK_CONNECT_GROUP = "spark-connect"


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _unavailable(err: EngineUnavailable) -> None:
    if _in_ci():
        pytest.fail(f"CI needs every engine: {err}", pytrace=False)
    pytest.skip(str(err))


def _spark_params(item: pytest.Item) -> list[str]:
    """The names of the test's parameters that pick Spark as its engine."""
    callspec = getattr(item, "callspec", None)
    params = callspec.params.items() if callspec is not None else ()
    return [name for name, value in params if ("engine" in name or "adapter" in name)
            and isinstance(value, str) and value in SPARK_PARAMS]


def uses_spark(item: pytest.Item) -> bool:
    """The test asks for a Spark fixture, directly or through a parameter that picks
    the engine (`adapter` = "spark", `engine_name` = "spark", `engine` =
    "spark_engine")."""
    return bool(SPARK_FIXTURES & set(getattr(item, "fixturenames", ()))
                or _spark_params(item))


def spark_group(item: pytest.Item) -> str | None:
    """The xdist group of a test that uses Spark: the JVM it reaches (None: no Spark)."""
    if not uses_spark(item):
        return None
    if CONNECT_FIXTURES & set(getattr(item, "fixturenames", ())) \
            or CONNECT_PARAMS & set(_spark_params(item)):
        return SPARK_CONNECT_GROUP
    return SPARK_GROUP


def pytest_configure(config: pytest.Config) -> None:
    # xdist registers it too; said here so a run without xdist knows the mark
    config.addinivalue_line("markers", "xdist_group(name): run these tests on one worker "
                            "(pytest-xdist --dist loadgroup)")


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        group = spark_group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture(autouse=True)
def _inner_pytest_is_no_xdist_worker(request, monkeypatch):
    """A test running pytest inside itself (`pytester`) under xdist: the inner run is
    no worker, though it inherits the worker's PYTEST_XDIST_WORKER (syrupy then leaves
    its unused-snapshot report to a controller that does not exist)."""
    if "pytester" in request.fixturenames:
        monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)


@pytest.fixture(scope="session")
def duckdb_engine():
    engine = DuckDBEngine()
    yield engine
    engine.close()


@pytest.fixture(scope="session")
def postgres_engine() -> PostgresEngine:
    try:
        engine = start_postgres()
    except EngineUnavailable as err:
        _unavailable(err)
    yield engine
    engine.close()


@pytest.fixture(scope="session")
def postgres_icu_engine(postgres_engine: PostgresEngine) -> PostgresEngine:
    engine = postgres_engine.icu_engine()
    yield engine
    engine.close()


@pytest.fixture
def pg_warehouse_url(postgres_engine: PostgresEngine) -> str:
    """A database of the test's own on the session's PostgreSQL server, as `-o` takes it."""
    name = postgres_engine.create_database()
    yield postgres_engine.url(name)
    postgres_engine.drop_database(name)


@pytest.fixture(scope="session")
def spark_engine() -> SparkEngine:
    try:
        engine = start_spark()
    except EngineUnavailable as err:
        _unavailable(err)
    yield engine
    engine.close()


@pytest.fixture(scope="session")
def spark_connect() -> SparkConnectServer:
    try:
        server = start_spark_connect()
    except EngineUnavailable as err:
        _unavailable(err)
    yield server
    server.close()


@pytest.fixture
def spark_connect_url(spark_connect: SparkConnectServer) -> str:
    """The session's Spark Connect server, as `-o` takes it; its catalog emptied after
    the test."""
    yield spark_connect.url
    spark_connect.reset()


@pytest.fixture
def connect_mode_undone(monkeypatch):
    """pyspark marks the process as Spark Connect's (SPARK_CONNECT_MODE_ENABLED) once a
    remote session exists, which would turn the session fixture's local Spark (and
    every later test's) into a Connect client: undone after the test."""
    try:
        import grpc  # noqa: F401
    except ImportError:
        _unavailable(EngineUnavailable("Spark Connect's client needs grpcio"))
    monkeypatch.setenv("SPARK_CONNECT_MODE_ENABLED", "")
    monkeypatch.delenv("SPARK_CONNECT_MODE_ENABLED")
