"""`strata run` and the commands around it, through the real CLI on real DuckDB files:
only-stale selection, content identity, rollback/verify, branches, plan, the JSON
shapes of SPEC §4, the run-time error codes, file sources, engine failures."""

from __future__ import annotations

import hashlib
import json

import pytest
from enginehelpers import (
    MODELS,
    MODULE,
    SUBGRAPH_A,
    SUBGRAPH_B,
    Project,
    built,
    error_code,
    execute,
    history_rows,
    leftovers,
    live,
    make_project,
    no_traceback,
    objects,
    project,
    strata,
    view_rows,
)

__all__ = ["built", "project"]  # fixtures


def file_state(p: Project) -> tuple:
    data = p.warehouse.read_bytes()
    stat = p.warehouse.stat()
    return hashlib.sha256(data).hexdigest(), stat.st_size, stat.st_mtime_ns


# ------------------------------------------------------------------ only-stale
def test_only_stale_rebuilds_only_the_changed_source_subgraph(built):
    p, first = built
    assert first["status"] == "published" and sorted(first["rebuilt"]) == sorted(MODELS)
    before = live(p.warehouse)
    assert sorted(before) == sorted(MODELS)

    p.sql("UPDATE products SET name = 'renamed' WHERE id = 3")  # a row of `cheap`
    report = p.run_json("--only-stale")
    after = live(p.warehouse)
    assert report["status"] == "published"
    for model in SUBGRAPH_A:  # untouched subgraph: same snapshot, not even looked at
        assert after[model] == before[model]
        assert report["stale"].get(model) is None
    assert report["stale"]["cheap"] == "source `products` changed"
    assert report["rebuilt"][0] == "cheap" and after["cheap"] != before["cheap"]
    assert after["cheap"].startswith(f"snap_{report['run_id']}_")
    # cheap_count: still 10 cheap products, so the same content: reused by identity
    assert after["cheap_count"] == before["cheap_count"]
    assert "cheap_count" in report["reused"]
    assert p.query("SELECT n FROM v_cheap_count") == [(10,)]

    p.sql("UPDATE orders SET amount = amount + 1 WHERE id = 1")
    report = p.run_json("--only-stale")
    again = live(p.warehouse)
    assert set(report["stale"]) == set(SUBGRAPH_A)
    assert {m: again[m] for m in SUBGRAPH_B} == {m: after[m] for m in SUBGRAPH_B}
    assert all(again[m] != after[m] for m in SUBGRAPH_A)


def test_only_stale_code_change_rebuilds_the_model_and_its_downstream(built):
    p, _ = built
    before = live(p.warehouse)
    p.module.write_text(MODULE.replace("filter price < 10", "filter price < 5"))
    report = p.run_json("--only-stale")
    assert report["stale"] == {"cheap": "code changed", "cheap_count": "code changed"}
    after = live(p.warehouse)
    assert {m: after[m] for m in SUBGRAPH_A} == {m: before[m] for m in SUBGRAPH_A}
    assert p.query("SELECT n FROM v_cheap_count") == [(5,)]


def test_only_stale_with_models_builds_the_selection_and_its_upstream(project):
    report = project.run_json("--only-stale", "--models", "totals")
    assert report["rebuilt"] == ["paid", "totals"]
    assert sorted(live(project.warehouse)) == ["paid", "totals"]
    # the other subgraph was never built: a later only-stale run builds just it
    report = project.run_json("--only-stale")
    assert set(report["rebuilt"]) == set(SUBGRAPH_B)
    assert set(report["reused"]) == set(SUBGRAPH_A)


def test_nothing_to_do_writes_nothing(built):
    p, first = built
    tables, history, state = objects(p.warehouse), history_rows(p.warehouse), file_state(p)
    proc = p.run("run", str(p.module), "-o", str(p.warehouse), "--only-stale")
    assert proc.stdout.strip() == "everything up to date (nothing to do)"
    report = p.run_json("--only-stale")
    assert report["status"] == "up_to_date" and report["rebuilt"] == []
    assert report["run_id"] == first["run_id"]
    assert objects(p.warehouse) == tables
    assert history_rows(p.warehouse) == history
    assert file_state(p) == state  # not one byte, not even the mtime
    assert not p.warehouse.with_name(p.warehouse.name + ".wal").exists()


