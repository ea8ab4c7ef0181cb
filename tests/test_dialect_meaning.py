"""Every dialect means DuckDB's result (SPEC §2, issue 15 "Every dialect executed").

Each item of the issue is a one-table module compiled with the library API for the
engine's dialect; the same rows are loaded into DuckDB and into the real engine
(PostgreSQL, Spark: tests/real_engines.py), and both run the SQL rendered for them.
The rows must agree. Snowflake, BigQuery and Trino cannot run here: their SQL is
parsed back by SQLGlot and checked for the spelling that means DuckDB's result (the
engine documentation each spelling relies on is in docs/DIALECTS.md).
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

import pytest
import sqlglot

import strata
from strata.semantics.resolve import load_text


def module(columns: dict[str, str], derive: str, step: str = "derive") -> str:
    fields = "\n".join(f"  {name}: {typ}" for name, typ in columns.items())
    return f"source t {{\n{fields}\n}}\nmodel m {{\n  from t\n  {step} {derive}\n}}\n"


def sql_for(text: str, dialect: str) -> str:
    return strata.model_sql(load_text(text), "m", dialect)


def _same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None:
            return False
        if math.isnan(float(a)) or math.isnan(float(b)):
            return math.isnan(float(a)) and math.isnan(float(b))
        return math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=1e-12)
    if isinstance(a, Decimal) or isinstance(b, Decimal):
        return a is not None and b is not None and Decimal(a) == Decimal(b)
    return a == b


def agree(engine, duckdb_engine, columns: dict[str, str], rows: list[tuple], derive: str,
          step: str = "derive") -> list[tuple]:
    """Run the module on DuckDB and on `engine`; assert the same rows (ordered by
    their text, a double compared to 12 digits); return DuckDB's rows."""
    text = module(columns, derive, step)
    for eng in (duckdb_engine, engine):
        eng.load("t", columns, rows)
    want = sorted(duckdb_engine.rows(sql_for(text, "duckdb")), key=repr)
    got = sorted(engine.rows(sql_for(text, engine.dialect)), key=repr)
    assert len(got) == len(want), (engine.name, got, want)
    for g, w in zip(got, want):
        assert all(_same(x, y) for x, y in zip(g, w)), (engine.name, g, w)
    return want


@pytest.fixture(params=["postgres_engine", "spark_engine"])
def engine(request):
    return request.getfixturevalue(request.param)


@pytest.fixture
def postgres(postgres_engine):
    return postgres_engine


# ---------------------------------------------------------------- the 12 items

def test_item1_postgres_round_double_with_digits(postgres, duckdb_engine):
    rows = agree(postgres, duckdb_engine, {"x": "double"},
                 [(1.005,), (-1.255,), (1234.5678,), (0.125,), (None,)],
                 "r = round(x, 2), h = round(x, -2)")
    assert (1.005, 1.0, 0.0) in rows  # DuckDB: round(x * 100) / 100 of the double


def test_item2_postgres_round_double_halves_away_from_zero(engine, duckdb_engine):
    rows = agree(engine, duckdb_engine, {"x": "double"},
                 [(0.5,), (2.5,), (-2.5,), (1.4999999999999998,), (7.0,)],
                 "r = round(x)")
    assert sorted(r[1] for r in rows) == [-3.0, 1.0, 1.0, 3.0, 7.0]


def test_round_of_ints_and_decimals_keeps_the_type(engine, duckdb_engine):
    agree(engine, duckdb_engine, {"i": "int", "m": "decimal(12, 2)"},
          [(15, Decimal("1.25")), (-25, Decimal("-1.25")), (7, Decimal("10.50"))],
          "ri = round(i, -1), rm = round(m, 1), rm0 = round(m)")


def test_item3_postgres_extract_dayofweek_dayofyear(engine, duckdb_engine):
    # 2024-03-03 is a Sunday (DuckDB: 0), 2024-12-31 day 366
    rows = agree(engine, duckdb_engine, {"d": "date", "ts": "timestamp"},
                 [(dt.date(2024, 3, 3), dt.datetime(2024, 3, 9, 12)),
                  (dt.date(2024, 12, 31), dt.datetime(2023, 1, 1))],
                 "dow = extract(dayofweek from d), doy = extract(dayofyear from d), "
                 "tdow = extract(dayofweek from ts), tdoy = extract(dayofyear from ts), "
                 "wk = extract(week from d), q = extract(quarter from d)")
    assert sorted((r[2], r[3]) for r in rows) == [(0, 63), (2, 366)]


