"""The same data gives the same run id on every warehouse (issue 38): examples/shop's
Parquet file got another run id on Spark, which fingerprinted it with its own row hash
and type names; a file source is now fingerprinted as DuckDB reads it on every engine.
Spark's commands print nothing of the JVM's start-up (`WARNING: Using incubator
modules: jdk.incubator.vector` came with each one)."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from conftest import _unavailable
from enginehelpers import strata
from real_engines import SHORT_LIVED_JVM, EngineUnavailable

MODULE = """\
source items = file 'items.parquet' {
  order_id: int
  price: decimal(10, 2)
  tags: list<text>
  sold_on: date
}

source regions = file 'regions.csv' { id: int, name: text }

model priced {
  from items
  filter price > 1
  select order_id, price, tags, sold_on
}

model named {
  from regions
  select id, name
}
"""


@pytest.fixture
def module(tmp_path: Path) -> Path:
    folder = tmp_path / "mod"
    folder.mkdir()
    (folder / "m.strata").write_text(MODULE)
    (folder / "regions.csv").write_text("id,name\n1,north\n2,south\n")
    con = duckdb.connect()
    con.execute(f"""COPY (SELECT * FROM (VALUES
        (1, 12.50::DECIMAL(10, 2), ['a', 'b'], DATE '2024-01-02'),
        (2, 0.99::DECIMAL(10, 2), [], DATE '2024-01-03'),
        (3, 7.00::DECIMAL(10, 2), NULL, NULL)) t(order_id, price, tags, sold_on))
        TO '{folder / "items.parquet"}' (FORMAT parquet)""")
    con.close()
    return folder


@pytest.mark.parametrize("engine_name", ["postgres", "spark"])
def test_a_parquet_and_a_csv_source_give_duckdbs_run_id(engine_name, module, tmp_path,
                                                        request):
    env = {}
    if engine_name == "spark":
        try:
            import pyspark  # noqa: F401
        except ImportError:  # skipped on a laptop without it, a failure in CI
            _unavailable(EngineUnavailable("Spark: pyspark is not installed"))
        location = f"spark:{tmp_path / 'spark'}"
        env = {"JAVA_TOOL_OPTIONS": SHORT_LIVED_JVM}  # one run's JVM: C1 only, less CPU
    else:
        location = request.getfixturevalue("pg_warehouse_url")
    on_duckdb = strata("run", "mod", "-o", "w.duckdb", "--json", cwd=tmp_path, check=True)
    there = strata("run", "mod", "-o", location, "--json", cwd=tmp_path, timeout=900,
                   check=True, env=env)
    assert json.loads(there.stdout)["run_id"] == json.loads(on_duckdb.stdout)["run_id"]
    assert "incubator" not in there.stderr and "WARNING" not in there.stderr, there.stderr
