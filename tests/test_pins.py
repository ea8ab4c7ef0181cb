"""Pins, contracts and join cardinality (SPEC §1.5, §3.8), on real DuckDB files through
the CLI: each pin kind passing and failing, nothing published on failure, fan-out
caught, `join many` allowed, and the verified-unique exemption of the fan-out check.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from strata.cli import compile_cmds, run_cmds  # noqa: F401  (registers commands)
from strata.cli.main import cli
from strata.engine.pins.checks import check_pins
from strata.engine.pins.joins import check_joins
from strata.engine.pins.results import CheckLog, PinError
from strata.semantics.resolve import load_module

SOURCES = """\
source orders {
  id: int
  customer_id: int
  amount: double
  status: text
}

source customers {
  id: int
  name: text
  region: text
}
"""

ORDERS = [(1, 10, 5.0, "paid"), (2, 10, 7.0, "paid"), (3, 11, 9.0, "void"),
          (4, 12, 1.0, "paid")]
CUSTOMERS = [(10, "Ann", "eu"), (11, "Bo", "us"), (12, "Cy", "eu")]


class Project:
    """A module file and a warehouse file in a temp dir, the CLI run in-process."""

    def __init__(self, tmp: Path, models: str, orders=ORDERS, customers=CUSTOMERS):
        self.dir = tmp
        self.module = tmp / "m.strata"
        self.warehouse = tmp / "w.duckdb"
        self.write(models)
        self.load(orders, customers)

    def write(self, models: str) -> None:
        self.module.write_text(SOURCES + models)

    def load(self, orders=ORDERS, customers=CUSTOMERS) -> None:
        con = duckdb.connect(str(self.warehouse))
        con.execute("CREATE OR REPLACE TABLE orders (id BIGINT, customer_id BIGINT, "
                    "amount DOUBLE, status VARCHAR)")
        con.execute("CREATE OR REPLACE TABLE customers (id BIGINT, name VARCHAR, "
                    "region VARCHAR)")
        if orders:
            con.executemany("INSERT INTO orders VALUES (?, ?, ?, ?)", orders)
        if customers:
            con.executemany("INSERT INTO customers VALUES (?, ?, ?)", customers)
        con.close()

    def cli(self, *args: str):
        return CliRunner().invoke(cli, [a.replace("{m}", str(self.module))
                                        .replace("{w}", str(self.warehouse)) for a in args])

    def run(self, *extra: str):
        result = self.cli("run", "{m}", "-o", "{w}", "--json", *extra)
        data = json.loads(result.stdout) if result.stdout.strip() else None
        return result.exit_code, data

    def state(self) -> dict:
        """Everything a failed run must leave as it was: views, history, registry,
        internal objects."""
        con = duckdb.connect(str(self.warehouse), read_only=True)
        try:
            def all_(sql):
                try:
                    return sorted(map(tuple, con.execute(sql).fetchall()))
                except duckdb.CatalogException:
                    return []
            return {
                "views": all_("SELECT schema_name, view_name, sql FROM duckdb_views() "
                              "WHERE NOT internal AND schema_name <> 'strata_internal'"),
                # a failed run appends only its `failed` record (tests/test_failed_runs.py)
                "history": all_("SELECT seq, id, entry FROM strata_internal.history "
                                "WHERE kind <> 'failed'"),
                "snapshots": all_("SELECT name, content_hash FROM strata_internal.snapshots"),
                "objects": all_("SELECT table_name FROM duckdb_tables() "
                                "WHERE schema_name = 'strata_internal'")
                + all_("SELECT view_name FROM duckdb_views() "
                       "WHERE schema_name = 'strata_internal' AND NOT internal"),
            }
        finally:
            con.close()


def model_report(data: dict, name: str) -> dict:
    return next(m for m in data["models"] if m["model"] == name)


def error_of(data: dict) -> dict:
    assert "error" in data, data
    return data["error"][0]


PAID = """
model paid {{
  from orders
  filter status = 'paid'
  select id, customer_id, amount
  {pins}
}}
"""


def paid(pins: str) -> str:
    return PAID.format(pins=pins)


# ---------------------------------------------------------------- each pin kind
@pytest.mark.parametrize("pin", [
    "pin unique [id]",
    "pin unique [id, customer_id]",
    "pin not_null [id, customer_id]",
    "pin rows >= 3",
    "pin rows <= 3",
    "pin rows = 3",
    "pin rows between 1 and 3",
    "pin columns { id: int, customer_id: int, amount: double }",
])
def test_each_pin_passes_and_is_reported(tmp_path, pin):
    p = Project(tmp_path, paid(pin))
    code, data = p.run()
    assert code == 0, data
    assert data["status"] == "published"
    assert model_report(data, "paid")["checks"] == [pin.replace("{ ", "{ ").strip()]


@pytest.mark.parametrize("pin, code, words", [
    ("pin unique [customer_id]", "E061", ["pin unique [customer_id]", "1 value(s)",
                                          "shared by 2 rows", "customer_id=10", "rows=2"]),
    ("pin not_null [customer_id]", "E062", ["pin not_null [customer_id]", "1 row(s) with NULL",
                                            "customer_id: 1", "id=5"]),
    ("pin rows >= 10", "E063", ["pin rows >= 10", "has 4 rows"]),
    ("pin rows <= 2", "E063", ["pin rows <= 2", "has 4 rows"]),
    ("pin rows = 3", "E063", ["pin rows = 3", "has 4 rows"]),
    ("pin rows between 5 and 9", "E063", ["pin rows between 5 and 9", "has 4 rows"]),
])
def test_each_pin_fails_with_its_code_and_publishes_nothing(tmp_path, pin, code, words):
    p = Project(tmp_path, paid(""))
    # a first good run: the live views and history a failed run must leave alone
    assert p.run()[0] == 0
    before = p.state()
    assert before["views"] and before["history"]
    p.write(paid(pin))
    p.load(orders=[*ORDERS, (5, None, 2.0, "paid")])
    exit_code, data = p.run()
    assert exit_code == 1
    err = error_of(data)
    assert err["code"] == code
    text = err["message"] + " ".join(err["notes"])
    assert "model `paid`" in err["message"]
    for word in words:
        assert word in text, (word, text)
    assert err["hint"].endswith("nothing was published")
    assert p.state() == before


def test_violation_is_rendered_with_the_pin_span(tmp_path):
    p = Project(tmp_path, paid("pin unique [customer_id]"))
    result = p.cli("run", "{m}", "-o", "{w}")
    assert result.exit_code == 1
    assert "error[E061]" in result.stderr
    assert "pin unique [customer_id]" in result.stderr
    assert "m.strata:" in result.stderr  # points at the pin in the module


def test_every_violated_pin_of_a_model_is_reported(tmp_path):
    p = Project(tmp_path, paid("pin unique [customer_id]\n  pin rows >= 10"))
    code, data = p.run()
    assert code == 1
    assert [e["code"] for e in data["error"]] == ["E061", "E063"]


def test_unique_counts_null_as_a_value(tmp_path):
    """Decided: two rows whose key is NULL share it (use not_null to forbid NULL)."""
    p = Project(tmp_path, paid("pin unique [customer_id]"),
                orders=[(1, None, 1.0, "paid"), (2, None, 2.0, "paid"), (3, 7, 1.0, "paid")])
    code, data = p.run()
    assert code == 1 and error_of(data)["code"] == "E061"
    assert "customer_id=null" in " ".join(error_of(data)["notes"])
    p.load(orders=[(1, None, 1.0, "paid"), (2, 7, 2.0, "paid")])
    assert p.run()[0] == 0


def test_contract_checked_against_the_real_schema(tmp_path):
    """The compile-time check trusts the declared source types; a table whose `amount`
    is DECIMAL passes the source contract (a decimal fits a double column) but the
    model's real output is DECIMAL, not the double its contract promises."""
    p = Project(tmp_path, paid("pin columns { id: int, customer_id: int, amount: double }"))
    con = duckdb.connect(str(p.warehouse))
    con.execute("CREATE TABLE orders_dec AS SELECT id, customer_id, "
                "CAST(amount AS DECIMAL(10, 2)) AS amount, status FROM orders")
    con.close()
    assert p.run()[0] == 0
    before = p.state()
    code, data = p.run("--override", "orders=orders_dec")
    assert code == 1
    err = error_of(data)
    assert err["code"] == "E060"
    assert "`amount` as DECIMAL(10,2), the contract says double" in err["message"]
    assert p.state() == before


