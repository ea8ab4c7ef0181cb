"""Incremental models never silently diverge from a full refresh (issue 17), and a
merge means what the delivery note says (issue 33).

Each test names the item of the issue it reproduces: detection of what a watermark
cannot see (a row changed without moving its cdc column, a late row, a NULL cdc
value, a deleted row) and what `on_drift` does about it (warn, the default, merges as
the note defines and says so; recompute and fail are opt-in); an append log keeps the
rows its source drops; `lookback`; `delete_when`; the compile-time checks
(E114-E118). Real DuckDB files; the library `run()` for most cases, real `strata`
subprocesses where the command line is what is tested.
"""

from __future__ import annotations

import json

import pytest
from test_incremental_merge import (
    ORDERS,
    cli,
    insert,
    make_orders,
    model_json,
    result,
    run_cli,
    run_lib,
    sql,
    ts,
    upsert_model,
    view,
    write_module,
)

from strata.compiler import compile_statements
from strata.semantics.resolve import load_module

APPEND = """
model log {
  from orders
  select id, amount, status, updated_at
  incremental
  merge_strategy: append
  cdc_column: updated_at
  %s
}
"""

JOINED = """
source customers {
  id: int
  region: text
}
model joined {
  from orders
  join_left customers as c on id = c.id
  select id, amount, status, updated_at, c.region as region
  incremental
  merge_strategy: upsert
  merge_keys: [id]
  cdc_column: updated_at
  %s
}
"""


def full_refresh_rows(wh, where: str = "TRUE") -> list[tuple]:
    """What a full refresh of `up`/`log` gives: the source's rows."""
    return sql(wh, f"SELECT id, amount, status, updated_at FROM orders WHERE {where} "
                   "ORDER BY id NULLS FIRST, updated_at NULLS FIRST, amount")


def seeded(tmp_path, text: str):
    wh = tmp_path / "w.duckdb"
    module = write_module(tmp_path, ORDERS + text)
    make_orders(wh, [(1, 10.0, "a", ts(1)), (2, 20.0, "b", ts(2)), (3, 30.0, "c", ts(3))])
    run_lib(module, wh)
    return wh, module


# ---------------------------------------------------------------- 1. detection
RECOMPUTE = "on_drift: recompute"


