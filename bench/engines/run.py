"""Strata vs dbt vs SQLMesh on a database server: PostgreSQL, and local Spark.

The peers' 100-model project (bench/peers/generate.py) run by each tool on the same
engine, next to a raw floor (the same CREATE TABLE ... AS statements sent one after
another on one connection / one Spark session):

    PostgreSQL  Strata `run -o postgresql://...`, dbt-postgres, SQLMesh's postgres gateway
    Spark       Strata `run -o spark:DIR`, dbt-spark (method: session), SQLMesh's spark
                connection; every tool's warehouse is a local Hive catalog in a DIR of its own;
                and `strata-sc`: Strata `run -o sc://...` through a Spark Connect server the
                harness starts on its own warehouse folder and keeps warm across its steps

One command:

    python3 bench/engines/run.py --quick                 # smoke test, both engines
    python3 bench/engines/run.py                         # PostgreSQL, 100 models x 1e6 rows
    python3 bench/engines/run.py --engine spark          # Spark, smaller (see --help)

It makes the venvs on first use (setup.sh), re-runs itself in the Strata venv,
starts a throwaway PostgreSQL cluster on a Unix socket in a temp dir (as an
unprivileged user when run as root: postgres refuses root; tests/real_engines.py's
server) and stops it, measures, and writes RESULTS.md and results.json (an engine
measured again replaces its own section; the other engine's stays).

The measuring machinery (whole processes with a timeout, load average before and
after, tools interleaved with a rotating start, medians, the report's cells and
ratios) is bench/peers/run.py's, imported; the project is bench/peers/generate.py's,
with each tool's connection written for the engine.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import importlib.util
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import quote

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
PEERS_DIR = REPO / "bench" / "peers"
VENVS = HERE / ".venvs"
BENCH_PY = VENVS / "strata" / "bin" / "python"


TOOLS = ["dbt", "sqlmesh", "strata", "strata-sc", "raw"]


def _asked_tools(argv: list[str]) -> list[str]:
    if argv[:1] == ["--rerender"]:  # a report from saved samples: no tool runs
        return []
    for i, arg in enumerate(argv):
        if arg == "--tools" and i + 1 < len(argv):
            return argv[i + 1].split(",")
        if arg.startswith("--tools="):
            return arg.split("=", 1)[1].split(",")
    return TOOLS


def _bootstrap() -> None:
    """Make sure the venvs of the tools asked for exist and run inside the Strata venv
    (psycopg, duckdb)."""
    peer_venvs = [v for v in ("dbt", "sqlmesh") if v in _asked_tools(sys.argv[1:])]
    need = not all((VENVS / v / "bin" / "python").exists() for v in (*peer_venvs, "strata"))
    if need and "--no-setup" not in sys.argv:
        setup = ["bash", str(HERE / "setup.sh"), "--spark"] + ([] if peer_venvs
                                                             else ["--strata-only"])
        print(f"== setting up the benchmark venvs ({' '.join(setup[1:])})", flush=True)
        subprocess.run(setup, check=True)
    if Path(sys.prefix).resolve() != (VENVS / "strata").resolve():
        os.execv(str(BENCH_PY), [str(BENCH_PY), str(Path(__file__).resolve()), *sys.argv[1:]])


if __name__ == "__main__":
    _bootstrap()


def _load_peers():
    """bench/peers/run.py as a module of its own name (this file is also run.py)."""
    spec = importlib.util.spec_from_file_location("peers_run", PEERS_DIR / "run.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["peers_run"] = module
    spec.loader.exec_module(module)
    return module


peers = _load_peers()
gen = peers.gen  # bench/peers/generate.py
sys.path.insert(0, str(HERE))
import spark_ops

Sample, Cell, Row, Runner = peers.Sample, peers.Cell, peers.Row, peers.Runner

WORKERS = 4
MODEL_SCHEMA = "main"  # dbt's target schema and the raw floor's (as in bench/peers)
Cmd = tuple[list[str], Path, dict[str, str]]


def _env(venv: str, extra: dict | None = None) -> dict[str, str]:
    env = peers._venv_env(venv, None, extra)  # the peers' quiet, no-telemetry env
    env["PATH"] = f"{VENVS / venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(VENVS / venv)
    env.pop("BENCH_DB", None)
    return env


def _bin(venv: str, exe: str) -> str:
    return str(VENVS / venv / "bin" / exe)


def venv_of(tool: str) -> str:
    return {"dbt": "dbt", "sqlmesh": "sqlmesh"}.get(tool, "strata")


# ------------------------------------------------------------------------- engines

class Engine:
    """Where the tools run: seeded sources, one warehouse per tool and scenario
    (`handle`), the harness's untimed changes and reads, and each tool's config."""

    key = ""
    label = ""
    src_schema = ""

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def version(self) -> str:
        return "?"

    def describe_text(self, text: str) -> str:
        return text

    def runs_tool(self, tool: str) -> bool:
        return tool != "strata-sc"  # Spark Connect: Spark only

    def release(self, dbs: dict[str, str]) -> None:
        """A scenario's repetition is over: let go of what its warehouses hold."""


