"""Engine adapters: one per engine, each behind `base.Adapter` (see base.py).

`open_adapter` picks the adapter by the kind of location `-o` names
(`strata.engine.locations`); nothing else in strata asks which engine it is on.
"""

from __future__ import annotations

from strata.engine.adapters.base import Adapter, Relation
from strata.engine.adapters.duckdb import DuckDBAdapter
from strata.engine.adapters.postgres import PostgresAdapter
from strata.engine.adapters.spark import SparkAdapter
from strata.engine.locations import DuckDBFile, Location, PostgresURL, SparkConnect, SparkDir

ADAPTERS: dict[type, type[Adapter]] = {
    DuckDBFile: DuckDBAdapter,
    PostgresURL: PostgresAdapter,
    SparkDir: SparkAdapter,
    SparkConnect: SparkAdapter,
}


def open_adapter(location: Location, write: bool = True, lock_timeout: float = 10.0
                 ) -> Adapter:
    """Connect to the warehouse at `location`; for writing, also become its one writer
    (E075 after `lock_timeout` seconds of another holding it). E070 when it cannot be
    reached, naming the location with its password hidden."""
    return ADAPTERS[type(location)].open(location, write=write, lock_timeout=lock_timeout)


__all__ = ["ADAPTERS", "Adapter", "DuckDBAdapter", "PostgresAdapter", "Relation",
           "SparkAdapter", "open_adapter"]
