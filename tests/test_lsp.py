"""`strata lsp` (issue 21), driven as an editor drives it: `strata lsp` runs as a real
subprocess and pygls' LanguageClient talks JSON-RPC to it over stdio, opening,
editing and closing documents of a two-file module on disk."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

STRATA = str(Path(sys.executable).with_name("strata"))

SOURCES = """\
source orders {
  id: int
  customer_id: int
  amount: decimal(12, 2)
  status: text
}

source customers {
  id: int
  name: text
}
"""

MODELS = """\
model paid {
  from orders
  filter status = 'paid'
  derive doubled = amount * 2
}

model by_customer {
  from paid
  join customers as c on customer_id = c.id
  group customer_id
  aggregate total = sum(doubled), n = count()
}

test by_customer_sums {
  given orders {
    id, customer_id, amount, status
    1, 10, 2.50, 'paid'
  }
  given customers {
    id, name
    10, 'ann'
  }
  expect by_customer {
    customer_id, total, n
    10, 5.00, 1
  }
}
"""


class Editor:
    """A language client in its own event loop; each call waits for the answer."""

    def __init__(self, cwd: Path):
        self.loop = asyncio.new_event_loop()
        self.client = LanguageClient("test-editor", "1")
        self.diagnostics: dict[str, list[lsp.Diagnostic]] = {}
        self.published = asyncio.Event()
        self.versions: dict[str, int] = {}

        @self.client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def _published(params: lsp.PublishDiagnosticsParams) -> None:
            self.diagnostics[params.uri] = list(params.diagnostics)
            self.published.set()

        self.run(self.client.start_io(STRATA, "lsp", cwd=str(cwd)))
        self.run(self.client.initialize_async(lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(), root_uri=cwd.as_uri(),
            initialization_options={"debounce_ms": 10})))
        self.client.initialized(lsp.InitializedParams())

    def run(self, coroutine):
        return self.loop.run_until_complete(coroutine)

    def wait_diagnostics(self, uri: str, until=lambda diags: True) -> list[lsp.Diagnostic]:
        """Wait until the server publishes for `uri` diagnostics meeting `until` (a
        check of an earlier text may still be on its way)."""
        async def wait():
            while True:
                if uri in self.diagnostics and until(self.diagnostics[uri]):
                    return self.diagnostics[uri]
                await asyncio.wait_for(self.published.wait(), 20)
                self.published.clear()
        return self.run(wait())

    def open(self, path: Path) -> str:
        uri = path.as_uri()
        self.versions[uri] = 1
        self.diagnostics.pop(uri, None)
        self.published.clear()
        self.client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="strata", version=1,
                                               text=path.read_text())))
        return uri

    def change(self, uri: str, text: str) -> None:
        self.versions[uri] += 1
        self.diagnostics.pop(uri, None)
        self.published.clear()
        self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri,
                                                              version=self.versions[uri]),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)]))

    def close(self, uri: str) -> None:
        self.diagnostics.pop(uri, None)
        self.published.clear()
        self.client.text_document_did_close(lsp.DidCloseTextDocumentParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri)))

    def at(self, uri: str, line: int, character: int) -> dict:
        return {"text_document": lsp.TextDocumentIdentifier(uri=uri),
                "position": lsp.Position(line=line, character=character)}

    def hover(self, uri: str, line: int, character: int) -> str | None:
        found = self.run(self.client.text_document_hover_async(
            lsp.HoverParams(**self.at(uri, line, character))))
        return found.contents.value if found else None

    def definition(self, uri: str, line: int, character: int):
        return self.run(self.client.text_document_definition_async(
            lsp.DefinitionParams(**self.at(uri, line, character))))

    def references(self, uri: str, line: int, character: int) -> list[lsp.Location]:
        return self.run(self.client.text_document_references_async(lsp.ReferenceParams(
            **self.at(uri, line, character),
            context=lsp.ReferenceContext(include_declaration=False))))

    def complete(self, uri: str, line: int, character: int) -> list[str]:
        found = self.run(self.client.text_document_completion_async(
            lsp.CompletionParams(**self.at(uri, line, character))))
        return [item.label for item in found.items]

    def symbols(self, uri: str):
        return self.run(self.client.text_document_document_symbol_async(
            lsp.DocumentSymbolParams(text_document=lsp.TextDocumentIdentifier(uri=uri))))

    def command(self, name: str, *args):
        return self.run(self.client.workspace_execute_command_async(
            lsp.ExecuteCommandParams(command=name, arguments=list(args))))

    def code_lens(self, uri: str):
        return self.run(self.client.text_document_code_lens_async(
            lsp.CodeLensParams(text_document=lsp.TextDocumentIdentifier(uri=uri))))

    def shutdown(self) -> None:
        """`shutdown`, `exit`, and the server's end, within a minute: pygls' client
        waits for the process without a bound, and never reads its stderr."""
        try:
            self.run(asyncio.wait_for(self.client.shutdown_async(None), 60))
            self.client.exit(None)
            self.run(asyncio.wait_for(self.client.stop(), 60))
        finally:
            server = self.client._server
            if server is not None and server.returncode is None:
                server.kill()
            self.loop.close()


@pytest.fixture(scope="module")
def shop(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("lsp") / "shop"
    (root / "models").mkdir(parents=True)
    (root / "sources.strata").write_text(SOURCES)
    (root / "models" / "orders.strata").write_text(MODELS)
    return root


@pytest.fixture(scope="module")
def editor(shop: Path):
    ed = Editor(shop.parent)
    # the module's file open from the start: a test split from the one that opens it
    # (another pytest-xdist worker) still finds it open
    ed.wait_diagnostics(ed.open(shop / "models" / "orders.strata"))
    yield ed
    ed.shutdown()


def _loc(location) -> tuple[str, int, int]:
    return (Path(location.uri.removeprefix("file://")).name, location.range.start.line,
            location.range.start.character)


def test_open_clean_module_publishes_no_diagnostics(editor: Editor, shop: Path):
    uri = editor.open(shop / "models" / "orders.strata")
    assert editor.wait_diagnostics(uri) == []


def test_diagnostics_on_change_are_strata_checks(editor: Editor, shop: Path, tmp_path: Path):
    """A typo'd column gives what `strata check --json` gives for the same text:
    code, message, span and hint."""
    uri = (shop / "models" / "orders.strata").as_uri()
    broken = MODELS.replace("derive doubled = amount * 2", "derive doubled = amont * 2")
    editor.change(uri, broken)
    got = editor.wait_diagnostics(uri)
    copy = tmp_path / "shop"
    (copy / "models").mkdir(parents=True)
    (copy / "sources.strata").write_text(SOURCES)
    (copy / "models" / "orders.strata").write_text(broken)
    run = subprocess.run([STRATA, "check", "--json", str(copy)], capture_output=True,
                         text=True, check=False)
    want = json.loads(run.stdout)
    assert [d.code for d in got] == [w["code"] for w in want] == ["E011"]
    d, w = got[0], want[0]
    assert d.message == f"{w['message']}\nhelp: {w['hint']}"
    assert "did you mean `amount`?" in d.message
    assert (d.range.start.line + 1, d.range.start.character + 1,
            d.range.end.line + 1, d.range.end.character + 1) == (
        w["line"], w["column"], w["end_line"], w["end_column"])
    # fixed again: the diagnostics clear
    editor.change(uri, MODELS)
    assert editor.wait_diagnostics(uri) == []


def test_an_error_in_another_file_reaches_its_readers(editor: Editor, shop: Path):
    """Editing the sources (unsaved) re-checks the models reading them: renaming a
    source column breaks `paid`, in the other file."""
    src = editor.open(shop / "sources.strata")
    editor.wait_diagnostics(src)
    models_uri = (shop / "models" / "orders.strata").as_uri()
    editor.change(src, SOURCES.replace("  status: text", "  state: text"))
    got = editor.wait_diagnostics(models_uri, until=lambda diags: diags != [])
    assert [d.code for d in got] == ["E011", "E011"]
    assert got[0].message.startswith("unknown column `status` in model `paid`")
    assert got[1].message.startswith("test `by_customer_sums`: `orders` has no column `status`")
    editor.close(src)  # the file on disk counts again
    assert editor.wait_diagnostics(models_uri, until=lambda diags: diags == []) == []


def test_hover_column_type_and_origin(editor: Editor, shop: Path):
    uri = (shop / "models" / "orders.strata").as_uri()
    text = editor.hover(uri, 10, 24)  # `doubled` in sum(doubled)
    assert "doubled: decimal" in text
    assert "`derive` in `paid`" in text and "orders.strata:4:10" in text
    text = editor.hover(uri, 2, 10)  # `status` in the filter
    assert "status: text" in text and "column of source `orders`" in text


def test_hover_model_columns_and_function_doc(editor: Editor, shop: Path):
    uri = (shop / "models" / "orders.strata").as_uri()
    model = editor.hover(uri, 7, 8)  # `from paid`
    assert "model paid {" in model
    assert "doubled: decimal(" in model and "status: text" in model
    fn = editor.hover(uri, 10, 20)  # `sum(`
    assert "sum(x: number)" in fn and "aggregate function" in fn


def test_definition_of_relation_and_column(editor: Editor, shop: Path):
    uri = (shop / "models" / "orders.strata").as_uri()
    # `from paid` -> the model's name
    assert _loc(editor.definition(uri, 7, 8)) == ("orders.strata", 0, 6)
    # `doubled` read in by_customer -> the derive step of paid that defines it
    assert _loc(editor.definition(uri, 10, 24)) == ("orders.strata", 3, 9)
    # `c.id` -> the column declared in sources.strata
    assert _loc(editor.definition(uri, 8, 41)) == ("sources.strata", 8, 2)
    # `from orders` -> the source
    assert _loc(editor.definition(uri, 1, 7)) == ("sources.strata", 0, 7)


def test_find_references(editor: Editor, shop: Path):
    uri = (shop / "models" / "orders.strata").as_uri()
    refs = editor.references(uri, 3, 10)  # `doubled` where derive defines it
    assert [_loc(r) for r in refs] == [("orders.strata", 10, 24)]
    # the model `by_customer`: read by the test's expect block
    refs = editor.references(uri, 6, 8)
    assert [_loc(r)[:2] for r in refs] == [("orders.strata", 22)]


def test_completion_relations_columns_functions_keywords(editor: Editor, shop: Path):
    uri = (shop / "models" / "orders.strata").as_uri()
    edited = MODELS.replace("  from paid\n", "  from paid\n  derive x = \n")
    editor.change(uri, edited)
    editor.wait_diagnostics(uri)
    labels = editor.complete(uri, 8, 13)  # after `derive x = `
    assert {"doubled", "status", "amount"} <= set(labels)
    assert {"sum", "coalesce", "date_trunc"} <= set(labels)
    edited = MODELS.replace("  from paid\n", "  from paid\n  join \n")
    editor.change(uri, edited)
    editor.wait_diagnostics(uri)
    labels = editor.complete(uri, 8, 7)  # after `join `
    assert {"paid", "orders", "customers"} <= set(labels)
    assert "sum" not in labels
    edited = MODELS.replace("  from paid\n", "  from paid\n  \n")
    editor.change(uri, edited)
    editor.wait_diagnostics(uri)
    labels = editor.complete(uri, 8, 2)  # a new step line
    assert {"derive", "window", "join_anti", "sort", "take", "incremental", "pin"} <= set(labels)
    # what the language grew since: `with`, a column's description, the metadata keys,
    # and the declarations (`import`, `fn`) a line can start
    assert {"with", "column", "description", "owner", "tags", "import", "fn",
            "model", "source", "test"} <= set(labels)
    edited = MODELS.replace("  from paid\n", "  from paid\n  pin \n")
    editor.change(uri, edited)
    editor.wait_diagnostics(uri)
    assert set(editor.complete(uri, 8, 6)) == {"unique", "not_null", "rows", "columns",
                                               "references", "accepted", "holds"}
    # after `c.` in the join condition: the columns of customers
    editor.change(uri, MODELS)
    assert editor.wait_diagnostics(uri) == []
    labels = editor.complete(uri, 8, 41)  # `c.|id`
    assert set(labels) == {"id", "name"}


def test_completion_mid_edit_before_any_other_request(shop: Path):
    """The first request of a session comes while the file does not parse: it is
    answered from the module as it was when the file last parsed (an index never built
    until then), not from nothing."""
    ed = Editor(shop.parent)
    try:
        uri = ed.open(shop / "models" / "orders.strata")
        assert ed.wait_diagnostics(uri) == []
        ed.change(uri, MODELS.replace("  from paid\n", "  from paid\n  derive x = \n"))
        ed.wait_diagnostics(uri)
        assert {"doubled", "status", "amount"} <= set(ed.complete(uri, 8, 13))
    finally:
        ed.shutdown()


def test_document_symbols(editor: Editor, shop: Path):
    uri = (shop / "models" / "orders.strata").as_uri()
    found = editor.symbols(uri)
    assert [(s.name, s.detail) for s in found] == [
        ("paid", "model"), ("by_customer", "model"), ("by_customer_sums", "test")]
    assert [c.name for c in found[0].children] == ["doubled"]


def test_rendered_sql_of_the_model_under_the_cursor(editor: Editor, shop: Path):
    uri = (shop / "models" / "orders.strata").as_uri()
    lenses = editor.code_lens(uri)
    assert [(lens.command.command, lens.command.arguments[1]) for lens in lenses] == [
        ("strata.renderSql", 0), ("strata.renderSql", 6)]
    duck = editor.command("strata.renderSql", uri, 9, "duckdb")
    assert duck["model"] == "by_customer" and duck["error"] is None
    assert "SUM(" in duck["sql"] and "GROUP BY" in duck["sql"]
    spark = editor.command("strata.renderSql", uri, 2, "spark")
    assert spark["model"] == "paid" and "orders.status = 'paid'" in spark["sql"]
    outside = editor.command("strata.renderSql", uri, 5)
    assert outside["model"] is None and outside["error"] == "no model under the cursor"


def test_positions_count_utf16_code_units_on_non_ascii_lines(editor: Editor, shop: Path):
    """LSP counts columns in UTF-16 code units: an emoji before a name is two units, an
    `é` one. Hover, definition and a diagnostic's range land on the name all the same."""
    uri = (shop / "models" / "orders.strata").as_uri()
    line = "  filter status = '\U0001f600é' or amont > 0"
    edited = MODELS.replace("  filter status = 'paid'", line)
    editor.change(uri, edited)
    got = editor.wait_diagnostics(uri, until=lambda diags: diags != [])
    assert [d.code for d in got] == ["E011"]
    units = line.encode("utf-16-le")
    start = units.index("amont".encode("utf-16-le")) // 2
    assert (got[0].range.start.line, got[0].range.start.character,
            got[0].range.end.character) == (2, start, start + len("amont"))
    editor.change(uri, edited.replace("amont", "amount"))
    editor.wait_diagnostics(uri, until=lambda diags: diags == [])
    assert "amount: decimal" in editor.hover(uri, 2, start + 2)
    assert _loc(editor.definition(uri, 2, start + 2)) == ("sources.strata", 3, 2)
    editor.change(uri, MODELS)
    editor.wait_diagnostics(uri, until=lambda diags: diags == [])


