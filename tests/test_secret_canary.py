"""Issue 39, items 5 and 6 and their class: no secret of a warehouse location is ever
shown or stored. Every command that takes `-o` runs against a real PostgreSQL server
that requires a password (scram-sha-256 for this module's role), with the password in
every form `-o` can carry it (percent-encoded, an unencoded `?`, `?password=`,
alongside `?sslpassword=`) and in the forms that keep it out of argv (PGPASSWORD,
a password file, a service file); then wrong passwords and malformed locations for
the error paths, and a Spark Connect `token=` (no Spark started: its connection
error is the path). The password holds a canary string that must appear nowhere:
stdout, stderr, any file under the test's folders (the graph page, caches), and any
table, view or comment in the warehouse's database.

The server is the session's (tests/conftest.py `postgres_engine`); this module adds
a role with a password and a pg_hba line for it, both undone afterwards."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest
from enginehelpers import strata

CANARY = "Canary" + uuid.uuid4().hex[:12]
ROLE = "canary_role"
PASSWORD = f"{CANARY}?q"  # a `?` in it: written unencoded, a URL parser must not split there
MODULE = """source orders {
  id: int
  amount: int
}

model big_orders {
  from orders
  filter amount > 2
  select id, amount
}

model totals {
  from big_orders
  group id
  aggregate total = sum(amount)
}
"""
FAILING = MODULE + """
model broken {
  from orders
  derive k = 1
  select k
  pin unique [k]
}
"""


@dataclass
class Secured:
    """A database owned by ROLE, which must give PASSWORD to connect."""

    engine: object
    socket: str  # the server's socket folder, percent-encoded for a URL's host

    def admin(self, database: str, statement: str, params: list | None = None) -> list[tuple]:
        import psycopg

        with psycopg.connect(host=str(self.engine.server.root), user="postgres",
                             dbname=database, autocommit=True) as con:
            cur = con.execute(statement, params)
            return cur.fetchall() if cur.description else []

    def new_database(self) -> str:
        name = "canary_" + uuid.uuid4().hex[:10]
        self.engine.con.execute(f'CREATE DATABASE "{name}" OWNER {ROLE}')
        self.admin(name, "CREATE TABLE orders AS SELECT i::bigint AS id, i::bigint AS amount "
                         "FROM generate_series(0, 5) AS t(i)")
        self.admin(name, "CREATE TABLE orders_fixed AS SELECT id, amount * 10 AS amount "
                         "FROM orders")
        self.admin(name, f"ALTER TABLE orders OWNER TO {ROLE}")
        self.admin(name, f"ALTER TABLE orders_fixed OWNER TO {ROLE}")
        return name

    def everything_stored(self, database: str, warehouse: bool = True) -> str:
        """Every row of every table, every view's definition and every comment in
        `database` (read as the superuser, bypassing Strata), as one text; with
        `warehouse`, Strata's history must be among them."""
        tables = self.admin(database, "SELECT table_schema, table_name FROM "
                            "information_schema.tables WHERE table_schema NOT IN "
                            "('pg_catalog', 'information_schema')")
        assert (("strata_internal", "history") in tables) == warehouse, tables
        parts = []
        for schema, table in tables:
            parts += [r[0] for r in self.admin(
                database, f'SELECT row_to_json(t)::text FROM "{schema}"."{table}" t')]
        parts += [r[0] for r in self.admin(database, "SELECT definition FROM pg_views "
                                           "WHERE schemaname NOT IN ('pg_catalog', "
                                           "'information_schema')")]
        parts += [r[0] for r in self.admin(database, "SELECT description FROM pg_description")]
        return "\n".join(parts)


@pytest.fixture(scope="module")
def secured(postgres_engine) -> Iterator[Secured]:
    """The session's server, with ROLE that logs in only with PASSWORD (scram-sha-256
    for ROLE on the socket; every other role keeps the server's trust)."""
    hba = postgres_engine.server.data / "pg_hba.conf"
    before = hba.read_text()
    con = postgres_engine.con
    con.execute("SET password_encryption = 'scram-sha-256'")
    con.execute(f"CREATE ROLE {ROLE} LOGIN PASSWORD {_literal(PASSWORD)}")
    hba.write_text(f"local all {ROLE} scram-sha-256\n" + before)
    con.execute("SELECT pg_reload_conf()")
    try:
        yield Secured(postgres_engine, quote(str(postgres_engine.server.root), safe=""))
    finally:
        hba.write_text(before)
        con.execute("SELECT pg_reload_conf()")
        for (name,) in con.execute("SELECT datname FROM pg_database WHERE datname LIKE "
                                   "'canary\\_%'").fetchall():
            con.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        con.execute(f"DROP ROLE IF EXISTS {ROLE}")


