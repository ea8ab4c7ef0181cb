"""The function catalogue (issue 16 item 4): every function typed, rendered for all six
dialects, documented and run.

Each catalogue entry carries a signature, a one-line doc and an example with DuckDB's
result (strata/semantics/functions.py). Here each example is compiled for every
dialect, parsed back by SQLGlot in that dialect, and run on DuckDB, where it must
give the documented result. What an engine cannot express is E091 naming the
function and the dialect; arguments that must be literals are E031 otherwise. The
rows each function gives on PostgreSQL and Spark are checked against DuckDB's by the
corner module tests/differential/functions2 (tests/test_differential.py).
"""

from __future__ import annotations

import math
import re
from datetime import date, datetime
from decimal import ROUND_HALF_UP, Decimal

import duckdb
import pytest
import sqlglot
from hypothesis import given, settings
from hypothesis import strategies as st

import dialects
import strata
from strata.diagnostics import StrataError
from strata.semantics import functions as F
from strata.semantics.resolve import load_text

SOURCE = """source orders {
  id: int
  amount: decimal(10, 2)
  status: text
}
"""
# the rows every aggregate example reads
ORDERS = [(1, Decimal("1.00"), "paid"), (2, Decimal("4.00"), "void"),
          (3, Decimal("7.00"), "paid"), (4, None, None)]
DIALECTS = tuple(dialects.DIALECTS)
# (function, dialect) pairs whose example the dialect refuses (E091), and why
REFUSED = {
    ("median", "bigquery"), ("median", "trino"),
    ("quantile_cont", "bigquery"), ("quantile_cont", "trino"),
    ("list_agg", "bigquery"),
    ("json_text", "spark"), ("json_text", "snowflake"), ("json_text", "bigquery"),
    ("json_text", "trino"),
    *(("strptime", d) for d in ("postgres", "spark", "snowflake", "bigquery", "trino")),
}


def model(expr: str, aggregate: bool) -> str:
    step = f"aggregate v = {expr}" if aggregate else f"select {expr} as v"
    return SOURCE + f"model m {{\n  from orders\n  {step}\n}}\n"


def sql(text: str, dialect: str) -> str:
    module = load_text(text)
    assert not module.diagnostics, [d.message for d in module.diagnostics]
    return strata.model_sql(module, "m", dialect)


def diagnostics(text: str, dialect: str = "duckdb") -> list[tuple[str, str]]:
    module = load_text(text)
    if module.diagnostics:
        return [(d.code, d.message) for d in module.diagnostics]
    try:
        strata.model_sql(module, "m", dialect)
    except StrataError as err:
        return [(d.code, d.message) for d in err.diagnostics]
    return []


def run_duckdb(query: str):
    con = duckdb.connect()
    con.execute("CREATE TABLE orders (id BIGINT, amount DECIMAL(10, 2), status VARCHAR)")
    con.executemany("INSERT INTO orders VALUES (?, ?, ?)", ORDERS)
    return con.execute(query).fetchall()


def same(got, want) -> bool:
    if isinstance(want, float):
        return isinstance(got, float) and math.isclose(got, want, rel_tol=1e-12)
    if isinstance(want, date) and not isinstance(want, datetime):
        return got == want and not isinstance(got, datetime)
    return got == want and type(got) is type(want) or (
        isinstance(want, Decimal) and isinstance(got, Decimal) and got == want)


ENTRIES = sorted(F.CATALOGUE.values(), key=lambda f: f.name)


@pytest.mark.parametrize("fn", ENTRIES, ids=[f.name for f in ENTRIES])
def test_every_function_is_documented_with_an_example(fn):
    """The docs (docs/LANGUAGE.md) are written from these: a signature naming the
    function, a one-line doc saying what it returns, an example calling it."""
    assert fn.signature.startswith(fn.name + "("), fn.signature
    assert "->" in fn.signature
    assert fn.doc and "\n" not in fn.doc
    assert fn.example[0].startswith(fn.name + "(") or f" {fn.name}(" in fn.example[0]