def test_hover_on_a_call_of_the_modules_own_fn_shows_its_signature_and_body(editor: Editor,
                                                                            shop: Path):
    """Issue 40: a `fn` of the module, hovered where it is called (in another file
    than its declaration) and at its declaration, shows its typed signature and body."""
    src = editor.open(shop / "sources.strata")
    editor.wait_diagnostics(src)
    with_fn = SOURCES + "\nfn doubled_net(x: decimal(12, 2)) -> decimal(16, 2) = x * 2\n"
    editor.change(src, with_fn)
    uri = (shop / "models" / "orders.strata").as_uri()
    editor.change(uri, MODELS.replace("derive doubled = amount * 2",
                                      "derive doubled = doubled_net(amount)"))
    assert editor.wait_diagnostics(uri) == []
    text = editor.hover(uri, 3, 22)  # `doubled_net(` in paid's derive
    assert "fn doubled_net(x: decimal(12, 2)) -> decimal(16, 2) = x * 2" in text
    assert "sources.strata:13:4" in text
    assert "fn doubled_net(" in editor.hover(src, 12, 5)  # at its declaration
    # the column it computes has the declared return type
    assert "doubled: decimal(16, 2)" in editor.hover(uri, 10, 24)
    editor.change(uri, MODELS)
    editor.close(src)
    assert editor.wait_diagnostics(uri, until=lambda diags: diags == []) == []
