"""Parsed files kept on disk, keyed by their content, so an unchanged file is not
parsed again (the idea of Python's .pyc files and dbt's partial parsing).

Parsing is about a third of compiling a 1,000-model module; loading the same
syntax tree back takes a tenth of that. An entry's key hashes the file's text
and displayed path (spans name the path) with the code that builds syntax trees
(grammar, parser, AST and span types) and the Python version, so any change to
either misses the cache. Only files that parse cleanly are kept; anything odd
about an entry (unreadable, corrupt, not a syntax tree) means parsing again.

The CLI uses `strata.cachedirs.default_dir()`: $STRATA_CACHE_DIR, else $XDG_CACHE_HOME/strata,
else ~/.cache/strata; STRATA_NO_CACHE=1 turns it off, and so does a folder another
user can write to (entries are unpickled). The parser's LALR tables are kept in its
`grammar` folder either way (strata/syntax/parser.py). The library parses afresh
unless given a directory. At most MAX_ENTRIES files are kept, the least recently
used go first.
"""

from __future__ import annotations

import gc
import hashlib
import os
import pickle
import sys
import tempfile
import time
from functools import lru_cache
from pathlib import Path

from strata.diagnostics import StrataError
from strata.syntax import ast

MAX_ENTRIES = 512
_FORMAT = b"strata-parse-cache-1"
_SOURCES = ("syntax/grammar.lark", "syntax/parser.py", "syntax/ast.py", "diagnostics.py")


@lru_cache(maxsize=1)
def _code_fingerprint() -> bytes:
    digest = hashlib.sha256(_FORMAT + repr(sys.version_info[:2]).encode())
    package = Path(__file__).resolve().parent.parent
    for name in _SOURCES:
        digest.update((package / name).read_bytes())
    return digest.digest()


def parse_cached(text: str, display: str, directory: Path | None) -> ast.ModuleFile:
    """`parse_text(text, display)`, through the cache in `directory` (None: no cache)."""
    if directory is None:
        return _parse(text, display)
    entry = directory / f"{_key(text, display)}.pickle"
    found = _load(entry)
    if found is not None:
        return found
    parsed = _parse(text, display)  # a StrataError goes up, and nothing is kept
    _store(directory, entry, parsed)
    return parsed


# A module of many files not in the cache (a first run, CI) is parsed by forked
# processes, PARALLEL_MIN files or more: Lark's LALR parser is pure Python, ~1 ms a
# file, and each file is independent. Only where fork is cheap and safe: a POSIX
# system, more than one CPU, and no other thread in this process.
PARALLEL_MIN = 48


def parse_many(items: list[tuple[str, str]],
               directory: Path | None) -> list[ast.ModuleFile | StrataError]:
    """`parse_cached` of every (text, display), in order; a file that does not parse
    gives its StrataError in its place."""
    out: list[ast.ModuleFile | StrataError | None] = [None] * len(items)
    entries: list[Path | None] = [None] * len(items)
    misses: list[int] = []
    for i, (text, display) in enumerate(items):
        if directory is not None:
            entries[i] = directory / f"{_key(text, display)}.pickle"
            out[i] = _load(entries[i])
        if out[i] is None:
            misses.append(i)
    parsed = _parse_all([items[i] for i in misses])
    for i, result in zip(misses, parsed, strict=True):
        out[i] = StrataError(result) if isinstance(result, list) else result
        if directory is not None and isinstance(result, ast.ModuleFile):
            _store(directory, entries[i], result)
    return out  # type: ignore[return-value]


def _parse_all(items: list[tuple[str, str]]) -> list[ast.ModuleFile | list]:
    import threading

    workers = min(os.cpu_count() or 1, 4)
    if (len(items) < PARALLEL_MIN or workers < 2 or threading.active_count() > 1
            or "fork" not in _start_methods()):
        return [_parse_or_error(item) for item in items]
    import multiprocessing

    from strata.syntax.parser import _lark

    _lark()  # built once here; the forked workers inherit it
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            return pool.map(_parse_or_error, items,
                            chunksize=max(1, len(items) // (workers * 4)))
    except OSError:  # no fork to be had (process limits): parse here, as for few files
        return [_parse_or_error(item) for item in items]


def _start_methods() -> list[str]:
    import multiprocessing

    return multiprocessing.get_all_start_methods()


def _parse_or_error(item: tuple[str, str]) -> ast.ModuleFile | list:
    """The tree, or the diagnostics (a list pickles back from a worker; StrataError
    does not)."""
    try:
        return _parse(*item)
    except StrataError as err:
        return list(err.diagnostics)


def _key(text: str, display: str) -> str:
    return hashlib.sha256(_code_fingerprint() + display.encode("utf-8", "surrogatepass")
                          + b"\0" + text.encode("utf-8", "surrogatepass")).hexdigest()


def _parse(text: str, display: str) -> ast.ModuleFile:
    from strata.syntax.parser import parse_text  # Lark is imported on a miss only

    return parse_text(text, display)


def _load(entry: Path) -> ast.ModuleFile | None:
    try:
        data = entry.read_bytes()
    except OSError:
        return None
    enabled = gc.isenabled()
    gc.disable()  # a syntax tree has no cycles: collecting while it loads is wasted work
    try:
        value = pickle.loads(data)
    except Exception:  # noqa: BLE001  a corrupt or stale entry, whatever pickle raises: parse again
        return None
    finally:
        if enabled:
            gc.enable()
    if not isinstance(value, ast.ModuleFile):
        return None
    try:  # recently used: kept when the cache is pruned (touched at most hourly)
        if time.time() - entry.stat().st_mtime > 3600:
            os.utime(entry)
    except OSError:
        pass
    return value


def _store(directory: Path, entry: Path, parsed: ast.ModuleFile) -> None:
    """Write atomically (a concurrent reader sees a whole entry or none); a cache that
    cannot be written (read-only home, full disk) is only a slower run."""
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".tmp-", delete=False) as out:
            pickle.dump(parsed, out, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(out.name, entry)
        _prune(directory)
    except (OSError, pickle.PicklingError, RecursionError):
        try:
            os.unlink(out.name)  # type: ignore[possibly-undefined]
        except (OSError, NameError):
            pass


_STORED_SINCE_PRUNE: dict[Path, int] = {}


def _prune(directory: Path) -> None:
    """On a process's first store, then once every quarter of MAX_ENTRIES stores:
    listing the folder after every stored file made a cold load of a 500-file module
    list it 500 times."""
    stored = _STORED_SINCE_PRUNE.get(directory)
    if stored is not None and stored + 1 < max(1, MAX_ENTRIES // 4):
        _STORED_SINCE_PRUNE[directory] = stored + 1
        return
    _STORED_SINCE_PRUNE[directory] = 0
    _prune_files(directory, ".pickle", MAX_ENTRIES)


def _prune_files(directory: Path, suffix: str, limit: int) -> None:
    """Keep at most `limit` entries: past it, the least recently used quarter goes."""
    entries = [e for e in os.scandir(directory) if e.name.endswith(suffix)]
    if len(entries) <= limit:
        return
    entries.sort(key=_mtime)
    for old in entries[:len(entries) - limit * 3 // 4]:
        try:
            os.unlink(old.path)
        except OSError:
            pass


def _mtime(entry: os.DirEntry) -> float:
    try:
        return entry.stat().st_mtime
    except OSError:  # removed meanwhile by another process
        return 0.0
