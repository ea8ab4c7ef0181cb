"""Python values → typed SQLGlot literal nodes (`_lit` of the delivery note).

Watermarks are read from the warehouse as typed Python values (never parsed from
text) and embedded through here, so a `date` stays a DATE and a `datetime` a
TIMESTAMP in every dialect.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from sqlglot import exp


def lit(value) -> exp.Expression:
    """A literal node for `value`: None, bool, int, float, Decimal, str, date, datetime, list."""
    if value is None:
        return exp.Null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int):
        return exp.Literal.number(value) if value >= 0 else exp.Neg(
            this=exp.Literal.number(-value))
    if isinstance(value, Decimal):
        text = format(value, "f")
        return exp.Literal.number(text) if value >= 0 else exp.Neg(
            this=exp.Literal.number(text.lstrip("-")))
    if isinstance(value, float):
        text = repr(value)
        return exp.Literal.number(text) if value >= 0 else exp.Neg(
            this=exp.Literal.number(text.lstrip("-")))
    if isinstance(value, dt.datetime):  # before date: datetime is a date subclass
        text = value.isoformat(sep=" ")
        return exp.Cast(this=exp.Literal.string(text), to=exp.DataType.build("TIMESTAMP"))
    if isinstance(value, dt.date):
        return exp.Cast(this=exp.Literal.string(value.isoformat()),
                        to=exp.DataType.build("DATE"))
    if isinstance(value, str):
        return exp.Literal.string(value)
    if isinstance(value, (list, tuple)):
        return exp.Array(expressions=[lit(v) for v in value])
    raise TypeError(f"no SQL literal for {type(value).__name__}")


_lit = lit  # the name the delivery note uses
