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
from test_engine_bookkeeping_postgres import MODULE  # the small module those suites run

CANARY = "Canary" + uuid.uuid4().hex[:12]
ROLE = "canary_role"
PASSWORD = f"{CANARY}?q"  # a `?` in it: written unencoded, a URL parser must not split there
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


def _every_command(place: Path, urls: list[str], env: dict | None = None) -> None:
    """Every command that takes `-o`, on success paths (and a failed run and a refused
    gc), each checked by _call; the i-th call takes the i-th of `urls` in turn, so
    every form of the password meets every kind of command across the sequence."""
    turn = iter(range(1000))

    def call(*args: str, ok: bool = True, later: bool = False):
        now = {"STRATA_NOW": "2026-01-09 00:00:00"} if later else {}
        url = urls[next(turn) % len(urls)]
        proc = _call(place, *args, "-o", url, env={**(env or {}), **now})
        assert (proc.returncode == 0) == ok, proc.stdout + proc.stderr
        return proc

    run_id = json.loads(call("run", "m.strata", "--json").stdout)["run_id"]
    call("run", "m.strata", "--only-stale")
    call("plan", "m.strata")
    call("plan", "m.strata", "--json")
    call("branch", "create", "dev", "--json")
    call("branch", "list")
    call("verify", run_id)
    call("verify", run_id, "--json")
    call("replay", run_id)
    call("replay", run_id, "--execute", "--json")
    fixed = call("backfill", "m.strata", run_id, "--source", "orders=orders_fixed",
                 "--reason", "amounts were in tens", "--json")
    assert json.loads(fixed.stdout)["status"] == "published"
    call("rollback", run_id, "--json")
    failed = call("run", "failing.strata", "--json", ok=False)
    assert json.loads(failed.stdout)["status"] == "error", failed.stdout
    call("run", "failing.strata", ok=False)
    call("gc", "--older-than", "0d", "--compact-file", ok=False)
    call("gc", "--older-than", "1d", "--keep-last", "0", "--dry-run", later=True)
    gone = call("gc", "--older-than", "1d", "--keep-last", "0", "--json", later=True)
    assert json.loads(gone.stdout)["collected"], gone.stdout
    call("history")
    listed = json.loads(call("history", "--json").stdout)
    assert {e["kind"] for e in listed} >= {"run", "backfill", "rollback", "gc", "branch",
                                           "failed"}, listed
    call("graph", "m.strata")
    call("graph", "m.strata", "--format", "mermaid")
    call("graph", "m.strata", "--format", "dot", "--out", "graph.dot")


def _forms(socket: str, database: str) -> list[str]:
    """The password in each form `-o` can carry it."""
    encoded = quote(PASSWORD, safe="")
    return [f"postgresql://{ROLE}:{encoded}@{socket}/{database}",
            f"postgresql://{ROLE}:{PASSWORD}@{socket}/{database}",  # the `?` unencoded
            f"postgresql://{ROLE}@{socket}/{database}?password={encoded}",
            (f"postgresql://{ROLE}:{encoded}@{socket}/{database}?sslpassword={CANARY}"
             "&sslmode=disable")]


def test_no_command_shows_or_stores_the_password_of_its_location(secured, place):
    database = secured.new_database()
    _every_command(place, _forms(secured.socket, database))
    _files_hold_no_canary(place)
    assert CANARY not in secured.everything_stored(database)


def test_the_graph_page_of_a_postgresql_warehouse_hides_its_password(secured, place):
    """Item 5: the page (and the text formats) show where the state came from with
    the password as ***, and still show the state."""
    database = secured.new_database()
    url = _forms(secured.socket, database)[0]
    assert _call(place, "run", "m.strata", "-o", url).returncode == 0
    assert _call(place, "graph", "m.strata", "-o", url).returncode == 0
    page = (place / "work" / "graph.html").read_text()
    assert f"{ROLE}:***@" in page and "up to date" in page
    dot = _call(place, "graph", "m.strata", "--format", "dot", "-o", url).stdout
    assert "up to date" in dot
    _files_hold_no_canary(place)


