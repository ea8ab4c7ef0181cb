"""The server's side of the wire: bytes from stdin cut into messages (`Framer`), each
message checked and handed to pygls, whatever the bytes (issue 39, item 11).

pygls' own reader trusted every header: `Content-Length: 99999999999999` made it
allocate that much and die, and a missing or bad Content-Length left it reading
bodies as headers, deaf to everything after. Here:

- a Content-Length is read wherever it starts (other header lines may come first),
  case-insensitively; a header block that is not one is skipped to the next
  `Content-Length:`; a length over MAX_BODY is refused before anything is read;
- a valid JSON body never holds the raw bytes `Content-Length: N` and a line end
  (outside a string `C` is no JSON, inside one a raw line end is not allowed), so
  finding them inside a body means its Content-Length was wrong: the body ends
  there and the next message starts there. The server resynchronises on the next
  valid header, at once, without waiting for bytes that will never come;
- what cannot be a message is answered with a JSON-RPC parse error (id null), a
  request whose params do not fit its method with "invalid params" under its id,
  a request before `initialize` or after `shutdown` with the error the LSP names.

No error message carries Python's traceback (pygls puts one in an internal error's
data): `clean` keeps the first line of the message and drops the data.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from lsprotocol.types import ResponseError

MAX_BODY = 64 * 2**20  # bytes: a document of a few million lines, and no more
MAX_HEADER = 8 * 2**10  # bytes of header lines after the Content-Length

_LENGTH = re.compile(rb"content-length[ \t]*:[ \t]*([0-9]+)[ \t]*\r?\n", re.IGNORECASE)
_HEADER_LINE = re.compile(rb"[A-Za-z][A-Za-z0-9-]*[ \t]*:[^\r\n]*\r?\n")
_HEADER_LINES = re.compile(rb"[ \t\r\n]*(?:[A-Za-z][A-Za-z0-9-]*[ \t]*:[^\r\n]*\r?\n)*")
_TAIL = 64  # bytes kept from skipped junk: a header may straddle two reads

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVER_NOT_INITIALIZED = -32002


@dataclass(frozen=True)
class Body:
    data: bytes


@dataclass(frozen=True)
class Junk:
    """Bytes that are no message; `why` says what was wrong."""

    why: str


class Framer:
    """Bytes in, `Body` and `Junk` out; holds at most one message's bytes (and a
    few more) whatever it is fed."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.scanned = 0  # of the pending body, how much is known to hold no header
        self.dropped = False  # junk skipped that has not been reported yet
        self.quiet = False  # the next junk belongs to a message already reported

    def feed(self, data: bytes) -> list[Body | Junk]:
        self.buffer += data
        out: list[Body | Junk] = []
        while (item := self._next()) is not None:
            out.append(item)
        return out

    def _junk(self, why: str) -> Junk | None:
        quiet, self.quiet, self.dropped = self.quiet, False, False
        return None if quiet else Junk(why)

    def _next(self) -> Body | Junk | None:
        while True:
            found = _LENGTH.search(self.buffer)
            if found is None:
                self._drop_all_but_tail()
                return None
            before = bytes(self.buffer[:found.start()])
            if self.dropped or _HEADER_LINES.fullmatch(before) is None:
                del self.buffer[:found.start()]
                self.scanned = 0
                junk = self._junk("bytes that are no message were skipped")
                if junk is not None:
                    return junk
                continue
            start = self._end_of_headers(found.end())
            if start is None:
                return None  # the header block goes on in bytes not read yet
            if start < 0:
                del self.buffer[:found.end()]
                self.quiet, self.dropped, self.scanned = True, False, 0
                return Junk("a header block that is not one was skipped")
            digits = found.group(1)
            length = int(digits) if len(digits) <= 12 else MAX_BODY + 1
            if length > MAX_BODY:
                del self.buffer[:start]
                self.quiet, self.dropped, self.scanned = True, False, 0
                shown = digits[:20].decode() + ("..." if len(digits) > 20 else "")
                return Junk(f"a message of Content-Length {shown} is over the limit of "
                            f"{MAX_BODY} bytes; skipped to the next message")
            body = self._body(start, length)
            if body is None:
                return None
            return body

    def _end_of_headers(self, at: int) -> int | None:
        """Where the body starts, after the header lines that follow `at`; None when
        the block is not complete yet, -1 when it is no header block."""
        while True:
            if self.buffer.startswith(b"\r\n", at) or self.buffer.startswith(b"\n", at):
                return at + (2 if self.buffer.startswith(b"\r\n", at) else 1)
            line = _HEADER_LINE.match(self.buffer, at)
            if line is not None and _LENGTH.search(self.buffer, at, line.end()):
                return -1  # a second Content-Length: the next message's
            if line is None:
                end = self.buffer.find(b"\n", at)
                if end < 0 and len(self.buffer) - at <= MAX_HEADER:
                    return None
                return -1
            at = line.end()

    def _body(self, start: int, length: int) -> Body | Junk | None:
        """The body at `start`, when it has come; cut short where a header starts
        inside it, which shows that its Content-Length was wrong."""
        end = start + length
        found = _LENGTH.search(self.buffer, max(start, start + self.scanned - _TAIL))
        if found is not None and found.start() < end:
            cut = bytes(self.buffer[start:found.start()])
            del self.buffer[:found.start()]
            self.scanned = 0
            return Body(cut)  # its JSON decides: the message whole, or a parse error
        if len(self.buffer) < end:
            self.scanned = len(self.buffer) - start
            return None
        data = bytes(self.buffer[start:end])
        del self.buffer[:end]
        self.scanned = 0
        return Body(data)

    def _drop_all_but_tail(self) -> None:
        if len(self.buffer) <= _TAIL:
            return
        cut = len(self.buffer) - _TAIL
        if self.buffer[:cut].strip():
            self.dropped = True
        del self.buffer[:cut]


def parse(data: bytes) -> dict | ResponseError:
    """A body as a JSON object, or the parse error to answer."""
    try:
        message = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError) as err:
        return ResponseError(PARSE_ERROR, f"the message is not JSON: {_first_line(err)}")
    if not isinstance(message, dict):
        return ResponseError(INVALID_REQUEST, "a message is a JSON object (batches are not "
                                              "part of the Language Server Protocol)")
    return message


def valid_id(message: dict) -> bool:
    ident = message.get("id")
    return isinstance(ident, str) or (isinstance(ident, int) and not isinstance(ident, bool))


def clean(error: ResponseError) -> ResponseError:
    """An error as the client sees it: its first line, no data (pygls puts the
    traceback of an internal error there)."""
    message = _first_line(error.message) or "error"
    if error.code == INTERNAL_ERROR and not message.startswith("strata lsp"):
        message = f"strata lsp could not answer: {message}"
    return ResponseError(code=error.code, message=message[:500])


def _first_line(value) -> str:
    text = str(value).strip()
    return text.splitlines()[0] if text else ""


class ClientWriter:
    """pygls' writer to the client, except that once the client is gone (the stream
    closed by `exit`, or a broken pipe) every later message is dropped. pygls reports
    a failed send as a server error, and a server error is a message to the client:
    each failure sent another, an endless chain of tracebacks on stderr that, with
    nobody reading stderr, blocked the server before it could exit."""

    def __init__(self, stream) -> None:
        self._stream = stream
        self.closed = False

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            try:
                self._stream.close()
            except (OSError, ValueError):  # a broken pipe's last flush
                pass

    def write(self, data: bytes) -> None:
        if self.closed:
            return
        try:
            self._stream.write(data)
            self._stream.flush()
        except (OSError, ValueError):  # the client closed its end, or we did
            self.closed = True