class Postgres(Engine):
    """A throwaway cluster (tests/real_engines.py's PostgresServer: initdb in a temp
    dir, Unix socket only, trust auth, fsync off) and one database per tool and
    scenario, each a copy (CREATE DATABASE ... TEMPLATE) of the seeded sources."""

    key, label = "postgresql", "PostgreSQL"
    src_schema = "public"  # Strata reads `orders` unqualified: the search path's public

    def __init__(self) -> None:
        sys.path.insert(0, str(REPO / "tests"))
        from real_engines import PostgresServer, _pg_bindir, _server_user

        self.server = PostgresServer(Path(tempfile.mkdtemp(prefix="bench-engines-pg-")),
                                     _pg_bindir(), _server_user())
        self.started = False
        self.seeds: set[str] = set()

    @property
    def socket_dir(self) -> str:
        return str(self.server.root)

    def start(self) -> None:
        print(f"== PostgreSQL cluster in {self.socket_dir}")
        self.server.start()
        self.started = True
        # the bench's own settings: room for 4 workers per tool plus the harness
        with open(self.server.data / "postgresql.conf", "a") as conf:
            conf.write("max_connections = 40\nshared_buffers = '256MB'\n"
                       "work_mem = '32MB'\nmaintenance_work_mem = '128MB'\n")
        done = self.server._run("pg_ctl", "-D", str(self.server.data), "-w", "-t", "60",
                                "-l", str(self.server.root / "server.log"), "restart")
        if done.returncode != 0:
            raise RuntimeError(f"PostgreSQL did not restart: {done.stderr}")

    def stop(self) -> None:
        if self.started:
            self.server.stop()
            self.started = False
        shutil.rmtree(self.server.root, ignore_errors=True)

    def version(self) -> str:
        with self.connect("postgres") as con:
            return con.execute("SHOW server_version").fetchone()[0]

    def connect(self, db: str):
        import psycopg

        return psycopg.connect(host=self.socket_dir, user="postgres", dbname=db,
                               autocommit=True, prepare_threshold=None)

    def query(self, db: str, tool: str, sqls: list[str]) -> list[list[tuple]]:
        with self.connect(db) as con:
            return [[tuple(r) for r in con.execute(q).fetchall()] for q in sqls]

    def change(self, db: str, tool: str, table: str, sql: str) -> None:
        """The peers' UPDATE of a source, then ANALYZE of it (as a loading job leaves
        it); untimed."""
        with self.connect(db) as con:
            con.execute(sql.replace("main.", f"{self.src_schema}."))
            con.execute(f"ANALYZE {self.src_schema}.{table}")

    def location(self, db: str) -> str:
        """Strata's `-o`: the socket folder percent-quoted as the host."""
        return f"postgresql://postgres@{quote(self.socket_dir, safe='')}/{db}"

    def tool_env(self, db: str) -> dict[str, str]:
        return {"BENCH_PGDB": db}

    def describe_text(self, text: str) -> str:
        return text.replace(quote(self.socket_dir, safe=""), "%2FSOCKDIR").replace(
            self.socket_dir, "SOCKDIR")

    def seed(self, rows: int, duck: Path) -> str:
        """Database `seed_<rows>` holding public.orders and public.customers, copied
        from the DuckDB file the peers' generator made (the same rows as bench/peers)."""
        name = f"seed_{rows}"
        if name in self.seeds:
            return name
        import duckdb

        t0 = time.perf_counter()
        self._drop(name)
        with self.connect("postgres") as con:
            con.execute(f'CREATE DATABASE "{name}"')
        src = duckdb.connect(str(duck), read_only=True)
        try:
            with self.connect(name) as con:
                con.execute("CREATE TABLE public.orders (id bigint, customer_id bigint, "
                            "amount numeric(12, 2), status text, updated_at timestamp)")
                con.execute("CREATE TABLE public.customers (id bigint, name text, region text)")
                for table in ("orders", "customers"):
                    with tempfile.TemporaryDirectory() as tmp:
                        csv = Path(tmp) / f"{table}.csv"
                        src.execute(f"COPY main.{table} TO '{csv}' (FORMAT csv, HEADER false)")
                        with csv.open("rb") as f, con.cursor() as cur, cur.copy(
                                f"COPY public.{table} FROM STDIN (FORMAT csv)") as copy:
                            while chunk := f.read(1 << 20):
                                copy.write(chunk)
                    (n,), = con.execute(f"SELECT count(*) FROM public.{table}").fetchall()
                    if n == 0:
                        raise RuntimeError(f"no rows loaded into public.{table}")
                con.execute("VACUUM ANALYZE")
        finally:
            src.close()
        self.seeds.add(name)
        print(f"   loaded {rows:,} orders into PostgreSQL in {time.perf_counter() - t0:.1f}s")
        return name

    def _drop(self, db: str) -> None:
        with self.connect("postgres") as con:
            con.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE datname = %s AND pid <> pg_backend_pid()", [db])
            con.execute(f'DROP DATABASE IF EXISTS "{db}"')

    def restore(self, seed: str, scen: str, tool: str) -> str:
        db = f"{scen}_{tool}"
        self._drop(db)
        with self.connect("postgres") as con:
            con.execute(f'CREATE DATABASE "{db}" TEMPLATE "{seed}"')
        return db

    def dbt_profile(self) -> str:
        return ("bench:\n  target: dev\n  outputs:\n    dev:\n      type: postgres\n"
                f"      host: \"{self.socket_dir}\"\n      port: 5432\n      user: postgres\n"
                "      password: \"\"\n      dbname: \"{{ env_var('BENCH_PGDB') }}\"\n"
                f"      schema: {MODEL_SCHEMA}\n      threads: {WORKERS}\n")

    def sqlmesh_config(self) -> str:
        return ("gateways:\n  local:\n    connection:\n      type: postgres\n"
                f"      host: \"{self.socket_dir}\"\n      port: 5432\n      user: postgres\n"
                "      password: \"\"\n      database: \"{{ env_var('BENCH_PGDB') }}\"\n"
                f"      concurrent_tasks: {WORKERS}\n"
                "default_gateway: local\nmodel_defaults:\n  dialect: postgres\n"
                f"  start: '{gen.START_DATE}'\n  cron: '@daily'\n")

    def ctas(self, table: str, select: str) -> str:
        return f"DROP TABLE IF EXISTS {table};\nCREATE TABLE {table} AS\n{select};\n"

    def raw_upsert(self) -> str:
        delta = (f"SELECT {gen.UPSERT_COLUMNS} FROM {self.src_schema}.orders WHERE updated_at > "
                 f"(SELECT max(updated_at) FROM {MODEL_SCHEMA}.upserted)")
        return (f"CREATE TEMP TABLE delta AS {delta};\n"
                f"DELETE FROM {MODEL_SCHEMA}.upserted WHERE id IN (SELECT id FROM delta);\n"
                f"INSERT INTO {MODEL_SCHEMA}.upserted SELECT * FROM delta;\n")

    def raw_cmd(self, db: str, files: list[str]) -> list[str]:
        return [_bin("strata", "python"), "-c", RAW_PG, self.socket_dir, db, *files]


RAW_PG = (
    "import sys, psycopg\n"
    "con = psycopg.connect(host=sys.argv[1], user='postgres', dbname=sys.argv[2], "
    "autocommit=True)\n"
    "for path in sys.argv[3:]:\n"
    "    for stmt in open(path).read().split(';\\n'):\n"
    "        if stmt.strip():\n"
    "            con.execute(stmt)\n"
)


