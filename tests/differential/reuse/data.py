"""Rows for the reuse module (issue 40: with, fn, rel.*) (the steps module's shop): ties, NULL join and group keys, an
order whose customer is missing, names that sort by code point (upper case, lower
case, accents), lists that are empty, NULL or hold NULL."""

from datetime import date, datetime
from decimal import Decimal as D

TABLES = {
    "orders": [
        (1, 10, D("10.00"), 1.5, "paid", True, date(2024, 1, 31), datetime(2024, 1, 31, 9, 0), ["a", "b"]),
        (2, 10, D("10.00"), 1.5, "paid", True, date(2024, 1, 31), datetime(2024, 1, 31, 9, 0), ["a"]),
        (3, 20, D("5.50"), -0.0, "open", False, date(2024, 2, 29), datetime(2024, 2, 29, 23, 59, 59), []),
        (4, None, D("7.25"), 2.5, "paid", True, date(2024, 3, 3), datetime(2024, 3, 3, 0, 0), None),
        (5, 30, None, None, None, None, None, None, ["x", None, "x"]),
        (6, 99, D("0.01"), 1e-9, "open", False, date(2023, 12, 31), datetime(2023, 12, 31, 12, 0), ["ü"]),
        (7, 20, D("-3.00"), -2.5, "refund", False, date(2024, 2, 29), datetime(2024, 2, 29, 8, 0), ["a", "a"]),
        (8, 10, D("10.00"), 1.5, "paid", True, date(2024, 1, 31), datetime(2024, 1, 31, 9, 0), ["b"]),
        (9, 40, D("99999999.99"), 1e300, "paid", True, date(2024, 12, 31), datetime(2024, 12, 31, 23, 59, 59), ["z"]),
    ],
    "customers": [
        (10, "Ann", "north"),
        (20, "Bob", None),
        (30, "Cé'line", "south"),
        (40, "Dan", "north"),
        (50, "Eve", "east"),
        (60, "éva", "east"),
        (70, "Zoë", "East"),
        (80, "eve", None),
    ],
    "returns": [
        (1, 10, "paid"),
        (1, 10, "paid"),
        (3, 20, "open"),
        (11, None, None),
        (5, 30, None),
    ],
}