def test_override_with_identical_content_rebuilds_nothing(built):
    p, _ = built
    # the same rows in another order, in another table: content governs, not names
    p.sql("CREATE TABLE orders_copy AS SELECT * FROM orders ORDER BY id DESC")
    history = history_rows(p.warehouse)
    report = p.run_json("--only-stale", "--override", "orders=orders_copy")
    assert report["status"] == "up_to_date"
    assert history_rows(p.warehouse) == history

    p.sql("CREATE TABLE orders_more AS SELECT * FROM orders_copy",
          "INSERT INTO orders_more VALUES (1000, 1, 2.0, 'paid', TIMESTAMP '2024-02-01')")
    before = live(p.warehouse)
    report = p.run_json("--only-stale", "--override", "orders=orders_more")
    assert set(report["stale"]) == set(SUBGRAPH_A)
    entry = p.history()[0]
    assert entry["overrides"] == {"orders": "orders_more"}
    assert live(p.warehouse)["cheap"] == before["cheap"]
    assert p.query("SELECT count(*) FROM v_paid WHERE id = 1000") == [(1,)]


def test_same_data_gives_the_same_run_id(built, tmp_path):
    p, first = built
    again = p.run_json()
    assert again["run_id"] == first["run_id"]
    assert again["rebuilt"] == [] and sorted(again["reused"]) == sorted(MODELS)
    assert live(p.warehouse) == {m: f"snap_{first['run_id']}_{m}" for m in MODELS}
    assert leftovers(p.warehouse) == set()
    # another warehouse holding the same data: the same id
    other = make_project(tmp_path / "other")
    assert other.run_json()["run_id"] == first["run_id"]
    # different data: another id; the data back as it was: the first id again
    p.sql("UPDATE products SET name = 'x' WHERE id = 1")
    changed = p.run_json()
    assert changed["run_id"] != first["run_id"]
    p.sql("UPDATE products SET name = 'p1' WHERE id = 1")
    assert p.run_json()["run_id"] == first["run_id"]
    assert live(p.warehouse)["cheap"] == f"snap_{first['run_id']}_cheap"


# ------------------------------------------------------------------ history ops
def test_rollback_then_verify(built):
    p, first = built
    rows_first = view_rows(p.warehouse)
    p.sql("UPDATE products SET price = 1 WHERE id = 15")
    second = p.run_json()
    assert view_rows(p.warehouse) != rows_first

    proc = p.run("rollback", first["run_id"], "-o", str(p.warehouse))
    assert first["run_id"] in proc.stdout
    assert live(p.warehouse) == {m: f"snap_{first['run_id']}_{m}" for m in MODELS}
    assert view_rows(p.warehouse) == rows_first
    for rid in (first["run_id"], second["run_id"]):
        out = p.strata_json("verify", rid, "-o", str(p.warehouse))
        assert out["ok"] is True and len(out["snapshots"]) == 4

    entry = p.history()[0]
    assert entry["kind"] == "rollback" and entry["details"]["rolled_back_to"] == first["run_id"]
    # the rollback dropped nothing; the next only-stale run puts the data's state back
    report = p.run_json("--only-stale")
    assert report["stale"]["cheap"] == "live view differs from the last run"
    assert live(p.warehouse)["cheap"] == f"snap_{second['run_id']}_cheap"


def test_tampering_with_a_snapshot_fails_verify(built):
    p, first = built
    p.sql(f'UPDATE strata_internal."snap_{first["run_id"]}_paid" SET amount = amount + 1 '
          "WHERE id = 1")
    proc = p.run("verify", first["run_id"], "-o", str(p.warehouse), check=False)
    assert error_code(proc) == "E077"
    assert f"snap_{first['run_id']}_paid" in proc.stderr
    proc = p.run("verify", first["run_id"], "-o", str(p.warehouse), "--json", check=False)
    assert [d["code"] for d in json.loads(proc.stdout)["error"]] == ["E077"]


