"""`strata show MODEL -o WAREHOUSE` and `strata sql -o WAREHOUSE "SELECT ..."` through
the CLI (issue 38): a model's rows read without knowing its view's name, on DuckDB
(real files), PostgreSQL and Spark (where the view's name is encoded: v__region__sales);
every bad input a coded diagnostic, never a traceback, and a password of `-o` never
printed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest
from enginehelpers import strata

ROOT = Path(__file__).resolve().parent.parent
SHOP = ROOT / "examples" / "shop"
REGIONS = {"eu", "apac", "us"}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """examples/shop run once into a DuckDB file; the folder holding it."""
    folder = tmp_path_factory.mktemp("show")
    shutil.copytree(SHOP, folder / "shop")
    strata("run", "shop", "-o", "w.duckdb", cwd=folder, check=True)
    return folder


def shown(*args: str, cwd: Path, check: bool | None = True):
    ran = strata(*args, cwd=cwd, check=check)
    assert "Traceback" not in ran.stdout + ran.stderr, ran.stderr
    return ran


def test_show_prints_a_models_rows_as_a_table(built):
    ran = shown("show", "region_sales", "-o", "w.duckdb", cwd=built)
    assert "main.v_region_sales" in ran.stdout
    for word in ("region", "revenue", "decimal(38,2)", *REGIONS):
        assert word in ran.stdout, word
    assert "3 rows" in ran.stdout


def test_show_json_and_limit(built):
    whole = json.loads(shown("show", "region_sales", "-o", "w.duckdb", "--json",
                             cwd=built).stdout)
    assert whole["source"] == "main.v_region_sales" and not whole["truncated"]
    assert {r["region"] for r in whole["rows"]} == REGIONS
    assert [c["name"] for c in whole["columns"]][:2] == ["region", "buyers"]
    one = json.loads(shown("show", "region_sales", "-o", "w.duckdb", "--json", "--limit", "1",
                           cwd=built).stdout)
    assert len(one["rows"]) == 1 and one["truncated"]
    text = shown("show", "region_sales", "-o", "w.duckdb", "--limit", "2", cwd=built).stdout
    assert "2 rows (the first 2: --limit shows more)" in text


def test_show_on_a_branch(built):
    shown("branch", "create", "dev", "--from", "main", "-o", "w.duckdb", cwd=built)
    found = json.loads(shown("show", "region_sales", "-o", "w.duckdb", "--branch", "dev",
                             "--json", cwd=built).stdout)
    assert found["source"] == "dev.v_region_sales"
    assert {r["region"] for r in found["rows"]} == REGIONS


def test_sql_runs_one_read_only_query(built):
    found = json.loads(shown("sql", "-o", "w.duckdb", "--json",
                             "select region, revenue from main.v_region_sales order by region",
                             cwd=built).stdout)
    assert [c["name"] for c in found["columns"]] == ["region", "revenue"]
    assert [r["region"] for r in found["rows"]] == sorted(REGIONS)
    text = shown("sql", "-o", "w.duckdb", "select 1 as one", cwd=built).stdout
    assert "one" in text and "1 row" in text


@pytest.mark.parametrize(("args", "code", "words"), [
    (("show", "region_sale"), "E195", "did you mean `region_sales`?"),
    (("show", "region_sales", "--branch", "nope"), "E074", "unknown branch `nope`"),
    (("show", "region_sales", "--limit", "0"), "E084", "--limit must be 1 or more"),
    (("sql", "select ("), "E196", "cannot read the SQL"),
    (("sql", "select 1; select 2"), "E197", "runs one query"),
    (("sql", "delete from main.v_region_sales"), "E197", "only reads"),
    (("sql", "drop view main.v_region_sales"), "E197", "only reads"),
    (("sql", "create table t as select 1"), "E197", "only reads"),
    (("sql", "select * from main.v_nope"), "E198", "the warehouse refused the query"),
])
def test_every_bad_input_is_a_diagnostic(built, args, code, words):
    ran = shown(*args[:1], *args[1:], "-o", "w.duckdb", cwd=built, check=False)
    assert ran.returncode == 1, ran.stderr
    assert f"error[{code}]" in ran.stderr and words in ran.stderr, ran.stderr
    # nothing was written: the view still reads
    assert "eu" in shown("show", "region_sales", "-o", "w.duckdb", cwd=built).stdout


def test_a_warehouse_that_is_not_there_or_has_nothing_published(tmp_path):
    ran = shown("show", "region_sales", "-o", "missing.duckdb", cwd=tmp_path, check=False)
    assert "error[E070]" in ran.stderr and not (tmp_path / "missing.duckdb").exists()
    duckdb.connect(str(tmp_path / "empty.duckdb")).close()
    ran = shown("show", "region_sales", "-o", "empty.duckdb", cwd=tmp_path, check=False)
    assert "error[E195]" in ran.stderr and "nothing is published" in ran.stderr


# ---------------------------------------------------------------- other engines
def run_shop(folder: Path, url: str) -> None:
    shutil.copytree(SHOP, folder / "shop")
    strata("run", "shop", "-o", url, cwd=folder, check=True, timeout=600)


def test_show_and_sql_on_postgresql(pg_warehouse_url, tmp_path):
    run_shop(tmp_path, pg_warehouse_url)
    found = json.loads(shown("show", "region_sales", "-o", pg_warehouse_url, "--json",
                             cwd=tmp_path).stdout)
    assert found["source"] == "main.v_region_sales"
    assert {r["region"] for r in found["rows"]} == REGIONS
    query = json.loads(shown("sql", "-o", pg_warehouse_url, "--json",
                             "select count(*) as n from main.v_region_sales",
                             cwd=tmp_path).stdout)
    assert query["rows"] == [{"n": 3}]
    assert "apac" in shown("show", "region_sales", "-o", pg_warehouse_url, cwd=tmp_path).stdout


def test_a_urls_password_is_never_printed(pg_warehouse_url, tmp_path):
    run_shop(tmp_path, pg_warehouse_url)
    secret = "s3cr3t-pw"
    with_password = pg_warehouse_url.replace("postgresql://postgres@",
                                             f"postgresql://postgres:{secret}@")
    for args in (("show", "region_sale"), ("sql", "select * from main.nope"),
                 ("sql", "select (")):
        ran = shown(*args, "-o", with_password, cwd=tmp_path, check=False)
        assert ran.returncode == 1 and "error[E19" in ran.stderr, ran.stderr
        assert secret not in ran.stdout + ran.stderr
    elsewhere = with_password.rsplit("/", 1)[0] + "/no_such_database"
    ran = shown("show", "region_sales", "-o", elsewhere, cwd=tmp_path, check=False)
    assert ran.returncode == 1 and "error[E" in ran.stderr
    assert secret not in ran.stdout + ran.stderr


def test_show_and_sql_on_spark_where_view_names_are_encoded(spark_connect_url, tmp_path):
    run_shop(tmp_path, spark_connect_url)
    found = json.loads(shown("show", "region_sales", "-o", spark_connect_url, "--json",
                             cwd=tmp_path).stdout)
    assert found["source"] == "main.v__region__sales"
    assert {r["region"] for r in found["rows"]} == REGIONS
    query = json.loads(shown("sql", "-o", spark_connect_url, "--json",
                             "select count(*) as n from main.v__region__sales",
                             cwd=tmp_path).stdout)
    assert query["rows"] == [{"n": 3}]
