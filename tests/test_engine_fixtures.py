"""The engine fixtures of tests/conftest.py that the engine suites (issue 18) stand on:
`pg_warehouse_url` gives each test an empty database of its own, reachable as `-o`
takes it, and drops it afterwards even with a client still connected;
`spark_connect_url` gives each test the session's Spark Connect server with an empty
catalog; the tests that use Spark share one pytest-xdist group (one JVM per run).
"""

from __future__ import annotations

import psycopg
import pytest
from conftest import SPARK_CONNECT_GROUP, SPARK_GROUP
from real_engines import PostgresEngine, SparkConnectServer

from strata.engine.locations import PostgresURL, parse_location


def _tables(url: str) -> list[str]:
    with psycopg.connect(**parse_location(url).connect_args()) as con:
        return [r[0] for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")]


def _databases(engine: PostgresEngine) -> set[str]:
    return {r[0] for r in engine.con.execute("SELECT datname FROM pg_database")}


def test_pg_warehouse_url_is_an_empty_database_of_the_tests_own(pg_warehouse_url,
                                                                postgres_engine):
    location = parse_location(pg_warehouse_url)
    assert isinstance(location, PostgresURL) and location.unix_socket
    assert location.host == str(postgres_engine.server.root)
    assert location.user == "postgres" and location.database not in ("postgres", "template1")
    assert location.database in _databases(postgres_engine)
    assert _tables(pg_warehouse_url) == []
    with psycopg.connect(**location.connect_args(), autocommit=True) as con:
        con.execute("CREATE TABLE mine (id int)")
    assert _tables(pg_warehouse_url) == ["mine"]
    # the server's own database (where the differential suite loads its tables) is
    # another database: the test's table is not there
    assert "mine" not in _tables(postgres_engine.url())


def test_a_database_is_dropped_even_while_a_client_holds_it(postgres_engine):
    """What the fixture does after each test: a writer a test left connected (or
    killed before the server noticed) does not keep its database alive."""
    name = postgres_engine.create_database()
    other = postgres_engine.create_database()
    assert name != other
    left_open = psycopg.connect(**parse_location(postgres_engine.url(name)).connect_args())
    try:
        postgres_engine.drop_database(name)
    finally:
        left_open.close()
    assert name not in _databases(postgres_engine)
    assert other in _databases(postgres_engine)
    postgres_engine.drop_database(other)
    postgres_engine.drop_database(other)  # gone already: nothing to do
    assert other not in _databases(postgres_engine)


@pytest.mark.parametrize("engine_name", ["duckdb", "postgres", "spark"])
def test_the_tests_on_the_local_spark_session_share_one_xdist_group(engine_name, request):
    groups = [m.args[0] for m in request.node.iter_markers("xdist_group")]
    assert groups == ([SPARK_GROUP] if engine_name == "spark" else [])


@pytest.mark.parametrize("engine_wh", ["spark"])  # as tests/engine_warehouses.py's fixture
def test_the_tests_on_spark_connect_share_another(engine_wh, request):
    """Both Spark JVMs' tests run side by side, each group on one worker."""
    groups = [m.args[0] for m in request.node.iter_markers("xdist_group")]
    assert groups == [SPARK_CONNECT_GROUP]


@pytest.mark.parametrize("dialect", ["spark"])
def test_a_test_that_only_compiles_for_spark_runs_on_any_worker(dialect, request):
    assert list(request.node.iter_markers("xdist_group")) == []


def test_spark_connect_url_serves_a_catalog_that_reset_empties(spark_connect_url,
                                                             spark_connect: SparkConnectServer):
    location = parse_location(spark_connect_url)
    assert (location.kind, location.host, location.port) == ("spark_connect", "127.0.0.1",
                                                            spark_connect.port)
    client = spark_connect.client
    assert [r[0] for r in client.sql("SHOW DATABASES").collect()] == ["default"]
    client.sql("CREATE DATABASE strata_internal").collect()
    client.sql("CREATE TABLE strata_internal.t AS SELECT 1 AS id").collect()
    client.sql("CREATE VIEW default.v AS SELECT 2 AS id").collect()
    client.sql("CREATE TABLE default.t AS SELECT 3 AS id").collect()
    assert client.sql("SELECT * FROM strata_internal.t").collect()[0][0] == 1
    spark_connect.reset()
    assert [r[0] for r in client.sql("SHOW DATABASES").collect()] == ["default"]
    assert client.catalog.listTables("default") == []
    # the catalog stays usable: a later test's writes succeed
    client.sql("CREATE DATABASE strata_internal").collect()
    assert client.catalog.listTables("strata_internal") == []