def test_branches_are_isolated(built):
    p, _ = built
    main_before, rows_before = live(p.warehouse), view_rows(p.warehouse)
    out = p.strata_json("branch", "create", "dev", "--from", "main", "-o", str(p.warehouse))
    assert out["views"] == main_before
    assert live(p.warehouse, "dev") == main_before  # zero-copy: the same snapshots

    p.sql("UPDATE products SET price = 1 WHERE id = 15")
    report = p.run_json("--branch", "dev", "--only-stale")
    assert report["branch"] == "dev" and set(report["stale"]) == set(SUBGRAPH_B)
    assert live(p.warehouse) == main_before and view_rows(p.warehouse) == rows_before
    assert live(p.warehouse, "dev")["cheap"] != main_before["cheap"]
    assert p.query("SELECT n FROM dev.v_cheap_count") == [(11,)]
    assert p.query("SELECT n FROM main.v_cheap_count") == [(10,)]

    branches = {b["name"]: b for b in p.strata_json("branch", "list", "-o", str(p.warehouse))}
    assert branches["dev"]["from_branch"] == "main" and branches["dev"]["views"] == 4
    assert [e["branch"] for e in p.history("--branch", "dev")] == ["dev", "dev"]
    # main's staleness is its own: the changed source is still news there
    report = p.run_json("--only-stale")
    assert report["branch"] == "main" and set(report["stale"]) == set(SUBGRAPH_B)


def test_plan_shows_what_a_run_would_rebuild_without_executing(project):
    wh = str(project.warehouse)
    out = project.strata_json("plan", str(project.module), "-o", wh)
    assert out["base_run"] is None
    assert {m["model"]: m["reason"] for m in out["models"]} == {m: "not yet built"
                                                               for m in MODELS}
    assert "only by `run --only-stale`" in out["note"]
    tables = objects(project.warehouse)
    assert not [t for t in tables if t[0] == "strata_internal"]  # plan wrote nothing

    first = project.run_json()
    project.module.write_text(MODULE.replace("filter price < 10", "filter price < 5"))
    out = project.strata_json("plan", str(project.module), "-o", wh)
    assert out["base_run"] == first["run_id"]
    reasons = {m["model"]: (m["reason"], m["rebuild"]) for m in out["models"]}
    assert reasons == {"paid": ("up to date (code)", False),
                       "totals": ("up to date (code)", False),
                       "cheap": ("code changed", True), "cheap_count": ("code changed", True)}
    text = project.run("plan", str(project.module), "-o", wh).stdout
    assert "+ cheap" in text and "= paid" in text and "note: data staleness" in text
    assert live(project.warehouse)["cheap"] == f"snap_{first['run_id']}_cheap"


def test_plan_on_a_missing_warehouse_creates_no_file(tmp_path, project):
    missing = tmp_path / "nowhere.duckdb"
    out = project.strata_json("plan", str(project.module), "-o", str(missing))
    assert all(m["reason"] == "not yet built" for m in out["models"])
    assert not missing.exists()


def test_history_and_replay_json_shapes(built):
    p, first = built
    p.run_json("--stage-only")
    entries = p.history()
    assert [e["kind"] for e in entries] == ["stage", "run"]  # newest first
    for e in entries:
        for key in ("id", "kind", "branch", "started_at", "models", "overrides",
                    "source_fingerprints", "snapshots", "backfill_of", "reason"):
            assert key in e, key
        assert e["collected_by"] is None  # the gc that took one of its snapshots, if any
    run = entries[1]
    assert run["id"] == first["run_id"] and run["branch"] == "main"
    assert run["models"] == MODELS and run["overrides"] == {}
    assert set(run["source_fingerprints"]) == {"orders", "products"}
    assert run["snapshots"] == {m: f"snap_{first['run_id']}_{m}" for m in MODELS}
    assert run["backfill_of"] is None and run["reason"] is None
    assert entries[0]["snapshots"] == {}  # a stage publishes nothing
    assert run["started_at"] <= run["finished_at"]

    replay = p.strata_json("replay", first["run_id"], "-o", str(p.warehouse))
    assert {k: replay[k] for k in run} == run
    replay = p.strata_json("replay", first["run_id"], "-o", str(p.warehouse), "--execute")
    assert replay["replay"]["ok"] is True
    assert {m["model"] for m in replay["replay"]["models"]} == set(MODELS)
    assert leftovers(p.warehouse) == set()