@pytest.mark.parametrize("fn", ENTRIES, ids=[f.name for f in ENTRIES])
def test_the_example_gives_the_documented_result_on_duckdb(fn):
    expr, want = fn.example
    rows = run_duckdb(sql(model(expr, fn.aggregate), "duckdb"))
    got = rows[0][0] if len(rows) == 1 else [r[0] for r in rows]
    if fn.aggregate:
        assert len(rows) == 1
    else:  # a scalar example is a constant: the same on every row
        assert len(set(map(repr, got))) == 1, got
        got = got[0]
    assert same(got, want), (expr, got, want)


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("fn", ENTRIES, ids=[f.name for f in ENTRIES])
def test_the_example_renders_for_every_dialect_and_parses_back(fn, dialect):
    """Rendered SQL is valid for SQLGlot in that dialect; a refusal is E091 naming the
    function and the dialect (and listed in REFUSED, so no refusal is silent)."""
    text = model(fn.example[0], fn.aggregate)
    if (fn.name, dialect) in REFUSED:
        codes = diagnostics(text, dialect)
        assert [c for c, _ in codes] == ["E091"], codes
        assert f"`{fn.name}`" in codes[0][1] and dialect in codes[0][1]
        return
    rendered = sql(text, dialect)
    sqlglot.parse_one(rendered, read=dialects.get(dialect).sqlglot)


# ---------------------------------------------------------------- what each engine is told

@pytest.mark.parametrize(("expr", "dialect", "spelled"), [
    # greatest/least skip NULLs: engines returning NULL for any NULL compare coalesces
    ("greatest(id, 2)", "trino", "GREATEST(COALESCE(base.id, 2), COALESCE(2, base.id))"),
    ("greatest(id, 2)", "snowflake", "GREATEST_IGNORE_NULLS(base.id, 2)"),
    ("least(status, 'b')", "postgres", 'LEAST(base.status COLLATE "C", \'b\' COLLATE "C")'),
    # md5 of the UTF-8 bytes in lowercase hex
    ("md5(status)", "bigquery", "TO_HEX(MD5(base.status))"),
    ("md5(status)", "trino", "LOWER(TO_HEX(MD5(TO_UTF8(base.status))))"),
    # left of a negative count keeps all but the last characters
    ("left(status, -1)", "spark", "LEFT(base.status, GREATEST(LENGTH(base.status) + -1, 0))"),
    # quantile_cont: Spark's exact PERCENTILE
    ("quantile_cont(amount, 0.25)", "spark", "PERCENTILE(CAST(base.amount AS DOUBLE), 0.25)"),
    # strftime: the format translated into each engine's pattern, literal text quoted
    ("strftime(date '2024-01-02', '%d/%m/%Y %H:%M')", "postgres",
     "TO_CHAR(CAST(CAST('2024-01-02' AS DATE) AS TIMESTAMP), 'DD\"/\"MM\"/\"YYYY\" \"HH24\":\"MI')"),
    ("strftime(date '2024-01-02', '%d/%m/%Y %H:%M')", "trino",
     "DATE_FORMAT(CAST(CAST('2024-01-02' AS DATE) AS TIMESTAMP), '%d/%m/%Y %H:%i')"),
    ("string_agg(status, ',')", "postgres",
     "STRING_AGG(base.status, ',' ORDER BY base.status COLLATE \"C\")"),
])
def test_each_engine_gets_the_spelling_that_means_duckdbs_result(expr, dialect, spelled):
    fn = F.CATALOGUE[expr.split("(")[0]]
    rendered = " ".join(sql(model(expr, fn.aggregate), dialect).split())
    assert " ".join(spelled.split()) in rendered.replace("( ", "(").replace(" )", ")")


@pytest.mark.parametrize(("expr", "dialect", "names"), [
    ("strftime(date '2024-01-02', '%j')", "snowflake", "%j"),
    ("strftime(date '2024-01-02', '%A')", "snowflake", "%A"),
    ("strftime(timestamp '2024-01-02 00:00:00', '%f')", "bigquery", "%f"),
    ("greatest(1.5, cast(id as double))", "bigquery", "NaN"),
])
def test_what_an_engine_cannot_print_alike_is_E091(expr, dialect, names):
    codes = diagnostics(model(expr, False), dialect)
    assert [c for c, _ in codes] == ["E091"], codes
    assert names in codes[0][1] and dialect in codes[0][1]
    assert diagnostics(model(expr, False), "duckdb") == []


