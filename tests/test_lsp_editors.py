"""What any editor gets from `strata lsp`, spoken to as Neovim's client would: raw
JSON-RPC (tests/lsp_wire.py), no VS Code extension (issue 38, Editors).

The "Show SQL" code lens calls a command the server lists in its capabilities and
implements itself: code lens → its command → workspace/executeCommand → the SQL.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lsp_wire import RawServer

MODULE = """\
source orders { id: int, customer: int, amount: int }

model big_orders {
  from orders
  filter amount > 10
}
"""


@pytest.fixture
def server(tmp_path: Path):
    started = RawServer(tmp_path)
    yield started
    try:
        for text in started.texts:
            assert "Traceback" not in text, text
        assert started.alive(), started.stderr_text()[-2000:]
    finally:
        started.close()


def opened(server: RawServer, folder: Path, text: str = MODULE, name: str = "m.strata") -> str:
    doc = folder / name
    doc.write_text(text)
    server.open(doc.as_uri(), text)
    server.diagnostics(doc.as_uri())
    return doc.as_uri()


def test_the_code_lens_command_is_the_servers_own_and_answers_the_sql(server, tmp_path):
    capabilities = server.initialize()["result"]["capabilities"]
    listed = capabilities["executeCommandProvider"]["commands"]
    uri = opened(server, tmp_path)
    lenses = server.call("textDocument/codeLens", {"textDocument": {"uri": uri}})["result"]
    assert [lens["command"]["title"] for lens in lenses] == ["Show SQL"]
    command = lenses[0]["command"]
    assert command["command"] in listed
    reply = server.call("workspace/executeCommand", {
        "command": command["command"], "arguments": command["arguments"]})["result"]
    assert reply["model"] == "big_orders" and reply["error"] is None
    assert "amount > 10" in reply["sql"] and "SELECT" in reply["sql"]


# ---------------------------------------------------------------- window functions
WINDOWED = """\
source orders { id: int, customer: int, amount: int }

model ranked {
  from orders
  window by customer order id
  derive n = row_number(), previous = lag(amount, 1, 0)
  filter n <= 3
  derive r = 1
}
"""


def at(uri: str, line: int, character: int) -> dict:
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}


def hover(server: RawServer, uri: str, line: int, character: int) -> str:
    return server.call("textDocument/hover", at(uri, line, character))["result"][
        "contents"]["value"]


def labels(server: RawServer, uri: str, line: int, character: int) -> dict[str, dict]:
    items = server.call("textDocument/completion", at(uri, line, character))["result"]["items"]
    return {item["label"]: item for item in items}


def test_window_functions_have_hover_with_signature_and_doc(server, tmp_path):
    server.initialize()
    uri = opened(server, tmp_path, WINDOWED)
    row_number = hover(server, uri, 5, 14)
    assert "row_number() -> int" in row_number and "window function" in row_number
    assert "position in its partition" in row_number
    lag = hover(server, uri, 5, 40)
    assert "lag(x: T[, offset: int[, default: T]]) -> T" in lag and "rows before" in lag


def test_window_functions_are_offered_in_the_derive_after_window_only(server, tmp_path):
    server.initialize()
    uri = opened(server, tmp_path, WINDOWED)
    in_window = labels(server, uri, 5, 13)
    for name in ("row_number", "rank", "dense_rank", "ntile", "lag", "lead",
                 "first_value", "last_value", "percent_rank", "cume_dist"):
        assert name in in_window, name
    assert in_window["ntile"]["detail"] == "ntile(n: int) -> int"
    assert "sum" in in_window and "amount" in in_window  # aggregates, columns still there
    elsewhere = labels(server, uri, 7, 13)
    assert "row_number" not in elsewhere and "lag" not in elsewhere
    assert "amount" in elsewhere


# ---------------------------------------------------------------- symbols, quick fixes
OTHER = """\
model region_sales {
  from big_orders
  group customer
  aggregate total = sum(amount)
}
"""


def test_workspace_symbols_find_models_sources_and_tests_by_fuzzy_name(server, tmp_path):
    server.initialize()
    uri = opened(server, tmp_path)
    other = opened(server, tmp_path, OTHER, "sales.strata")
    found = server.call("workspace/symbol", {"query": "rsales"})["result"]
    assert [(s["name"], s["location"]["uri"]) for s in found] == [("region_sales", other)]
    assert found[0]["location"]["range"]["start"]["line"] == 0
    every = {s["name"]: s for s in server.call("workspace/symbol", {"query": ""})["result"]}
    assert set(every) == {"orders", "big_orders", "region_sales"}
    assert every["big_orders"]["location"]["uri"] == uri
    assert every["orders"]["kind"] != every["big_orders"]["kind"]  # a source, a model


MISSPELT = """\
source orders { id: int, customer: int, amount: int }