def test_contract_checked_at_compile_time(tmp_path):
    p = Project(tmp_path, paid("pin columns { id: int, amount: text }"))
    result = p.cli("check", "{m}", "--json")
    assert result.exit_code == 1
    diags = json.loads(result.stdout)
    assert [d["code"] for d in diags] == ["E060"]
    assert "`customer_id` is not in the contract" in diags[0]["message"]
    assert "`amount` is double, the contract says text" in diags[0]["message"]


def test_stage_only_checks_pins_too(tmp_path):
    p = Project(tmp_path, paid(""))
    assert p.run()[0] == 0
    before = p.state()
    p.write(paid("pin rows >= 10"))
    code, data = p.run("--stage-only")
    assert code == 1 and error_of(data)["code"] == "E063"
    assert p.state() == before
    p.write(paid("pin rows >= 1"))
    code, data = p.run("--stage-only")
    assert code == 0 and data["status"] == "staged"
    assert model_report(data, "paid")["checks"] == ["pin rows >= 1"]


# ---------------------------------------------------------------- join fan-out
JOINED = """
model enriched {{
  from orders
  join{many} customers as c on customer_id = c.id
  select id, customer_id, c.name as name
}}
"""


def test_fan_out_is_caught_with_join_key_and_sample(tmp_path):
    p = Project(tmp_path, JOINED.format(many=""))
    assert p.run()[0] == 0
    before = p.state()
    p.load(customers=[*CUSTOMERS, (10, "Ann again", "us"), (10, "Ann thrice", "us")])
    code, data = p.run()
    assert code == 1
    err = error_of(data)
    assert err["code"] == "E064"
    assert "join customers as c on customer_id = c.id" in err["message"]
    assert "1 key value(s) of `c` match several rows" in err["message"]
    assert "2 left row(s)" in err["message"]  # orders 1 and 2 have customer 10
    assert "id=10, rows=3" in " ".join(err["notes"])
    assert p.state() == before