class TestDetection:
    def test_a_row_changed_without_moving_cdc_is_detected_and_recomputed(self, tmp_path):
        wh, module = seeded(tmp_path, upsert_model(extra=RECOMPUTE))
        sql(wh, "UPDATE orders SET amount = 999 WHERE id = 1")  # updated_at untouched
        insert(wh, [(4, 40.0, "d", ts(4))])
        up = result(run_lib(module, wh), "up")
        assert up.path == "full" and up.drift["action"] == "recompute"
        assert (up.drift["rows_now"], up.drift["rows_expected"]) == (3, 3)
        assert "changed without moving the cdc column" in up.drift["why"]
        assert any("computed in full (on_drift: recompute)" in n for n in up.notes)
        assert view(wh, "up") == full_refresh_rows(wh)

    def test_a_late_row_at_or_below_the_watermark_is_detected(self, tmp_path):
        wh, module = seeded(tmp_path, APPEND % RECOMPUTE)
        insert(wh, [(9, 90.0, "late", ts(2)), (10, 1.0, "same instant", ts(3))])
        log = result(run_lib(module, wh), "log")
        assert (log.drift["unlogged"], log.drift["gone"]) == (2, 0)
        assert "2 row(s) at or below the watermark are in the source but not in the log" \
            in log.drift["why"] and log.path == "full"
        assert any("the log is rebuilt from what the source holds now" in n
                   for n in log.notes)
        assert sorted(view(wh, "log")) == sorted(full_refresh_rows(wh))

    def test_a_null_cdc_value_is_at_or_below_the_watermark(self, tmp_path):
        wh, module = seeded(tmp_path, upsert_model(extra=RECOMPUTE))
        insert(wh, [(7, 70.0, "no cdc", None)])
        up = result(run_lib(module, wh), "up")
        assert up.drift["rows_now"] == 4 and up.path == "full"
        assert view(wh, "up") == full_refresh_rows(wh)

    def test_a_deleted_row_is_drift_for_upsert_and_kept_by_an_append_log(self, tmp_path):
        """An upsert model mirrors its source, so a deleted row is drift; an append
        log keeps what it logged (previous UNION ALL delta) under every setting."""
        wh, module = seeded(tmp_path, upsert_model(extra=RECOMPUTE) + APPEND % RECOMPUTE)
        logged = view(wh, "log")
        sql(wh, "DELETE FROM orders WHERE id = 2")
        report = run_lib(module, wh)
        up = result(report, "up")
        assert (up.drift["rows_now"], up.drift["rows_expected"]) == (2, 3)
        assert "gone from the source" in up.drift["why"]
        assert view(wh, "up") == full_refresh_rows(wh)
        log = result(report, "log")
        assert log.drift is None and view(wh, "log") == logged
        assert any(n.startswith("1 logged row(s) are no longer in the source: kept")
                   for n in log.notes), log.notes

    def test_an_update_that_moves_cdc_is_no_drift(self, tmp_path):
        """The normal upsert: the old version leaves the rows at or below the watermark
        and its key comes back in the delta; the merge equals a full refresh."""
        wh, module = seeded(tmp_path, upsert_model())
        sql(wh, f"UPDATE orders SET amount = 5, updated_at = '{ts(5)}' WHERE id = 1")
        insert(wh, [(4, 40.0, "d", ts(4))])
        up = result(run_lib(module, wh), "up")
        assert (up.path, up.drift, up.delta_rows) == ("pushdown", None, 2)
        assert view(wh, "up") == full_refresh_rows(wh)

    def test_a_change_to_a_row_the_filter_drops_is_no_drift(self, tmp_path):
        """Detection compares the model's rows, not the source's: a row the model's
        filter drops may change freely without forcing a full computation."""
        wh, module = seeded(tmp_path, upsert_model(steps="filter status != 'test'"))
        insert(wh, [(5, 50.0, "test", ts(1))])
        sql(wh, "UPDATE orders SET amount = 51 WHERE id = 5")
        insert(wh, [(4, 40.0, "d", ts(4))])
        up = result(run_lib(module, wh), "up")
        assert (up.path, up.drift) == ("pushdown", None)
        assert view(wh, "up") == full_refresh_rows(wh, "status != 'test'")

    def test_full_then_filter_models_compare_their_full_result(self, tmp_path):
        wh = tmp_path / "w.duckdb"
        module = write_module(tmp_path, ORDERS + JOINED % RECOMPUTE)
        make_orders(wh, [(1, 10.0, "a", ts(1)), (2, 20.0, "b", ts(2))])
        sql(wh, "CREATE TABLE customers AS SELECT 1::BIGINT AS id, 'eu' AS region")
        run_lib(module, wh)
        # a dimension row changing changes the model's old rows: a watermark on
        # orders cannot see it, detection does
        sql(wh, "UPDATE customers SET region = 'us'")
        insert(wh, [(3, 30.0, "c", ts(3))])
        joined = result(run_lib(module, wh), "joined")
        assert joined.drift is not None and joined.path == "full"  # on_drift: recompute
        assert view(wh, "joined")[0][-1] == "us"
        insert(wh, [(4, 40.0, "d", ts(4))])
        joined = result(run_lib(module, wh), "joined")
        assert (joined.path, joined.drift) == ("full-then-filter", None)

    def test_drift_in_a_layered_snapshot_and_after_compaction(self, tmp_path):
        wh, module = seeded(tmp_path, upsert_model(
            extra="compact_layers: 1\n  compact_ratio: 5\n  " + RECOMPUTE))
        compacted = []
        for day in (4, 5, 6):  # a layer, a compaction, a layer on the compacted base
            insert(wh, [(day, float(day), "x", ts(day))])
            up = result(run_lib(module, wh), "up")
            assert up.drift is None and up.path == "pushdown"
            compacted.append(up.compacted)
        assert compacted == [False, True, False]
        sql(wh, "UPDATE orders SET status = 'changed' WHERE id = 4")
        up = result(run_lib(module, wh), "up")
        assert up.drift is not None and view(wh, "up") == full_refresh_rows(wh)


