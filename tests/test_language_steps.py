"""The language steps of issue 16: names that start with a keyword, sort/take,
distinct, the new joins, windows, sub-pipelines and `select *` forms, and the
diagnostics for their misuse and for dbt habits.

Each test compiles real modules and runs the SQL on a real DuckDB; no mocks."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sqlglot import exp

from strata.compiler import compile_statements
from strata.semantics.resolve import load_text
from strata.syntax import ast
from strata.syntax.parser import GRAMMAR_PATH, parse_text

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _keywords() -> list[str]:
    """Every keyword of the grammar: each quoted word in grammar.lark, so a keyword
    added later is covered without a change here."""
    words = set(re.findall(r'"([A-Za-z_][A-Za-z0-9_]*)"', GRAMMAR_PATH.read_text()))
    return sorted(w for w in words if NAME.fullmatch(w))


KEYWORDS = _keywords()
TAILS = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_",
                min_size=1, max_size=6)


@st.composite
def keyword_prefixed(draw) -> str:
    # not `int` (`in` + `t`) nor `list`: the check below leaves out those names, which
    # the positions hold as types
    word = draw(st.sampled_from(KEYWORDS)) + draw(TAILS)
    assume(word not in ("int", "list"))
    return word


# Every position where the grammar takes a name, each holding `{w}`.
NAME_POSITIONS = """\
source {w} = {w}.{w} {{ {w}: int, k: list<{w}> }}
model {w} {{
  from {w} as {w}
  let {w} = {w} + {w}.{w}
  filter {w} and not {w} or {w} is null and {w} in ({w}) and {w} between {w} and {w}
  join {w} as {w} on {w} = {w}.{w}
  join_left many {w} on {w} like {w}
  expand {w} as {w}
  group {w}, {w}.{w}
  aggregate {w} = {w}({w}, {w})
  derive {w} = case when {w} then {w} else {w} end, {w} = cast({w} as {w})
  derive {w} = extract({w} from {w}), {w} = -{w} * {w} || {w}
  select {w}, {w} as {w}
  union {w}
  pin unique [{w}, {w}]
  {w}: {w}
}}
test {w} {{
  given {w} {{
    {w}, {w}
    1, 2
  }}
}}
"""


def _names_in(tree: object) -> list[str]:
    """Every name the syntax tree holds, in any field that holds names."""
    found: list[str] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (list, tuple)):
            stack.extend(node)
        elif isinstance(node, str):
            found.append(str(node))
        elif hasattr(node, "__dataclass_fields__"):
            for name in node.__dataclass_fields__:
                if name in ("span", "name_span", "value_span", "row_spans", "path", "kind", "op"):
                    continue
                value = getattr(node, name)
                if isinstance(value, ast.Literal):
                    continue
                stack.append(value)
    return found


@settings(max_examples=150, deadline=None)
@given(keyword_prefixed())
def test_a_name_that_starts_with_a_keyword_is_that_name_everywhere(word):
    """Issue 16: `a andy` compiled to `a AND y`. A name that starts with a keyword
    parses as that whole name in every position where a name may stand."""
    tree = parse_text(NAME_POSITIONS.format(w=word), "k.strata")
    names = [n for n in _names_in(tree.declarations) if n not in ("int", "list", "k")]
    # names the grammar lower-cases (types, functions, extract parts) compared so
    assert names and all(n.lower() == word.lower() for n in names), names
    source = tree.declarations[0]
    assert source.name == word and source.table == (word, word)


@settings(max_examples=150, deadline=None)
@given(keyword_prefixed())
def test_a_name_after_an_operand_is_a_syntax_error_not_a_keyword(word):
    """Where no name may stand (after an operand), a keyword-prefixed name is one
    unexpected name (E001 quoting all of it), never a keyword and the rest."""
    text = f"source t {{ a: bool }}\nmodel m {{\n  from t\n  derive x = a {word}\n}}\n"
    module = load_text(text, "k.strata")
    codes = [(d.code, d.message) for d in module.diagnostics]
    assert codes == [("E001", f"unexpected `{word}`")], codes


@pytest.mark.parametrize("step, code, shown", [
    ("derive x = a andy", "E001", "`andy`"),
    ("derive x = txt likely", "E001", "`likely`"),
    # no longer "unknown column `der_id`": SQL's spelling, with Strata's in the hint
    ("derive x = count(distinct order_id)", "E109", "count(distinct x)"),
])
def test_the_issue_examples_are_errors_that_quote_the_whole_name(step, code, shown):
    text = ("source t { a: bool, y: bool, txt: text, ly: text, order_id: int }\n"
            f"model m {{\n  from t\n  {step}\n}}\n")
    diags = load_text(text, "k.strata").diagnostics
    assert [d.code for d in diags] == [code]
    assert shown in diags[0].message


def _duck(sql: str, setup: str = "") -> list[tuple]:
    con = duckdb.connect()
    if setup:
        con.execute(setup)
    return sorted(con.execute(sql).fetchall(), key=repr)


HERE = Path(__file__).parent
# ---------------------------------------------------------------- running on DuckDB
SHOP = """\
source orders { id: int, customer_id: int, amount: double, status: text, ordered_at: int }
source customers { id: int, name: text }
"""
SHOP_DATA = """
CREATE TABLE orders AS SELECT * FROM (VALUES
  (1, 10, 5.0, 'paid', 1), (2, 10, 7.0, 'paid', 2), (3, 10, 7.0, 'void', 3),
  (4, 20, 1.0, 'paid', 1), (5, NULL, 2.0, 'paid', 1), (6, NULL, 3.0, NULL, 2),
  (7, 30, NULL, 'paid', 5)) AS t(id, customer_id, amount, status, ordered_at);
