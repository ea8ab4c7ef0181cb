"""Issue 18, item 1: `-o` names a warehouse location of one of four kinds; an
unknown or malformed one is E070 naming it, and a password never appears."""

from __future__ import annotations

import os

import pytest

from strata.diagnostics import StrataError
from strata.engine.locations import (
    DuckDBFile,
    PostgresURL,
    SparkConnect,
    SparkDir,
    parse_location,
    redact,
)


@pytest.mark.parametrize("text", ["w.duckdb", "/tmp/x/w.duckdb", "dir/with:colon.duckdb",
                                  "sparkling.duckdb"])
def test_a_path_is_a_duckdb_file_as_before(text):
    assert parse_location(text) == DuckDBFile(text)


def test_postgres_url_with_every_part():
    loc = parse_location("postgresql://ann:s3cr%40t@db.example:6543/shop?sslmode=require")
    assert isinstance(loc, PostgresURL)
    assert (loc.user, loc.password, loc.host, loc.port, loc.database) == (
        "ann", "s3cr@t", "db.example", 6543, "shop")
    assert loc.connect_args() == {"sslmode": "require", "dbname": "shop", "user": "ann",
                                  "password": "s3cr@t", "host": "db.example", "port": 6543}
    assert not loc.unix_socket


@pytest.mark.parametrize("text", ["postgresql://postgres@%2Ftmp%2Fsock/db",
                                  "postgresql://postgres@/db?host=/tmp/sock",
                                  "postgres://postgres@ignored/db?host=%2Ftmp%2Fsock"])
def test_postgres_unix_socket_host_in_either_form(text):
    loc = parse_location(text)
    assert isinstance(loc, PostgresURL)
    assert (loc.host, loc.database, loc.user) == ("/tmp/sock", "db", "postgres")
    assert loc.unix_socket


def test_postgres_without_host_leaves_it_to_libpq():
    loc = parse_location("postgresql:///warehouse")
    assert (loc.host, loc.port, loc.user, loc.database) == (None, None, None, "warehouse")
    assert loc.connect_args() == {"dbname": "warehouse"}


def test_password_with_an_unencoded_slash_is_not_read_as_a_port():
    loc = parse_location("postgresql://ann:pa/ss@word@h:5432/db")
    assert (loc.password, loc.host, loc.port) == ("pa/ss@word", "h", 5432)


def test_postgres_ipv6_host():
    loc = parse_location("postgresql://u@[::1]:5433/db")
    assert (loc.host, loc.port) == ("::1", 5433)


def test_spark_dir_is_made_absolute():
    loc = parse_location("spark:wh/spark")
    assert loc == SparkDir(os.path.abspath("wh/spark"), "spark:wh/spark")
    assert loc.redacted() == "spark:wh/spark"


def test_spark_connect_default_port_and_params():
    assert parse_location("sc://localhost") == SparkConnect("sc://localhost", "localhost")
    loc = parse_location("sc://spark.example:443/;use_ssl=true;token=abc")
    assert (loc.host, loc.port, loc.params) == ("spark.example", 443,
                                                (("use_ssl", "true"), ("token", "abc")))
    assert loc.remote() == "sc://spark.example:443/;use_ssl=true;token=abc"
    assert loc.redacted() == "sc://spark.example:443/;use_ssl=true;token=***"


@pytest.mark.parametrize("text, said", [
    ("mysql://root:hunter2@h/db", "`mysql://` is not a kind of warehouse"),
    ("spark://master:7077", "`spark://` is not a kind of warehouse"),
    ("spark:", "`spark:` names no folder"),
    ("spark:  ", "`spark:` names no folder"),
    ("postgresql://u:hunter2@h:54x2/db", "the port `54x2` is not a number"),
    ("postgresql://u:hunter2@h:70000/db", "the port `70000` is not a number"),
    ("postgresql://u:hunter2@h:5432/", "the URL names no database"),
    ("postgresql://u:hunter2@[::1/db", "lacks its closing"),
    ("postgresql://u:hunter2@h/db#x", "has no `#` part"),
    ("sc://[::1:15002", "lacks its closing"),
    ("sc://:15002", "the URL names no host"),
    ("sc://h:x", "the port `x` is not a number"),
    ("sc://h:1/;token", "is not a `;key=value` parameter"),
])
def test_unknown_or_malformed_location_is_E070_naming_it_without_secrets(text, said):
    with pytest.raises(StrataError) as info:
        parse_location(text)
    diag = info.value.diagnostics[0]
    assert diag.code == "E070"
    assert said in diag.message
    assert f"`{redact(text)}`" in diag.message
    shown = diag.message + (diag.hint or "")
    assert "hunter2" not in shown


@pytest.mark.parametrize("text, shown", [
    ("postgresql://ann:hunter2@h/db", "postgresql://ann:***@h/db"),
    ("postgresql://ann:pa/ss@word@h:5432/db", "postgresql://ann:***@h:5432/db"),
    ("postgresql://ann@h/db?password=hunter2&sslmode=require",
     "postgresql://ann@h/db?password=***&sslmode=require"),
    ("postgresql://ann@h/db", "postgresql://ann@h/db"),
    ("sc://h:1/;token=hunter2;user_id=ann", "sc://h:1/;token=***;user_id=ann"),
    ("w.duckdb", "w.duckdb"),
])
def test_redacted_text_hides_passwords_and_tokens(text, shown):
    assert redact(text) == shown
    assert parse_location(text).redacted() == shown


def test_password_is_not_in_the_dataclass_repr():
    loc = parse_location("postgresql://ann:hunter2@h/db?password=hunter3")
    assert "hunter" not in repr(loc).replace(loc.text, "")
    assert loc.password == "hunter3"  # the parameter wins, as libpq's would
