"""Engine adapters: one per engine, each behind `base.Adapter` (see base.py).

`open_adapter` picks the adapter by the kind of location `-o` names
(`strata.engine.locations`); nothing else in strata asks which engine it is on.
"""

from __future__ import annotations

from strata.diagnostics import fail
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
    reached, naming the location with its password hidden, or when the engine's
    Python client is not installed (the adapter's `extra` installs it)."""
    adapter = ADAPTERS[type(location)]
    try:
        return adapter.open(location, write=write, lock_timeout=lock_timeout)
    except ModuleNotFoundError as err:
        raise fail("E070", f"cannot open the warehouse `{location.redacted()}`: its engine's "
                   f"Python client (`{(err.name or '?').split('.')[0]}`) is not installed", None,
                   f"install it with Strata's `{adapter.extra}` extra: pip install "
                   f"'strata-models[{adapter.extra}]' (from a checkout: pip install -e "
                   f"'.[{adapter.extra}]')") from None


__all__ = ["ADAPTERS", "Adapter", "DuckDBAdapter", "PostgresAdapter", "Relation",
           "SparkAdapter", "open_adapter"]
