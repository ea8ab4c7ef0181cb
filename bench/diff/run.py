"""The data diff of `strata diff` on two 1e7-row DuckDB snapshots that differ in 1% of
their rows (a third removed, a third added, a third with one value changed), against
the floor: `EXCEPT ALL` both ways, which only counts the differing rows.

    .venv/bin/python bench/diff/run.py [--rows 10000000] [--repeat 3]

Times are the best of --repeat, in a fresh warehouse file under a temporary folder.
The figures of the last run on the reference machine are in RESULTS.md.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from strata.engine.warehouse import INTERNAL, Warehouse
from strata.impact.datadiff import compare


def setup(wh: Warehouse, rows: int) -> tuple[int, int, int]:
    step = 300  # every 300th row removed, every 300th (offset 100) changed, and as many added
    wh.execute(f"""CREATE TABLE {INTERNAL}.snap_a AS
        SELECT i AS id, i % 1000 AS customer_id, (i * 7919) % 100000 / 100.0 AS amount,
               'status_' || (i % 7) AS status
        FROM range({rows}) t(i)""")
    wh.execute(f"""CREATE TABLE {INTERNAL}.snap_b AS
        SELECT id, customer_id,
               CASE WHEN id % {step} = 100 THEN amount + 1 ELSE amount END AS amount, status
        FROM {INTERNAL}.snap_a WHERE id % {step} <> 0
        UNION ALL
        SELECT {rows} + i, i % 1000, 1.0, 'new' FROM range({rows} // {step}) t(i)""")
    wh.execute("CHECKPOINT")
    removed = len(range(0, rows, step))
    changed = len(range(100, rows, step))
    return removed, rows // step, changed


def best(repeat: int, fn) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        wh = Warehouse.open(str(Path(folder) / "bench.duckdb"))
        try:
            removed, added, changed = setup(wh, args.rows)
            keyed_s, keyed = best(args.repeat, lambda: compare(
                wh, "m", "snap_a", "snap_b", ["id"], 5))
            assert (keyed.removed, keyed.added, keyed.changed) == (removed, added, changed), keyed
            assert keyed.columns == {"customer_id": 0, "amount": changed, "status": 0}
            hashed_s, hashed = best(args.repeat, lambda: compare(
                wh, "m", "snap_a", "snap_b", None, 5))
            assert (hashed.removed, hashed.added) == (removed + changed, added + changed), hashed
            floor_s, floor = best(args.repeat, lambda: wh.execute(
                f"SELECT (SELECT count(*) FROM (FROM {INTERNAL}.snap_a EXCEPT ALL "
                f"FROM {INTERNAL}.snap_b)), (SELECT count(*) FROM (FROM {INTERNAL}.snap_b "
                f"EXCEPT ALL FROM {INTERNAL}.snap_a))").fetchone())
            assert floor == (removed + changed, added + changed), floor
        finally:
            wh.close()
    print(f"rows: {args.rows:,} per snapshot; differing: {removed:,} removed, "
          f"{added:,} added, {changed:,} changed")
    print(f"keyed diff (full outer join on id, per-column counts, 5 samples a kind): "
          f"{keyed_s:.2f} s")
    print(f"keyless diff (row-hash buckets, counts only):                          "
          f"{hashed_s:.2f} s")
    print(f"floor: EXCEPT ALL both ways (counts only):                             "
          f"{floor_s:.2f} s")
    print(f"keyed / floor: {keyed_s / floor_s:.2f}x; keyless / floor: {hashed_s / floor_s:.2f}x")


if __name__ == "__main__":
    main()
