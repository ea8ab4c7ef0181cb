"""Build lanes: worker threads that run a run's CREATE TABLE statements side by side,
each on its own DuckDB cursor and in its own build transactions.

Why lanes and not a pool: a trivial model's CTAS costs about as much as a commit,
so tables are created many to a transaction; a transaction only sees its own tables
and those committed before it began. A model therefore goes to the lane that holds
its unfinished inputs (a chain of models stays in one lane, one transaction) and
the lanes run side by side: 1,000 trivial CTAS in two chains took 0.5 s on two
lanes against 1.4 s in batches on one connection. The main thread decides which
lane a statement goes to and when a lane must start a fresh transaction; a lane
decides nothing but when its batch is full.
"""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

import duckdb


class LaneAborted(Exception):
    """A statement queued behind a failed one in the same lane: it did not run."""

    def __init__(self, model: str, error: duckdb.Error):
        super().__init__(model)
        self.model = model
        self.error = error


@dataclass
class Built:
    """What a CREATE TABLE in a lane gives back."""

    rows: int
    seconds: float
    committed: list[str] = field(default_factory=list)  # models this job committed


class Lane:
    def __init__(self, index: int, con: duckdb.DuckDBPyConnection, batch: int,
                 commit_rows: int):
        self.index = index
        self._con = con
        self._batch = batch  # tables to a transaction
        self._commit_rows = commit_rows  # a table this large commits at once
        self._executor = ThreadPoolExecutor(1, thread_name_prefix=f"strata-lane{index}")
        self._cursor: duckdb.DuckDBPyConnection | None = None
        # the lane thread's own state (read by the main thread only when idle)
        self._open: list[str] = []  # models whose tables the open transaction holds
        self._failure: tuple[str, duckdb.Error] | None = None
        # the main thread's view of the lane
        self.uncommitted: set[str] = set()  # submitted, commit not seen yet
        self.fresh_clock = 0  # commits seen up to here are visible to its transaction
        self.commit_requested = False
        self.queued = 0  # jobs submitted and not yet processed

    # ------------------------------------------------------------ main thread
    def build(self, model: str, table: str, query: str, fresh: bool) -> Future:
        """CREATE TABLE `table` AS `query`; with `fresh`, in a transaction begun after
        this call (the statement reads tables committed elsewhere)."""
        self.queued += 1
        self.uncommitted.add(model)
        self.commit_requested = False  # a commit queued before does not cover this one
        return self._executor.submit(self._build, model, table, query, fresh)

    def commit(self) -> Future:
        self.queued += 1
        self.commit_requested = True
        return self._executor.submit(self._commit)

    def rollback(self) -> None:
        """After a failure, once no job runs: the open transaction's tables go."""
        if self._open and self._cursor is not None:
            try:
                self._cursor.execute("ROLLBACK")
            except duckdb.Error:
                pass  # already aborted by the failed statement
        self._open.clear()
        self.uncommitted.clear()

    def close(self) -> None:
        self._executor.shutdown(wait=True)
        if self._cursor is not None:
            try:
                self._cursor.close()
            except duckdb.Error:
                pass
            self._cursor = None

    # ------------------------------------------------------------ lane thread
    def _build(self, model: str, table: str, query: str, fresh: bool) -> Built:
        if self._failure is not None:
            raise LaneAborted(*self._failure)
        cursor = self._cursor_()
        committed = self._commit_open() if fresh and self._open else []
        try:
            if not self._open:
                cursor.execute("BEGIN TRANSACTION")
            started = time.perf_counter()
            (rows,) = cursor.execute(f"CREATE TABLE {table} AS {query}").fetchone()
            seconds = time.perf_counter() - started
        except duckdb.Error as err:
            self._fail(model, err)
            raise
        self._open.append(model)
        if rows >= self._commit_rows or len(self._open) >= self._batch:
            committed += self._commit_open()
        return Built(rows, seconds, committed)

    def _commit(self) -> list[str]:
        if self._failure is not None:
            raise LaneAborted(*self._failure)
        return self._commit_open() if self._open else []

    def _commit_open(self) -> list[str]:
        try:
            self._cursor_().execute("COMMIT")
        except duckdb.Error as err:
            self._fail(self._open[-1], err)
            raise
        done, self._open = self._open, []
        return done

    def _fail(self, model: str, err: duckdb.Error) -> None:
        """Later jobs of this lane will not run; its open transaction is gone."""
        self._failure = (model, err)
        try:
            self._cursor_().execute("ROLLBACK")
        except duckdb.Error:
            pass
        self._open.clear()

    def _cursor_(self) -> duckdb.DuckDBPyConnection:
        if self._cursor is None:
            self._cursor = self._con.cursor()
        return self._cursor
