"""Rows for the functions3 module (see sources.strata)."""

TABLES = {
    "texts": [
        (1, "order-42"),
        (2, ""),
        (3, None),
        (4, "a\nb"),
        (5, "line one\n"),
        (6, "Ünïcödé ٣ digits 7"),
        (7, "aaa bbb aaa"),
        (8, "x.y*z (1) [2] $3 \\ back"),
        (9, "tab\there\r\nend"),
        (10, "日本語 123 😀 456"),
        (11, "ab"),
        (12, "   "),
    ],
}
