"""The language, round 2 (issue 40): `with` relations read more than once, functions
defined once (`fn`), `rel.*` and `rel.* except`, and the fixes found while porting
(a frame on its own line, a grouped key against a later join, `select *` with a
column of the same name, tie-breakers only where ties are possible).

Each test compiles real modules and runs the SQL on a real DuckDB; no mocks."""

from __future__ import annotations

import re
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import duckdb

from strata.compiler import compile_statements
from strata.semantics import types as T
from strata.semantics.resolve import load_module, load_text

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


def flat(sql: str) -> str:
    """The SQL on one line, without the pretty-printer's breaks inside brackets."""
    return re.sub(r"\s+", " ", sql).replace("( ", "(").replace(" )", ")")


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
        ("E015", ("`l.location_id` is named like the column `location_id` (of `orders`) "
                  "that `*` selects"))]
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
        ("E015", ("`l.*` selects `l.id`, named like the column `id` (of `orders`) that "
                  "`orders.*` selects")),
        ("E015", ("`l.*` selects `l.location_id`, named like the column `location_id` (of "
                  "`orders`) that `orders.*` selects"))]
    assert run_model(JOINED % "select orders.*, l.* except id, location_id\n"
                     "  filter id = 7", "m") == [(7, 30, 3, None, "paid", 5, "east")]


# ---------------------------------------------------------------- fn
def test_a_function_is_inlined_where_it_is_called_and_casts_to_its_return_type():
    models = """
fn cents_to_dollars(cents: int) -> decimal(16, 2) = cents / 100
model m {
  from orders
  derive d = cents_to_dollars(id * 125 + 1)
  select id, d
}
"""
    sql = sql_of(models, "m")
    # the body over the argument, in parentheses, cast to the declared type
    assert "CAST((base.id * 125 + 1) / 100 AS DECIMAL(16, 2)) AS d" in flat(sql)
    rows = run_model(models, "m")
    assert rows[:3] == [(1, Decimal("1.26")), (2, Decimal("2.51")), (3, Decimal("3.76"))]
    assert module(models).plan("m").output[1].type == T.decimal(16, 2)


def test_a_function_declared_in_another_file_is_usable_in_every_model_of_the_module(tmp_path):
    (tmp_path / "sources.strata").write_text(SHOP)
    (tmp_path / "functions.strata").write_text(
        "-- money\nfn net(x: decimal(16, 2), rate: double) -> decimal(16, 2) =\n"
        "  x * (1 - rate)\n")
    (tmp_path / "models.strata").write_text(
        "model a {\n  from orders\n  derive n = net(amount, 0.25)\n  select id, n\n}\n"
        "model b {\n  from a\n  group id\n  aggregate total = net(sum(n), 0.5)\n}\n")
    loaded = load_module(tmp_path)
    assert not loaded.diagnostics
    assert loaded.functions["net"].signature == \
        "fn net(x: decimal(16, 2), rate: double) -> decimal(16, 2)"
    con = duckdb.connect()
    con.execute(SHOP_DATA)
    for statement in compile_statements(loaded, "duckdb"):
        con.execute(f"CREATE VIEW v_{statement.model} AS {statement.sql}")
    assert con.execute("SELECT n FROM v_a WHERE id = 2").fetchall() == [(Decimal("5.25"),)]
    assert con.execute("SELECT total FROM v_b WHERE id = 2").fetchall() == [
        (Decimal("2.63"),)]


def test_an_argument_is_widened_to_its_parameter_type_but_never_narrowed():
    models = """
fn half(x: double) -> double = x / 2
fn whole(x: int) -> int = x
model m {
  from orders
  derive h = half(location_id), w = whole(amount)
}
"""
    assert diagnostics(models) == [
        ("E031", "`whole`: argument 1 is decimal(12, 2), but parameter `x` is int")]
    found = module(models).diagnostics[0]
    assert found.hint == "cast it: `cast(... as int)` (`fn whole(x: int) -> int`)"
    ok = models.replace("whole(amount)", "whole(cast(amount as int))")
    assert "CAST(base.location_id AS DOUBLE) / 2" in flat(sql_of(ok, "m"))