# ---------------------------------------------------------------- on_drift
class TestOnDrift:
    def test_warn_merges_anyway_and_every_output_says_so(self, tmp_path):
        """run --json, the run's summary, history (text and --json) and plan all name
        the model, why, and the row counts."""
        wh, module = seeded(tmp_path, upsert_model(extra="on_drift: warn"))
        sql(wh, "DELETE FROM orders WHERE id = 3")
        insert(wh, [(4, 40.0, "d", ts(4))])
        report = run_cli(module, wh)
        up = model_json(report, "up")
        assert up["path"] == "pushdown" and up["drift"]["action"] == "warn"
        assert (up["drift"]["rows_now"], up["drift"]["rows_expected"]) == (2, 3)
        assert [r[0] for r in view(wh, "up")] == [1, 2, 3, 4]  # merged, as declared
        plain = cli("history", "-o", str(wh)).stdout
        assert f"{report['run_id']}" in plain and "drift: up (warn)" in plain
        entries = json.loads(cli("history", "-o", str(wh), "--json").stdout)
        assert entries[0]["details"]["up"]["drift"]["why"] == up["drift"]["why"]
        plan = json.loads(cli("plan", str(module), "-o", str(wh), "--json").stdout)
        [planned] = plan["models"]
        assert planned["drift"]["on_drift"] == "warn"
        assert planned["drift"]["last"]["rows_now"] == 2
        text = cli("plan", str(module), "-o", str(wh)).stdout
        assert "found drift" in text and "gone from the source" in text
        # a run on a terminal: the model's progress line and the summary say it
        sql(wh, "DELETE FROM orders WHERE id = 2")
        out = cli("run", str(module), "-o", str(wh), env={
            "TTY_COMPATIBLE": "1", "NO_COLOR": "1", "COLUMNS": "300"}).stdout
        [line] = [x for x in out.splitlines() if x.strip().startswith("reused") and " up " in x]
        assert "drift (warn): 2 row(s) of the previous snapshot gone" in line, out
        assert "note: up: warning: drift at or below the watermark" in out

    def test_fail_is_E117_and_publishes_nothing(self, tmp_path):
        wh, module = seeded(tmp_path, upsert_model(extra="on_drift: fail"))
        before = view(wh, "up")
        sql(wh, "UPDATE orders SET amount = 0 WHERE id = 2")
        proc = cli("run", str(module), "-o", str(wh), check=False)
        assert proc.returncode == 1 and "error[E117]" in proc.stderr
        assert "`up` drifted from a full refresh" in proc.stderr
        assert "--full-refresh --models up" in proc.stderr
        assert view(wh, "up") == before
        leftovers = sql(wh, "SELECT count(*) FROM duckdb_tables() WHERE schema_name = "
                            "'strata_internal' AND starts_with(table_name, 'layer_')")
        assert leftovers == [(0,)]
        run_cli(module, wh, "--full-refresh")
        assert view(wh, "up") == full_refresh_rows(wh)

    def test_ignore_does_not_look(self, tmp_path):
        wh, module = seeded(tmp_path, upsert_model(extra="on_drift: ignore"))
        sql(wh, "UPDATE orders SET amount = 0 WHERE id = 2")
        up = result(run_lib(module, wh), "up")
        assert (up.drift, up.status) == (None, "reused")
        assert view(wh, "up")[1][1] == 20.0

    def test_the_default_properties_keep_the_code_fingerprint(self, tmp_path):
        """A warehouse built before on_drift existed, or before its default became
        warn, keeps its fingerprints: a model without the line says what it said
        before issue 17, and a written on_drift is part of the code as written (a
        recomputed append log would lose the rows its source dropped, so an upgrade
        must recompute no model)."""
        from strata.engine.fingerprints import code_fingerprints, model_code

        plain = write_module(tmp_path, ORDERS + upsert_model(), "a.strata")
        spelled = write_module(tmp_path, ORDERS + upsert_model(extra="on_drift: recompute"),
                               "b.strata")
        warn = write_module(tmp_path, ORDERS + upsert_model(extra="on_drift: warn"),
                            "c.strata")
        fps = [code_fingerprints(load_module(p))["up"] for p in (plain, spelled, warn)]
        assert len(set(fps)) == 3
        assert load_module(plain).plan("up").incremental.on_drift == "warn"
        code = json.loads(model_code(load_module(warn).plan("up")).splitlines()[-1])
        assert code["incremental"]["on_drift"] == "warn"  # as issue 17 wrote it
        # the model's code says exactly what it said before issue 17
        code = model_code(load_module(plain).plan("up"))
        assert sorted(json.loads(code.splitlines()[-1])["incremental"]) == [
            "cdc_column", "compact_layers", "compact_ratio", "merge_keys", "strategy"]


