"""How `strata check` and `strata compile --show-sql` scale: 1,000 / 10,000 / 50,000
models (issue 14). Target: linear, the 50,000-model figure at most 60x the 1,000 one.

Each cell is a whole process (the module from generate.py, one file), timed by wall
clock and by the process's own CPU time (user + system, from wait4), with its peak
resident memory. `cold`: STRATA_NO_CACHE=1, every file parsed. `warm`: the parse
cache (strata/syntax/cache.py) filled by an untimed `check` of the same module. The ratio column
divides each size's median by the 1,000-model median of the same cell.

    .venv/bin/python bench/compile/scaling.py                      # 3 runs at 1,000, 1 above
    .venv/bin/python bench/compile/scaling.py --sizes 1000,10000 --repeat 3 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import module_text
from run import CACHES, COMMANDS, strata_exe

# apart from run.py's folder, so that both can run at once without sharing a cache
WORK = HERE / "work" / "scaling"

# linear, with 20% of slack: 50,000 models at most 60x the time of 1,000
TARGET_SLACK = 1.2


def environment(cache: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("STRATA_NO_CACHE",
                                                           "STRATA_CACHE_DIR")}
    if cache == "cold":
        env["STRATA_NO_CACHE"] = "1"
    else:
        env["STRATA_CACHE_DIR"] = str(WORK / "cache")
    return env


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS MiB) of one whole process."""
    with open(os.devnull, "wb") as sink:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=WORK, env=env, stdout=sink, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        err = proc.stderr.read() if proc.stderr else b""
        proc.stderr.close()
        proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n"
                         f"{err.decode(errors='replace')}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from strata_bytecode import compile_strata


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--repeat", type=int, default=3, help="runs per cell at the smallest "
                        "size (its median is every ratio's base)")
    parser.add_argument("--repeat-large", type=int, default=1, help="runs per cell above it")
    parser.add_argument("--caches", default="cold,warm")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--strata", default=None, metavar="COMMAND",
                        help="How to start strata (default: the venv's `strata`), e.g. a "
                             "clean export of a commit: \"env PYTHONPATH=/tmp/sb "
                             ".venv/bin/python -c 'from strata.cli.main import main; main()'\"")
    args = parser.parse_args()
    compile_strata(sys.executable)  # as an installed package has it (strata_bytecode.py)
    sizes = sorted(int(s) for s in args.sizes.split(","))
    caches = [c for c in args.caches.split(",") if c in CACHES]
    WORK.mkdir(parents=True, exist_ok=True)
    exe = shlex.split(args.strata) if args.strata else [strata_exe()]
    # results[command][cache][size] = {"wall": s, "cpu": s, "rss": MiB}
    results: dict = {name: {c: {} for c in caches} for name in COMMANDS}
    for size in sizes:
        path = WORK / f"m{size}.strata"
        path.write_text(module_text(size))
        repeat = args.repeat if size == sizes[0] else args.repeat_large
        if "warm" in caches:  # the parse cache is the same for both commands: fill it once
            shutil.rmtree(WORK / "cache", ignore_errors=True)
            run_once([*exe, "check", path.name], environment("warm"))
        for name, cmd in COMMANDS.items():
            for cache in caches:
                argv, env = [*exe, *cmd, path.name], environment(cache)
                runs = [run_once(argv, env) for _ in range(repeat)]
                cell = {key: statistics.median(r[i] for r in runs)
                        for i, key in enumerate(("wall", "cpu", "rss"))}
                results[name][cache][size] = cell
                print(f"{name:<20} {cache:<4} {size:>6} models: wall {cell['wall']:7.2f} s, "
                      f"CPU {cell['cpu']:7.2f} s, peak RSS {cell['rss']:6.0f} MiB, n={repeat}"
                      f", load {os.getloadavg()[0]:.1f}", flush=True)
    base = sizes[0]
    print()
    print("| command | cache | " + " | ".join(f"{s:,} models" for s in sizes)
          + f" | {sizes[-1]:,} / {base:,} (wall, CPU) |")
    print("|---|---|" + "---|" * len(sizes) + "---|")
    for name in COMMANDS:
        for cache in caches:
            row = results[name][cache]
            cells = [f"{row[s]['wall']:.1f} s ({row[s]['cpu']:.1f} s CPU, {row[s]['rss']:.0f} MiB)"
                     for s in sizes]
            wall = row[sizes[-1]]["wall"] / row[base]["wall"]
            cpu = row[sizes[-1]]["cpu"] / row[base]["cpu"]
            # judged on CPU time: wall time on a shared machine measures the other load
            verdict = "ok" if cpu <= TARGET_SLACK * sizes[-1] / base else "OVER"
            print(f"| `strata {name}` | {cache} | " + " | ".join(cells)
                  + f" | {wall:.1f}x, {cpu:.1f}x {verdict} |")
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f} ({os.cpu_count()} CPUs)")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
