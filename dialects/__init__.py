"""The engines Strata renders SQL for, one module each."""

from __future__ import annotations

from dialects import bigquery, duckdb, postgres, snowflake, spark, trino
from dialects.base import Dialect

DIALECTS: dict[str, Dialect] = {m.DIALECT.name: m.DIALECT
                                for m in (duckdb, postgres, snowflake, bigquery, spark, trino)}
DEFAULT = "duckdb"


def get(name: str) -> Dialect:
    """The dialect called `name`; raises StrataError E090 for an unknown one."""
    from strata.diagnostics import did_you_mean, fail

    try:
        return DIALECTS[name.lower()]
    except KeyError:
        raise fail("E090", f"unknown dialect `{name}`", None,
                   did_you_mean(name.lower(), DIALECTS) or
                   f"dialects: {', '.join(DIALECTS)}") from None
