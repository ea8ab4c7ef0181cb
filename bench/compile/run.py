"""Time `strata check` and `strata compile --show-sql` end to end, as processes.

Generates modules of 1, 100 and 1,000 models (generate.py), runs each command
REPEAT times per size (wall clock, whole process: interpreter start, imports,
parse, resolve, SQL generation, rendering, printing to a file), and prints the
median per cell plus the per-model cost: total / models, and the marginal cost
(t(1000) - t(100)) / 900, which leaves out the fixed start-up.

    .venv/bin/python bench/compile/run.py            # 7 runs per cell
    .venv/bin/python bench/compile/run.py --repeat 3 --sizes 1,1000 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
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


def time_once(argv: list[str], cwd: Path) -> float:
    with open(os.devnull, "wb") as sink:
        start = time.perf_counter()
        proc = subprocess.run(argv, cwd=cwd, stdout=sink, stderr=subprocess.PIPE)
        elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n"
                         f"{proc.stderr.decode(errors='replace')}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--sizes", default="1,100,1000")
    parser.add_argument("--json", type=Path, default=None, help="Also write the figures here.")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    WORK.mkdir(parents=True, exist_ok=True)
    exe = strata_exe()
    results: dict[str, dict[int, float]] = {name: {} for name in COMMANDS}
    for size in sizes:
        path = WORK / f"m{size}.strata"
        path.write_text(module_text(size))
        for name, cmd in COMMANDS.items():
            argv = [exe, *cmd, path.name]
            time_once(argv, WORK)  # warm the file cache (and any on-disk parser cache)
            runs = [time_once(argv, WORK) for _ in range(args.repeat)]
            results[name][size] = statistics.median(runs)
            print(f"{name:<20} {size:>5} models: median {results[name][size]:.3f} s "
                  f"(min {min(runs):.3f}, max {max(runs):.3f}, n={len(runs)})", flush=True)
    print()
    print("| command | " + " | ".join(f"{s} models" for s in sizes) + " | per model (total) |"
          + (" per model (marginal) |" if {100, 1000} <= set(sizes) else ""))
    print("|---|" + "---|" * len(sizes) + "---|" + ("---|" if {100, 1000} <= set(sizes) else ""))
    for name in COMMANDS:
        row = results[name]
        big = max(sizes)
        cells = [f"{row[s]:.2f} s" for s in sizes]
        line = f"| `strata {name}` | " + " | ".join(cells) + f" | {row[big] / big * 1000:.2f} ms |"
        if {100, 1000} <= set(sizes):
            line += f" {(row[1000] - row[100]) / 900 * 1000:.2f} ms |"
        print(line)
    if args.json:
        args.json.write_text(json.dumps({n: {str(k): v for k, v in r.items()}
                                         for n, r in results.items()}, indent=2))


if __name__ == "__main__":
    main()