# ---------------------------------------------------------------- issue 33: the default
EVENTS = """
source events {
  id: int
  v: int
  ts: timestamp
}
model log {
  from events
  select id, v, ts
  incremental
  merge_strategy: append
  cdc_column: ts
  %s
}
"""


def events_log(tmp_path, setting: str):
    """The issue's scenario: a log over 10 events, then the source keeps only its
    recent rows (ids 5-9) and gains one."""
    wh = tmp_path / "w.duckdb"
    module = write_module(tmp_path, EVENTS % setting)
    sql(wh, "CREATE TABLE events (id INTEGER, v INTEGER, ts TIMESTAMP)",
        "INSERT INTO events SELECT i, i * 10, TIMESTAMP '2026-01-01' + to_hours(i) "
        "FROM range(10) t(i)")
    cli("run", str(module), "-o", str(wh))
    sql(wh, "DELETE FROM events WHERE id < 5",
        "INSERT INTO events VALUES (10, 100, TIMESTAMP '2026-01-02')")
    return wh, module


class TestTheDefault:
    @pytest.mark.parametrize("setting", ["", "on_drift: warn", "on_drift: recompute",
                                         "on_drift: fail", "on_drift: ignore"])
    def test_an_append_log_keeps_the_rows_its_source_no_longer_holds(self, tmp_path,
                                                                      setting):
        """Rows gone from the source are no drift for append under any setting: the
        log keeps all 11 rows and nothing says anything went wrong."""
        wh, module = events_log(tmp_path, setting)
        proc = cli("run", str(module), "-o", str(wh))
        assert sql(wh, "SELECT count(*) FROM v_log") == [(11,)]
        assert "warning" not in proc.stdout and "drift" not in proc.stdout, proc.stdout
        if setting != "on_drift: ignore":  # it says what it kept, as a note
            assert "note: log: 5 logged row(s) are no longer in the source: kept" \
                in proc.stdout, proc.stdout
        assert "drift" not in cli("history", "-o", str(wh)).stdout

    def test_the_notes_silent_mutation_is_not_seen_and_the_run_says_how_to_refresh(
            self, tmp_path):
        """The delivery note's test that tells a merge from a full rebuild, with no
        on_drift line: a merged row mutated without moving cdc_column is not seen by
        the next run; the run says it found drift and prints the command that
        recomputes the model, which then sees the mutation."""
        wh, module = seeded(tmp_path, upsert_model())
        sql(wh, "UPDATE orders SET amount = 999 WHERE id = 1")  # updated_at untouched
        insert(wh, [(4, 40.0, "d", ts(4))])
        proc = cli("run", str(module), "-o", str(wh))
        assert [r[:2] for r in view(wh, "up")] == [(1, 10.0), (2, 20.0), (3, 30.0), (4, 40.0)]
        assert "note: up: warning: drift at or below the watermark: the same number of " \
            "rows at or below the watermark, with different content" in proc.stdout
        assert "(on_drift: warn)" in proc.stdout
        [command] = [line.split("`")[1] for line in proc.stdout.split("\n")
                     if "--full-refresh" in line]
        assert command == f"strata run {module} -o {wh} --full-refresh --models up"
        assert "drift: up (warn)" in cli("history", "-o", str(wh)).stdout
        cli(*command.split()[1:])
        assert view(wh, "up")[0][:2] == (1, 999.0)

    def test_a_late_row_under_an_append_watermark_is_reported_and_never_logged(
            self, tmp_path):
        wh, module = seeded(tmp_path, APPEND % "")
        logged = view(wh, "log")
        insert(wh, [(9, 90.0, "late", ts(2)), (10, 1.0, "new", ts(4))])
        log = result(run_lib(module, wh), "log")
        assert (log.path, log.drift["action"], log.drift["unlogged"]) == ("pushdown", "warn", 1)
        assert "1 row(s) at or below the watermark are in the source but not in the log" \
            in log.drift["why"]
        assert view(wh, "log") == logged + [(10, 1.0, "new", ts(4))]

    def test_a_logged_row_changed_in_place_is_reported_as_both(self, tmp_path):
        """A row changed without moving cdc: its new version will never be logged
        (drift), its old one is kept; the message says which is which."""
        wh, module = seeded(tmp_path, APPEND % "")
        sql(wh, "UPDATE orders SET amount = 21 WHERE id = 2")
        log = result(run_lib(module, wh), "log")
        assert (log.drift["unlogged"], log.drift["gone"]) == (1, 1)
        assert "1 row(s) at or below the watermark are in the source but not in the log" \
            in log.drift["why"]
        assert "1 logged row(s) are no longer in the source: kept" in log.drift["why"]
        assert [r[1] for r in view(wh, "log")] == [10.0, 20.0, 30.0]

    def test_fail_on_an_append_log_stops_only_for_rows_it_would_never_log(self, tmp_path):
        wh, module = events_log(tmp_path, "on_drift: fail")
        cli("run", str(module), "-o", str(wh))  # the retention delete: fine
        sql(wh, "INSERT INTO events VALUES (11, 110, TIMESTAMP '2026-01-01 06:30:00')")
        proc = cli("run", str(module), "-o", str(wh), check=False)
        assert proc.returncode == 1 and "error[E117]" in proc.stderr
        assert "in the source but not in the log" in proc.stderr
        assert sql(wh, "SELECT count(*) FROM v_log") == [(11,)]