def test_item4_postgres_cast_bool_to_int(engine, duckdb_engine):
    rows = agree(engine, duckdb_engine, {"b": "bool", "i": "int", "x": "double"},
                 [(True, 0, 0.5), (False, 3, 0.0), (None, None, None)],
                 "bi = cast(b as int), bx = cast(b as double), ib = cast(i as bool), "
                 "xb = cast(x as bool)")
    assert sorted((r[3], r[6]) for r in rows if r[0] is not None) == [(0, False), (1, True)]


def test_item5_postgres_week_difference_truncates(engine, duckdb_engine):
    rows = agree(engine, duckdb_engine, {"d": "date"},
                 [(dt.date(2024, 1, 1),), (dt.date(2024, 4, 30),), (dt.date(2024, 2, 29),)],
                 "weeks = date_diff('week', d, date '2024-03-01')")
    assert (dt.date(2024, 1, 1), 8) in rows  # 60 days
    assert (dt.date(2024, 4, 30), -8) in rows  # toward zero


def test_date_differences_count_boundaries(engine, duckdb_engine):
    agree(engine, duckdb_engine, {"d": "date", "e": "date"},
          [(dt.date(2024, 1, 31), dt.date(2024, 2, 1)), (dt.date(2023, 12, 31),
                                                          dt.date(2024, 1, 1)),
           (dt.date(2024, 3, 15), dt.date(2024, 1, 20))],
          "months = date_diff('month', d, e), years = date_diff('year', d, e), "
          "days = date_diff('day', d, e), quarters = date_diff('quarter', d, e)")


def test_item6_extract_second_is_whole(engine, duckdb_engine):
    rows = agree(engine, duckdb_engine, {"ts": "timestamp", "d": "date"},
                 [(dt.datetime(2024, 1, 1, 10, 20, 59, 500000), dt.date(2024, 1, 1))],
                 "s = extract(second from ts), m = extract(minute from ts), "
                 "h = extract(hour from ts), ds = extract(second from d), "
                 "dh = extract(hour from d)")
    assert rows[0][2:] == (59, 20, 10, 0, 0)


def test_item7_extract_epoch_and_dayofyear(engine, duckdb_engine):
    rows = agree(engine, duckdb_engine, {"ts": "timestamp", "d": "date"},
                 [(dt.datetime(2024, 3, 1, 10, 0, 0, 500000), dt.date(2024, 3, 1)),
                  (dt.datetime(1969, 12, 31, 23, 0), dt.date(1969, 12, 31))],
                 "e = extract(epoch from ts), de = extract(epoch from d), "
                 "doy = extract(dayofyear from ts)")
    assert sorted(r[2] for r in rows) == [-3600.0, 1709287200.5]


def test_item8_dayofweek_counts_from_sunday_zero(engine, duckdb_engine):
    days = [(dt.date(2024, 3, 3) + dt.timedelta(days=k),) for k in range(7)]
    rows = agree(engine, duckdb_engine, {"d": "date"}, days,
                 "dow = extract(dayofweek from d)")
    assert sorted(r[1] for r in rows) == list(range(7))


def test_item9_cast_double_or_decimal_to_int_rounds(engine, duckdb_engine):
    rows = agree(engine, duckdb_engine, {"x": "double", "m": "decimal(12, 2)"},
                 [(0.75, Decimal("10.50")), (2.5, Decimal("-10.50")),
                  (-2.5, Decimal("0.49")), (3.5, Decimal("1.00"))],
                 "xi = cast(x as int), mi = cast(m as int)")
    assert sorted((r[0], r[2]) for r in rows) == [(-2.5, -2), (0.75, 1), (2.5, 2), (3.5, 4)]
    assert sorted(r[3] for r in rows) == [-11, 0, 1, 11]


def test_item10_decimal_division_and_average_are_doubles(engine, duckdb_engine):
    columns = {"g": "int", "a": "decimal(15, 2)", "b": "decimal(15, 2)"}
    rows = [(1, Decimal("1.00"), Decimal("3.00")), (1, Decimal("2.00"), Decimal("7.00")),
            (2, Decimal("10.00"), Decimal("3.00"))]
    got = agree(engine, duckdb_engine, columns, rows, "q = a / b, i = g / 3")
    assert any(abs(r[3] - 1 / 3) < 1e-15 for r in got)  # not 0.333333
    avg = agree(engine, duckdb_engine, columns, rows,
                "mean = avg(b), ratio = sum(a) / sum(b), n = avg(g)",
                step="group g\n  aggregate")
    assert (1, 5.0, 0.3, 1.0) in avg


