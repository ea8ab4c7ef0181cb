"""Helpers for the run-engine tests: a small module with two independent source
subgraphs, source tables in a real DuckDB file, and the real `strata` CLI run in a
subprocess. No mocks: every assertion reads the warehouse file itself.

    orders   -> paid  -> totals          (subgraph A)
    products -> cheap -> cheap_count     (subgraph B)
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest
from processes import run_bounded

ROOT = Path(__file__).resolve().parent.parent
STRATA = [str(Path(sys.executable).parent / "strata")]  # the installed console script

MODULE = """\
source orders {
  id: int
  customer_id: int
  amount: double
  status: text
  updated_at: timestamp
}

source products {
  id: int
  name: text
  price: double
}

model paid {
  from orders
  filter status = 'paid'
  select id, customer_id, amount, updated_at
  pin unique [id]
}

model totals {
  from paid
  group customer_id
  aggregate total = sum(amount), n = count()
}

model cheap {
  from products
  filter price < 10
  select id, name, price
}

model cheap_count {
  from cheap
  aggregate n = count()
}
"""

MODELS = ["paid", "totals", "cheap", "cheap_count"]
SUBGRAPH_A = ["paid", "totals"]
SUBGRAPH_B = ["cheap", "cheap_count"]

ORDERS_SQL = """
CREATE OR REPLACE TABLE {name} AS
SELECT i AS id, i % 10 AS customer_id, i * 1.5 AS amount,
       CASE WHEN i % 3 = 0 THEN 'void' ELSE 'paid' END AS status,
       TIMESTAMP '2024-01-01' + to_seconds(i) AS updated_at
FROM range({rows}) AS t(i)
"""
PRODUCTS_SQL = """
CREATE OR REPLACE TABLE {name} AS
SELECT i AS id, 'p' || i AS name, i * 1.0 AS price FROM range({rows}) AS t(i)
"""


def cli_env(env: dict | None = None) -> dict:
    full = {k: v for k, v in os.environ.items()
            if k not in ("STRATA_CRASH_AT", "STRATA_PAUSE_AT", "STRATA_DEBUG")}
    full.update({"STRATA_LOCK_TIMEOUT": "5", **(env or {})})
    return full


# ---------------------------------------------------------------- running the CLI
# Every call is its own OS process running the console script's entry point
# (`strata.cli.main:main`) with its own argv, cwd, environment, stdout/stderr and exit
# status. By default the process is forked from a server that imported strata once
# (tests/cli_forkserver.py: a new interpreter spends ~0.35 s importing, per call);
# STRATA_TEST_CLI=script runs the installed `strata` script instead. Tests about
# signals, locks and terminals always use the script (`script_popen`).
_SERVER: subprocess.Popen | None = None
_SERVER_LOCK = threading.Lock()


def _server() -> subprocess.Popen:
    global _SERVER
    if _SERVER is None or _SERVER.poll() is not None:
        here = Path(__file__).resolve().parent
        _SERVER = subprocess.Popen([sys.executable, str(here / "cli_forkserver.py")],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                   cwd=here)
    return _SERVER


class Ran(subprocess.CompletedProcess):
    """A finished CLI call and the CPU seconds (user + system) its process used: what
    a test's time bound reads, never the wall clock a loaded machine stretches."""

    def __init__(self, args, returncode: int, stdout: str, stderr: str, cpu: float):
        super().__init__(args, returncode, stdout, stderr)
        self.cpu_seconds = cpu


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run_script(args: list[str], cwd: Path, env: dict, timeout: float) -> Ran:
    """The installed script; its CPU time is what this process's waited-for children
    used across the call (the call waits for it, and for nothing else)."""
    before = _children_cpu()
    proc = run_bounded([*STRATA, *args], cwd=cwd, env=env, timeout=timeout)
    return Ran(proc.args, proc.returncode, proc.stdout, proc.stderr,
               _children_cpu() - before)


