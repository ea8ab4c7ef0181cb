"""What the bookkeeping modules (history, branches, staleness, publication) need of a
warehouse: its names and the few methods they call. It sits below `warehouse.py`,
whose opening recovers a publication a crash cut short through those modules: they
import this, never the module that opens a warehouse.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol

import duckdb
from sqlglot import exp

from strata.engine.adapters.base import INTERNAL, Adapter

MAIN_BRANCH = "main"


class WarehouseHandle(Protocol):
    """An open warehouse as bookkeeping reads and writes it (`warehouse.Warehouse`)."""

    path: str
    label: str
    adapter: Adapter

    @property
    def con(self) -> duckdb.DuckDBPyConnection: ...

    def has_internal(self) -> bool: ...

    def rows(self, tree: exp.Expression) -> list[tuple]: ...

    def run(self, tree: exp.Expression) -> None: ...

    def transaction(self) -> AbstractContextManager[None]: ...


def q(*parts: str) -> str:
    """A quoted dotted name, for the few statements written as text (internal names):
    DuckDB's quoted identifier, `"` doubled inside (what sqlglot writes for a quoted
    identifier; rendering each through sqlglot cost ~0.1 ms, 7 names a model)."""
    return ".".join('"' + p.replace('"', '""') + '"' for p in parts)


def internal(name: str) -> str:
    return q(INTERNAL, name)
