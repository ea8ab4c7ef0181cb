"""Watermark pushdown, checked on the SQLGlot tree (SPEC §3.5).

When `cdc_column` is resolvable in the base scope (a source column passed through,
or a `let`) and the model has no join, set operation or expand, `cdc > watermark`
lands in the WHERE of the `base` CTE and no `__full` wrapper appears. Otherwise
the full result is computed (`__full`) and filtered after (`__delta`).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import duckdb
import pytest
import sqlglot
from example_modules import DIALECTS, load
from sqlglot import exp

import dialects
from strata.compiler import WATERMARK_PLACEHOLDER, compile_relations, incremental_tree
from strata.semantics.resolve import load_text
from strata.sqlgen.literals import lit
from strata.sqlgen.rewrites import DELTA, FULL, delta_query


def _tree(module, model: str, watermark: exp.Expression, dialect: str = "duckdb"):
    relations = compile_relations(module, dialects.get(dialect))
    return incremental_tree(module.plan(model), relations, watermark)


def _ctes(tree: exp.Expression) -> dict[str, exp.Expression]:
    return {cte.alias: cte.this for cte in tree.find_all(exp.CTE)}


def _watermark_preds(node: exp.Expression, watermark: exp.Expression) -> list[exp.GT]:
    """The `x > <watermark>` comparisons directly in `node`'s own WHERE."""
    where = node.args.get("where")
    if where is None:
        return []
    return [gt for gt in where.find_all(exp.GT) if gt.expression == watermark]


def _pushed(module, model: str, watermark: exp.Expression) -> exp.GT:
    tree = _tree(module, model, watermark)
    ctes = _ctes(tree)
    assert FULL not in ctes, f"{model}: pushdown must not wrap the full result"
    (pred,) = _watermark_preds(ctes["base"], watermark)
    # every other CTE and the final query read the base CTE: no second filter
    for name, query in ctes.items():
        if name != "base":
            assert not _watermark_preds(query, watermark), name
    return pred


@pytest.fixture(scope="module")
def shop():
    return load("shop")