def test_item11_like_has_no_escape_character(engine, duckdb_engine):
    rows = agree(engine, duckdb_engine, {"s": "text", "p": "text"},
                 [("a\\b", "a\\b"), ("a%", "a\\%"), ("a\\x", "a\\%"), ("abc", "a_c")],
                 "lit = s like 'a\\%', col = s like p, nl = not (s like 'a\\b')")
    # DuckDB: 'a\\%' is `a`, a backslash, anything: matches a\x and a\b, not a%
    assert sorted((r[0], r[2]) for r in rows) == [("a%", False), ("a\\b", True),
                                                   ("a\\x", True), ("abc", False)]


def test_item12_spark_reads_a_file_source_by_its_absolute_path(tmp_path, monkeypatch,
                                                               spark_engine):
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = tmp_path / "mod" / "data"
    data.mkdir(parents=True)
    pq.write_table(pa.table({"id": [1, 2]}), data / "items.parquet")
    (tmp_path / "mod" / "m.strata").write_text(
        "source items = file 'data/items.parquet' {\n  id: int\n}\n"
        "model m {\n  from items\n  derive twice = id * 2\n}\n")
    monkeypatch.chdir(tmp_path / "mod")  # where the module is compiled
    text = strata.model_sql(strata.load_module(tmp_path / "mod"), "m", "spark")
    monkeypatch.chdir(tmp_path)  # and Spark runs elsewhere
    assert sorted(spark_engine.rows(text)) == [(1, 2), (2, 4)]


def test_length_of_an_empty_list_is_zero(engine, duckdb_engine):
    rows = agree(engine, duckdb_engine, {"tags": "list<text>"}, [([],), (["a", "b"],), (None,)],
                 "n = length(tags)")
    assert sorted((r[1] for r in rows), key=repr) == [0, 2, None]


# ---------------------------------------------------------------- numbers (dialects/numeric.py)

INF, NAN = math.inf, math.nan


def fails(engine, columns: dict[str, str], rows: list[tuple], derive: str) -> None:
    """`engine` raises on these rows: where DuckDB does too, the run fails on both,
    which is the same meaning."""
    engine.load("t", columns, rows)
    with pytest.raises(Exception):  # noqa: B017  each engine raises its own class
        engine.rows(sql_for(module(columns, derive), engine.dialect))


def test_division_by_zero_is_ieee(engine, duckdb_engine):
    # DuckDB's `/` divides doubles: ±inf by the operands' signs (a -0.0 divisor
    # flips it), NaN for 0 / 0 and NaN / 0; ints and decimals alike
    rows = agree(engine, duckdb_engine, {"i": "int", "x": "double", "y": "double",
                                         "m": "decimal(10, 2)"},
                 [(1, 2.0, 0.0, Decimal("1.5")), (2, -2.0, -0.0, Decimal(0)),
                  (3, 0.0, 0.0, Decimal(0)), (4, NAN, 0.0, Decimal(-1)),
                  (5, INF, -0.0, None), (6, None, 0.0, Decimal(2)), (7, 3.0, 4.0, Decimal(1))],
                 "q = x / y, ri = i / 0, mi = m / (i - i), n0 = 0 / 0")
    got = {r[0]: r[4:] for r in rows}
    assert got[1][:2] == (INF, INF) and got[2][:2] == (INF, INF)  # -2 / -0.0 = +inf
    assert got[5][0] == -INF and math.isnan(got[3][0]) and math.isnan(got[4][0])
    assert got[4][2] == -INF and math.isnan(got[3][2]) and got[6][0] is None
    assert got[7][0] == 0.75 and math.isnan(got[7][3])


def test_remainder_by_zero(duckdb_engine, spark_engine, postgres_engine):
    # a double's `%` is fmod and NaN by zero in DuckDB; Spark raises by zero: NaN
    # written out. PostgreSQL has no exact fmod of doubles: E091, naming `%`.
    columns = {"x": "double", "y": "double"}
    rows = agree(spark_engine, duckdb_engine, columns,
                 [(7.5, 2.0), (-7.5, 2.0), (7.5, -2.0), (7.5, 0.0), (None, 0.0)],
                 "r = x % y, z = x % 0")
    assert sorted((r[2] for r in rows if r[0] is not None and r[1]), key=repr) == [-1.5, 1.5, 1.5]
    assert all(math.isnan(r[3]) for r in rows if r[0] is not None)
    with pytest.raises(strata.StrataError) as err:
        sql_for(module(columns, "r = x % y"), "postgres")
    assert err.value.code == "E091" and "postgres" in str(err.value) and "`%`" in str(err.value)
    # an integer `% 0` raises in DuckDB and on both engines alike
    for eng in (duckdb_engine, spark_engine, postgres_engine):
        fails(eng, {"i": "int"}, [(5,)], "r = i % 0")


