"""Build lanes: worker threads that run a run's CREATE TABLE statements side by side,
each on a connection of its own (`Adapter.lane()`: a DuckDB cursor, a PostgreSQL
connection; Spark's one thread-safe session) and, where DDL is transactional, in
its own build transactions (Spark: each CREATE TABLE commits alone).

Why lanes and not a pool: a trivial model's CTAS costs about as much as a commit,
so tables are created many to a transaction; a transaction only sees its own tables
and those committed before it began. A model therefore goes to the lane that holds
its unfinished inputs (a chain of models stays in one lane, one transaction) and
the lanes run side by side: 1,000 trivial CTAS in two chains took 0.5 s on two
lanes against 1.4 s in batches on one connection. The main thread decides which
lane a statement goes to and when a lane must start a fresh transaction; a lane
decides nothing but when its batch is full.

What a run needs of every committed table (its columns and content hash) is
computed off the main thread (`after_commit`, one statement per commit): there it
held up the planning of every later model (100 models on 1e6 rows: 1.9 s of the
main thread's 5 s, the lanes idle meanwhile). It runs on a thread of its own, the
hasher, not in the lane that committed: hashing only reads, and DuckDB lets reads
go on while a checkpoint holds its lock, while every CREATE TABLE waits for the
checkpoint to end. A checkpoint takes one core for seconds (500 models on 1e5
rows: ~3 s of a 7 s run, during which the four lanes sat blocked), so the
hashes that lanes used to compute after their commits now fill that time.
An engine that hashes a table while writing it (`Adapter.build_table_hashed`: Spark,
where the hash was a job of its own re-reading every table) hands the lane its hash
with the table: the hasher has nothing to do for it.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from strata.engine.adapters.base import Adapter, Relation


class LaneAborted(Exception):
    """A lane's statement failed (`model`'s, or one queued before it in the lane)."""

    def __init__(self, model: str, error: BaseException):
        super().__init__(model)
        self.model = model
        self.error = error


@dataclass
class Built:
    """What a CREATE TABLE in a lane gives back."""

    rows: int | None  # None: the engine did not count them (the content hash does)
    seconds: float
    committed: list[str] = field(default_factory=list)  # models this job committed
    # the hasher's jobs for this job's commits (each gives {model: after_commit's result})
    hashing: list[Future] = field(default_factory=list)
    # model -> what `after_commit` gave for its table, once `Lanes.collect` hands it out
    settled: dict[str, Any] = field(default_factory=dict)
    # model -> its (columns, row hash), computed by its own statement (the engine hashes
    # while writing: `Adapter.build_table_hashed`), for the models this job committed
    hashed: dict[str, Any] = field(default_factory=dict)


# (the hasher's connection, [(model, table name)] just committed) -> {model: anything}
AfterCommit = Callable[[Adapter, list[tuple[str, str]]], dict[str, Any]]


class Hasher:
    """One thread with its own cursor that runs `after_commit` on what lanes commit.

    A commit of tables smaller than a DuckDB row group is hashed lazily: its job
    waits until a model needs one of its tables hashed (`want`: a join, a merge, a
    kept model reads what identity reuse decides) or the last table is committed
    (`release`). Such tables go through the WAL, so DuckDB's checkpoint at the end
    of the build writes them: one core for seconds, during which no CREATE TABLE
    can run but reads can (`Lanes.checkpoint`). Their hashes run then, on the
    other core, many to a statement. A larger table was written to the file by its
    CREATE TABLE (the checkpoint has little left to do), so its hash runs at once,
    beside the lanes."""

    ROW_GROUP = 122_880  # DuckDB's rows per row group: smaller tables go through the WAL

    def __init__(self, adapter: Adapter, after_commit: AfterCommit):
        self._adapter = adapter
        self._errors = adapter.engine_errors()
        self._after_commit = after_commit
        self._cursor: Adapter | None = None
        self._cv = threading.Condition()
        self._jobs: list[tuple[list[tuple[str, str]], Future]] = []  # not started
        self._wanted: set[str] = set()
        self._released = False
        self._closed = False
        self._thread = threading.Thread(target=self._loop, name="strata-hasher", daemon=True)
        self._thread.start()

    def submit(self, tables: list[tuple[str, str]], rows: int = 0) -> Future:
        """Called by a lane right after its commit (`rows`: its largest table's); a
        failure names the last model."""
        future: Future = Future()
        with self._cv:
            if rows >= self.ROW_GROUP:
                self._wanted.update(m for m, _ in tables)
            self._jobs.append((tables, future))
            self._cv.notify()
        return future

    def want(self, models) -> None:
        """These models' hashes are needed now (main thread)."""
        with self._cv:
            self._wanted.update(models)
            self._cv.notify()

    def release(self) -> None:
        """Every job may run now, and every later one at once."""
        with self._cv:
            self._released = True
            self._cv.notify()

    def pending(self) -> bool:
        with self._cv:
            return bool(self._jobs)

    BATCH = 64  # tables hashed in one statement, at most

    def _next(self) -> list[tuple[list[tuple[str, str]], Future]]:
        """The jobs to run now: every released one, in order, up to BATCH tables in
        all (one statement for many commits: their per-statement cost is most of a
        small table's hash)."""
        take, count = [], 0
        for job in list(self._jobs):
            tables = job[0]
            if not (self._released or any(m in self._wanted for m, _ in tables)):
                continue
            if take and count + len(tables) > self.BATCH:
                break
            self._jobs.remove(job)
            take.append(job)
            count += len(tables)
        return take

    def _loop(self) -> None:
        while True:
            with self._cv:
                while not (jobs := self._next()):
                    if self._closed:
                        return
                    self._cv.wait()
            jobs = [(tables, f) for tables, f in jobs if f.set_running_or_notify_cancel()]
            try:
                out = self._run([t for tables, _ in jobs for t in tables])
            except Exception as err:  # noqa: BLE001 - the collector re-raises it
                for _, future in jobs:
                    future.set_exception(err)
                continue
            for tables, future in jobs:
                future.set_result({m: out[m] for m, _ in tables})

    def _run(self, tables: list[tuple[str, str]]) -> dict[str, Any]:
        if not tables:
            return {}
        if self._cursor is None:
            self._cursor = self._adapter.lane()
        cursor = self._cursor
        try:
            # a transaction of its own, begun now: one left open by an earlier job's
            # result (a bound relation keeps one) would not see this commit's tables
            with cursor.transaction():
                return self._after_commit(cursor, tables)
        except self._errors as err:
            raise LaneAborted(tables[-1][0], err) from None

    def idle(self) -> None:
        """Once every job submitted so far has ended (failed ones too): released, the
        jobs run in the order submitted, so an empty one last marks the end."""
        self.release()
        wait([self.submit([])])

    def close(self) -> None:
        self.release()
        with self._cv:
            self._closed = True
            self._cv.notify()
        self._thread.join()
        _close_quietly(self._adapter, self._cursor)
        self._cursor = None


class Lane:
    """One worker thread with its own cursor; its jobs run in the order queued."""

    def __init__(self, index: int, adapter: Adapter, batch: int,
                 commit_rows: int, hasher: Hasher | None = None):
        self.index = index
        self._adapter = adapter
        self._errors = adapter.engine_errors()
        self._transactional = adapter.batches_builds
        self._hasher = hasher
        # tables to a transaction (one where each CREATE TABLE commits by itself)
        self._batch = batch if self._transactional else 1
        self._commit_rows = commit_rows  # a table this large commits at once
        self._executor = ThreadPoolExecutor(1, thread_name_prefix=f"strata-lane{index}")
        self._cursor: Adapter | None = None
        # the lane thread's own state (read by the main thread only when idle)
        self._open: list[str] = []  # models whose tables the open transaction holds
        self._tables: dict[str, str] = {}  # model -> its table, while held open
        self._rows: dict[str, int | None] = {}  # model -> its table's rows, while held open
        # model -> (columns, row hash) its statement computed, while held open
        self._hashed: dict[str, Any] = {}
        self._failure: tuple[str, BaseException] | None = None
        # the main thread's view of the lane
        self.uncommitted: set[str] = set()  # submitted, commit not seen yet
        self.fresh_clock = 0  # commits seen up to here are visible to its transaction
        self.commit_requested = False
        self.queued = 0  # jobs submitted and not yet processed
        self.heavy: set[str] = set()  # heavy statements queued or running

    # ------------------------------------------------------------ main thread
    def build(self, model: str, target: Relation, query: exp.Expression | None,
              text: str | None, fresh: bool) -> Future:
        """CREATE TABLE `target` AS `query` (or its `text`, rendered for the engine
        already); with `fresh`, in a transaction begun after this call (the statement
        reads tables committed elsewhere)."""
        self.queued += 1
        self.uncommitted.add(model)
        self.commit_requested = False  # a commit queued before does not cover this one
        return self._executor.submit(self._build, model, target, query, text, fresh)

    def commit(self) -> Future:
        self.queued += 1
        self.commit_requested = True
        return self._executor.submit(self._commit)

    def rollback(self) -> None:
        """After a failure, once no job runs: the open transaction's tables go."""
        if self._open and self._cursor is not None and self._transactional:
            try:
                self._cursor.rollback()
            except self._errors:
                pass  # already aborted by the failed statement
        self._open.clear()
        self._tables.clear()
        self._rows.clear()
        self._hashed.clear()
        self.uncommitted.clear()

    def close(self) -> None:
        self._executor.shutdown(wait=True)
        _close_quietly(self._adapter, self._cursor)
        self._cursor = None

    # ------------------------------------------------------------ lane thread
    def _build(self, model: str, target: Relation, query: exp.Expression | None,
               text: str | None, fresh: bool) -> Built:
        if self._failure is not None:
            raise LaneAborted(*self._failure)
        cursor = self._cursor_()
        hashing: list[Future] = []
        hashed: dict[str, Any] = {}
        committed = self._commit_open(hashing, hashed) if fresh and self._open else []
        try:
            if not self._open and self._transactional:
                cursor.begin()
            started = time.perf_counter()
            rows, settled = build_hashed(cursor, target, query, text)
            seconds = time.perf_counter() - started
        except self._errors as err:
            self._fail(model, err)
            raise
        self._open.append(model)
        self._tables[model] = target.name
        self._rows[model] = rows
        if settled is not None:
            self._hashed[model] = settled
        if (rows or 0) >= self._commit_rows or len(self._open) >= self._batch:
            committed += self._commit_open(hashing, hashed)
        return Built(rows, seconds, committed, hashing, hashed=hashed)

    def _commit(self) -> Built:
        if self._failure is not None:
            raise LaneAborted(*self._failure)
        hashing: list[Future] = []
        hashed: dict[str, Any] = {}
        committed = self._commit_open(hashing, hashed) if self._open else []
        return Built(0, 0.0, committed, hashing, hashed=hashed)

    def _commit_open(self, hashing: list[Future], hashed: dict[str, Any]) -> list[str]:
        """Commit the open transaction, then hand its tables to the hasher (its job
        into `hashing`), but those hashed by their own statement (into `hashed`); a
        failure names the last model it held."""
        try:
            if self._transactional:
                self._cursor_().commit()
        except self._errors as err:
            self._fail(self._open[-1], err)
            raise LaneAborted(*self._failure) from err
        done, self._open = self._open, []
        tables = [(m, self._tables.pop(m)) for m in done]
        tables = [(m, t) for m, t in tables if m not in self._hashed]
        rows = max((self._rows.pop(m, 0) or 0 for m in done), default=0)
        hashed.update((m, self._hashed.pop(m)) for m in done if m in self._hashed)
        if self._hasher is not None and tables:
            hashing.append(self._hasher.submit(tables, rows))
        return done

    def _fail(self, model: str, err: BaseException) -> None:
        """Later jobs of this lane will not run; its open transaction is gone."""
        self._failure = (model, err)
        try:
            if self._transactional:
                self._cursor_().rollback()
        except self._errors:
            pass
        self._open.clear()
        self._tables.clear()
        self._rows.clear()
        self._hashed.clear()

    def _cursor_(self) -> Adapter:
        if self._cursor is None:
            self._cursor = self._adapter.lane()
        return self._cursor


class Lanes:
    """The main thread's side of the build lanes: which lane a statement goes to,
    whether its transaction must be fresh, and which tables are built and committed
    (only those can be checked and hashed from the main connection).

    Freshness runs on a clock of the commits the main thread has seen: a lane's
    transaction sees what was committed before its `fresh_clock`; a statement that
    reads a table committed later (in another lane, or on the main connection) asks
    its lane to commit and begin again."""

    def __init__(self, adapter: Adapter, count: int, batch: int,
                 commit_rows: int, after_commit: AfterCommit | None = None):
        self._adapter = adapter
        self._errors = adapter.engine_errors()
        self._hasher = Hasher(adapter, after_commit) if after_commit is not None else None
        self._checkpoint: ThreadPoolExecutor | None = None
        self.lanes = [Lane(i, adapter, batch, commit_rows, self._hasher)
                      for i in range(count)]
        self.jobs: set[Future] = set()  # submitted, not taken by `collect` yet
        self._done: queue.SimpleQueue = queue.SimpleQueue()  # (future, lane, model)
        self.lane_of: dict[str, Lane] = {}  # model built in a lane -> the lane
        self._clock = 0
        self._committed_at: dict[str, int] = {}  # model built this run -> clock
        self._order: dict[str, int] = {}  # model -> its place in submission order
        self._built: dict[str, Built] = {}  # finished CTAS, not committed yet
        self._committed: set[str] = set()  # committed (and hashed), not taken yet
        self._settled: dict[str, Any] = {}  # model -> after_commit's result, not taken yet
        self.rows_built: dict[str, int | None] = {}  # model -> rows its CTAS wrote

    def build(self, model: str, target: Relation, query: exp.Expression | None,
              text: str | None, reads: list[str], heavy: bool = False) -> None:
        """Queue `CREATE TABLE target AS query` for `model`, which reads the models
        `reads`: at most one lane may hold them uncommitted (see `lanes_holding`).

        A `heavy` statement (a large input: it may run long) first commits what its
        lane holds, so that the readers of those tables need not queue behind it
        (see `behind_heavy`), and goes to an idle lane when there is one."""
        holding = self.lanes_holding(reads)
        lane = next(iter(holding)) if holding else min(
            self.lanes, key=lambda ln: (ln.queued, len(ln.uncommitted)))
        if heavy:
            if lane.uncommitted - set(reads):
                self.request_commit([lane])
            lane.heavy.add(model)
        newest = max((self._committed_at.get(m, 0) for m in reads
                      if self.lane_of.get(m) is not lane), default=0)
        fresh = newest > lane.fresh_clock
        if fresh:
            lane.fresh_clock = self._clock
        self._order[model] = len(self._order)
        self.lane_of[model] = lane
        self._track(lane.build(model, target, query, text, fresh), lane, model)

    def behind_heavy(self, reads: list[str]) -> bool:
        """Would a statement reading `reads` queue behind a heavy statement it does not
        need? Then it waits for the commit queued before that statement and goes to
        another lane."""
        return any(lane.heavy - set(reads) for lane in self.lanes_holding(reads))

    def built_elsewhere(self, model: str) -> None:
        """`model`'s table was committed on the main connection just now."""
        self._committed_at[model] = self._tick()

    def lanes_holding(self, models) -> set[Lane]:
        """The lanes whose open transaction may hold one of `models`' tables."""
        return {self.lane_of[m] for m in models
                if m in self.lane_of and m in self.lane_of[m].uncommitted}

    def request_commit(self, lanes) -> None:
        """Ask these lanes to commit what they hold (once; later builds ask again)."""
        for lane in lanes:
            if lane.uncommitted and not lane.commit_requested:
                self._track(lane.commit(), lane, None)

    def collect(self, block: bool) -> list[tuple[str, Built]]:
        """The models whose tables are built and committed since the last call, in
        submission order (inputs first). With `block`, waits for a job to end first.
        A failed statement raises LaneAborted with its model and error."""
        if not self.jobs:
            return []
        if block and not any(lane.queued for lane in self.lanes):
            self.release()  # only hashes could end: never wait on one that waits
        done = [self._done.get()] if block else []
        while True:
            try:
                done.append(self._done.get_nowait())
            except queue.Empty:
                break
        for future, lane, model in done:
            self.jobs.discard(future)
            if lane is None:  # the hasher's: these tables are committed and hashed
                settled = future.result()  # its failure is a LaneAborted already
                self._settled.update(settled)
                self._committed.update(settled)
                continue
            lane.queued -= 1
            try:
                outcome = future.result()
            except self._errors as err:
                raise LaneAborted(model or "?", err) from None
            for hashing in outcome.hashing:
                self._track(hashing, None, None)
            if model is None:  # a commit
                lane.commit_requested = False
            else:
                lane.heavy.discard(model)
                self._built[model] = outcome
                self.rows_built[model] = outcome.rows
            self._seen_commit(lane, outcome.committed, hashed=self._hasher is None)
            self._settled.update(outcome.hashed)  # nothing for the hasher to wait for
            self._committed.update(outcome.hashed)
        ready = sorted((m for m in self._committed if m in self._built),
                       key=self._order.__getitem__)
        self._committed.difference_update(ready)
        out = []
        for m in ready:
            built = self._built.pop(m)
            built.settled = {m: self._settled.pop(m)} if m in self._settled else {}
            out.append((m, built))
        return out

    def want(self, models) -> None:
        """These models' tables are to be hashed now, not with the rest at the end."""
        if self._hasher is not None:
            self._hasher.want(models)

    def release(self) -> None:
        """Every table committed and to come is hashed at once (the end of the build)."""
        if self._hasher is not None:
            self._hasher.release()

    def built(self) -> bool:
        """Has every statement queued so far run and been committed? (Hashes may still
        be running: they only read.)"""
        return all(not lane.queued and not lane.uncommitted for lane in self.lanes)

    def checkpoint(self) -> None:
        """Once the last table is committed, DuckDB's checkpoint of what the build wrote
        starts on a thread of its own (once a run), while the hasher goes on reading:
        left to the publication's commit, the whole checkpoint ran alone there,
        after the last hash (500 models on 1e5 rows: ~3 s of one core, a 380 MB WAL).
        Best effort: when it cannot run now, the publication's commit does it."""
        if self._checkpoint is None:
            self._checkpoint = ThreadPoolExecutor(1, thread_name_prefix="strata-checkpoint")
            self._checkpoint.submit(self._run_checkpoint)

    def _run_checkpoint(self) -> None:
        cursor = self._adapter.lane()
        try:
            cursor.checkpoint()
        except self._errors:
            pass  # another writer is open, or the file fails: publication will say
        finally:
            _close_quietly(self._adapter, cursor)

    def abandon(self) -> None:
        """After a failure: let queued statements end (their errors do not matter) and
        roll back every open transaction."""
        self.release()  # a hash waiting for its turn would never end otherwise
        wait(self.jobs)
        self.jobs.clear()
        if self._hasher is not None:  # hashes asked for by jobs not collected yet
            self._hasher.idle()
        for lane in self.lanes:
            lane.rollback()

    def close(self) -> None:
        for lane in self.lanes:
            lane.close()
        if self._hasher is not None:
            self._hasher.close()
        if self._checkpoint is not None:
            self._checkpoint.shutdown(wait=True)

    def _seen_commit(self, lane: Lane, models: list[str], hashed: bool) -> None:
        """Committed: other lanes' transactions begun from now on see them. They are
        handed out once hashed too (`hashed`, or when the hasher's job ends)."""
        if models:
            clock = self._tick()
            for m in models:
                lane.uncommitted.discard(m)
                self._committed_at[m] = clock
            if hashed:
                self._committed.update(models)

    def _tick(self) -> int:
        self._clock += 1
        return self._clock

    def _track(self, future: Future, lane: Lane | None, model: str | None) -> None:
        """Lanes report finished jobs through a queue: the main thread takes what has
        ended without scanning what still runs."""
        self.jobs.add(future)
        future.add_done_callback(lambda f: self._done.put((f, lane, model)))


def build_hashed(ad: Adapter, target: Relation, query: exp.Expression | None,
                 text: str | None) -> tuple[int | None, Any]:
    """CREATE TABLE target AS the query: the rows it wrote where the engine says, and
    its (columns, row hash) where the engine computed them while writing
    (`Adapter.build_table_hashed`; None: to be hashed after, as `after_commit` does)."""
    hashed = ad.build_table_hashed(target, query, text)
    if hashed is None:
        return ad.build_table(target, query, text), None
    return hashed.rows, hashed.settled


def _close_quietly(adapter: Adapter, cursor: Adapter | None) -> None:
    """Close a thread's connection at the end of a run; one the engine already
    closed with a failed transaction has nothing left to release."""
    if cursor is None:
        return
    try:
        adapter.close_lane(cursor)
    except adapter.engine_errors():
        pass
