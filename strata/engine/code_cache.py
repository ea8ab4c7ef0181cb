"""Code fingerprints and canonical SQL kept on disk by module key.

Rendering every model's canonical SQL is most of what a run spends per model
before executing it (~0.3 ms a model). The text depends only on the module's files
and the compiler (`module_key`), so a module run again (another warehouse, a
first run after `gc`, CI) reads it back instead. An entry is one JSON file named
by the key; a missing, unreadable or partial entry means rendering again, and a
cache that cannot be written only makes the run slower. A run's own history
entry is checked first (`reusable_code_fingerprints`); this cache is for the
runs that have none.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from strata.syntax.cache import MAX_ENTRIES, _prune_files


def load(directory: Path | None, key: str,
         names: list[str]) -> tuple[dict[str, str], dict[str, str]] | None:
    """(code fingerprints, canonical SQL) of `names`, or None unless all are kept."""
    if directory is None:
        return None
    try:
        entry = json.loads((directory / f"{key}.json").read_text())
        fps, code = entry["fps"], entry["canonical"]
        if not all(isinstance(fps.get(m), str) and isinstance(code.get(m), str)
                   for m in names):
            return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return {m: fps[m] for m in names}, {m: code[m] for m in names}


def store(directory: Path | None, key: str, fps: dict[str, str],
          canonical: dict[str, str]) -> None:
    """Keep these models (with any the entry held already), written atomically."""
    if directory is None:
        return
    path = directory / f"{key}.json"
    try:
        old = json.loads(path.read_text())
        fps, canonical = {**old["fps"], **fps}, {**old["canonical"], **canonical}
    except (OSError, ValueError, KeyError, TypeError):
        pass
    tmp = None
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        with tempfile.NamedTemporaryFile("w", dir=directory, prefix=".tmp-", suffix=".json",
                                         delete=False) as out:
            tmp = out.name
            json.dump({"fps": fps, "canonical": canonical}, out)
        os.replace(tmp, path)
        _prune_files(directory, ".json", MAX_ENTRIES)
    except (OSError, TypeError, ValueError):
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
