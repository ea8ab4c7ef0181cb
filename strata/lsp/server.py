"""`strata lsp`: the language server. Wiring only: each request is answered by the
feature module named for its job (diagnostics, hover, definition, completion,
symbols, quickfix, rename, formatting, sql_view) from the module checked last and its index.

A document belongs to the module found from its path (`search.find_module_root`,
or the `module` initialization option, for the documents inside it); a document
that is not a `file:` (an editor's `untitled:` buffer) is a module of its own. The
module's files on disk are listed by a bounded search (search.py) in a thread of
its own: no request waits for it. Until the listing is there a request is answered
from the editor's buffers alone, and diagnostics are published once it is (so
that a file is never said to miss a source another file declares). Opening checks
at once; a change is checked after `debounce_ms` (default 75) without another
change, so a burst of keystrokes is checked once. The listing is made again when a
document is opened, saved or closed (a file may have appeared).

The bytes on stdin go through wire.py: any byte stream is survived, every request
answered (a result or a JSON-RPC error, never a traceback).
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from strata.diagnostics import Diagnostic, StrataError
from strata.lsp import (
    completion,
    definition,
    diagnostics,
    formatting,
    hover,
    quickfix,
    rename,
    sql_view,
    symbols,
    wire,
)
from strata.lsp.convert import one_based, to_location, to_range
from strata.lsp.index import Index, build_index
from strata.lsp.loader import Session, path_uri, uri_path
from strata.lsp.search import Listing, find_module_root, is_wide, list_module
from strata.semantics.resolve import display_path

DEBOUNCE_MS = 75
Key = Path | str  # a module root, or the URI of a document that is no file


class StrataProtocol(LanguageServerProtocol):
    """pygls' protocol, but no error it sends carries a traceback (wire.clean)."""

    def _send_response(self, msg_id, result=None, error=None):
        super()._send_response(msg_id, result, wire.clean(error) if error else None)


class StrataServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("strata", "0.1.0", protocol_cls=StrataProtocol)
        self.sessions: dict[Key, Session] = {}
        self.indexes: dict[Key, tuple[object, Index]] = {}
        self.published: dict[Key, set[str]] = {}
        self.pending: dict[Key, asyncio.TimerHandle] = {}
        self.listings: dict[Key, Listing] = {}  # the module's files on disk, as last listed
        self.searching: dict[Key, bool] = {}  # a listing under way (True: list again after)
        self.roots: dict[Path, Path] = {}  # a document's path -> its module root
        self.module_option: Path | None = None
        self.debounce = DEBOUNCE_MS / 1000
        self.searcher = ThreadPoolExecutor(1, thread_name_prefix="strata-search")
        self.writer: wire.ClientWriter | None = None  # stdout, once serving
        self.initialized = False
        self.shut = False

    # ------------------------------------------------------------ modules
    def key_for(self, uri: str) -> Key:
        path = uri_path(uri)
        if path is None:
            return uri
        option = self.module_option
        if option is not None and (path == option or path.is_relative_to(option)):
            return option
        root = self.roots.get(path)
        if root is None:
            root = self.roots[path] = find_module_root(path, self._workspace_root(path))
        return root

    def _workspace_root(self, path: Path) -> Path | None:
        try:
            root = self.workspace.root_path
            stop = Path(root).absolute() if root else None
        except (RuntimeError, ValueError, OSError):
            return None
        return stop if stop is not None and path.is_relative_to(stop) else None

    def session_for(self, uri: str) -> tuple[Key, Session]:
        key = self.key_for(uri)
        if key not in self.sessions:
            self.sessions[key] = Session(key if isinstance(key, Path) else None)
        return key, self.sessions[key]

    def name_of(self, uri: str) -> str:
        """A document's display path (a URI that is no file is its own name)."""
        path = uri_path(uri)
        return uri if path is None else display_path(path)

    def members(self, key: Key, closing: str | None = None) -> dict[str, str]:
        """The module's open documents: URI -> display path."""
        return {uri: self.name_of(uri) for uri in self.workspace.text_documents
                if uri != closing and self._belongs(uri, key)}

    def _belongs(self, uri: str, key: Key) -> bool:
        if isinstance(key, str) or uri_path(uri) is None:
            return uri == key
        path = uri_path(uri)
        if self.key_for(uri) == key:
            return True
        # a file of a module widened above the document's folder
        return (path.suffix == ".strata" and path.is_relative_to(key)
                and (not is_wide(key) or path.parent == key))

    def uri_of(self, key: Key) -> Callable[[str], str]:
        open_uris = {name: uri for uri, name in self.members(key).items()}
        return lambda name: open_uris.get(name) or path_uri(name)

    def search(self, key: Key) -> None:
        """List the module's files on disk in the search thread; when the listing
        is there, check again (and publish)."""
        if not isinstance(key, Path):
            return
        if key in self.searching:
            self.searching[key] = True
            return
        self.searching[key] = False
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self.searcher, list_module, key)
        future.add_done_callback(lambda done: self._listed(key, done))

    def _listed(self, key: Key, done: Future) -> None:
        """A listing is there: check when it is the first or its files changed."""
        again = self.searching.pop(key, False)
        before = self.listings.get(key)
        try:
            self.listings[key] = done.result()
        except Exception:  # noqa: BLE001  an unreadable root: its E005 says so on check
            self.listings[key] = Listing(())
        if again:
            self.search(key)
        now = self.listings[key]
        if (not self.shut and key in self.sessions and self.members(key) and (
                before is None or (now.files, now.truncated) != (before.files, before.truncated))):
            self.check(key)

    def listed(self, key: Key) -> tuple[list[Path], list[Diagnostic]] | None:
        """The module's files on disk and what the search has to say; None while
        the first listing is under way."""
        if not isinstance(key, Path):
            return [], []
        listing = self.listings.get(key)
        if listing is None:
            return None
        notes = []
        if listing.truncated:
            notes.append(Diagnostic(
                "E160", f"stopped looking for .strata files after {listing.folders} "
                f"folders and {listing.entries} entries under `{display_path(key)}`; "
                "files beyond them are not part of this module", None,
                "open the module's own folder, or set the `module` initialization option "
                "to it", severity="warning"))
        return list(listing.files), notes

    def texts(self, key: Key, closing: str | None = None) -> dict[str, str]:
        docs = self.workspace.text_documents
        return {name: docs[uri].source for uri, name in self.members(key, closing).items()}

    def check(self, key: Key, closing: str | None = None) -> None:
        """Check the module with the editor's texts (but `closing`'s, whose file on
        disk counts again) and publish for every file that has or had diagnostics.
        Before the first listing of its files, start it: its end checks."""
        session = self.sessions[key]
        found_on_disk = self.listed(key)
        if found_on_disk is None:
            self.search(key)
            return
        disk, notes = found_on_disk
        previous = session.module
        module = session.check(self.texts(key, closing), disk, notes)
        self._keep_index_of_parsed(key, session, previous, module.files)
        members = self.members(key, closing)
        open_uris = list(members)
        found = diagnostics.by_uri(module.diagnostics, open_uris, module.files,
                                   self.uri_of(key))
        before = self.published.get(key, set())
        # an open document hears every check (an empty list says "clean")
        for uri in (before | set(open_uris)) - set(found):
            self.text_document_publish_diagnostics(
                lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        for uri, diags in found.items():
            self.text_document_publish_diagnostics(
                lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diags))
        self.published[key] = set(found)

    def _keep_index_of_parsed(self, key: Key, session: Session, previous, files) -> None:
        """A file that stopped parsing is answered from the last index that knew it
        (see `index`); when no request came since the check that still parsed it, that
        index was never built, so build it now, before the module is gone."""
        broken = [f for f in files
                  if isinstance(session.trees.get(f, ("", None))[1], StrataError)]
        built = self.indexes.get(key)
        if not broken or previous is None or (built is not None and built[0] is previous):
            return
        if built is not None and all(built[1].covers(f) for f in broken):
            return
        self.indexes[key] = (previous, build_index(previous, built[1] if built else None))

    def schedule(self, key: Key) -> None:
        handle = self.pending.pop(key, None)
        if handle is not None:
            handle.cancel()
        loop = asyncio.get_running_loop()
        self.pending[key] = loop.call_later(self.debounce, self._scheduled, key)

    def _scheduled(self, key: Key) -> None:
        self.pending.pop(key, None)
        self.check(key)

    def lines(self, uri: str, index: Index | None = None, file: str | None = None) -> list[str]:
        """The document's lines as the editor has them (as last checked when it is
        not open: a request never reads a file the editor did not open)."""
        doc = self.workspace.text_documents.get(uri)
        if doc is not None:
            return doc.lines
        text = index.module.files.get(file, "") if index is not None else ""
        return text.splitlines(keepends=True)

    def line_at(self, params, index: Index | None = None, file: str | None = None) -> str:
        """The text of the line a request's position is on, as the editor has it."""
        lines = self.lines(params.text_document.uri, index, file)
        n = params.position.line
        return lines[n].rstrip("\r\n") if 0 <= n < len(lines) else ""

    def index(self, uri: str) -> tuple[Index, str]:
        """The index of the document's module as last checked (built on first use
        after each check), and the document's display path. Never waits for the
        search of the module's files: before it ends, the buffers alone count."""
        key, session = self.session_for(uri)
        if session.module is None or key in self.pending:
            handle = self.pending.pop(key, None)
            if handle is not None:
                handle.cancel()
            if self.listed(key) is not None:
                self.check(key)
            if session.module is None or handle is not None and self.listed(key) is None:
                session.check(self.texts(key))  # the buffers alone, published later
        module = session.module
        file = self.name_of(uri)
        built = self.indexes.get(key)
        if built is None or built[0] is not module:
            fresh = build_index(module, built[1] if built is not None else None)
            # a file that does not parse now (mid-edit) is answered from the last
            # index that knew it, so completion works while a step is half-typed
            if fresh.covers(file) or built is None or not built[1].covers(file):
                built = (module, fresh)
                self.indexes[key] = built
        return built[1], file

    def report_server_error(self, error: Exception, source) -> None:
        """A notification that failed has no one to answer: said in the client's
        log, in one line, without a traceback; nothing once the client is gone."""
        if self.writer is not None and self.writer.closed:
            return
        try:
            self.window_log_message(lsp.LogMessageParams(
                type=lsp.MessageType.Warning,
                message=f"strata lsp: {wire.clean(lsp.ResponseError(0, str(error))).message}"))
        except Exception:  # noqa: BLE001, S110  the client is gone: nothing to tell
            pass

    # ------------------------------------------------------------ the wire
    def serve_stdio(self) -> None:
        """Read stdin in a thread of its own, cut it into messages, dispatch each on
        the event loop (pygls' handlers run there) until `exit` or end of input."""
        self.writer = wire.ClientWriter(sys.stdout.buffer)
        self.protocol.set_writer(self.writer)
        asyncio.run(self._serve(sys.stdin.buffer))

    async def _serve(self, stdin) -> None:
        loop = asyncio.get_running_loop()
        chunks: asyncio.Queue[bytes] = asyncio.Queue()

        def read() -> None:
            # os.read, not the buffered stdin: a daemon thread blocked holding the
            # buffer's lock aborts the interpreter's exit
            while True:
                try:
                    chunk = os.read(stdin.fileno(), 65536)
                except (OSError, ValueError):
                    chunk = b""
                loop.call_soon_threadsafe(chunks.put_nowait, chunk)
                if not chunk:
                    return

        threading.Thread(target=read, name="strata-stdin", daemon=True).start()
        framer = wire.Framer()
        while True:
            chunk = await chunks.get()
            if not chunk:
                return
            for item in framer.feed(chunk):
                if isinstance(item, wire.Junk):
                    self.refuse(None, wire.PARSE_ERROR, f"strata lsp: {item.why}")
                else:
                    self.dispatch(item.data)
            await asyncio.sleep(0)  # let timers and finished searches run between reads

    def refuse(self, ident, code: int, message: str) -> None:
        self.protocol._send_response(ident, error=lsp.ResponseError(code, message))

    def dispatch(self, data: bytes) -> None:
        """One message: refused with the JSON-RPC error that fits, or handed to
        pygls (whose handlers answer it)."""
        message = wire.parse(data)
        if isinstance(message, lsp.ResponseError):
            self.refuse(None, message.code, f"strata lsp: {message.message}")
            return
        method = message.get("method")
        is_request = "id" in message and method is not None
        if message.get("jsonrpc") != "2.0" or (method is not None
                                               and not isinstance(method, str)) or (
                "id" in message and not wire.valid_id(message)):
            if is_request or "id" in message:
                self.refuse(message["id"] if wire.valid_id(message) else None,
                            wire.INVALID_REQUEST, "strata lsp: not a JSON-RPC 2.0 request "
                            "(`jsonrpc` must be \"2.0\", `id` a number or string, "
                            "`method` a string)")
            return
        if method is None:  # a response to a request of ours
            self._hand_over(message, None)
            return
        if not self.initialized and method not in ("initialize", "exit"):
            if is_request:
                self.refuse(message["id"], wire.SERVER_NOT_INITIALIZED,
                            f"strata lsp: `{method}` before `initialize`")
            return
        if self.shut and method != "exit":
            if is_request:
                self.refuse(message["id"], wire.INVALID_REQUEST,
                            f"strata lsp: `{method}` after `shutdown`")
            return
        if method == "initialize" and is_request and self.initialized:
            self.refuse(message["id"], wire.INVALID_REQUEST,
                        "strata lsp: `initialize` was sent already")
            return
        self._hand_over(message, message["id"] if is_request else None, method)

    def _hand_over(self, message: dict, ident, method: str | None = None) -> None:
        try:
            structured = self.protocol.structure_message(message)
        except Exception as err:  # noqa: BLE001  params that do not fit the method
            if ident is not None:
                reason = err.__cause__ or err
                self.refuse(ident, wire.INVALID_PARAMS, f"strata lsp: invalid params for "
                            f"`{method}`: {_reason(reason)}")
            return
        if method == "initialize":
            self.initialized = True
        if method == "shutdown":
            self.shut = True
        try:
            self.protocol.handle_message(structured)
        except Exception as err:  # noqa: BLE001  answered, never a traceback
            if ident is not None:
                self.refuse(ident, wire.INTERNAL_ERROR,
                            f"strata lsp could not answer `{method}`: {_reason(err)}")


