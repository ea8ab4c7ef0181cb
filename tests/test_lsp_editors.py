"""What any editor gets from `strata lsp`, spoken to as Neovim's client would: raw
JSON-RPC (tests/lsp_wire.py), no VS Code extension (issue 38, Editors).

The "Show SQL" code lens calls a command the server lists in its capabilities and
implements itself: code lens → its command → workspace/executeCommand → the SQL.
"""

from __future__ import annotations

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