def test_run_json_shape(project):
    report = project.run_json()
    for key in ("run_id", "branch", "status", "rebuilt", "reused"):
        assert key in report
    assert isinstance(report["fingerprint_seconds"], float)
    staged = project.run_json("--stage-only")
    assert staged["status"] == "staged"
    assert [e["kind"] for e in project.history()] == ["stage", "run"]


# ------------------------------------------------------------------ error codes
def test_unknown_run_id_is_E073(built):
    p, _ = built
    wh = str(p.warehouse)
    for args in (["verify", "feedbeef"], ["replay", "feedbeef"], ["rollback", "feedbeef"],
                 ["replay", "feedbeef", "--execute"]):
        assert error_code(p.run(*args, "-o", wh, check=False)) == "E073"


def test_unknown_branch_is_E074(built):
    p, _ = built
    wh, mod = str(p.warehouse), str(p.module)
    for args in (["run", mod, "--branch", "nope"], ["plan", mod, "--branch", "nope"],
                 ["history", "--branch", "nope"],
                 ["branch", "create", "dev", "--from", "nope"]):
        assert error_code(p.run(*args, "-o", wh, check=False)) == "E074", args


def written(p: Project) -> tuple:
    return objects(p.warehouse), history_rows(p.warehouse)


def test_missing_source_table_is_E071_and_writes_nothing(built):
    p, _ = built
    state = written(p)
    proc = p.run("run", str(p.module), "-o", str(p.warehouse), "--override",
                 "products=products_gone", check=False)
    assert error_code(proc) == "E071" and "products_gone" in proc.stderr
    p.sql("DROP TABLE products")
    proc = p.run("run", str(p.module), "-o", str(p.warehouse), check=False)
    assert error_code(proc) == "E071" and "`products`" in proc.stderr
    assert written(p)[1] == state[1]
    assert [o for o in written(p)[0] if o[0] == "strata_internal"] == [
        o for o in state[0] if o[0] == "strata_internal"]


@pytest.mark.parametrize("change, words", [
    ("ALTER TABLE products ALTER price TYPE VARCHAR", "column `price` is VARCHAR"),
    ("ALTER TABLE products DROP COLUMN name", "column `name` is missing"),
])
def test_mistyped_or_missing_source_column_is_E072(built, change, words):
    p, _ = built
    state = written(p)
    p.sql(change)
    proc = p.run("run", str(p.module), "-o", str(p.warehouse), check=False)
    assert error_code(proc) == "E072"
    assert words in proc.stderr and "`products`" in proc.stderr
    after = written(p)
    assert after[1] == state[1]


def test_a_column_no_strata_type_holds_is_E072_with_the_way_to_read_it(built):
    """TIMESTAMP WITH TIME ZONE has no Strata type: the hint says to cast it in a view,
    and pointing the source at such a view runs."""
    p, _ = built
    p.sql("ALTER TABLE orders ALTER updated_at TYPE TIMESTAMPTZ")
    proc = p.run("run", str(p.module), "-o", str(p.warehouse), check=False)
    assert error_code(proc) == "E072"
    assert "column `updated_at` is TIMESTAMP WITH TIME ZONE, declared timestamp" in proc.stderr
    assert ("no Strata type holds TIMESTAMP WITH TIME ZONE: point the source at a view that "
            "casts it, e.g. CREATE VIEW orders_v AS SELECT * REPLACE (CAST(updated_at AS "
            "TIMESTAMP) AS updated_at) FROM ...") in " ".join(proc.stderr.split())
    p.sql("CREATE VIEW orders_v AS SELECT * REPLACE (CAST(updated_at AS TIMESTAMP) AS "
          "updated_at) FROM orders")
    report = p.run_json("--override", "orders=orders_v")
    assert report["status"] == "published"