# ---------------------------------------------------------------- typing and literals

@pytest.mark.parametrize(("expr", "problem"), [
    ("lpad(status, 3, '')", "non-empty text literal"),
    ("lpad(status, 3, status)", "non-empty text literal"),
    ("split_part(status, '', 1)", "non-empty text literal as delimiter"),
    ("split_part(status, ',', 0)", "1 is the first part"),
    ("split_part(status, ',', id)", "whole-number literal"),
    ("strftime(date '2024-01-02', status)", "text literal format"),
    ("strftime(date '2024-01-02', '%Q')", "`%Q` is not portable"),
    ("strftime(date '2024-01-02', 'year %Y')", "'y' is not portable"),
    ("md5(id)", "expects text"),
    ("sign('a')", "expects int/decimal/double"),
    ("date_add('day', 1.5, date '2024-01-02')", "expects (unit, int, date or timestamp)"),
    ("date_add('fortnight', 1, date '2024-01-02')", "unknown unit"),
    ("nullif(id, 'a')", "expects two values of one type"),
    ("greatest(id, 'a')", "one type"),
])
def test_a_bad_argument_is_E031_saying_what_is_expected(expr, problem):
    codes = diagnostics(model(expr, False))
    assert [c for c, _ in codes] == ["E031"], codes
    assert problem in codes[0][1]


@pytest.mark.parametrize(("expr", "problem"), [
    ("string_agg(status, status)", "text literal separator"),
    ("quantile_cont(amount, 1.5)", "literal fraction in [0, 1]"),
    ("quantile_cont(amount, id)", "literal fraction in [0, 1]"),
])
def test_an_aggregate_needs_its_literal_arguments(expr, problem):
    codes = diagnostics(model(expr, True))
    assert [c for c, _ in codes] == ["E031"], codes
    assert problem in codes[0][1]


@pytest.mark.parametrize(("expr", "kind"), [
    ("date_add('day', 1, date '2024-01-31')", "date"),
    ("date_add('hour', 1, date '2024-01-31')", "timestamp"),
    ("date_sub('month', 1, timestamp '2024-03-31 00:00:00')", "timestamp"),
    ("sign(1.5)", "int"), ("power(2, 3)", "double"), ("median(id)", "double"),
    ("strpos('a', 'b')", "int"), ("count_if(id > 1)", "int"),
    ("nullif(null, 2.5)", "decimal(2, 1)"),
])
def test_result_types(expr, kind):
    fn = F.CATALOGUE[expr.split("(")[0]]
    module = load_text(model(expr, fn.aggregate))
    assert not module.diagnostics
    assert str(module.plan("m").output[-1].type) == kind


def test_any_value_is_not_deterministic():
    """Any row of the group, whichever the engine meets first: a snapshot's content
    would depend on the plan. E032, as now() and random()."""
    codes = diagnostics(model("any_value(status)", True))
    assert [c for c, _ in codes] == ["E032"]


def test_string_agg_is_the_same_text_whatever_the_row_order():
    """Content hashes depend on it: the values are joined in code-point order."""
    text = model("string_agg(status, ',')", True)
    query = sql(text, "duckdb")
    con = duckdb.connect()
    results = set()
    for rows in (ORDERS, ORDERS[::-1]):
        con.execute("CREATE OR REPLACE TABLE orders (id BIGINT, amount DECIMAL(10, 2), "
                    "status VARCHAR)")
        con.executemany("INSERT INTO orders VALUES (?, ?, ?)", rows)
        results.add(con.execute(query).fetchone()[0])
    assert results == {"paid,paid,void"}


