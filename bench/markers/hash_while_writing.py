"""Issue 41, "hash while writing": 30 models over a 1e5-row Parquet file, one
`strata run -o spark:DIR --workers 4` CLI process each on a fresh warehouse, the code
of two checkouts interleaved (`--reps` each), timed by /usr/bin/time (the JVM is not a
child it waits for: wall time is the figure; note the load, the machine is shared).

    .venv/bin/python bench/markers/hash_while_writing.py --before /tmp/main-copy [--after .]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
BOOT = ("import sys; sys.path.insert(0, sys.argv.pop(1)); sys.argv[0] = 'strata'; "
        "from strata.cli.main import main; main()")


def module_text(models: int) -> str:
    """Chains of five: four filters of ~1e5 rows each, then a grouping."""
    parts = [("source lines = file 'lines.parquet' {\n  id: int\n  amount: int\n  cat: int\n"
              "  label: text\n}\n")]
    for i in range(models):
        if i % 5 == 4:
            parts.append(f"model m{i} {{\n  from m{i - 1}\n  group cat\n"
                         f"  aggregate n = count(), s = sum(amount)\n}}\n")
        else:
            up = "lines" if i % 5 == 0 else f"m{i - 1}"
            parts.append(f"model m{i} {{\n  from {up}\n  filter amount > {i}\n"
                         f"  select id, amount, cat, label\n}}\n")
    return "\n".join(parts)


def timed(code: Path, project: Path, warehouse: Path, workers: int) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".txt") as out:
        proc = subprocess.run(["/usr/bin/time", "-f", "%e", "-o", out.name, sys.executable,
                               "-c", BOOT, str(code), "run", "m.strata", "-o",
                               f"spark:{warehouse}", "--workers", str(workers), "--json"],
                              cwd=project, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise SystemExit(proc.stderr[-2000:])
        return {"wall": float(Path(out.name).read_text().split()[-1]),
                "status": json.loads(proc.stdout).get("status")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, default=ROOT)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--models", type=int, default=30)
    parser.add_argument("--rows", type=int, default=100_000)
    args = parser.parse_args()
    import duckdb

    with tempfile.TemporaryDirectory(prefix="strata-hww-") as tmp:
        project = Path(tmp)
        duckdb.sql(f"COPY (SELECT range AS id, (range * 7919) % 1000 AS amount, range % 13 "
                   f"AS cat, 'name ' || range AS label FROM range({args.rows})) TO "
                   f"'{project / 'lines.parquet'}' (FORMAT parquet)")
        (project / "m.strata").write_text(module_text(args.models))
        for rep in range(args.reps):
            for which in ("before", "after"):
                warehouse = project / f"wh_{which}_{rep}"
                load = os.getloadavg()[0]
                found = timed(getattr(args, which), project, warehouse, 4)
                print(json.dumps({"rep": rep, "code": which, **found,
                                  "load1": round(load, 2)}), flush=True)
                shutil.rmtree(warehouse, ignore_errors=True)


if __name__ == "__main__":
    main()
