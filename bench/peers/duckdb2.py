"""Strata on DuckDB 2, reported apart from the peers' table.

The peers' table runs every tool on the DuckDB that SQLMesh accepts (< 2). Strata's
own environment (the repository's `.venv`, made by the README's commands) has DuckDB
2; this reruns Strata's rows of that table there, next to the same SQL run directly
in DuckDB 2 (raw), on the projects and data `run.py` generated:

    python3 bench/peers/run.py          # first: generates bench/peers/work/
    python3 bench/peers/duckdb2.py      # writes bench/peers/DUCKDB2.md

Whole processes, Strata and raw interleaved, median of 3 (--reps).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
WORK = HERE / "work"
VENV = REPO / ".venv" / "bin"
sys.path.insert(0, str(HERE))

import generate as gen  # the peers' generator: the same change SQL


def timed(argv: list[str], cwd: Path, env: dict) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    took = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(argv)}\n{proc.stderr[-2000:]}")
    return took


def duckdb_version() -> str:
    return subprocess.run([str(VENV / "python"), "-c", "import duckdb; print(duckdb.__version__)"],
                          capture_output=True, text=True, check=True).stdout.strip()


def change(db: Path, sql: str) -> None:
    script = ("import duckdb, sys; c = duckdb.connect(sys.argv[1]); c.execute(sys.argv[2]); "
              "c.close()")
    subprocess.run([str(VENV / "python"), "-c", script, str(db), sql], check=True)


sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from strata_bytecode import compile_strata


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    compile_strata(sys.executable)  # as an installed package has it (strata_bytecode.py)
    if not (VENV / "strata").exists():
        raise SystemExit("no .venv/bin/strata: run the README's install command first")
    runs = WORK / "duckdb2"
    shutil.rmtree(runs, ignore_errors=True)
    runs.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))}
    env["NO_COLOR"] = "1"
    strata, python = str(VENV / "strata"), str(VENV / "python")
    raw_run = str(HERE / "raw_run.py")
    rows: dict[str, dict[str, list[float]]] = {}

    def add(row: str, tool: str, secs: float) -> None:
        rows.setdefault(row, {}).setdefault(tool, []).append(secs)

    m100, upsert = WORK / "projects" / "m100", WORK / "projects" / "m0"
    for rep in range(args.reps):
        # (b) and (c): 100 models on 1e6 rows, caches cleared as in run.py
        for tool in (("strata", "raw") if rep % 2 == 0 else ("raw", "strata")):
            db = runs / f"{tool}.duckdb"
            shutil.copyfile(WORK / "data" / "orders_1000000.duckdb", db)
            cache = runs / "cache"
            shutil.rmtree(cache, ignore_errors=True)
            e = {**env, "STRATA_CACHE_DIR": str(cache)}
            if tool == "strata":
                add("b", tool, timed([strata, "run", "strata", "-o", str(db)], m100, e))
                add("c", tool, timed([strata, "run", "strata", "-o", str(db), "--only-stale"],
                                     m100, e))
            else:
                add("b", tool, timed([python, raw_run, str(db), str(m100 / "raw" / "models.sql")],
                                     m100, e))
        # (e): the 1% upsert on 1e7 rows
        for tool in (("strata", "raw") if rep % 2 == 0 else ("raw", "strata")):
            db = runs / f"up_{tool}.duckdb"
            shutil.copyfile(WORK / "data" / "orders_10000000.duckdb", db)
            e = {**env, "STRATA_CACHE_DIR": str(runs / "cache")}
            if tool == "strata":
                build = [strata, "run", "strata", "-o", str(db), "--models", "upserted"]
                timed(build, upsert, e)
                change(db, gen.CHANGE_ORDERS_1PCT_SQL)
                add("e", tool, timed(build, upsert, e))
            else:
                timed([python, raw_run, str(db), str(upsert / "raw" / "upsert_full.sql")],
                      upsert, e)
                change(db, gen.CHANGE_ORDERS_1PCT_SQL)
                add("e", tool, timed([python, raw_run, str(db), str(upsert / "raw" / "upsert.sql")],
                                     upsert, e))
        print(f"rep {rep}: " + ", ".join(f"{r}/{t} {v[-1]:.2f}s" for r, c in rows.items()
                                          for t, v in c.items()), flush=True)

    med = {r: {t: statistics.median(v) for t, v in c.items()} for r, c in rows.items()}
    titles = {"b": "(b) first full run, 100 models, 1e6 rows",
              "c": "(c) no-op rerun, nothing changed, 100 models, 1e6 rows",
              "e": "(e) upsert of 1% changed rows, 1e7 rows (raw: in place)"}
    lines = [
        "# Strata on DuckDB 2", "",
        (f"Generated by `python3 bench/peers/duckdb2.py` on "
         f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: Strata and the same SQL "
         f"run directly (raw) on DuckDB {duckdb_version()} (the repository's `.venv`), on "
         "the projects and data of `bench/peers/RESULTS.md`, whose table runs every tool on "
         f"the DuckDB SQLMesh accepts. Median of {args.reps}, interleaved, whole processes."),
        "", "| work | Strata | raw DuckDB | Strata / raw |", "|---|---:|---:|---:|"]
    for key in ("b", "c", "e"):
        s, r = med[key].get("strata"), med[key].get("raw")
        lines.append(f"| {titles[key]} | {s:.2f} s | " + (f"{r:.2f} s | {s / r:.2f}× |" if r
                                                         else "0 (nothing to run) | — |"))
    (HERE / "DUCKDB2.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