def test_list_agg_is_the_same_list_whatever_the_row_order():
    """The non-NULL values in ascending order: the list, like string_agg's text, is
    content a snapshot hashes; a group of NULLs only gives NULL, not []."""
    query = sql(model("list_agg(status)", True), "duckdb")
    con = duckdb.connect()
    results = []
    for rows in (ORDERS, ORDERS[::-1], ORDERS[3:]):
        con.execute("CREATE OR REPLACE TABLE orders (id BIGINT, amount DECIMAL(10, 2), "
                    "status VARCHAR)")
        con.executemany("INSERT INTO orders VALUES (?, ?, ?)", rows)
        results.append(con.execute(query).fetchone()[0])
    assert results == [["paid", "paid", "void"], ["paid", "paid", "void"], None]


@pytest.mark.parametrize(("dialect", "spelled"), [
    ("postgres", 'ARRAY_AGG(base.status ORDER BY base.status COLLATE "C")'),
    ("spark", "ARRAY_SORT(COLLECT_LIST(base.status))"),
    ("snowflake", "WITHIN GROUP"),
])
def test_list_agg_is_ordered_by_code_point_on_each_engine(dialect, spelled):
    assert spelled in sql(model("list_agg(status)", True), dialect)


# ---------------------------------------------------------------- null-safe equality

def test_is_not_distinct_from_treats_null_as_a_value():
    text = SOURCE + """model m {
  from orders
  select id, status is not distinct from null as no_status,
         amount is distinct from 4.00 as other
}
"""
    for dialect in DIALECTS:
        rendered = sql(text, dialect)
        sqlglot.parse_one(rendered, read=dialects.get(dialect).sqlglot)
    rows = sorted(run_duckdb(sql(text, "duckdb")))
    assert rows == [(1, False, True), (2, False, False), (3, False, True), (4, True, True)]


def test_is_distinct_from_compares_like_types_only():
    codes = diagnostics(SOURCE + "model m {\n  from orders\n  select id is distinct from "
                        "'a' as x\n}\n")
    assert [c for c, _ in codes] == ["E030"]


# ---------------------------------------------------------------- regular expressions

@pytest.mark.parametrize(("expr", "problem"), [
    ("regexp_matches(status, status)", "text literal pattern"),
    ("regexp_matches(status, 'a(?i)b')", "only `(?:` groups"),
    ("regexp_matches(status, '(?=a)')", "only `(?:` groups"),
    ("regexp_matches(status, '\\bword')", "`\\b`, not portable"),
    ("regexp_matches(status, '(a)\\1')", "`\\1`, not portable"),
    ("regexp_matches(status, '[[:alpha:]]')", "no [:alpha:] classes"),
    ("regexp_matches(status, 'a{2')", "not a count"),
    ("regexp_matches(status, 'a*+')", "right after a quantifier"),
    ("regexp_matches(status, '*a')", "nothing to repeat"),
    ("regexp_matches(status, '(a')", "without its `)`"),
    ("regexp_matches(status, '[z-a]')", "backwards"),
    ("regexp_replace(status, '(a)', '\\2')", "names group 2; the pattern has 1"),
    ("regexp_replace(status, 'a', '\\x')", "`\\0`-`\\9` name groups"),
    ("regexp_replace(status, 'a', 'b', 'i')", "'g' (every match)"),
    ("regexp_extract(status, '(a)', 2)", "from 0 (the whole match) to 1"),
    ("regexp_extract(status, 'a', id)", "literal group number"),
])
def test_a_pattern_outside_the_portable_subset_is_E031(expr, problem):
    """Patterns mean RE2's reading (DuckDB's); only what every engine can be told
    exactly is accepted, each refusal saying what to write instead."""
    codes = diagnostics(model(expr, False))
    assert [c for c, _ in codes] == ["E031"], codes
    assert problem in codes[0][1], codes


