"""`strata build -o DIR`: one .sql file per model, every one of them inside DIR.

A model's name is any text but a backtick (`` `../../x` ``, `` `/etc/cron.d/x` ``,
`` `CON` ``, a name of 300 characters), so it cannot be a file name as it is. A plain
name (`daily_sales`) keeps its own file, `daily_sales.sql`; any other name gets a
file name made of its letters, digits and `_` and a hash of the whole name. The
mapping is fixed per name (adding a model never renames another's file) and
collision-free on every filesystem we know of:

- a plain name has no `-`; every other file name has one, before the hash;
- plain names differ by more than case (E014), and a hash is lowercase hex, so no
  two files differ only in case or in Unicode normalisation (macOS, Windows);
- a file name is one path component of at most 90 bytes, never `.` or `..`, never
  a device name of Windows (`CON`, `nul`, `COM1`, ... even with an extension).

Files are written to a new temporary file in DIR, then renamed over the target: a
symbolic link already at the target is replaced, never followed out of DIR, and a
reader never sees half a file.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path

from strata.diagnostics import fail
from strata.textsafe import is_plain

SUFFIX = ".sql"
_PLAIN_MAX = 64  # a longer plain name is shortened, and so gets a hash
_HASH_CHARS = 16  # 64 bits of SHA-256: no accidental clash, none worth crafting
_WINDOWS_DEVICES = frozenset(
    ["con", "prn", "aux", "nul"] + [f"{port}{n}" for port in ("com", "lpt") for n in range(10)])
_NOT_WORD = re.compile(r"[^A-Za-z0-9_]")


def file_name(model: str) -> str:
    """The file `build` writes `model`'s SQL to, relative to DIR."""
    if is_plain(model) and len(model) <= _PLAIN_MAX and model.lower() not in _WINDOWS_DEVICES:
        return model + SUFFIX
    digest = hashlib.sha256(model.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{_NOT_WORD.sub('_', model)[:_PLAIN_MAX]}-{digest[:_HASH_CHARS]}{SUFFIX}"


def write_files(texts: dict[str, str], out_dir: str) -> dict[str, str]:
    """Write each model's text to its file under `out_dir` (created if missing);
    return model -> the path written, as `out_dir` joined with the file name."""
    target = Path(out_dir)
    try:
        target.mkdir(parents=True, exist_ok=True)
        root = os.path.realpath(target)
    except OSError as err:
        raise fail("E084", f"cannot create `{out_dir}`: {err.strerror or err}") from None
    mode = 0o666 & ~_umask()
    written = {}
    for model, text in texts.items():
        name = file_name(model)
        _write_inside(root, name, text, mode, shown=str(target / name))
        written[model] = str(target / name)
    return written


def _write_inside(root: str, name: str, text: str, mode: int, shown: str) -> None:
    """Write `root/name` by renaming a fresh temporary file onto it: rename replaces
    whatever entry is there (a link too) and follows none."""
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=".strata-", suffix=".tmp", dir=root)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, os.path.join(root, name))
    except OSError as err:
        if tmp is not None and os.path.lexists(tmp):
            os.unlink(tmp)
        raise fail("E093", f"cannot write `{shown}`: {err.strerror or err}", None,
                   "remove or rename what is in the way (a directory of that name, say), "
                   "or choose another -o DIR") from None


def _umask() -> int:
    """The process's umask, so a written file gets the mode an ordinary write gives."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