def test_text_cast_to_int_reads_a_decimal(engine, duckdb_engine):
    rows = agree(engine, duckdb_engine, {"i": "int", "s": "text"},
                 [(1, "2.5"), (2, " 12 "), (3, "-2.5"), (4, "1e3"), (5, "0.5"), (6, "-0.5"),
                  (7, "2.4999999999999999999"), (8, None), (9, "+7"), (10, ".5")],
                 "c = cast(s as int)")
    assert [r[2] for r in sorted(rows)] == [3, 12, -3, 1000, 1, -1, 2, None, 7, 1]
    for bad in ("abc", "99999999999999999999"):  # DuckDB raises; so does the engine
        for eng in (duckdb_engine, engine):
            fails(eng, {"s": "text"}, [(bad,)], "c = cast(s as int)")


def test_text_cast_to_bool_takes_duckdbs_words_only(engine, duckdb_engine):
    words = ["TRUE", "t", "Yes", "y", "1", "0", "n", "No", "False", "F", None]
    rows = agree(engine, duckdb_engine, {"s": "text"}, [(w,) for w in words],
                 "b = cast(s as bool)")
    assert sum(r[1] is True for r in rows) == 5 and sum(r[1] is False for r in rows) == 5
    for bad in ("on", " true ", "tr"):  # PostgreSQL reads all three, Spark the second
        for eng in (duckdb_engine, engine):
            fails(eng, {"s": "text"}, [(bad,)], "b = cast(s as bool)")


def _doubles(count: int, seed: int) -> list[float]:
    """Doubles where rounding is hard: halves at several scales and their neighbours,
    random magnitudes up to the largest double, random bit patterns, specials."""
    import random
    import struct

    rng = random.Random(seed)
    out = [0.0, -0.0, INF, -INF, NAN, 5e-324, -5e-324, 1.7976931348623157e308, 2.0 ** 52 + 0.5,
           4503599627370495.5, 0.49999999999999994, 2.675, 1.005, -40.40745, 1e308, 1234.5]
    while len(out) < count:
        kind = rng.randrange(5)
        if kind == 0:
            x = (rng.randint(-10 ** 7, 10 ** 7) + 0.5) / 10 ** rng.randint(0, 8)
        elif kind == 1:
            x = math.nextafter((rng.randint(-10 ** 5, 10 ** 5) + 0.5) * 10.0 ** rng.randint(-3, 3),
                               rng.choice([0.0, INF]))
        elif kind == 2:
            x = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
        elif kind == 3:
            x = rng.uniform(-1e20, 1e20) * 10.0 ** rng.randint(-300, 280)
        else:
            x = rng.uniform(-1e4, 1e4)
        out.append(x)
    return out


def _bits(value):
    """A double compared bit for bit (but every NaN alike, and -0.0 as 0.0: Spark
    normalises the zero's sign in its rows)."""
    if isinstance(value, float):
        return "nan" if math.isnan(value) else value + 0.0
    return value


ROUND_DIGITS = (0, 1, 2, 3, 4, 5, 8, 12, 15, 22, 300, 400, -1, -2, -3, -6, -293, -400)


def test_round_of_doubles_is_duckdbs_bit_for_bit(engine, duckdb_engine):
    # DuckDB: C round of x * 10^n, a scaled double exactly halfway decided by the exact
    # product (round(2.675, 2) = 2.67); x when that overflows; n < 0 divides instead
    columns = {"k": "int", "x": "double"}
    rows = [(k, x) for k, x in enumerate(_doubles(2500, seed=15))]
    derive = ", ".join(f"r{i} = round(x, {n})" for i, n in enumerate(ROUND_DIGITS))
    text = module(columns, derive + ", r = round(x), t3 = round(x + 0.5, 2), d3 = round(x - 0.25)")
    for eng in (duckdb_engine, engine):
        eng.load("t", columns, rows)
    want = {r[0]: tuple(map(_bits, r)) for r in duckdb_engine.rows(sql_for(text, "duckdb"))}
    got = {r[0]: tuple(map(_bits, r)) for r in engine.rows(sql_for(text, engine.dialect))}
    wrong = [(want[k], got[k]) for k in want if want[k] != got[k]]
    assert not wrong, wrong[:3]
    assert want[11][2 + ROUND_DIGITS.index(2)] == 2.67 and want[12][2 + 2] == 1.0