def test_a_csv_value_its_declared_type_cannot_hold_is_E072(tmp_path):
    """Past the rows DuckDB samples to check the file's shape: found by the first full
    read (the fingerprint), reported as the contract it breaks, with the row."""
    (tmp_path / "d.csv").write_text("id,v\n" + "".join(f"{i},{i}\n" for i in range(30000))
                                    + "30000,abc\n")
    (tmp_path / "m.strata").write_text("source t = file 'd.csv' {\n  id: int\n  v: int\n}\n"
                                       "model m {\n  from t\n  select id, v\n}\n")
    proc = strata("run", "m.strata", "-o", "w.duckdb", cwd=tmp_path, check=False)
    assert error_code(proc) == "E072"
    assert "holds a value its declaration does not fit" in proc.stderr
    assert "30000,abc" in proc.stderr


@pytest.mark.parametrize("engine_type, fits", [
    ("DECIMAL(12,2)", True), ("DECIMAL(21,2)", True), ("DECIMAL(4,1)", True),
    ("DECIMAL(18,4)", False), ("DECIMAL(12,3)", False)])
def test_a_decimal_source_column_keeps_to_the_declared_fraction_digits(tmp_path, engine_type,
                                                                       fits):
    """decimal(12, 2) promises cents: a DECIMAL(18, 4) column would carry 1.2555 through
    it. A wider precision passes (engines widen it; DuckDB types `i * 1.5` (21, 1))."""
    execute(tmp_path / "w.duckdb", f"CREATE TABLE t AS SELECT 1 AS id, 1.5::{engine_type} AS v")
    (tmp_path / "m.strata").write_text("source t {\n  id: int\n  v: decimal(12, 2)\n}\n"
                                       "model m {\n  from t\n  select id, v\n}\n")
    proc = strata("run", "m.strata", "-o", "w.duckdb", cwd=tmp_path, check=fits or False)
    if not fits:
        assert error_code(proc) == "E072"
        assert f"column `v` is {engine_type}, declared decimal(12, 2)" in proc.stderr


def test_pin_columns_decimal_keeps_to_its_fraction_digits_at_run_time(tmp_path):
    """`pin columns { amount: decimal(5, 0) }` over a DECIMAL(10,2) column: the
    compile-time check compares kinds (the engine picks decimal widths), the run-time
    one sees the real type, whose cents the contract does not promise."""
    execute(tmp_path / "w.duckdb", "CREATE TABLE src AS SELECT 12.34::DECIMAL(10,2) AS amount")
    (tmp_path / "m.strata").write_text(
        "source src {\n  amount: decimal(10, 2)\n}\nmodel m {\n  from src\n  select amount\n"
        "  pin columns { amount: decimal(5, 0) }\n}\n")
    strata("check", "m.strata", cwd=tmp_path, check=True)
    proc = strata("run", "m.strata", "-o", "w.duckdb", cwd=tmp_path, check=False)
    assert error_code(proc) == "E060"
    assert "has `amount` as DECIMAL(10,2), the contract says decimal(5, 0)" in proc.stderr
    (tmp_path / "m.strata").write_text(
        "source src {\n  amount: decimal(10, 2)\n}\nmodel m {\n  from src\n  select amount\n"
        "  pin columns { amount: decimal(5, 2) }\n}\n")
    strata("run", "m.strata", "-o", "w.duckdb", cwd=tmp_path, check=True)


def test_replay_execute_blames_a_model_only_on_the_sources_it_reads(tmp_path):
    execute(tmp_path / "w.duckdb", "CREATE TABLE a AS SELECT 1 AS id",
            "CREATE TABLE b AS SELECT 1 AS id")
    (tmp_path / "m.strata").write_text(
        "source a {\n  id: int\n}\nsource b {\n  id: int\n}\n"
        "model ma {\n  from a\n}\nmodel mb {\n  from b\n}\nmodel mc {\n  from ma\n}\n")
    first = json.loads(strata("run", "m.strata", "-o", "w.duckdb", "--json", cwd=tmp_path,
                              check=True).stdout)
    execute(tmp_path / "w.duckdb", "INSERT INTO a VALUES (2)", "INSERT INTO b VALUES (2)")
    proc = strata("replay", first["run_id"], "-o", "w.duckdb", "--execute", "--json",
                  cwd=tmp_path, check=False)
    notes = {r["model"]: r["note"] for r in json.loads(proc.stdout)["replay"]["models"]}
    assert notes == {"ma": "sources changed since the run: a",
                     "mb": "sources changed since the run: b",
                     "mc": "sources changed since the run: a"}


