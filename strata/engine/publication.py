"""Publication: how a run's new snapshots become what readers see.

A run's new tables are unreferenced until publication, which writes three things:
the registry rows of its new snapshots, the branch's live views switched to them
(and the views of models gone from the module dropped), and the history entry.

- An engine with transactional DDL (DuckDB, PostgreSQL: `Adapter.transactional`)
  writes all three in one transaction (`atomic`): a reader sees the old state or the
  new one, and a crash leaves the old one.
- An engine without (Spark) makes the history entry the commit point
  (`commit_point`): registry rows first (invisible until their run's entry exists:
  registry reads ask for `run_id IN (SELECT id FROM history)`), then the entry (one
  row: written whole or not at all), then the views, one at a time. A reader sees
  the history old or new; each view old or new, and across views a mix for as long
  as the switch lasts (never a half-written table). A crash after the entry leaves
  views behind it: `recover`, run by the next command that writes, rolls them
  forward to what the branch's newest entry says.

No branch on an engine's name: the adapter's `transactional` picks the order.
"""

from __future__ import annotations

from strata.engine import history as H
from strata.engine import staleness
from strata.engine.adapters.base import Adapter
from strata.engine.branches import live_snapshots, switch_views
from strata.engine.environment import crash_point, env_seconds


def adapter_of(wh) -> Adapter:
    """The warehouse's engine adapter (`Warehouse.adapter`); a warehouse opened before
    it had one gets a DuckDB adapter over its own connection (same connection, same
    transactions), kept on it."""
    found = getattr(wh, "adapter", None)
    if found is not None:
        return found
    from strata.engine.adapters.duckdb import DuckDBAdapter
    from strata.engine.locations import DuckDBFile

    made = DuckDBAdapter(DuckDBFile(wh.path), wh.con)
    made.locked = not getattr(wh, "read_only", False)
    try:
        wh.adapter = made
    except AttributeError:  # a façade that computes it: nothing to keep
        pass
    return made


def publish(wh, entry: H.HistoryEntry, records: list[H.SnapshotRecord],
            snapshots: dict[str, str], live: dict[str, str], removed: dict[str, str]) -> None:
    """Publish a run: atomically where the engine can, else by its commit point."""
    if adapter_of(wh).transactional:
        atomic(wh, entry, records, snapshots, live, removed)
    else:
        commit_point(wh, entry, records, snapshots, live, removed)


def atomic(wh, entry: H.HistoryEntry, records: list[H.SnapshotRecord],
           snapshots: dict[str, str], live: dict[str, str], removed: dict[str, str]) -> None:
    """One transaction, which the adapter may try again (PostgreSQL, when a reader's
    lock stands in its way: every step below can be repeated after a rollback)."""
    def body() -> None:
        crash_point("publish_begin")
        H.register_many(wh, records)
        switch_views(wh, entry.branch, snapshots, current=live)
        staleness.drop_views(wh, entry.branch, removed)
        crash_point("publish_before_commit")
        H.append(wh, entry)

    adapter_of(wh).publish_atomically(body, publish_timeout(), new_tables=bool(records))
    crash_point("after_publish")


PUBLISH_TIMEOUT_DEFAULT = 300.0
PUBLISH_TIMEOUT_MAX = 86400.0


def publish_timeout() -> float:
    """STRATA_PUBLISH_TIMEOUT as seconds: how long publication waits for readers that
    hold it back (PostgreSQL: older snapshots, locks on the live views) before E140.
    Five minutes by default: a reader's transaction longer than that was most likely
    left open. A bad value is E084, as a bad STRATA_LOCK_TIMEOUT is."""
    return env_seconds("STRATA_PUBLISH_TIMEOUT", PUBLISH_TIMEOUT_DEFAULT, PUBLISH_TIMEOUT_MAX,
                       "it is how long publication waits for the sessions reading the "
                       "warehouse that hold it back")


def commit_point(wh, entry: H.HistoryEntry, records: list[H.SnapshotRecord],
                 snapshots: dict[str, str], live: dict[str, str],
                 removed: dict[str, str]) -> None:
    """Registry rows, then the history entry (the commit point), then the views. Every
    step may be repeated: a crash anywhere is finished by `recover`."""
    crash_point("publish_begin")
    H.register_many(wh, records)
    crash_point("publish_before_commit")
    H.append(wh, entry)
    crash_point("after_commit_point")
    switch_views(wh, entry.branch, snapshots, current=live)
    staleness.drop_views(wh, entry.branch, removed)
    crash_point("after_publish")


def recover(wh) -> dict[str, list[str]]:
    """Roll the live views forward to the newest published entry of each branch, where
    a crash between a commit point and the end of its view switch left them behind
    (branch -> the models whose views moved). Nothing to do where publication is one
    transaction: the views cannot lag behind the history there. The history read it
    takes (every branch's newest entries and the quarantine verdicts, one query) is
    kept on the warehouse for the run that follows (take_history_read)."""
    publish_timeout()  # a bad value is E084 at once, not after the build
    if adapter_of(wh).transactional or getattr(wh, "read_only", False):
        return {}
    read = H.read_history(wh)  # main's and every listed branch's
    if hasattr(wh, "history_read"):
        wh.history_read = read
    moved: dict[str, list[str]] = {}
    for branch in read.pages:
        entry = read.published(wh, branch)  # a rollback sets views too
        if entry is None:
            continue
        live = live_snapshots(wh, branch)
        behind = {m: s for m, s in entry.snapshots.items() if live.get(m) != s}
        gone = [m for m in entry.removed if m in live]
        if behind:
            switch_views(wh, branch, behind, current=live)
        if gone:
            staleness.drop_views(wh, branch, gone)
        if behind or gone:
            moved[branch] = sorted([*behind, *gone])
    return moved


def take_history_read(wh) -> H.HistoryRead | None:
    """The history as `recover` read it on opening, for the run that follows instead
    of reading it again (on Spark a read is a job). Taken once: a second run in the
    same command, or one that starts over, reads the history afresh; and gone once
    anything is appended to the history (history.append)."""
    read = getattr(wh, "history_read", None)
    if read is not None:
        wh.history_read = None
    return read
