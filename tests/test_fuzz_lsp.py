"""Fuzzing `strata lsp`'s byte stream (issue 39): whatever bytes reach its stdin --
valid messages, messages with mutated headers or bodies, random requests with
random params, bare bytes -- the server stays alive, writes no traceback, and
answers a final valid request.

One real server process takes every example in turn (tests/lsp_wire.py), so each
example's bytes come after all earlier ones: it must resynchronise after anything.
Derandomized, a fixed number of examples in CI (STRATA_FUZZ_SCALE raises it).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lsp_wire import RawServer, frame
from test_fuzz import FAST, examples

MODULE = "source orders { id: int, amount: int }\nmodel big { from orders\n filter amount > 1 }\n"
# every method the server has, and some it has not; never `shutdown` or `exit`
METHODS = ["textDocument/hover", "textDocument/definition", "textDocument/references",
           "textDocument/completion", "textDocument/documentSymbol", "textDocument/codeLens",
           "workspace/executeCommand", "textDocument/didOpen", "textDocument/didChange",
           "textDocument/didSave", "textDocument/didClose", "initialize", "initialized",
           "$/cancelRequest", "$/setTrace", "no/such/method", ""]
URIS = ["file:///x.strata", "untitled:Untitled-1", "file:///", "file://host/x.strata",
        "file:///tmp/%00.strata", "file:///%ED%A0%80.strata", "http://h/x.strata", "", ":"]


def json_values() -> st.SearchStrategy:
    scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                        st.floats(allow_nan=False), st.text(max_size=20),
                        st.sampled_from(URIS), st.sampled_from([0, -1, 2**31, 10**20]))
    return st.recursive(scalars, lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(
            st.sampled_from(["uri", "textDocument", "position", "line", "character",
                             "text", "version", "contentChanges", "command", "arguments",
                             "context", "includeDeclaration", "id", "x"]), inner,
            max_size=5)), max_leaves=12)


def params() -> st.SearchStrategy:
    """Params that often fit a method's shape, with any value in any place."""
    document = st.fixed_dictionaries({"uri": st.sampled_from(URIS)})
    position = st.fixed_dictionaries({"line": st.integers(-3, 2**32),
                                      "character": st.integers(-3, 2**32)})
    fitting = st.fixed_dictionaries({"textDocument": document, "position": position})
    opened = st.fixed_dictionaries({"textDocument": st.fixed_dictionaries({
        "uri": st.sampled_from(URIS), "languageId": st.just("strata"),
        "version": st.integers(0, 9), "text": st.sampled_from([MODULE, "model {", ""])})})
    command = st.fixed_dictionaries({"command": st.just("strata.renderSql"),
                                     "arguments": st.lists(json_values(), max_size=4)})
    return st.one_of(fitting, opened, command, json_values())


@st.composite
def messages(draw) -> dict:
    message = {"jsonrpc": draw(st.sampled_from(["2.0", "2.0", "2.0", "1.0", 2]))}
    if draw(st.booleans()):  # never the id of the test's own final request
        message["id"] = draw(st.one_of(st.integers(10**6, 10**7), st.text(max_size=5),
                                       json_values().filter(lambda v: not isinstance(v, int))))
    message["method"] = draw(st.sampled_from(METHODS))
    if draw(st.integers(0, 4)):
        message["params"] = draw(params())
    return message


@st.composite
def pieces(draw) -> bytes:
    """One piece of the stream: a message well framed, or framed wrong, or bytes."""
    body = json.dumps(draw(messages())).encode()
    kind = draw(st.integers(0, 9))
    if kind <= 3:
        return frame(body)
    if kind == 4:  # a wrong Content-Length
        length = draw(st.one_of(st.integers(0, len(body) * 2), st.sampled_from(
            [99999999999999, 2**63, 10**40, 64 * 2**20 + 1])))
        return b"Content-Length: %d\r\n\r\n" % length + body
    if kind == 5:  # a header mangled: a byte changed, dropped or added
        head = bytearray(b"Content-Length: %d\r\n\r\n" % len(body))
        at = draw(st.integers(0, len(head) - 1))
        change = draw(st.integers(0, 2))
        if change == 0:
            head[at] = draw(st.integers(0, 255))
        elif change == 1:
            del head[at]
        else:
            head.insert(at, draw(st.integers(0, 255)))
        return bytes(head) + body
    if kind == 6:  # the body mangled
        data = bytearray(body)
        for _ in range(draw(st.integers(1, 4))):
            data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
        return frame(bytes(data))
    if kind == 7:  # cut short
        whole = frame(body)
        return whole[:draw(st.integers(0, len(whole)))]
    if kind == 8:  # other headers, other line ends, other case
        return (draw(st.sampled_from([b"Content-Type: application/json\r\n", b"X: y\n", b""]))
                + draw(st.sampled_from([b"Content-Length", b"content-length",
                                        b"CONTENT-LENGTH"]))
                + draw(st.sampled_from([b": ", b":", b" : "])) + b"%d" % len(body)
                + draw(st.sampled_from([b"\r\n\r\n", b"\n\n", b"\r\n\n"])) + body)
    return draw(st.binary(max_size=200))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    started = RawServer(tmp_path_factory.mktemp("fuzz-lsp"))
    started.initialize({"debounce_ms": 0})
    yield started
    started.close()


@settings(FAST, max_examples=examples(40))
@given(stream=st.lists(pieces(), min_size=1, max_size=8))
def test_any_byte_stream_leaves_the_server_alive_and_answering(server: RawServer,
                                                              stream: list[bytes]):
    server.write(b"".join(stream))
    ident = server.request("textDocument/hover", {
        "textDocument": {"uri": Path("/nowhere/fuzz.strata").as_uri()},
        "position": {"line": 0, "character": 0}})
    reply = server.answer(ident)
    assert reply.get("result", "missing") is None, reply
    assert server.alive(), server.stderr_text()[-2000:]
    for text in server.texts:
        assert "Traceback" not in text and 'File "' not in text, text
