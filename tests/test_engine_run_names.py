"""What a run names and reads on each engine (issue 18, engines.md §1.5 and §2), as data
on the adapters and dialects, checked without an engine: Spark's table-name encoding
and its inverse, PostgreSQL's 63-byte names, and each engine's type names as the
source contracts and `pin columns` read them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dialects import duckdb as duck
from dialects import postgres, spark
from strata.engine.adapters.postgres import MAX_NAME_BYTES, PostgresAdapter
from strata.engine.adapters.spark import SparkAdapter, encode_name
from strata.engine.pins.contracts import contract_problems_engine
from strata.semantics.types import Type


def _spark() -> SparkAdapter:
    return SparkAdapter(session=None, where="spark (no session)")


@given(st.text(min_size=1, max_size=40))
def test_spark_names_keep_only_what_the_hive_catalogue_keeps_and_decode_back(name):
    physical = encode_name(name)
    assert all(c.isascii() and (c.islower() or c.isdigit() or c == "_") for c in physical)
    assert _spark().logical_name(physical) == name


def test_spark_names_of_two_models_differing_in_case_or_underscores_differ():
    names = ["v_orders", "v_Orders", "v_orders_", "v__orders", "v_or_ders"]
    assert len({encode_name(n) for n in names}) == len(names)


def _postgres() -> PostgresAdapter:
    adapter = PostgresAdapter.__new__(PostgresAdapter)
    return adapter


def test_postgresql_keeps_short_names_and_gives_long_ones_a_hash_tail():
    pg = _postgres()
    assert pg.physical_name("snap_0123456789ab_orders") == "snap_0123456789ab_orders"
    long_a = "snap_0123456789ab_" + "a" * 60
    long_b = "snap_0123456789ab_" + "a" * 59 + "b"
    assert len(pg.physical_name(long_a).encode()) <= MAX_NAME_BYTES
    assert pg.physical_name(long_a) != pg.physical_name(long_b)  # the server would cut both alike


@pytest.mark.parametrize(("dialect", "engine_type", "kind"), [
    (duck.DIALECT, "BIGINT", "int"), (duck.DIALECT, "DECIMAL(12,2)", "decimal"),
    (duck.DIALECT, "VARCHAR[]", "list<text>"),
    (postgres.DIALECT, "bigint", "int"), (postgres.DIALECT, "numeric(12,2)", "decimal"),
    (postgres.DIALECT, "character varying(20)", "text"),
    (postgres.DIALECT, "double precision", "double"),
    (postgres.DIALECT, "timestamp without time zone", "timestamp"),
    (postgres.DIALECT, "bigint[]", "list<int>"),
    (postgres.DIALECT, "timestamp with time zone", "other:TIMESTAMP WITH TIME ZONE"),
    (spark.DIALECT, "bigint", "int"), (spark.DIALECT, "decimal(12,2)", "decimal"),
    (spark.DIALECT, "string", "text"), (spark.DIALECT, "timestamp_ntz", "timestamp"),
    (spark.DIALECT, "array<bigint>", "list<int>"),
])
def test_each_engine_reads_its_own_type_names(dialect, engine_type, kind):
    assert dialect.type_kind(engine_type) == kind


def test_pin_columns_reads_the_engines_type_names_and_keeps_the_promised_scale():
    contract = [("id", Type("int")), ("amount", Type("decimal", precision=12, scale=2))]
    fits = [("id", "bigint"), ("amount", "numeric(12,2)")]
    assert contract_problems_engine(contract, fits, postgres.DIALECT) == []
    wider = [("id", "bigint"), ("amount", "decimal(18,4)")]
    assert contract_problems_engine(contract, wider, spark.DIALECT) == [
        "has `amount` as decimal(18,4), the contract says decimal(12, 2)"]