model big_orders {
  from ordrs
  filter o.amout > 10
}

model other {
  from orders as o
  filter o.amout > 10
}
"""


def apply(text: str, edits: list[dict]) -> str:
    lines = text.split("\n")
    for edit in sorted(edits, key=lambda e: (e["range"]["start"]["line"],
                                             e["range"]["start"]["character"]), reverse=True):
        start, end = edit["range"]["start"], edit["range"]["end"]
        assert start["line"] == end["line"]
        line = lines[start["line"]]
        lines[start["line"]] = (line[:start["character"]] + edit["newText"]
                                + line[end["character"]:])
    return "\n".join(lines)


def test_did_you_mean_diagnostics_have_quick_fixes_that_fix_them(server, tmp_path):
    server.initialize()
    uri = opened(server, tmp_path, MISSPELT)
    diagnostics = [d for m in server.seen if m.get("method") == "textDocument/publishDiagnostics"
                   and m["params"]["uri"] == uri for d in m["params"]["diagnostics"]]
    suggesting = [d for d in diagnostics if "did you mean" in d["message"]]
    assert len(suggesting) >= 2, diagnostics
    actions = server.call("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": suggesting[0]["range"],
        "context": {"diagnostics": suggesting}})["result"]
    assert {a["title"] for a in actions} == {"Change to `orders`", "Change to `amount`"}
    assert all(a["kind"] == "quickfix" and a["diagnostics"] for a in actions)
    edits = [e for a in actions for e in a["edit"]["changes"][uri]]
    fixed = apply(MISSPELT, edits)
    assert "from orders\n" in fixed and "filter o.amount > 10" in fixed
    server.change(uri, fixed, 2)
    assert [d for d in server.diagnostics(uri) if "did you mean" in d["message"]] == []


# ---------------------------------------------------------------- rename
SOURCES = """\
source orders { id: int, customer: int, amount: int }

model big_orders {
  from orders as o
  filter o.amount > 10
  derive twice = amount * 2
}
"""

READERS = """\
model top {
  from big_orders as b
  filter b.twice > 4
  select id, twice
}
"""


def edited(server: RawServer, texts: dict[str, str], answer: dict) -> dict[str, str]:
    assert "error" not in answer, answer
    out = dict(texts)
    for uri, edits in answer["result"]["changes"].items():
        out[uri] = apply(out[uri], edits)
    return out


def test_rename_a_model_and_a_column_across_files(server, tmp_path):
    server.initialize()
    first = opened(server, tmp_path, SOURCES, "a.strata")
    second = opened(server, tmp_path, READERS, "b.strata")
    texts = {first: SOURCES, second: READERS}
    prepared = server.call("textDocument/prepareRename", at(second, 1, 9))["result"]
    assert prepared["placeholder"] == "big_orders"
    renamed = edited(server, texts, server.call("textDocument/rename", {
        **at(second, 1, 9), "newName": "large_orders"}))
    assert "model large_orders {" in renamed[first]
    assert "from large_orders as b" in renamed[second]
    # a column, at a qualified reference in the other file: `b.twice` keeps its `b.`
    renamed = edited(server, renamed, server.call("textDocument/rename", {
        **at(second, 2, 12), "newName": "doubled"}))
    assert "derive doubled = amount * 2" in renamed[first]
    assert "filter b.doubled > 4" in renamed[second]
    assert "select id, doubled" in renamed[second]
    for version, (uri, text) in enumerate(renamed.items(), start=2):
        server.change(uri, text, version)
    # the edit of a.strata re-checks b.strata too, before b's own edit arrives: a
    # publication of b from between the two edits may still come first
    for uri, text in renamed.items():
        published = [server.diagnostics(uri)]
        while published[-1] != [] and len(published) < 4:
            published.append(server.diagnostics(uri))
        assert published[-1] == [], (text, published)


def test_rename_refuses_sources_and_bad_names(server, tmp_path):
    server.initialize()
    uri = opened(server, tmp_path, SOURCES, "a.strata")
    source = server.call("textDocument/rename", {**at(uri, 3, 8), "newName": "x"})
    assert source["error"]["code"] < 0 and "source" in source["error"]["message"]
    column = server.call("textDocument/rename", {**at(uri, 4, 12), "newName": "x"})
    assert "source column" in column["error"]["message"]
    bad = server.call("textDocument/rename", {**at(uri, 2, 8), "newName": "9 lives"})
    assert "is not a name" in bad["error"]["message"]
    taken = server.call("textDocument/rename", {**at(uri, 2, 8), "newName": "orders"})
    assert "names a model or source already" in taken["error"]["message"]
    assert "Traceback" not in json.dumps([source, column, bad, taken])


# ---------------------------------------------------------------- definition of fn and with
WITH_FN = """\
source orders { id: int, customer: int, amount: int }