# ---------------------------------------------------------------- 2. lookback
class TestLookback:
    MODEL = """
model up {
  from events
  select id, v, seq
  incremental
  merge_strategy: upsert
  merge_keys: [id]
  cdc_column: seq
  %s
}
"""
    SOURCE = "source events {\n  id: int\n  v: text\n  seq: int\n}\n"

    def _seeded(self, tmp_path, extra: str):
        wh = tmp_path / "w.duckdb"
        module = write_module(tmp_path, self.SOURCE + self.MODEL % extra)
        sql(wh, "CREATE TABLE events (id BIGINT, v VARCHAR, seq BIGINT)",
            "INSERT INTO events VALUES (1, 'a', 10), (2, 'b', 20), (3, 'c', 30)")
        run_lib(module, wh)
        return wh, module

    def test_a_late_row_within_the_lookback_is_merged_without_drift(self, tmp_path):
        wh, module = self._seeded(tmp_path, "lookback: 15")
        sql(wh, "INSERT INTO events VALUES (4, 'late', 25), (5, 'new', 40)",
            "UPDATE events SET v = 'b2' WHERE id = 3")  # seq 30: within the window too
        up = result(run_lib(module, wh), "up")
        assert (up.path, up.drift) == ("pushdown", None)
        assert "seq > 15" in up.sql.replace('"', "")
        assert sorted(view(wh, "up")) == sql(wh, "SELECT * FROM events ORDER BY id")

    def test_a_late_row_older_than_the_lookback_is_drift(self, tmp_path):
        wh, module = self._seeded(tmp_path, "lookback: 5\n  " + RECOMPUTE)
        sql(wh, "INSERT INTO events VALUES (4, 'very late', 12)")
        up = result(run_lib(module, wh), "up")
        assert up.drift is not None and up.path == "full"
        assert sorted(view(wh, "up")) == sql(wh, "SELECT * FROM events ORDER BY id")

    def test_re_reading_the_window_is_idempotent(self, tmp_path):
        wh, module = self._seeded(tmp_path, "lookback: 100")
        first = view(wh, "up")
        for _ in range(2):
            up = result(run_lib(module, wh), "up")
            assert up.drift is None and up.delta_rows == 3
            assert view(wh, "up") == first

    def test_a_duration_on_a_timestamp_cdc_column(self, tmp_path):
        wh, module = seeded(tmp_path, upsert_model(extra="lookback: 36 hours"))
        insert(wh, [(5, 50.0, "late by a day", ts(2, 30))])
        up = result(run_lib(module, wh), "up")
        assert (up.path, up.drift) == ("pushdown", None)
        assert "2024-01-01 12:00:00" in up.sql  # 2024-01-03 less 36 hours
        assert view(wh, "up") == full_refresh_rows(wh)


    def test_compile_with_a_watermark_shows_the_boundary_a_run_reads_past(self, tmp_path):
        """`compile --watermark X` prints the statement a run at watermark X executes:
        the delta reads past X less the lookback, as the run above did."""
        module = write_module(tmp_path, self.SOURCE + self.MODEL % "lookback: 15")
        shown = cli("compile", str(module), "--show-sql", "--watermark", "30")
        assert shown.returncode == 0, shown.stderr
        assert "seq > 15" in shown.stdout.replace('"', "")
        assert "seq > 30" not in shown.stdout.replace('"', "")

