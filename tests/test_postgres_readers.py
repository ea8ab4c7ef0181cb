"""PostgreSQL readers during publication (issue 39 items 7 and 8), on a real server.

A reader is a psycopg session of its own, as a BI tool's would be. The warehouse
holds two views whose contents must agree: `a` (one row per order) and `b` (their
count). The old state has 1,000 orders, the new one 1,100; a reader must see
(1000, 1000) or (1100, 1100): never an empty view, never one old and one new.

- Item 7: a REPEATABLE READ (or SERIALIZABLE) reader whose snapshot predates the
  run's tables saw the switched views as empty; publication now waits for such
  snapshots to end first (as CREATE INDEX CONCURRENTLY does).
- Item 8: a session idle in a transaction after reading a view held publication
  forever (its lock) and queued every new reader behind it; publication now tries
  with a short lock_timeout, backs off, and after STRATA_PUBLISH_TIMEOUT fails with
  E140 naming the session; nothing published changes.

No assertion on a duration: the bound is the product's (STRATA_PUBLISH_TIMEOUT, set
short here); the test asserts the coded error. A reader's own lock_timeout below is a
hang guard, far above the run's per-attempt lock_timeout.
"""

from __future__ import annotations

import subprocess
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pytest
from engine_warehouses import _postgres
from enginehelpers import error_code, script_popen, strata

psycopg = pytest.importorskip("psycopg")

MODELS = """
source orders = file 'data/orders.csv' {
  id: int
  amount: int
}

model a {
  from orders
  select id, amount
}

model b {
  from orders
  aggregate n = count()
}
"""
OLD, NEW = 1000, 1100
LEVELS = ["READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE"]
WAITING = "before publishing"  # the line a run prints when a session holds it back


def _write(root: Path, rows: int) -> None:
    lines = "".join(f"{i},{i % 7}\n" for i in range(rows))
    (root / "data" / "orders.csv").write_text("id,amount\n" + lines)


def _project(root: Path, rows: int) -> Path:
    (root / "data").mkdir(parents=True)
    (root / "models.strata").write_text(MODELS)
    _write(root, rows)
    return root


@contextmanager
def _session(url: str, application: str):
    from strata.engine.locations import parse_location

    args = parse_location(url).connect_args()
    with psycopg.connect(**args, autocommit=True, application_name=application) as con:
        yield con


def _state(con) -> tuple:
    """(rows of a, b's count) read in one statement."""
    return con.execute('SELECT (SELECT count(*) FROM main.v_a), '
                       '(SELECT n FROM main.v_b)').fetchone()


def _published(url: str) -> int:
    return _postgres(url).sql(
        "SELECT count(*) FROM strata_internal.history WHERE kind = 'run'")[0][0]


def _start_run(root: Path, url: str, bound: str) -> subprocess.Popen:
    return script_popen("run", ".", "-o", url, cwd=root,
                        env={"STRATA_PUBLISH_TIMEOUT": bound}, stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, text=True)


def _until_waiting_or_done(run: subprocess.Popen) -> str:
    """stderr up to the run's line saying a session holds publication back, or all of
    it if the run ends first (nothing held it)."""
    seen = ""
    while WAITING not in seen:
        line = run.stderr.readline()
        if not line:
            break
        seen += line
    return seen


def _as_writer(url: str) -> str:
    """The warehouse's URL for a role of its own that may create schemas there and
    nothing more: no superuser, no pg_read_all_stats (other roles' sessions show it
    their pid, user, application and backend_xmin, not their state)."""
    with _session(url, "setup") as con:
        database = con.execute("SELECT current_database()").fetchone()[0]
        con.execute("DO $$ BEGIN CREATE ROLE writer LOGIN; "
                    "EXCEPTION WHEN duplicate_object THEN NULL; END $$")
        con.execute(f'GRANT CREATE ON DATABASE "{database}" TO writer')
    assert url.startswith("postgresql://postgres@")
    return url.replace("postgresql://postgres@", "postgresql://writer@", 1)


@pytest.mark.parametrize("level, role", [(level, "superuser") for level in LEVELS]
                         + [("REPEATABLE READ", "writer")])
