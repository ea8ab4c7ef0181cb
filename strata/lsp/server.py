"""`strata lsp`: the language server. Wiring only: each request is answered by the
feature module named for its job (diagnostics, hover, definition, completion,
symbols, sql_view) from the module checked last and its index.

A document belongs to the module found from its path (`loader.find_module_root`,
or the `module` initialization option). Opening checks at once; a change is checked
after `debounce_ms` (default 75) without another change, so a burst of keystrokes
is checked once.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from strata.diagnostics import StrataError
from strata.lsp import completion, definition, diagnostics, hover, sql_view, symbols
from strata.lsp.convert import one_based, to_location, to_range
from strata.lsp.index import Index, build_index
from strata.lsp.loader import Session, find_module_root, uri_path
from strata.semantics.resolve import display_path

DEBOUNCE_MS = 75


class StrataServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("strata", "0.1.0")
        self.sessions: dict[Path, Session] = {}
        self.indexes: dict[Path, tuple[object, Index]] = {}
        self.published: dict[Path, set[str]] = {}
        self.pending: dict[Path, asyncio.TimerHandle] = {}
        self.module_option: Path | None = None
        self.debounce = DEBOUNCE_MS / 1000

    # ------------------------------------------------------------ modules
    def session_for(self, uri: str) -> Session:
        path = uri_path(uri)
        if self.module_option is not None:
            root = self.module_option
        else:
            stop = Path(self.workspace.root_path).absolute() if self.workspace.root_path \
                else None
            root = find_module_root(path, stop if stop and path.is_relative_to(stop) else None)
        if root not in self.sessions:
            self.sessions[root] = Session(root)
        return self.sessions[root]

    def overlays(self, closing: str | None) -> dict[Path, str]:
        return {uri_path(uri): doc.source for uri, doc in self.workspace.text_documents.items()
                if uri != closing}

    def check(self, session: Session, closing: str | None = None) -> None:
        """Check the module with the editor's texts (but `closing`'s, whose file on
        disk counts again) and publish for every file that has or had diagnostics."""
        previous = session.module
        module = session.check(self.overlays(closing))
        self._keep_index_of_parsed(session, previous, module.files)
        open_uris = [u for u in self.workspace.text_documents
                     if u != closing and session.root in (uri_path(u), *uri_path(u).parents)]
        found = diagnostics.by_uri(module.diagnostics, open_uris, module.files)
        before = self.published.get(session.root, set())
        # an open document hears every check (an empty list says "clean")
        for uri in (before | set(open_uris)) - set(found):
            self.text_document_publish_diagnostics(
                lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        for uri, diags in found.items():
            self.text_document_publish_diagnostics(
                lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diags))
        self.published[session.root] = set(found)

    def _keep_index_of_parsed(self, session: Session, previous, files) -> None:
        """A file that stopped parsing is answered from the last index that knew it
        (see `index`); when no request came since the check that still parsed it, that
        index was never built, so build it now, before the module is gone."""
        broken = [f for f in files
                  if isinstance(session.trees.get(f, ("", None))[1], StrataError)]
        built = self.indexes.get(session.root)
        if not broken or previous is None or (built is not None and built[0] is previous):
            return
        if built is not None and all(built[1].covers(f) for f in broken):
            return
        self.indexes[session.root] = (previous, build_index(previous))

    def schedule(self, session: Session) -> None:
        handle = self.pending.pop(session.root, None)
        if handle is not None:
            handle.cancel()
        loop = asyncio.get_running_loop()
        self.pending[session.root] = loop.call_later(self.debounce, self.check, session)

    def line_at(self, params) -> str:
        """The text of the line a request's position is on, as the editor has it."""
        lines = self.workspace.get_text_document(params.text_document.uri).lines
        n = params.position.line
        return lines[n].rstrip("\r\n") if 0 <= n < len(lines) else ""

    def index(self, uri: str) -> tuple[Index, str] | None:
        """The index of the document's module as last checked (built on first use
        after each check), and the document's display path."""
        session = self.session_for(uri)
        if session.module is None or session.root in self.pending:
            self.pending.pop(session.root, None)
            self.check(session)
        module = session.module
        file = display_path(uri_path(uri))
        built = self.indexes.get(session.root)
        if built is None or built[0] is not module:
            fresh = build_index(module)
            # a file that does not parse now (mid-edit) is answered from the last
            # index that knew it, so completion works while a step is half-typed
            if fresh.covers(file) or built is None or not built[1].covers(file):
                built = (module, fresh)
                self.indexes[session.root] = built
        return built[1], file