fn doubled(x: int) -> int = x * 2

model paid {
  with big = (from orders | filter amount > 10)
  with bigger = (from big | filter amount > 100)
  from bigger
  derive twice = doubled(amount)
}
"""


def location(server: RawServer, uri: str, line: int, character: int) -> tuple:
    found = server.call("textDocument/definition", at(uri, line, character))["result"]
    start = found["range"]["start"]
    return found["uri"], start["line"], start["character"]


def test_definition_of_a_fn_call_its_parameter_and_a_with_relation(server, tmp_path):
    """Issue 40's leftover: go to definition from a call of the module's own `fn`
    (in another file), from a parameter in its body, and from a `with` relation read
    by name (in the model's steps and in a later `with`)."""
    server.initialize()
    uri = opened(server, tmp_path, WITH_FN)
    other = opened(server, tmp_path, "model again {\n  from paid\n  derive d = doubled(id)\n}\n",
                   "again.strata")
    assert server.diagnostics(other) == []
    assert location(server, uri, 8, 19) == (uri, 2, 3)  # doubled( in paid -> fn doubled
    assert location(server, other, 2, 14) == (uri, 2, 3)  # ... from another file
    assert location(server, uri, 2, 28) == (uri, 2, 11)  # x in the body -> parameter x
    assert location(server, uri, 7, 8) == (uri, 6, 7)  # from bigger -> with bigger
    assert location(server, uri, 6, 22) == (uri, 5, 7)  # from big (in a with) -> with big
    assert "with big {" in hover(server, uri, 6, 22) and "amount: int" in hover(server, uri, 6, 22)
    assert "fn doubled(x: int) -> int = x * 2" in hover(server, uri, 8, 19)
    refs = server.call("textDocument/references", {
        **at(uri, 2, 4), "context": {"includeDeclaration": False}})["result"]
    assert sorted((r["uri"], r["range"]["start"]["line"]) for r in refs) == \
        sorted([(uri, 8), (other, 2)])


# ---------------------------------------------------------------- formatting
def test_formatting_is_strata_fmt_as_one_edit(server, tmp_path):
    capabilities = server.initialize()["result"]["capabilities"]
    assert capabilities["documentFormattingProvider"]
    messy = "source orders{id:int}\nmodel m{\nfrom orders   -- all\n  filter id>1}\n"
    uri = opened(server, tmp_path, messy)
    edits = server.call("textDocument/formatting", {
        "textDocument": {"uri": uri}, "options": {"tabSize": 2, "insertSpaces": True}})["result"]
    assert len(edits) == 1 and edits[0]["range"]["start"] == {"line": 0, "character": 0}
    assert edits[0]["range"]["end"] == {"line": 4, "character": 0}
    from strata.fmt import format_source

    assert edits[0]["newText"] == format_source(messy)
    assert edits[0]["newText"] == ("source orders { id: int }\n\nmodel m {\n  from orders  -- all\n"
                                   "  filter id > 1 }\n")
    server.change(uri, edits[0]["newText"], 2)
    assert server.call("textDocument/formatting", {
        "textDocument": {"uri": uri}, "options": {"tabSize": 2, "insertSpaces": True}})[
        "result"] == []
    server.change(uri, "model m {\n  from\n}\n", 3)  # does not parse: no edit, no error
    assert server.call("textDocument/formatting", {
        "textDocument": {"uri": uri}, "options": {"tabSize": 2, "insertSpaces": True}})[
        "result"] == []