class Spark(Engine):
    """Local Spark: each tool's warehouse is a folder (Hive catalog in Derby + parquet
    tables) made by the tool's own pyspark; the sources loaded there from parquet
    files the peers' DuckDB data was written to. Spark tables cannot be UPDATEd
    (parquet, no Delta: its jars come from Maven, unreachable here), so a change
    rewrites the source table (CTAS + DROP + RENAME)."""

    key, label = "spark", "Spark (local)"
    src_schema = "default"  # Strata reads `orders` unqualified: the current database

    def __init__(self, work: Path) -> None:
        self.root = work / "spark"
        self.parquet: dict[int, Path] = {}
        self.servers: dict[str, object] = {}  # strata-sc's warehouse folder -> its server

    def runs_tool(self, tool: str) -> bool:
        return True

    def serve(self, where: str):
        """A Spark Connect server on the warehouse folder WHERE (its Derby metastore and
        tables, the layout of `spark:DIR`; the folder is kept when it stops), with the
        session settings of `spark:DIR` (spark_ops.spark_conf; Spark's defaults for
        what the tests' servers turn off): tests/real_engines.py's server. Untimed."""
        sys.path.insert(0, str(REPO / "tests"))
        from real_engines import start_spark_connect

        conf = spark_ops.spark_conf(Path(where))
        for key in ("spark.master", "spark.driver.extraJavaOptions"):  # the server's own
            conf.pop(key)
        conf |= {"spark.sql.adaptive.enabled": "true", "spark.sql.codegen.wholeStage": "true"}
        server = start_spark_connect(seconds=600, root=Path(where), conf=conf)
        self.servers[where] = server
        return server

    def unserve(self, where: str) -> None:
        server = self.servers.pop(where, None)
        if server is not None:
            server.close()

    def release(self, dbs: dict[str, str]) -> None:
        if "strata-sc" in dbs:
            self.unserve(dbs["strata-sc"])

    def stop(self) -> None:
        for where in list(self.servers):
            with contextlib.suppress(Exception):
                self.unserve(where)

    def connect_url(self, where: str) -> str:
        return self.servers[where].url

    def through_server(self, where: str, sqls: list[str]) -> list[list[list]]:
        """SQLs in a new Connect session of WHERE's server (the server holds the Derby
        metastore: no other JVM may open it while it runs); a new session each time,
        as the other tools' reads are a new process, so no cached relation is read."""
        sys.path.insert(0, str(REPO / "tests"))
        from real_engines import connect_client

        client = connect_client(self.servers[where].url)
        try:
            out = [[[spark_ops.plain(v) for v in row] for row in client.sql(q).collect()]
                   for q in sqls]
        finally:
            with contextlib.suppress(Exception):
                client.client.close()
        return json.loads(json.dumps(out, default=str))  # as spark_ops.py's answers

    def version(self) -> str:
        v = json.loads((VENVS / "versions.json").read_text())
        return (f"pyspark {v['strata'].get('pyspark')} (Strata, dbt-spark) and "
                f"{v['sqlmesh'].get('pyspark')} (SQLMesh)")

    def ops(self, tool: str, where: str, *args: str, stdin: str | None = None) -> str:
        p = subprocess.run([_bin(venv_of(tool), "python"), str(HERE / "spark_ops.py"), where,
                            *args], input=stdin, capture_output=True, text=True,
                           env=_env(venv_of(tool)), timeout=1800, check=False)
        if p.returncode != 0:
            raise RuntimeError(peers._reason(p.stdout, p.stderr, p.returncode))
        return p.stdout

    def query(self, where: str, tool: str, sqls: list[str]) -> list[list[tuple]]:
        if tool == "strata-sc":
            answers = self.through_server(where, sqls)
        else:
            out = self.ops(tool, where, "query", stdin=json.dumps(sqls))
            answers = json.loads(out.strip().splitlines()[-1])
        return [[tuple(r) for r in rows] for rows in answers]

    def change(self, where: str, tool: str, table: str, sql: str) -> None:
        if tool == "strata-sc":
            self.through_server(where, [s for s in self.rewrite(table, sql).split(";\n")
                                        if s.strip()])
            return
        with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
            f.write(self.rewrite(table, sql))
        try:
            self.ops(tool, where, "exec", f.name)
        finally:
            os.unlink(f.name)

    def rewrite(self, table: str, sql: str) -> str:
        """The peers' UPDATE as a rewrite of the table."""
        t = f"{self.src_schema}.{table}"
        if table == "customers":  # UPDATE main.customers SET region = 'TAG_' || region WHERE ..
            cond = sql.split(" WHERE ")[1]
            new = sql.split(" SET region = ")[1].split(" WHERE ")[0]
            select = (f"SELECT id, name, CASE WHEN {cond} THEN {new} ELSE region END AS region "
                      f"FROM {t}")
        else:  # orders: the 1% change
            cond = "id % 100 = 0"
            assert cond in sql, sql
            select = (f"SELECT id, customer_id, CAST(CASE WHEN {cond} THEN amount + 1 ELSE amount "
                      f"END AS DECIMAL(12, 2)) AS amount, CASE WHEN {cond} THEN 'paid' ELSE "
                      f"status END AS status, CASE WHEN {cond} THEN TIMESTAMP '{gen.CHANGE_TS}' "
                      f"ELSE updated_at END AS updated_at FROM {t}")
        return (f"CREATE TABLE {t}__new USING parquet AS {select};\n"
                f"DROP TABLE {t};\nALTER TABLE {t}__new RENAME TO {t};\n")

    def location(self, where: str) -> str:
        return f"spark:{where}"

    def tool_env(self, where: str) -> dict[str, str]:
        return {"BENCH_SPARK_DIR": where}

    def describe_text(self, text: str) -> str:
        text = re.sub(r"sc://127\.0\.0\.1:\d+", "sc://127.0.0.1:PORT", text)
        return text.replace(str(self.root) + "/", "")

    def seed(self, rows: int, duck: Path) -> int:
        """Parquet files of the sources (loaded into each warehouse by `restore`)."""
        if rows not in self.parquet:
            import duckdb

            out = self.root / "data" / f"n{rows}"
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir(parents=True)
            con = duckdb.connect(str(duck), read_only=True)
            try:
                for table in ("orders", "customers"):
                    con.execute(f"COPY main.{table} TO '{out / (table + '.parquet')}' "
                                "(FORMAT parquet)")
            finally:
                con.close()
            self.parquet[rows] = out
        return rows

    def restore(self, seed: int, scen: str, tool: str) -> str:
        """A new warehouse folder with the sources, made by the tool's own pyspark
        (strata-sc: its server, started here on the folder and kept until `release`)."""
        where = self.root / "runs" / scen / tool
        self.unserve(str(where))
        shutil.rmtree(where, ignore_errors=True)
        where.mkdir(parents=True)
        if tool == "strata-sc":
            self.serve(str(where))
            self.through_server(str(where), spark_ops.load_statements(self.parquet[seed]))
        else:
            self.ops(tool, str(where), "load", str(self.parquet[seed]))
        return str(where)

    def _conf_yaml(self, indent: str) -> str:
        conf = spark_ops.spark_conf(Path("DIR"))
        conf.pop("spark.master")
        lines = []
        for k, v in conf.items():
            v = v.replace("DIR", "{{ env_var('BENCH_SPARK_DIR') }}")
            lines.append(f'{indent}{k}: "{v}"')
        return "\n".join(lines) + "\n"

    def dbt_profile(self) -> str:
        return ("bench:\n  target: dev\n  outputs:\n    dev:\n      type: spark\n"
                "      method: session\n      host: localhost\n"
                f"      schema: {MODEL_SCHEMA}\n      threads: {WORKERS}\n"
                "      server_side_parameters:\n        spark.master: \"local[2]\"\n"
                + self._conf_yaml("        "))

    def sqlmesh_config(self) -> str:
        return ("gateways:\n  local:\n    connection:\n      type: spark\n"
                f"      concurrent_tasks: {WORKERS}\n      config:\n"
                "        spark.master: \"local[2]\"\n" + self._conf_yaml("        ")
                + "    state_connection:\n      type: duckdb\n"
                "      database: \"{{ env_var('BENCH_SPARK_DIR') }}/sqlmesh_state.duckdb\"\n"
                "default_gateway: local\nmodel_defaults:\n  dialect: spark\n"
                f"  start: '{gen.START_DATE}'\n  cron: '@daily'\n")

    def ctas(self, table: str, select: str) -> str:
        return f"DROP TABLE IF EXISTS {table};\nCREATE TABLE {table} USING parquet AS\n{select};\n"

    def raw_upsert(self) -> str:
        t = f"{MODEL_SCHEMA}.upserted"
        delta = (f"SELECT {gen.UPSERT_COLUMNS} FROM {self.src_schema}.orders WHERE updated_at > "
                 f"(SELECT max(updated_at) FROM {t})")
        return (f"CACHE TABLE delta AS {delta};\n"
                f"CREATE TABLE {t}__new USING parquet AS SELECT * FROM {t} AS u WHERE NOT EXISTS "
                f"(SELECT 1 FROM delta AS d WHERE d.id = u.id) UNION ALL SELECT * FROM delta;\n"
                f"DROP TABLE {t};\nALTER TABLE {t}__new RENAME TO {t};\n")

    def raw_cmd(self, where: str, files: list[str]) -> list[str]:
        return [_bin("strata", "python"), str(HERE / "spark_ops.py"), where, "exec", *files]