@pytest.mark.parametrize(("expr", "dialect", "spelled"), [
    # `.` is never a newline, `$` the very end, \d ASCII digits, on every engine
    ("regexp_matches(status, '^a.\\d$')", "postgres", "base.status ~ '^a[^\n][0-9]$'"),
    ("regexp_matches(status, '^a.\\d$')", "spark", "base.status RLIKE '\\\\Aa[^\\n][0-9]\\\\z'"),
    ("regexp_matches(status, '^a.\\d$')", "bigquery", "REGEXP_CONTAINS(base.status, '^a[^\\n][0-9]$')"),
    # the first match only, where the engine replaces every one: a lazy prefix anchored
    ("regexp_replace(status, 'a', '<\\0>')", "spark",
     "REGEXP_REPLACE(base.status, '\\\\A([\\\\s\\\\S]*?)(a)', '$1<$2>')"),
    ("regexp_replace(status, 'a', '$', 'g')", "trino", "REGEXP_REPLACE(base.status, '(a)', '\\$')"),
    ("regexp_replace(status, 'a', 'b')", "postgres", "REGEXP_REPLACE(base.status, '(a)', 'b')"),
    ("regexp_replace(status, 'a', 'b', 'g')", "snowflake", "REGEXP_REPLACE(base.status, '(a)', 'b', 1, 0)"),
    # one capturing group left for engines that extract the one group; '' for no match
    ("regexp_extract(status, '(a)(b)', 2)", "postgres",
     "COALESCE((REGEXP_MATCH(base.status, '(?:a)(b)'))[1], '')"),
    ("regexp_extract(status, 'a')", "bigquery", "COALESCE(REGEXP_EXTRACT(base.status, '(a)'), '')"),
    ("regexp_extract(status, 'a')", "spark", "REGEXP_EXTRACT(base.status, 'a', 0)"),
])
def test_each_engine_reads_the_pattern_as_re2_does(expr, dialect, spelled):
    test_each_engine_gets_the_spelling_that_means_duckdbs_result(expr, dialect, spelled)


@pytest.mark.parametrize(("expr", "dialect", "why"), [
    # POSIX engines take the longest match: only patterns where it is the first
    ("regexp_replace(status, 'a|ab', 'x')", "postgres", "longest match"),
    ("regexp_extract(status, 'a+?')", "snowflake", "longest match"),
    ("regexp_extract(status, '(ab)+')", "postgres", "longest match"),
    # Java steps through an empty match by UTF-16 unit
    ("regexp_replace(status, 'x*', '-', 'g')", "spark", "empty matches"),
    ("regexp_replace(status, 'a*b?', '+', 'g')", "postgres", "empty matches"),
    ("regexp_replace(status, 'a', '\\\\')", "snowflake", "backslash"),
])
def test_a_regexp_an_engine_would_read_otherwise_is_E091(expr, dialect, why):
    codes = diagnostics(model(expr, False), dialect)
    assert [c for c, _ in codes] == ["E091"], codes
    assert why in codes[0][1] and dialect in codes[0][1]
    assert diagnostics(model(expr, False), "duckdb") == []


@pytest.mark.parametrize(("expr", "want"), [
    ("regexp_matches(e, '^a.b$')", False),  # `.` is not a newline
    ("regexp_matches(e, 'b$')", False),  # `$` is the end, not before a final newline
    ("regexp_extract('x', '(y)?x', 1)", ""),  # a group that took no part
    ("regexp_extract('abc', 'z')", ""),  # no match
    ("regexp_replace('aaa', 'a', 'b')", "baa"),  # the first match
    ("regexp_replace('abc', '', '-', 'g')", "-a-b-c-"),
    ("regexp_replace('a$b', '[$]', '\\\\')", "a\\b"),
])
def test_duckdb_meanings_the_renderings_keep(expr, want):
    """RE2 as DuckDB runs it: the behaviour each engine's rendering reproduces."""
    query = sql(model(expr.replace("e,", "status,"), False), "duckdb")
    con = duckdb.connect()
    con.execute("CREATE TABLE orders (id BIGINT, amount DECIMAL(10, 2), status VARCHAR)")
    con.execute("INSERT INTO orders VALUES (1, 1, ?)", ["a\nb\n"])
    assert con.execute(query).fetchall() == [(want,)]