def _literal(text: str) -> str:
    from sqlglot import exp

    return exp.Literal.string(text).sql(dialect="postgres")


@pytest.fixture
def place(tmp_path: Path) -> Path:
    """The module's folder; HOME is a folder beside it (caches go there), both scanned."""
    (tmp_path / "work").mkdir()
    (tmp_path / "home").mkdir()
    (tmp_path / "work" / "m.strata").write_text(MODULE)
    (tmp_path / "work" / "failing.strata").write_text(FAILING)
    return tmp_path


def _call(place: Path, *args: str, env: dict | None = None):
    proc = strata(*args, cwd=place / "work",
                  env={"HOME": str(place / "home"), "STRATA_NOW": "2026-01-05 00:00:00",
                       **(env or {})})
    shown = proc.stdout + proc.stderr
    assert CANARY not in shown, f"strata {' '.join(args)} showed the secret:\n{shown}"
    assert "Traceback" not in shown, shown
    return proc


def _files_hold_no_canary(place: Path, planted: set[Path] = frozenset()) -> None:
    for path in place.rglob("*"):
        if path.is_file() and not path.is_symlink() and path not in planted:
            assert CANARY.encode() not in path.read_bytes(), f"{path} holds the secret"


def _every_command(place: Path, url: str, env: dict | None = None) -> None:
    """Every command that takes `-o`, on success paths (and a failed run and a refused
    gc), each checked by _call."""
    def call(*args: str, ok: bool = True, later: bool = False):
        now = {"STRATA_NOW": "2026-01-09 00:00:00"} if later else {}
        proc = _call(place, *args, "-o", url, env={**(env or {}), **now})
        assert (proc.returncode == 0) == ok, proc.stdout + proc.stderr
        return proc

    run_id = json.loads(call("run", "m.strata", "--json").stdout)["run_id"]
    call("run", "m.strata", "--only-stale")
    call("plan", "m.strata")
    call("plan", "m.strata", "--json")
    call("branch", "create", "dev", "--json")
    call("branch", "list")
    call("branch", "list", "--json")
    call("verify", run_id)
    call("verify", run_id, "--json")
    call("replay", run_id)
    call("replay", run_id, "--execute", "--json")
    fixed = call("backfill", "m.strata", run_id, "--source", "orders=orders_fixed",
                 "--reason", "amounts were in tens", "--json")
    assert json.loads(fixed.stdout)["status"] == "published"
    call("rollback", run_id)
    call("rollback", run_id, "--branch", "dev", "--json")
    failed = call("run", "failing.strata", "--json", ok=False)
    assert json.loads(failed.stdout)["status"] == "error", failed.stdout
    call("run", "failing.strata", ok=False)
    call("gc", "--older-than", "0d", "--compact-file", ok=False)
    call("gc", "--older-than", "1d", "--keep-last", "0", "--dry-run", later=True)
    gone = call("gc", "--older-than", "1d", "--keep-last", "0", "--json", later=True)
    assert json.loads(gone.stdout)["collected"], gone.stdout
    call("history")
    listed = json.loads(call("history", "--json").stdout)
    assert {e["kind"] for e in listed} >= {"run", "backfill", "rollback", "gc", "branch"}
    call("graph", "m.strata")
    page = (place / "work" / "graph.html").read_text()
    assert "big_orders" in page  # the page was written, with the warehouse's state
    call("graph", "m.strata", "--format", "mermaid")
    call("graph", "m.strata", "--format", "dot", "--out", "graph.dot")


@pytest.mark.parametrize("form", ["encoded", "unencoded_question_mark", "password_param",
                                  "sslpassword_param"])
def test_no_command_shows_or_stores_the_password_of_its_location(secured, place, form):
    database = secured.new_database()
    encoded = quote(PASSWORD, safe="")
    url = {"encoded": f"postgresql://{ROLE}:{encoded}@{secured.socket}/{database}",
           "unencoded_question_mark":
               f"postgresql://{ROLE}:{PASSWORD}@{secured.socket}/{database}",
           "password_param":
               f"postgresql://{ROLE}@{secured.socket}/{database}?password={encoded}",
           "sslpassword_param": f"postgresql://{ROLE}:{encoded}@{secured.socket}/{database}"
                                f"?sslpassword={CANARY}&sslmode=disable"}[form]
    _every_command(place, url)
    _files_hold_no_canary(place)
    assert CANARY not in secured.everything_stored(database)


def test_the_server_requires_the_password(secured):
    """What the tests above and below rely on: without PASSWORD, ROLE gets nowhere."""
    import psycopg

    for password in (None, "wrong"):
        with pytest.raises(psycopg.OperationalError, match="password"):
            psycopg.connect(host=str(secured.engine.server.root), user=ROLE,
                            dbname="postgres", password=password,
                            **({"passfile": "/nonexistent"} if password is None else {}))