def test_options_that_would_be_silently_ignored_are_errors(built):
    p, _ = built
    state = written(p)
    proc = p.run("run", str(p.module), "-o", str(p.warehouse), "--models", "", check=False)
    assert error_code(proc) == "E079" and "--models names no model" in proc.stderr
    proc = p.run("compile", str(p.module), "--show-sql", "--models", "paid", "--watermark",
                 "not-a-value", check=False)
    assert error_code(proc) == "E084" and "--watermark applies to incremental" in proc.stderr
    proc = p.run("run", str(p.module), "-o", str(p.warehouse), "--branch", "my-dev",
                 check=False)
    assert error_code(proc) == "E074"
    assert "a branch name is letters, digits and _" in proc.stderr  # not `create my-dev`
    assert written(p)[1] == state[1]


def test_plan_says_a_file_source_now_reads_another_file(tmp_path):
    """plan reads no data, but a moved file source is in the module text: it said
    'up to date (code)' where run --only-stale then rebuilt."""
    (tmp_path / "a.csv").write_text("id\n1\n")
    (tmp_path / "b.csv").write_text("id\n1\n2\n")
    module = "source t = file '{}' {{\n  id: int\n}}\nmodel m {{\n  from t\n}}\n"
    (tmp_path / "m.strata").write_text(module.format("a.csv"))
    strata("run", "m.strata", "-o", "w.duckdb", cwd=tmp_path, check=True)
    (tmp_path / "m.strata").write_text(module.format("b.csv"))
    plan = json.loads(strata("plan", "m.strata", "-o", "w.duckdb", "--json", cwd=tmp_path,
                             check=True).stdout)
    [m] = plan["models"]
    assert m["rebuild"] is True
    assert m["reason"] == f"source `t` now reads `{tmp_path / 'b.csv'}`"


def test_a_source_overridden_twice_is_E078(built):
    p, _ = built
    p.sql("CREATE TABLE orders_a AS SELECT * FROM orders",
          "CREATE TABLE orders_b AS SELECT * FROM orders")
    state = written(p)
    proc = p.run("run", str(p.module), "-o", str(p.warehouse), "--override", "orders=orders_a",
                 "--override", "orders=orders_b", check=False)
    assert error_code(proc) == "E078"
    assert "points source `orders` at two tables: `orders_a` and `orders_b`" in proc.stderr
    assert written(p)[1] == state[1]
    # the same pair twice is one override
    p.run("run", str(p.module), "-o", str(p.warehouse), "--override", "orders=orders_a",
          "--override", "orders=orders_a")


def test_a_warehouse_that_is_not_a_duckdb_file_is_E070(project):
    """DuckDB 2 opens a CSV path as an in-memory database exposing it: a run there would
    report a publication that vanishes with the process."""
    notes = project.dir / "notes.csv"
    notes.write_text("a,b\n1,2\n")
    for args in (["run", str(project.module)], ["history"], ["gc", "--older-than", "1d"]):
        proc = project.run(*args, "-o", str(notes), check=False)
        assert error_code(proc) == "E070"
        assert "`" + str(notes) + "` is not a DuckDB database file" in proc.stderr
    assert notes.read_text() == "a,b\n1,2\n"


def test_unknown_models_is_E079_and_malformed_override_is_E078(project):
    wh, mod = str(project.warehouse), str(project.module)
    proc = project.run("run", mod, "-o", wh, "--models", "paid,nope", check=False)
    assert error_code(proc) == "E079" and "nope" in proc.stderr
    for bad in ("orders", "orders=", "=orders_copy", "a=b=c", "nosuch=orders"):
        proc = project.run("run", mod, "-o", wh, "--override", bad, check=False)
        assert error_code(proc) == "E078", bad
    assert not [o for o in objects(project.warehouse) if o[0] == "strata_internal"]