def test_a_reader_open_during_publication_sees_the_old_state_or_the_new_never_empty(
        level, role, pg_warehouse_url, tmp_path):
    url = pg_warehouse_url if role == "superuser" else _as_writer(pg_warehouse_url)
    root = _project(tmp_path / "p", OLD)
    strata("run", ".", "-o", url, cwd=root, check=True)
    _write(root, NEW)
    with _session(pg_warehouse_url, "snapshot-reader") as reader:  # a superuser's
        reader.execute(f"BEGIN ISOLATION LEVEL {level}")
        reader.execute("SELECT 1")  # REPEATABLE READ and up: the snapshot is taken here
        run = _start_run(root, url, "60")
        said = _until_waiting_or_done(run)
        seen = _state(reader)
        reader.execute("COMMIT")
    _out, err = run.communicate(timeout=120)
    assert run.returncode == 0, said + err
    assert seen in [(OLD, OLD), (NEW, NEW)], (level, seen)
    with _session(pg_warehouse_url, "after") as after:
        assert _state(after) == (NEW, NEW)


def test_a_rerun_that_reuses_every_snapshot_does_not_wait_for_an_older_snapshot(
        pg_warehouse_url, tmp_path):
    """Every view then points at a table an open snapshot already saw published: a
    long REPEATABLE READ reader (a pg_dump, say) holds nothing back."""
    url = pg_warehouse_url
    root = _project(tmp_path / "p", OLD)
    strata("run", ".", "-o", url, cwd=root, check=True)
    with _session(url, "long-reader") as reader:
        reader.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        assert _state(reader) == (OLD, OLD)
        reader.execute("COMMIT")  # let go of the views' locks, keep a snapshot:
        reader.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        reader.execute("SELECT 1")
        again = strata("run", ".", "-o", url, cwd=root,
                       env={"STRATA_PUBLISH_TIMEOUT": "0"}, check=True)
        assert WAITING not in again.stderr
        assert _state(reader) == (OLD, OLD)
        reader.execute("COMMIT")
    assert _published(url) == 2


def test_an_idle_in_transaction_reader_fails_publication_with_E140_naming_it_and_changes_nothing(
        pg_warehouse_url, tmp_path):
    url = pg_warehouse_url
    root = _project(tmp_path / "p", OLD)
    strata("run", ".", "-o", url, cwd=root, check=True)
    published = _published(url)
    _write(root, NEW)
    with _session(url, "idle-reader") as idle:
        idle.execute("BEGIN")
        assert _state(idle) == (OLD, OLD)  # holds its locks on both views from now on
        pid = idle.info.backend_pid

        failed = strata("run", ".", "-o", url, cwd=root,
                        env={"STRATA_PUBLISH_TIMEOUT": "1"}, check=False)
        assert "error[E140]" in failed.stderr, failed.stderr
        assert "Traceback" not in failed.stderr
        for told in (f"pid {pid}", "idle-reader", "postgres", "pg_terminate_backend"):
            assert told in failed.stderr, (told, failed.stderr)
        with _session(url, "check") as check:
            assert _state(check) == (OLD, OLD)
        assert _published(url) == published  # no history entry for a published run

        # another run waits longer; meanwhile a new reader reads the old state: it does
        # not queue behind the run for the run's whole bound
        run = _start_run(root, url, "120")
        said = _until_waiting_or_done(run)
        assert WAITING in said, said + run.communicate(timeout=120)[1]
        with _session(url, "new-reader") as new:
            new.execute("SET lock_timeout = '20s'")  # a hang guard only
            assert _state(new) == (OLD, OLD)
        idle.execute("COMMIT")  # the idle session ends its transaction: the run goes on
    _out, err = run.communicate(timeout=120)
    assert run.returncode == 0, said + err
    with _session(url, "after") as after:
        assert _state(after) == (NEW, NEW)
    assert _published(url) == published + 1
    assert not _postgres(url).leftovers()  # the failed run's tables were cleaned up


def test_a_bad_STRATA_PUBLISH_TIMEOUT_is_E084_before_anything_is_built(tmp_path):
    root = _project(tmp_path / "p", 10)
    done = strata("run", ".", "-o", str(tmp_path / "wh.duckdb"), cwd=root,
                  env={"STRATA_PUBLISH_TIMEOUT": "nan"}, check=False)
    assert error_code(done) == "E084" and "STRATA_PUBLISH_TIMEOUT" in done.stderr
    with duckdb.connect(str(tmp_path / "wh.duckdb")) as con:
        assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE "
                           "starts_with(table_name, 'snap_')").fetchone() == (0,)


def test_an_older_snapshot_is_told_across_the_xid_wraparound():
    from strata.engine.adapters.pg_publication import XID_SPACE, precedes

    assert precedes(100, 200) and not precedes(200, 100) and not precedes(7, 7)
    assert precedes(XID_SPACE - 5, 3)  # taken just before the 32-bit counter wrapped
    assert not precedes(3, XID_SPACE - 5)
