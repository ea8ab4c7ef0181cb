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


# ---------------------------------------------------------------- rel.*
JOINED = """
model m {
  from orders
  join locations as l on l.id = location_id
  %s
}
"""


def test_rel_star_selects_every_column_of_one_relation_hidden_ones_too():
    rows = run_model(JOINED % "select l.*, amount\n  filter name = 'south'", "m")
    # l.location_id is hidden behind orders.location_id in scope; l.* still has it
    assert rows == [(2, 2, "south", 1), (2, 2, "south", 7)]
    assert [c.name for c in module(JOINED % "select l.*, amount").plan("m").output] == \
        ["id", "location_id", "name", "amount"]


def test_rel_star_except_leaves_the_named_columns_out_and_may_end_a_select_after_items():
    models = JOINED % "select l.name as place,\n    orders.* except location_id, amount, status"
    assert [c.name for c in module(models).plan("m").output] == \
        ["place", "id", "customer_id", "ordered_at"]
    assert run_model(models.replace("status\n", "status\n  filter id = 1\n"), "m") == [
        ("north", 1, 10, 1)]


def test_rel_star_on_a_line_of_its_own_ends_the_select():
    models = JOINED % "select orders.*\n  filter amount > 6"
    assert [r[0] for r in run_model(models, "m")] == [2, 3]


def test_rel_star_of_an_unknown_relation_is_e017_naming_the_relations_in_scope():
    assert diagnostics(JOINED % "select x.*") == [
        ("E017", "unknown relation `x` in `select x.*`")]
    found = module(JOINED % "select x.*").diagnostics[0]
    assert found.hint == "relations here: orders, l"
    assert (found.span.line, found.span.column) == (15, 10)


def test_rel_star_except_an_unknown_column_is_e011_at_that_name():
    found = module(JOINED % "select l.* except nope").diagnostics
    assert [(d.code, d.message) for d in found] == [
        ("E011", "unknown column `nope` in `select l.* except` of model `m`")]
    assert (found[0].span.line, found[0].span.column) == (15, 21)


def test_star_then_a_joined_column_of_the_same_name_says_which_items_clash():
    found = module(JOINED % "select *, l.location_id").diagnostics
    assert [(d.code, d.message) for d in found] == [
        ("E015", "`l.location_id` is named like the column `location_id` (of `orders`) that "
                 "`*` selects")]
    assert found[0].hint == ("name it: `l.location_id as l_location_id`, or select it first "
                             "and leave the other out: `select l.location_id, * except "
                             "location_id`")
    # and what the hint says compiles, to the joined relation's value
    assert run_model(JOINED % "select l.location_id, * except location_id\n"
                     "  filter id = 1", "m")[0][:2] == (1, 1)


def test_star_then_the_same_column_again_says_star_selects_it_already():
    assert diagnostics(JOINED % "select *, id") == [
        ("E015", "column `id` is already selected by `*`")]


def test_two_relation_stars_sharing_a_name_point_at_the_second_star():
    found = module(JOINED % "select orders.*, l.* except name").diagnostics
    assert [(d.code, d.message) for d in found] == [
        ("E015", "`l.*` selects `l.id`, named like the column `id` (of `orders`) that "
                 "`orders.*` selects"),
        ("E015", "`l.*` selects `l.location_id`, named like the column `location_id` (of "
                 "`orders`) that `orders.*` selects")]
    assert run_model(JOINED % "select orders.*, l.* except id, location_id\n"
                     "  filter id = 7", "m") == [(7, 30, 3, None, "paid", 5, "east")]
