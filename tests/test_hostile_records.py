"""Issue 39, what a failed run records (items 15 and 16): its history entry, as
`history` and `history --json` show it and as the graph page embeds it.

Real parts only: a real DuckDB file, the real `strata` CLI in subprocesses."""

from __future__ import annotations

import json
import re

import duckdb
import pytest
from test_failed_runs import Project, codes

from strata.textsafe import escape_unprintable

# every character str.splitlines cuts at, other control characters, a line feed and a
# carriage return, ESC and DEL: a quoted name may hold any of them (not NUL)
ODD = "\u2028\u2029\x85\x0b\x0c\x1c\x1d\x1e\x1f\x01\t\r\n\x1b[1m\x7f"
COLUMN = "c\u2028\u2029\x85\x0b\x0c\x1c\x1d\x1e\x1f\x01\x1b[1m\x7fd"  # no line feed


@pytest.fixture
def project(tmp_path) -> Project:
    return Project(tmp_path)


def _graph_nodes(p: Project) -> dict[str, dict]:
    """The graph page's embedded data, node by name."""
    html = p.ok("graph", "mod", "-o", "w.duckdb", "--out", "-").stdout
    found = re.search(r'<script id="graph-data" type="application/json">(.*?)</script>',
                      html, re.DOTALL)
    return {n["name"]: n for n in json.loads(found.group(1))["nodes"]}


def _one_list_each(failure: dict) -> None:
    """Every attempted model is in at most one of failed / built / not_built."""
    lists = [set(failure["failed"]), set(failure["built"]), set(failure["not_built"])]
    for model in failure["attempted"]:
        assert sum(model in each for each in lists) <= 1, (model, failure)


# ---------------------------------------------------------------- 15
BOTH_PINS_FAIL = """
model uniq {
  from raw
  select id, code
  pin unique [code]
}

model after_uniq {
  from uniq
  select code
  pin unique [code]
}
"""


@pytest.mark.parametrize("workers", ["1", "4"])
def test_a_model_downstream_of_a_failed_pin_is_not_built_and_not_failed(project, workers):
    """With lanes, `after_uniq` was built and checked before `uniq`'s pin failed, and
    its own violation put it in `failed` (E061) while it was also `not_built`. The
    run's error says it was not built or checked; the entry says the same, with any
    number of workers, run after run."""
    p = project
    p.sql("CREATE TABLE raw AS SELECT * FROM (VALUES (1, '1'), (2, 'x'), (3, 'x')) "
          "t(id, code)")
    (p.module / "m.strata").write_text("source raw { id: int, code: text }\n"
                                       + BOTH_PINS_FAIL)
    for _ in range(4 if workers == "4" else 1):
        proc = p.cli("run", "mod", "-o", "w.duckdb", "--workers", workers, "--json")
        doc = json.loads(proc.stdout)
        assert proc.returncode == 1 and [e["code"] for e in doc["error"]] == ["E061"]
        assert "not built or checked: `after_uniq`" in json.dumps(doc)
        entry = p.history()[0]
        assert entry["id"] == doc["failed_entry"]
        failure = entry["failure"]
        assert list(failure["failed"]) == ["uniq"], failure
        assert failure["not_built"] == {"after_uniq": "uniq"}
        assert failure["built"] == []
        _one_list_each(failure)
        listing = p.ok("history", "-o", "w.duckdb").stdout.splitlines()[0]
        assert "FAILED E061 in `uniq` at" in listing, listing
        shown = p.ok("replay", entry["id"], "-o", "w.duckdb").stdout
        assert "failed: after_uniq" not in shown
        assert "not built: after_uniq (upstream `uniq` failed)" in shown
    nodes = _graph_nodes(p)
    assert nodes["uniq"]["state"] == "failed"
    assert nodes["after_uniq"]["state"] == "never built"
    assert nodes["after_uniq"]["history"][0]["status"] == "not built (upstream `uniq` failed)"


