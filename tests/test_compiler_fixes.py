"""Regression tests for compiler bugs found while writing the shop example."""

from __future__ import annotations

import duckdb
import sqlglot
from sqlglot import exp

from strata.compiler import compile_statements
from strata.semantics.resolve import load_module


def _module(tmp_path, text: str):
    (tmp_path / "orders.csv").write_text("id,amount\n1,5\n2,7\n")
    path = tmp_path / "m.strata"
    path.write_text(text)

    module = load_module(path)
    assert module.ok, module.diagnostics
    return module


class TestFileSourceAlias:
    """A file source is read as `<alias>.<column>`, so its FROM item must carry that
    alias; before the fix DuckDB got `FROM READ_CSV('..')` and `o.id` did not bind."""

    TEXT = """
source orders = file 'orders.csv' { id: int, amount: int }
source more = file 'orders.csv' { id: int, amount: int }
model big { from orders as o; filter amount > 5 }
model plain { from orders; join more as m on id = m.id; select id, m.amount as other }
"""

    def test_from_and_join_items_are_aliased(self, tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        module = _module(tmp_path, self.TEXT)
        for stmt in compile_statements(module, "duckdb"):
            tree = sqlglot.parse_one(stmt.sql, read="duckdb")
            base = next(c for c in tree.find_all(exp.CTE) if c.alias == "base").this
            item = base.args["from_"].this
            assert isinstance(item, exp.Table) and item.alias in ("o", "orders")
            for join in tree.find_all(exp.Join):
                assert join.this.alias == "m"

    def test_runs_on_duckdb(self, tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        module = _module(tmp_path, self.TEXT)
        con = duckdb.connect()
        rows = {s.model: con.sql(s.sql).fetchall() for s in compile_statements(module, "duckdb")}
        assert rows["big"] == [(2, 7)]
        assert sorted(rows["plain"]) == [(1, 5), (2, 7)]

    def test_source_named_like_the_reader(self, tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        module = _module(tmp_path, """
source read_csv = file 'orders.csv' { id: int, amount: int }
model m { from read_csv }
""")
        con = duckdb.connect()
        (stmt,) = compile_statements(module, "duckdb")
        assert con.sql(stmt.sql).fetchall() == [(1, 5), (2, 7)]


class TestSparkCsvSources:
    """Spark's csv.`path` has no header option: the header row becomes data and the
    columns `_c0, _c1, ...`, so `orders.id` cannot bind. CSV sources read the table
    named after the source; Parquet (self-describing) is still read in place."""

    TEXT = """
source orders = file 'orders.csv' { id: int, amount: int }
source items = file 'items.parquet' { id: int }
model m { from orders as o; join items on id = items.id }
"""

    def test_csv_reads_the_source_table_parquet_the_file(self, tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        module = _module(tmp_path, self.TEXT)
        (stmt,) = compile_statements(module, "spark")
        tree = sqlglot.parse_one(stmt.sql, read="spark")
        tables = {(t.db, t.name, t.alias) for t in tree.find_all(exp.Table)}
        assert ("", "orders", "o") in tables
        # by its absolute URI: Spark resolves a relative path its own way (issue 15)
        assert ("parquet", f"file://{tmp_path}/items.parquet", "items") in tables
        assert "csv." not in stmt.sql


def test_typed_csv_reader_takes_an_alias(tmp_path):
    """The engine reads CSV through duckdb.csv_reader (declared types forced); like
    file_source it must be a FROM item that can carry the model's alias."""
    from dialects import duckdb as duck

    (tmp_path / "o.csv").write_text("id,amount\n1,5\n")
    node = duck.csv_reader(str(tmp_path / "o.csv"), {"id": "BIGINT", "amount": "BIGINT"})
    node.set("alias", exp.TableAlias(this=exp.to_identifier("o")))
    query = exp.select("o.id", "o.amount").from_(node)
    assert duckdb.connect().sql(query.sql("duckdb")).fetchall() == [(1, 5)]


class TestCteNamesDoNotShadowTables:
    """CTE names (base, combined, ...) were fixed words: a source called `combined`
    read after a set operation, or a join aliased `base`, silently read the CTE
    instead of the table. CTE names now avoid every bare table name and join alias
    of the query."""

    TEXT = """
source base { id: int, v: int }
source combined { id: int, v: int }
model m { from base; union combined; join combined as c on id = c.id }
model a { from combined; join base on id = base.id; select id, base.v as other }
model b { from combined; join combined as base on id = base.id; select id, base.v as w }
"""

    def test_results_read_the_tables(self):
        from strata.semantics.resolve import load_text

        module = load_text(self.TEXT)
        assert module.ok, module.diagnostics
        con = duckdb.connect()
        con.execute("CREATE TABLE base AS SELECT 1 AS id, 10 AS v UNION ALL SELECT 2, 15")
        con.execute("CREATE TABLE combined AS SELECT 2 AS id, 20 AS v")
        got = {s.model: sorted(con.sql(s.sql).fetchall())
               for s in compile_statements(module, "duckdb")}
        # base UNION ALL combined = (1,10), (2,15), (2,20); joined to combined (id 2)
        assert got["m"] == [(2, 15), (2, 20)]
        assert got["a"] == [(2, 15)]
        assert got["b"] == [(2, 20)]
        for stmt in compile_statements(module, "duckdb"):
            tree = sqlglot.parse_one(stmt.sql, read="duckdb")
            ctes = {c.alias for c in tree.find_all(exp.CTE)}
            assert not ctes & {"base", "combined"}, (stmt.model, ctes)


class TestLengthOfAList:
    """`length` accepts text or a list, but always built LENGTH(x): most engines
    reject LENGTH of an array (Postgres, Trino, Snowflake, BigQuery, Spark). A
    list's length is now SQLGlot's ArraySize, which each dialect spells its way."""

    TEXT = """
source t { s: text, l: list<text> }
model m { from t; derive ls = length(s), ll = length(l) }
"""

    def test_rendered_per_dialect(self):
        from strata.semantics.resolve import load_text

        module = load_text(self.TEXT)
        assert module.ok, module.diagnostics
        want = {"duckdb": "ARRAY_LENGTH(base.l)", "postgres": "CARDINALITY(base.l)",
                "snowflake": "ARRAY_SIZE(base.l)", "bigquery": "ARRAY_LENGTH(base.l)",
                "spark": "SIZE(base.l)", "trino": "CARDINALITY(base.l)"}
        for dialect, text in want.items():
            (stmt,) = compile_statements(module, dialect)
            assert f"{text} AS ll" in stmt.sql, (dialect, stmt.sql)
            assert "LENGTH(base.s) AS ls" in stmt.sql

    def test_runs_on_duckdb(self):
        from strata.semantics.resolve import load_text

        module = load_text(self.TEXT)
        con = duckdb.connect()
        con.execute("CREATE TABLE t AS SELECT 'abc' AS s, ['x', 'y'] AS l "
                    "UNION ALL SELECT '', []")
        (stmt,) = compile_statements(module, "duckdb")
        assert sorted(con.sql(stmt.sql).fetchall()) == [("", [], 0, 0), ("abc", ["x", "y"], 3, 2)]


class TestDateTruncOfADate:
    """date_trunc of a `date` is typed date, but DuckDB (and Postgres, Spark) return
    a TIMESTAMP, so a `pin columns { m: date }` contract failed at run time. The SQL
    now casts the truncated date back to DATE."""

    TEXT = """
source t { d: date, ts: timestamp }
model m {
  from t
  derive md = date_trunc('month', d), mt = date_trunc('month', ts), dd = date_trunc('day', d)
  pin columns { d: date, ts: timestamp, md: date, mt: timestamp, dd: date }
}
"""

    def test_duckdb_types_match_the_checker(self):
        from strata.semantics.resolve import load_text

        module = load_text(self.TEXT)
        assert module.ok, module.diagnostics
        con = duckdb.connect()
        con.execute("CREATE TABLE t AS SELECT DATE '2024-03-15' AS d, "
                    "TIMESTAMP '2024-03-15 10:30:00' AS ts")
        (stmt,) = compile_statements(module, "duckdb")
        rel = con.sql(stmt.sql)
        assert [str(t) for t in rel.types] == ["DATE", "TIMESTAMP", "DATE", "TIMESTAMP", "DATE"]
        import datetime as dt
        assert rel.fetchall()[0][2:] == (dt.date(2024, 3, 1), dt.datetime(2024, 3, 1),
                                         dt.date(2024, 3, 15))

    def test_every_dialect_casts_the_date(self):
        from strata.semantics.resolve import load_text

        module = load_text(self.TEXT)
        for dialect in ("duckdb", "postgres", "snowflake", "bigquery", "spark", "trino"):
            (stmt,) = compile_statements(module, dialect)
            tree = sqlglot.parse_one(stmt.sql, read=dialect)
            md = next(a for a in tree.expressions if a.alias_or_name == "md")
            assert isinstance(md.this, exp.Cast) and md.this.to.this == exp.DataType.Type.DATE
            # a date truncated to a day is the date itself (Spark's TRUNC has no DAY)
            dd = next(a for a in tree.expressions if a.alias_or_name == "dd")
            assert dd.this.sql(dialect) == "base.d"
        (stmt,) = compile_statements(module, "bigquery")
        assert "CAST(DATE_TRUNC(base.d, MONTH) AS DATE) AS md" in stmt.sql


class TestDateArithmetic:
    """`date ± n` and `timestamp ± n` (days) type-check, but were rendered as a plain
    `+`: DuckDB has no TIMESTAMP + INTEGER (a run-time error), Trino and BigQuery no
    DATE + INTEGER. They now use SQLGlot's date arithmetic, cast to the checked type."""

    TEXT = """
source t { d: date, ts: timestamp, n: int }
model m {
  from t
  derive next_day = d + 1, week_before = d - 7, later = ts + n, earlier = ts - (n + 1)
  pin columns { d: date, ts: timestamp, n: int, next_day: date, week_before: date,
                later: timestamp, earlier: timestamp }
}
"""

    def test_duckdb_values_and_types(self):
        import datetime as dt

        from strata.semantics.resolve import load_text

        module = load_text(self.TEXT)
        assert module.ok, module.diagnostics
        con = duckdb.connect()
        con.execute("CREATE TABLE t AS SELECT DATE '2024-03-01' AS d, "
                    "TIMESTAMP '2024-02-28 10:00:00' AS ts, 2 AS n")
        (stmt,) = compile_statements(module, "duckdb")
        rel = con.sql(stmt.sql)
        assert [str(t) for t in rel.types][3:] == ["DATE", "DATE", "TIMESTAMP", "TIMESTAMP"]
        assert rel.fetchall()[0][3:] == (dt.date(2024, 3, 2), dt.date(2024, 2, 23),
                                         dt.datetime(2024, 3, 1, 10), dt.datetime(2024, 2, 25, 10))

    def test_no_plain_plus_on_dates_in_any_dialect(self):
        from strata.semantics.resolve import load_text

        module = load_text(self.TEXT)
        for dialect in ("duckdb", "postgres", "snowflake", "bigquery", "spark", "trino"):
            (stmt,) = compile_statements(module, dialect)
            tree = sqlglot.parse_one(stmt.sql, read=dialect)
            for alias in ("next_day", "week_before", "later", "earlier"):
                node = next(a for a in tree.expressions if a.alias_or_name == alias).this
                assert isinstance(node, exp.Cast), (dialect, alias)
            assert "base.d + 1" not in stmt.sql and "base.ts + base.n" not in stmt.sql


def test_an_aggregate_over_an_aggregate_that_reads_none_of_its_columns(tmp_path):
    """`count()` over an aggregate's rows reads no column of it: the CTE closing the
    first aggregate had an empty select list (`SELECT FROM base`), an engine error."""
    module = _module(tmp_path, """
source orders = file 'orders.csv' { id: int, amount: int }
model whole { from orders; aggregate n = count(); aggregate m = count() }
model groups { from orders; group amount; aggregate n = count(); aggregate k = count() }
""")
    import strata

    con = duckdb.connect()
    for name, want in (("whole", [(1,)]), ("groups", [(2,)])):
        sql = strata.model_sql(module, name, pretty=False).replace(
            "'orders.csv'", repr(str(tmp_path / "orders.csv")))
        assert con.execute(sql).fetchall() == want


def test_extract_parts_are_typed_as_the_engine_returns_them(tmp_path):
    """`extract(epoch from ts)` was typed int; DuckDB returns DOUBLE (fractions of a
    second), so `pin columns { e: int }` passed `check` and failed at run time."""
    from strata.semantics import functions as F

    parts = sorted(F.EXTRACT_PARTS)
    derives = ", ".join(f"p_{p} = extract({p} from ts)" for p in parts)
    (tmp_path / "m.strata").write_text(
        "source src { ts: timestamp }\n"
        f"model m {{ from src; derive {derives} }}\n")
    module = load_module(tmp_path / "m.strata")
    assert module.ok, module.diagnostics
    inferred = {c.name: c.type.kind for c in module.plan("m").output}
    con = duckdb.connect()
    con.execute("CREATE TABLE src AS SELECT TIMESTAMP '2024-01-02 03:04:05.5' AS ts")
    import strata

    row = con.execute(f"SELECT * FROM ({strata.model_sql(module, 'm', pretty=False)})")
    engine = {d[0]: str(d[1]) for d in row.description}
    kinds = {"BIGINT": "int", "DOUBLE": "double"}
    assert {f"p_{p}": kinds[engine[f"p_{p}"]] for p in parts} == {
        f"p_{p}": inferred[f"p_{p}"] for p in parts}