def test_round_names_a_computed_operand_once(engine, duckdb_engine):
    # the exact formula reads its operand a dozen times: a computed one is bound once
    # (a scalar subquery, a lambda), not repeated
    columns = {"g": "int", "x": "double"}
    rows = agree(engine, duckdb_engine, columns,
                 [(1, 2.675), (1, 2.675), (2, 1.0), (2, 0.005), (3, None)],
                 "r = round(sum(x) / count(x), 2), c = cast(sum(x) / 2 as decimal(12, 2))",
                 step="group g\n  aggregate")
    assert {r[0]: r[1:] for r in rows}[1] == (2.67, Decimal("2.68"))
    sql = sql_for(module(columns, "r = round(ln(x + 1) * 3, 2)"), engine.dialect)
    assert sql.count("x + 1") == 1, sql  # a function's argument, or bound once


def test_round_of_a_division_by_a_parenthesized_sum_keeps_the_double_rule(engine,
                                                                           duckdb_engine):
    # 5.35 / (1 + 1) is the double just below 2.675: DuckDB rounds it to 2.67. The
    # divisor in parentheses once hid the quotient's type from round, which then
    # rounded in NUMERIC (2.68, and a decimal column where DuckDB's is a double)
    rows = agree(engine, duckdb_engine, {"k": "int", "x": "double"}, [(1, 5.35), (3, 1.0)],
                 "r = round(x / (k + 1), 2), n = round(round(x / (k + 1), 3) / (k + 2), 1)")
    got = {r[0]: r[2:] for r in rows}
    assert got[1] == (2.67, 0.9) and all(isinstance(v, float) for v in got[1])


AGGREGATE_ROUNDS = ("r = round(sum(x) / count(), 2), k = round(cast(count() as double) / 3, 2), "
                    "q = round(round(sum(x) / count(), 3) * 7.77, 1), a = round(avg(x) * 1.5)")


def test_round_of_an_aggregate_keeps_the_aggregate_in_its_query(engine, duckdb_engine):
    # examples/shop region_sales: round(revenue / order_count, 2) gave the revenue on
    # PostgreSQL, as COUNT(*) moved into the scalar subquery naming the operand counted
    # that subquery's one row. An operand holding an aggregate is repeated instead.
    columns = {"g": "int", "x": "double"}
    data = [(1, 2.675), (1, 2.675), (1, 5.51), (2, 1.0), (2, 0.005), (3, None)]
    rows = agree(engine, duckdb_engine, columns, data, AGGREGATE_ROUNDS,
                 step="group g\n  aggregate")
    assert {r[0]: r[1:] for r in rows}[1] == (3.62, 1.0, 28.1, 5.0)
    [total] = agree(engine, duckdb_engine, columns, data, AGGREGATE_ROUNDS, step="aggregate")
    assert total[:2] == (1.98, 2.0)


def test_round_of_a_window_function_keeps_it_in_its_query(engine, duckdb_engine):
    # ROW_NUMBER() moved into a scalar subquery would number that subquery's one row
    columns = {"g": "int", "x": "double", "n": "int"}
    rows = agree(engine, duckdb_engine, columns,
                 [(1, 2.675, 2), (1, 2.675, 1), (1, 5.51, -1), (2, 1.0, 0), (2, 0.005, 3),
                  (3, None, None)],
                 "r = round(sum(x) / count(), 2), rn = round(row_number() / 3, 1), "
                 "rr = round(round(lag(x) * 3.3, 2) * 1.1, 1)", step="window by g order n\n  derive")
    assert {(r[0], r[2]): r[3:] for r in rows}[(1, 2)] == (3.62, 1.0, 9.7)


def test_double_cast_to_decimal_rounds_the_scaled_double(engine, duckdb_engine):
    # DuckDB: x * 10^s as a double, rounded half away: 1.005 -> 1.00 (100.49999..),
    # 2.675 -> 2.68 (267.5 exactly), 0.125 -> 0.13; engines round the decimal text
    rows = agree(engine, duckdb_engine, {"x": "double"},
                 [(1.005,), (2.675,), (0.125,), (-0.125,), (1.015,), (None,), (-2.5,),
                  (123456.785,), (0.0,)],
                 "c = cast(x as decimal(10, 2)), c0 = cast(x as decimal(12, 0)), "
                 "c4 = cast(x as decimal(18, 4))")
    got = {r[0]: r[1] for r in rows if r[0] is not None}
    assert got[1.005] == Decimal("1.00") and got[2.675] == Decimal("2.68")
    assert got[-0.125] == Decimal("-0.13") and got[1.015] == Decimal("1.01")
    for eng in (duckdb_engine, engine):  # out of range, NaN: a failed run everywhere
        for bad in (1e9, NAN):
            fails(eng, {"x": "double"}, [(bad,)], "c = cast(x as decimal(10, 2))")


# ---------------------------------------------------------------- dates and text