# ---------------------------------------------------------------- 3. deletes
class TestDeleteWhen:
    FEED = """
source feed {
  id: int
  op: text
  v: text
  seq: int
}
model current {
  from feed
  select id, op, v, seq
  incremental
  merge_strategy: upsert
  merge_keys: [id]
  cdc_column: seq
  compact_layers: %d
  compact_ratio: 10
  delete_when: op = 'd'
}
"""

    def _feed(self, tmp_path, layers: int = 8):
        wh = tmp_path / "w.duckdb"
        module = write_module(tmp_path, self.FEED % layers)
        sql(wh, "CREATE TABLE feed (id BIGINT, op VARCHAR, v VARCHAR, seq BIGINT)",
            "INSERT INTO feed VALUES (1, 'i', 'a', 1), (2, 'i', 'b', 2), (3, 'd', 'c', 3)")
        return wh, module

    def change(self, wh, id_: int, op: str, v: str, seq: int) -> None:
        """A current-state source: the row of a key is replaced (the CDC op kept)."""
        sql(wh, f"DELETE FROM feed WHERE id = {id_}",
            f"INSERT INTO feed VALUES ({id_}, '{op}', '{v}', {seq})")

    def full(self, wh) -> list[tuple]:
        return sql(wh, "SELECT * FROM feed WHERE op IS DISTINCT FROM 'd' ORDER BY id")

    def test_the_full_computation_drops_deleted_rows(self, tmp_path):
        wh, module = self._feed(tmp_path)
        run_lib(module, wh)
        assert view(wh, "current") == self.full(wh)

    def test_a_deletion_row_removes_its_key_in_a_layered_snapshot(self, tmp_path):
        wh, module = self._feed(tmp_path)
        run_lib(module, wh)
        self.change(wh, 1, "d", "a", 4)
        self.change(wh, 4, "i", "new", 5)
        cur = result(run_lib(module, wh), "current")
        # the first, full computation dropped key 3's deletion row (seq 3), so its
        # watermark is 2: that row is read again, and deletes nothing
        assert (cur.path, cur.drift, cur.delta_rows, cur.rows) == ("pushdown", None, 3, 2)
        assert view(wh, "current") == self.full(wh) == [(2, "i", "b", 2), (4, "i", "new", 5)]
        # the layer keeps its deletion row; the layered snapshot never shows it
        layers = sql(wh, "SELECT table_name FROM duckdb_tables() WHERE schema_name = "
                         "'strata_internal' AND starts_with(table_name, 'layer_')")
        [(layer,)] = layers
        assert sql(wh, f"SELECT id, op FROM strata_internal.{layer} ORDER BY id") == [
            (1, "d"), (3, "d"), (4, "i")]
        cli("verify", cur.snapshot.split("_")[1], "-o", str(wh))  # its hash adds up

    def test_deletes_survive_compaction_and_a_key_can_come_back(self, tmp_path):
        wh, module = self._feed(tmp_path, layers=1)
        run_lib(module, wh)
        self.change(wh, 2, "d", "b", 4)
        run_lib(module, wh)
        self.change(wh, 1, "u", "a2", 5)
        cur = result(run_lib(module, wh), "current")
        assert cur.compacted and view(wh, "current") == self.full(wh) == [(1, "u", "a2", 5)]
        self.change(wh, 2, "i", "back", 6)
        run_lib(module, wh)
        assert view(wh, "current") == self.full(wh)

    def test_a_deletion_of_an_absent_key_reuses_the_previous_snapshot(self, tmp_path):
        wh, module = self._feed(tmp_path)
        first = result(run_lib(module, wh), "current")
        self.change(wh, 9, "d", "never there", 10)
        cur = result(run_lib(module, wh), "current")
        assert (cur.status, cur.snapshot, cur.drift) == ("reused", first.snapshot, None)

    def test_a_bool_flag_and_the_sql_in_other_dialects(self, tmp_path):
        module = write_module(tmp_path, ORDERS.replace("status: text", "gone: bool") + """
model up {
  from orders
  select id, amount, gone, updated_at
  incremental
  merge_strategy: upsert
  merge_keys: [id]
  cdc_column: updated_at
  delete_when: gone
}
""")
        loaded = load_module(module)
        for dialect in ("duckdb", "postgres", "spark"):
            full, merged = compile_statements(loaded, dialect)
            assert full.label == "full" and "NOT COALESCE(" in full.sql.upper()
            assert "gone" in full.sql and "gone" in merged.sql


