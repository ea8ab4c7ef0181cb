"""The CLI keeps each module's code fingerprints and canonical SQL on disk by module
text (strata/engine/code_cache.py): a module run again into another warehouse reads
them back instead of rendering every model. Same text = same fingerprints and the
same executed SQL; anything odd about an entry means rendering again."""

from __future__ import annotations

import json

from enginehelpers import make_project, view_rows


def entries(cache):
    return sorted((cache / "code").glob("*.json"))


def replay_code(p) -> dict:
    [entry] = [e for e in p.history() if e["kind"] == "run"]
    return entry


def test_a_second_warehouse_reads_the_kept_code_and_gets_the_same_run(tmp_path):
    env = {"STRATA_CACHE_DIR": str(tmp_path / "cache")}
    first = make_project(tmp_path / "one")
    second = make_project(tmp_path / "two")
    report1 = first.run_json(env=env)
    [entry] = entries(tmp_path / "cache")
    kept = json.loads(entry.read_text())
    assert set(kept["fps"]) == {r["model"] for r in report1["models"]}

    report2 = second.run_json(env=env)
    assert entries(tmp_path / "cache") == [entry]
    assert report2["run_id"] == report1["run_id"]  # same data, same code fingerprints
    assert ({r["model"]: r["sql"] for r in report2["models"]}
            == {r["model"]: r["sql"] for r in report1["models"]})
    assert view_rows(second.warehouse) == view_rows(first.warehouse)


def test_a_corrupt_entry_is_rendered_again_and_rewritten(tmp_path):
    env = {"STRATA_CACHE_DIR": str(tmp_path / "cache")}
    clean = make_project(tmp_path / "clean")
    expected = clean.run_json(env={"STRATA_NO_CACHE": "1"})
    p = make_project(tmp_path / "proj")
    p.run_json(env=env)
    [entry] = entries(tmp_path / "cache")
    for i, garbage in enumerate(['{"fps": {"paid": 1}}', "not json",
                                 '{"fps": {}, "canonical": {}}']):
        entry.write_text(garbage)
        fresh = make_project(tmp_path / f"fresh{i}")
        report = fresh.run_json(env=env)
        assert report["run_id"] == expected["run_id"]
        assert set(json.loads(entry.read_text())["fps"]) >= {"paid", "totals"}
        assert view_rows(fresh.warehouse) == view_rows(clean.warehouse)


def test_changed_module_text_is_a_new_entry(tmp_path):
    env = {"STRATA_CACHE_DIR": str(tmp_path / "cache")}
    p = make_project(tmp_path / "proj")
    p.run_json(env=env)
    p.module.write_text(p.module.read_text().replace("price < 10", "price < 11"))
    report = p.run_json("--only-stale", env=env)
    assert "cheap" in report["stale"]
    assert len(entries(tmp_path / "cache")) == 2


def test_no_cache_writes_nothing(tmp_path):
    env = {"STRATA_CACHE_DIR": str(tmp_path / "cache"), "STRATA_NO_CACHE": "1"}
    make_project(tmp_path / "proj").run_json(env=env)
    assert not (tmp_path / "cache").exists()
