"""The language, round 2 (issue 40): `with` relations read more than once, functions
defined once (`fn`), `rel.*` and `rel.* except`, and the fixes found while porting
(a frame on its own line, a grouped key against a later join, `select *` with a
column of the same name, tie-breakers only where ties are possible).

Each test compiles real modules and runs the SQL on a real DuckDB; no mocks."""

from __future__ import annotations

import duckdb

from strata.compiler import compile_statements
from strata.semantics.resolve import load_text

SHOP = """\
source orders {
  id: int
  customer_id: int
  location_id: int
  amount: decimal(12, 2)
  status: text
  ordered_at: int
}
source locations { id: int, location_id: int, name: text }
source customers { id: int, name: text }
"""
SHOP_DATA = """
CREATE TABLE orders AS SELECT * FROM (VALUES
  (1, 10, 1, 5.00, 'paid', 1), (2, 10, 1, 7.00, 'paid', 2), (3, 10, 2, 7.00, 'void', 3),
  (4, 20, 2, 1.00, 'paid', 1), (5, NULL, 1, 2.50, 'paid', 1), (6, NULL, 3, 3.00, NULL, 2),
  (7, 30, 3, NULL, 'paid', 5))
  AS t(id, customer_id, location_id, amount, status, ordered_at);
CREATE TABLE locations AS SELECT * FROM (VALUES (1, 1, 'north'), (2, 2, 'south'),
  (3, 3, 'east')) AS t(id, location_id, name);
CREATE TABLE customers AS SELECT * FROM (VALUES (10, 'Ann'), (20, 'Bob'), (40, 'Dan'))
  AS t(id, name);
"""


def module(models: str):
    return load_text(SHOP + models, "shop.strata")


def diagnostics(models: str) -> list[tuple[str, str]]:
    return [(d.code, d.message) for d in module(models).diagnostics]


def sql_of(models: str, model: str, dialect: str = "duckdb") -> str:
    loaded = module(models)
    assert not loaded.diagnostics, loaded.diagnostics
    return next(s.sql for s in compile_statements(loaded, dialect) if s.model == model)


def run_model(models: str, model: str, ordered: bool = False) -> list[tuple]:
    """The model's rows, computed by DuckDB from the SQL `compile` prints; earlier
    models are created as their views first."""
    loaded = module(models)
    assert not loaded.diagnostics, loaded.diagnostics
    con = duckdb.connect()
    con.execute(SHOP_DATA)
    for statement in compile_statements(loaded, "duckdb"):
        rows = con.execute(statement.sql).fetchall()
        if statement.model == model:
            return rows if ordered else sorted(rows, key=repr)
        con.execute(f"CREATE VIEW v_{statement.model} AS {statement.sql}")
    raise AssertionError(f"no statement for {model}")


# ---------------------------------------------------------------- found while porting
def test_a_window_frame_may_stand_on_a_line_of_its_own():
    models = """
model running {
  from orders
  window by customer_id order ordered_at, id
    rows between unbounded preceding and current row
  derive spent = sum(amount)
  select id, spent
}
"""
    assert run_model(models, "running") == [
        (1, 5), (2, 12), (3, 19), (4, 1), (5, 2.5), (6, 5.5), (7, None)]


def test_a_range_frame_on_its_own_line_continues_the_window_too():
    models = """
model running {
  from orders
  window order ordered_at
    range between 1 preceding and current row
  derive n = count()
  select id, n
}
"""
    assert run_model(models, "running") == [
        (1, 3), (2, 5), (3, 3), (4, 3), (5, 3), (6, 5), (7, 1)]


def test_a_column_named_rows_or_range_still_starts_a_line_of_a_source():
    loaded = load_text("source s {\n  id: int\n  rows: int\n  range: int\n}\n"
                       "model m {\n  from s\n}\n", "s.strata")
    assert not loaded.diagnostics
    assert [c.name for c in loaded.plan("m").output] == ["id", "rows", "range"]


def test_after_group_only_the_grouped_key_is_in_scope_and_a_later_join_does_not_make_it_ambiguous():
    models = """
model per_location {
  from orders
  join locations as o on o.id = location_id
  group o.location_id
  aggregate n = count()
  join locations as l on l.location_id = location_id
  join customers as c on c.id = location_id * 10
  select location_id, n, l.name
}
"""
    assert run_model(models, "per_location") == [(1, 3, "north"), (2, 2, "south")]


def test_two_joins_after_a_group_that_both_bring_a_column_still_make_it_ambiguous():
    models = """
model per_location {
  from orders
  group location_id
  aggregate n = count()
  join locations as a on a.id = location_id
  join locations as b on b.id = location_id
  select location_id, name
}
"""
    assert diagnostics(models) == [
        ("E012", "ambiguous column `name`: it comes from `a` and `b`")]