@pytest.mark.parametrize(("expr", "hint"), [
    ("hash(status)", "md5"), ("listagg(status, ',')", "string_agg"),
])
def test_a_function_left_out_names_the_portable_one(expr, hint):
    """hash: DuckDB's is an unsigned 64-bit value (UBIGINT, beyond Strata's int) that
    no other engine computes, so it is E016 pointing to md5, the same on every engine."""
    module = load_text(model(expr, "(" in expr and "agg" in expr))
    found = [(d.code, d.hint) for d in module.diagnostics]
    assert [c for c, _ in found] == ["E016"], found
    assert hint in (found[0][1] or "")


# ---------------------------------------------------------------- try_cast

def test_try_cast_is_null_where_the_cast_fails_on_duckdb():
    query = sql(model("try_cast(status as int)", False), "duckdb")
    assert "TRY_CAST(base.status AS BIGINT)" in query
    con = duckdb.connect()
    con.execute("CREATE TABLE orders (id BIGINT, amount DECIMAL(10, 2), status VARCHAR)")
    con.executemany("INSERT INTO orders VALUES (?, 1, ?)",
                    [(1, " 2.5 "), (2, "0x1f"), (3, "1_000"), (4, "paid"), (5, None)])
    assert con.execute(query).fetchall() == [(3,), (31,), (1000,), (None,), (None,)]


@pytest.mark.parametrize(("expr", "dialect"), [
    ("try_cast(status as int)", "snowflake"), ("try_cast(status as bool)", "bigquery"),
    ("try_cast(status as int)", "trino"),
])
def test_try_cast_of_text_on_an_engine_not_checked_is_E091(expr, dialect):
    codes = diagnostics(model(expr, False), dialect)
    assert [c for c, _ in codes] == ["E091"], codes
    assert "`try_cast`" in codes[0][1] and dialect in codes[0][1]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_try_cast_that_cannot_fail_is_a_plain_cast_everywhere(dialect):
    """to text, int to double: no value fails, so every engine takes the cast."""
    text = sql(model("try_cast(id as text) || try_cast(status as text)", False), dialect)
    text += sql(model("try_cast(id as double) + try_cast(amount as double)", False), dialect)
    assert "TRY" not in text.upper() and "CAST(base.id AS" in text


@pytest.mark.parametrize(("expr", "problem"), [
    ("try_cast(status as double)", "try_cast of text to double is not supported"),
    ("try_cast(amount as int)", "try_cast of decimal(10, 2) to int is not supported"),
    ("try_cast(status as date)", "reads text as int or bool"),
])
def test_a_try_cast_strata_does_not_read_alike_is_E035(expr, problem):
    codes = diagnostics(model(expr, False))
    assert [c for c, _ in codes] == ["E035"], codes
    assert problem in codes[0][1]


@pytest.mark.parametrize(("dialect", "spelled"), [
    ("postgres", "CAST(CAST('x' || LPAD("),  # hex through a 64-bit BIT string
    ("postgres", "ROUND(CAST(REPLACE(base.status, '_', '') AS DECIMAL))"),
    ("spark", "TRY_CAST(REPLACE(base.status, '_', '') AS DECIMAL(38, 0))"),
    ("spark", "CONV("),
])
def test_try_cast_spells_duckdbs_forms_out(dialect, spelled):
    assert spelled in sql(model("try_cast(status as int)", False), dialect)


# Text made of the characters DuckDB's integer forms are built from
FORM_TEXT = st.text(alphabet="0123456789_.eE+-xXbBaf \t\n", max_size=12)


@settings(max_examples=300, deadline=None)
@given(FORM_TEXT)
def test_the_int_forms_the_engines_are_told_are_exactly_duckdbs(text):
    """The patterns PostgreSQL and Spark test before reading a number (dialects/
    try_cast.py) accept exactly what DuckDB's TRY_CAST reads, to the same value:
    a decimal rounded half away from zero, hex and binary, inside 64 bits."""
    from dialects import try_cast as D

    def value():
        if re.fullmatch(D.INT_DECIMAL[1:-1], text):
            number = Decimal(text.strip(" \t\n\r\x0b\x0c").replace("_", ""))
            return int(number.to_integral_value(rounding=ROUND_HALF_UP))
        for pattern, base in ((D.INT_HEX, 16), (D.INT_BINARY, 2)):
            if re.fullmatch(pattern[1:-1], text):
                return int(text.lstrip(" \t\n\r\x0b\x0c")[2:].replace("_", ""), base)
        return None

    want = value()
    if want is not None and not D.INT64[0] <= want <= D.INT64[1]:
        want = None
    got = duckdb.connect().execute("SELECT TRY_CAST(? AS BIGINT)", [text]).fetchone()[0]
    assert got == want