CREATE TABLE customers AS SELECT * FROM (VALUES (10, 'Ann'), (20, 'Bob'), (40, 'Dan'))
  AS t(id, name);
"""


def run_model(models: str, model: str, data: str = SHOP_DATA, ordered: bool = False):
    """The model's rows, computed by DuckDB from the SQL `compile` prints; earlier models
    of `models` are created as their views first."""
    module = load_text(SHOP + models, "shop.strata")
    assert not module.diagnostics, module.diagnostics
    con = duckdb.connect()
    con.execute(data)
    for statement in compile_statements(module, "duckdb"):
        rows = con.execute(statement.sql).fetchall()
        if statement.model == model:
            return rows if ordered else sorted(rows, key=repr)
        con.execute(f"CREATE VIEW v_{statement.model} AS {statement.sql}")
    raise AssertionError(f"no statement for {model}")


def diagnostics(models: str) -> list[tuple[str, str]]:
    return [(d.code, d.message) for d in load_text(SHOP + models, "shop.strata").diagnostics]


def test_sort_orders_the_output_nulls_last_as_duckdb():
    rows = run_model("model m {\n from orders\n sort amount desc, id\n select id, amount\n}",
                     "m", ordered=True)
    assert [r[0] for r in rows] == [2, 3, 1, 6, 5, 4, 7]


def test_sort_nulls_first_and_take():
    rows = run_model("model m {\n from orders\n sort amount nulls first, id desc\n take 3\n"
                     " select id\n}", "m", ordered=True)
    assert rows == [(7,), (4,), (5,)]


def test_take_by_keeps_the_top_n_per_group_and_null_is_a_group():
    rows = run_model("model m {\n from orders\n sort amount desc, id\n take 1 by customer_id\n"
                     " select id, customer_id\n}", "m")
    assert rows == sorted([(2, 10), (4, 20), (6, None), (7, 30)], key=repr)


def test_a_filter_after_take_filters_the_rows_taken():
    rows = run_model("model m {\n from orders\n sort id\n take 3\n filter status = 'paid'\n"
                     " select id\n}", "m")
    assert rows == [(1,), (2,)]


def test_take_without_sort_is_e100():
    assert diagnostics("model m {\n from orders\n take 3\n}")[0][0] == "E100"
    # a select since the sort: the order is gone
    assert diagnostics("model m {\n from orders\n sort id\n select id\n take 3\n}")[0][0] \
        == "E100"


def test_distinct_removes_duplicate_rows():
    rows = run_model("model m {\n from orders\n select customer_id, amount\n distinct\n}", "m")
    assert len(rows) == 6 and rows.count((10, 7.0)) == 1


def test_distinct_compares_the_output_not_hidden_join_columns():
    rows = run_model("model m {\n from orders\n join customers as c on customer_id = c.id\n"
                     " select customer_id\n distinct\n}", "m")
    assert rows == [(10,), (20,)]


def test_distinct_by_keeps_the_latest_row_per_key():
    rows = run_model("model m {\n from orders\n distinct by customer_id order ordered_at desc\n"
                     " select customer_id, id\n}", "m")
    assert rows == sorted([(10, 3), (20, 4), (None, 6), (30, 7)], key=repr)


def test_distinct_by_without_order_is_e101():
    assert diagnostics("model m {\n from orders\n distinct by id\n}")[0][0] == "E101"


def test_row_number_per_customer_by_order_time():
    rows = run_model("model m {\n from orders\n window by customer_id order ordered_at, id\n"
                     " derive n = row_number(), running = sum(amount), prev = lag(amount, 1, 0.0)"
                     "\n select id, n, running, prev\n}", "m")
    assert rows == sorted([(1, 1, 5.0, 0.0), (2, 2, 12.0, 5.0), (3, 3, 19.0, 7.0),
                           (4, 1, 1.0, 0.0), (5, 1, 2.0, 0.0), (6, 2, 5.0, 2.0),
                           (7, 1, None, 0.0)], key=repr)


def test_rank_dense_rank_and_a_frame():
    rows = run_model("model m {\n from orders\n filter customer_id = 10\n"
                     " window order amount rows between 1 preceding and current row\n"
                     " derive r = rank(), d = dense_rank(), s = sum(amount), f = first_value(id)\n"
                     " select id, r, d, s\n}", "m")
    assert rows == [(1, 1, 1, 5.0), (2, 2, 2, 12.0), (3, 2, 2, 14.0)] or \
        rows == [(1, 1, 1, 5.0), (2, 2, 2, 14.0), (3, 2, 2, 12.0)]


def test_a_filter_after_a_window_is_qualify():
    rows = run_model("model m {\n from orders\n window by customer_id order ordered_at desc\n"
                     " derive n = row_number()\n filter n = 1\n select id\n}", "m")
    assert rows == [(3,), (4,), (6,), (7,)]


@pytest.mark.parametrize("models, code", [
    ("model m {\n from orders\n derive n = row_number()\n}", "E097"),
    ("model m {\n from orders\n filter lag(id) > 1\n}", "E097"),
    ("model m {\n from orders\n window by customer_id\n select id\n}", "E098"),
    ("model m {\n from orders\n window by customer_id\n derive x = id + 1\n}", "E098"),
    ("model m {\n from orders\n window by customer_id\n derive n = row_number()\n}", "E099"),
    (("model m {\n from orders\n window rows between 1 preceding and current row\n"
     " derive s = sum(amount)\n}"), "E099"),
    ("model m {\n from orders\n window order id\n derive s = count_distinct(amount)\n}",
     "E102"),
    (("model m {\n from orders\n window order id, amount range between 1 preceding and "
     "current row\n derive s = sum(amount)\n}"), "E103"),
    (("model m {\n from orders\n window order id rows between current row and 1 preceding\n"
     " derive s = sum(amount)\n}"), "E105"),
])
def test_window_misuse_is_coded(models, code):
    assert diagnostics(models)[0][0] == code


def test_join_full_keeps_both_sides_unmatched_rows():
    rows = run_model("model m {\n from orders\n filter status = 'paid'\n"
                     " join_full customers as c on customer_id = c.id\n select id, c.name as name\n}",
                     "m")
    assert (None, "Dan") in rows and (5, None) in rows and len(rows) == 6


def test_join_cross_brings_a_scalar_from_a_one_row_model():
    rows = run_model("model total {\n from orders\n aggregate total = sum(amount)\n}\n"
                     "model m {\n from orders\n join_cross total\n"
                     " derive share = amount / total\n select id, share\n}", "m")
    assert rows[0] == (1, 5.0 / 25.0)


def test_semi_and_anti_join_split_the_rows_and_anti_is_null_safe():
    semi = run_model("model m {\n from orders\n join_semi customers as c on customer_id = c.id\n"
                     " select id\n}", "m")
    anti = run_model("model m {\n from orders\n join_anti customers as c on customer_id = c.id\n"
                     " select id\n}", "m")
    assert semi == [(1,), (2,), (3,), (4,)]
    # NULL keys match nothing, so anti keeps them (NOT EXISTS, never NOT IN)
    assert anti == [(5,), (6,), (7,)]


def test_semi_join_never_repeats_a_row():
    rows = run_model("model m {\n from customers\n join_semi orders as o on id = o.customer_id\n"
                     " select id\n}", "m")
    assert rows == [(10,), (20,)]


def test_a_sub_pipeline_aggregates_before_the_join():
    rows = run_model("model m {\n from customers\n"
                     " join_left (from orders | filter status = 'paid' | group customer_id"
                     " | aggregate n = count(), spend = sum(amount)) as o on o.customer_id = id\n"
                     " select id, o.n as n, o.spend as spend\n}", "m")
    assert rows == [(10, 2, 12.0), (20, 1, 1.0), (40, None, None)]


def test_from_a_sub_pipeline_and_a_set_operation_with_one():
    rows = run_model("model m {\n from (from orders | filter customer_id = 10) as o\n"
                     " select id\n union (from orders | filter customer_id = 20 | select id)\n}",
                     "m")
    assert rows == [(1,), (2,), (3,), (4,)]


def test_a_sub_pipeline_join_needs_a_name():
    assert diagnostics("model m {\n from customers\n join (from orders) on id = 1\n}")[0][0] \
        == "E104"


def test_select_star_plus_and_except():
    rows = run_model("model m {\n from customers\n select *, upper(name) as loud\n"
                     " select * except name\n}", "m")
    assert rows == [(10, "ANN"), (20, "BOB"), (40, "DAN")]


def test_select_star_except_an_unknown_column_is_e011():
    assert diagnostics("model m {\n from customers\n select * except nmae\n}")[0][0] == "E011"


def test_current_date_as_a_bare_word_is_e032():
    diags = diagnostics("model m {\n from customers\n derive d = current_date\n}")
    assert diags[0][0] == "E032"


def test_a_window_over_a_window_reads_it_from_a_cte():
    rows = run_model("model m {\n from orders\n window by customer_id order ordered_at, id\n"
                     " derive n = row_number()\n window by n order id\n derive k = rank()\n"
                     " sort id\n take 2 by n\n select id, n, k\n}", "m")
    assert rows == [(1, 1, 1), (2, 2, 1), (3, 3, 1), (4, 1, 2), (6, 2, 2)]


@pytest.mark.parametrize("steps", [
    "window by customer_id order ordered_at\n derive n = row_number()",
    "distinct by customer_id order ordered_at desc",
    "sort amount\n take 2",
    "join_semi customers as c on c.id = customer_id",
])
def test_incremental_models_with_the_new_steps_filter_the_full_result(steps):
    """A cdc predicate pushed into the base would change what a window numbers, which
    row `distinct by` keeps and which rows `take` keeps: those models use __full."""
    text = (f"model m {{\n from orders\n {steps}\n incremental\n merge_strategy: append\n"
            " cdc_column: ordered_at\n}")
    module = load_text(SHOP + text, "shop.strata")
    assert not module.diagnostics, module.diagnostics
    labels = {s.label for s in compile_statements(module, "duckdb")}
    assert "incremental: append, full-then-filter" in labels, labels


def test_sort_alone_still_pushes_down():
    text = ("model m {\n from orders\n sort amount\n incremental\n merge_strategy: append\n"
            " cdc_column: ordered_at\n}")
    labels = {s.label for s in compile_statements(load_text(SHOP + text, "s.strata"), "duckdb")}
    assert "incremental: append, pushdown" in labels, labels


# ---------------------------------------------------------------- ties (issue 16 follow-up)
TIED = """
CREATE TABLE orders AS SELECT * FROM (VALUES
  (3, 10, 7.0, 'b', 1), (1, 10, 7.0, 'a', 1), (2, 10, 7.0, 'B', 1),
  (4, 10, 0.0, 'z', 1), (5, 10, -0.0, 'z', 1)) AS t(id, customer_id, amount, status, ordered_at);
