"""Rows for the grouped module: a group whose count of paid rows is zero (division by
zero is an infinity), a sum of -0.0 (its sign), .5 ties after a division, NULL values
and a NULL key."""

from datetime import date, datetime
from decimal import Decimal as D

TABLES = {
    "orders": [
        (1, 10, D("10.00"), 1.5, "paid", date(2024, 1, 31), datetime(2024, 1, 31, 9, 0)),
        (2, 10, D("10.01"), 1.25, "paid", date(2024, 1, 31), datetime(2024, 1, 31, 9, 0)),
        (3, 20, D("5.50"), -0.0, "open", date(2024, 2, 29), datetime(2024, 2, 29, 23, 59, 59)),
        (4, None, D("7.25"), 2.5, "paid", date(2024, 3, 3), datetime(2024, 3, 3, 0, 0)),
        (5, 30, None, None, None, None, None),
        (6, 20, D("-3.00"), -2.5, "open", date(2024, 2, 29), datetime(2024, 2, 29, 8, 0)),
        (7, 10, D("1.00"), 1.5, None, date(2023, 12, 31), datetime(2023, 12, 31, 23, 0)),
        (8, 40, D("0.05"), 0.125, "paid", date(2024, 2, 1), datetime(2024, 2, 1, 0, 0)),
        (9, 40, D("0.05"), -0.0, "open", date(2024, 2, 2), datetime(2024, 2, 2, 0, 0)),
    ],
}