def test_timestamp_date_differences_count_boundaries(engine, duckdb_engine):
    # every unit on timestamps: boundaries crossed (a second apart across midnight is
    # a day, a month, a year), negative differences, weeks = day boundaries / 7
    ts = dt.datetime.fromisoformat
    rows = [(1, ts("2024-01-31 23:59:59"), ts("2024-02-01 00:00:01")),
            (2, ts("2024-02-01 00:00:01"), ts("2024-01-31 23:59:59")),
            (3, ts("2023-12-31 23:00:00"), ts("2024-01-01 01:00:00")),
            (4, ts("2024-03-10 10:30:59.900"), ts("2024-03-10 10:31:00.100")),
            (5, ts("2024-01-01 00:00:00"), ts("2025-06-15 12:34:56")),
            (6, ts("2025-06-15 12:34:56"), ts("2024-01-01 00:00:00")),
            (7, ts("2024-01-01 23:00:00"), ts("2024-01-08 01:00:00")),
            (8, None, ts("2024-01-01 00:00:00")),
            (9, ts("1969-12-31 23:59:59.5"), ts("1970-01-01 00:00:00.5"))]
    got = agree(engine, duckdb_engine, {"i": "int", "a": "timestamp", "b": "timestamp"}, rows,
                ", ".join(f"{u[0]}{u[-1]} = date_diff('{u}', a, b)" for u in
                          ("year", "quarter", "month", "week", "day", "hour", "minute",
                           "second")))
    by = {r[0]: r[3:] for r in got}
    assert by[1] == (0, 0, 1, 0, 1, 1, 1, 2) and by[3] == (1, 1, 1, 0, 1, 2, 120, 7200)
    assert by[5][3] == 75 and by[6][3] == -75 and by[7][3] == 1  # 7 day boundaries


def test_substr_positions_as_duckdb(engine, duckdb_engine):
    # start 0, negative starts (from the end), negative lengths (before start)
    starts, lengths = (-7, -3, -1, 0, 1, 2, 6), (-3, -1, 0, 1, 2, 9)
    derive = ", ".join(f"s{i}_{j} = substr(s, {a}, {b})" for i, a in enumerate(starts)
                       for j, b in enumerate(lengths))
    derive += ", open0 = substr(s, 0), openn = substr(s, -2), col = substr(s, k, k - 3)"
    rows = agree(engine, duckdb_engine, {"k": "int", "s": "text"},
                 [(0, "hello"), (2, ""), (-2, None), (4, "héllo wörld"), (1, "👍🏽x")], derive)
    hello = next(r for r in rows if r[1] == "hello")
    assert hello[2 + starts.index(0) * len(lengths) + lengths.index(2)] == "h"
    assert hello[2 + starts.index(2) * len(lengths) + lengths.index(-1)] == "h"


def test_trim_removes_unicode_spaces_only(engine, duckdb_engine):
    rows = agree(engine, duckdb_engine, {"s": "text"},
                 [("\u00a0y\u3000",), (" \t x \n ",), ("\u2003 z \u202f",), (None,), ("  ",)],
                 "t = trim(s)")
    assert sorted((r[1] for r in rows), key=repr) == ["", "\t x \n", "y", "z", None]


def test_sum_of_ints_is_not_bounded_by_int64(engine, duckdb_engine):
    rows = agree(engine, duckdb_engine, {"g": "int", "i": "int"},
                 [(1, 9223372036854775807), (1, 1), (2, -3), (2, None)],
                 "s = sum(i)", step="group g\n  aggregate")
    assert sorted(r[1] for r in rows) == [-3, 9223372036854775808]


def test_text_orders_by_code_point(engine, duckdb_engine):
    # DuckDB: 'B' < 'a' < 'é' (code points); a PostgreSQL database in en_US says
    # 'a' < 'B': the rendering says COLLATE "C" wherever text is ordered
    rows = agree(engine, duckdb_engine, {"g": "int", "s": "text", "t": "text"},
                 [(1, "a", "B"), (1, "é", "z"), (2, "", " "), (2, "ß", "ss")],
                 "lo = min(s), hi = max(t)", step="group g\n  aggregate")
    assert sorted(rows) == [(1, "a", "z"), (2, "", "ss")]
    pairs = agree(engine, duckdb_engine, {"s": "text", "t": "text"},
                  [("a", "B"), ("é", "z"), ("", " "), ("ß", "ss"), ("Z", "a")],
                  "lt = s < t, ge = s >= t")
    assert sorted(pairs) == [("", " ", True, False), ("Z", "a", True, False),
                             ("a", "B", False, True), ("ß", "ss", False, True),
                             ("é", "z", False, True)]
    if engine.name == "postgres":
        columns = {"s": "text", "t": "text"}
        assert 'base.s COLLATE "C" < base.t' in sql_for(module(columns, "lt = s < t"),
                                                        "postgres")
        assert 'MIN(base.s COLLATE "C")' in sql_for(
            module(columns, "lo = min(s)", "group t\n  aggregate"), "postgres")


