"""Rows for the round2 module: ties on the value a row is picked by (arg_min/arg_max
break them by the value), NULL values and NULL keys (a rollup's subtotal NULL beside
the data's), text that sorts by code point, month ends and a leap day."""

from datetime import date, datetime
from decimal import Decimal as D

TABLES = {
    "orders": [
        (1, 10, D("10.00"), 1.5, "paid", date(2024, 1, 31), datetime(2024, 1, 31, 9, 0)),
        (2, 10, D("10.00"), 1.5, "Paid", date(2024, 1, 31), datetime(2024, 1, 31, 9, 0)),
        (3, 20, D("5.50"), -0.0, "open", date(2024, 2, 29), datetime(2024, 2, 29, 23, 59, 59)),
        (4, None, D("7.25"), 2.5, "paid", date(2024, 3, 3), datetime(2024, 3, 3, 0, 0)),
        (5, 30, None, None, None, None, None),
        (6, 20, D("-3.00"), -2.5, "émis", date(2024, 2, 29), datetime(2024, 2, 29, 8, 0)),
        (7, 10, D("1.00"), 1.5, None, date(2023, 12, 31), datetime(2023, 12, 31, 23, 0)),
        (None, 20, D("0.50"), 9.0, "open", date(2024, 2, 1), datetime(2024, 2, 1, 0, 0)),
    ],
}
