"""Time `strata check` and `strata compile --show-sql` end to end, as processes.

Generates modules of 1, 100 and 1,000 models (generate.py), runs each command
REPEAT times per size and cache state (whole process: interpreter start, imports,
parse, resolve, SQL generation, rendering, printing to /dev/null), and prints the
median per cell plus the per-model cost: total / models, and the marginal cost
(t(1000) - t(100)) / 900, which leaves out the fixed start-up.

Two cache states: `cold` runs with STRATA_NO_CACHE=1 (every file parsed, as on a
first run or after an edit); `warm` with a parse cache (strata/syntax/cache.py)
that an untimed first run filled, as when compiling again an unchanged module.

Wall clock is what a user waits; CPU time (user + system) is reported beside it
because it hardly moves when other processes share the machine (wall time does:
check the load average printed at the end).

    .venv/bin/python bench/compile/run.py            # 7 runs per cell
    .venv/bin/python bench/compile/run.py --repeat 3 --sizes 1,1000 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
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

from generate import module_text

COMMANDS = {
    "check": ["check"],
    "compile --show-sql": ["compile", "--show-sql"],
}
CACHES = ("cold", "warm")


def strata_exe() -> str:
    venv = REPO / ".venv" / "bin" / "strata"
    return str(venv) if venv.exists() else "strata"


def environment(cache: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("STRATA_NO_CACHE",
                                                           "STRATA_CACHE_DIR")}
    if cache == "cold":
        env["STRATA_NO_CACHE"] = "1"
    else:
        env["STRATA_CACHE_DIR"] = str(WORK / "cache")
    return env


def time_once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system) of one whole process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(os.devnull, "wb") as sink:
        start = time.perf_counter()
        proc = subprocess.run(argv, cwd=WORK, env=env, stdout=sink, stderr=subprocess.PIPE,
                              check=False)
        elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n"
                         f"{proc.stderr.decode(errors='replace')}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from strata_bytecode import compile_strata


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--sizes", default="1,100,1000")
    parser.add_argument("--caches", default="cold,warm", help="cold, warm or both")
    parser.add_argument("--json", type=Path, default=None, help="Also write the figures here.")
    parser.add_argument("--strata", default=None, metavar="COMMAND",
                        help="How to start strata (default: the venv's `strata`); e.g. to time "
                             "another checkout: \"env PYTHONPATH=/tmp/old .venv/bin/python -c "
                             "'from strata.cli.main import main; main()'\"")
    args = parser.parse_args()
    compile_strata(sys.executable)  # as an installed package has it (strata_bytecode.py)
    sizes = [int(s) for s in args.sizes.split(",")]
    caches = [c for c in args.caches.split(",") if c in CACHES]
    WORK.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(WORK / "cache", ignore_errors=True)
    exe = shlex.split(args.strata) if args.strata else [strata_exe()]
    # results[command][cache][clock][size] = median seconds
    results: dict = {n: {c: {"wall": {}, "cpu": {}} for c in caches} for n in COMMANDS}
    for size in sizes:
        path = WORK / f"m{size}.strata"
        path.write_text(module_text(size))
        for name, cmd in COMMANDS.items():
            for cache in caches:
                argv, env = [*exe, *cmd, path.name], environment(cache)
                time_once(argv, env)  # warms the OS file cache, and the parse cache if on
                runs = [time_once(argv, env) for _ in range(args.repeat)]
                walls, cpus = [w for w, _ in runs], [c for _, c in runs]
                cell = results[name][cache]
                cell["wall"][size] = statistics.median(walls)
                cell["cpu"][size] = statistics.median(cpus)
                print(f"{name:<20} {cache:<4} {size:>5} models: wall median "
                      f"{cell['wall'][size]:.3f} s (min {min(walls):.3f}, max {max(walls):.3f})"
                      f", CPU median {cell['cpu'][size]:.3f} s, n={len(runs)}", flush=True)
    marginal = {100, 1000} <= set(sizes)
    big = max(sizes)
    print()
    print("| command | cache | clock | " + " | ".join(f"{s} models" for s in sizes)
          + f" | per model ({big}) |" + (" per model (marginal) |" if marginal else ""))
    print("|---|---|---|" + "---|" * len(sizes) + "---|" + ("---|" if marginal else ""))
    for name in COMMANDS:
        for cache in caches:
            for clock in ("wall", "cpu"):
                row = results[name][cache][clock]
                line = (f"| `strata {name}` | {cache} | {clock} | "
                        + " | ".join(f"{row[s]:.2f} s" for s in sizes)
                        + f" | {row[big] / big * 1000:.2f} ms |")
                if marginal:
                    line += f" {(row[1000] - row[100]) / 900 * 1000:.2f} ms |"
                print(line)
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f} ({os.cpu_count()} CPUs)")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