# ---------------------------------------------------------------- 16
def test_failure_messages_and_names_with_line_separators_survive_whole(project):
    """`_said` kept a message's first line by str.splitlines, which cuts at U+2028
    (and U+2029, \\x85, \\v, \\f, \\x1c-\\x1e): a model named `x<U+2028>y` was recorded
    as "model `x"; so was an engine message naming such a column. Each name and
    message is whole in `history --json`, in the graph page's data, and escaped (one
    line) in `history` and `replay`."""
    p = project
    pinned, casted = f"a{ODD}pin", f"b{ODD}cast"
    p.sql(f'CREATE TABLE raw AS SELECT * FROM (VALUES (1, \'x\'), (2, \'x\')) t(id, "{COLUMN}")')
    (p.module / "m.strata").write_text(
        f"source raw {{ id: int, `{COLUMN}`: text }}\n"
        f"model `{pinned}` {{\n  from raw\n  select `{COLUMN}`\n  pin unique [`{COLUMN}`]\n}}\n"
        f"model `{casted}` {{\n  from raw\n  derive n = cast(`{COLUMN}` as int)\n"
        "  select id, n\n}\n")
    proc = p.run("--json")
    assert proc.returncode == 1
    assert [e["code"] for e in json.loads(proc.stdout)["error"]] == ["E080"]

    entry = p.history()[0]
    failure = entry["failure"]
    assert failure["attempted"] == [pinned, casted] and entry["models"] == [pinned, casted]
    assert list(failure["failed"]) == [pinned, casted]
    pin_said = failure["failed"][pinned][0]
    assert pin_said["code"] == "E061"
    assert pin_said["message"] == (f"model `{pinned}`: pin unique [{COLUMN}] violated: 1 "
                                   f"value(s) of [{COLUMN}] are shared by 2 rows")
    cast_said = failure["failed"][casted][0]
    assert cast_said["code"] == "E080"
    assert cast_said["message"].startswith(f"model `{casted}` failed in the engine: ")
    assert cast_said["message"].endswith(f"source column {COLUMN}")  # the engine's line
    assert failure["errors"] == [cast_said]

    nodes = _graph_nodes(p)
    for model, said in ((pinned, pin_said), (casted, cast_said)):
        assert nodes[model]["state"] == "failed"
        assert nodes[model]["failure"]["errors"] == [said]
        assert nodes[model]["reason"].endswith(said["message"])

    listing = p.ok("history", "-o", "w.duckdb").stdout
    first = listing.splitlines()[0]
    assert f"FAILED E061 in `{escape_unprintable(pinned)}` and 1 more at " in first, first
    shown = p.ok("replay", entry["id"], "-o", "w.duckdb").stdout
    assert escape_unprintable(f"error[E080] {cast_said['message']}") in shown
    assert escape_unprintable(f"error[E061] {pin_said['message']}") in shown
    unprintable = {c for c in ODD if not c.isprintable()} - {"\n"}
    for text in (listing, shown):
        assert not unprintable & set(text)


# ---------------------------------------------------------------- 18
EQUALS_SOURCES = """source raw { id: int, code: text }
source `raw=v1` { id: int, code: text }
source `k=v` { id: int, code: text }
model from_raw_v1 {
  from `raw=v1`
  select id, code
}
model from_raw {
  from raw
  select id, code
}
model from_k_v {
  from `k=v`
  select id, code
}
"""


@pytest.fixture
def equals(project) -> Project:
    """Sources named `raw`, `raw=v1` and `k=v`, each its own table, one run published."""
    p = project
    p.sql("CREATE TABLE raw AS SELECT * FROM (VALUES (1, 'a')) t(id, code)",
          """CREATE TABLE "raw=v1" AS SELECT * FROM (VALUES (2, 'b')) t(id, code)""",
          """CREATE TABLE "k=v" AS SELECT * FROM (VALUES (3, 'c')) t(id, code)""",
          "CREATE TABLE fixed AS SELECT * FROM (VALUES (8, 'y')) t(id, code)",
          "CREATE TABLE fixed2 AS SELECT * FROM (VALUES (9, 'z')) t(id, code)")
    (p.module / "m.strata").write_text(EQUALS_SOURCES)
    p.ok("run", "mod", "-o", "w.duckdb")
    return p