# --------------------------------------------------------------------------- projects

def write_projects(models: int, out: Path, eng: Engine) -> Path:
    """The peers' project (generate.make_project: Strata, dbt, SQLMesh), with dbt's and
    SQLMesh's connection written for the engine and the sources in its schema, plus
    the raw floor's statements."""
    gen.make_project(models, out, threads=WORKERS)
    mdls = gen.all_models(models)
    dbt = out / "dbt"
    (dbt / "profiles.yml").write_text(eng.dbt_profile())
    srcs = dbt / "models" / "sources.yml"
    srcs.write_text(srcs.read_text().replace("schema: main", f"schema: {eng.src_schema}"))
    sm = out / "sqlmesh"
    (sm / "config.yaml").write_text(eng.sqlmesh_config())
    sources = re.compile(r"\bmain\.(" + "|".join(sorted(gen.SOURCES)) + r")\b")
    for f in (sm / "models").glob("*.sql"):
        f.write_text(sources.sub(eng.src_schema + r".\1", f.read_text()))
    write_raw(mdls, out / "raw", eng)
    return out


def write_raw(models: list, out: Path, eng: Engine) -> None:
    """The floor's statements: per model DROP TABLE + CREATE TABLE AS."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)

    def ref(name: str) -> str:
        return f"{eng.src_schema}.{name}" if name in gen.SOURCES else f"{MODEL_SCHEMA}.{name}"

    def ctas(m) -> str:
        return eng.ctas(f"{MODEL_SCHEMA}.{m.name}", m.sql(ref))

    head = f"CREATE SCHEMA IF NOT EXISTS {MODEL_SCHEMA};\n"
    (out / "models.sql").write_text(head + "".join(ctas(m) for m in models))
    down = gen.downstream(models, "customers")
    (out / "downstream_customers.sql").write_text(
        head + "".join(ctas(m) for m in models if m.name in down))
    (out / "upsert_full.sql").write_text(head + ctas(gen.upsert_model()))
    (out / "upsert.sql").write_text(eng.raw_upsert())


# --------------------------------------------------------------------------- tools

class Tool:
    name = ""
    relation_schema = MODEL_SCHEMA

    def __init__(self, eng: Engine) -> None:
        self.eng = eng

    def relation(self, model: str) -> str:
        return f"{self.relation_schema}.{model}"

    def clear_cache(self, proj: Path) -> None:
        pass


class Dbt(Tool):
    name = "dbt"

    def _cmd(self, proj: Path, where: str, *args: str) -> Cmd:
        d = proj / "dbt"
        return [_bin("dbt", "dbt"), *args], d, _env("dbt", {"DBT_PROFILES_DIR": str(d),
                                                          **self.eng.tool_env(where)})

    def clear_cache(self, proj: Path) -> None:
        for sub in ("target", "logs"):
            shutil.rmtree(proj / "dbt" / sub, ignore_errors=True)

    def full_run(self, proj, where):
        return self._cmd(proj, where, "run")

    def state_dir(self, proj: Path, where: str) -> Path:
        return proj.parent.parent / "state" / Path(where).name

    def keep_state(self, proj: Path, where: str) -> None:
        """The manifest of the run just made: what `--state` compares with."""
        state = self.state_dir(proj, where)
        state.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(proj / "dbt" / "target" / "manifest.json", state / "manifest.json")

    def noop_run(self, proj, where):
        # dbt's own no-op: only what changed against the first run's manifest: nothing
        return self._cmd(proj, where, "run", "--select", "state:modified+",
                         "--state", str(self.state_dir(proj, where)))

    def changed_run(self, proj, where):
        return self._cmd(proj, where, "run")

    def selected_run(self, proj, where):
        return self._cmd(proj, where, "run", "--select", "source:raw.customers+")

    def upsert_run(self, proj, where):
        return self._cmd(proj, where, "run", "--select", "upserted")

    upsert_build = upsert_run


class SQLMesh(Tool):
    name = "sqlmesh"
    relation_schema = gen.SQLMESH_SCHEMA
    plan = ("plan", "--auto-apply", "--no-prompts", "--execution-time", gen.PLAN_EXECUTION_TIME)

    def _cmd(self, proj: Path, where: str, argv: list[str]) -> Cmd:
        return argv, proj / "sqlmesh", _env("sqlmesh", self.eng.tool_env(where))

    def clear_cache(self, proj: Path) -> None:
        for sub in (".cache", "logs"):
            shutil.rmtree(proj / "sqlmesh" / sub, ignore_errors=True)

    def full_run(self, proj, where):
        return self._cmd(proj, where, [_bin("sqlmesh", "sqlmesh"), *self.plan])

    def noop_run(self, proj, where):
        # intervals up to 2024-12-31 are done: nothing is due, as in a real no-op
        return self._cmd(proj, where, [_bin("sqlmesh", "sqlmesh"), "run", "--end", "2024-12-31"])

    changed_run = noop_run

    def selected_run(self, proj, where):
        # the direct readers of `customers`; SQLMesh restates their downstream too
        readers = (proj / "readers_of_customers.txt").read_text().split()
        restate = [a for m in readers for a in ("--restate-model", f"{gen.SQLMESH_SCHEMA}.{m}")]
        return self._cmd(proj, where, [_bin("sqlmesh", "sqlmesh"), *self.plan, *restate])

    upsert_build = full_run

    def upsert_run(self, proj, where):
        return self._cmd(proj, where, [_bin("sqlmesh", "python"), "-c", peers.SQLMESH_UPSERT,
                                       gen.UPSERT_EXECUTION_TIME,
                                       f"{gen.SQLMESH_SCHEMA}.upserted"])


class Strata(Tool):
    name = "strata"

    def relation(self, model: str) -> str:
        """The main branch's live view; Spark's catalogue lower-cases names, so Strata
        stores them encoded there (strata/engine/adapters/spark.py, encode_name)."""
        if self.eng.key == "spark":
            from strata.engine.adapters.spark import encode_name

            return f"main.{encode_name(f'v_{model}')}"
        return f"main.v_{model}"

    def location(self, where: str) -> str:
        return self.eng.location(where)

    def _cmd(self, proj: Path, where: str, *args: str) -> Cmd:
        return ([_bin("strata", "strata"), "run", "strata", "-o", self.location(where),
                 "--json", "--workers", str(WORKERS), *args], proj,
                _env("strata", {"STRATA_CACHE_DIR": str(proj / ".strata-cache")}))

    def clear_cache(self, proj: Path) -> None:
        shutil.rmtree(proj / ".strata-cache", ignore_errors=True)

    def full_run(self, proj, where):
        return self._cmd(proj, where)

    def noop_run(self, proj, where):
        return self._cmd(proj, where, "--only-stale")

    changed_run = selected_run = noop_run

    def upsert_run(self, proj, where):
        return self._cmd(proj, where, "--models", "upserted")

    upsert_build = upsert_run


class StrataConnect(Strata):
    """The same project through the Spark Connect server the harness started on this
    tool's warehouse folder (Spark.serve), warm across the scenario's steps: a server
    kept running is the user's choice, and what `-o sc://` measures against the JVM
    every `spark:DIR` process starts. Its own cache folder, as every tool's."""

    name = "strata-sc"

    def location(self, where: str) -> str:
        return self.eng.connect_url(where)