def test_E070_hides_a_password_with_an_unencoded_question_mark_and_password_parameters(
        secured):
    """Item 6: a wrong password in each form reaches the server (the `?` one too, no
    longer split there into a bogus port) and the refusal names the location with
    every secret as ***."""
    from strata.diagnostics import StrataError
    from strata.engine.warehouse import Warehouse

    wrong = f"Wrong{CANARY}"
    forms = [f"postgresql://{ROLE}:{wrong}?x@{secured.socket}/postgres",
             f"postgresql://{ROLE}@{secured.socket}/postgres?password={wrong}",
             (f"postgresql://{ROLE}@{secured.socket}/postgres?sslpassword={wrong}"
              f"&password={wrong}&sslmode=disable")]
    for url in forms:
        with pytest.raises(StrataError) as info:
            Warehouse.open(url, read_only=True, create=False)
        diag = info.value.diagnostics[0]
        assert diag.code == "E070" and "password authentication failed" in diag.message
        assert CANARY not in diag.message + (diag.hint or "") and "***" in diag.message


def test_the_server_requires_the_password(secured):
    """What the tests here rely on: without PASSWORD, ROLE gets nowhere."""
    import psycopg

    for password in (None, "wrong"):
        with pytest.raises(psycopg.OperationalError, match="password"):
            psycopg.connect(host=str(secured.engine.server.root), user=ROLE,
                            dbname="postgres", password=password,
                            **({"passfile": "/nonexistent"} if password is None else {}))


def test_pgpassword_a_password_file_and_a_service_file_keep_the_password_out_of_argv(
        secured, place):
    """libpq's own ways, which Strata leaves to it: PGPASSWORD, a password file
    (PGPASSFILE, or ~/.pgpass), a service file naming the whole connection
    (`?service=NAME`, or PGSERVICE with `-o postgresql://`)."""
    database = secured.new_database()
    url = f"postgresql://{ROLE}@{secured.socket}/{database}"
    secrets = place / "secrets"
    secrets.mkdir()
    passfile = secrets / "pgpass"
    passfile.write_text(f"*:*:{database}:{ROLE}:{PASSWORD}\n")
    home_pgpass = place / "home" / ".pgpass"
    home_pgpass.write_text(passfile.read_text())
    services = secrets / "pg_service.conf"
    services.write_text(f"[canary]\nhost={secured.engine.server.root}\nuser={ROLE}\n"
                        f"dbname={database}\npassword={PASSWORD}\n")
    for planted in (passfile, home_pgpass, services):
        planted.chmod(0o600)
    for where, env in ((url, {"PGPASSWORD": PASSWORD, "PGPASSFILE": "/nonexistent"}),
                       (url, {"PGPASSFILE": str(passfile)}),
                       (url, {}),  # ~/.pgpass
                       ("postgresql://?service=canary", {"PGSERVICEFILE": str(services)}),
                       ("postgresql://", {"PGSERVICEFILE": str(services),
                                          "PGSERVICE": "canary"})):
        proc = _call(place, "run", "m.strata", "--only-stale", "--json", "-o", where, env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert _call(place, "history", "-o", where, env=env).returncode == 0
    # without any of them, the server refuses: the runs above used them
    refused = _call(place, "history", "-o", url, env={"PGPASSFILE": "/nonexistent"})
    assert refused.returncode == 1 and "E070" in refused.stderr, refused.stderr
    _files_hold_no_canary(place, {home_pgpass, passfile, services})
    assert CANARY not in secured.everything_stored(database)


def test_no_failing_command_shows_the_secret_of_its_location(secured, place):
    """Wrong passwords (each form) reach the server and are refused; malformed
    locations are refused before: each an E070, the secret hidden, for every command
    in turn (each opens its warehouse through the same parser and adapters)."""
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
                 f"sc://127.0.0.1:1/;token={wrong};more{wrong}"]
    every = [("run", "m.strata"), ("plan", "m.strata", "--json"), ("history",),
             ("verify", "r1", "--json"), ("replay", "r1"), ("rollback", "r1", "--json"),
             ("branch", "create", "dev"), ("branch", "list", "--json"),
             ("backfill", "m.strata", "r1", "--source", "orders=orders_fixed", "--reason",
              "r"), ("gc", "--older-than", "0d", "--json"), ("graph", "m.strata")]
    wheres = refused + malformed
    for i in range(max(len(every), len(wheres))):
        command, where = every[i % len(every)], wheres[i % len(wheres)]
        proc = _call(place, *command, "-o", where)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "E070" in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    # a Spark Connect server that is not there: the connection error path (one
    # command: pyspark retries for seconds before it gives up)
    proc = _call(place, "history", "--json", "-o", f"sc://127.0.0.1:1/;token={wrong}")
    assert proc.returncode == 1 and "E070" in proc.stdout, proc.stdout + proc.stderr
    _files_hold_no_canary(place)
    assert CANARY not in secured.everything_stored(database, warehouse=False)


