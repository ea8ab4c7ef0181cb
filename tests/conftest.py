"""Session fixtures: the real engines of the differential suite (tests/real_engines.py).

Each engine starts at most once per test run, on first use. Where one is missing
from the machine its tests are skipped, except in CI (env CI set, and not to 0/false/no), where a missing
engine fails them: `.ci/run` installs both, so a skip there would hide a broken setup.
"""

from __future__ import annotations

import os

import pytest
from real_engines import (
    DuckDBEngine,
    EngineUnavailable,
    PostgresEngine,
    SparkEngine,
    start_postgres,
    start_spark,
)


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _unavailable(err: EngineUnavailable) -> None:
    if _in_ci():
        pytest.fail(f"CI needs every engine: {err}", pytrace=False)
    pytest.skip(str(err))


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
def spark_engine() -> SparkEngine:
    try:
        engine = start_spark()
    except EngineUnavailable as err:
        _unavailable(err)
    yield engine
    engine.close()
