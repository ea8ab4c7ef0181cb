"""Run-engine benchmarks (not tests): what Strata's own work costs on top of DuckDB.

  noop   `run --only-stale` with nothing changed, sources of 1e6 and 1e7 rows: the
         whole command (process wall clock) and its fingerprint step (`--json`
         fingerprint_seconds), against the physical floor: one scan of the same
         source columns in a fresh process (`count(*), bit_xor(hash(cols))`, the
         cheapest query that must read every value; min/max/count are answered
         from DuckDB's statistics without reading).
  rss    peak resident memory (/usr/bin/time %M) of a first run and a no-op at 1e6
         and 1e7 rows, next to raw DuckDB running the same SQL.
  dag    a 100-model module on 1e6 rows and a 1,000-model module of trivial models:
         the first full run, and an only-stale run after one of the two sources
         changed, against the same SQL (Strata's own compiled statements, as
         CREATE TABLE ... AS) run directly in one DuckDB connection (raw_sql.py,
         also a whole process). Interleaved, medians.

    .venv/bin/python bench/engine/run.py                   # everything
    .venv/bin/python bench/engine/run.py noop --sizes 1e6 --repeat 5
    .venv/bin/python bench/engine/run.py dag --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
WORK = HERE / "work"
sys.path.insert(0, str(HERE))

from generate import (
    SOURCE_COLUMNS,
    change_source_sql,
    dag_module,
    make_data,
    raw_statements,
    trivial_module,
)

PY = str(REPO / ".venv" / "bin" / "python")
STRATA = str(REPO / ".venv" / "bin" / "strata")


def median(values: list[float]) -> float:
    return statistics.median(values)


def fresh(data: Path, name: str) -> Path:
    """A copy of a data file to run in (the warehouse holds the sources too)."""
    target = WORK / name
    for p in (target, Path(str(target) + ".wal")):
        p.unlink(missing_ok=True)
    shutil.copyfile(data, target)
    os.sync()  # so the timed run's first fsync does not also flush this copy
    return target


# Byte-compiled modules, as after any install: with PYTHONDONTWRITEBYTECODE set (as
# here) every process would compile strata's sources again, ~0.1 s of CPU.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
CPU: list[float] = [0.0]  # CPU seconds (user + system) of the last timed process


def timed(argv: list[str], cwd: Path = REPO, rss: bool = False) -> tuple[float, str, int]:
    """(wall seconds, stdout, peak RSS in KiB or 0) of one whole process; its CPU
    seconds land in CPU[0] (less disturbed than wall time on a shared machine)."""
    if rss:
        argv = ["/usr/bin/time", "-f", "__RSS__ %M", *argv]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False,
                          env=ENV)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU[0] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n{proc.stderr}")
    peak = 0
    if rss:
        line = [x for x in proc.stderr.splitlines() if x.startswith("__RSS__")][-1]
        peak = int(line.split()[1])
    return wall, proc.stdout, peak


def strata_run(module: Path, warehouse: Path, *extra: str, rss: bool = False) -> tuple:
    wall, out, peak = timed([STRATA, "run", str(module), "-o", str(warehouse), "--json",
                             *extra], rss=rss)
    return wall, json.loads(out), peak


def raw_run(warehouse: Path, sql_file: Path, rss: bool = False) -> tuple[float, float, int]:
    """(process wall, statements-only seconds, peak RSS) of raw_sql.py."""
    wall, out, peak = timed([PY, str(HERE / "raw_sql.py"), str(warehouse), str(sql_file)],
                            rss=rss)
    return wall, float(out.strip()), peak


def scan_floor(warehouse: Path, sources: list[str]) -> float:
    """Seconds of one scan of every declared column of `sources`, in a fresh process
    (cold DuckDB buffers, like the fingerprint step of a new `strata` process)."""
    code = (
        "import duckdb, sys, time\n"
        "con = duckdb.connect(sys.argv[1], read_only=True)\n"
        "t = time.perf_counter()\n"
        "for q in sys.argv[2:]:\n"
        "    con.execute(q).fetchall()\n"
        "print(time.perf_counter() - t)\n")
    queries = [f"SELECT count(*), bit_xor(hash({', '.join(SOURCE_COLUMNS[s])})) FROM {s}"
               for s in sources]
    _, out, _ = timed([PY, "-c", code, str(warehouse), *queries])
    return float(out.strip())


# ---------------------------------------------------------------- noop
def bench_noop(sizes: list[int], repeat: int) -> list[dict]:
    rows = []
    module = dag_module(WORK / "modules", 10)
    for n in sizes:
        data = make_data(n, WORK / f"data_{n}.duckdb")
        wh = fresh(data, f"noop_{n}.duckdb")
        _, first, _ = strata_run(module, wh)
        assert first["status"] == "published", first
        walls, fps, scans, cpus = [], [], [], []
        for _ in range(repeat):
            wall, report, _ = strata_run(module, wh, "--only-stale")
            assert report["status"] == "up_to_date", report
            walls.append(wall)
            cpus.append(CPU[0])
            fps.append(report["fingerprint_seconds"])
            scans.append(scan_floor(wh, ["orders", "customers"]))
        start, _, _ = timed([STRATA, "--help"])
        row = {"rows": n, "noop_s": median(walls), "noop_cpu_s": median(cpus),
               "fingerprint_s": median(fps), "scan_s": median(scans), "startup_s": start}
        row["fingerprint_x_scan"] = row["fingerprint_s"] / row["scan_s"]
        row["noop_minus_scan_s"] = row["noop_s"] - row["scan_s"]
        rows.append(row)
        print(json.dumps(row), flush=True)
        wh.unlink()
    return rows


# ---------------------------------------------------------------- rss
def bench_rss(sizes: list[int]) -> list[dict]:
    rows = []
    module = dag_module(WORK / "modules", 10)
    raw_file = raw_statements(module, WORK / "modules" / "raw_dag10.sql")
    for n in sizes:
        data = make_data(n, WORK / f"data_{n}.duckdb")
        wh = fresh(data, f"rss_{n}.duckdb")
        wall, _, first_rss = strata_run(module, wh, rss=True)
        _, _, noop_rss = strata_run(module, wh, "--only-stale", rss=True)
        raw_wh = fresh(data, f"rss_raw_{n}.duckdb")
        raw_wall, _, raw_rss = raw_run(raw_wh, raw_file, rss=True)
        row = {"rows": n, "first_run_rss_mib": first_rss / 1024,
               "noop_rss_mib": noop_rss / 1024, "raw_rss_mib": raw_rss / 1024,
               "first_run_s": wall, "raw_s": raw_wall}
        rows.append(row)
        print(json.dumps(row), flush=True)
        wh.unlink()
        raw_wh.unlink()
    return rows


# ---------------------------------------------------------------- dag
def bench_dag(cases: list[tuple[str, int, int]], repeat: int) -> list[dict]:
    """cases: (kind, models, rows). Each repetition: fresh warehouse, first run, change
    one source, only-stale run; the raw SQL does the same two steps."""
    rows = []
    for kind, m, n in cases:
        module = (dag_module(WORK / "modules", m) if kind == "dag"
                  else trivial_module(WORK / "modules", m))
        changed = "customers" if kind == "dag" else "b"
        raw_all = raw_statements(module, WORK / "modules" / f"raw_{kind}{m}.sql")
        raw_down = raw_statements(module, WORK / "modules" / f"raw_{kind}{m}_{changed}.sql",
                                  downstream_of=changed)
        data = make_data(n, WORK / f"data_{kind}_{n}.duckdb", kind=kind)
        cells: dict[str, list[float]] = {k: [] for k in (
            "strata_first", "raw_first", "raw_first_sql", "strata_stale", "raw_stale",
            "raw_stale_sql", "fingerprint", "strata_first_cpu", "raw_first_cpu",
            "strata_stale_cpu", "raw_stale_cpu")}
        rebuilt = None
        for _ in range(repeat):
            wh = fresh(data, f"dag_{kind}_{m}.duckdb")
            wall, report, _ = strata_run(module, wh)
            assert report["status"] == "published" and len(report["rebuilt"]) == m, report
            cells["strata_first"].append(wall)
            cells["strata_first_cpu"].append(CPU[0])
            _exec(wh, change_source_sql(changed))
            wall, report, _ = strata_run(module, wh, "--only-stale")
            cells["strata_stale"].append(wall)
            cells["strata_stale_cpu"].append(CPU[0])
            cells["fingerprint"].append(report["fingerprint_seconds"])
            rebuilt = len(report["stale"])
            raw = fresh(data, f"dag_{kind}_{m}_raw.duckdb")
            wall, sql_s, _ = raw_run(raw, raw_all)
            cells["raw_first"].append(wall)
            cells["raw_first_cpu"].append(CPU[0])
            cells["raw_first_sql"].append(sql_s)
            _exec(raw, change_source_sql(changed))
            wall, sql_s, _ = raw_run(raw, raw_down)
            cells["raw_stale"].append(wall)
            cells["raw_stale_cpu"].append(CPU[0])
            cells["raw_stale_sql"].append(sql_s)
            wh.unlink()
            raw.unlink()
        row = {"module": f"{m} models ({kind})", "rows": n, "stale_models": rebuilt,
               **{k: median(v) for k, v in cells.items()}}
        row["first_x_raw"] = row["strata_first"] / row["raw_first"]
        row["stale_x_raw"] = row["strata_stale"] / row["raw_stale"]
        row["first_x_raw_cpu"] = row["strata_first_cpu"] / row["raw_first_cpu"]
        row["stale_x_raw_cpu"] = row["strata_stale_cpu"] / row["raw_stale_cpu"]
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def _exec(path: Path, sql: str) -> None:
    import duckdb

    con = duckdb.connect(str(path))
    con.execute(sql)
    con.close()


sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from strata_bytecode import compile_strata


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", nargs="*", default=["noop", "rss", "dag"])
    ap.add_argument("--sizes", default="1e6,1e7")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--dag-repeat", type=int, default=3)
    ap.add_argument("--cases", help="dag,trivial (default both)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    compile_strata(sys.executable)  # as an installed package has it (strata_bytecode.py)
    WORK.mkdir(exist_ok=True)
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    out = {}
    if "noop" in args.what:
        out["noop"] = bench_noop(sizes, args.repeat)
    if "rss" in args.what:
        out["rss"] = bench_rss(sizes)
    if "dag" in args.what:
        cases = [("dag", 100, 1_000_000), ("trivial", 1000, 1000)]
        if args.cases:
            cases = [c for c in cases if c[0] in args.cases.split(",")]
        out["dag"] = bench_dag(cases, args.dag_repeat)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