def _reason(err: BaseException) -> str:
    """An exception as one line (cattrs groups its reasons)."""
    inner = getattr(err, "exceptions", None)
    if inner:
        return "; ".join(_reason(e) for e in inner[:3])
    text = str(err).strip().splitlines()
    return (text[0] if text else type(err).__name__)[:300]


server = StrataServer()


@server.feature(lsp.INITIALIZE)
def initialize(ls: StrataServer, params: lsp.InitializeParams) -> None:
    options = params.initialization_options or {}
    if not isinstance(options, dict):
        raise JsonRpcInvalidParams(message="strata lsp: `initializationOptions` is an "
                                           "object: {\"module\": PATH, \"debounce_ms\": N}")
    module = options.get("module")
    if module:
        if not isinstance(module, str) or "\0" in module:
            raise JsonRpcInvalidParams(message="strata lsp: the `module` option is the path "
                                               "of a module (a string)")
        ls.module_option = Path(module).absolute()
    if "debounce_ms" in options:
        wait = options["debounce_ms"]
        if isinstance(wait, bool) or not isinstance(wait, int | float) or not (
                0 <= wait <= 60_000):
            raise JsonRpcInvalidParams(message="strata lsp: the `debounce_ms` option is a "
                                               "number of milliseconds, 0 to 60000")
        ls.debounce = wait / 1000


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: StrataServer, params: lsp.DidOpenTextDocumentParams) -> None:
    path = uri_path(params.text_document.uri)
    if path is not None:
        ls.roots.pop(path, None)  # found again: a folder above may hold .strata files now
    key, _ = ls.session_for(params.text_document.uri)
    ls.check(key)
    if key in ls.listings:
        ls.search(key)  # a file may have appeared since the last listing


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: StrataServer, params: lsp.DidChangeTextDocumentParams) -> None:
    ls.schedule(ls.session_for(params.text_document.uri)[0])


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: StrataServer, params: lsp.DidSaveTextDocumentParams) -> None:
    key, _ = ls.session_for(params.text_document.uri)
    ls.check(key)
    ls.search(key)


