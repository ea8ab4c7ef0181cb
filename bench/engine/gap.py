"""Strata's first run (and a forced rerun) next to the three raw-DuckDB floors, on
the peers benchmark's project (bench/peers/generate.py), interleaved, whole
processes: the quick loop for closing the gap to the parallel floor.

    .venv/bin/python bench/engine/gap.py --size 100x1e6 --reps 3
    .venv/bin/python bench/engine/gap.py --size 500x1e5 --venv bench/peers/.venvs/strata
    .venv/bin/python bench/engine/gap.py --cold ...   # caches cleared as in the harness
    git worktree add /tmp/before <commit>     # then, before/after a change:
    .venv/bin/python bench/engine/gap.py --baseline /tmp/before --only strata,before,threads

Rows: `strata run` on a fresh copy of the data (first run), `strata run` again
on that warehouse (a rerun of every model: nothing reused, all rebuilt because
`run` without --only-stale rebuilds the selection), and raw_run.py in its
three modes (serial, one transaction, N threads) on fresh copies; with `--baseline
DIR`, row `before` is the first run of the Strata checked out in DIR (put first on
PYTHONPATH: the same venv and DuckDB), interleaved with the rest.
The venv decides the DuckDB version (the repo's .venv: DuckDB 2; the peers'
strata venv: the DuckDB every peer runs on). Prints medians, the ratios
Strata / each floor and the 1-minute load average seen before each process.
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
PEERS = REPO / "bench" / "peers"
sys.path.insert(0, str(PEERS))
import generate as gen

sys.path.insert(0, str(REPO / "bench"))
from strata_bytecode import compile_strata


def size(text: str) -> tuple[int, int]:
    m, n = text.lower().split("x")
    return int(m), int(float(n))


def timed(argv: list[str], env: dict, cwd: Path) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one process: on a loaded machine CPU is
    the steadier figure for an A/B of the same work."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(argv, check=False, env=env, cwd=cwd, capture_output=True, text=True)
    took = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(f"failed: {' '.join(argv)}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    return took, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=size, default=(100, 1_000_000))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--venv", type=Path, default=REPO / ".venv")
    ap.add_argument("--work", type=Path, default=PEERS / "work")
    ap.add_argument("--only", default="strata,rerun,serial,txn,threads")
    ap.add_argument("--cold", action="store_true",
                    help="clear Strata's caches (parse, code, Lark grammar) before each "
                         "first run, as the peers harness does")
    ap.add_argument("--baseline", type=Path,
                    help="a checkout of another Strata commit: row `before` runs it")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    models, rows = args.size
    py = str(args.venv.resolve() / "bin" / "python")
    strata = str(args.venv.resolve() / "bin" / "strata")
    compile_strata(py)  # as an installed package has it (strata_bytecode.py)
    if args.baseline:
        compile_strata(py, args.baseline.resolve())
    dver = subprocess.run([py, "-c", "import duckdb; print(duckdb.__version__)"],
                          capture_output=True, text=True, check=True).stdout.strip()
    # data files per DuckDB version (a DuckDB 2 file does not open in 1.x), made by it
    base = args.work / "gap" / f"duckdb{dver}"
    seed = base / "data" / f"orders_{rows}.duckdb"
    if not seed.exists():
        subprocess.run([py, str(PEERS / "generate.py"), "data", "--rows", str(rows),
                        "--out", str(seed)], check=True, capture_output=True)
    proj = base / "projects" / f"m{models}"
    gen.make_project(models, proj, threads=args.workers)
    run_dir = base / "runs" / f"m{models}_n{rows}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("VIRTUAL_ENV")}
    env["STRATA_CACHE_DIR"] = str(proj / ".strata-cache")
    raw = [py, str(PEERS / "raw_run.py")]
    models_sql = str(proj / "raw" / "models.sql")
    only = args.only.split(",")
    samples: dict[str, list[float]] = {k: [] for k in only}
    cpu: dict[str, list[float]] = {k: [] for k in only}

    def record(what: str, wall_cpu: tuple[float, float]) -> None:
        samples.setdefault(what, []).append(wall_cpu[0])
        cpu.setdefault(what, []).append(wall_cpu[1])

    loads: list[float] = []

    def fresh(tag: str) -> Path:
        d = run_dir / tag
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
        db = d / "warehouse.duckdb"
        shutil.copyfile(seed, db)
        return db

    for rep in range(args.reps):
        order = only[rep % len(only):] + only[:rep % len(only)]
        for what in order:
            if what == "rerun":
                continue  # right after its first run
            loads.append(os.getloadavg()[0])
            if what in ("strata", "rerun"):
                db = fresh("strata")
                if args.cold:
                    # parse, code and grammar tables: all under STRATA_CACHE_DIR
                    shutil.rmtree(proj / ".strata-cache", ignore_errors=True)
                cmd = [strata, "run", "strata", "-o", str(db), "--workers", str(args.workers)]
                record("strata", timed(cmd, env, proj))
                if "rerun" in only:
                    loads.append(os.getloadavg()[0])
                    record("rerun", timed(cmd, env, proj))
            elif what == "before":
                before = {**env, "PYTHONPATH": str(args.baseline.resolve())}
                record(what, timed([strata, "run", "strata", "-o", str(fresh(what)),
                                    "--workers", str(args.workers)], before, proj))
            elif what == "serial":
                record(what, timed([*raw, str(fresh(what)), models_sql], env, proj))
            elif what == "txn":
                record(what, timed([*raw, "--mode", "txn", str(fresh(what)), models_sql],
                                   env, proj))
            elif what == "threads":
                record(what, timed([*raw, "--mode", "threads", "--threads", str(args.workers),
                                    str(fresh(what)), models_sql], env, proj))
            print(f"  rep {rep} {what:8} {samples[what][-1]:.2f}s  cpu {cpu[what][-1]:.2f}s  load "
                  f"{loads[-1]:.2f}", flush=True)
    med = {k: statistics.median(v) for k, v in samples.items() if v}
    print(f"== {models} models x {rows:.0e} rows, DuckDB {dver}, workers {args.workers}, "
          f"{args.reps} reps, load median {statistics.median(loads):.2f} "
          f"max {max(loads):.2f}")
    for k, v in med.items():
        print(f"  {k:8} {v:6.2f} s  cpu {statistics.median(cpu[k]):6.2f} s   " + "  ".join(
            f"/{f} {v / med[f]:.2f}x" for f in ("serial", "txn", "threads") if f in med))
    if args.json:
        args.json.write_text(json.dumps({"size": [models, rows], "duckdb": dver,
                                         "workers": args.workers, "samples": samples,
                                         "cpu": cpu, "loads": loads}, indent=1))


if __name__ == "__main__":
    main()
