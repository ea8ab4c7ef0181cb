"""Side-by-side benchmark: Strata vs dbt (dbt-duckdb) vs SQLMesh vs raw DuckDB.

One command (creates the venvs on first use, then re-runs itself inside the
Strata bench venv, which has matplotlib):

    python3 bench/peers/run.py --quick     # smoke test, a few minutes
    python3 bench/peers/run.py             # full size, long

Every measurement is a whole process (subprocess, wall clock) with a timeout.
Tools are interleaved inside every repetition (the starting tool rotates), one
process at a time, and each cell is the median of the repetitions. A tool that
fails on a row is reported as failed with the reason; the harness goes on.
Writes RESULTS.md, results.png and results.json (see README.md).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
VENVS = HERE / ".venvs"
BENCH_PY = VENVS / "strata" / "bin" / "python"

TOOLS = ["dbt", "sqlmesh", "strata", "raw", "raw_txn", "raw_par"]
RAWS = ("raw", "raw_txn", "raw_par")  # the three floors: serial, one transaction, N threads
LABELS = {"dbt": "dbt", "sqlmesh": "SQLMesh", "strata": "Strata", "raw": "raw serial",
          "raw_txn": "raw, 1 txn", "raw_par": "raw, N threads"}
WORKERS = 4  # every tool's concurrency (Strata's --workers default); set by --workers
WAREHOUSE = "warehouse.duckdb"  # same file name everywhere: SQLMesh's catalog name


# ----------------------------------------------------------------------- bootstrap

def _bootstrap() -> None:
    """Make sure the venvs exist and run inside the Strata bench venv."""
    need_setup = not all((VENVS / v / "bin" / "python").exists()
                         for v in ("dbt", "sqlmesh", "strata"))
    if not need_setup and (REPO / "pyproject.toml").exists():
        need_setup = not (VENVS / "strata" / "bin" / "strata").exists()
    if need_setup and "--no-setup" not in sys.argv:
        print("== setting up the benchmark venvs (bench/peers/setup_peers.sh)", flush=True)
        subprocess.run(["bash", str(HERE / "setup_peers.sh")], check=True)
    if Path(sys.prefix).resolve() != (VENVS / "strata").resolve():
        os.execv(str(BENCH_PY), [str(BENCH_PY), str(Path(__file__).resolve()), *sys.argv[1:]])


if __name__ == "__main__":
    _bootstrap()

sys.path.insert(0, str(HERE))
import generate as gen

# ------------------------------------------------------------------------ samples

@dataclass
class Sample:
    seconds: float | None  # wall clock of the whole process; None if it failed
    ok: bool
    reason: str = ""  # why it failed
    note: str = ""  # e.g. "stale result", "rebuilt 90, reused 11"
    load: float | None = None  # 1-min load average just before the process started
    load_after: float | None = None  # and just after it ended


@dataclass
class Cell:
    samples: list[Sample] = field(default_factory=list)
    skipped: str = ""  # not applicable to this tool (shown as the text)

    def median(self) -> float | None:
        ok = [s.seconds for s in self.samples if s.ok and s.seconds is not None]
        if not ok or len(ok) < len(self.samples):
            return None
        return statistics.median(ok)

    def failure(self) -> str:
        bad = [s for s in self.samples if not s.ok]
        return bad[0].reason if bad else ""

    def notes(self) -> list[str]:
        seen: list[str] = []
        for s in self.samples:
            if s.note and s.note not in seen:
                seen.append(s.note)
        return seen


@dataclass
class Row:
    key: str
    title: str
    commands: dict[str, str] = field(default_factory=dict)  # tool -> what was run
    cells: dict[str, Cell] = field(default_factory=dict)

    def cell(self, tool: str) -> Cell:
        return self.cells.setdefault(tool, Cell())


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _reason(out: str, err: str, rc: int) -> str:
    text = ANSI.sub("", (err or "") + "\n" + (out or ""))
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    pick = ""
    for ln in lines:  # prefer the first line that names an error
        if re.search(r"error|exception|failed|traceback", ln, re.IGNORECASE) and not ln.startswith("File "):
            pick = ln
            if not ln.lower().startswith("traceback"):
                break
    if not pick and lines:
        pick = lines[-1]
    pick = re.sub(r"^\d\d:\d\d:\d\d\s+", "", pick)
    return f"exit {rc}: {pick[:160]}"


class Runner:
    def __init__(self, work: Path, timeout: float, verbose: bool,
                 max_load: float = 0.0, max_wait: float = 600.0):
        self.work = work
        self.timeout = timeout
        self.verbose = verbose
        self.max_load = max_load  # 0: do not wait for a quiet machine
        self.max_wait = max_wait
        self.waited = 0.0  # seconds spent waiting for the machine to calm down
        self.logs = work / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.count = 0

    def run(self, argv: list[str], cwd: Path, env: dict[str, str], label: str,
            timeout: float | None = None) -> tuple[Sample, str]:
        """Run one whole process; return the sample and its stdout."""
        self.count += 1
        timeout = timeout or self.timeout
        log = self.logs / f"{self.count:04d}_{re.sub(r'[^A-Za-z0-9_.-]+', '_', label)}.log"
        load = self.wait_quiet(label)
        t0 = time.perf_counter()
        try:
            proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True, start_new_session=True)
        except OSError as e:  # e.g. the tool's executable is not installed
            self._say(label, f"FAILED {e}")
            return Sample(None, False, f"cannot start: {e.strerror}: {Path(argv[0]).name}"), ""
        try:
            out, err = proc.communicate(timeout=timeout)
            seconds = time.perf_counter() - t0
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the group this process started
            out, err = proc.communicate()
            log.write_text(f"$ {' '.join(argv)}\n(timeout)\n{out}\n--- stderr\n{err}")
            self._say(label, f"TIMEOUT after {timeout:.0f}s")
            return Sample(None, False, f"timeout after {timeout:.0f} s", load=load), out
        except BaseException:  # interrupted: do not leave the tool running
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
        log.write_text(f"$ {' '.join(argv)}\n(cwd {cwd}, exit {proc.returncode}, "
                       f"{seconds:.3f}s)\n{out}\n--- stderr\n{err}")
        after = os.getloadavg()[0]
        if proc.returncode != 0:
            reason = _reason(out, err, proc.returncode)
            self._say(label, f"FAILED ({seconds:.2f}s) {reason}")
            return Sample(None, False, reason, load=load, load_after=after), out
        self._say(label, f"{seconds:.3f}s" + (f"  (load {load:.1f} -> {after:.1f})"
                                               if self.verbose else ""))
        return Sample(seconds, True, load=load, load_after=after), out

    def wait_quiet(self, label: str) -> float:
        """Wait (up to max_wait) until the 1-min load average is at most max_load,
        so that other work on the machine does not land in the figures."""
        load = os.getloadavg()[0]
        if self.max_load <= 0 or load <= self.max_load:
            return load
        t0 = time.monotonic()
        self._say(label, f"waiting for load {load:.1f} <= {self.max_load}")
        while load > self.max_load and time.monotonic() - t0 < self.max_wait:
            time.sleep(5)
            load = os.getloadavg()[0]
        self.waited += time.monotonic() - t0
        return load

    def _say(self, label: str, msg: str) -> None:
        print(f"   {label:<48} {msg}", flush=True)


# -------------------------------------------------------------------------- tools

def _venv_env(venv: str, db: Path | None = None, extra: dict | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("VIRTUAL_ENV", "PYTHONHOME", "PYTHONPATH"))}
    env["PATH"] = f"{VENVS / venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(VENVS / venv)
    env["NO_COLOR"] = "1"
    env["TERM"] = "dumb"
    env["DO_NOT_TRACK"] = "1"
    env["DBT_SEND_ANONYMOUS_USAGE_STATS"] = "False"
    env["DBT_VERSION_CHECK"] = "False"
    env["SQLMESH__DISABLE_ANONYMIZED_ANALYTICS"] = "1"
    env["BENCH_DB"] = str(db) if db else str(Path("/nonexistent") / WAREHOUSE)
    if extra:
        env.update(extra)
    return env


Cmd = tuple[list[str], Path, dict[str, str]]


class Tool:
    name = ""

    def bin(self, exe: str) -> str:
        return str(VENVS / self.venv / "bin" / exe)

    venv = ""

    def clear_cache(self, proj: Path) -> None:
        pass

    def relation(self, model: str) -> str:
        return f"main.{model}"


class Dbt(Tool):
    name, venv = "dbt", "dbt"

    def _cmd(self, proj: Path, db: Path | None, *args: str) -> Cmd:
        d = proj / "dbt"
        return ([self.bin("dbt"), *args], d,
                _venv_env("dbt", db, {"DBT_PROFILES_DIR": str(d)}))

    def clear_cache(self, proj: Path) -> None:
        for sub in ("target", "logs"):
            shutil.rmtree(proj / "dbt" / sub, ignore_errors=True)

    def startup(self, proj: Path) -> Cmd:
        return self._cmd(proj, None, "--help")

    def parse(self, proj: Path) -> Cmd:
        return self._cmd(proj, None, "parse", "--no-partial-parse")

    def full_run(self, proj, db):
        return self._cmd(proj, db, "run")

    def serial_run(self, proj, db):
        return self._cmd(proj, db, "run", "--target", "serial")

    def noop_run(self, proj, db):
        # dbt's own no-op: only what changed against the previous run's manifest
        # (state:modified+, kept next to the warehouse by `keep_state`): nothing
        return self._cmd(proj, db, "run", "--select", "state:modified+",
                         "--state", str(db.parent / "state"))

    def rebuild_run(self, proj, db):
        return self._cmd(proj, db, "run")

    def keep_state(self, proj: Path, db: Path) -> None:
        """The manifest of the run just made: what `--state` compares with."""
        state = db.parent / "state"
        state.mkdir(exist_ok=True)
        shutil.copyfile(proj / "dbt" / "target" / "manifest.json", state / "manifest.json")

    def changed_run(self, proj, db):
        return self._cmd(proj, db, "run")

    def selected_run(self, proj, db):
        return self._cmd(proj, db, "run", "--select", "source:raw.customers+")

    def upsert_build(self, proj, db):
        return self._cmd(proj, db, "run", "--select", "upserted")

    def upsert_run(self, proj, db):
        return self._cmd(proj, db, "run", "--select", "upserted")


SQLMESH_LOAD = "from sqlmesh import Context; Context(paths='.')"
SQLMESH_UPSERT = (
    "from sqlmesh import Context\n"
    "import sys\n"
    "status = Context(paths='.').run(execution_time=sys.argv[1], select_models=[sys.argv[2]])\n"
    "print(status)\n"
    "sys.exit(0 if 'SUCCESS' in str(status) else 1)\n"
)


class SQLMesh(Tool):
    name, venv = "sqlmesh", "sqlmesh"
    plan_args = ("plan", "--auto-apply", "--no-prompts",
                 "--execution-time", gen.PLAN_EXECUTION_TIME)

    def _cmd(self, proj: Path, db: Path | None, argv: list[str]) -> Cmd:
        return argv, proj / "sqlmesh", _venv_env("sqlmesh", db)

    def clear_cache(self, proj: Path) -> None:
        for sub in (".cache", "logs"):
            shutil.rmtree(proj / "sqlmesh" / sub, ignore_errors=True)

    def relation(self, model: str) -> str:
        return f"{gen.SQLMESH_SCHEMA}.{model}"

    def startup(self, proj):
        return self._cmd(proj, None, [self.bin("sqlmesh"), "--help"])

    def parse(self, proj):
        return self._cmd(proj, None, [self.bin("python"), "-c", SQLMESH_LOAD])

    def full_run(self, proj, db):
        return self._cmd(proj, db, [self.bin("sqlmesh"), *self.plan_args])

    def serial_run(self, proj, db):
        return self._cmd(proj, db, [self.bin("sqlmesh"), "--gateway", "serial",
                                    *self.plan_args])

    def noop_run(self, proj, db):
        # Intervals up to 2024-12-31 are done: nothing is due, as in a real no-op.
        return self._cmd(proj, db, [self.bin("sqlmesh"), "run", "--end", "2024-12-31"])

    def changed_run(self, proj, db):
        return self.noop_run(proj, db)

    def selected_run(self, proj, db):
        # The direct readers of `customers`; SQLMesh restates their downstream too.
        readers = (proj / "readers_of_customers.txt").read_text().split()
        restate = [a for m in readers for a in ("--restate-model", f"{gen.SQLMESH_SCHEMA}.{m}")]
        return self._cmd(proj, db, [self.bin("sqlmesh"), *self.plan_args, *restate])

    def upsert_build(self, proj, db):
        return self.full_run(proj, db)

    def upsert_run(self, proj, db):
        return self._cmd(proj, db, [self.bin("python"), "-c", SQLMESH_UPSERT,
                                    gen.UPSERT_EXECUTION_TIME,
                                    f"{gen.SQLMESH_SCHEMA}.upserted"])


class Strata(Tool):
    name, venv = "strata", "strata"

    def _cmd(self, proj: Path, db: Path | None, *args: str) -> Cmd:
        # the parse and compiled-SQL caches live in the project, so that clear_cache
        # makes "cold" rows cold, as dbt's target/ and SQLMesh's .cache are cleared
        return [self.bin("strata"), *args], proj, _venv_env(
            "strata", db, {"STRATA_CACHE_DIR": str(proj / ".strata-cache")})

    def clear_cache(self, proj: Path) -> None:
        # parse trees, compiled SQL and the parser's LALR tables (`grammar/`, ~0.25 s to
        # build again) all live there
        shutil.rmtree(proj / ".strata-cache", ignore_errors=True)

    def relation(self, model: str) -> str:
        return f"main.v_{model}"

    def startup(self, proj):
        return self._cmd(proj, None, "--help")

    def parse(self, proj):
        return self._cmd(proj, None, "check", "strata")

    def compile(self, proj):
        return self._cmd(proj, None, "compile", "strata", "--show-sql")

    def full_run(self, proj, db, workers: int | None = None):
        return self._cmd(proj, db, "run", "strata", "-o", str(db), "--json",
                         "--workers", str(workers or WORKERS))

    def serial_run(self, proj, db):
        return self.full_run(proj, db, workers=1)

    def noop_run(self, proj, db):
        return self._cmd(proj, db, "run", "strata", "-o", str(db), "--only-stale", "--json",
                         "--workers", str(WORKERS))

    def changed_run(self, proj, db):
        return self.noop_run(proj, db)

    def selected_run(self, proj, db):
        return self.noop_run(proj, db)

    def upsert_build(self, proj, db):
        return self._cmd(proj, db, "run", "strata", "-o", str(db), "--models", "upserted",
                         "--json", "--workers", str(WORKERS))

    def upsert_run(self, proj, db):
        return self.upsert_build(proj, db)


class Raw(Tool):
    """The floor: the same SQL run by raw_run.py; `mode` serial (each statement its
    own commit), txn (one transaction) or threads (WORKERS threads over the DAG)."""
    name, venv = "raw", "strata"  # the Strata bench venv has the same duckdb
    mode = "serial"

    def _sql(self, proj: Path, db: Path, *files: str) -> Cmd:
        mode = [] if self.mode == "serial" else ["--mode", self.mode]
        if self.mode == "threads":
            mode += ["--threads", str(WORKERS)]
        return ([self.bin("python"), str(HERE / "raw_run.py"), *mode, str(db),
                 *(str(proj / "raw" / f) for f in files)], proj, _venv_env("strata", db))

    def startup(self, proj):
        return [self.bin("python"), "-c", "import duckdb"], proj, _venv_env("strata")

    def full_run(self, proj, db):
        return self._sql(proj, db, "models.sql")

    def serial_run(self, proj, db):
        return self.full_run(proj, db)

    def changed_run(self, proj, db):
        # the same work as Strata's: the models downstream of `customers`
        return self._sql(proj, db, "downstream_customers.sql")

    def selected_run(self, proj, db):
        return self._sql(proj, db, "downstream_customers.sql")

    def upsert_build(self, proj, db):
        return self._sql(proj, db, "upsert_full.sql")

    def upsert_run(self, proj, db):
        return self._sql(proj, db, "upsert.sql")


class RawTxn(Raw):
    name, mode = "raw_txn", "txn"


class RawPar(Raw):
    name, mode = "raw_par", "threads"


TOOL_OBJS: dict[str, Tool] = {"dbt": Dbt(), "sqlmesh": SQLMesh(), "strata": Strata(),
                              "raw": Raw(), "raw_txn": RawTxn(), "raw_par": RawPar()}


def describe(cmd: Cmd) -> str:
    argv = [Path(a).name if a.startswith((str(VENVS), str(HERE))) else a
            for a in cmd[0]]
    shown: list[str] = []
    for a in argv:
        if "\n" in a:
            a = a.split("\n")[0] + " ..."
        shown.append(repr(a) if " " in a else a)
    restate = shown.count("--restate-model")
    if restate > 3:  # SQLMesh (d'): one flag per reader of `customers`
        first = shown.index("--restate-model")
        shown = shown[:first + 4] + [f"... ({restate} models in all)"]
    text = " ".join(shown)
    text = text.replace(str(HERE) + "/", "")
    return re.sub(r"\S*/" + re.escape(WAREHOUSE), WAREHOUSE, text)


# ---------------------------------------------------------------------- scenarios

def query(db: Path, sql: str):
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def execute(db: Path, sql: str) -> None:
    import duckdb

    con = duckdb.connect(str(db))
    try:
        con.execute(sql)
        con.execute("CHECKPOINT")
    finally:
        con.close()


class Bench:
    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.work: Path = args.work
        self.runner = Runner(self.work, args.timeout, args.verbose, args.max_load, args.max_wait)
        self.tools = [t for t in TOOLS if t in args.tools]
        self.rows: list[Row] = []
        self.reps = args.reps
        self.projects: set[Path] = set()
        self.commit = strata_commit()
        self.machine = machine()

    # -- helpers
    def row(self, key: str, title: str) -> Row:
        r = Row(key, title)
        self.rows.append(r)
        return r

    def order(self, rep: int, tools: list[str]) -> list[str]:
        k = rep % len(tools)
        return tools[k:] + tools[:k]

    def data(self, rows: int) -> Path:
        path = self.work / "data" / f"orders_{rows}.duckdb"
        if not path.exists():
            t0 = time.perf_counter()
            gen.make_data(rows, path)
            print(f"   generated {rows:,} orders in {time.perf_counter() - t0:.1f}s -> {path}")
        return path

    def project(self, models: int) -> Path:
        """Written afresh once per harness run (cheap), so edits to generate.py apply."""
        path = self.work / "projects" / f"m{models}"
        if path not in self.projects:
            gen.make_project(models, path, threads=WORKERS)
            self.projects.add(path)
        return path

    def restore(self, seed: Path, scenario: str, tool: str, proj: Path) -> Path:
        d = self.work / "runs" / scenario / tool
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
        db = d / WAREHOUSE
        shutil.copyfile(seed, db)
        TOOL_OBJS[tool].clear_cache(proj)
        return db

    def measure(self, row: Row, tool: str, make: Callable[[], Cmd], label: str
                ) -> tuple[Sample, str]:
        try:
            cmd = make()
        except Exception as e:  # a harness bug for one tool must not stop the others
            sample = Sample(None, False, f"harness: {type(e).__name__}: {e}"[:160])
            row.cell(tool).samples.append(sample)
            print(f"   {label} {tool}: {sample.reason}")
            return sample, ""
        row.commands.setdefault(tool, describe(cmd))
        sample, out = self.runner.run(cmd[0], cmd[1], cmd[2], f"{label} {tool}")
        if sample.ok and tool == "strata":
            sample.note = strata_note(out)
        row.cell(tool).samples.append(sample)
        return sample, out

    def strata_ready(self) -> str:
        """'' when the strata CLI runs, else why not."""
        exe = VENVS / "strata" / "bin" / "strata"
        if not exe.exists():
            return "strata CLI not installed (no pyproject.toml when setup ran?)"
        p = subprocess.run([str(exe), "--help"], capture_output=True, text=True,
                           env=_venv_env("strata"), timeout=120, check=False)
        if p.returncode != 0:
            return _reason(p.stdout, p.stderr, p.returncode)
        return ""

    # -- rows
    def startup(self) -> None:
        row = self.row("startup", "CLI start-up (`--help`; raw: python + import duckdb)")
        proj = self.project(10)
        print("== start-up")
        tools = [t for t in self.tools if t not in RAWS[1:]]
        for rep in range(self.reps):
            for t in self.order(rep, tools):
                self.measure(row, t, lambda: TOOL_OBJS[t].startup(proj), f"startup r{rep}")
        for t in self.tools:
            if t in RAWS[1:]:
                row.cell(t).skipped = "—"

    def parse(self) -> None:
        tools = [t for t in self.tools if t not in RAWS]
        for m in self.args.parse_models:
            proj = self.project(m)
            row = self.row(f"parse_{m}", f"(a) load/parse, cold, {m} models")
            comp = self.row(f"compile_{m}", f"(a') Strata compile --show-sql, {m} models") \
                if "strata" in tools else None
            print(f"== parse M={m}")
            for rep in range(self.reps):
                for t in self.order(rep, tools):
                    TOOL_OBJS[t].clear_cache(proj)
                    self.measure(row, t, lambda: TOOL_OBJS[t].parse(proj), f"parse m{m} r{rep}")
                    if t == "strata" and comp is not None:
                        self.measure(comp, t, lambda: TOOL_OBJS[t].compile(proj), f"compile m{m} r{rep}")
            for t in self.tools:
                if t in RAWS:
                    row.cell(t).skipped = "—"
            if comp is not None:
                for t in self.tools:
                    if t != "strata":
                        comp.cell(t).skipped = "—"

    def runs(self, models: int, rows: int, full_set: bool) -> None:
        """(b) first run, then (c) no-op, (c') dbt's plain rebuild, (d) and (d') reruns
        after `customers` changed, and (b1) the first run with every tool at one
        thread. Every step is checked against raw serial's result of the same step."""
        seed = self.data(rows)
        proj = self.project(models)
        scen = f"m{models}_n{rows}"
        size = f"{models} models, {rows:.0e} rows".replace("e+0", "e")
        b = self.row(f"first_{scen}", f"(b) first full run, {size}")
        if full_set:
            c = self.row(f"noop_{scen}", f"(c) no-op rerun, nothing changed, {size}")
            c2 = self.row(f"rebuild_{scen}", "(c') dbt's plain `dbt run` with nothing "
                          f"changed (rebuilds every model), {size}")
            d = self.row(f"changed_{scen}",
                         f"(d) rerun after `customers` changed (10% of rows), {size}")
            d2 = self.row(f"selected_{scen}",
                          "(d') rerun after `customers` changed again, the peers told "
                          f"which models to rebuild, {size}")
            b1 = self.row(f"serial_{scen}", "(b1) first full run, every tool at 1 thread "
                          f"(dbt threads 1, SQLMesh concurrent_tasks 1, Strata --workers 1, "
                          f"raw serial), {size}")
        print(f"== runs M={models} N={rows:,}")
        for rep in range(self.reps):
            order = self.order(rep, self.tools)
            dbs = {}
            for t in order:
                dbs[t] = self.restore(seed, scen, t, proj)
                self.measure(b, t, lambda: TOOL_OBJS[t].full_run(proj, dbs[t]), f"first {scen} r{rep}")
                if t == "dbt" and b.cell(t).samples[-1].ok and full_set:
                    TOOL_OBJS[t].keep_state(proj, dbs[t])
            self.check_step(b, order, dbs, models)
            if not full_set:
                continue
            for t in order:
                if t in RAWS:
                    c.cell(t).skipped = "0 (nothing to run)"
                    continue
                self.measure(c, t, lambda: TOOL_OBJS[t].noop_run(proj, dbs[t]), f"noop {scen} r{rep}")
            self.check_step(c, order, dbs, models)
            if "dbt" in order:
                self.measure(c2, "dbt", lambda: TOOL_OBJS["dbt"].rebuild_run(proj, dbs["dbt"]),
                             f"rebuild {scen} r{rep}")
                self.check_step(c2, ["dbt"], dbs, models)
            for t in self.tools:
                if t != "dbt":
                    c2.cell(t).skipped = "—"
            for step, row, tag, residue in ((1, d, "changed", 0), (2, d2, "again", 1)):
                for t in order:
                    try:
                        execute(dbs[t], gen.change_customers_sql(tag, residue))
                    except Exception as e:  # e.g. the tool left the file locked
                        row.cell(t).samples.append(Sample(None, False, f"change failed: {e}"))
                        continue
                    fn = (TOOL_OBJS[t].changed_run if step == 1 else
                          TOOL_OBJS[t].selected_run)
                    s, _ = self.measure(row, t, lambda: fn(proj, dbs[t]), f"{'changed' if step == 1 else 'selected'} "
                                        f"{scen} r{rep}")
                    if s.ok and models >= 2:
                        self.check_fresh(s, t, dbs[t], tag)
                self.check_step(row, order, dbs, models)
            for t in order:  # fresh warehouses: every tool at one thread
                if t in RAWS[1:]:
                    continue
                dbs[t] = self.restore(seed, scen, t, proj)
                self.measure(b1, t, lambda: TOOL_OBJS[t].serial_run(proj, dbs[t]),
                             f"serial {scen} r{rep}")
            self.check_step(b1, order, dbs, models)
        if full_set:
            for t in RAWS[1:]:
                b1.cell(t).skipped = "—"
            if "raw" in self.tools:
                d.commands["raw"] = d.commands.get("raw", "") + "  (the 90 models Strata rebuilds)"
            if "dbt" in self.tools:
                d.commands["dbt"] = d.commands.get("dbt", "") + "  (every model: 101)"

    def upsert(self, rows: int) -> None:
        seed = self.data(rows)
        proj = self.project(0)
        scen = f"upsert_n{rows}"
        size = f"{rows:.0e} rows".replace("e+0", "e")
        full = self.row(f"upsert_build_{rows}", f"(e0) first build of the upsert model, {size}")
        ups = self.row(f"upsert_{rows}", f"(e) upsert of 1% changed rows, {size}")
        print(f"== upsert N={rows:,}")
        for t in self.tools:  # one model: the raw floors are the same statement
            if t in RAWS[1:]:
                full.cell(t).skipped = ups.cell(t).skipped = "—"
        tools = [t for t in self.tools if t not in RAWS[1:]]
        for rep in range(self.reps):
            order = self.order(rep, tools)
            dbs = {}
            for t in order:
                dbs[t] = self.restore(seed, scen, t, proj)
                self.measure(full, t, lambda: TOOL_OBJS[t].upsert_build(proj, dbs[t]), f"upsert-build r{rep}")
            for t in order:
                if not full.cell(t).samples[-1].ok:
                    ups.cell(t).samples.append(Sample(None, False, "first build failed"))
                    continue
                execute(dbs[t], gen.CHANGE_ORDERS_1PCT_SQL)
                s, _ = self.measure(ups, t, lambda: TOOL_OBJS[t].upsert_run(proj, dbs[t]), f"upsert r{rep}")
                if s.ok:
                    self.check_upsert(s, t, dbs[t], rows)

    # -- correctness checks (not timed)
    def check_step(self, row: Row, tools: list[str], dbs: dict[str, Path], models: int) -> None:
        """After a step every tool ran: each tool's result (its last sample of `row`)
        must equal raw serial's after the same step."""
        for t in tools:
            cell = row.cells.get(t)
            if t == "raw" or cell is None or not cell.samples:
                continue
            if cell.samples[-1].ok:
                self.check_same(cell.samples[-1], t, dbs[t], models)

    def check_same(self, s: Sample, tool: str, db: Path, models: int) -> None:
        """Every model's row count, and every aggregate's sums, must equal raw DuckDB's."""
        raw_db = db.parent.parent / "raw" / WAREHOUSE
        if not raw_db.exists() or raw_db == db:
            return
        try:
            got = signature(db, TOOL_OBJS[tool], models)
            want = signature(raw_db, TOOL_OBJS["raw"], models)
        except Exception as e:
            add_note(s, f"result not checked: {str(e).splitlines()[0][:80]}")
            return
        diff = [m for m in want if got.get(m) != want[m]]
        if diff:
            m = diff[0]
            add_note(s, f"result differs from raw DuckDB on {len(diff)} models, "
                        f"e.g. {m}: {got.get(m)} vs {want[m]}")

    def check_fresh(self, s: Sample, tool: str, db: Path, tag: str) -> None:
        rel = TOOL_OBJS[tool].relation("m002")
        try:
            (n,), = query(db, f"SELECT count(*) FROM {rel} "
                              f"WHERE region_upper LIKE '{tag.upper()}_%'")
        except Exception as e:
            add_note(s, f"freshness not checked: {str(e).splitlines()[0][:80]}")
            return
        if n == 0:
            add_note(s, "STALE: result misses the change")

    def check_upsert(self, s: Sample, tool: str, db: Path, rows: int) -> None:
        rel = TOOL_OBJS[tool].relation("upserted")
        try:
            got = query(db, f"SELECT count(*), count(DISTINCT id), count(*) FILTER "
                            f"(WHERE updated_at = TIMESTAMP '{gen.CHANGE_TS}') FROM {rel}")[0]
        except Exception as e:
            add_note(s, f"result not checked: {str(e).splitlines()[0][:80]}")
            return
        want = (rows, rows, rows // 100)
        if tuple(got) != want:
            add_note(s, f"WRONG: rows/distinct ids/changed = {tuple(got)}, want {want}")


def add_note(s: Sample, note: str) -> None:
    s.note = f"{s.note}; {note}" if s.note else note


def signature(db: Path, tool: Tool, models: int) -> dict:
    """model -> row count (and sum(n), sum(total) for aggregates), in one connection."""
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        sig = {}
        for i in range(1, models + 1):
            rel = tool.relation(f"m{i:03d}")
            cols = "count(*), sum(n), sum(total)" if i % 10 == 0 else "count(*)"
            sig[f"m{i:03d}"] = con.execute(f"SELECT {cols} FROM {rel}").fetchone()
        return sig
    finally:
        con.close()


def strata_note(out: str) -> str:
    try:
        data = json.loads(out[out.index("{"):]) if "{" in out else None
    except ValueError:
        return ""
    if not isinstance(data, dict):
        return ""
    if data.get("status") == "up_to_date":
        return "up to date"
    rebuilt, reused = data.get("rebuilt"), data.get("reused")
    note = ""
    if isinstance(rebuilt, list) and isinstance(reused, list):
        note = f"rebuilt {len(rebuilt)}, reused {len(reused)}"
    for m in data.get("models") or []:  # how incremental models were merged
        if isinstance(m, dict) and m.get("delta_rows") is not None:
            note += f"; {m.get('model')}: {m.get('path')}, delta {m.get('delta_rows'):,} rows"
    return note


# ------------------------------------------------------------------------- report

def fmt_s(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{x:.3f} s" if x < 1 else f"{x:.2f} s"


def cell_text(row: Row, tool: str) -> str:
    c = row.cells.get(tool)
    if c is None:
        return "not run"
    if c.skipped:
        return c.skipped
    if not c.samples:
        return "not run"
    med = c.median()
    if med is None:
        return f"**failed**: {c.failure().replace('|', '/')}"
    text = fmt_s(med)
    warn = warnings(c)
    if warn:
        text += " ⚠ " + "; ".join(warn).replace("|", "/")
    return text


def warnings(c: Cell | None) -> list[str]:
    """The correctness warnings of a cell (STALE, WRONG, result differs)."""
    if c is None:
        return []
    return [part for n in c.notes() for part in n.split("; ")
            if part.startswith(("STALE", "WRONG", "result differs"))]


def ratio(row: Row, a: str, b: str) -> str:
    ca, cb = row.cells.get(a), row.cells.get(b)
    if not ca or not cb or ca.skipped or cb.skipped:
        return "—"
    if warnings(ca) or warnings(cb):  # a time for a wrong result compares nothing
        return "— (⚠)"
    x, y = ca.median(), cb.median()
    if x is None or y is None or y == 0:
        return "—"
    return f"{x / y:.2f}×"


def load_summary(bench: Bench) -> str:
    loads = [smp.load for r in bench.rows for c in r.cells.values() for smp in c.samples
             if smp.load is not None]
    if not loads:
        return "not recorded."
    text = (f"1-min load average before each process: median {statistics.median(loads):.2f}, "
            f"max {max(loads):.2f} (2 cores; about 1 is this harness itself)")
    after = [smp.load_after for r in bench.rows for c in r.cells.values() for smp in c.samples
             if smp.load_after is not None]
    if after:
        text += (f"; just after each process (the load during it): median "
                 f"{statistics.median(after):.2f}, max {max(after):.2f}")
    if bench.args.max_load > 0:
        text += (f"; the harness waited for load <= {bench.args.max_load} before each process "
                 f"({bench.runner.waited / 60:.1f} min of waiting in all)")
    if statistics.median(loads) > 2:
        text += ("; **other work was running on the machine: absolute times are inflated "
                 "several times over (compare the quiet-machine figures in PEERS.md); the "
                 "ratios between the interleaved tools are the more robust part**")
    return text + "."


def machine() -> str:
    cpu = ""
    try:
        for ln in Path("/proc/cpuinfo").read_text().splitlines():
            if ln.startswith("model name"):
                cpu = ln.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kb / 1024 / 1024:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    return f"{os.cpu_count()} cores ({cpu}){mem}, {platform.system()} {platform.release()}"


def strata_commit() -> str:
    """The repo commit the editable Strata was measured at (+ 'dirty' if edited)."""
    try:
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=30,
                              check=False).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain",
                                "--", "strata", "dialects"],
                               capture_output=True, text=True, timeout=30,
                               check=False).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + (" with uncommitted changes in strata/ or dialects/" if dirty else "")


def versions() -> dict:
    p = VENVS / "versions.json"
    return json.loads(p.read_text()) if p.exists() else {}


def write_report(bench: Bench, started: dt.datetime, elapsed: float) -> None:
    args = bench.args
    out_md: Path = args.out
    tools = bench.tools
    v = versions()
    ratio_heads = ([f"Strata/{LABELS[t]}" for t in tools if t != "strata"]
                   if "strata" in tools else [])
    lines = [
        "# Strata vs dbt vs SQLMesh vs raw DuckDB",
        "",
        f"Generated by `python3 bench/peers/run.py {' '.join(args.argv)}`".rstrip() + " "
        f"on {started:%Y-%m-%d %H:%M} UTC in {elapsed / 60:.1f} min"
        + (" — **quick smoke-test sizes, not the real benchmark**." if args.quick else "."),
        "",
        f"- Machine: {bench.machine}; one process at a time.",
        (f"- Repetitions: {bench.reps} per cell, tools interleaved, median shown; "
         f"timeout {args.timeout:.0f} s per process."),
        f"- Machine load: {load_summary(bench)}",
    ]
    if v:
        lines.append(
            "- Versions: dbt-core {dc} + dbt-duckdb {dd}; SQLMesh {sm}; Strata {st} "
            "at commit {sc} (sqlglot {sg}); DuckDB {du} in every venv; Python {py}.".format(
                sc=bench.commit,
                dc=v["dbt"].get("dbt-core"), dd=v["dbt"].get("dbt-duckdb"),
                sm=v["sqlmesh"].get("sqlmesh"), st=v["strata"].get("strata"),
                sg=v["strata"].get("sqlglot"), du=v["strata"].get("duckdb"),
                py=v.get("python")))
    lines += [
        (f"- Concurrency: every tool at {WORKERS}: dbt `threads: {WORKERS}` (profiles.yml), "
         f"SQLMesh `concurrent_tasks: {WORKERS}` (config.yaml), Strata `run --workers "
         f"{WORKERS}` (its default), raw N threads = {WORKERS} threads over the DAG "
         "(raw_run.py --mode threads); row (b1) has every tool at 1 thread."),
        ("- Three raw floors, the same SQL run directly by `raw_run.py`: *raw serial* (one "
         "statement after another, each its own commit), *raw, 1 txn* (all in one "
         "transaction), *raw, N threads* (a statement starts when its inputs are "
         "committed, each its own commit: Strata's parallelism without its bookkeeping)."),
        "- Ratios are Strata's median divided by the other tool's: below 1× Strata is faster.",
        "- ⚠ marks a result that a correctness check rejected (see the notes).",
        ("- Strata on DuckDB 2 (its own environment; SQLMesh needs DuckDB < 2) is reported "
         "apart: [DUCKDB2.md](DUCKDB2.md), made by `python3 bench/peers/duckdb2.py` after "
         "this harness."),
        "",
        "| " + " | ".join(["work"] + [LABELS[t] for t in tools] + ratio_heads) + " |",
        "|---|" + "---:|" * (len(tools) + len(ratio_heads)),
    ]
    for row in bench.rows:
        cols = [cell_text(row, t) for t in tools]
        if "strata" in tools:
            cols += [ratio(row, "strata", t) for t in tools if t != "strata"]
        lines.append(f"| {row.title} | " + " | ".join(cols) + " |")
    lines += ["", "![chart](results.png)", "", "## What each row ran", ""]
    for row in bench.rows:
        if not row.commands:
            continue
        lines.append(f"**{row.title}**")
        lines.append("")
        for t in tools:
            if t in row.commands:
                lines.append(f"- {LABELS[t]}: `{row.commands[t]}`")
        notes = []
        for t in tools:
            c = row.cells.get(t)
            if c:
                for n in c.notes():
                    notes.append(f"{LABELS[t]}: {n}")
        if notes:
            lines.append(f"- notes: {'; '.join(notes)}")
        lines.append("")
    out_md.parent.mkdir(parents=True, exist_ok=True)
    out_md.write_text("\n".join(lines) + "\n")
    data = {
        "started": started.isoformat(), "elapsed_s": elapsed, "argv": args.argv,
        "machine": machine(), "versions": v, "reps": bench.reps, "strata_commit": bench.commit,
        "waited_s": bench.runner.waited, "machine_text": bench.machine,
        "rows": [{"key": r.key, "title": r.title, "commands": r.commands,
                  "cells": {t: asdict(c) for t, c in r.cells.items()}} for r in bench.rows],
    }
    args.out.with_name(args.json_name).write_text(json.dumps(data, indent=1) + "\n")
    chart(bench, args.out.with_name(args.png_name))
    print(f"== wrote {out_md}")


def chart(bench: Bench, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in bench.rows if any(c.median() for c in r.cells.values())]
    tools = bench.tools
    colors = {"dbt": "#f28e2b", "sqlmesh": "#4e79a7", "strata": "#59a14f", "raw": "#9c9c9c",
              "raw_txn": "#c7c7c7", "raw_par": "#555555"}
    h = 0.8 / len(tools)
    fail_at: list[tuple[float, str]] = []
    meds = [c.median() for r in rows for c in r.cells.values()
            if not c.skipped and c.median()]
    left = 10 ** math.floor(math.log10(min(meds) / 1.5)) if meds else 0.01
    fig, ax = plt.subplots(figsize=(11, 0.62 * len(rows) * len(tools) / 2.6 + 1.8))
    for i, t in enumerate(tools):
        ys, xs, fails, labels = [], [], [], []
        for j, r in enumerate(rows):
            y = j + (i - (len(tools) - 1) / 2) * h
            c = r.cells.get(t)
            med = c.median() if c and not c.skipped else None
            if med is not None:
                ys.append(y)
                xs.append(med)
                labels.append(fmt_s(med) + (" ⚠ " + warnings(c)[0].split(":")[0].lower()
                                            if warnings(c) else ""))
            elif c and c.samples and not c.skipped:
                fails.append(y)
        ax.barh(ys, xs, height=h, color=colors[t], label=LABELS[t])
        for y, x, text in zip(ys, xs, labels):
            ax.text(x * 1.04, y, text, va="center", fontsize=7,
                    color="red" if "⚠" in text else "black")
        for y in fails:
            fail_at.append((y, f"{LABELS[t]} failed"))
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([textwrap.fill(re.sub(r"`", "", r.title), 44) for r in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    for y, text in fail_at:
        ax.text(left * 1.1, y, text, va="center", fontsize=7, color="red")
    ax.set_xlim(left, max(meds or [1]) * 3)
    ax.set_xlabel("seconds, wall clock of the whole process (median, log scale)")
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(axis="x", which="both", alpha=0.3)
    loads = [smp.load for r in bench.rows for c in r.cells.values() for smp in c.samples
             if smp.load is not None]
    sub = f"{bench.reps} reps, median; {bench.machine.split(' (')[0]}"
    if loads and statistics.median(loads) > 2:
        sub += f"; busy machine (load {statistics.median(loads):.1f}): absolute times inflated"
    ax.set_title("Strata vs dbt vs SQLMesh vs raw DuckDB" +
                 (" (quick sizes)" if bench.args.quick else "") + "\n" + sub, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --------------------------------------------------------------------------- main

def _num(s: str) -> int:
    return int(float(s))


def _size(s: str) -> tuple[int, int]:
    m, n = s.lower().split("x")
    return int(m), _num(n)


def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="small sizes for a smoke test (parse 10,50; runs 20x1e4; "
                         "wide 50x1e4; upsert 1e5; 1 rep)")
    ap.add_argument("--reps", type=int, help="repetitions per cell (default 3, quick 1)")
    ap.add_argument("--parse-models", help="comma list of M for (a) (default 10,100,500)")
    ap.add_argument("--run", type=_size, help="MxN for (b),(c),(d) (default 100x1e6)")
    ap.add_argument("--wide", type=_size, help="MxN for an extra (b) row (default 500x1e5); "
                                               "'0x0' to skip")
    ap.add_argument("--upsert-rows", type=_num, help="N for (e) (default 1e7)")
    ap.add_argument("--tools", default=",".join(TOOLS), help="comma list of " + ",".join(TOOLS))
    ap.add_argument("--only", default="startup,parse,runs,wide,upsert",
                    help="comma list of parts: startup,parse,runs,wide,upsert")
    ap.add_argument("--timeout", type=float, help="seconds per process (default 1800, quick 300)")
    ap.add_argument("--workers", type=int, default=4,
                    help="every tool's concurrency: dbt threads, SQLMesh concurrent_tasks, "
                         "Strata --workers, raw threads (default 4, Strata's default)")
    ap.add_argument("--max-load", type=float,
                    help="before each process wait until the 1-min load average is at most "
                         "this (default 1.5, quick 0 = never wait): other work on a 2-core "
                         "machine would land in the figures")
    ap.add_argument("--max-wait", type=float, default=900.0,
                    help="longest wait for --max-load, seconds (then measure anyway)")
    ap.add_argument("--work", type=Path, default=HERE / "work", help="work dir (git-ignored)")
    ap.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    ap.add_argument("--no-setup", action="store_true", help="never run setup_peers.sh")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    args.argv = argv
    global WORKERS
    WORKERS = args.workers
    LABELS["raw_par"] = f"raw, {WORKERS} threads"
    q = args.quick
    args.reps = args.reps or (1 if q else 3)
    args.parse_models = [int(x) for x in (args.parse_models or ("10,50" if q else "10,100,500"))
                         .split(",") if x]
    args.run = args.run or ((20, 10_000) if q else (100, 1_000_000))
    args.wide = args.wide or ((50, 10_000) if q else (500, 100_000))
    args.upsert_rows = args.upsert_rows or (100_000 if q else 10_000_000)
    args.timeout = args.timeout or (300.0 if q else 1800.0)
    if args.max_load is None:
        args.max_load = 0.0 if q else 1.5
    args.tools = [t for t in args.tools.split(",") if t]
    bad = [t for t in args.tools if t not in TOOLS]
    if bad:
        ap.error(f"unknown tools {bad}")
    args.only = set(args.only.split(","))
    args.json_name = "results.json"
    args.png_name = "results.png"
    args.work = args.work.resolve()
    return args


def rerender(path: Path, out: Path) -> None:
    """Write RESULTS.md/results.png again from a results.json, measuring nothing."""
    data = json.loads(path.read_text())
    args = parse_args(data["argv"])
    args.out = out
    bench = Bench(args)
    bench.reps = data["reps"]
    bench.commit = data.get("strata_commit", "unknown")
    bench.machine = data.get("machine_text") or data.get("machine", "")
    bench.runner.waited = data.get("waited_s", 0.0)
    for r in data["rows"]:
        row = Row(r["key"], r["title"], dict(r["commands"]))
        for t, c in r["cells"].items():
            row.cells[t] = Cell([Sample(**smp) for smp in c["samples"]], c["skipped"])
        bench.rows.append(row)
    started = dt.datetime.fromisoformat(data["started"])
    write_report(bench, started, data["elapsed_s"])


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from strata_bytecode import compile_strata


def main() -> None:
    # A harness started in the background ignores SIGINT; let INT and TERM stop
    # it cleanly (the running tool is killed, the report is still written).
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    if sys.argv[1:2] == ["--rerender"]:  # --rerender RESULTS.json [OUT.md]
        src = Path(sys.argv[2])
        rerender(src, Path(sys.argv[3]) if len(sys.argv) > 3 else HERE / "RESULTS.md")
        return
    args = parse_args(sys.argv[1:])
    compile_strata(sys.executable)  # as an installed package has it (strata_bytecode.py)
    started = dt.datetime.now(dt.UTC)
    t0 = time.perf_counter()
    bench = Bench(args)
    if "strata" in bench.tools:
        why = bench.strata_ready()
        if why:
            print(f"!! strata is not runnable, its cells will fail: {why}")
    args.work.mkdir(parents=True, exist_ok=True)
    parts = args.only
    try:
        if "startup" in parts:
            bench.startup()
        if "parse" in parts:
            bench.parse()
        if "runs" in parts:
            bench.runs(*args.run, full_set=True)
        if "wide" in parts and args.wide[0] > 0:
            bench.runs(*args.wide, full_set=False)
        if "upsert" in parts:
            bench.upsert(args.upsert_rows)
    except KeyboardInterrupt:
        print("!! interrupted: writing what was measured so far")
    end = strata_commit()  # the editable install follows the tree: did it move?
    if end != bench.commit:
        bench.commit = f"{bench.commit} (at the start; {end} at the end)"
    write_report(bench, started, time.perf_counter() - t0)


if __name__ == "__main__":
    main()