def _run_forked(args: list[str], cwd: Path, env: dict, timeout: float) -> Ran:
    with tempfile.TemporaryDirectory() as tmp, _SERVER_LOCK:
        out, err = os.path.join(tmp, "out"), os.path.join(tmp, "err")
        server = _server()
        server.stdin.write(json.dumps({"args": args, "cwd": str(cwd), "env": env, "out": out,
                                       "err": err, "timeout": timeout}) + "\n")
        server.stdin.flush()
        reply = server.stdout.readline()
        if not reply:
            raise RuntimeError("the CLI fork server died")
        answer = json.loads(reply)
        if answer["code"] == -signal.SIGALRM:
            raise subprocess.TimeoutExpired(["strata", *args], timeout)
        return Ran(["strata", *args], answer["code"], Path(out).read_text(),
                   Path(err).read_text(), answer["cpu"])


def strata(*args: str, cwd: Path, env: dict | None = None, timeout: float = 120,
           check: bool | None = None) -> Ran:
    """Run the CLI in its own process. `check=True` asserts exit 0, `False` non-zero."""
    full_env = cli_env(env)
    if os.environ.get("STRATA_TEST_CLI") == "script":
        proc = _run_script(list(args), cwd, full_env, timeout)
    else:
        proc = _run_forked(list(args), cwd, full_env, timeout)
    if check is True:
        assert proc.returncode == 0, f"strata {' '.join(args)}:\n{proc.stdout}\n{proc.stderr}"
    if check is False:
        assert proc.returncode != 0, f"strata {' '.join(args)} succeeded:\n{proc.stdout}"
    return proc


def script_popen(*args: str, cwd: Path, env: dict | None = None,
                 **kwargs) -> subprocess.Popen:
    """The installed `strata` script as a child process (for signals, locks, ttys)."""
    return subprocess.Popen([*STRATA, *args], cwd=cwd, env=cli_env(env), **kwargs)


def wait_for(proc: subprocess.Popen, words: str, timeout: float = 60) -> str:
    """Read the child's stderr until `words` appear."""
    seen = ""
    deadline = time.monotonic() + timeout
    while words not in seen:
        assert time.monotonic() < deadline, seen
        line = proc.stderr.readline()
        assert line or proc.poll() is None, f"exited {proc.returncode}: {seen}"
        seen += line
    return seen