# ---------------------------------------------------------------- 5. compile time
BAD = [
    ("on_drift: retry", "E114", "unknown on_drift `retry`"),
    ("on_drift: [warn]", "E114", "unknown on_drift"),
    ("lookback: 3", "E115", "takes a whole number of seconds"),
    ("lookback: 0 days", "E115", "does not fit cdc_column"),
    ("lookback: 3 fortnights", "E115", "does not fit cdc_column"),
    ("delete_when: count(id) > 0", "E033", "not in `delete_when`"),
    ("delete_when: amount > 0 and count(id) > 0", "E033", "aggregate `count`"),
    ("delete_when: amount", "E116", "it is double, not a condition"),
    ("delete_when: 1 = 1", "E116", "it reads no column"),
    ("delete_when: op = 'd'", "E011", "unknown column `op` in `delete_when`"),
]


def errors(tmp_path, text: str) -> list[str]:
    """What `strata check` reports, rendered (the library call behind it)."""
    module = load_module(write_module(tmp_path, text))
    return [f"error[{d.code}]: {d.message} ({d.hint})" for d in module.diagnostics
            if d.severity == "error"]


@pytest.mark.parametrize("prop, code, message", BAD)
def test_bad_properties_are_coded_at_compile_time(tmp_path, prop, code, message):
    [error] = errors(tmp_path, ORDERS + upsert_model(extra=prop))
    assert error.startswith(f"error[{code}]") and message in error


def test_check_prints_them_from_the_command_line(tmp_path):
    module = write_module(tmp_path, ORDERS + upsert_model(extra="lookback: 3"))
    proc = cli("check", str(module), check=False)
    assert proc.returncode == 1 and "error[E115]" in proc.stderr
    assert "lookback: 3\n" in proc.stderr and "^" in proc.stderr  # the span is shown


def test_a_lookback_must_fit_the_cdc_column_type(tmp_path):
    text = """
source s {
  id: int
  k: text
  d: date
  n: int
}
model m {
  from s
  select id, k, d, n
  incremental
  merge_strategy: upsert
  merge_keys: [id]
  cdc_column: %s
  lookback: %s
}
"""
    cases = [("n", "3 days", "E115"), ("n", "2.5", "E115"), ("d", "12 hours", "E115"),
             ("k", "3", "E115"), ("d", "2 weeks", None), ("n", "100", None),
             # past what an engine can subtract: a BIGINT literal, 2^63 microseconds
             ("n", "9223372036854775808", "E036"),
             ("n", "9223372036854775807", None),
             ("d", "99999999999 weeks", "E115"), ("d", "15250 weeks", None)]
    for cdc, lookback, code in cases:
        module = load_module(write_module(tmp_path, text % (cdc, lookback)))
        codes = [d.code for d in module.diagnostics if d.severity == "error"]
        assert codes == ([code] if code else []), (cdc, lookback, codes)