def test_model_failing_in_the_engine_is_E080_and_publishes_nothing(built):
    p, _ = built
    state, views = written(p), view_rows(p.warehouse)
    p.module.write_text(MODULE.replace("select id, name, price",
                                       "derive bad = cast(name as int)\n  select id, bad"))
    proc = p.run("run", str(p.module), "-o", str(p.warehouse), check=False)
    assert error_code(proc) == "E080"
    assert "model `cheap` failed in the engine" in proc.stderr
    # nothing published; the history gains only the run's `failed` record
    objects_now, history_now = written(p)
    assert objects_now == state[0] and view_rows(p.warehouse) == views
    assert [r for r in history_now if r[2] != "failed"] == state[1]
    assert [r[2] for r in history_now[len(state[1]):]] == ["failed"]
    assert leftovers(p.warehouse) == set()


# ------------------------------------------------------------------ file sources
FILE_MODULE = """\
source orders = file 'data/orders.csv' {
  id: int
  amount: decimal(10, 2)
  status: text
}
source items = file 'data/items.parquet' {
  order_id: int
  tags: list<text>
}
model paid {
  from orders
  filter status = 'paid'
  select id, amount
}
model tagged {
  from items
  expand tags as tag
  select order_id, tag
}
"""


def test_file_sources_csv_and_parquet_are_read_and_fingerprinted(tmp_path):
    root = tmp_path / "files"
    (root / "data").mkdir(parents=True)
    (root / "m.strata").write_text(FILE_MODULE)
    csv = root / "data" / "orders.csv"
    csv.write_text("id,amount,status\n1,5.50,paid\n2,7.00,void\n3,1.25,paid\n")
    parquet = root / "data" / "items.parquet"

    def write_parquet(rows: str) -> None:
        import duckdb
        con = duckdb.connect()
        con.execute(f"COPY (SELECT * FROM (VALUES {rows}) AS t(order_id, tags)) "
                    f"TO '{parquet}' (FORMAT parquet)")
        con.close()

    write_parquet("(1, ['a', 'b']), (3, ['c'])")
    p = Project(root, root / "m.strata", root / "wh.duckdb")
    first = p.run_json()  # run from the project folder: paths are relative to the module
    assert sorted(first["rebuilt"]) == ["paid", "tagged"]
    fps = p.history()[0]["source_fingerprints"]
    assert set(fps) == {"orders", "items"}
    assert sorted(p.query("SELECT id, amount::DOUBLE FROM v_paid")) == [(1, 5.5), (3, 1.25)]
    assert sorted(p.query("SELECT * FROM v_tagged")) == [(1, "a"), (1, "b"), (3, "c")]

    # the same CSV rows in another order: same fingerprint, nothing to do
    csv.write_text("id,amount,status\n3,1.25,paid\n1,5.50,paid\n2,7.00,void\n")
    assert p.run_json("--only-stale")["status"] == "up_to_date"
    # a changed CSV rebuilds only its downstream
    before = live(p.warehouse)
    csv.write_text("id,amount,status\n1,5.50,paid\n2,7.00,paid\n3,1.25,paid\n")
    report = p.run_json("--only-stale")
    assert report["stale"] == {"paid": "source `orders` changed"}
    assert live(p.warehouse)["tagged"] == before["tagged"]
    assert p.history()[0]["source_fingerprints"]["orders"] != fps["orders"]
    # a changed Parquet file likewise
    write_parquet("(1, ['a', 'b']), (3, ['c', 'd'])")
    report = p.run_json("--only-stale")
    assert report["stale"] == {"tagged": "source `items` changed"}
    assert p.query("SELECT count(*) FROM v_tagged") == [(4,)]

    # run from elsewhere: the paths still resolve against the module's folder
    proc = p.run("run", str(p.module), "-o", str(p.warehouse), "--only-stale")
    assert "nothing to do" in proc.stdout


def test_missing_file_source_is_E071(tmp_path):
    root = tmp_path / "files"
    root.mkdir()
    (root / "m.strata").write_text(FILE_MODULE)
    p = Project(root, root / "m.strata", root / "wh.duckdb")
    proc = p.run("run", str(p.module), "-o", str(p.warehouse), check=False)
    assert error_code(proc) == "E071" and "does not exist" in proc.stderr