class Raw(Tool):
    name = "raw"

    def _sql(self, proj: Path, where: str, *files: str) -> Cmd:
        return (self.eng.raw_cmd(where, [str(proj / "raw" / f) for f in files]), proj,
                _env("strata"))

    def full_run(self, proj, where):
        return self._sql(proj, where, "models.sql")

    def changed_run(self, proj, where):
        return self._sql(proj, where, "downstream_customers.sql")

    selected_run = changed_run

    def upsert_build(self, proj, where):
        return self._sql(proj, where, "upsert_full.sql")

    def upsert_run(self, proj, where):
        return self._sql(proj, where, "upsert.sql")


def labels(eng: Engine) -> dict[str, str]:
    raw = {"postgresql": "raw PostgreSQL", "spark": "raw Spark"}.get(eng.key, "raw")
    return {"dbt": "dbt", "sqlmesh": "SQLMesh", "strata": "Strata",
            "strata-sc": "Strata (sc://)", "raw": raw}


def describe(cmd: Cmd, eng: Engine) -> str:
    text = peers.describe(cmd)
    text = text.replace(str(VENVS) + "/", "").replace(str(HERE) + "/", "")
    text = eng.describe_text(text)
    if "'import sys, psycopg" in text:
        a = text.index("'import sys, psycopg")
        b = text.index("SOCKDIR", a)
        text = text[:a] + "<psycopg: each statement of the files, autocommit> " + text[b:]
    return text


# ------------------------------------------------------------------------- harness