def _rows(p: Project) -> dict[str, list]:
    con = duckdb.connect(str(p.wh), read_only=True)
    try:
        return {m: con.execute(f"SELECT id FROM v_{m}").fetchall()
                for m in ("from_raw_v1", "from_raw", "from_k_v")}
    finally:
        con.close()


def test_override_takes_a_source_whose_name_holds_equals_quoted_or_split_at_the_last(equals):
    """`--override` split its value at every `=`: a source named `raw=v1` was E078
    "malformed" however it was written. Quoted with backticks, or unquoted where only
    one `=` leaves a known source on its left, it is that source."""
    p = equals
    run = json.loads(p.ok("run", "mod", "-o", "w.duckdb", "--json",
                          "--override", "`raw=v1`=fixed", "--override", "k=v=fixed2").stdout)
    assert sorted(run["rebuilt"]) == ["from_k_v", "from_raw_v1"]
    assert _rows(p) == {"from_raw_v1": [(8,)], "from_raw": [(1,)], "from_k_v": [(9,)]}
    assert p.history()[0]["overrides"] == {"raw=v1": "fixed", "k=v": "fixed2"}
    spaced = p.ok("run", "mod", "-o", "w.duckdb", "--json", "--override", " `raw=v1` = fixed2")
    assert json.loads(spaced.stdout)["rebuilt"] == ["from_raw_v1"]
    assert _rows(p)["from_raw_v1"] == [(9,)]


def test_override_ambiguous_or_malformed_with_equals_is_E078_with_a_hint(equals):
    """`raw=v1=fixed` reads as `raw` -> `v1=fixed` or as `raw=v1` -> `fixed`: a coded
    error whose hint spells both readings quoted; nothing is written."""
    p = equals
    before = p.raw_history()
    ambiguous = p.cli("run", "mod", "-o", "w.duckdb", "--override", "raw=v1=fixed")
    assert ambiguous.returncode == 1 and codes(ambiguous) == ["E078"], ambiguous.stderr
    assert "ambiguous --override `raw=v1=fixed`" in ambiguous.stderr
    assert "--override '`raw=v1`=fixed' or --override '`raw`=v1=fixed'" in ambiguous.stderr
    for bad, said in (("`raw=v1=fixed", "malformed --override '`raw=v1=fixed'"),
                      ("`raw=v1`fixed", "malformed --override '`raw=v1`fixed'"),
                      ("``=fixed", "malformed --override '``=fixed'"),
                      ("nope=v1=fixed", "--override names unknown source `nope`")):
        proc = p.cli("run", "mod", "-o", "w.duckdb", "--override", bad)
        assert proc.returncode == 1 and codes(proc) == ["E078"], (bad, proc.stderr)
        assert said in proc.stderr, (bad, proc.stderr)
    assert p.raw_history() == before


def test_backfill_source_takes_a_source_whose_name_holds_equals(equals):
    """The same reading for `backfill --source` (E085 where --override says E078)."""
    p = equals
    first = p.history()[0]["id"]
    quoted = json.loads(p.ok("backfill", "mod", first, "--source", "`raw=v1`=fixed",
                             "--reason", "fix", "-o", "w.duckdb", "--json").stdout)
    assert quoted["rebuilt"] == ["from_raw_v1"] and quoted["backfill_of"] == first
    assert _rows(p)["from_raw_v1"] == [(8,)]
    split = json.loads(p.ok("backfill", "mod", first, "--source", "k=v=fixed2",
                            "--reason", "fix k", "-o", "w.duckdb", "--json").stdout)
    assert split["rebuilt"] == ["from_k_v"]
    assert p.history()[0]["overrides"] == {"k=v": "fixed2"}
    ambiguous = p.cli("backfill", "mod", first, "--source", "raw=v1=fixed", "--reason", "x",
                      "-o", "w.duckdb")
    assert ambiguous.returncode == 1 and codes(ambiguous) == ["E085"], ambiguous.stderr
    assert "--source '`raw=v1`=fixed' or --source '`raw`=v1=fixed'" in ambiguous.stderr