def test_join_many_allows_fan_out(tmp_path):
    p = Project(tmp_path, JOINED.format(many=" many"),
                customers=[*CUSTOMERS, (10, "Ann again", "us")])
    code, data = p.run()
    assert code == 0, data
    report = model_report(data, "enriched")
    assert report["rows"] == 6
    assert report["skipped_checks"] == [{
        "check": "join many customers as c on customer_id = c.id",
        "reason": "`many`: the join may match several rows"}]


def test_right_duplicates_no_left_row_matches_are_harmless(tmp_path):
    p = Project(tmp_path, JOINED.format(many=""),
                customers=[*CUSTOMERS, (99, "x", "eu"), (99, "y", "eu"),
                           (None, "n1", "eu"), (None, "n2", "eu")])
    code, data = p.run()
    assert code == 0, data
    assert model_report(data, "enriched")["checks"] == [
        "join customers as c on customer_id = c.id"]


def test_join_left_fan_out_is_caught_too(tmp_path):
    p = Project(tmp_path, JOINED.format(many="_left").replace("join_left", "join_left"),
                customers=[*CUSTOMERS, (12, "Cy again", "us")])
    code, data = p.run()
    assert code == 1 and error_of(data)["code"] == "E064"


def test_fan_out_on_a_text_key_and_a_right_filter(tmp_path):
    """Keys need not be integers, and a condition on the right side alone filters the
    right rows the check counts: only the `eu` rows can match."""
    module = """
model named {
  from orders
  join customers as c on cast(customer_id as text) = c.name and c.region = 'eu'
  select id, c.region as region
}
"""
    customers = [(1, "10", "eu"), (2, "10", "us"), (3, "11", "eu")]
    p = Project(tmp_path, module, customers=customers)
    code, data = p.run()
    assert code == 0, data
    assert model_report(data, "named")["checks"] == [
        "join customers as c on CAST(customer_id AS TEXT) = c.name AND c.region = 'eu'"]
    p.load(customers=[*customers, (4, "10", "eu")])
    code, data = p.run()
    assert code == 1 and error_of(data)["code"] == "E064"
    assert "name='10', rows=2" in " ".join(error_of(data)["notes"])


# ---------------------------------------------------------------- the exemption
DIM = """
model dim {{
  from customers
  select id, name, region
  {pin}
}}

model fact {{
  from orders
  join dim as d on {on}
  select id, customer_id, d.region as region
}}
"""


def test_exemption_skips_the_fan_out_check_when_unique_is_verified(tmp_path):
    p = Project(tmp_path, DIM.format(pin="pin unique [id]", on="customer_id = d.id"))
    code, data = p.run()
    assert code == 0, data
    fact = model_report(data, "fact")
    assert fact["checks"] == []
    assert fact["skipped_checks"] == [{"check": "join dim as d on customer_id = d.id",
                                       "reason": "`dim` pins unique [id], verified"}]
    assert model_report(data, "dim")["checks"] == ["pin unique [id]"]