def test_missing_warehouse_for_read_commands_is_coded(tmp_path, project):
    missing = str(tmp_path / "none.duckdb")
    for args in (["history"], ["verify", "abcd"], ["branch", "list"]):
        proc = project.run(*args, "-o", missing, check=False)
        no_traceback(proc)
        assert proc.returncode == 1 and "error[E070]" in proc.stderr
    assert not (tmp_path / "none.duckdb").exists()


def test_bundled_example_runs_end_to_end_with_the_cli(tmp_path):
    """The bundled example runs end to end into a fresh file, and a no-op follows."""
    from enginehelpers import ROOT, strata
    wh = tmp_path / "shop.duckdb"
    proc = strata("run", "examples/shop", "-o", str(wh), "--json", cwd=ROOT, check=True)
    report = json.loads(proc.stdout)
    assert report["status"] == "published" and report["rebuilt"]
    proc = strata("run", "examples/shop", "-o", str(wh), "--only-stale", cwd=ROOT, check=True)
    assert "nothing to do" in proc.stdout


# ------------------------------------------------------------------ progress display
def read_all(fd: int) -> str:
    import os
    chunks = []
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks).decode()


def test_progress_one_line_per_model_on_a_terminal_quiet_otherwise(built):
    import os
    import pty
    import re

    from enginehelpers import script_popen
    p, _ = built
    p.sql("UPDATE products SET name = 'renamed' WHERE id = 3")
    master, slave = pty.openpty()
    proc = script_popen("run", str(p.module), "-o", str(p.warehouse), cwd=p.dir,
                        env={"COLUMNS": "120", "TERM": "xterm"}, stdin=slave, stdout=slave,
                        stderr=slave)
    os.close(slave)
    text = re.sub(r"\x1b\[[0-9;]*m", "", read_all(master)).replace("\r", "")
    os.close(master)
    assert proc.wait(60) == 0
    lines = [line.split() for line in text.splitlines() if line.strip()]
    per_model = {parts[1]: parts for parts in lines if parts[0] in ("rebuilt", "reused")}
    assert set(per_model) == set(MODELS), text
    assert per_model["cheap"][0] == "rebuilt" and per_model["paid"][0] == "reused"
    assert all(re.fullmatch(r"\d+\.\d\ds", parts[2]) for parts in per_model.values())
    assert lines[-1][:2] == ["published", "run"]  # the summary comes last

    p.sql("UPDATE products SET name = 'again' WHERE id = 3")
    plain = p.run("run", str(p.module), "-o", str(p.warehouse))  # stdout is a file
    assert plain.stdout.count("\n") == 1 and plain.stdout.startswith("published run")
    assert "\x1b[" not in plain.stdout + plain.stderr and plain.stderr == ""


# ------------------------------------------------------------------ identity reuse and merging
LOG_MODULE = """\
source orders {
  id: int
  amount: double
  updated_at: timestamp
}
model log {
  from orders
  incremental
  merge_strategy: upsert
  merge_keys: [id]
  cdc_column: updated_at
  select id, amount, updated_at
}
"""


def test_a_code_change_with_the_same_rows_reuses_and_still_merges_next_time(tmp_path):
    """New code giving the same rows reuses the snapshot by identity (no copy); the
    next run still merges into it instead of recomputing in full."""
    p = make_project(tmp_path / "proj", text=LOG_MODULE)
    first = p.run_json()
    p.module.write_text(LOG_MODULE.replace("  select id", "  filter id >= 0\n  select id"))
    second = p.run_json()
    assert second["reused"] == ["log"] and second["rebuilt"] == []
    assert live(p.warehouse)["log"] == f"snap_{first['run_id']}_log"
    p.sql("INSERT INTO orders VALUES (1000, 1, 5.0, 'paid', TIMESTAMP '2030-01-01')")
    third = p.run_json()
    (log,) = third["models"]
    assert log["status"] == "rebuilt" and log["path"] == "pushdown" and log["delta_rows"] == 1
    assert p.query("SELECT count(*) FROM v_log") == [(101,)]