def no_traceback(proc: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr


def error_code(proc: subprocess.CompletedProcess) -> str:
    """The first `error[Ennn]` code the CLI printed (and it exited 1, no traceback)."""
    no_traceback(proc)
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    text = proc.stderr + proc.stdout
    assert "error[E" in text, text
    start = text.index("error[E") + len("error[")
    return text[start:start + 4]


@contextmanager
def connect(path: Path, read_only: bool = True):
    con = duckdb.connect(str(path), read_only=read_only)
    try:
        yield con
    finally:
        con.close()


def query(path: Path, sql: str, params: list | None = None) -> list[tuple]:
    with connect(path) as con:
        return con.execute(sql, params or []).fetchall()


def execute(path: Path, *statements: str) -> None:
    with connect(path, read_only=False) as con:
        for statement in statements:
            con.execute(statement)


def objects(path: Path) -> list[tuple[str, str, str]]:
    """Every user table and view in the file: (schema, name, kind)."""
    with connect(path) as con:
        tables = con.execute("SELECT schema_name, table_name, 'table' FROM duckdb_tables() "
                             "WHERE database_name = current_database()").fetchall()
        views = con.execute("SELECT schema_name, view_name, 'view' FROM duckdb_views() "
                            "WHERE NOT internal AND database_name = current_database()"
                            ).fetchall()
    return sorted(tables + views)


def internal_objects(path: Path) -> set[str]:
    return {name for schema, name, _ in objects(path) if schema == "strata_internal"}


def registered(path: Path) -> set[str]:
    """Every object the snapshot registry references (snapshots, bases, layers)."""
    out: set[str] = set()
    for name, parts in query(path, "SELECT name, parts FROM strata_internal.snapshots WHERE "
                                   "name NOT IN (SELECT name FROM strata_internal.collections)"):
        out.add(name)
        parts = json.loads(parts)
        if parts.get("base"):
            out.add(parts["base"])
        out.update(parts.get("layers", []))
    return out


def leftovers(path: Path) -> set[str]:
    """snap_/layer_ objects nothing references: what a crashed run left behind."""
    known = registered(path)
    return {n for n in internal_objects(path)
            if n.startswith(("snap_", "layer_")) and n not in known}


def history_rows(path: Path) -> list[tuple]:
    return query(path, "SELECT seq, id, kind, branch, entry FROM strata_internal.history "
                       "ORDER BY seq")


def live(path: Path, branch: str = "main") -> dict[str, str]:
    """model -> the snapshot its live view reads (from the view's own SQL)."""
    rows = query(path, "SELECT view_name, sql FROM duckdb_views() WHERE schema_name = ? "
                       "AND starts_with(view_name, 'v_')", [branch])
    out = {}
    for view, sql in rows:
        tail = sql.split("strata_internal.", 1)[1]
        out[view[2:]] = tail.strip().strip(";").strip().strip('"')
    return out


def stale_run_after(p: Project, *statements: str) -> tuple[dict, set[str]]:
    """A first run, then `statements` on the data, then `run --only-stale`: its
    report and the models whose live view moved to another snapshot."""
    p.run_json()
    before = live(p.warehouse)
    p.sql(*statements)
    report = p.run_json("--only-stale")
    after = live(p.warehouse)
    return report, {m for m in before if after.get(m) != before[m]}


def view_rows(path: Path, branch: str = "main") -> dict[str, tuple]:
    """What every live view reads now, as (row count, order-independent sum of row
    hashes): equal means the same multiset of rows, at any size."""
    out = {}
    with connect(path) as con:
        for model in live(path, branch):
            out[model] = con.execute(
                f'SELECT count(*), coalesce(sum(hash(v)::HUGEINT), 0)::VARCHAR '
                f'FROM "{branch}"."v_{model}" AS v').fetchone()
    return out


@dataclass
class Project:
    dir: Path
    module: Path
    warehouse: Path

    def run(self, *args: str, env: dict | None = None, check: bool | None = True,
            timeout: float = 120) -> subprocess.CompletedProcess:
        return strata(*args, cwd=self.dir, env=env, check=check, timeout=timeout)

    def strata_json(self, *args: str, env: dict | None = None):
        proc = self.run(*args, "--json", env=env)
        return json.loads(proc.stdout)

    def run_json(self, *args: str, env: dict | None = None) -> dict:
        return self.strata_json("run", str(self.module), "-o", str(self.warehouse), *args,
                                env=env)

    def history(self, *args: str) -> list[dict]:
        return self.strata_json("history", "-o", str(self.warehouse), *args)

    def sql(self, *statements: str) -> None:
        execute(self.warehouse, *statements)

    def query(self, sql: str, params: list | None = None) -> list[tuple]:
        return query(self.warehouse, sql, params)


def make_project(root: Path, orders: int = 100, products: int = 20,
                 text: str = MODULE) -> Project:
    root.mkdir(parents=True, exist_ok=True)
    module = root / "shop.strata"
    module.write_text(text)
    warehouse = root / "wh.duckdb"
    execute(warehouse, ORDERS_SQL.format(name="orders", rows=orders),
            PRODUCTS_SQL.format(name="products", rows=products))
    return Project(root, module, warehouse)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return make_project(tmp_path / "proj")


@pytest.fixture
def built(project: Project) -> tuple[Project, dict]:
    """A project after one good run: (project, that run's --json report)."""
    return project, project.run_json()