@server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: StrataServer, params: lsp.DidCloseTextDocumentParams) -> None:
    """The file on disk counts again in place of the closed buffer."""
    key, _ = ls.session_for(params.text_document.uri)
    ls.check(key, closing=params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_HOVER)
def on_hover(ls: StrataServer, params: lsp.HoverParams) -> lsp.Hover | None:
    index, file = ls.index(params.text_document.uri)
    where = one_based(params.position, ls.line_at(params, index, file))
    text = hover.hover_text(index, file, *where)
    if text is None:
        return None
    return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text))


@server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
def on_definition(ls: StrataServer, params: lsp.DefinitionParams) -> lsp.Location | None:
    index, file = ls.index(params.text_document.uri)
    where = one_based(params.position, ls.line_at(params, index, file))
    span = definition.definition(index, file, *where)
    key = ls.key_for(params.text_document.uri)
    return to_location(span, index.module.files, ls.uri_of(key)) if span is not None else None


@server.feature(lsp.TEXT_DOCUMENT_REFERENCES)
def on_references(ls: StrataServer, params: lsp.ReferenceParams) -> list[lsp.Location]:
    index, file = ls.index(params.text_document.uri)
    where = one_based(params.position, ls.line_at(params, index, file))
    spans = definition.references(index, file, *where, params.context.include_declaration)
    uri_of = ls.uri_of(ls.key_for(params.text_document.uri))
    return [to_location(s, index.module.files, uri_of) for s in spans]