def test_exemption_holds_for_a_kept_snapshot_that_recorded_it(tmp_path):
    """`dim` is not rebuilt: its snapshot's registry record says the pin was verified."""
    p = Project(tmp_path, DIM.format(pin="pin unique [id]", on="customer_id = d.id"))
    assert p.run()[0] == 0
    p.write(DIM.format(pin="pin unique [id]", on="customer_id = d.id")
            .replace("d.region as region", "d.region as the_region"))
    code, data = p.run("--only-stale")
    assert code == 0, data
    assert model_report(data, "dim")["status"] == "kept"
    assert model_report(data, "fact")["skipped_checks"][0]["reason"] == \
        "`dim` pins unique [id], verified"


@pytest.mark.parametrize("pin, on", [
    ("pin unique [id]", "cast(customer_id as text) = d.name"),  # another key
    ("pin unique [id, name]", "customer_id = d.id"),  # not exactly the key
    ("", "customer_id = d.id"),  # no pin at all
])
def test_fan_out_check_runs_without_a_pin_on_exactly_the_key(tmp_path, pin, on):
    p = Project(tmp_path, DIM.format(pin=pin, on=on))
    code, data = p.run()
    assert code == 0, data
    fact = model_report(data, "fact")
    assert fact["skipped_checks"] == []
    assert len(fact["checks"]) == 1 and fact["checks"][0].startswith("join dim as d on ")


def test_plan_says_which_checks_will_be_skipped(tmp_path):
    p = Project(tmp_path, DIM.format(pin="pin unique [id]", on="customer_id = d.id")
                + JOINED.format(many=" many"))
    result = p.cli("plan", "{m}", "-o", "{w}", "--json")
    assert result.exit_code == 0, result.output
    models = {m["model"]: m for m in json.loads(result.stdout)["models"]}
    assert models["dim"]["checks"] == ["pin unique [id]"]
    assert models["fact"]["checks"] == []
    assert models["fact"]["skipped_checks"][0]["check"] == "join dim as d on customer_id = d.id"
    assert "pins unique [id]" in models["fact"]["skipped_checks"][0]["reason"]
    assert models["enriched"]["skipped_checks"][0]["reason"] == \
        "`many`: the join may match several rows"
    text = p.cli("plan", "{m}", "-o", "{w}").stdout
    assert "skip join dim as d on customer_id = d.id" in text


def test_group_key_uniqueness_is_proven_not_scanned(tmp_path):
    module = """
model per_customer {
  from orders
  group customer_id
  aggregate n = count()
  filter n > 0
  select customer_id as who, n
  pin unique [who]
}
"""
    p = Project(tmp_path, module)
    code, data = p.run()
    assert code == 0, data
    report = model_report(data, "per_customer")
    assert report["checks"] == []
    assert report["skipped_checks"] == [{
        "check": "pin unique [who]",
        "reason": "proven by the plan: one row per `group customer_id`"}]


# ---------------------------------------------------------------- check_pins directly
def _plan(tmp_path, body: str, name: str = "t"):
    path = tmp_path / "p.strata"
    path.write_text(body)
    module = load_module(path)
    assert module.ok, [d.message for d in module.errors]
    return module.plan(name)


HOSTILE = """
source s {
  `select`: int
  `rows`: int
  `a "quoted" name`: text
  n: int
}
model t {
  from s
  pin unique [`select`]
  pin unique [`a "quoted" name`, n]
  pin not_null [`rows`]
}
"""


def test_hostile_column_names_are_quoted(tmp_path):
    plan = _plan(tmp_path, HOSTILE)
    con = duckdb.connect()
    con.execute('CREATE TABLE t ("select" BIGINT, "rows" BIGINT, "a ""quoted"" name" VARCHAR, '
                'n BIGINT)')
    con.execute("INSERT INTO t VALUES (1, 1, 'x', 1), (2, 2, 'x', 2)")
    assert sorted(check_pins(con, '"t"', plan, 2, CheckLog())) == [
        "not_null:rows", 'unique:a "quoted" name,n', "unique:select"]
    con.execute("INSERT INTO t VALUES (1, NULL, 'x', 2)")
    with pytest.raises(PinError) as info:
        check_pins(con, '"t"', plan, 3, CheckLog())
    violations = info.value.violations
    assert [v.code for v in violations] == ["E061", "E061", "E062"]
    assert violations[0].sample == ({"select": 1, "rows_2": 2},)
    assert violations[1].sample == ({'a "quoted" name': "x", "n": 2, "rows_2": 2},)
    assert violations[2].count == 1