def test_upper_of_sharp_s_differs_per_engine(engine, duckdb_engine):
    # a known limit (docs/DIALECTS.md): DuckDB's upper('ß') is U+1E9E, PostgreSQL
    # keeps 'ß', Spark writes 'SS'; no faithful spelling, so this pins the behaviour
    columns = {"s": "text"}
    text = module(columns, "u = upper(s)")
    for eng in (duckdb_engine, engine):
        eng.load("t", columns, [("straße",)])
    assert duckdb_engine.rows(sql_for(text, "duckdb")) == [("straße", "STRA\u1e9eE")]
    want = {"postgres": "STRAßE", "spark": "STRASSE"}[engine.name]
    assert engine.rows(sql_for(text, engine.dialect)) == [("straße", want)]


def test_spark_refuses_a_double_as_text():
    with pytest.raises(strata.StrataError) as err:
        sql_for(module({"x": "double"}, "t = cast(x as text)"), "spark")
    assert err.value.code == "E091" and "spark" in str(err.value)


def test_postgres_prints_a_double_as_duckdb(postgres, duckdb_engine):
    # DuckDB prints the shortest round-trip digits as Python's repr: '0.0', '-0.0',
    # '1000000000000000.0', '1e+16', '1e-05', 'inf', 'nan'; PostgreSQL's own text
    # had '0', '-0', '1e+15', 'Infinity'
    columns = {"k": "int", "x": "double"}
    special = [0.0, -0.0, 2.0, 1e20, 1.5, 1e-7, 123456789.0, 1e15, -1.5e15, 9007199254740993.0,
               1e16, 0.0001, 1e-5, 0.1, 5e-324, 1.7976931348623157e308, INF, -INF, NAN, None]
    rows = list(enumerate(special + _doubles(1500, seed=4)))
    for eng in (duckdb_engine, postgres):
        eng.load("t", columns, rows)
    text = module(columns, "s = cast(x as text), h = cast(-x as text)")
    want = sorted(duckdb_engine.rows(sql_for(text, "duckdb")), key=lambda r: r[0])
    got = sorted(postgres.rows(sql_for(text, "postgres")), key=lambda r: r[0])
    wrong = [(w, g) for w, g in zip(want, got) if w[2:] != g[2:]]
    assert len(got) == len(want) and not wrong, wrong[:5]
    shown = {r[0]: r[2] for r in want}
    assert [shown[i] for i in (0, 1, 2, 7, 10, 16, 18)] == [
        "0.0", "-0.0", "2.0", "1000000000000000.0", "1e+16", "inf", "nan"]


def test_spark_adds_a_bigint_count_of_days(spark_engine, duckdb_engine):
    # Spark's DATE_ADD takes an INT count: a Strata int column is cast (and past 32
    # bits the run fails, as DuckDB's date + n does)
    columns = {"d": "date", "b": "int", "ts": "timestamp"}
    rows = agree(spark_engine, duckdb_engine, columns,
                 [(dt.date(2024, 1, 31), 1, dt.datetime(2024, 1, 1, 12)),
                  (dt.date(2024, 3, 1), -1, None), (None, 5, dt.datetime(2024, 2, 28)),
                  (dt.date(2024, 1, 1), None, dt.datetime(2024, 1, 1))],
                 "p = d + b, m = d - b, q = ts + b")
    assert (dt.date(2024, 3, 1), -1, None, dt.date(2024, 2, 29), dt.date(2024, 3, 2), None) in rows
    for eng in (duckdb_engine, spark_engine):
        fails(eng, {"d": "date", "b": "int"}, [(dt.date(2024, 1, 1), 3_000_000_000)], "p = d + b")


def test_average_of_doubles_does_not_overflow_on_postgres(engine, duckdb_engine):
    # PostgreSQL's avg(float8) also sums the squares: 1e300 overflowed. DuckDB's avg
    # is the sum over the count, NULL on no values; windowed alike
    columns = {"g": "int", "x": "double", "i": "int"}
    data = [(1, 1e300, 1), (1, 3.0, 2), (2, None, 3), (3, 0.1, 4), (3, 0.2, 5), (3, 0.3, 6),
            (4, 1e16, 7), (4, 1.0, 8), (4, -1e16, 9), (4, 1.0, 10)]
    rows = agree(engine, duckdb_engine, columns, data, "a = avg(x), r = round(avg(x), 2), "
                 "n = avg(i)", step="group g\n  aggregate")
    assert {r[0]: r[1] for r in rows}[1] == 5e299 and {r[0]: r[1] for r in rows}[2] is None
    agree(engine, duckdb_engine, columns, data, "a = avg(x), r = round(avg(x) * 3, 1)",
          step="window by g order i\n  derive")


