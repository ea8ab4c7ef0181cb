"""The Spark adapter's per-command catalogue memory and its one-query view listing
(SHOW TABLE EXTENDED's `information`, split into view texts): what lets a run on
Spark Connect list a branch's views once instead of before every step. Pure Python:
no Spark session is started."""

from __future__ import annotations

import pytest
from sqlglot import exp

from strata.engine.adapters.base import Relation, select_all
from strata.engine.adapters.spark import CatalogueMemory, _view_text


def info(text: str, original: str | None = None) -> str:
    """SHOW TABLE EXTENDED's `information` for a view, as Spark 4 writes it."""
    original = text if original is None else original
    return ("Catalog: spark_catalog\nDatabase: main\nTable: v_m\nType: VIEW\n"
            f"View Text: {text}\nView Original Text: {original}\n"
            "View Schema Mode: COMPENSATION\nSchema: root\n |-- id: long\n\n")


def test_view_text_is_split_where_both_copies_agree():
    assert _view_text(info("SELECT * FROM `strata_internal`.`snap_1_m`")) == \
        "SELECT * FROM `strata_internal`.`snap_1_m`"
    # a view a user wrote over several lines, naming the marker itself
    tricky = "SELECT 1 AS a\nView Original Text: x\nFROM t"
    assert _view_text(info(tricky)) == tricky


def test_view_text_unclear_or_absent_is_none_for_describe_to_answer():
    assert _view_text(info("SELECT 1", original="SELECT  1")) is None
    assert _view_text("Catalog: spark_catalog\nType: MANAGED\n") is None


def statement(kind: str, target: Relation, query=None) -> exp.Expression:
    if kind == "drop view":
        return exp.Drop(tables=[target.table()], kind="VIEW", exists=True)
    return exp.Create(this=target.table(), kind=kind.upper(), replace=kind == "view",
                      expression=query)


def test_memory_keeps_up_with_the_commands_own_ddl():
    memory = CatalogueMemory()
    memory.keep_relations("main", {"v_a": "view"}, exists=True)
    assert memory.relations("main") is None  # off: an adapter outside one command
    memory.on = True
    memory.keep_relations("main", {"v_a": "view"}, exists=True)
    memory.keep_views("main", {"v_a": "SELECT * FROM `strata_internal`.`snap_1_a`"})
    view = Relation("main", "v_b")
    memory.changed(statement("view", view, select_all(Relation("strata_internal", "s_2"))))
    assert memory.relations("main") == {"v_a": "view", "v_b": "view"}
    assert "s_2" in memory.views("main")["v_b"]
    memory.changed(statement("drop view", Relation("main", "v_a")))
    assert memory.relations("main") == {"v_b": "view"} and set(memory.views("main")) == {"v_b"}
    assert memory.has_schema("main")
    # DDL it cannot follow (ALTER ... RENAME) forgets everything: listed afresh
    memory.changed(exp.Alter(this=Relation("main", "v_b").table(), kind="VIEW", actions=[]))
    assert memory.relations("main") is None and not memory.has_schema("main")


def test_a_run_takes_its_base_from_what_recover_read_once():
    """recover reads each branch's newest published entries and the quarantine
    verdicts in one query; the run that follows takes its staleness base from that read
    (the newest run, backfill or branch creation with snapshots, past a rollback, which
    is not a base), and only once; an appended entry makes it stale."""
    from types import SimpleNamespace

    from strata.engine.history import HistoryEntry, HistoryRead, append
    from strata.engine.publication import take_history_read

    run = HistoryEntry(id="r1", kind="run", branch="main", started_at="t",
                       snapshots={"m": "snap_r1_m"}, seq=2)
    back = HistoryEntry(id="b1", kind="rollback", branch="dev", started_at="t",
                        snapshots={"m": "snap_r0_m"}, seq=4)
    made = HistoryEntry(id="d1", kind="branch", branch="dev", started_at="t",
                        snapshots={"m": "snap_r1_m"}, seq=3)
    read = HistoryRead({"main": [run], "dev": [back, made]}, {})
    wh = SimpleNamespace(history_read=read)
    taken = take_history_read(wh)
    assert taken is read and take_history_read(wh) is None  # taken once
    assert read.base(wh, "main") == run and read.published(wh, "main") == run
    assert read.published(wh, "dev") == back  # a rollback sets views ...
    assert read.base(wh, "dev") == made  # ... but is no staleness base
    assert read.base(wh, "empty") is None  # no entry yet: no base

    class Appending(SimpleNamespace):
        def rows(self, tree):
            raise _Appended

    class _Appended(Exception):
        pass

    wh = Appending(history_read=read)
    with pytest.raises(_Appended):  # the history moves on: what was read is gone
        append(wh, HistoryEntry(id="r2", kind="run", branch="main", started_at="t"))
    assert take_history_read(wh) is None


def test_memory_follows_a_bookkeeping_table_created_with_its_columns():
    """CREATE TABLE t (columns) (bookkeeping.setup) is followed, not a reason to
    list the internal schema again."""
    from strata.engine import bookkeeping as B
    from strata.engine.adapters.spark import SparkAdapter

    memory = CatalogueMemory()
    memory.on = True
    memory.keep_relations("strata_internal", {"writer_lock": "table"}, exists=True)
    memory.changed(B.create_table(B.HISTORY, SparkAdapter.__new__(SparkAdapter)))
    assert memory.relations("strata_internal") == {"writer_lock": "table",
                                                   "history": "table"}
