"""The example's DuckDB SQL runs on a real DuckDB file over the example's data, and
gives the values worked out by hand from the CSV/Parquet files (see the comments:
every expected number below was computed from examples/shop/data, not by running
the SQL).

Each model is created in dependency order as a table `t_<model>` and a view
`v_<model>` (compile_relations reads upstream models as `v_<model>`), from the
exact text that `strata compile --show-sql` prints.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import itertools
from collections import Counter
from decimal import Decimal

import duckdb
import pytest
from example_modules import CLOCK, ROOT, load, statements
from sqlglot import exp

from strata.plan import RelationRef
from strata.semantics.expressions import constant_value
from strata.sqlgen.build import model_query
from strata.sqlgen.literals import lit
from strata.sqlgen.names import ident, table

D = Decimal


def _ident(name: str) -> str:
    return ident(name).sql("duckdb")


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    """A DuckDB file holding every shop model, built from the rendered full SQL."""
    con = duckdb.connect(str(tmp_path_factory.mktemp("shop") / "shop.duckdb"))
    with contextlib.chdir(ROOT):  # file paths in the SQL are relative to the repo root
        for stmt in statements("shop", "duckdb"):
            if stmt.label.split(";")[0] == "full":  # `full; run_timestamp() = ...`
                con.sql(stmt.sql).create(f"t_{stmt.model}")
                con.execute(f"CREATE VIEW {_ident('v_' + stmt.model)} AS "
                            f"SELECT * FROM {_ident('t_' + stmt.model)}")
        yield con
    con.close()


def rows(con, model: str, columns: str = "*", where: str = "") -> list[tuple]:
    query = f"SELECT {columns} FROM {_ident('v_' + model)} {where}"
    return con.sql(query).fetchall()


def multiset(result: list[tuple]) -> Counter:
    return Counter(tuple(tuple(v) if isinstance(v, list) else v for v in row) for row in result)


# ---------------------------------------------------------------- every model runs
def test_every_model_materializes_with_rows(shop):
    for model in load("shop").order:
        assert rows(shop, model, "count(*)")[0][0] > 0, model


def test_pins_hold_on_the_example_data(shop):
    """The pins the example declares are true of its data (so `strata run` publishes)."""
    module = load("shop")
    for model in module.order:
        view = _ident("v_" + model)
        count = rows(shop, model, "count(*)")[0][0]
        for pin in module.plan(model).pins:
            cols = ", ".join(_ident(c) for c in pin.columns)
            if pin.kind == "unique":
                dupes = shop.sql(f"SELECT {cols} FROM {view} GROUP BY ALL "
                                 f"HAVING count(*) > 1").fetchall()
                assert not dupes, (model, pin.describe(), dupes)
            elif pin.kind == "not_null":
                cond = " OR ".join(f"{_ident(c)} IS NULL" for c in pin.columns)
                assert shop.execute(f"SELECT count(*) FROM {view} WHERE {cond}").fetchall() \
                    == [(0,)], (model, pin.describe())
            elif pin.kind == "rows":
                low, high = {">=": (pin.bounds[0], None), "<=": (0, pin.bounds[0]),
                             "=": (pin.bounds[0], pin.bounds[0]),
                             "between": tuple(pin.bounds)}[pin.op]
                assert count >= low and (high is None or count <= high), (model, count)


def test_column_types_are_the_declared_ones(shop):
    """DuckDB's own types of each model match what Strata inferred (the CSVs
    auto-detect to the declared source types). DuckDB sums BIGINTs as HUGEINT, an
    integer too."""
    kinds = {"BIGINT": "int", "HUGEINT": "int", "VARCHAR": "text", "DATE": "date", "TIMESTAMP": "timestamp",
             "BOOLEAN": "bool", "DOUBLE": "double", "VARCHAR[]": "list"}
    module = load("shop")
    for model in module.order:
        actual = {name: typ for name, typ, *_ in
                  shop.sql(f"DESCRIBE {_ident('v_' + model)}").fetchall()}
        for col in module.plan(model).output:
            got = actual[col.name]
            kind = "decimal" if got.startswith("DECIMAL") else kinds.get(got, got)
            assert kind == col.type.kind, (model, col.name, got, str(col.type))


# ---------------------------------------------------------------- hand-computed values
def test_order_lines_left_join_keeps_unknown_products(shop):
    # 36 item rows, one with quantity 0 (order 9 line 3): 35 lines.
    assert rows(shop, "order_lines", "count(*)") == [(35,)]
    # product 99 is not in products.csv: the left join keeps the line, name NULL;
    # product 7 (Gift Card) has a NULL category: 'unknown' too.
    assert rows(shop, "order_lines", "product_name, category, quantity, line_total",
                "WHERE order_id = 6 ORDER BY line_no") == [
        ("Gift Card", "unknown", 1, D("25.00")),
        (None, "unknown", 4, D("12.00")),
    ]
    assert rows(shop, "order_lines", "product_name, category, line_total",
                "WHERE order_id = 24 ORDER BY line_no") == [
        ("Assam Black Tea", "tea", D("35.00")),  # 5 x 7.00
        ("Stoneware Mug", "kitchen", D("12.00")),
        ("Glass Teapot", "kitchen", D("24.90")),
    ]
    assert rows(shop, "order_lines", "count(*)", "WHERE order_id = 9") == [(2,)]


def test_orders_enriched_joins_totals_and_customers(shop):
    # clean_orders drops 7, 20 (guests) and 14 (test); the inner join with
    # order_totals drops 16 (no lines); the filter drops 5 (cancelled), 8 and 22
    # (returned). Subtotals are the sums of quantity x unit_price per order.
    expected = [
        (1, "Ann Lee", "eu", D("29.00"), False),       # 2x8.50 + 12.00
        (2, "Bo Chen", "apac", D("29.50"), False),     # 3x7.00 + 2x4.25
        (3, "Ann Lee", "eu", D("63.90"), True),        # 39.00 + 24.90
        (4, "O'Brien, Pat", "eu", D("33.40"), False),  # 24.90 + 8.50
        (6, "Carlos Ruiz", "us", D("37.00"), False),   # 25.00 + 4x3.00
        (9, "Farid Haddad", "apac", D("19.75"), False),  # 7.00 + 3x4.25 (+ an emptied line)
        (10, "Bo Chen", "apac", D("39.00"), False),
        (11, "Grace Kim", "apac", D("34.00"), False),  # 4x8.50
        (12, "Hugo Weber", "eu", D("38.90"), False),   # 24.90 + 2x7.00
        (13, "Zoë Martin", "eu", D("4.25"), False),
        (15, "Carlos Ruiz", "us", D("60.00"), True),   # 5x12.00
        (17, "O'Brien, Pat", "eu", D("63.00"), True),  # 39.00 + 2x12.00
        (18, "Ann Lee", "eu", D("14.00"), False),
        (19, "Eve Adams", "unknown", D("41.90"), False),  # region NULL -> 'unknown'
        (21, "Farid Haddad", "apac", D("50.00"), True),   # 2x25.00: big from 50 on
        (23, "Hugo Weber", "eu", D("34.00"), False),   # 3x8.50 + 2x4.25
        (24, "Grace Kim", "apac", D("71.90"), True),   # 35.00 + 12.00 + 24.90
    ]
    assert rows(shop, "orders_enriched", "order_id, customer_name, region, subtotal, big_order",
                "ORDER BY order_id") == expected


def test_region_sales_aggregates_with_having(shop):
    # eu: orders 1,3,4,12,13,17,18,23 of customers 1,3,4,10 -> 280.45 / 8 = 35.05625
    # apac: orders 2,9,10,11,21,24 of customers 2,8,9 -> 244.15 / 6 = 40.691...
    # us: orders 6,15 of customer 5 -> 97.00 / 2; 'unknown' (41.90) is under 50: dropped
    assert rows(shop, "region_sales", "region, buyers, order_count, revenue, avg_order_value",
                "ORDER BY region") == [
        ("apac", 3, 6, D("244.15"), 40.69),
        ("eu", 4, 8, D("280.45"), 35.06),
        ("us", 1, 2, D("97.00"), 48.5),
    ]


def test_shop_kpis_aggregate_without_group(shop):
    # 17 orders of 9 customers; 280.45 + 244.15 + 97.00 + 41.90 = 663.50; / 17 = 39.029...
    assert rows(shop, "shop_kpis") == [
        (17, 9, D("663.50"), dt.date(2024, 1, 3), dt.date(2024, 2, 26), 39.03)]


def test_order_totals_per_order(shop):
    assert rows(shop, "order_totals", "count(*)") == [(23,)]  # orders 1-24 but 16
    assert rows(shop, "order_totals", "order_id, lines, units, subtotal",
                "WHERE order_id IN (9, 24) ORDER BY order_id") == [
        (9, 2, 4, D("19.75")), (24, 3, 7, D("71.90"))]


def test_line_tags_expand_one_row_per_tag(shop):
    # Tags of the 35 lines; NULL lists, empty lists and the NULL element of order 12
    # give no row; 'Organic' (order 9) is lower-cased.
    counts = dict(rows(shop, "line_tags", "tag, count(*)", "GROUP BY tag"))
    assert counts == {"organic": 9, "fragile": 8, "gift": 7, "bundle": 3, "bulk": 3,
                      "digital": 2, "clearance": 1, "test": 1, "snack": 1}
    # gift: 17.00 (1) + 39.00 (3) + 25.00 (6) + 60.00 (15) + 24.00 (17) + 50.00 (21)
    #       + 24.90 (24)
    assert rows(shop, "line_tags", "sum(line_total)", "WHERE tag = 'gift'") == [(D("239.90"),)]
    assert rows(shop, "line_tags", "tag", "WHERE order_id = 12") == [("fragile",)]
    # order 2 line 2 has a NULL list, orders 13 and 20 an empty one
    assert rows(shop, "line_tags", "count(*)",
                "WHERE (order_id = 2 AND line_no = 2) OR order_id IN (13, 20)") == [(0,)]


def test_set_operations(shop):
    # 11 customer addresses (customer 6 has none), trimmed and lower-cased, plus 4
    # confirmed subscribers (2 new: reader.one, news.fan), minus 2 unsubscribes.
    assert sorted(r[0] for r in rows(shop, "marketable_emails")) == sorted([
        "ann@example.com", "pat.obrien@example.com", "zoe@example.fr", "carlos@example.mx",
        "eve@example.com", "farid@example.ae", "grace@example.kr", "hugo@example.de",
        "ines@example.pt", "jj@example.com", "reader.one@example.org"])
    # 24 orders - 1 test order + 4 archived ones (union keeps all rows)
    assert rows(shop, "order_history", "count(*), count(*) FILTER (WHERE id > 9000)") == [(27, 4)]
    # sold >= 3 units: 1, 2, 3, 4, 5, 7, 8, 99; active: all but 6 (and 99 is unknown)
    assert sorted(r[0] for r in rows(shop, "active_bestsellers")) == [1, 2, 3, 4, 5, 7, 8]


def test_order_log_date_functions(shop):
    # date_trunc of a date stays a date; date + 30 is 30 days later (a leap February)
    assert rows(shop, "order_log", "order_id, order_year, order_month, review_on",
                "WHERE order_id IN (1, 24) ORDER BY 1") == [
        (1, 2024, dt.date(2024, 1, 1), dt.date(2024, 2, 2)),
        (24, 2024, dt.date(2024, 2, 1), dt.date(2024, 3, 27)),
    ]
    assert rows(shop, "order_log", "count(*)") == [(23,)]  # 24 orders but the test one


def test_let_cdc_column_falls_back_to_signup(shop):
    assert rows(shop, "customer_profiles", "customer_id, email, region, changed_at",
                "WHERE customer_id IN (3, 7) ORDER BY 1") == [
        (3, "pat.obrien@example.com", "eu", dt.datetime(2024, 1, 5)),
        (7, "eve@example.com", "unknown", dt.datetime(2024, 1, 15)),
    ]


# ---------------------------------------------------------------- incremental SQL runs
INCREMENTAL = [("clean_orders", "updated_at", dt.datetime(2024, 2, 6, 12)),
               ("customer_profiles", "changed_at", dt.datetime(2024, 1, 15)),
               ("order_log", "order_date", dt.date(2024, 2, 5)),
               ("order_lines", "updated_at", dt.datetime(2024, 2, 2, 11))]


@pytest.mark.parametrize(("model", "cdc", "watermark"), INCREMENTAL,
                         ids=[m for m, *_ in INCREMENTAL])
def test_incremental_statement_rebuilds_the_full_result(shop, model, cdc, watermark):
    """Previous snapshot = the rows up to the watermark; the rendered incremental
    statement (its `$watermark` bound to a typed value) must give the full result."""
    (stmt,) = [s for s in statements("shop", "duckdb")
               if s.model == model and s.label != "full"]
    full = multiset(rows(shop, model))
    view, base = _ident("v_" + model), _ident("t_" + model)
    shop.execute("BEGIN")
    try:
        upto = exp.LTE(this=exp.column(cdc), expression=lit(watermark)).sql("duckdb")
        shop.execute(f"CREATE OR REPLACE VIEW {view} AS SELECT * FROM {base} WHERE {upto}")
        previous = len(rows(shop, model))
        assert 0 < previous < sum(full.values())  # the watermark splits the rows
        with contextlib.chdir(ROOT):
            merged = shop.execute(stmt.sql, {"watermark": watermark}).fetchall()
    finally:
        shop.execute("ROLLBACK")
    assert multiset(merged) == full


def test_nothing_new_means_nothing_merged(shop):
    """With the watermark at MAX(cdc_column) of the previous snapshot (a typed value
    read from the warehouse) the delta is empty and the result is the previous rows."""
    for model, cdc, _ in INCREMENTAL:
        mark = rows(shop, model, f"max({_ident(cdc)})")[0][0]
        (stmt,) = [s for s in statements("shop", "duckdb")
                   if s.model == model and s.label != "full"]
        with contextlib.chdir(ROOT):
            merged = shop.execute(stmt.sql, {"watermark": mark}).fetchall()
        assert multiset(merged) == multiset(rows(shop, model)), model


# ---------------------------------------------------------------- the example's tests
def _run_test_block(module, test) -> list[str]:
    """Run one `test` block on an in-memory DuckDB: given rows replace sources and
    models, other sources are empty; returns the failed expectations."""
    con = duckdb.connect()
    given = {b.relation: b for b in test.blocks if b.kind == "given"}

    def create(name: str, columns, block) -> None:
        ddl = exp.Create(this=exp.Schema(this=table(name), expressions=[
            exp.ColumnDef(this=ident(n), kind=t.to_sqlglot()) for n, t in columns]),
            kind="TABLE")
        con.execute(ddl.sql("duckdb"))
        if block is not None and block.rows:
            values = exp.values([tuple(lit(constant_value(v)) for v in row)
                                 for row in block.rows])
            insert = exp.insert(values, table(name), columns=list(block.columns))
            con.execute(insert.sql("duckdb"))

    for name, src in module.sources.items():
        create(f"src_{name}", src.columns, given.get(name))

    def relations(ref: RelationRef, alias):
        if ref.kind == "clock":  # run_date()/run_timestamp(): the examples' fixed clock
            return CLOCK.literal(ref.name)
        name = f"src_{ref.name}" if ref.kind == "source" else f"v_{ref.name}"
        return table(name, alias=alias if alias != name else None)

    for name in module.order:
        plan = module.plan(name)
        if name in given:
            create(f"v_{name}", [(c.name, c.type) for c in plan.output], given[name])
        else:
            con.sql(model_query(plan, relations).sql("duckdb")).create(f"v_{name}")
    failures = []
    for block in test.blocks:
        if block.kind != "expect":
            continue
        cols = ", ".join(_ident(c) for c in block.columns)
        got = Counter(tuple(_norm(v) for v in r)
                      for r in con.sql(f"SELECT {cols} FROM {_ident('v_' + block.relation)}")
                      .fetchall())
        want = Counter(tuple(_norm(constant_value(v)) for v in row) for row in block.rows)
        if got != want:
            failures.append(f"{test.name}: {block.relation}: got {sorted(got.elements(), key=repr)}"
                            f", want {sorted(want.elements(), key=repr)}")
    return failures


def _norm(value):
    if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
        return Decimal(str(value)).normalize()
    return value


def test_example_test_blocks_pass():
    module = load("shop")
    assert len(module.tests) >= 3
    failures = [f for test in module.tests.values() for f in _run_test_block(module, test)]
    assert not failures, "\n".join(failures)


# ---------------------------------------------------------------- jaffle_shop, issue 40
@pytest.fixture(scope="module")
def jaffle(tmp_path_factory):
    """A DuckDB file holding every jaffle_shop model, built from the rendered full SQL
    with run_date() fixed (example_modules.CLOCK), so its rows do not depend on the day."""
    con = duckdb.connect(str(tmp_path_factory.mktemp("jaffle") / "jaffle.duckdb"))
    with contextlib.chdir(ROOT):
        for stmt in statements("jaffle_shop", "duckdb"):
            if stmt.label.split(";")[0] == "full":  # `full; run_date() = ...` too
                con.sql(stmt.sql).create(f"t_{stmt.model}")
                con.execute(f"CREATE VIEW {_ident('v_' + stmt.model)} AS "
                            f"SELECT * FROM {_ident('t_' + stmt.model)}")
        yield con
    con.close()


def _latest_orders() -> dict[int, dict]:
    """raw_orders.csv read by hand: the latest row of each order (CDC), as stg_orders."""
    import csv

    latest: dict[int, dict] = {}
    with open(ROOT / "examples/jaffle_shop/data/raw_orders.csv", newline="") as f:
        for row in csv.DictReader(f):
            key = int(row["id"])
            if key not in latest or row["updated_at"] > latest[key]["updated_at"]:
                latest[key] = row
    return latest


def test_the_time_spine_is_one_row_per_day_for_ten_years_up_to_the_run_date(jaffle):
    from example_modules import CLOCK

    today = CLOCK.at.date()
    days = [r[0] for r in rows(jaffle, "metricflow_time_spine", "date_day",
                               "ORDER BY date_day")]
    assert days[0] == today - dt.timedelta(days=3650) and days[-1] == today
    assert len(days) == len(set(days)) == 3651
    assert all(b - a == dt.timedelta(days=1) for a, b in itertools.pairwise(days))


def test_store_revenue_rolls_up_to_store_totals_and_a_grand_total(jaffle):
    orders = _latest_orders().values()
    cents = sum(int(o["order_total"]) for o in orders)
    grand = rows(jaffle, "store_revenue", "orders, revenue",
                 "WHERE is_grand_total = 1")
    # stg_orders' order_total is a double (Strata's `/`): sums of doubles, to a tolerance
    assert grand == [(len(orders), pytest.approx(cents / 100))]
    for store in {o["store_id"] for o in orders}:
        mine = [o for o in orders if o["store_id"] == store]
        total = rows(jaffle, "store_revenue", "orders, revenue",
                     f"WHERE store_id = {int(store)} AND is_store_total = 1")
        assert total == [(len(mine),
                          pytest.approx(sum(int(o["order_total"]) for o in mine) / 100))]


def test_customer_highlights_pick_the_biggest_and_the_first_order(jaffle):
    by_customer: dict[int, list[dict]] = {}
    for o in _latest_orders().values():
        if o["customer"]:
            by_customer.setdefault(int(o["customer"]), []).append(o)
    want = sorted((c, max(os, key=lambda o: (int(o["order_total"]), int(o["id"])))["id"],
                   min(os, key=lambda o: (o["ordered_at"], int(o["id"])))["id"])
                  for c, os in by_customer.items())
    got = rows(jaffle, "customer_highlights", "*", "ORDER BY customer_id")
    assert got == [(c, int(b), int(f)) for c, b, f in want]
