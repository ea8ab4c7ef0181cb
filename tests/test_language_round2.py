"""Issue 40, round 2: rows from nothing (`range`), grouping sets (`rollup`, `cube`,
`grouping`), `arg_min` / `arg_max`, and recursive relations refused.

Each construct runs on a real DuckDB over rows given here; the rows every other engine
returns are checked by tests/differential/round2 (tests/test_differential.py).
"""

from __future__ import annotations

import duckdb

import strata
from strata.semantics.resolve import load_text

ORDERS = """source orders {
  id: int
  customer_id: int
  amount: decimal(10, 2)
  status: text
  ordered_at: date
}
"""
ORDER_ROWS = [
    (1, 10, "1.00", "paid", "2024-01-30"),
    (2, 10, "4.00", "void", "2024-02-01"),
    (3, 10, "1.00", "paid", "2024-02-01"),
    (4, 20, None, None, "2024-02-03"),
    (5, 20, "9.00", "paid", None),
    (None, 20, "0.50", "paid", "2024-02-03"),
]


def _order(row: tuple) -> list:
    return [(v is None, v) for v in row]


def run(models: str, model: str = "m", clock=None) -> list[tuple]:
    module = load_text(ORDERS + models)
    assert not module.diagnostics, [(d.code, d.message) for d in module.diagnostics]
    sql = strata.model_sql(module, model, "duckdb")
    con = duckdb.connect()
    con.execute("CREATE TABLE orders (id BIGINT, customer_id BIGINT, amount DECIMAL(10, 2), "
                "status VARCHAR, ordered_at DATE)")
    con.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?)", ORDER_ROWS)
    return sorted(con.execute(sql).fetchall(), key=_order)


def codes(models: str) -> list[str]:
    module = load_text(ORDERS + models)
    return [d.code for d in module.diagnostics]


# ---------------------------------------------------------------- arg_min / arg_max
def test_arg_min_and_arg_max_skip_rows_with_a_null_and_break_ties_by_the_value():
    rows = run("""model m {
  from orders
  group customer_id
  aggregate cheapest = arg_min(id, amount), dearest = arg_max(id, amount),
            first_paid = arg_min(id, status), last_paid = arg_max(id, status = 'paid')
}
""")
    # customer 10: amounts 1.00 (ids 1 and 3, tied), 4.00 (id 2)
    # customer 20: id 4 has no amount, the NULL id's row is skipped, id 5 is the only one
    assert rows == [(10, 1, 2, 1, 3), (20, 5, 5, 5, 5)]


def test_arg_min_of_a_group_without_a_row_where_both_are_set_is_null():
    rows = run("""model m {
  from orders
  filter amount is null
  aggregate v = arg_min(id, amount), n = count()
}
""")
    assert rows == [(None, 1)]


def test_arg_min_over_a_window_is_e189():
    assert codes("""model m {
  from orders
  window by customer_id order id
  derive v = arg_min(id, amount)
}
""") == ["E189"]


# ---------------------------------------------------------------- range
def clocked(models: str, model: str, at: str) -> list[tuple]:
    """The model's rows on DuckDB with run_date() bound to `at`."""
    from strata.compiler import compile_statements
    from strata.sqlgen.clock import RunClock

    module = load_text(ORDERS + models)
    assert not module.diagnostics, [(d.code, d.message) for d in module.diagnostics]
    statement = compile_statements(module, "duckdb", [model], clock=RunClock.parse(at))[0]
    con = duckdb.connect()
    con.execute("CREATE TABLE orders (id BIGINT, customer_id BIGINT, amount DECIMAL(10, 2), "
                "status VARCHAR, ordered_at DATE)")
    con.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?)", ORDER_ROWS)
    return sorted(con.execute(statement.sql).fetchall(), key=_order)


def test_a_range_of_ints_is_half_open_and_steps_either_way():
    assert run("model m { from range(1, 10, 3) as n }") == [(1,), (4,), (7,)]
    assert run("model m { from range(5, -1, -2) as n }") == [(1,), (3,), (5,)]
    assert run("model m { from range(0, 3) }") == [(0,), (1,), (2,)]


def test_a_range_column_is_named_by_the_relation():
    module = load_text(ORDERS + "model a { from range(0, 3) as n }\n"
                                "model b { from range(0, 3) }\n")
    assert [c.name for c in module.plan("a").output] == ["n"]
    assert [c.name for c in module.plan("b").output] == ["range"]


def test_a_month_step_counts_each_row_from_the_start_and_clamps_month_ends():
    rows = run("""model m {
  from range(date '2024-01-31', date '2024-05-01', interval '1 month') as d
}
""")
    assert [str(r[0]) for r in rows] == ["2024-01-31", "2024-02-29", "2024-03-31",
                                         "2024-04-30"]


