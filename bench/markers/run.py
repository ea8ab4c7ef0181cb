"""A no-op `strata run --only-stale` on local Spark (`spark:DIR`) against the size of
its one source, before and after change markers (issue 41 item 2).

    .venv/bin/python bench/markers/run.py --before /tmp/before --sizes 1e6,1e7 --reps 2

For each size: a Parquet file of N rows (`id`, `amount`), read in place as a file
source (`file 'lines.parquet'`) in one warehouse and loaded into a Spark Parquet table
(`bench.lines`, a table source) in another; one run builds each; then no-op runs
alternate between the code at `--before` (a checkout of main without markers: it
hashes every source row) and this checkout, `--reps` times each. Every process is
timed whole: wall clock, CPU of the CLI process and of its JVM (user + sys, from the
process tree as it ends), and the run's own `fingerprint_seconds`. The machine is
shared: CPU time is the figure to read. Writes bench/markers/results.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
PYTHON = sys.executable
TICK = os.sysconf("SC_CLK_TCK")

MODULES = {
    "file": "source lines = file 'lines.parquet' {\n  id: int\n  amount: int\n}\n",
    "table": "source lines = bench.lines {\n  id: int\n  amount: int\n}\n",
}
MODEL = "model totals {\n  from lines\n  aggregate n = count(), total = sum(amount)\n}\n"


def cli(code: Path) -> list[str]:
    """The CLI of the checkout at `code` (its `strata` package first on the path)."""
    return [PYTHON, "-c", (f"import sys; sys.path.insert(0, {str(code)!r}); "
                           "from strata.cli.main import main; sys.argv[0] = 'strata'; "
                           "main()")]


def _tree_cpu(pid: int, seen: dict[int, float]) -> None:
    """CPU seconds of `pid` and its descendants, kept per pid as last seen."""
    stack = [pid]
    while stack:
        p = stack.pop()
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            seen[p] = (int(fields[11]) + int(fields[12])) / TICK
            children = Path(f"/proc/{p}/task/{p}/children").read_text().split()
        except (OSError, IndexError):
            continue
        stack += [int(c) for c in children]


def timed(args: list[str], cwd: Path) -> dict:
    """Run a process; its wall clock and its tree's CPU (polled every 0.2 s: the JVM
    is not waited for by the CLI, so its rusage never reaches ours)."""
    seen: dict[int, float] = {}
    start = time.perf_counter()
    proc = subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    done = threading.Event()

    def poll() -> None:
        while not done.is_set():
            _tree_cpu(proc.pid, seen)
            time.sleep(0.2)

    watcher = threading.Thread(target=poll)
    watcher.start()
    out, err = proc.communicate()
    done.set()
    watcher.join()
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args[3:])} failed:\n{out}\n{err}")
    report = json.loads(out)
    return {"wall": round(wall, 2), "cpu": round(sum(seen.values()), 2),
            "status": report.get("status"), "sources": report.get("sources"),
            "fingerprint_seconds": report.get("fingerprint_seconds")}


def make_data(folder: Path, rows: int) -> Path:
    import duckdb

    path = folder / "lines.parquet"
    duckdb.sql(f"COPY (SELECT range AS id, range % 1000 AS amount FROM range({rows})) "
               f"TO '{path}' (FORMAT parquet)")
    return path


def load_table(warehouse: Path, parquet: Path) -> None:
    """bench.lines in the warehouse's own catalog (a process of its own: Derby admits
    one JVM, and the CLI opens it next)."""
    code = ("import sys; from strata.engine.adapters.spark import local_session; "
            "s = local_session(sys.argv[1]); s.sql('CREATE DATABASE IF NOT EXISTS bench'); "
            "s.read.parquet(sys.argv[2]).write.format('parquet').saveAsTable('bench.lines'); "
            "s.stop()")
    subprocess.run([PYTHON, "-c", code, str(warehouse), str(parquet)], check=True,
                   cwd=ROOT, capture_output=True)


def bench_size(rows: int, before: Path, reps: int, root: Path, kinds: list[str]) -> dict:
    folder = root / f"n{rows}"
    folder.mkdir()
    parquet = make_data(folder, rows)
    out = {}
    for kind in kinds:
        source = MODULES[kind]
        project = folder / kind
        project.mkdir()
        (project / "m.strata").write_text(source.replace("lines.parquet", str(parquet))
                                          + MODEL)
        warehouse = project / "wh"
        if kind == "table":
            load_table(warehouse, parquet)
        args = ["run", "m.strata", "-o", f"spark:{warehouse}", "--json"]
        build = timed(cli(ROOT) + args, project)
        time.sleep(4)  # past the 3 s a file's times must age to be proof
        runs = []
        for rep in range(reps):
            for label, code in (("before", before), ("after", ROOT)):
                found = timed(cli(code) + args + ["--only-stale"], project)
                assert found["status"] == "up_to_date", found
                runs.append({"code": label, "rep": rep, **found})
                print(rows, kind, label, found, flush=True)
        out[kind] = {"build": build, "noop": runs}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True,
                        help="a checkout of the code to compare with (git archive main)")
    parser.add_argument("--sizes", default="1e6,1e7")
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--kinds", default="file,table", help="file, table or both")
    parser.add_argument("--out", type=Path, default=HERE / "results.json")
    args = parser.parse_args()
    results = {"args": vars(args) | {"before": str(args.before), "out": str(args.out)},
               "sizes": {}, "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               "load": os.getloadavg()}
    with tempfile.TemporaryDirectory(prefix="strata-markers-") as tmp:
        for size in args.sizes.split(","):
            rows = int(float(size))
            results["sizes"][rows] = bench_size(rows, args.before, args.reps, Path(tmp),
                                                args.kinds.split(","))
            args.out.write_text(json.dumps(results, indent=1) + "\n")
    results["load_after"] = os.getloadavg()
    args.out.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