server = StrataServer()


@server.feature(lsp.INITIALIZE)
def initialize(ls: StrataServer, params: lsp.InitializeParams) -> None:
    options = params.initialization_options or {}
    if isinstance(options, dict):
        if options.get("module"):
            ls.module_option = Path(options["module"]).absolute()
        if "debounce_ms" in options:
            ls.debounce = max(float(options["debounce_ms"]), 0) / 1000


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: StrataServer, params: lsp.DidOpenTextDocumentParams) -> None:
    ls.check(ls.session_for(params.text_document.uri))


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: StrataServer, params: lsp.DidChangeTextDocumentParams) -> None:
    ls.schedule(ls.session_for(params.text_document.uri))


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: StrataServer, params: lsp.DidSaveTextDocumentParams) -> None:
    ls.check(ls.session_for(params.text_document.uri))


@server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: StrataServer, params: lsp.DidCloseTextDocumentParams) -> None:
    """The file on disk counts again in place of the closed buffer."""
    ls.check(ls.session_for(params.text_document.uri), closing=params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_HOVER)
def on_hover(ls: StrataServer, params: lsp.HoverParams) -> lsp.Hover | None:
    index, file = ls.index(params.text_document.uri)
    text = hover.hover_text(index, file, *one_based(params.position, ls.line_at(params)))
    if text is None:
        return None
    return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text))


@server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
def on_definition(ls: StrataServer, params: lsp.DefinitionParams) -> lsp.Location | None:
    index, file = ls.index(params.text_document.uri)
    span = definition.definition(index, file, *one_based(params.position, ls.line_at(params)))
    return to_location(span, index.module.files) if span is not None else None


@server.feature(lsp.TEXT_DOCUMENT_REFERENCES)
def on_references(ls: StrataServer, params: lsp.ReferenceParams) -> list[lsp.Location]:
    index, file = ls.index(params.text_document.uri)
    spans = definition.references(index, file, *one_based(params.position, ls.line_at(params)),
                                  params.context.include_declaration)
    return [to_location(s, index.module.files) for s in spans]


@server.feature(lsp.TEXT_DOCUMENT_COMPLETION,
                lsp.CompletionOptions(trigger_characters=[".", " ", "|"]))
def on_completion(ls: StrataServer, params: lsp.CompletionParams) -> lsp.CompletionList:
    index, file = ls.index(params.text_document.uri)
    # the buffer as it is now: the line being typed may not have been checked yet
    lines = ls.workspace.get_text_document(params.text_document.uri).lines
    n = params.position.line
    if n < len(lines):
        index.set_line(file, n + 1, lines[n].rstrip("\r\n"))
    items = completion.complete(index, file, *one_based(params.position, ls.line_at(params)))
    return lsp.CompletionList(is_incomplete=False, items=items)


@server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
def on_symbols(ls: StrataServer, params: lsp.DocumentSymbolParams) -> list:
    index, file = ls.index(params.text_document.uri)
    return symbols.document_symbols(index, file)


@server.feature(lsp.TEXT_DOCUMENT_CODE_LENS)
def on_code_lens(ls: StrataServer, params: lsp.CodeLensParams) -> list[lsp.CodeLens]:
    index, file = ls.index(params.text_document.uri)
    lenses = []
    for info in index.module.models.values():
        if info.decl.span.file == file:
            lenses.append(lsp.CodeLens(range=to_range(info.decl.name_span,
                                                      index.module.files.get(file)),
                                       command=lsp.Command(
                title="Show SQL", command=sql_view.SHOW,
                arguments=[params.text_document.uri, info.decl.name_span.line - 1])))
    return lenses


@server.command(sql_view.COMMAND)
def render_sql(ls: StrataServer, *args) -> dict:
    """Arguments: the document URI, a 0-based line inside a model, and optionally a
    dialect name (default: the default dialect)."""
    uri, line = str(args[0]), int(args[1]) if len(args) > 1 else 0
    dialect = str(args[2]) if len(args) > 2 else None
    index, file = ls.index(uri)
    model = sql_view.model_at(index.module, file, line + 1)
    return sql_view.render_sql(index.module, model, dialect).to_json()


def main() -> None:
    server.start_io()