def test_round_takes_a_literal_count_of_digits():
    # DuckDB has no round(DOUBLE, BIGINT) (Strata's int column) and rounds a decimal
    # only to a constant scale; Spark's ROUND wants a constant too: E031 with a hint
    for typ in ("double", "decimal(10, 2)", "int"):
        with pytest.raises(strata.StrataError) as err:
            sql_for(module({"x": typ, "n": "int"}, "r = round(x, n)"), "duckdb")
        assert err.value.code == "E031" and "round(x, 2)" in str(err.value)
    assert "ROUND(base.x, -2)" in sql_for(module({"x": "double"}, "r = round(x, -2)"), "duckdb")


# ---------------------------------------------------------------- engines not here

NOT_HERE = ("snowflake", "bigquery", "trino")
ITEMS = module({"x": "double", "m": "decimal(12, 2)", "b": "bool", "d": "date",
                "ts": "timestamp", "s": "text", "tags": "list<text>"},
               "r2 = round(x, 2), r0 = round(x), dow = extract(dayofweek from d), "
               "doy = extract(dayofyear from d), bi = cast(b as int), "
               "wk = date_diff('week', d, date '2024-03-01'), sec = extract(second from ts), "
               "ep = extract(epoch from ts), wn = extract(week from d), xi = cast(x as int), "
               "mi = cast(m as int), q = m / m, lk = s like 'a\\%', "
               "later = ts > '2024-01-01', shown = cast(ts as text), "
               "cm = cast(x as decimal(12, 2))")


def _select(dialect: str, text: str = ITEMS) -> str:
    return " ".join(sql_for(text, dialect).split())


@pytest.mark.parametrize("dialect", NOT_HERE)
def test_every_item_parses_back_in_its_dialect(dialect):
    sqlglot.parse_one(sql_for(ITEMS, dialect), read=dialect)


def test_snowflake_expand_items_are_cast_from_variant():
    text = ("source t {\n  id: int\n  tags: list<text>\n}\nmodel m {\n  from t\n"
            "  expand tags as tag\n  derive up = upper(tag)\n}\n")
    sql = _select("snowflake", text)
    assert "UPPER(CAST(__expand_1.tag AS VARCHAR))" in sql, sql
    assert "FLATTEN(INPUT => base.tags)" in sql
    sqlglot.parse_one(sql, read="snowflake")


def test_snowflake_week_parts_do_not_follow_the_session():
    sql = _select("snowflake")
    assert "DATE_PART(DAYOFWEEKISO, base.d) % 7 AS dow" in sql
    assert "DATE_PART(WEEKISO, base.d) AS wn" in sql
    assert "DATE_PART(EPOCH_MICROSECOND, CAST(base.ts AS TIMESTAMPNTZ)) / 1000000" in sql


def test_trino_spells_parts_coerces_text_and_prints_timestamps_as_duckdb():
    sql = _select("trino")
    assert "EXTRACT(DOW FROM base.d) % 7 AS dow" in sql
    assert "EXTRACT(DOY FROM base.d) AS doy" in sql
    assert "base.ts > CAST('2024-01-01' AS TIMESTAMP) AS later" in sql
    assert ("REGEXP_REPLACE(CAST(base.ts AS VARCHAR), '(\\.[0-9]*[1-9])0+$|\\.0+$', '$1')"
            in sql), sql
    assert "DATE_DIFF('MILLISECOND', CAST('1970-01-01 00:00:00' AS TIMESTAMP)" in sql


def test_bigquery_epoch_iso_week_and_decimal_casts():
    sql = _select("bigquery")
    assert "UNIX_MICROS(CAST(base.ts AS TIMESTAMP)) / 1000000" in sql
    assert "EXTRACT(ISOWEEK FROM base.d) AS wn" in sql
    assert "EXTRACT(DAYOFWEEK FROM base.d) - 1 AS dow" in sql
    # DuckDB's cast of a double to decimal(p, 2): the scaled double rounded half away,
    # as an INT64, times an exact NUMERIC 0.01 (a bare 0.01 is a FLOAT64 there); not
    # ROUND(x, 2), which is round's spelling and gives 2.68 where round gives 2.67
    assert "AS INT64) AS NUMERIC) * CAST('0.01' AS NUMERIC) AS NUMERIC) AS cm" in sql, sql
    assert "base.x * 100.0 AS __v" in sql