def test_a_date_range_steps_a_day_by_default_and_can_go_down_by_weeks():
    assert [str(r[0]) for r in run(
        "model m { from range(date '2024-02-27', date '2024-03-01') as d }")] == \
        ["2024-02-27", "2024-02-28", "2024-02-29"]
    assert [str(r[0]) for r in run(
        "model m { from range(date '2024-03-01', date '2024-02-01', interval '-1 week') as d }"
    )] == ["2024-02-02", "2024-02-09", "2024-02-16", "2024-02-23", "2024-03-01"]


def test_a_timestamp_range_steps_by_its_interval_and_stops_before_the_end():
    rows = run("""model m {
  from range(timestamp '2024-03-01 22:00:00', timestamp '2024-03-02 01:00:00',
             interval '90 minutes') as t
}
""")
    assert [str(r[0]) for r in rows] == ["2024-03-01 22:00:00", "2024-03-01 23:30:00"]


def test_a_daily_spine_to_the_run_date_keeps_days_without_orders():
    models = """model m {
  from range(run_date() - 5, run_date() + 1) as day
  join_left many orders on ordered_at = day
  group day
  aggregate n = count(id)
}
"""
    rows = clocked(models, "m", "2024-02-03")
    assert [(str(d), n) for d, n in rows] == [
        ("2024-01-29", 0), ("2024-01-30", 1), ("2024-01-31", 0), ("2024-02-01", 2),
        ("2024-02-02", 0), ("2024-02-03", 1)]
    assert len(clocked(models, "m", "2024-03-01")) == 6  # the spine moves with the clock


def test_a_range_is_joined_and_unioned_like_any_relation():
    assert run("""model m {
  from range(1, 4) as n
  join_cross range(10, 30, 10) as t
  derive v = n + t
  select v
  union (from range(100, 101) as v)
}
""") == [(11,), (12,), (13,), (21,), (22,), (23,), (100,)]


def test_range_bounds_that_read_a_column_are_e180_and_the_clock_is_allowed():
    assert codes("model m {\n  from orders\n  join many range(1, id) as n on n = id\n}\n") == \
        ["E180"]
    assert codes("model m { from range(run_date() - 30, run_date()) as d }") == []


def test_a_range_that_says_at_check_time_it_would_be_wrong_is_refused():
    assert codes("model m { from range(1, 10, 0) }") == ["E181"]
    assert codes("model m { from range(10, 1) }") == ["E182"]
    assert codes("model m { from range(3, 3) }") == ["E182"]
    assert codes("model m { from range(0, 10000001) }") == ["E183"]
    assert codes("model m { from range(0, 10000000) }") == []
    assert codes("model m { from range(date '2024-01-31', date '2023-01-01', "
                 "interval '1 month') }") == ["E182"]
    assert codes("model m { from range(timestamp '2000-01-01 00:00:00', "
                 "timestamp '2024-01-01 00:00:00', interval '1 second') }") == ["E183"]


def test_generate_series_points_to_range_as_a_function_and_as_a_relation():
    module = load_text(ORDERS + "model m {\n  from orders\n  derive x = generate_series(1, 3)\n}\n")
    (diag,) = module.diagnostics
    assert diag.code == "E016" and "range(" in diag.hint
    module = load_text(ORDERS + "model m { from generate_series(1, 3) }\n")
    (diag,) = module.diagnostics
    assert diag.code == "E185" and "range(" in diag.hint


def test_every_dialect_renders_a_range(tmp_path):
    module = load_text(ORDERS + """model m {
  from range(date '2024-01-01', date '2024-02-01') as d
  join_cross range(0, 3) as n
}
""")
    for dialect in ("duckdb", "postgres", "snowflake", "bigquery", "spark", "trino"):
        sql = strata.model_sql(module, "m", dialect)
        assert "__offset" in sql, dialect


# ---------------------------------------------------------------- rollup, cube, grouping
def test_rollup_adds_a_subtotal_per_prefix_of_the_keys_and_grouping_tells_them_apart():
    rows = run("""model m {
  from orders
  filter id is not null
  group rollup(customer_id, status)
  aggregate n = count(), total = sum(amount), sub = grouping(status),
            grand = grouping(customer_id)
}
""")
    D = __import__("decimal").Decimal
    assert rows == [
        (10, "paid", 2, D("2.00"), 0, 0), (10, "void", 1, D("4.00"), 0, 0),
        (10, None, 3, D("6.00"), 1, 0),
        (20, "paid", 1, D("9.00"), 0, 0), (20, None, 1, None, 0, 0),  # a NULL status
        (20, None, 2, D("9.00"), 1, 0),
        (None, None, 5, D("15.00"), 1, 1)]