def test_calling_a_function_with_the_wrong_number_of_arguments_is_e031_with_its_signature():
    models = "fn two(a: int, b: int) -> int = a + b\n" \
             "model m {\n  from orders\n  derive x = two(id)\n}\n"
    found = module(models).diagnostics
    assert [(d.code, d.message) for d in found] == [
        ("E031", "`two` takes 2 argument(s), found 1")]
    assert found[0].hint == "`fn two(a: int, b: int) -> int`, at shop.strata:11:4"


def test_an_unknown_function_suggests_the_modules_own_functions():
    models = "fn net_amount(a: int) -> int = a\n" \
             "model m {\n  from orders\n  derive x = net_amont(id)\n}\n"
    found = module(models).diagnostics
    assert [(d.code, d.hint) for d in found] == [("E016", "did you mean `net_amount`?")]


def test_a_function_body_reads_its_parameters_only_and_aggregates_nothing():
    assert diagnostics("fn f(x: int) -> int = x + amount\n") == [
        ("E011", "unknown column `amount` in function `f`")]
    assert diagnostics("fn f(x: int) -> int = sum(x)\n") == [
        ("E033", "aggregate `sum` outside `aggregate`")]
    assert diagnostics("fn f(x: int) -> int = row_number()\n") == [
        ("E097", "window function `row_number()` outside a window")]


def test_a_function_may_call_one_declared_after_it_but_never_itself():
    models = """
fn outer(x: int) -> int = inner(x) * 10
fn inner(x: int) -> int = x + 1
model m {
  from orders
  derive y = outer(id)
  select id, y
}
"""
    assert run_model(models, "m")[0] == (1, 20)
    assert diagnostics("fn f(x: int) -> int = case when x > 0 then f(x - 1) else 0 end\n") \
        == [("E175", "function `f` calls itself")]
    assert diagnostics("fn f(x: int) -> int = g(x)\nfn g(x: int) -> int = h(x)\n"
                       "fn h(x: int) -> int = f(x)\n") == [
        ("E175", "functions call each other: f -> g -> h -> f")]


def test_a_function_whose_body_does_not_convert_to_its_return_type_is_e176():
    assert diagnostics("fn f(x: date) -> int = x\n") == [
        ("E176", "the body of `f` is date, but it returns int")]
    # a number converts to any number, a date to a timestamp: the body is cast
    loaded = module("fn f(x: date) -> timestamp = x\nfn g(x: double) -> int = x\n")
    assert not loaded.diagnostics
    assert set(loaded.functions) == {"f", "g"}


def test_a_function_may_not_take_a_built_in_name():
    for name in ("sum", "round", "row_number", "now", "cast", "run_date"):
        assert diagnostics(f"fn {name}(x: int) -> int = x\n") == [
            ("E174", f"function `{name}` has the name of a built-in function")], name


def test_a_call_of_a_broken_function_says_nothing_more():
    models = "fn f(x: int) -> int = x + nope\nmodel m {\n  from orders\n  derive y = f(id)\n}\n"
    assert diagnostics(models) == [("E011", "unknown column `nope` in function `f`")]


def test_a_function_reading_the_runs_clock_makes_its_callers_read_it():
    models = """
fn age_days(d: date) -> int = date_diff('day', d, run_date())
model m {
  from orders
  derive a = age_days(date '2024-01-01')
}
"""
    assert module(models).plan("m").clock == frozenset({"run_date"})
    assert diagnostics(models.replace("derive a = age_days(date '2024-01-01')",
                                      "pin holds age_days(date '2024-01-01') > 0"))[0][0] \
        == "E032"


def test_a_function_works_in_a_pin():
    models = "fn positive(x: decimal(12, 2)) -> bool = x > 0\n" \
             "model m {\n  from orders\n  filter amount is not null\n" \
             "  pin holds positive(amount)\n}\n"
    assert not module(models).diagnostics


# ---------------------------------------------------------------- with
WITH_MODEL = """
model location_report {
  with paid = (from orders | filter status = 'paid')
  with big = (from paid | filter amount >= 5)
  from locations
  join_left (from paid | group location_id | aggregate n = count()) as counts
    on counts.location_id = location_id
  join_left (from big | group location_id | aggregate total = sum(amount)) as totals
    on totals.location_id = location_id
  select name, counts.n, totals.total
}
"""