# ---------------------------------------------------------------- json_text

def _json_texts(path: str, documents: list[str | None]) -> list[tuple]:
    """json_text(status, path) of each document, run on DuckDB as Strata renders it."""
    query = sql(model(f"json_text(status, '{path}')", False), "duckdb")
    con = duckdb.connect()
    con.execute("CREATE TABLE orders (id BIGINT, amount DECIMAL(10, 2), status VARCHAR)")
    con.executemany("INSERT INTO orders VALUES (?, 1, ?)", list(enumerate(documents)))
    return con.execute(query + " ORDER BY id").fetchall()


def test_json_text_is_the_text_of_a_string_leaf_and_null_for_anything_else():
    """Numbers are NULL, not DuckDB's reprinting of them (1.50 as '1.5', 1e2 as
    '100.0'): no other engine prints them alike."""
    documents = ['{"a": "x"}', '{"a": 1.50}', '{"a": 1e2}', '{"a": true}', '{"a": null}',
                 '{"b": "x"}', '{"a": {"b": "x"}}', '{"a": ["x"]}', '["x"]', None,
                 '{"a": "caf\\u00e9 \\ud83d\\ude00 \\"q\\" \\n"}', '{"a": "x", "a": "y"}',
                 '{"a": 1, "a": "y"}', '"a"', ' { "a" : "" } ']
    assert _json_texts("$.a", documents) == [
        ("x",), (None,), (None,), (None,), (None,), (None,), (None,), (None,), (None,), (None,),
        ('café 😀 "q" \n',), ("x",), (None,), (None,), ("",)]


def test_json_text_walks_keys_and_array_indexes():
    documents = ['{"a": [{"b": "x"}, {"b": "y"}]}', '{"a": {"0": {"b": "x"}}}', '{"a": []}',
                 '{"a": [{"b": "x", "b": "z"}]}']
    assert _json_texts("$.a[1].b", documents) == [("y",), (None,), (None,), (None,)]
    assert _json_texts("$.a[0].b", documents) == [("x",), (None,), (None,), ("x",)]


@pytest.mark.parametrize("document", ['{"a": "x"', '{"a": "x"} junk', "", '{"a": "\\x"}',
                                      '{"a": "\\ud83d"}', "{'a': 'x'}"])
def test_json_text_of_malformed_json_is_an_error_not_null(document):
    with pytest.raises(duckdb.InvalidInputException, match="Malformed JSON"):
        _json_texts("$.a", [document])


@pytest.mark.parametrize(("path", "problem"), [
    ("a", "does not start with `$`"), ("$.a b", "' ' at 3"), ("$.0", "key that is not portable"),
    ("$.é", "key that is not portable"), ("$[-1]", "index that is not portable"),
    ("$[01]", "index that is not portable"), ("$.a[*]", "index that is not portable"),
    ("$..a", "key that is not portable"),
])
def test_a_json_path_outside_the_portable_subset_is_E031(path, problem):
    codes = diagnostics(model(f"json_text(status, '{path}')", False))
    assert [c for c, _ in codes] == ["E031"], codes
    assert problem in codes[0][1]


def test_a_json_path_must_be_a_literal():
    codes = diagnostics(model("json_text(status, status)", False))
    assert [c for c, _ in codes] == ["E031"] and "text literal path" in codes[0][1], codes


def test_postgres_takes_the_first_of_duplicate_keys_as_duckdb_does():
    """PostgreSQL's `->` takes the last of duplicate keys; JSON_EACH lists them in order."""
    rendered = " ".join(sql(model("json_text(status, '$.a[0]')", False), "postgres").split())
    assert "JSON_EACH(" in rendered and "WITH ORDINALITY" in rendered
    assert "ORDER BY e.n LIMIT 1" in rendered and "CAST(base.status AS JSON)" in rendered


