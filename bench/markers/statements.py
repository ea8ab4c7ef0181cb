"""Statements (and, on local Spark, Spark jobs) one `strata run` CLI process sends, by
what they read: issue 41 item 3's count of the bookkeeping around the models.

    .venv/bin/python bench/markers/statements.py --engines duckdb,spark [--code DIR]
    .venv/bin/python bench/markers/statements.py --engines sc   # a Connect server of its own

Each engine gets a fresh warehouse and three CLI processes over one module (one
Parquet source of 1e4 rows read in place, 20 models): a first run, a no-op
`--only-stale`, and `--only-stale` after the source's file was rewritten with other
rows. Each process is the CLI of the checkout at `--code` (default: this one) with its
engine's statement path wrapped in the process itself: DuckDB's connection `execute`,
Spark's `session.sql` and the frames the adapter reads rows from (Spark Connect), and
on local Spark the jobs the SparkContext ran (its status tracker, read before each
statement and before the session stops: `jobs_each` says how many each statement ran,
a query's jobs running when it is collected, before the next statement). Nothing is timed: counts only. Writes bench/markers/statements.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
PYTHON = sys.executable

MODELS = 20
SOURCE = "source lines = file '{path}' {{\n  id: int\n  amount: int\n}}\n"

# Runs inside the CLI process, before `main()`: wraps each engine's statement path and
# writes what went through it to $STRATA_COUNT_OUT when the process exits.
BOOTSTRAP = r"""
import atexit, json, os, sys
sys.path.insert(0, os.environ["STRATA_COUNT_CODE"])
seen, jobs, started = [], [], []  # started: the jobs run before each statement

def _keep(text, session=None):
    seen.append(" ".join(str(text).split()))
    if session is not None:
        started.append(len(session.sparkContext.statusTracker().getJobIdsForGroup(None)))

import duckdb
from strata.engine import warehouse as W
_connect = duckdb.connect

class Counting:
    def __init__(self, con):
        self._con = con
    def execute(self, statement, *args, **kwargs):
        _keep(statement)
        return self._con.execute(statement, *args, **kwargs)
    def __getattr__(self, name):
        return getattr(self._con, name)

class _Duck:
    connect = staticmethod(lambda *a, **k: Counting(_connect(*a, **k)))
    def __getattr__(self, name):
        return getattr(duckdb, name)

W.duckdb = _Duck()
try:
    from pyspark.sql import SparkSession
    from strata.engine.adapters import spark as S
    _sql = SparkSession.sql
    def sql(self, text, *a, **k):
        _keep(text, self)
        return _sql(self, text, *a, **k)
    SparkSession.sql = sql
    from pyspark.sql.connect.session import SparkSession as Connect
    _csql = Connect.sql
    def csql(self, text, *a, **k):
        _keep(text)
        return _csql(self, text, *a, **k)
    Connect.sql = csql
    _frame = S._frame
    def frame(session, text):
        if S._is_connect(session):
            _keep(text)
        return _frame(session, text)
    S._frame = frame
    _close = S.SparkAdapter.close
    def close(self):
        if not S._is_connect(self.session):
            tracker = self.session.sparkContext.statusTracker()
            jobs.extend(tracker.getJobIdsForGroup(None))
            started.append(len(jobs))
        return _close(self)
    S.SparkAdapter.close = close
except ImportError:
    pass

atexit.register(lambda: open(os.environ["STRATA_COUNT_OUT"], "w").write(
    json.dumps({"statements": seen, "jobs": len(set(jobs)),
                "jobs_each": [b - a for a, b in zip(started, started[1:])]})))
from strata.cli.main import main
sys.argv[0] = "strata"
main()
"""


def module_text(parquet: Path) -> str:
    parts = [SOURCE.format(path=parquet),
             "model m0 {\n  from lines\n  group amount\n  aggregate n = count()\n}\n"]
    for i in range(1, MODELS):
        parts.append(f"model m{i} {{\n  from m{i - 1}\n  filter n > {i}\n"
                     f"  select amount, n\n}}\n")
    return "\n".join(parts)


def write_rows(path: Path, rows: int, salt: int) -> None:
    import duckdb

    duckdb.sql(f"COPY (SELECT range AS id, (range + {salt}) % 97 AS amount FROM "
               f"range({rows})) TO '{path}' (FORMAT parquet)")


def kind_of(statement: str) -> str:
    """What a statement reads or does, as the table says it."""
    text = statement.lower()
    if text.startswith(("select", "with", "show", "describe")):
        if "collections" in text:
            return "registry read"
        if "history" in text:
            return "history read"
        if "branches" in text:
            return "branches read"
        if "meta" in text:
            return "meta read"
        if text.startswith(("show", "describe")):
            return "catalogue"
        return "other read"
    return "write/ddl"


def counted(code: Path, args: list[str], cwd: Path) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as out:
        target = out.name
    env = {**os.environ, "STRATA_COUNT_OUT": target, "STRATA_COUNT_CODE": str(code)}
    proc = subprocess.run([PYTHON, "-c", BOOTSTRAP, *args], check=False, cwd=cwd, env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    found = json.loads(Path(target).read_text())
    os.unlink(target)
    report = json.loads(proc.stdout)
    kinds: dict[str, int] = {}
    for s in found["statements"]:
        kinds[kind_of(s)] = kinds.get(kind_of(s), 0) + 1
    return {"status": report.get("status"), "rebuilt": len(report.get("rebuilt") or []),
            "statements": len(found["statements"]), "jobs": found["jobs"], "kinds": kinds,
            "texts": found["statements"], "jobs_each": found.get("jobs_each", [])}


def bench_engine(engine: str, code: Path, root: Path) -> dict:
    folder = root / engine.replace(":", "_").replace("/", "_")
    folder.mkdir()
    parquet = folder / "lines.parquet"
    write_rows(parquet, 10_000, 0)
    (folder / "m.strata").write_text(module_text(parquet))
    server = None
    if engine == "sc":  # a Spark Connect server of its own, kept warm for the three
        sys.path.insert(0, str(ROOT / "tests"))
        from real_engines import start_spark_connect

        server = start_spark_connect(seconds=600)
    target = {"duckdb": str(folder / "wh.duckdb"), "spark": f"spark:{folder / 'wh'}",
              "sc": server.url if server else ""}.get(engine, engine)
    base = ["run", "m.strata", "-o", target, "--json"]
    try:
        out = {"first run": counted(code, base, folder)}
        time.sleep(4)  # past the 3 s a file's times must age to be proof
        out["no-op --only-stale"] = counted(code, base + ["--only-stale"], folder)
        write_rows(parquet, 10_000, 1)
        time.sleep(4)
        out["one source changed"] = counted(code, base + ["--only-stale"], folder)
    finally:
        if server is not None:
            server.close()
    for name, found in out.items():
        print(engine, name, {k: v for k, v in found.items()
                             if k not in ("texts", "jobs_each")}, flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="duckdb,spark",
                        help="duckdb, spark (local spark:DIR), sc (a Spark Connect server "
                        "started here) or an sc:// URL")
    parser.add_argument("--code", type=Path, default=ROOT,
                        help="the checkout whose strata runs (default: this one)")
    parser.add_argument("--out", type=Path, default=HERE / "statements.json")
    args = parser.parse_args()
    results = {"code": str(args.code), "engines": {},
               "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    with tempfile.TemporaryDirectory(prefix="strata-count-") as tmp:
        for engine in args.engines.split(","):
            results["engines"][engine] = bench_engine(engine, args.code, Path(tmp))
            args.out.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
