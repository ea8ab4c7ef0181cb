"""Publication on PostgreSQL with readers about (issue 39 items 7 and 8).

Two things stand between a run's built tables and its view switch, both other
sessions reading the warehouse:

- **Older snapshots.** PostgreSQL reads a view's definition from the catalogue with
  a fresh snapshot, but the table it names with the transaction's. A REPEATABLE READ
  or SERIALIZABLE transaction whose snapshot was taken before the run's tables were
  committed would, after the switch, read the new views over tables it cannot see:
  empty. So, as CREATE INDEX CONCURRENTLY does (WaitForOlderSnapshots), publication
  first waits for every transaction of this database whose snapshot may predate the
  build (`backend_xmin` before the xmax of a snapshot taken once the build committed)
  to end. Only those found then: a snapshot taken later sees the run's tables. A READ
  COMMITTED session holds no snapshot between statements, so it is waited for only
  while a statement runs.
- **Locks.** Switching a view takes an ACCESS EXCLUSIVE lock, which waits for every
  session that read the view in a still-open transaction, and while it waits every
  new reader of that view queues behind it. So each attempt runs with a short
  `lock_timeout` (ATTEMPT_LOCK_TIMEOUT): a new reader queues that long at most; on a
  timeout the whole transaction rolls back (nothing changed) and is tried again after
  a growing pause.

Both waits share one bound (STRATA_PUBLISH_TIMEOUT, read by strata.engine.publication);
past it publication fails with E140 naming the sessions (pid, user, application, since
when) and how to end them. Nothing is published then: the run's tables stay
unreferenced, and the next run drops them. After a lock timeout the server no longer
says who blocked (pg_blocking_pids lists the sessions a *waiting* process waits for);
the sessions named are those holding a granted lock on the relation the attempt
timed out on, which are the ones an ACCESS EXCLUSIVE request waits for.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol

from sqlglot import exp

from strata.diagnostics import StrataError, fail
from strata.engine.adapters.base import Relation, as_text
from strata.textsafe import escape_unprintable


class Publisher(Protocol):
    """What publication asks of `postgres.PostgresAdapter`, which calls it: named here
    so this module does not import the adapter back."""

    where: str
    touching: Relation | None  # the relation the statement running may wait to lock

    def transaction(self) -> AbstractContextManager[None]: ...

    def rows(self, tree: exp.Expression) -> list[tuple]: ...

    def render(self, tree: exp.Expression) -> str: ...

    def lock_timeout_error(self) -> type[BaseException]: ...


ATTEMPT_LOCK_TIMEOUT = "200ms"  # how long a new reader may queue behind one attempt
FIRST_PAUSE, LONGEST_PAUSE = 0.05, 2.0  # seconds between attempts, doubling
XID_SPACE = 1 << 32


@dataclass(frozen=True)
class Session:
    """A session publication waits for, as E140 names it."""

    pid: int
    user: str
    application: str
    state: str
    since: str  # its transaction's start
    xmin: str = ""  # its oldest snapshot's xmin, where that is what it is waited for

    def key(self) -> tuple[int, str, str]:
        """One transaction of one session (a pid's next transaction is another)."""
        return self.pid, self.since, self.xmin

    def text(self) -> str:
        application = self.application or "no application_name"
        # another role's state and start are hidden from a role without pg_read_all_stats
        when = (f"{self.state}, in a transaction since {self.since}" if self.state else
                "its state hidden from this role (pg_read_all_stats shows it)")
        return escape_unprintable(f"pid {self.pid} (user {self.user}, {application}, "
                                  f"{when})")


@dataclass
class Deadline:
    """One bound for both waits; says once, on stderr, what it waits for."""

    seconds: float
    ends: float = 0.0
    said: bool = False

    def __post_init__(self) -> None:
        self.ends = time.monotonic() + self.seconds

    def passed(self) -> bool:
        return time.monotonic() >= self.ends

    def pause(self, seconds: float) -> None:
        time.sleep(max(0.0, min(seconds, self.ends - time.monotonic())))

    def say(self, sessions: list[Session], why: str) -> None:
        if self.said:
            return
        self.said = True
        who = "; ".join(s.text() for s in sessions) or "another session"
        print(escape_unprintable(f"waiting up to {self.seconds:g} s for {why} to end "
                                 f"before publishing: {who}"), file=sys.stderr)


def publish(adapter: Publisher, body: Callable[[], None], timeout: float,
            new_tables: bool = True) -> None:
    """`body` (the registry rows, the view switches, the history entry) in one
    transaction, once no older snapshot and no reader's lock stands in its way. A
    run that made no table (every snapshot reused) points views only at tables older
    snapshots saw already published: no snapshot to wait for then."""
    deadline = Deadline(timeout)
    if new_tables:
        _wait_for_older_snapshots(adapter, deadline)
    pause = FIRST_PAUSE
    while True:
        try:
            with adapter.transaction():
                adapter.rows(exp.select(_fn("set_config", _lit("lock_timeout"),
                                            _lit(ATTEMPT_LOCK_TIMEOUT), exp.true())))
                adapter.touching = None
                body()
            return
        except adapter.lock_timeout_error():
            target = adapter.touching
            holders = lock_holders(adapter, target) if target is not None else []
            where = f"`{target.schema}.{target.name}`" if target else "a relation"
            why = f"the sessions holding a lock on {where}"
            if deadline.passed():
                raise held_back(adapter, holders, timeout, f"holding a lock on {where}, "
                                "which publication must lock to switch it") from None
            deadline.say(holders, why)
            deadline.pause(pause)
            pause = min(pause * 2, LONGEST_PAUSE)


def _wait_for_older_snapshots(adapter: Publisher, deadline: Deadline) -> None:
    """Wait until every transaction found now whose snapshot may predate the run's
    committed tables has ended (or at least let go of that snapshot)."""
    (xmax,) = adapter.rows(exp.select(as_text(_fn("pg_snapshot_xmax",
                                                  _fn("pg_current_snapshot")))))[0]
    limit = int(xmax) % XID_SPACE
    waiting = {s.key(): s for s in older_snapshots(adapter, limit)}
    while waiting:
        if deadline.passed():
            raise held_back(adapter, list(waiting.values()), deadline.seconds,
                            "holding a snapshot older than the run's new tables (after "
                            "the switch it would read the views as empty)")
        deadline.say(list(waiting.values()), "the transactions with older snapshots")
        deadline.pause(FIRST_PAUSE * 4)
        still = {s.key() for s in older_snapshots(adapter, limit)}
        waiting = {k: s for k, s in waiting.items() if k in still}


def precedes(xid: int, limit: int) -> bool:
    """PostgreSQL's TransactionIdPrecedes for normal 32-bit xids (they wrap around)."""
    return ((xid - limit) % XID_SPACE) >= XID_SPACE // 2


def older_snapshots(adapter: Publisher, limit: int) -> list[Session]:
    """The other client sessions of this database whose oldest snapshot's xmin
    precedes `limit`. Any role sees another's database, pid, user, application and
    backend_xmin; its backend type (like its state) only with pg_read_all_stats, so a
    hidden type counts as a client's."""
    backend_type = exp.Coalesce(this=exp.column("backend_type", "a"),
                                expressions=[_lit("client backend")])
    query = _activity().where(exp.and_(
        exp.EQ(this=exp.column("datname", "a"), expression=_fn("current_database")),
        exp.NEQ(this=exp.column("pid", "a"), expression=_fn("pg_backend_pid")),
        exp.EQ(this=backend_type, expression=_lit("client backend")),
        exp.Not(this=exp.Is(this=exp.column("backend_xmin", "a"), expression=exp.Null()))))
    query = query.select(as_text(exp.column("backend_xmin", "a")), append=True)
    return [_session(row, xmin=str(row[5])) for row in adapter.rows(query)
            if precedes(int(row[5]), limit)]


def lock_holders(adapter: Publisher, target: Relation) -> list[Session]:
    """The other sessions holding a granted lock on `target` (every lock mode
    conflicts with the ACCESS EXCLUSIVE a view switch takes)."""
    locks = exp.Table(this=exp.to_identifier("pg_locks"),
                      alias=exp.TableAlias(this=exp.to_identifier("l")))
    relation = _fn("to_regclass", _lit(adapter.render(target.table())))
    query = _activity().join(locks, on=exp.EQ(this=exp.column("pid", "l"),
                                              expression=exp.column("pid", "a"))).where(
        exp.and_(exp.column("granted", "l"),
                 exp.EQ(this=exp.column("relation", "l"), expression=relation),
                 exp.NEQ(this=exp.column("pid", "a"), expression=_fn("pg_backend_pid"))))
    found = {row[0]: _session(row) for row in adapter.rows(query.distinct())}
    return [found[p] for p in sorted(found)]


def held_back(adapter: Publisher, sessions: list[Session], timeout: float,
              why: str) -> StrataError:
    if len(sessions) == 1:
        count, end = "1 session", f"SELECT pg_terminate_backend({sessions[0].pid})"
    else:
        pids = ", ".join(str(s.pid) for s in sessions) or "PID"
        count = f"{len(sessions)} sessions" if sessions else "another session"
        end = f"SELECT pg_terminate_backend(pid) FROM unnest(ARRAY[{pids}]) AS pid"
    return fail("E140", f"publication to `{adapter.where}` waited {timeout:g} s for "
                f"{count} {why}; nothing was published", None,
                "end their transactions (COMMIT or ROLLBACK, or close the sessions), or "
                f"end the sessions: `{end}`; then run again (its tables are dropped and "
                "built again). STRATA_PUBLISH_TIMEOUT (seconds) sets how long to wait",
                notes=[s.text() for s in sessions])


def _activity() -> exp.Select:
    def col(name: str) -> exp.Column:
        return exp.column(name, "a")

    return exp.select(col("pid"), col("usename"), col("application_name"), col("state"),
                      as_text(col("xact_start"))).from_(exp.Table(
        this=exp.to_identifier("pg_stat_activity"),
        alias=exp.TableAlias(this=exp.to_identifier("a"))))


def _session(row: tuple, xmin: str = "") -> Session:
    pid, user, application, state, since = row[:5]
    return Session(int(pid), str(user or ""), str(application or ""), str(state or ""),
                   str(since or "?"), xmin)


def _fn(name: str, *args: exp.Expression) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=list(args))


def _lit(value: str) -> exp.Literal:
    return exp.Literal.string(value)
