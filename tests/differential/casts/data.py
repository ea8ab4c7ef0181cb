"""Rows for the casts module: values that round (.5 both ways, negatives), that
truncate, zero and negative zero, and text that each type can read."""

from datetime import date, datetime
from decimal import Decimal as D

TABLES = {
    "vals": [
        (1, 0, 0.0, D("0.000"), False, date(2024, 2, 29), datetime(2024, 2, 29, 13, 45, 30)),
        (2, 1, 0.5, D("0.500"), True, date(2024, 3, 31), datetime(2024, 3, 31, 0, 0)),
        (3, -1, -0.5, D("-0.500"), True, date(2023, 12, 31), datetime(2023, 12, 31, 23, 59, 59, 999000)),
        (4, 42, 1.5, D("1.500"), False, date(1999, 1, 1), datetime(1970, 1, 1)),
        (5, -42, -1.5, D("-1.500"), None, date(2000, 2, 29), datetime(2000, 2, 29, 12, 0, 0, 250000)),
        (6, 9007199254740993, 2.5, D("2.500"), True, date(2024, 12, 31), datetime(2024, 12, 31, 23, 59, 59)),
        (7, None, None, None, None, None, None),
        (8, 7, -0.0, D("-0.001"), False, date(2024, 1, 7), datetime(2024, 1, 7, 6, 0)),
        (9, -3, 2.7, D("2.999"), True, date(2021, 1, 3), datetime(2021, 1, 3, 0, 0, 0, 1)),
        (10, 100, -2.7, D("-2.999"), False, date(2024, 6, 30), datetime(2024, 6, 30, 12, 30)),
        (11, 5, 123456.789, D("123456789.123"), True, date(2024, 2, 1), datetime(2024, 2, 1, 1, 1, 1)),
        (12, -5, 1e-3, D("0.001"), False, date(2024, 4, 30), datetime(2024, 4, 30, 4, 30)),
    ],
    "spelled": [
        (1, "42", "1.5", "12.345", "true", "2024-02-29", "2024-02-29 13:45:30"),
        (2, "-7", "-0.5", "-0.005", "false", "2023-12-31", "2023-12-31 23:59:59.5"),
        (3, " 12 ", "1e3", "0", "TRUE", "2000-02-29", "2000-02-29 00:00:00"),
        (4, "0", "2.5", "99.999", "False", "1999-01-01", "1970-01-01 00:00:00"),
        (5, None, None, None, None, None, None),
        (6, "9007199254740993", "-0", "1.5", "true", "2024-03-31", "2024-03-31 12:00:00"),
    ],
}

# text columns of vals: the same row as text
TABLES["vals"] = [row + (None if row[1] is None else f"v{row[1]}",) for row in TABLES["vals"]]

TABLES["lists"] = [
    (1, [1, 2, 3], ["1", "2"]),
    (2, [], []),
    (3, None, None),
    (4, [None, -5], ["-5", None]),
    (5, [9007199254740993], ["9007199254740993"]),
]