@pytest.mark.parametrize(("dialect", "why"), [
    ("spark", "malformed JSON as NULL"), ("snowflake", "not been checked"),
    ("bigquery", "not been checked"), ("trino", "not been checked"),
])
def test_json_text_where_the_engine_reads_json_otherwise_is_E091(dialect, why):
    codes = diagnostics(model("json_text(status, '$.a')", False), dialect)
    assert [c for c, _ in codes] == ["E091"], codes
    assert "`json_text`" in codes[0][1] and dialect in codes[0][1] and why in codes[0][1]


# ---------------------------------------------------------------- strptime

def _parsed(fmt: str, texts: list[str | None]) -> list[tuple]:
    """strptime(status, fmt) of each text, run on DuckDB as Strata renders it."""
    query = sql(model(f"strptime(status, '{fmt}')", False), "duckdb")
    con = duckdb.connect()
    con.execute("CREATE TABLE orders (id BIGINT, amount DECIMAL(10, 2), status VARCHAR)")
    con.executemany("INSERT INTO orders VALUES (?, 1, ?)", list(enumerate(texts)))
    return con.execute(query + " ORDER BY id").fetchall()


def test_strptime_reads_short_fields_and_spaces_around_as_duckdb_does():
    """The texts DuckDB accepts beyond the zero-padded form: what another engine's
    rendering must accept alike before it is allowed there."""
    assert _parsed("%Y-%m-%d %H:%M:%S.%f", [
        "2024-02-29 13:04:05.5", "2024-2-9 3:4:5.000001", " 24-02-29 00:00:00.0 ", None,
    ]) == [(datetime(2024, 2, 29, 13, 4, 5, 500000),), (datetime(2024, 2, 9, 3, 4, 5, 1),),
           (datetime(24, 2, 29),), (None,)]
    assert _parsed("%y%m%d", ["690101", "681231"]) == [(datetime(1969, 1, 1),),
                                                       (datetime(2068, 12, 31),)]


@pytest.mark.parametrize("text", ["2024/02/29", "2024-13-01", "2024-02-30", "02024-02-29",
                                  "2024-02-29 00:00", "2024--2-29", ""])
def test_strptime_of_a_text_the_format_does_not_match_is_an_error_not_null(text):
    with pytest.raises((duckdb.InvalidInputException, duckdb.ConversionException)):
        _parsed("%Y-%m-%d", [text])


@pytest.mark.parametrize(("fmt", "problem"), [
    ("%b %d %Y", "`%b` is not read"), ("%A", "`%A` is not read"),
    ("%Q", "`%Q` is not portable"), ("year %Y", "'y' is not portable"),
])
def test_a_strptime_format_outside_the_numbers_it_reads_is_E031(fmt, problem):
    codes = diagnostics(model(f"strptime(status, '{fmt}')", False))
    assert [c for c, _ in codes] == ["E031"], codes
    assert problem in codes[0][1]


def test_strptime_needs_a_literal_format_and_gives_a_timestamp():
    codes = diagnostics(model("strptime(status, status)", False))
    assert [c for c, _ in codes] == ["E031"] and "text literal format" in codes[0][1], codes
    module = load_text(model("strptime(status, '%Y')", False))
    assert str(module.plan("m").output[-1].type) == "timestamp"


@pytest.mark.parametrize("dialect", ["postgres", "spark", "snowflake", "bigquery", "trino"])
def test_strptime_where_the_parser_is_not_known_to_read_as_duckdb_is_E091(dialect):
    """PostgreSQL's to_timestamp returns a value for texts DuckDB refuses; no engine's
    parser has been checked to accept exactly DuckDB's texts."""
    codes = diagnostics(model("strptime(status, '%Y-%m-%d')", False), dialect)
    assert [c for c, _ in codes] == ["E091"], codes
    assert "`strptime`" in codes[0][1] and dialect in codes[0][1]