class Bench:
    def __init__(self, args: argparse.Namespace, eng: Engine):
        self.args = args
        self.eng = eng
        self.work: Path = args.work
        self.runner = Runner(self.work / eng.key, args.timeout, args.verbose, args.max_load,
                             args.max_wait)
        self.tools = [t for t in TOOLS if t in args.tools and eng.runs_tool(t)]
        self.objs: dict[str, Tool] = {t: cls(eng) for t, cls in
                                      (("dbt", Dbt), ("sqlmesh", SQLMesh), ("strata", Strata),
                                       ("strata-sc", StrataConnect), ("raw", Raw))}
        self.rows: list[Row] = []
        self.reps = args.reps
        self.commit = peers.strata_commit()
        self.machine = peers.machine()

    def row(self, key: str, title: str) -> Row:
        r = Row(key, title)
        self.rows.append(r)
        return r

    def order(self, rep: int, tools: list[str]) -> list[str]:
        k = rep % len(tools)
        return tools[k:] + tools[:k]

    def seed(self, rows: int):
        path = self.work / "data" / f"orders_{rows}.duckdb"
        if not path.exists():
            gen.make_data(rows, path)
        return self.eng.seed(rows, path)

    def project(self, models: int) -> Path:
        return write_projects(models, self.work / self.eng.key / "projects" / f"m{models}",
                              self.eng)

    def restore(self, seed, scen: str, tool: str, proj: Path) -> str:
        self.objs[tool].clear_cache(proj)
        return self.eng.restore(seed, scen, tool)

    def measure(self, row: Row, tool: str, make: Callable[[], Cmd], label: str
                ) -> tuple[Sample, str]:
        try:
            cmd = make()
        except Exception as e:  # noqa: BLE001 - a harness bug for one tool is that cell's
            sample = Sample(None, False, f"harness: {type(e).__name__}: {e}"[:160])
            row.cell(tool).samples.append(sample)
            return sample, ""
        row.commands.setdefault(tool, describe(cmd, self.eng))
        sample, out = self.runner.run(cmd[0], cmd[1], cmd[2], f"{label} {tool}")
        if sample.ok and tool.startswith("strata"):
            sample.note = peers.strata_note(out)
        row.cell(tool).samples.append(sample)
        return sample, out

    def change(self, row: Row, tool: str, where: str, table: str, sql: str) -> bool:
        """An untimed change of a source; a failure is the tool's cell's reason."""
        try:
            self.eng.change(where, tool, table, sql)
            return True
        except Exception as e:  # noqa: BLE001
            row.cell(tool).samples.append(Sample(None, False, f"change failed: {e}"[:200]))
            return False

    # -- scenarios
    def runs(self, models: int, rows: int) -> None:
        """(b) first run, (c) no-op, (d) and (d') reruns after `customers` changed;
        every step checked against the raw floor's result of the same step."""
        seed = self.seed(rows)
        proj = self.project(models)
        scen = f"m{models}_n{rows}"
        size = f"{models} models, {rows:.0e} rows".replace("e+0", "e")
        b = self.row(f"first_{scen}", f"(b) first full run, {size}")
        c = self.row(f"noop_{scen}", f"(c) no-op rerun, nothing changed, {size}")
        d = self.row(f"changed_{scen}", f"(d) rerun after `customers` changed (10% of rows), {size}")
        d2 = self.row(f"selected_{scen}", "(d') rerun after `customers` changed again, the peers "
                      f"told which models to rebuild, {size}")
        print(f"== runs M={models} N={rows:,} on {self.eng.label}", flush=True)
        for rep in range(self.reps):
            order = self.order(rep, self.tools)
            dbs: dict[str, str] = {}
            for t in order:
                try:
                    dbs[t] = self.restore(seed, scen, t, proj)
                except Exception as e:  # noqa: BLE001
                    b.cell(t).samples.append(Sample(None, False, f"setup failed: {e}"[:200]))
                    continue
                self.measure(b, t, lambda t=t, dbs=dbs: self.objs[t].full_run(proj, dbs[t]),
                             f"first {scen} r{rep}")
                if t == "dbt" and b.cell(t).samples[-1].ok:
                    self.objs[t].keep_state(proj, dbs[t])
            order = [t for t in order if t in dbs]
            self.check_step(b, order, dbs, models)
            for t in order:
                if t != "raw":
                    self.measure(c, t, lambda t=t, dbs=dbs: self.objs[t].noop_run(proj, dbs[t]),
                                 f"noop {scen} r{rep}")
            self.check_step(c, order, dbs, models)
            for row, fn, tag, residue in ((d, "changed_run", "changed", 0),
                                          (d2, "selected_run", "again", 1)):
                sql = gen.change_customers_sql(tag, residue)
                for t in order:
                    if not self.change(row, t, dbs[t], "customers", sql):
                        continue
                    s, _ = self.measure(
                        row, t, lambda t=t, dbs=dbs, fn=fn: getattr(self.objs[t], fn)(proj, dbs[t]),
                        f"{fn.split('_')[0]} {scen} r{rep}")
                    if s.ok:
                        self.check_fresh(s, t, dbs[t], tag)
                self.check_step(row, order, dbs, models)
            self.eng.release(dbs)
        if "raw" in self.tools:
            c.cell("raw").skipped = "0 (nothing to run)"
            d.commands["raw"] = d.commands.get("raw", "") + "  (the 90 models Strata rebuilds)"
        if "dbt" in self.tools:
            d.commands["dbt"] = d.commands.get("dbt", "") + "  (every model: 101)"

    def upsert(self, rows: int) -> None:
        seed = self.seed(rows)
        proj = self.project(0)
        scen = f"upsert_n{rows}"
        size = f"{rows:.0e} rows".replace("e+0", "e")
        full = self.row(f"upsert_build_{rows}", f"(e0) first build of the upsert model, {size}")
        ups = self.row(f"upsert_{rows}", f"(e) upsert of 1% changed rows, {size}")
        print(f"== upsert N={rows:,} on {self.eng.label}", flush=True)
        for rep in range(self.reps):
            order = self.order(rep, self.tools)
            dbs: dict[str, str] = {}
            for t in order:
                try:
                    dbs[t] = self.restore(seed, scen, t, proj)
                except Exception as e:  # noqa: BLE001
                    full.cell(t).samples.append(Sample(None, False, f"setup failed: {e}"[:200]))
                    continue
                self.measure(full, t, lambda t=t, dbs=dbs: self.objs[t].upsert_build(proj, dbs[t]),
                             f"upsert-build r{rep}")
            for t in order:
                if not full.cell(t).samples[-1].ok:
                    ups.cell(t).samples.append(Sample(None, False, "first build failed"))
                    continue
                if not self.change(ups, t, dbs[t], "orders", gen.CHANGE_ORDERS_1PCT_SQL):
                    continue
                s, _ = self.measure(ups, t, lambda t=t, dbs=dbs: self.objs[t].upsert_run(
                    proj, dbs[t]), f"upsert r{rep}")
                if s.ok:
                    self.check_upsert(s, t, dbs[t], rows)
            self.eng.release(dbs)

    # -- correctness (untimed): the same checks as bench/peers, on the engine
    def signature(self, where: str, tool: str, models: int) -> dict:
        names = [f"m{i:03d}" for i in range(1, models + 1)]
        sqls = [f"SELECT {'count(*), sum(n), sum(total)' if i % 10 == 0 else 'count(*)'} "
                f"FROM {self.objs[tool].relation(n)}" for i, n in enumerate(names, 1)]
        results = self.eng.query(where, tool, sqls)
        return {n: tuple(_norm(v) for v in rows[0]) for n, rows in zip(names, results,
                                                                         strict=True)}

    def check_step(self, row: Row, tools: list[str], dbs: dict[str, str], models: int) -> None:
        """Each tool's result after a step must equal the raw floor's after the same step."""
        raw = row.cells.get("raw")
        if "raw" not in dbs:
            return
        if raw is not None and raw.samples and not raw.samples[-1].ok:
            return
        try:
            want = self.signature(dbs["raw"], "raw", models)
        except Exception as e:  # noqa: BLE001 - said in the raw cell
            if raw is not None and raw.samples:
                peers.add_note(raw.samples[-1],
                               f"result not read: {str(e).splitlines()[0][:80]}")
            return
        for t in tools:
            cell = row.cells.get(t)
            if t == "raw" or cell is None or not cell.samples or not cell.samples[-1].ok:
                continue
            s = cell.samples[-1]
            try:
                got = self.signature(dbs[t], t, models)
            except Exception as e:  # noqa: BLE001
                peers.add_note(s, f"result not checked: {str(e).splitlines()[0][:80]}")
                continue
            diff = [m for m in want if got.get(m) != want[m]]
            if diff:
                m = diff[0]
                peers.add_note(s, f"result differs from {labels(self.eng)['raw']} on "
                                  f"{len(diff)} models, e.g. {m}: {got.get(m)} vs {want[m]}")

    def check_fresh(self, s: Sample, tool: str, where: str, tag: str) -> None:
        rel = self.objs[tool].relation("m002")
        try:
            ((n,),), = self.eng.query(where, tool, [
                f"SELECT count(*) FROM {rel} WHERE region_upper LIKE '{tag.upper()}%'"])
        except Exception as e:  # noqa: BLE001
            peers.add_note(s, f"freshness not checked: {str(e).splitlines()[0][:80]}")
            return
        if n == 0:
            peers.add_note(s, "STALE: result misses the change")

    def check_upsert(self, s: Sample, tool: str, where: str, rows: int) -> None:
        rel = self.objs[tool].relation("upserted")
        try:
            (got,), = self.eng.query(where, tool, [
                (f"SELECT count(*), count(DISTINCT id), sum(CASE WHEN updated_at = TIMESTAMP "
                 f"'{gen.CHANGE_TS}' THEN 1 ELSE 0 END) FROM {rel}")])
        except Exception as e:  # noqa: BLE001
            peers.add_note(s, f"result not checked: {str(e).splitlines()[0][:80]}")
            return
        want = (rows, rows, rows // 100)
        if tuple(int(v or 0) for v in got) != want:
            peers.add_note(s, f"WRONG: rows/distinct ids/changed = {tuple(got)}, want {want}")


def _norm(v):
    """A sum as a number whatever its text (Spark's answers come back as JSON strings)."""
    from decimal import Decimal, InvalidOperation

    if isinstance(v, (str, float, Decimal)):
        try:
            return Decimal(str(v)).normalize()
        except InvalidOperation:
            return v
    return v


# -------------------------------------------------------------------------- report

def versions() -> dict:
    p = VENVS / "versions.json"
    return json.loads(p.read_text()) if p.exists() else {}


def section_data(bench: Bench, started: dt.datetime, elapsed: float, engine_version: str) -> dict:
    args = bench.args
    loads = [s.load for r in bench.rows for c in r.cells.values() for s in c.samples
             if s.load is not None]
    return {
        "engine": bench.eng.key, "label": bench.eng.label, "engine_version": engine_version,
        "started": started.isoformat(), "elapsed_s": elapsed, "argv": args.argv,
        "quick": args.quick, "machine": bench.machine, "versions": versions(),
        "reps": bench.reps, "workers": WORKERS, "tools": bench.tools,
        "strata_commit": bench.commit, "timeout": args.timeout, "max_load": args.max_load,
        "waited_s": bench.runner.waited, "load_median": statistics.median(loads) if loads else None,
        "labels": labels(bench.eng),
        "rows": [{"key": r.key, "title": r.title, "commands": r.commands,
                  "cells": {t: asdict(c) for t, c in r.cells.items()}} for r in bench.rows],
    }


ENGINE_NOTES = {
    "postgresql": (
        "Every tool gets its own database, a copy (`CREATE DATABASE ... TEMPLATE`) of the "
        "same seeded sources (`public.orders`, `public.customers`), before its first run. "
        "The cluster is a throwaway one on a Unix socket (fsync off, shared_buffers 256MB, "
        "work_mem 32MB). dbt: dbt-postgres, `threads` in profiles.yml, models in schema "
        "`main`; `upserted` incremental with `unique_key='id'` (dbt-postgres's default "
        "strategy for it, delete+insert). SQLMesh: a `postgres` gateway (its state in the "
        "same database), `concurrent_tasks`; `upserted` INCREMENTAL_BY_UNIQUE_KEY (MERGE). "
        "Strata: `-o postgresql://postgres@<socket dir>/<db>`."),
    "spark": (
        "Every tool gets its own local warehouse: a folder with a Hive catalog (Derby) and "
        "parquet tables, the sources (`default.orders`, `default.customers`) loaded into it "
        "by the tool's own pyspark, local[2], 2 shuffle partitions, UTC: the session "
        "`strata -o spark:DIR` opens (dbt's `server_side_parameters` and SQLMesh's `config` "
        "name the same settings). dbt: dbt-spark, `method: session`, `threads`. SQLMesh: a "
        "`spark` connection with `concurrent_tasks` (its state in a DuckDB file: SQLMesh "
        "does not keep state on Spark). A source change rewrites the table (Spark cannot "
        "UPDATE a parquet table; Delta's jars come from Maven, unreachable offline)."),
}
SC_NOTE = (
    " Strata (sc://): the same Strata project with `-o sc://127.0.0.1:PORT`, through a "
    "Spark Connect server (pyspark's `start-connect-server.sh`, the same settings and "
    "warehouse layout, a folder of its own) that the harness starts before the tool's "
    "first step and keeps warm until its last: the server's start-up is **not** in its "
    "cells (every `spark:DIR` cell includes a JVM start); the harness's own loads, "
    "changes and checks go through that server too.")


def render(data: dict) -> str:
    """RESULTS.md from results.json: one section per engine measured."""
    lines = [
        "# Strata vs dbt vs SQLMesh on PostgreSQL and Spark",
        "",
        ("Made by `bench/engines/run.py` (see README.md). Every cell is the wall clock of a "
        "whole process (start-up and imports included), tools interleaved, one process "
        "at a time; ratios are Strata's median divided by the other tool's (below 1× "
        "Strata is faster), Strata (sc://)'s divided by the faster of dbt and SQLMesh "
        "(of those whose result passed the checks; named in the cell); ⚠ marks a result a correctness check rejected (after every "
        "timed step each model's row count, and each aggregate's sums, must equal the raw "
        "floor's after the same step; after (d)/(d') `m002` must show the changed regions; "
         "after (e) `upserted` must have N rows, N distinct ids and N/100 changed ones)."),
        "",
    ]
    for key in ("postgresql", "spark"):
        sec = data.get("engines", {}).get(key)
        if sec:
            lines += render_section(sec)
    return "\n".join(lines) + "\n"


def render_section(sec: dict) -> list[str]:
    labs = sec["labels"]
    tools = sec["tools"]
    rows = []
    order = ("first", "noop", "changed", "selected", "upsert_build", "upsert")
    for r in sorted(sec["rows"], key=lambda r: order.index(r["key"].rsplit("_", 1)[0]
                                                              if r["key"].startswith("upsert_b")
                                                              else r["key"].split("_")[0])):
        row = Row(r["key"], r["title"], dict(r["commands"]))
        for t, c in r["cells"].items():
            row.cells[t] = Cell([Sample(**smp) for smp in c["samples"]], c["skipped"])
        rows.append(row)
    fake = SimpleNamespace(rows=rows, args=SimpleNamespace(max_load=sec["max_load"]),
                           runner=SimpleNamespace(waited=sec["waited_s"]))
    v = sec.get("versions") or {}
    started = dt.datetime.fromisoformat(sec["started"])
    peers_vs = [t for t in tools if t not in ("strata", "strata-sc")]
    heads = [f"Strata/{labs[t]}" for t in peers_vs] if "strata" in tools else []
    if "strata-sc" in tools:
        heads.append(f"{labs['strata-sc']}/faster peer")
    ver = ""
    if v:
        ver = ("- Versions: dbt-core {dc} + {ad} {av}; SQLMesh {sm}; Strata at commit {sc} "
               "(sqlglot {sg}); Python {py}.").format(
            dc=v["dbt"].get("dbt-core"),
            ad="dbt-postgres" if sec["engine"] == "postgresql" else "dbt-spark",
            av=v["dbt"].get("dbt-postgres" if sec["engine"] == "postgresql" else "dbt-spark"),
            sm=v["sqlmesh"].get("sqlmesh"), sc=sec["strata_commit"],
            sg=v["strata"].get("sqlglot"), py=v.get("python"))
    w = sec["workers"]
    lines = [
        f"## {sec['label']}",
        "",
        f"`python3 bench/engines/run.py {' '.join(sec['argv'])}`".replace(" `", "`")
        + f" on {started:%Y-%m-%d %H:%M} UTC, {sec['elapsed_s'] / 60:.1f} min"
        + (" — **quick smoke-test sizes, not the real benchmark**." if sec["quick"] else "."),
        "",
        f"- Machine: {sec['machine']}; one process at a time.",
        f"- Engine: {sec['label']} {sec['engine_version']}. {ENGINE_NOTES[sec['engine']]}"
        + (SC_NOTE if "strata-sc" in tools else ""),
        (f"- Concurrency: every tool at {w}: dbt `threads: {w}`, SQLMesh `concurrent_tasks: "
         f"{w}`, Strata `run --workers {w}`; {labs['raw']} is the floor: the same CREATE "
         "TABLE ... AS statements one after another on one connection (session)."),
        (f"- Repetitions: {sec['reps']} per cell (median); timeout {sec['timeout']:.0f} s "
         "per process."),
        "- Machine load: " + peers.load_summary(fake).replace(
            "compare the quiet-machine figures in PEERS.md", "compare bench/peers/RESULTS.md"),
    ]
    if ver:
        lines.append(ver)
    lines += [
        "",
        "| " + " | ".join(["work"] + [labs[t] for t in tools] + heads) + " |",
        "|---|" + "---:|" * (len(tools) + len(heads)),
    ]
    for row in rows:
        cols = [peers.cell_text(row, t) for t in tools]
        if "strata" in tools:
            cols += [peers.ratio(row, "strata", t) for t in peers_vs]
        if "strata-sc" in tools:
            cols.append(faster_peer_ratio(row, "strata-sc", labs))
        lines.append(f"| {row.title} | " + " | ".join(cols) + " |")
    lines += ["", f"### What each row ran ({sec['label']})", ""]
    for row in rows:
        if not row.commands:
            continue
        lines += [f"**{row.title}**", ""]
        lines += [f"- {labs[t]}: `{row.commands[t]}`" for t in tools if t in row.commands]
        notes = [f"{labs[t]}: {n}" for t in tools if t in row.cells
                 for n in row.cells[t].notes()]
        if notes:
            lines.append(f"- notes: {'; '.join(notes)}")
        lines.append("")
    return lines


def faster_peer_ratio(row: Row, tool: str, labs: dict[str, str]) -> str:
    """TOOL's median over the faster of dbt's and SQLMesh's, among those whose result
    passed the checks (a time for a wrong result compares nothing); the peer named."""
    cell = row.cells.get(tool)
    if not cell or cell.skipped or cell.median() is None:
        return "—"
    if peers.warnings(cell):
        return "— (⚠)"
    times = [(c.median(), p) for p in ("dbt", "sqlmesh") if (c := row.cells.get(p))
             and not c.skipped and not peers.warnings(c) and c.median()]
    if not times:
        return "—"
    best, peer = min(times)
    return f"{cell.median() / best:.2f}× ({labs[peer]})"


def write_report(args: argparse.Namespace, section: dict) -> None:
    """Replace this engine's section in results.json; RESULTS.md from all sections."""
    js = args.out.with_name(args.json_name)
    data = json.loads(js.read_text()) if js.exists() else {}
    data.setdefault("engines", {})[section["engine"]] = section
    args.out.parent.mkdir(parents=True, exist_ok=True)
    js.write_text(json.dumps(data, indent=1) + "\n")
    args.out.write_text(render(data))
    print(f"== wrote {args.out} and {js}")


# ---------------------------------------------------------------------------- main

def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", default=None,
                    help="comma list: postgresql,spark (default postgresql; quick: both)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke test: runs 20x1e4, upsert 1e4, 1 rep, no load waiting; "
                         "writes work/quick/RESULTS.md unless --out")
    ap.add_argument("--reps", type=int, help="repetitions per cell (default 1)")
    ap.add_argument("--run", type=peers._size,
                    help="MxN for (b)-(d') (default 100x1e6 on PostgreSQL, 30x1e5 on Spark)")
    ap.add_argument("--upsert-rows", type=peers._num,
                    help="N for (e0)/(e) (default 1e6 on PostgreSQL, 1e5 on Spark)")
    ap.add_argument("--tools", default=",".join(TOOLS),
                    help="comma list of " + ",".join(TOOLS) + " (strata-sc: Spark only, "
                         "Strata through a Spark Connect server the harness starts)")
    ap.add_argument("--only", default="runs,upsert", help="comma list of parts: runs,upsert")
    ap.add_argument("--timeout", type=float, help="seconds per process (default 1800, quick 600)")
    ap.add_argument("--workers", type=int, default=4,
                    help="dbt threads = SQLMesh concurrent_tasks = Strata --workers (default 4)")
    ap.add_argument("--max-load", type=float,
                    help="wait before each process until the 1-min load is at most this "
                         "(default 1.5, quick 0 = never)")
    ap.add_argument("--max-wait", type=float, default=300.0,
                    help="longest wait for --max-load, seconds (then measure anyway)")
    ap.add_argument("--work", type=Path, default=HERE / "work", help="work dir (git-ignored)")
    ap.add_argument("--out", type=Path, help="report path (default bench/engines/RESULTS.md)")
    ap.add_argument("--no-setup", action="store_true", help="never run setup.sh")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    args.argv = argv
    global WORKERS
    WORKERS = args.workers
    q = args.quick
    args.engines = [e for e in (args.engine or ("postgresql,spark" if q else "postgresql"))
                    .split(",") if e]
    bad = [e for e in args.engines if e not in ("postgresql", "spark")]
    if bad:
        ap.error(f"unknown engines {bad}")
    args.reps = args.reps or 1
    args.timeout = args.timeout or (600.0 if q else 1800.0)
    if args.max_load is None:
        args.max_load = 0.0 if q else 1.5
    args.tools = [t for t in args.tools.split(",") if t]
    bad = [t for t in args.tools if t not in TOOLS]
    if bad:
        ap.error(f"unknown tools {bad}")
    args.only = set(args.only.split(","))
    args.work = args.work.resolve()
    args.out = args.out or (args.work / "quick" / "RESULTS.md" if q else HERE / "RESULTS.md")
    args.json_name = "results.json"
    return args