def test_a_with_relation_read_twice_is_one_cte_of_its_name():
    sql = sql_of(WITH_MODEL, "location_report")
    assert sql.count("paid AS (") == 1 and sql.count("FROM orders") == 1
    assert sql.count("FROM paid") == 2  # the sub-pipeline, and `big`
    assert run_model(WITH_MODEL, "location_report") == [
        ("east", 1, None), ("north", 3, Decimal("12.00")), ("south", 1, None)]


def test_a_with_relation_is_one_cte_in_every_dialect():
    for dialect in ("duckdb", "postgres", "snowflake", "bigquery", "spark", "trino"):
        sql = flat(sql_of(WITH_MODEL, "location_report", dialect)).replace("`", "")
        assert sql.count(" paid AS (") == 1 and sql.count("FROM orders") == 1, dialect


def test_a_with_relation_is_read_by_from_join_and_union():
    models = """
model m {
  with cheap = (from orders | filter amount < 3 | select id, amount)
  from cheap
  join cheap as again on again.id = id
  select id, again.amount
  union cheap
}
"""
    sql = sql_of(models, "m")
    assert sql.count("cheap AS (") == 1
    assert run_model(models, "m") == [(4, Decimal("1.00")), (4, Decimal("1.00")),
                                      (5, Decimal("2.50")), (5, Decimal("2.50"))]


def test_a_with_may_read_one_written_below_it():
    models = """
model m {
  with b = (from a | filter id > 5)
  with a = (from orders | select id)
  from b
}
"""
    assert run_model(models, "m") == [(6,), (7,)]


def test_a_with_relation_is_the_models_own_and_other_models_cannot_read_it():
    models = WITH_MODEL + "model other {\n  from paid\n}\n"
    assert diagnostics(models) == [("E010", "unknown source or model `paid`")]


def test_with_errors_are_coded():
    assert diagnostics("model m {\n  with orders = (from customers)\n  from orders\n}\n") == [
        ("E170", "`with orders` has the name of a source of the module")]
    assert diagnostics("model m {\n  with a = (from orders)\n  from customers\n}\n") == [
        ("E171", "`with a` is never read in model `m`")]
    assert diagnostics("model m {\n  with a = (from b)\n  with b = (from c)\n"
                       "  with c = (from a | filter id > 0)\n  from a\n}\n") == [
        ("E172", "`with` relations read each other: a -> b -> c -> a")]
    assert diagnostics("model m {\n  from orders\n  with a = (from orders)\n"
                       "  join a as x on x.id = id\n}\n") == [
        ("E173", "`with a` after the first step of model `m`")]


def test_an_unread_with_that_has_errors_says_its_errors_only():
    assert diagnostics("model m {\n  with a = (from orders | filter nope > 0)\n"
                       "  from orders\n}\n") == [
        ("E011", "unknown column `nope` in model `m`")]


# ---------------------------------------------------------------- end to end, from the CLI
def test_fn_with_and_rel_star_check_compile_and_run_from_the_cli(tmp_path):
    strata = str(Path(sys.executable).with_name("strata"))
    data = tmp_path / "orders.csv"
    data.write_text("id,customer_id,amount\n1,10,250\n2,10,100\n3,20,75\n")
    (tmp_path / "m.strata").write_text(f"""\
source orders = file '{data}' {{ id: int, customer_id: int, amount: int }}
fn dollars(cents: int) -> decimal(16, 2) = cents / 100
model spend {{
  with priced = (from orders | filter amount > 80)
  from priced
  join (from priced | group customer_id | aggregate total = dollars(sum(amount))) as t
    on t.customer_id = customer_id
  select t.total, priced.* except amount
}}
""")
    module = str(tmp_path / "m.strata")
    warehouse = str(tmp_path / "w.duckdb")
    for args in (["check", module], ["compile", "--show-sql", module],
                 ["run", module, "-o", warehouse]):
        done = subprocess.run([strata, *args], capture_output=True, text=True, check=False)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
    con = duckdb.connect(warehouse, read_only=True)
    assert sorted(con.execute("SELECT * FROM v_spend").fetchall()) == [
        (Decimal("3.50"), 1, 10), (Decimal("3.50"), 2, 10)]