@server.feature(lsp.TEXT_DOCUMENT_COMPLETION,
                lsp.CompletionOptions(trigger_characters=[".", " ", "|"]))
def on_completion(ls: StrataServer, params: lsp.CompletionParams) -> lsp.CompletionList:
    index, file = ls.index(params.text_document.uri)
    # the buffer as it is now: the line being typed may not have been checked yet
    lines = ls.lines(params.text_document.uri, index, file)
    n = params.position.line
    if n < len(lines):
        index.set_line(file, n + 1, lines[n].rstrip("\r\n"))
    where = one_based(params.position, ls.line_at(params, index, file))
    items = completion.complete(index, file, *where)
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
                title="Show SQL", command=sql_view.COMMAND,
                arguments=[params.text_document.uri, info.decl.name_span.line - 1])))
    return lenses


@server.feature(lsp.WORKSPACE_SYMBOL)
def on_workspace_symbols(ls: StrataServer,
                         params: lsp.WorkspaceSymbolParams) -> list[lsp.SymbolInformation]:
    """The sources, models and tests of every module with a document open."""
    found = []
    for key in list(ls.sessions):
        members = ls.members(key)
        if members:
            index, _ = ls.index(next(iter(members)))
            found.extend(symbols.workspace_symbols(index, params.query, ls.uri_of(key)))
    return found


@server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION,
                lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix]))
