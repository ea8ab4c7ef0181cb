"""Strata's cache folders: where they are, and only ever one private to this user.

Below both caches that use them (parsed files, `syntax/cache.py`; code fingerprints
and SQL, `engine/code_cache.py`) and the parser's LALR tables (`syntax/parser.py`).
"""

from __future__ import annotations

import os
from pathlib import Path


def default_dir(kind: str = "parse") -> Path | None:
    """The CLI's cache folder for `kind` (parse trees; `code`: compiled SQL); None
    when caching is off or the folder is not private to this user (`private_dir`)."""
    if os.environ.get("STRATA_NO_CACHE"):
        return None
    return private_dir(cache_home() / kind)


def cache_home() -> Path:
    """$STRATA_CACHE_DIR, else $XDG_CACHE_HOME/strata, else ~/.cache/strata."""
    if os.environ.get("STRATA_CACHE_DIR"):
        return Path(os.environ["STRATA_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "strata"


def private_dir(directory: Path) -> Path | None:
    """`directory`, made if missing (0o700), when only this user can write to it: a
    folder another user can write to could hold a planted file that pickle would
    run. None when it cannot be made or is not private."""
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        st = directory.stat()
    except OSError:
        return None
    if not hasattr(os, "getuid"):  # Windows: a profile's folders are private by default
        return directory
    if st.st_uid != os.getuid() or st.st_mode & 0o022:
        return None
    return directory
