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


def run(models: str, model: str = "m", clock=None) -> list[tuple]:
    module = load_text(ORDERS + models)
    assert not module.diagnostics, [(d.code, d.message) for d in module.diagnostics]
    sql = strata.model_sql(module, model, "duckdb")
    con = duckdb.connect()
    con.execute("CREATE TABLE orders (id BIGINT, customer_id BIGINT, amount DECIMAL(10, 2), "
                "status VARCHAR, ordered_at DATE)")
    con.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?)", ORDER_ROWS)
    return sorted(con.execute(sql).fetchall(), key=repr)


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
