"""Keystroke-to-diagnostics time of `strata lsp` on a 1,000-model module (issue 21).

Writes bench/compile/generate.py's 1,000 models as a directory module (sources plus
one file per group of eleven models, ~91 files), starts `strata lsp` as an editor
would (a subprocess on stdio, pygls' LanguageClient), opens one file in the middle
of the chain and sends single-keystroke changes, timing each from `didChange` sent
to `publishDiagnostics` received for that file. Three kinds of keystroke:

  body      a digit typed into a filter (`revenue > 100` -> `> 1000`): the model's
            declaration changes, its output does not
  output    a derived column renamed by one letter (`score` -> `scores`): the
            model and every model reading it are resolved again
  error     a column name broken by one letter (an E011 appears, then goes)

After each change has been checked, a hover and a completion are asked for in the
edited file (`hover after an edit`, `completion after an edit`): the first request
after a check is the one that brings the navigation index up to date (issue 38:
incremental, so under 100 ms at 1,000 models).

The server's debounce is set to 0 here (the figure is the check itself); the
editor default adds 75 ms of waiting for the next keystroke.

    .venv/bin/python bench/lsp/run.py                 # 1,000 models, 21 changes each
    .venv/bin/python bench/lsp/run.py --models 200 --repeat 5
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import statistics
import sys
import time
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "compile"))
from generate import SOURCES, module_text

STRATA = str(Path(sys.executable).with_name("strata"))


def write_module(models: int, out: Path) -> Path:
    """The module as a directory: sources.strata and group_NNN.strata files."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    (out / "sources.strata").write_text(SOURCES)
    text = module_text(models)[len(SOURCES):]
    blocks = ["model " + b for b in re.split(r"^model ", text, flags=re.MULTILINE) if b.strip()]
    for n in range(0, len(blocks), 11):
        (out / f"group_{n // 11:03}.strata").write_text("".join(blocks[n:n + 11]))
    return out


class Timer:
    def __init__(self) -> None:
        self.client = LanguageClient("bench", "1")
        self.arrived: dict[str, asyncio.Future] = {}
        self.version = 1

        @self.client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def _published(params: lsp.PublishDiagnosticsParams) -> None:
            waiting = self.arrived.pop(params.uri, None)
            if waiting is not None and not waiting.done():
                waiting.set_result(list(params.diagnostics))

    async def start(self, cwd: Path) -> None:
        await self.client.start_io(STRATA, "lsp", cwd=str(cwd))
        await self.client.initialize_async(lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(), root_uri=cwd.as_uri(),
            initialization_options={"debounce_ms": 0}))
        self.client.initialized(lsp.InitializedParams())

    async def timed(self, uri: str, send) -> tuple[float, list]:
        waiting = asyncio.get_running_loop().create_future()
        self.arrived[uri] = waiting
        start = time.perf_counter()
        send()
        diags = await asyncio.wait_for(waiting, 120)
        return time.perf_counter() - start, diags

    async def open(self, uri: str, text: str) -> tuple[float, list]:
        return await self.timed(uri, lambda: self.client.text_document_did_open(
            lsp.DidOpenTextDocumentParams(text_document=lsp.TextDocumentItem(
                uri=uri, language_id="strata", version=1, text=text))))

    async def change(self, uri: str, text: str) -> tuple[float, list]:
        self.version += 1
        return await self.timed(uri, lambda: self.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri,
                                                                  version=self.version),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)])))

    async def request(self, kind: str, uri: str, line: int, character: int) -> float:
        where = {"text_document": lsp.TextDocumentIdentifier(uri=uri),
                 "position": lsp.Position(line=line, character=character)}
        start = time.perf_counter()
        if kind == "hover":
            answer = await self.client.text_document_hover_async(lsp.HoverParams(**where))
        else:
            answer = await self.client.text_document_completion_async(
                lsp.CompletionParams(**where))
        assert answer is not None, kind
        return time.perf_counter() - start

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()


KEYSTROKES = {  # kind -> (old, new), applied to the first place they occur
    "body": ("filter revenue > 100 ", "filter revenue > 1000 "),
    "output": ("derive score = ", "derive scores = "),
    "error": ("derive score = revenue", "derive score = revenu"),
}


async def measure(models: int, repeat: int, work: Path) -> dict:
    root = write_module(models, work / "module")
    files = sorted(root.glob("group_*.strata"))
    target = files[len(files) // 2]
    text = target.read_text()
    uri = target.as_uri()
    timer = Timer()
    await timer.start(work)
    results: dict[str, list[float]] = {}
    try:
        seconds, diags = await timer.open(uri, text)
        assert diags == [], diags
        results["open (whole module, cold)"] = [seconds]
        line, character = _position(text, "filter revenue > 100 ", "revenue")
        results["first hover (whole index, cold)"] = [
            await timer.request("hover", uri, line, character)]
        for kind, (old, new) in KEYSTROKES.items():
            assert old in text, kind
            changed = text.replace(old, new, 1)
            times = []
            for _ in range(repeat):
                seconds, diags = await timer.change(uri, changed)
                assert (kind == "error") == bool(diags), (kind, diags)
                times.append(seconds)
                results.setdefault("hover after an edit", []).append(
                    await timer.request("hover", uri, line, character))
                seconds, diags = await timer.change(uri, text)
                assert diags == [], diags
                times.append(seconds)
                results.setdefault("completion after an edit", []).append(
                    await timer.request("completion", uri, line, character))
            results[kind] = times
    finally:
        await timer.stop()
    return results


def _position(text: str, line_with: str, word: str) -> tuple[int, int]:
    """0-based line and character of `word` on the first line holding `line_with`."""
    for n, line in enumerate(text.split("\n")):
        if line_with in line:
            return n, line.index(word, line.index(line_with)) + 1
    raise AssertionError(line_with)


sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from strata_bytecode import compile_strata


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--work", type=Path, default=HERE / "work")
    args = parser.parse_args()
    compile_strata(sys.executable)  # as an installed package has it (strata_bytecode.py)
    results = asyncio.run(measure(args.models, args.repeat, args.work))
    print(f"strata lsp, {args.models} models, keystroke -> diagnostics "
          f"(ms; median, min, max of {2 * args.repeat} changes)")
    for kind, times in results.items():
        ms = [t * 1000 for t in times]
        print(f"  {kind:28} {statistics.median(ms):8.1f} {min(ms):8.1f} {max(ms):8.1f}")


if __name__ == "__main__":
    main()
