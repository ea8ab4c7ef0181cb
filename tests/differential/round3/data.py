"""Rows for the round3 module (issue 35): group 1 holds ties and a decimal sum that
cancels to 0.5; group 2 the largest ints and a decimal(38, 10) of 30 digits; group 3
one row (38 digits); group 4 only NULLs; text that orders otherwise under a non-C
collation ('_' and '~' sort before digits and letters in ICU, 'a' before 'B');
timestamps from year 1 to 9999 and around the 32-bit epoch limits (1901, 2038)."""

from datetime import date, datetime
from decimal import Decimal as D

TABLES = {
    "nums": [
        (1, 1, 2, 1.5, D("9999.99"), D("10000000000000000000.5"), "a", True),
        (2, 1, 2, -0.0, D("-9999.99"), D(-10000000000000000000), "B", False),
        (3, 1, None, 2.5, D("0.50"), D("0.0000000001"), "b", None),
        (4, 1, -3, None, D("-0.50"), None, None, True),
        (5, 2, 9223372036854775807, 0.1, D("2.67"), D("12345678901234567890.1234567891"), "_x", True),
        (6, 2, 9223372036854775806, 1e15, D("-2.45"), D(1), "~y", False),
        (7, 2, 0, 1e16, None, D("-0.5000000000"), "É", True),
        (8, 3, 7, 9.5, D("-0.01"), D("9999999999999999999999999999.9999999999"), "Zed", False),
        (9, 4, None, None, None, None, None, None),
        (10, 1, 2, 1.5, D("9999.99"), D(0), "a", True),
    ],
    "times": [
        (1, datetime(1, 1, 2, 0, 0, 0), date(1, 1, 2)),
        (2, datetime(1901, 12, 13, 20, 45, 51), date(1901, 12, 13)),
        (3, datetime(1901, 12, 13, 20, 45, 52, 500000), date(1901, 12, 14)),
        (4, datetime(1969, 12, 31, 23, 59, 59, 500000), date(1969, 12, 31)),
        (5, datetime(2038, 1, 19, 3, 14, 7), date(2038, 1, 19)),
        (6, datetime(2038, 1, 19, 3, 14, 8, 250000), date(2038, 1, 20)),
        (7, datetime(9999, 12, 30, 23, 59, 59, 999999), date(9999, 12, 30)),
        (8, None, None),
    ],
    "events": [
        (1, "2024-01-31", datetime(2024, 1, 31, 12, 0), 1, False),
        (2, "2024-02-02", datetime(2024, 2, 2, 0, 0), 2, False),
        (3, "_late", datetime(2024, 1, 30, 23, 0), 3, False),
        (4, "~tilde", datetime(2024, 2, 1, 0, 0), 4, True),
        (5, "Zed", datetime(2024, 1, 31, 0, 0, 1), 5, False),
        (6, "abc", datetime(2024, 2, 5, 0, 0), 6, True),
        (7, None, None, 7, None),
        (8, "2024-02-01", datetime(2024, 2, 1, 0, 0, 0, 1), 8, False),
    ],
}
