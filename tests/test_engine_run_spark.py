"""`strata run` on Spark, from the CLI (issue 18 items 2-3): through Spark Connect
(`-o sc://...`, the session's one server: a CLI process starts no JVM). A local
`spark:DIR` warehouse killed after its commit point is tests/test_engine_bookkeeping_
spark.py's (each CLI process there starts a JVM: one test, not two).

The project is tests/test_engine_run_postgres.py's: a CSV file source (Spark's CSV
reader would guess types, so the run reads it locally and loads it once into a
Parquet table named by its fingerprint), an upsert model merged by delta layers, a
pinned key and two models downstream.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from enginehelpers import strata
from test_engine_run_postgres import ROWS, _models, _project, _write

from strata.engine.adapters.spark import encode_name

READ_VIEW = """
import json, sys
from pyspark.sql import SparkSession
location, table = sys.argv[1], sys.argv[2]
if location.startswith("sc://"):
    session = SparkSession.builder.remote(location).create()
else:
    from strata.engine.adapters.spark import local_session
    session = local_session(location)
rows = [[str(v) for v in r] for r in session.sql(f"SELECT * FROM {table}").collect()]
print(json.dumps(sorted(rows)))
"""


def _view(location: str, model: str) -> list[list[str]]:
    """A live view's rows (as text), read by a process of its own (a Connect client in
    this process would switch later local sessions of the test run to Connect)."""
    where = location.removeprefix("spark:")
    view = f"{encode_name('main')}.{encode_name('v_' + model)}"
    done = subprocess.run([sys.executable, "-c", READ_VIEW, where, view],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _run(root: Path, location: str, *flags: str, env: dict | None = None,
         check: bool | None = True):
    done = strata("run", ".", "-o", location, "--json", *flags, cwd=root, env=env,
                  check=check, timeout=600)
    return json.loads(done.stdout) if done.returncode == 0 else done


def test_spark_connect_runs_and_merges_an_upsert_on_only_stale(spark_connect_url, tmp_path):
    root = _project(tmp_path / "p", ROWS)
    first = _run(root, spark_connect_url)
    assert first["status"] == "published"
    assert sorted(first["rebuilt"]) == ["big_customers", "by_customer", "clean_orders"]
    _write(root, [*ROWS[:3], "4,cid,150.00,2024-01-05 10:00:00",
                  "5,dan,20.00,2024-01-06 10:00:00"])
    merged = _run(root, spark_connect_url, "--only-stale")
    clean = _models(merged)["clean_orders"]
    assert clean["status"] == "rebuilt" and clean["delta_rows"] == 2
    assert _view(spark_connect_url, "big_customers") == [["ann", "120.25"],
                                                         ["cid", "150.00"]]