class TestShopPushdown:
    def test_passthrough_source_column(self, shop):
        """clean_orders: `updated_at` is a column of `orders as o`, renamed nothing."""
        mark = WATERMARK_PLACEHOLDER.copy()
        pred = _pushed(shop, "clean_orders", mark)
        assert isinstance(pred.this, exp.Column)
        assert (pred.this.table, pred.this.name) == ("o", "updated_at")
        assert delta_query(shop.plan("clean_orders"), compile_relations(
            shop, dialects.get("duckdb")), mark).path == "pushdown"

    def test_let_column(self, shop):
        """customer_profiles: `changed_at` is a `let`; the predicate compares its
        expression (the base CTE's WHERE cannot read the CTE's own aliases)."""
        mark = lit(dt.datetime(2024, 1, 15, 0, 0))
        pred = _pushed(shop, "customer_profiles", mark)
        assert isinstance(pred.this, exp.Coalesce)
        cols = {(c.table, c.name) for c in pred.this.find_all(exp.Column)}
        assert cols == {("customers", "updated_at"), ("customers", "signup_date")}

    def test_date_column_with_typed_watermark(self, shop):
        """order_log: a `date` cdc column and a datetime.date watermark stay a DATE."""
        mark = lit(dt.date(2024, 2, 5))
        pred = _pushed(shop, "order_log", mark)
        assert (pred.this.table, pred.this.name) == ("orders", "order_date")
        assert isinstance(pred.expression, exp.Cast)
        assert pred.expression.to.this == exp.DataType.Type.DATE
        assert pred.expression.this == exp.Literal.string("2024-02-05")

    def test_pushed_predicate_joins_the_base_filters(self, shop):
        """The watermark is one more base predicate, ANDed with the model's filters."""
        mark = WATERMARK_PLACEHOLDER.copy()
        base = _ctes(_tree(shop, "clean_orders", mark))["base"]
        conjuncts = list(base.args["where"].this.flatten())
        assert len(conjuncts) == 3  # status != 'test', customer_id is not null, watermark
        assert isinstance(conjuncts[-1], exp.GT) and conjuncts[-1].expression == mark

    def test_join_left_falls_back_to_full_then_delta(self, shop):
        """order_lines joins products: the delta is the full result filtered after."""
        mark = lit(dt.datetime(2024, 2, 1))
        tree = _tree(shop, "order_lines", mark)
        ctes = _ctes(tree)
        assert FULL in ctes and DELTA in ctes
        assert not _watermark_preds(ctes["base"], mark)
        assert not _watermark_preds(ctes[FULL], mark)
        (pred,) = _watermark_preds(ctes[DELTA], mark)
        assert (pred.this.table, pred.this.name) == (FULL, "updated_at")
        assert [t.name for t in ctes[DELTA].find_all(exp.Table)] == [FULL]
        # the full result keeps its left join
        assert any(j.side == "LEFT" for j in ctes[FULL].find_all(exp.Join))
        assert delta_query(shop.plan("order_lines"), compile_relations(
            shop, dialects.get("duckdb")), mark).path == "full-then-filter"

    @pytest.mark.parametrize("dialect", DIALECTS)
    def test_rendered_trees_keep_the_shape(self, shop, dialect):
        """The shapes survive rendering and parsing back in every dialect."""
        mark = lit(dt.date(2024, 2, 5))
        for model, pushed in (("order_log", True), ("order_lines", False)):
            tree = _tree(shop, model, lit(dt.datetime(2024, 2, 5)) if not pushed else mark,
                         dialect)
            parsed = sqlglot.parse_one(tree.sql(dialect=dialect), read=dialect)
            ctes = _ctes(parsed)
            assert (FULL in ctes) is not pushed, (model, dialect)
            where = ctes["base"].args.get("where")
            marks = [gt for gt in where.find_all(exp.GT) if isinstance(gt.expression, exp.Cast)]
            assert bool(marks) is pushed, (model, dialect)


# ---------------------------------------------------------------- rules, on small modules
MODULE = """
source events {{ id: int, kind: text, at: timestamp, day: date, tags: list<text> }}
source kinds {{ kind: text, label: text }}
model {name} {{
  from events
  {steps}
  incremental
  merge_strategy: append
  cdc_column: {cdc}
}}
"""


def _module(name: str, steps: str, cdc: str):
    module = load_text(MODULE.format(name=name, steps=steps, cdc=cdc))
    assert module.ok, [d.message for d in module.errors]
    return module


@pytest.mark.parametrize(("steps", "cdc", "pushed"), [
    ("select id, at", "at", True),
    ("select id, at as changed", "changed", True),  # a rename is still the column
    ("let changed = at\nfilter kind = 'x'", "changed", True),
    ("derive changed = at", "changed", True),  # derive of a plain column: a rename
    ("filter kind != 'x'\nselect id, day", "day", True),
    ("join kinds on kind = kinds.kind", "at", False),
    ("join_left kinds on kind = kinds.kind\nselect id, at", "at", False),
    ("expand tags as tag", "at", False),
    ("select id, kind, at, day, tags\nunion events", "at", False),
    ("derive changed = coalesce(at, cast(day as timestamp))", "changed", False),
])
def test_pushdown_rule(steps, cdc, pushed):
    module = _module("m", steps, cdc)
    mark = WATERMARK_PLACEHOLDER.copy()
    ctes = _ctes(_tree(module, "m", mark))
    assert (FULL not in ctes) is pushed
    assert bool(_watermark_preds(ctes["base"], mark)) is pushed
    if not pushed:
        assert _watermark_preds(ctes[DELTA], mark)


