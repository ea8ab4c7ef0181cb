"""The raw-DuckDB floors: run files of SQL statements in one Python process.

    python raw_run.py WAREHOUSE.duckdb FILE.sql [FILE.sql ...]            # serial
    python raw_run.py --mode txn WAREHOUSE.duckdb FILE.sql ...            # one transaction
    python raw_run.py --mode threads --threads 4 WAREHOUSE.duckdb FILE.sql ...

serial   one connection, one statement after another, each its own commit
         (autocommit): what a plain script does.
txn      one connection, every statement inside one BEGIN ... COMMIT.
threads  N worker threads, each with its own cursor of one connection, each
         statement its own commit: a statement starts as soon as the statements
         that create the tables it reads have committed (the dependency DAG is
         read from the text: `CREATE ... TABLE main.X` defines X, any other
         `main.Y` it names is an input). The same parallelism Strata's build
         lanes have with `--workers N`, without any of Strata's bookkeeping.

With `--print-seconds` the time the statements took (after connect) is printed.
"""
from __future__ import annotations

import argparse
import re
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

import duckdb

TARGET = re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?TABLE\s+main\.(\w+)", re.IGNORECASE)
NAMED = re.compile(r"\bmain\.(\w+)")


def statements(text: str) -> list[str]:
    # generate.py ends every statement with ";\n" and never puts ";" inside one.
    return [s.strip() for s in text.split(";\n") if s.strip()]


def run_serial(con: duckdb.DuckDBPyConnection, stmts: list[str]) -> None:
    for stmt in stmts:
        con.execute(stmt)


def run_txn(con: duckdb.DuckDBPyConnection, stmts: list[str]) -> None:
    con.execute("BEGIN TRANSACTION")
    for stmt in stmts:
        con.execute(stmt)
    con.execute("COMMIT")


def dependencies(stmts: list[str]) -> list[set[int]]:
    """For each statement, the earlier statements that create a table it reads."""
    made_by: dict[str, int] = {}
    deps: list[set[int]] = []
    for i, stmt in enumerate(stmts):
        m = TARGET.search(stmt)
        target = m.group(1) if m else None
        reads = {n for n in NAMED.findall(stmt) if n != target}
        deps.append({made_by[n] for n in reads if n in made_by})
        if target:
            made_by[target] = i
    return deps


def run_threads(con: duckdb.DuckDBPyConnection, stmts: list[str], threads: int) -> None:
    deps = dependencies(stmts)
    local = threading.local()

    def job(i: int) -> int:
        cur = getattr(local, "cur", None)
        if cur is None:
            cur = local.cur = con.cursor()
        cur.execute(stmts[i])
        return i

    done: set[int] = set()
    started: set[int] = set()
    running: set[Future] = set()
    with ThreadPoolExecutor(threads) as pool:
        while len(done) < len(stmts):
            for i in range(len(stmts)):  # in file order: the file's order is a good one
                if i not in started and deps[i] <= done and len(running) < threads:
                    started.add(i)
                    running.add(pool.submit(job, i))
            finished, running = wait(running, return_when=FIRST_COMPLETED)
            for f in finished:
                done.add(f.result())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", choices=("serial", "txn", "threads"), default="serial")
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--print-seconds", action="store_true")
    ap.add_argument("warehouse")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    stmts: list[str] = []
    for path in args.files:
        with open(path) as f:
            stmts += statements(f.read())
    con = duckdb.connect(args.warehouse)
    t0 = time.perf_counter()
    if args.mode == "serial":
        run_serial(con, stmts)
    elif args.mode == "txn":
        run_txn(con, stmts)
    else:
        run_threads(con, stmts, args.threads)
    if args.print_seconds:
        print(f"{time.perf_counter() - t0:.3f}")
    con.close()


if __name__ == "__main__":
    main()