# ---------------------------------------------------------------- the one redaction
@pytest.mark.parametrize("text, shown", [
    ("postgresql://ann:pa?ss@h/db", "postgresql://ann:***@h/db"),
    ("postgresql://ann:p?a/b@h/db?sslmode=require", "postgresql://ann:***@h/db?sslmode=require"),
    ("postgresql://ann@h/db?sslpassword=s1&sslmode=require",
     "postgresql://ann@h/db?sslpassword=***&sslmode=require"),
    ("postgresql://ann@h/db?%70assword=s1&PassWord=s2&api_key=s3&pwd=s4&x=1",
     "postgresql://ann@h/db?%70assword=***&PassWord=***&api_key=***&pwd=***&x=1"),
    ("postgresql://ann@h/db?password=s1?y=s2&a=1", "postgresql://ann@h/db?password=***&a=1"),
    ("postgresql://ann@h/db?password=s1&s2&sslmode=x",
     "postgresql://ann@h/db?password=***&sslmode=x"),
    ("sc://h:1/;token=s1;s2;user_id=ann", "sc://h:1/;token=***;user_id=ann"),
    ("sc://h:1/;user_id=ann;my_secret=s1", "sc://h:1/;user_id=ann;my_secret=***"),
    ("postgresql://ann:p/a?b@c@h/db", "postgresql://ann:***@h/db"),
    ("postgresql://h:5432/db?application_name=me@x", "postgresql://h:5432/db?application_name=me@x"),
    ("postgresql://[::1]/db?application_name=me@x", "postgresql://[::1]/db?application_name=me@x"),
])
def test_redact_hides_every_form_of_a_location_secret(text, shown):
    from strata.engine.locations import redact, secrets_of

    assert redact(text) == shown
    assert not any(piece in shown for piece in secrets_of(text))


def test_a_password_with_an_unencoded_question_mark_is_the_password():
    from strata.engine.locations import parse_location

    loc = parse_location("postgresql://ann:pa?ss@h:5433/db?sslmode=require")
    assert (loc.user, loc.password, loc.host, loc.port, loc.database) == (
        "ann", "pa?ss", "h", 5433, "db")
    assert dict(loc.options) == {"sslmode": "require"}


def test_a_plus_in_a_password_parameter_stays_a_plus():
    """libpq decodes a URL's parameters by percent-encoding only: `+` is no space."""
    from strata.engine.locations import parse_location

    assert parse_location("postgresql://ann@h/db?password=a+b%2Bc").password == "a+b+c"


def test_a_service_or_pgdatabase_may_name_the_database(monkeypatch):
    from strata.diagnostics import StrataError
    from strata.engine.locations import parse_location

    monkeypatch.delenv("PGSERVICE", raising=False)
    monkeypatch.delenv("PGDATABASE", raising=False)
    assert parse_location("postgresql://?service=prod").connect_args() == {"service": "prod"}
    with pytest.raises(StrataError, match="names no database"):
        parse_location("postgresql://")
    monkeypatch.setenv("PGSERVICE", "prod")
    assert parse_location("postgresql://").database is None