# ---------------------------------------------------------------- typed literals
class TestDateTimeLiterals:
    """lit() turns watermarks read from the warehouse (typed Python values) into
    typed literal nodes: a date stays a DATE and a datetime a TIMESTAMP."""

    DATE = dt.date(2024, 2, 29)
    STAMP = dt.datetime(2024, 2, 29, 23, 59, 58, 123456)

    @pytest.mark.parametrize(("dialect", "date_sql", "stamp_sql"), [
        ("duckdb", "CAST('2024-02-29' AS DATE)",
         "CAST('2024-02-29 23:59:58.123456' AS TIMESTAMP)"),
        ("postgres", "CAST('2024-02-29' AS DATE)",
         "CAST('2024-02-29 23:59:58.123456' AS TIMESTAMP)"),
        ("snowflake", "CAST('2024-02-29' AS DATE)",
         "CAST('2024-02-29 23:59:58.123456' AS TIMESTAMP)"),
        # Strata's timestamp has no time zone: BigQuery's DATETIME
        ("bigquery", "CAST('2024-02-29' AS DATE)",
         "CAST('2024-02-29 23:59:58.123456' AS DATETIME)"),
        ("spark", "CAST('2024-02-29' AS DATE)",
         "CAST('2024-02-29 23:59:58.123456' AS TIMESTAMP)"),
        ("trino", "CAST('2024-02-29' AS DATE)",
         "CAST('2024-02-29 23:59:58.123456' AS TIMESTAMP)"),
    ])
    def test_render(self, dialect, date_sql, stamp_sql):
        assert lit(self.DATE).sql(dialect=dialect) == date_sql
        assert lit(self.STAMP).sql(dialect=dialect) == stamp_sql
        for node in (lit(self.DATE), lit(self.STAMP)):
            back = sqlglot.parse_one(node.sql(dialect=dialect), read=dialect)
            assert isinstance(back, exp.Cast)

    def test_node_types(self):
        date_node, stamp_node = lit(self.DATE), lit(self.STAMP)
        assert date_node.to.this == exp.DataType.Type.DATE
        assert stamp_node.to.this == exp.DataType.Type.TIMESTAMP
        # a datetime at midnight is still a timestamp (datetime subclasses date)
        assert lit(dt.datetime(2024, 1, 1)).to.this == exp.DataType.Type.TIMESTAMP
        assert lit(dt.datetime(2024, 1, 1)).this == exp.Literal.string("2024-01-01 00:00:00")

    @pytest.mark.parametrize(("value", "typename"), [
        (DATE, "DATE"), (STAMP, "TIMESTAMP"), (dt.datetime(2024, 1, 1), "TIMESTAMP"),
        (dt.date(1999, 12, 31), "DATE"),
    ])
    def test_executes_in_duckdb_with_its_type(self, value, typename):
        node = lit(value)
        query = exp.select(exp.func("typeof", node.copy()), node.copy()).sql("duckdb")
        assert duckdb.connect().sql(query).fetchall() == [(typename, value)]

    def test_watermark_compares_as_a_date_in_duckdb(self):
        """`day > <date watermark>` must compare dates, not text: '2024-10-01' >
        '2024-9-30' holds, which a text comparison of unpadded values would not."""
        con = duckdb.connect()
        con.execute("CREATE TABLE t AS SELECT * FROM (VALUES (DATE '2024-09-30'), "
                    "(DATE '2024-10-01')) v(day)")
        pred = exp.GT(this=exp.column("day"), expression=lit(dt.date(2024, 9, 30)))
        query = exp.select("day").from_("t").where(pred).sql("duckdb")
        assert con.sql(query).fetchall() == [(dt.date(2024, 10, 1),)]

    def test_other_literals(self):
        assert lit(None).sql() == "NULL"
        assert lit(True).sql() == "TRUE"
        assert lit(-3).sql() == "-3"
        assert lit(Decimal("-1.50")).sql() == "-1.50"
        assert lit("it's").sql() == "'it''s'"
        assert lit(["a", None]).sql("duckdb") == "['a', NULL]"
