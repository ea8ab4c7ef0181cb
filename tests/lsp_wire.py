"""A language client that speaks raw JSON-RPC to a real `strata lsp` process over
its stdin/stdout, for the tests that send what no well-behaved client sends (bad
framing, bad params, garbage): messages are framed here (or not, on purpose), and
every message the server writes is read by a thread and kept, in order.

The server's CPU time (user + system, all its threads) is read from /proc: a test
bounds how much work an answer cost by it, never by the wall clock. Wall-clock
waits here only guard against a hang."""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import threading
from pathlib import Path

STRATA = str(Path(sys.executable).with_name("strata"))
HANG = 60  # seconds: a wait this long means the server will not answer
HEADER = re.compile(rb"Content-Length: (\d+)\r\n(?:[^\r\n]*\r\n)*?\r\n")


def frame(message: dict | str | bytes) -> bytes:
    """One message with its header, as the protocol frames it."""
    if isinstance(message, dict):
        message = json.dumps(message)
    body = message.encode() if isinstance(message, str) else message
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class RawServer:
    def __init__(self, cwd: Path, env: dict | None = None, args: tuple[str, ...] = ()):
        self.stderr = open(cwd / f"lsp-{os.getpid()}-{id(self)}.err", "wb")  # noqa: SIM115
        self.proc = subprocess.Popen([STRATA, "lsp", *args], cwd=cwd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr,
                                     env={**os.environ, **(env or {})})
        self.inbox: queue.Queue[dict | None] = queue.Queue()
        self.seen: list[dict] = []  # every message read, in order
        self.texts: list[str] = []  # the raw text of each
        self.marks: dict[str, int] = {}  # uri -> where in `seen` its diagnostics start
        self.next_id = 1
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    # ------------------------------------------------------------ the wire
    def _read(self) -> None:
        out = self.proc.stdout
        buffer = b""
        while True:
            chunk = out.read1(65536)
            if not chunk:
                self.inbox.put(None)
                return
            buffer += chunk
            while (m := HEADER.match(buffer)) and len(buffer) >= m.end() + int(m.group(1)):
                body = buffer[m.end():m.end() + int(m.group(1))]
                buffer = buffer[m.end() + int(m.group(1)):]
                text = body.decode("utf-8")
                self.texts.append(text)
                self.inbox.put(json.loads(text))

    def write(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict) -> None:
        self.write(frame(message))

    def notify(self, method: str, params) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params=None, *, send: bool = True) -> int:
        """Send a request; its id."""
        ident = self.next_id
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": ident, "method": method}
        if params is not None:
            message["params"] = params
        if send:
            self.send(message)
        return ident

    def wait(self, until, what: str = "a message") -> dict:
        """The first message (from now on) meeting `until`; a dead server or a hang
        fails the test."""
        while True:
            try:
                message = self.inbox.get(timeout=HANG)
            except queue.Empty:
                raise AssertionError(f"no answer in {HANG} s waiting for {what}") from None
            if message is None:
                raise AssertionError(f"the server exited ({self.proc.wait()}) waiting for "
                                     f"{what}: {self.stderr_text()[-2000:]}")
            self.seen.append(message)
            if until(message):
                return message

    def answer(self, ident: int) -> dict:
        """The answer to request `ident` (read already, or still to come)."""
        def answers(m: dict) -> bool:
            return m.get("id") == ident and "method" not in m
        for message in self.seen:
            if answers(message):
                return message
        return self.wait(answers, f"the answer to request {ident}")

    def call(self, method: str, params=None) -> dict:
        return self.answer(self.request(method, params))

    def initialize(self, options: dict | None = None, root: Path | None = None) -> dict:
        params = {"processId": None, "capabilities": {},
                  "rootUri": root.as_uri() if root else None}
        if options is not None:
            params["initializationOptions"] = options
        answer = self.call("initialize", params)
        self.notify("initialized", {})
        return answer

    def _mark(self, uri: str) -> None:
        """From here on, `diagnostics(uri)` reads what the server publishes."""
        while True:
            try:
                message = self.inbox.get_nowait()
            except queue.Empty:
                break
            if message is None:
                self.inbox.put(None)
                break
            self.seen.append(message)
        self.marks[uri] = len(self.seen)

    def open(self, uri: str, text: str) -> None:
        self._mark(uri)
        self.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "strata", "version": 1, "text": text}})

    def change(self, uri: str, text: str, version: int) -> None:
        self._mark(uri)
        self.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                               "contentChanges": [{"text": text}]})

    def diagnostics(self, uri: str) -> list[dict]:
        """The first diagnostics published for `uri` since it was opened or changed
        (messages read meanwhile, waiting for an answer, count)."""
        def published(m: dict) -> bool:
            return (m.get("method") == "textDocument/publishDiagnostics"
                    and m["params"]["uri"] == uri)
        start = self.marks.get(uri, 0)
        for n in range(start, len(self.seen)):
            if published(self.seen[n]):
                self.marks[uri] = n + 1
                return self.seen[n]["params"]["diagnostics"]
        found = self.wait(published, f"diagnostics of {uri}")
        self.marks[uri] = len(self.seen)
        return found["params"]["diagnostics"]

    # ------------------------------------------------------------ the process
    def cpu_seconds(self) -> float:
        """User + system CPU time the server has used so far (all its threads)."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stderr_text(self) -> str:
        self.stderr.flush()
        return Path(self.stderr.name).read_text(errors="replace")

    def close(self) -> None:
        try:
            if self.alive():
                ident = self.request("shutdown")
                self.answer(ident)
                self.notify("exit", None)
                self.proc.wait(timeout=HANG)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self.proc.stdin.close()
            self.proc.stdout.close()
            self.stderr.close()