def sizes(args: argparse.Namespace, engine: str) -> tuple[tuple[int, int], int]:
    if args.quick:
        return args.run or (20, 10_000), args.upsert_rows or 10_000
    if engine == "spark":
        return args.run or (30, 100_000), args.upsert_rows or 100_000
    return args.run or (100, 1_000_000), args.upsert_rows or 1_000_000


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def run_engine(args: argparse.Namespace, key: str) -> bool:
    """Measure one engine and write its section; False when interrupted."""
    started = dt.datetime.now(dt.UTC)
    t0 = time.perf_counter()
    eng: Engine = Postgres() if key == "postgresql" else Spark(args.work)
    bench = Bench(args, eng)
    run, upsert_rows = sizes(args, key)
    finished = True
    version = "?"
    try:
        eng.start()
        version = eng.version()
        # the upsert first: short, so a run cut short (Ctrl-C) still has its rows
        if "upsert" in args.only:
            bench.upsert(upsert_rows)
        if "runs" in args.only:
            bench.runs(*run)
    except KeyboardInterrupt:
        print("!! interrupted: writing what was measured so far")
        finished = False
    except Exception:  # noqa: BLE001 - a harness failure still writes what was measured
        import traceback

        traceback.print_exc()
        print("!! the harness failed: writing what was measured so far")
    finally:
        with contextlib.suppress(Exception):
            eng.stop()
    end = peers.strata_commit()
    if end != bench.commit:
        bench.commit = f"{bench.commit} (at the start; {end} at the end)"
    write_report(args, section_data(bench, started, time.perf_counter() - t0, version))
    return finished


sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from strata_bytecode import compile_strata


def main() -> None:
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    if sys.argv[1:2] == ["--rerender"]:  # --rerender results.json OUT.md
        data = json.loads(Path(sys.argv[2]).read_text())
        Path(sys.argv[3]).write_text(render(data))
        return
    args = parse_args(sys.argv[1:])
    compile_strata(sys.executable)  # as an installed package has it (strata_bytecode.py)
    args.work.mkdir(parents=True, exist_ok=True)
    for key in args.engines:
        if not run_engine(args, key):
            break


if __name__ == "__main__":
    main()
