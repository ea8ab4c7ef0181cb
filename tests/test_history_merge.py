"""Issue 40, item 8: `merge_strategy: history`, a type-2 history of a changing relation
(dbt's snapshots) with `valid_from` / `valid_to` per key, merged at each run's
timestamp. One broad scenario on every engine (DuckDB, PostgreSQL, Spark) through the
real CLI, read back in the engine's own catalog; the refusals (compile-time codes,
full refresh, backfill) on DuckDB only.
"""

from __future__ import annotations

import json
from pathlib import Path

from engine_warehouses import EngineWarehouse, engine_warehouse  # noqa: F401 (the fixture)
from enginehelpers import error_code, execute, query, strata

from strata.semantics.resolve import load_text

MODULE = """\
source raw = file 'people.csv' { id: int, name: text, tier: text }

model people {
  from raw
  incremental
  merge_strategy: history
  merge_keys: [id]
  pin unique [id, valid_from]
}

model current_people {
  from people
  filter valid_to is null
  select id, name, tier
}
"""
DAY = "2026-01-0{} 00:00:00"


def write_people(folder: Path, rows: list[tuple]) -> None:
    (folder / "people.csv").write_text("id,name,tier\n" + "".join(
        f"{i},{n},{'' if t is None else t}\n" for i, n, t in rows))


class People:
    def __init__(self, folder: Path, location: str):
        self.dir, self.location = folder, location
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "m.strata").write_text(MODULE)

    def run(self, day: int, *flags: str, ok: bool = True):
        return strata("run", "m.strata", "-o", self.location, "--json", *flags, cwd=self.dir,
                      env={"STRATA_NOW": DAY.format(day)}, check=ok, timeout=600)

    def report(self, day: int, *flags: str) -> dict:
        return json.loads(self.run(day, *flags).stdout)


def history(wh: EngineWarehouse) -> list[tuple]:
    """The history's rows, by key and valid_from: NULL tier as '-', times as text,
    an open version's valid_to as 'open'."""
    rows = wh.execute(f"SELECT id, name, tier, valid_from, valid_to FROM "
                      f"{wh.relation('main', 'v_people')}")
    return sorted((i, n, "-" if t is None else t, str(f), "open" if to is None else str(to))
                  for i, n, t, f, to in rows)


def test_a_history_closes_changed_and_gone_versions_and_opens_new_ones(engine_wh, tmp_path):
    p = People(tmp_path / "p", engine_wh.location)
    d1, d2, d4 = (DAY.format(d) for d in (1, 2, 4))
    write_people(p.dir, [(1, "ann", "gold"), (2, "bob", None), (3, "cy", "silver")])
    assert p.report(1)["status"] == "published"
    assert history(engine_wh) == [(1, "ann", "gold", d1, "open"), (2, "bob", "-", d1, "open"),
                                  (3, "cy", "silver", d1, "open")]

    # ann changes tier, bob is unchanged (a NULL matches a NULL), cy is gone, dee is new
    write_people(p.dir, [(1, "ann", "platinum"), (2, "bob", None), (4, "dee", "gold")])
    merged = {m["model"]: m for m in p.report(2)["models"]}
    assert merged["people"]["path"] == "history"
    assert history(engine_wh) == [
        (1, "ann", "gold", d1, d2), (1, "ann", "platinum", d2, "open"),
        (2, "bob", "-", d1, "open"),
        (3, "cy", "silver", d1, d2),
        (4, "dee", "gold", d2, "open")]
    assert sorted(tuple(r) for r in engine_wh.view("current_people")) == \
        [(1, "ann", "platinum"), (2, "bob", None), (4, "dee", "gold")]
    before = history(engine_wh)

    # nothing changed: no version opens or closes, the same content is reused
    again = {m["model"]: m for m in p.report(3)["models"]}
    assert again["people"]["status"] == "reused"
    assert history(engine_wh) == before

    # a full refresh of the whole module keeps the history (as dbt keeps snapshots);
    # one naming it would lose the history: refused, unless told to start it over
    kept = {m["model"]: m for m in p.report(3, "--full-refresh")["models"]}
    assert any("--full-refresh keeps the history" in n for n in kept["people"]["notes"])
    assert history(engine_wh) == before
    refused = strata("run", "m.strata", "-o", p.location, "--full-refresh", "--models",
                     "people", cwd=p.dir, env={"STRATA_NOW": d4}, timeout=600)
    assert error_code(refused) == "E212"
    assert history(engine_wh) == before
    p.report(4, "--full-refresh", "--reset-history")
    assert history(engine_wh) == [(1, "ann", "platinum", d4, "open"),
                                  (2, "bob", "-", d4, "open"), (4, "dee", "gold", d4, "open")]