CREATE TABLE customers AS SELECT 1 AS id, 'x' AS name;
"""
# the same rows read in the other order: a tie must not follow the engine's reading
TIED_REVERSED = TIED.replace("SELECT * FROM (VALUES", "SELECT * FROM (SELECT * FROM (VALUES") \
    .replace("AS t(id, customer_id, amount, status, ordered_at);",
             "AS t(id, customer_id, amount, status, ordered_at) ORDER BY id DESC);")


@pytest.mark.parametrize("data", [TIED, TIED_REVERSED])
def test_take_breaks_ties_by_the_remaining_columns_whatever_order_rows_come_in(data):
    """Tied on `amount`: the remaining columns decide (id first, in scope order)."""
    rows = run_model("model m {\n from orders\n sort amount desc\n take 2\n select id\n}",
                     "m", data=data)
    assert rows == [(1,), (2,)]


@pytest.mark.parametrize("data", [TIED, TIED_REVERSED])
def test_distinct_by_and_row_number_break_ties_alike(data):
    models = ("model d {\n from orders\n select customer_id, amount, status\n"
              " distinct by customer_id order amount desc\n}\n"
              "model w {\n from orders\n select amount, status\n window order amount desc\n"
              " derive n = row_number(), prev = lag(status)\n}\n")
    # text by code point: 'B' < 'a' < 'b'
    assert run_model(models, "d", data=data) == [(10, 7.0, "B")]
    assert run_model(models, "w", data=data) == sorted(
        [(7.0, "B", 1, None), (7.0, "a", 2, "B"), (7.0, "b", 3, "a"),
         (-0.0, "z", 4, "b"), (0.0, "z", 5, "z")], key=repr)


def test_ranks_and_range_aggregates_keep_tied_rows_together():
    """Peers are what rank and a range frame mean: no tie-breaker there."""
    sql = compile_statements(load_text(SHOP + "model m {\n from orders\n window order amount\n"
                                       " derive r = rank(), s = sum(amount), n = row_number()\n"
                                       "}\n", "shop.strata"), "duckdb")[0].sql
    assert "RANK() OVER (ORDER BY base.amount ASC)" in sql
    assert "SUM(base.amount) OVER (ORDER BY base.amount ASC)" in sql
    assert "ORDER BY base.amount ASC, base.id ASC, base.customer_id ASC, base.status ASC, " \
        "base.ordered_at ASC\n  ) AS n" in sql


@pytest.mark.parametrize("data", [TIED, TIED_REVERSED])
def test_last_value_over_the_default_frame_is_the_last_tie_in_tie_order(data):
    rows = run_model("model m {\n from orders\n window order amount\n"
                     " derive l = last_value(status), f = first_value(status)\n"
                     " select id, l, f\n}", "m", data=data)
    assert rows == sorted([(1, "b", "z"), (2, "b", "z"), (3, "b", "z"), (4, "z", "z"),
                           (5, "z", "z")], key=repr)


def test_first_or_last_value_over_a_range_offset_is_e111():
    found = diagnostics("model m {\n from orders\n window order ordered_at range between 1 "
                        "preceding and current row\n derive f = first_value(status)\n}")
    assert found[0][0] == "E111"


def test_postgres_orders_text_keys_by_code_point():
    module = load_text(SHOP + "model m {\n from orders\n sort status\n take 2\n}", "shop.strata")
    sql = compile_statements(module, "postgres")[0].sql
    assert 'base.status COLLATE "C" ASC' in sql


@pytest.mark.parametrize("key", ["status", "date '2024-01-01'", "timestamp '2024-01-01 00:00:00'"])
def test_a_range_offset_on_a_key_that_is_not_a_number_is_e113(key):
    """DuckDB counts days on a date and fails on a timestamp; PostgreSQL wants an
    interval: the offset has no one meaning there."""
    found = diagnostics(f"model m {{\n from orders\n derive k = {key}\n window order k range "
                        "between 1 preceding and current row\n derive n = count()\n}")
    assert [c for c, _ in found] == ["E113"]
    ok = diagnostics("model m {\n from orders\n window order amount range between 1 preceding "
                     "and current row\n derive n = count()\n}")
    assert ok == []


@pytest.mark.parametrize(("order", "keys"), [
    ("amount", "ORDER BY base.amount IS NULL ASC, base.amount ASC"),
    ("amount desc nulls first", "ORDER BY base.amount IS NULL DESC, base.amount DESC"),
    ("amount desc", "ORDER BY base.amount DESC"),
    ("amount nulls first", "ORDER BY base.amount ASC"),
])
def test_bigquery_windowed_aggregates_order_nulls_by_an_is_null_key(order, keys):
    """BigQuery takes no NULLS FIRST/LAST in a windowed aggregate (it was E091): an
    `x IS NULL` key puts the NULLs where Strata says, and the SQL parses back."""
    import sqlglot

    module = load_text(SHOP + f"model m {{\n from orders\n window order {order}\n"
                       " derive s = sum(amount)\n}", "shop.strata")
    sql = compile_statements(module, "bigquery")[0].sql
    assert keys + ")" in sql
    assert sqlglot.parse_one(sql, read="bigquery").find(exp.Window) is not None
    for dialect in ("duckdb", "postgres", "snowflake", "spark", "trino"):
        rendered = compile_statements(module, dialect)[0].sql
        sqlglot.parse_one(rendered, read=dialect)


def test_bigquery_is_null_key_orders_nulls_as_duckdb():
    """The rewritten order, run on DuckDB (whose defaults match BigQuery's for these
    keys), gives DuckDB's own running sums."""
    module = load_text(SHOP + "model m {\n from orders\n window order amount\n"
                       " derive s = sum(amount)\n select id, s\n}", "shop.strata")
    bigquery = compile_statements(module, "bigquery")[0].sql
    duck = compile_statements(module, "duckdb")[0].sql
    assert _duck(bigquery, SHOP_DATA) == _duck(duck, SHOP_DATA)