def test_pgpassword_a_password_file_and_a_service_file_keep_the_password_out_of_argv(
        secured, place):
    """libpq's own ways: PGPASSWORD, a password file (PGPASSFILE, or ~/.pgpass), a
    service file naming the whole connection (`?service=NAME`, or PGSERVICE)."""
    database = secured.new_database()
    root = str(secured.engine.server.root)
    url = f"postgresql://{ROLE}@{secured.socket}/{database}"
    _every_command(place, url, env={"PGPASSWORD": PASSWORD})

    secrets = place / "secrets"
    secrets.mkdir()
    passfile = secrets / "pgpass"
    passfile.write_text(f"*:*:{database}:{ROLE}:{PASSWORD}\n")
    passfile.chmod(0o600)
    home_pgpass = place / "home" / ".pgpass"
    home_pgpass.write_text(passfile.read_text())
    home_pgpass.chmod(0o600)
    services = secrets / "pg_service.conf"
    services.write_text(f"[canary]\nhost={root}\nuser={ROLE}\ndbname={database}\n"
                        f"password={PASSWORD}\n")
    for where, env in ((url, {"PGPASSFILE": str(passfile)}),
                       (url, {}),  # ~/.pgpass
                       ("postgresql://?service=canary", {"PGSERVICEFILE": str(services)}),
                       ("postgresql://", {"PGSERVICEFILE": str(services),
                                          "PGSERVICE": "canary"})):
        proc = _call(place, "run", "m.strata", "--only-stale", "--json", "-o", where, env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        _call(place, "history", "-o", where, env=env)
    _files_hold_no_canary(place, {home_pgpass, passfile, services})
    assert CANARY not in secured.everything_stored(database)


def test_no_failing_command_shows_the_secret_of_its_location(secured, place):
    """Wrong passwords (each form) reach the server and are refused; malformed
    locations are refused before: each an E070 for every command, the secret hidden."""
    database = secured.new_database()
    host = secured.socket
    wrong = f"Wrong{CANARY}"
    refused = [f"postgresql://{ROLE}:{wrong}@{host}/{database}",
               f"postgresql://{ROLE}:{wrong}?x@{host}/{database}",
               f"postgresql://{ROLE}@{host}/{database}?password={wrong}"]
    malformed = [f"postgresql://{ROLE}@{host}/{database}?sslpassword={wrong}&password={wrong}",
                 f"postgresql://{ROLE}@{host}/{database}?PassWord={wrong}",
                 f"postgresql://{ROLE}@{host}/{database}?%70assword={wrong}",
                 f"postgresql://{ROLE}@{host}/{database}?api_key={wrong}&secret_x={wrong}",
                 f"postgresql://{ROLE}:{wrong}@{host}:notaport/{database}",
                 f"postgresql://{ROLE}:{wrong}@{host}",
                 f"postgresql://{ROLE}:{wrong}@{host}/{database}#frag",
                 f"postgresql://{ROLE}:{wrong}@[::1/{database}",
                 f"mysql://{ROLE}:{wrong}@{host}/{database}",
                 f"spark://{ROLE}:{wrong}@host:7077",
                 f"sc://{ROLE}:{wrong}@127.0.0.1:1",
                 f"sc://127.0.0.1:notaport/;token={wrong}",
                 f"sc://127.0.0.1:1/;token={wrong};bad{wrong}"]
    every = [("run", "m.strata"), ("plan", "m.strata"), ("history",), ("verify", "r1"),
             ("replay", "r1"), ("rollback", "r1"), ("branch", "create", "dev"),
             ("branch", "list"), ("backfill", "m.strata", "r1", "--source",
                                  "orders=orders_fixed", "--reason", "r"),
             ("gc", "--older-than", "0d"), ("graph", "m.strata")]
    # every command for the refused passwords; the malformed ones fail in the one
    # parser every command calls first, so a few commands cover them
    calls = [(where, command) for where in refused for command in every]
    calls += [(where, command) for where in malformed
              for command in (("run", "m.strata"), ("history",), ("graph", "m.strata"))]
    for where, command in calls:
        for json_flag in ((), ("--json",)) if command[0] != "graph" else ((),):
            proc = _call(place, *command, *json_flag, "-o", where)
            assert proc.returncode == 1, proc.stdout + proc.stderr
            assert "E070" in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    # a Spark Connect server that is not there: the connection error path (one
    # command: every command opens the warehouse the same way; pyspark retries ~9 s)
    proc = _call(place, "history", "--json", "-o", f"sc://127.0.0.1:1/;token={wrong}")
    assert proc.returncode == 1 and "E070" in proc.stdout, proc.stdout + proc.stderr
    _files_hold_no_canary(place)
    assert CANARY not in secured.everything_stored(database, warehouse=False)