def test_a_backfill_cannot_recompute_a_history_nor_a_replay_repeat_it(tmp_path):
    p = People(tmp_path, "wh.duckdb")
    write_people(p.dir, [(1, "ann", "gold")])
    first = p.report(1)["run_id"]
    write_people(p.dir, [(1, "ann", "silver")])
    second = p.report(2)["run_id"]
    replayed = strata("replay", second, "-o", "wh.duckdb", "--execute", cwd=p.dir)
    assert "DIFFERS  people  (merge_strategy history: its versions before this run are in " \
           "no source" in replayed.stdout
    execute(tmp_path / "wh.duckdb", "CREATE TABLE people_fixed AS SELECT 1::BIGINT AS id, "
            "'ann' AS name, 'bronze' AS tier")
    refused = strata("backfill", "m.strata", first, "--reason", "fix", "--source",
                     "raw=people_fixed", "-o", "wh.duckdb", cwd=p.dir,
                     env={"STRATA_NOW": DAY.format(3)})
    assert error_code(refused) == "E213"
    assert "out with `--models`" in refused.stderr + refused.stdout

    # a column more: old and new versions cannot share a table
    (p.dir / "m.strata").write_text(MODULE.replace("  from raw\n  incremental",
                                                   "  from raw\n  derive since = 1\n  incremental"))
    changed = p.run(4, ok=False)
    error = json.loads(changed.stdout)["error"][0]
    assert error["code"] == "E214"
    assert error["message"] == ("the history of `people` has columns id, name, tier, "
                                "valid_from, valid_to; the model now gives id, name, tier, "
                                "since, valid_from, valid_to")
    assert "--full-refresh --reset-history --models people" in error["hint"]


def codes(body: str) -> list[str]:
    return [d.code for d in load_text("source raw { id: int, name: text, valid_to: int }\n"
                                      + body).diagnostics]


def test_a_history_needs_keys_takes_no_cdc_column_and_owns_its_two_columns():
    model = "model h {{\n  from raw\n  select {cols}\n  incremental\n  merge_strategy: history\n{extra}}}\n"
    assert codes(model.format(cols="id, name", extra="")) == ["E089"]
    assert codes(model.format(cols="id, name", extra="  merge_keys: [id]\n  cdc_column: id\n")) \
        == ["E210"]
    assert codes(model.format(cols="id, valid_to", extra="  merge_keys: [id]\n")) == ["E211"]
    assert codes(model.format(cols="id, name", extra="  merge_keys: [id]\n  on_drift: fail\n")) \
        == ["E118"]
    ok = load_text("source raw { id: int, name: text }\n" + model.format(
        cols="id, name", extra="  merge_keys: [id]\n"))
    assert not ok.diagnostics
    assert [(c.name, str(c.type)) for c in ok.plan("h").output] == \
        [("id", "int"), ("name", "text"), ("valid_from", "timestamp"),
         ("valid_to", "timestamp")]


def test_a_model_switched_to_history_starts_one_without_a_flag(tmp_path):
    p = People(tmp_path, "wh.duckdb")
    (tmp_path / "m.strata").write_text(MODULE.replace(
        "  incremental\n  merge_strategy: history\n  merge_keys: [id]\n", "").replace(
        "pin unique [id, valid_from]", "pin unique [id]").replace(
        "  filter valid_to is null\n", ""))
    write_people(p.dir, [(1, "ann", "gold")])
    p.report(1)
    (tmp_path / "m.strata").write_text(MODULE)
    switched = {m["model"]: m for m in p.report(2, "--full-refresh")["models"]}
    assert "the previous snapshot is no history" in " ".join(switched["people"]["notes"])
    wh = tmp_path / "wh.duckdb"
    assert query(wh, "SELECT id, tier, CAST(valid_from AS VARCHAR), valid_to FROM "
                 "main.v_people") == [(1, "gold", DAY.format(2), None)]
    # a later run timestamp alone opens no version: --only-stale has nothing to do
    assert p.report(3, "--only-stale")["status"] == "up_to_date"