def test_cube_adds_a_subtotal_per_subset_of_the_keys():
    rows = run("""model m {
  from orders
  filter id is not null and status is not null
  group cube(customer_id, status)
  aggregate n = count()
}
""")
    assert rows == [(10, "paid", 2), (10, "void", 1), (10, None, 3), (20, "paid", 1),
                    (20, None, 1), (None, "paid", 3), (None, "void", 1), (None, None, 4)]


def test_grouping_outside_a_rollup_or_of_a_column_that_is_no_key_is_e186():
    assert codes("model m {\n  from orders\n  group status\n"
                 "  aggregate g = grouping(status)\n}\n") == ["E186"]
    assert codes("model m {\n  from orders\n  group rollup(status)\n"
                 "  aggregate g = grouping(id)\n}\n") == ["E186"]
    assert codes("model m {\n  from orders\n  group rollup(status)\n"
                 "  aggregate n = count()\n  filter grouping(status) = 0\n}\n") == ["E186"]


def test_a_grouping_other_than_rollup_or_cube_is_e187():
    assert codes("model m {\n  from orders\n  group grouping_sets(status)\n"
                 "  aggregate n = count()\n}\n") == ["E187"]


# ---------------------------------------------------------------- recursive relations
def test_a_model_that_unions_its_own_rows_is_a_recursive_relation_e188():
    assert codes("""model m {
  from orders
  select id, customer_id
  union (from m | select customer_id as id, id as customer_id)
}
""") == ["E188"]
    assert codes("model m {\n  from orders\n  select id\n  union m\n}\n") == ["E188"]
    # reading itself elsewhere stays E055: an incremental model merges by itself
    assert codes("model m {\n  from m\n}\n") == ["E055"]


def test_sql_with_recursive_is_e188():
    assert codes("model m {\n  with recursive t as (select 1)\n}\n") == ["E188"]


# ---------------------------------------------------------------- the CLI, end to end
CLI_MODULE = ORDERS + """
model spine {
  from range(run_date() - 2, run_date() + 1) as day
  join_left many orders on ordered_at = day
  group rollup(day)
  aggregate n = count(id), first_id = arg_min(id, id), is_total = grouping(day)
}
"""


def test_check_compile_and_run_take_the_new_constructs_from_the_cli(tmp_path):
    import json

    from enginehelpers import strata as cli

    (tmp_path / "m.strata").write_text(CLI_MODULE)
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    con.execute("CREATE TABLE orders (id BIGINT, customer_id BIGINT, amount DECIMAL(10, 2), "
                "status VARCHAR, ordered_at DATE)")
    con.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?)", ORDER_ROWS)
    con.close()
    env = {"STRATA_NOW": "2024-02-03 08:00:00"}
    assert "ok:" in cli("check", "m.strata", cwd=tmp_path, check=True, env=env).stdout
    for dialect in ("duckdb", "postgres", "spark", "snowflake", "bigquery", "trino"):
        shown = cli("compile", "m.strata", "--show-sql", "--dialect", dialect,
                    cwd=tmp_path, check=True, env=env).stdout
        assert "ROLLUP" in shown and "run_date() = 2024-02-03" in shown, dialect
    cli("run", "m.strata", "-o", "w.duckdb", "--at", "2024-02-03", cwd=tmp_path, check=True,
        env=env)
    con = duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True)
    got = con.execute("SELECT CAST(day AS VARCHAR), n, first_id, is_total FROM v_spine "
                      "ORDER BY is_total, day").fetchall()
    con.close()
    assert got == [("2024-02-01", 2, 2, 0), ("2024-02-02", 0, None, 0),
                   ("2024-02-03", 1, 4, 0), (None, 3, 2, 1)]
    # the same date again: nothing is stale; the next day: the spine is
    again = json.loads(cli("run", "m.strata", "-o", "w.duckdb", "--only-stale", "--json",
                           "--at", "2024-02-03", cwd=tmp_path, check=True, env=env).stdout)
    assert again["status"] == "up_to_date"
    later = json.loads(cli("run", "m.strata", "-o", "w.duckdb", "--only-stale", "--json",
                           "--at", "2024-02-04", cwd=tmp_path, check=True, env=env).stdout)
    assert later["rebuilt"] == ["spine"]
    (tmp_path / "bad.strata").write_text("model m { from range(10, 1) }\n")
    failed = cli("check", "bad.strata", cwd=tmp_path, check=False, env=env)
    assert "error[E182]" in failed.stderr and "Traceback" not in failed.stderr