def on_code_action(ls: StrataServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    """Quick fixes for the diagnostics the editor sends that suggest a name."""
    uri = params.text_document.uri
    ours = [d for d in params.context.diagnostics if d.source in (None, "strata")]
    return quickfix.code_actions(uri, ours, ls.lines(uri))


def _rename_target(ls: StrataServer, params) -> tuple[Index, rename.Target]:
    index, file = ls.index(params.text_document.uri)
    where = one_based(params.position, ls.line_at(params, index, file))
    try:
        return index, rename.target_at(index, file, *where)
    except rename.RenameRefused as why:
        raise JsonRpcInvalidRequest(message=f"strata lsp: {why}") from None


@server.feature(lsp.TEXT_DOCUMENT_PREPARE_RENAME)
def on_prepare_rename(ls: StrataServer, params: lsp.PrepareRenameParams):
    """The name the editor offers to rename, or why not (before the user types)."""
    index, target = _rename_target(ls, params)
    return lsp.PrepareRenamePlaceholder(
        range=to_range(target.span, index.module.files.get(target.span.file)),
        placeholder=target.definition.name)


@server.feature(lsp.TEXT_DOCUMENT_RENAME, lsp.RenameOptions(prepare_provider=True))
def on_rename(ls: StrataServer, params: lsp.RenameParams) -> lsp.WorkspaceEdit:
    """A model or a model's column renamed in every file of the module."""
    index, target = _rename_target(ls, params)
    try:
        spans = rename.rename_spans(index, target, params.new_name)
    except rename.RenameRefused as why:
        raise JsonRpcInvalidRequest(message=f"strata lsp: {why}") from None
    uri_of = ls.uri_of(ls.key_for(params.text_document.uri))
    changes: dict[str, list[lsp.TextEdit]] = {}
    for span in spans:
        location = to_location(span, index.module.files, uri_of)
        changes.setdefault(location.uri, []).append(
            lsp.TextEdit(range=location.range, new_text=params.new_name))
    return lsp.WorkspaceEdit(changes=changes)


@server.feature(lsp.TEXT_DOCUMENT_FORMATTING)
def on_formatting(ls: StrataServer, params: lsp.DocumentFormattingParams) -> list[lsp.TextEdit]:
    """The document in `strata fmt`'s layout: one edit over the whole text, or none
    when it is laid out already or does not parse (its diagnostics say why)."""
    doc = ls.workspace.text_documents.get(params.text_document.uri)
    if doc is None:
        return []
    return formatting.edits(doc.source, ls.name_of(params.text_document.uri))


RENDER_USAGE = ("strata.renderSql takes the document's URI (a string), a 0-based line "
                "(a whole number) and optionally a dialect name (a string)")


@server.command(sql_view.COMMAND)
def render_sql(ls: StrataServer, *args) -> dict:
    """Arguments: the document URI, a 0-based line inside a model, and optionally a
    dialect name (default: the default dialect). Other arguments: invalid params."""
    if not 2 <= len(args) <= 3:
        raise JsonRpcInvalidParams(message=f"{RENDER_USAGE}; got {len(args)} arguments")
    uri, line, dialect = args[0], args[1], args[2] if len(args) > 2 else None
    if not isinstance(uri, str) or not uri:
        raise JsonRpcInvalidParams(message=f"{RENDER_USAGE}; the URI is not a string")
    if isinstance(line, bool) or not isinstance(line, int) or not 0 <= line < 2**31:
        raise JsonRpcInvalidParams(message=f"{RENDER_USAGE}; the line is not a whole "
                                           "number from 0")
    if dialect is not None and not isinstance(dialect, str):
        raise JsonRpcInvalidParams(message=f"{RENDER_USAGE}; the dialect is not a string")
    index, file = ls.index(uri)
    model = sql_view.model_at(index.module, file, line + 1)
    return sql_view.render_sql(index.module, model, dialect).to_json()


def main() -> None:
    try:
        server.serve_stdio()
    finally:
        server.searcher.shutdown(wait=False, cancel_futures=True)
