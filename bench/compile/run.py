"""Time `strata check` and `strata compile --show-sql` end to end, as processes.

Generates modules of 1, 100 and 1,000 models (generate.py), runs each command
REPEAT times per size (wall clock, whole process: interpreter start, imports,
parse, resolve, SQL generation, rendering, printing to a file), and prints the
median per cell plus the per-model cost: total / models, and the marginal cost
(t(1000) - t(100)) / 900, which leaves out the fixed start-up. Wall clock is what
a user waits; CPU time (user + system) is reported beside it because it hardly
moves when other processes share the machine.

    .venv/bin/python bench/compile/run.py            # 7 runs per cell
    .venv/bin/python bench/compile/run.py --repeat 3 --sizes 1,1000 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
WORK = HERE / "work"
sys.path.insert(0, str(HERE))

from generate import module_text  # noqa: E402

COMMANDS = {
    "check": ["check"],
    "compile --show-sql": ["compile", "--show-sql"],
}


def strata_exe() -> str:
    venv = REPO / ".venv" / "bin" / "strata"
    return str(venv) if venv.exists() else "strata"


def time_once(argv: list[str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system) of one whole process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(os.devnull, "wb") as sink:
        start = time.perf_counter()
        proc = subprocess.run(argv, cwd=cwd, stdout=sink, stderr=subprocess.PIPE)
        elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n"
                         f"{proc.stderr.decode(errors='replace')}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--sizes", default="1,100,1000")
    parser.add_argument("--json", type=Path, default=None, help="Also write the figures here.")
    parser.add_argument("--strata", default=None, metavar="COMMAND",
                        help="How to start strata (default: the venv's `strata`); e.g. to time "
                             "another checkout: \"env PYTHONPATH=/tmp/old .venv/bin/python -c "
                             "'from strata.cli.main import main; main()'\"")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    WORK.mkdir(parents=True, exist_ok=True)
    exe = shlex.split(args.strata) if args.strata else [strata_exe()]
    results: dict[str, dict[str, dict[int, float]]] = {
        name: {"wall": {}, "cpu": {}} for name in COMMANDS}
    for size in sizes:
        path = WORK / f"m{size}.strata"
        path.write_text(module_text(size))
        for name, cmd in COMMANDS.items():
            argv = [*exe, *cmd, path.name]
            time_once(argv, WORK)  # warm the file cache (and any on-disk parser cache)
            runs = [time_once(argv, WORK) for _ in range(args.repeat)]
            walls, cpus = [w for w, _ in runs], [c for _, c in runs]
            results[name]["wall"][size] = statistics.median(walls)
            results[name]["cpu"][size] = statistics.median(cpus)
            print(f"{name:<20} {size:>5} models: wall median {statistics.median(walls):.3f} s "
                  f"(min {min(walls):.3f}, max {max(walls):.3f}), CPU median "
                  f"{statistics.median(cpus):.3f} s, n={len(runs)}", flush=True)
    marginal = {100, 1000} <= set(sizes)
    big = max(sizes)
    print()
    print("| command | clock | " + " | ".join(f"{s} models" for s in sizes)
          + f" | per model ({big}) |" + (" per model (marginal) |" if marginal else ""))
    print("|---|---|" + "---|" * len(sizes) + "---|" + ("---|" if marginal else ""))
    for name in COMMANDS:
        for clock in ("wall", "cpu"):
            row = results[name][clock]
            cells = [f"{row[s]:.2f} s" for s in sizes]
            line = (f"| `strata {name}` | {clock} | " + " | ".join(cells)
                    + f" | {row[big] / big * 1000:.2f} ms |")
            if marginal:
                line += f" {(row[1000] - row[100]) / 900 * 1000:.2f} ms |"
            print(line)
    print(f"\nload average during the run: {os.getloadavg()[0]:.1f} ({os.cpu_count()} CPUs)")
    if args.json:
        args.json.write_text(json.dumps(
            {n: {c: {str(k): v for k, v in r.items()} for c, r in clocks.items()}
             for n, clocks in results.items()}, indent=2))


if __name__ == "__main__":
    main()
