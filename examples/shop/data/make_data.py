"""Write order_items.parquet, the one Parquet source of the shop example.

The rows are spelled out below (no randomness), so running this again gives the
same file and the expected values in tests/test_examples_run.py stay true. The
list column (`tags`) lives here because lists are awkward in CSV.

    .venv/bin/python examples/shop/data/make_data.py
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent


def ts(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text)


# order_id, line_no, product_id, quantity, unit_price, tags, updated_at
ITEMS = [
    (1, 1, 1, 2, "8.50", ["organic", "gift"], "2024-01-03 10:00:00"),
    (1, 2, 3, 1, "12.00", [], "2024-01-03 10:00:00"),
    (2, 1, 2, 3, "7.00", ["organic"], "2024-01-10 12:00:00"),
    (2, 2, 8, 2, "4.25", None, "2024-01-10 12:00:00"),  # NULL list: no tags recorded
    (3, 1, 5, 1, "39.00", ["bundle", "gift"], "2024-01-15 09:00:00"),
    (3, 2, 4, 1, "24.90", ["fragile"], "2024-01-15 09:00:00"),
    (4, 1, 4, 1, "24.90", ["fragile"], "2024-01-20 14:00:00"),
    (4, 2, 1, 1, "8.50", ["organic"], "2024-01-20 14:00:00"),
    (5, 1, 6, 2, "6.50", [], "2024-01-21 13:00:00"),  # order 5 was cancelled
    (6, 1, 7, 1, "25.00", ["gift", "digital"], "2024-01-25 11:00:00"),
    (6, 2, 99, 4, "3.00", ["clearance"], "2024-01-25 11:00:00"),  # product 99 not in catalogue
    (7, 1, 1, 1, "8.50", ["organic"], "2024-01-28 17:30:00"),  # guest checkout
    (8, 1, 3, 2, "12.00", ["fragile"], "2024-02-01 10:00:00"),  # returned
    (9, 1, 2, 1, "7.00", ["Organic"], "2024-02-02 11:00:00"),  # tag case differs
    (9, 2, 8, 3, "4.25", [], "2024-02-02 11:00:00"),
    (9, 3, 3, 0, "12.00", ["fragile"], "2024-02-03 09:00:00"),  # line emptied: quantity 0
    (10, 1, 5, 1, "39.00", ["bundle"], "2024-02-05 15:00:00"),
    (11, 1, 1, 4, "8.50", ["organic", "bulk"], "2024-02-06 20:00:00"),
    (12, 1, 4, 1, "24.90", ["fragile", None], "2024-02-08 09:00:00"),  # NULL element
    (12, 2, 2, 2, "7.00", None, "2024-02-08 09:00:00"),
    (13, 1, 8, 1, "4.25", [], "2024-02-10 10:10:00"),
    (14, 1, 1, 1, "8.50", ["test"], "2024-02-10 11:00:00"),  # test order
    (15, 1, 3, 5, "12.00", ["gift"], "2024-02-12 08:00:00"),
    # order 16 has no lines yet
    (17, 1, 5, 1, "39.00", ["bundle"], "2024-02-16 09:00:00"),
    (17, 2, 3, 2, "12.00", ["gift", "fragile"], "2024-02-16 09:00:00"),
    (18, 1, 2, 2, "7.00", ["organic"], "2024-02-18 08:05:00"),
    (19, 1, 4, 1, "24.90", ["fragile"], "2024-02-19 12:00:00"),
    (19, 2, 8, 4, "4.25", ["snack"], "2024-02-19 12:00:00"),
    (20, 1, 1, 1, "8.50", [], "2024-02-20 16:00:00"),  # guest, cancelled
    (21, 1, 7, 2, "25.00", ["gift", "digital"], "2024-02-22 10:00:00"),
    (22, 1, 3, 1, "12.00", ["fragile"], "2024-02-23 09:00:00"),  # returned
    (23, 1, 1, 3, "8.50", ["organic", "bulk"], "2024-02-25 21:30:00"),
    (23, 2, 8, 2, "4.25", None, "2024-02-25 21:30:00"),
    (24, 1, 2, 5, "7.00", ["organic", "bulk"], "2024-02-26 11:00:00"),
    (24, 2, 3, 1, "12.00", [], "2024-02-26 11:00:00"),
    (24, 3, 4, 1, "24.90", ["fragile", "gift"], "2024-02-28 15:00:00"),  # added later
]

SCHEMA = pa.schema([
    ("order_id", pa.int64()),
    ("line_no", pa.int64()),
    ("product_id", pa.int64()),
    ("quantity", pa.int64()),
    ("unit_price", pa.decimal128(10, 2)),
    ("tags", pa.list_(pa.string())),
    ("updated_at", pa.timestamp("us")),
])


def table() -> pa.Table:
    columns = list(zip(*ITEMS))
    return pa.table([
        pa.array(columns[0], pa.int64()),
        pa.array(columns[1], pa.int64()),
        pa.array(columns[2], pa.int64()),
        pa.array(columns[3], pa.int64()),
        pa.array([Decimal(p) for p in columns[4]], pa.decimal128(10, 2)),
        pa.array(columns[5], pa.list_(pa.string())),
        pa.array([ts(t) for t in columns[6]], pa.timestamp("us")),
    ], schema=SCHEMA)


def main() -> None:
    out = HERE / "order_items.parquet"
    pq.write_table(table(), out, compression="zstd")
    print(f"wrote {out.relative_to(HERE.parent.parent.parent)} ({len(ITEMS)} rows)")


if __name__ == "__main__":
    main()
