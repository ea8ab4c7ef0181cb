"""The `adapter` fixture: a warehouse adapter (strata.engine.adapters) on each real
engine of tests/conftest.py, with a schema of its own for the test.

    from engine_adapters import engine_adapter, postgres_url  # noqa: F401 (the fixture)

    @pytest.mark.parametrize("adapter", ["duckdb", "postgres", "spark"], indirect=True)

DuckDB: a file in tmp_path. PostgreSQL: the session's server (its Unix socket), opened
to write (the advisory lock). Spark: the session's local Spark (in-memory catalog;
`spark:DIR` needs a process of its own, see tests/test_adapters.py).
"""

from __future__ import annotations

import uuid
from pathlib import Path
from urllib.parse import quote

import pytest

from strata.engine.adapters import SparkAdapter, open_adapter
from strata.engine.locations import parse_location


def postgres_url(server_root: Path, password: str | None = None) -> str:
    secret = f":{password}" if password else ""
    return f"postgresql://postgres{secret}@{quote(str(server_root), safe='')}/postgres"


@pytest.fixture(name="adapter")
def engine_adapter(request, tmp_path):
    """An adapter on each engine, opened to write where the engine has a lock, with a
    schema of its own for the test."""
    if request.param == "duckdb":
        made = open_adapter(parse_location(str(tmp_path / "w.duckdb")))
    elif request.param == "postgres":
        server = request.getfixturevalue("postgres_engine").server
        made = open_adapter(parse_location(postgres_url(server.root)), lock_timeout=5)
    else:
        session = request.getfixturevalue("spark_engine").session
        made = SparkAdapter(session, "spark (the test session)")
    made.test_schema = "t_" + uuid.uuid4().hex[:8]
    made.create_schema(made.test_schema)
    yield made
    if request.param != "spark":  # the session fixture owns the Spark session
        made.close()
