"""Rows for the operators module: each operand NULL somewhere, negatives for `%`,
zero divisors (rows 11, 12), ties for comparisons, and LIKE subjects and patterns with `%`, `_` and backslash."""

from datetime import date, datetime
from decimal import Decimal as D

TABLES = {
    "pairs": [
        (1, 7, 2, 7.0, 2.0, D("7.00"), D("2.00"), True, True, "abc", "a%",
         date(2024, 2, 28), datetime(2024, 2, 28, 23, 0)),
        (2, -7, 2, -7.5, 2.0, D("-7.50"), D("2.00"), True, False, "a_c", "a\\_c",
         date(2024, 2, 29), datetime(2024, 2, 29, 0, 0)),
        (3, 7, -2, 0.1, 0.2, D("0.10"), D("0.20"), False, True, "a%c", "a\\%c",
         date(2023, 12, 31), datetime(2023, 12, 31, 12, 0)),
        (4, -7, -3, -0.0, 0.0, D("-1.00"), D("3.00"), False, False, "abc", "a_c",
         date(2024, 1, 31), datetime(2024, 1, 31, 8, 30)),
        (5, None, 2, None, 1.0, None, D("1.00"), None, True, None, "%",
         None, None),
        (6, 3, None, 1.0, None, D("1.00"), None, True, None, "x", None,
         date(2024, 3, 1), datetime(2024, 3, 1, 0, 0, 0, 500000)),
        (7, None, None, None, None, None, None, None, False, "a\\c", "a\\\\c",
         date(2024, 12, 31), datetime(2024, 12, 31, 23, 59, 59)),
        (8, 0, 5, 1e300, 10.0, D("99999.99"), D("0.01"), False, None, "It's", "It''s",
         date(2000, 1, 1), datetime(2000, 1, 1)),
        (9, 2, 2, 2.5, 2.5, D("2.50"), D("2.50"), True, True, "ABC", "abc",
         date(2024, 2, 29), datetime(2024, 2, 29, 0, 0)),
        (10, 9007199254740993, 3, 1e15, 3.0, D("-0.01"), D("3.00"), None, None, "é", "É",
         date(2024, 5, 31), datetime(2024, 5, 31, 1, 2, 3)),
        (11, -7, 0, -1.5, 0.0, D("7.50"), D("0.00"), True, False, "z", "z",
         date(2024, 2, 1), datetime(2024, 2, 1, 0, 0)),
        (12, 0, 0, 0.0, -0.0, D("0.00"), D("0.00"), False, False, "", "",
         date(2024, 2, 2), datetime(2024, 2, 2, 0, 0)),
    ],
}