WIDE = """
source s {
  a: int
  b: int
  c: text
  d: double
}
model t {
  from s
  pin unique [a]
  pin unique [a, b]
  pin unique [c]
  pin unique [d]
}
"""


@pytest.mark.parametrize("rows, bad", [
    # small integer ranges: the bitmap path; NULL is a value of its own slot
    ([(1, 1, "x", 1.0), (2, 1, "y", 2.0), (None, 1, "z", 3.0)], []),
    ([(1, 1, "x", 1.0), (1, 2, "y", 2.0)], ["unique [a]"]),
    ([(None, 1, "x", 1.0), (None, 1, "y", 2.0)], ["unique [a]", "unique [a, b]"]),
    ([(None, None, "x", 1.0), (1, None, "y", 2.0), (None, 1, "z", 3.0)], ["unique [a]"]),
    # ranges far wider than a bitmap: the hash path
    ([(-(1 << 62), 1 << 62, "x", 1.0), (1 << 62, 1, "x", 1.0)], ["unique [c]", "unique [d]"]),
    ([(-(1 << 62), 5, "x", 1.0), (-(1 << 62), 5, "y", 2.0)], ["unique [a]", "unique [a, b]"]),
    ([(1, 1, None, None), (2, 2, None, None)], ["unique [c]", "unique [d]"]),
])
def test_unique_paths_agree_with_group_by(tmp_path, rows, bad):
    plan = _plan(tmp_path, WIDE)
    con = duckdb.connect()
    con.execute("CREATE TABLE t (a BIGINT, b BIGINT, c VARCHAR, d DOUBLE)")
    con.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", rows)
    log = CheckLog()
    try:
        check_pins(con, "t", plan, len(rows), log)
        failed = []
    except PinError as err:
        failed = [v.check.removeprefix("pin ") for v in err.violations]
    assert failed == bad
    assert log.ran == ["pin unique [a]", "pin unique [a, b]", "pin unique [c]",
                       "pin unique [d]"]


def test_integer_unique_pins_share_one_scan_and_not_null_one_query(tmp_path):
    plan = _plan(tmp_path, """
source s {
  a: int
  b: int
  c: int
}
model t {
  from s
  pin unique [a]
  pin unique [b, c]
  pin not_null [a, b]
  pin not_null [c]
  pin rows >= 1
}
""")
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT range AS a, range % 7 AS b, range // 7 AS c "
                "FROM range(100000)")
    log = CheckLog()
    check_pins(con, "t", plan, 100000, log)
    scans = [s for s in log.statements if "DESCRIBE" not in s]
    # NULLs (from statistics), min/max (statistics), then one bitmap scan for both keys
    assert len(scans) == 3, scans
    assert scans[0] == 'SELECT COUNT(*) FROM t WHERE "a" IS NULL OR "b" IS NULL OR "c" IS NULL'
    assert scans[2].lower().count("bitstring_agg") == 2


def test_check_joins_reports_every_fanning_join(tmp_path):
    plan = _plan(tmp_path, SOURCES + """
model t {
  from orders
  join customers as c on customer_id = c.id
  join_left customers as c2 on customer_id = c2.id
  select id
}
""")
    con = duckdb.connect()
    con.execute("CREATE TABLE orders AS SELECT 1::BIGINT AS id, 10::BIGINT AS customer_id, "
                "1.0::DOUBLE AS amount, 'p' AS status")
    con.execute("CREATE TABLE customers AS SELECT * FROM (VALUES (10::BIGINT, 'a', 'eu'), "
                "(10, 'b', 'eu')) v(id, name, region)")
    from strata.sqlgen.names import table

    def relations(ref, alias):
        node = table(ref.name)
        if alias:
            node = table(ref.name, alias=alias)
        return node

    log = CheckLog()
    with pytest.raises(PinError) as info:
        check_joins(con, plan, relations, lambda ref: f'"{ref.name}"', lambda r, c: False,
                    log)
    assert [v.code for v in info.value.violations] == ["E064", "E064"]
    assert log.ran == ["join customers as c on customer_id = c.id",
                       "join_left customers as c2 on customer_id = c2.id"]