def test_properties_on_a_strategy_they_do_not_apply_to_are_E118(tmp_path):
    for prop in ("lookback: 3 days", "delete_when: status = 'x'"):
        [error] = errors(tmp_path, ORDERS + APPEND % prop)
        assert error.startswith("error[E118]") and "not append" in error
    replace = ORDERS + "model r {\n  from orders\n  incremental\n  on_drift: warn\n}\n"
    [error] = errors(tmp_path, replace)
    assert error.startswith("error[E118]") and "not replace" in error
    plain = ORDERS + "model r {\n  from orders\n  on_drift: warn\n}\n"
    [error] = errors(tmp_path, plain)
    assert error.startswith("error[E019]") and "only applies to an incremental model" in error


# ---------------------------------------------------------------- the same scan
def test_the_drift_hash_from_the_source_scan_equals_the_models_own(tmp_path):
    """Detection of a pushed-down model rides the source fingerprint's scan (FILTER'd
    aggregates over the same rows): for every shape that scan can take (the declared
    columns as they are, derived columns and filters, lets and delete_when) its hash
    equals the hash of the model's own query at or below the boundary. A model reading
    the source under another alias scans on its own."""
    from sqlglot import exp

    from strata.engine import history as hist
    from strata.engine.branches import live_snapshots
    from strata.engine.fingerprints import row_hash
    from strata.engine.incremental import scan_splits
    from strata.engine.run import RunOptions
    from strata.engine.sources import bind_source, check_contract, counted_fingerprint
    from strata.engine.warehouse import Warehouse
    from strata.sqlgen.literals import lit
    from strata.sqlgen.rewrites import settled_query

    def model(name, body, extra=""):
        return (f"model {name} {{\n  from orders{body}\n  incremental\n  merge_strategy: "
                f"upsert\n  merge_keys: [id]\n  cdc_column: updated_at\n  {extra}\n}}\n")

    text = ORDERS + model("a", "\n  select id, amount, status, updated_at") + model(
        "b", "\n  filter status != 'z'\n  derive x = amount * 2\n  select id, x, updated_at")
    text += model("c", "\n  let big = amount > 15\n  select id, amount, big, updated_at",
                  "delete_when: big and id > 2") + model("d", " as o\n  select id, updated_at")
    wh = tmp_path / "w.duckdb"
    path = write_module(tmp_path, text)
    make_orders(wh, [(1, 10.0, "a", ts(1)), (2, 20.0, "z", ts(2)), (3, 30.0, "c", ts(3))])
    run_lib(path, wh)
    insert(wh, [(4, 40.0, "late", ts(2)), (5, 5.0, "a", None)])
    module = load_module(path)
    w = Warehouse.open(str(wh))
    try:
        splits = scan_splits(w.adapter, module, module.order, RunOptions(),
                             live_snapshots(w, "main"), hist.read_registry(w), {})
        assert [s.model for s in splits["orders"]] == ["a", "b", "c"]
        assert splits["orders"][0].row_columns == ("id", "amount", "status", "updated_at")
        src = module.sources["orders"]
        binding = bind_source(src, None)
        plain = counted_fingerprint(w.con, src, binding, check_contract(w.con, src, binding))
        folded = counted_fingerprint(w.con, src, binding, check_contract(w.con, src, binding),
                                     splits["orders"])
        assert folded == plain  # the fingerprint itself does not change

        def source_relation(ref, alias):  # the source as the run reads it
            node = binding.engine_relation.copy()
            if alias:
                node.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
            return node

        for split in splits["orders"]:
            plan = module.plan(split.model)
            query = settled_query(plan, source_relation, lit(split.boundary)).tree
            names = [c.name for c in plan.output]
            own = row_hash(w.con, f"({query.sql(dialect='duckdb')})", names)
            assert split.found == own and own.count > 0, split.model
    finally:
        w.close()