INHERIT = """
model dim {{
  from customers
  select id, name, region
  pin unique [id]
}}

model child {{
  from dim
  filter region != 'xx'
  join{many} orders as o on id = o.customer_id
  derive upper_name = upper(name)
  select id as customer, upper_name
  pin unique [customer]
}}
"""


def test_unique_is_inherited_through_filters_and_many_to_one_joins(tmp_path):
    p = Project(tmp_path, INHERIT.format(many=""),
                orders=[(1, 10, 1.0, "paid"), (2, 11, 1.0, "paid"), (3, 12, 1.0, "paid")])
    code, data = p.run()
    assert code == 0, data
    child = model_report(data, "child")
    assert child["checks"] == ["join orders as o on id = o.customer_id"]
    assert child["skipped_checks"] == [{
        "check": "pin unique [customer]",
        "reason": "inherited: `dim` pins unique [id], verified, and each row of `child` "
                  "comes from a different row of `dim`"}]
    plan = json.loads(p.cli("plan", "{m}", "-o", "{w}", "--json").stdout)
    planned = next(m for m in plan["models"] if m["model"] == "child")
    assert planned["skipped_checks"][0]["reason"].startswith("inherited: `dim` pins unique")


def test_join_many_breaks_inherited_uniqueness(tmp_path):
    """Two orders of customer 10: `join many` repeats the row, and the scan catches it."""
    p = Project(tmp_path, INHERIT.format(many=" many"))
    code, data = p.run()
    assert code == 1
    err = error_of(data)
    assert err["code"] == "E061" and "model `child`" in err["message"]
    assert "customer=10" in " ".join(err["notes"])


BANDS = """
model banded {
  from orders
  join customers as band on amount >= band.id and amount < band.id + 10
  select id, band.name as band
}
"""


def test_fan_out_of_a_range_join_is_counted_per_left_row(tmp_path):
    """No equality to group by: the join itself is counted per left row."""
    bands = [(0, "low", "x"), (10, "mid", "x"), (20, "high", "x")]
    p = Project(tmp_path, BANDS, customers=bands)
    code, data = p.run()
    assert code == 0, data
    assert model_report(data, "banded")["checks"] == [
        "join customers as band on amount >= band.id AND amount < band.id + 10"]
    p.load(customers=[*bands, (5, "overlap", "x")])  # [5, 15) overlaps [0, 10)
    code, data = p.run()
    assert code == 1
    err = error_of(data)
    assert err["code"] == "E064"
    assert "3 left row(s) match several rows of `band`" in err["message"]  # 5.0, 7.0, 9.0
    assert "amount=9.0, matches=2" in " ".join(err["notes"])


def test_keys_with_a_condition_across_both_sides(tmp_path):
    """Duplicated keys told apart by a further condition do not fan out; the check
    counts the real matches."""
    module = """
model picky {
  from orders
  join customers as c on customer_id = c.id and amount > length(c.name)
  select id, c.name as name
}
"""
    customers = [(10, "a", "eu"), (10, "bbbbbbbbbbbb", "us"), (11, "c", "eu"),
                 (12, "d", "eu")]
    p = Project(tmp_path, module, customers=customers)
    code, data = p.run()
    assert code == 0, data
    p.load(orders=[*ORDERS, (9, 10, 20.0, "paid")], customers=customers)
    code, data = p.run()
    assert code == 1
    err = error_of(data)
    assert err["code"] == "E064" and "1 left row(s)" in err["message"]
    assert "customer_id=10, amount=20.0, matches=2" in " ".join(err["notes"])


def test_fan_out_check_quotes_hostile_names(tmp_path):
    module = """
source weird {
  `select`: int
  `__rows`: text
}
model hostile {
  from orders
  join weird as `from` on customer_id = `from`.`select`
  select id, `from`.`__rows` as label
}
"""
    p = Project(tmp_path, module)
    con = duckdb.connect(str(p.warehouse))
    con.execute('CREATE TABLE weird ("select" BIGINT, "__rows" VARCHAR)')
    con.execute("INSERT INTO weird VALUES (10, 'a'), (11, 'b'), (12, 'c')")
    con.close()
    code, data = p.run()
    assert code == 0, data
    con = duckdb.connect(str(p.warehouse))
    con.execute("INSERT INTO weird VALUES (10, 'again')")
    con.close()
    code, data = p.run()
    assert code == 1
    err = error_of(data)
    assert err["code"] == "E064"
    assert "sample: (select=10, rows=2)" in err["notes"]
