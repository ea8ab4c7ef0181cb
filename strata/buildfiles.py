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

Files are written to a new temporary file in DIR, then renamed over the target, so a
reader never sees half a file; DIR is reached and written without following a
symbolic link (strata/safefiles.py): a link at DIR or at a model's file is E130, left
as it is.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from strata.diagnostics import fail
from strata.safefiles import Place, open_folder
from strata.textsafe import escape_unprintable, is_plain

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
        folder = open_folder(Place.given(out_dir), create=True)
    except OSError as err:
        raise fail("E084", f"cannot create `{escape_unprintable(out_dir)}`: "
                   f"{err.strerror or err}") from None
    written = {}
    with folder:
        for model, text in texts.items():
            name = file_name(model)
            shown = str(target / name)
            try:
                folder.write_text(name, text)
            except OSError as err:
                raise fail("E093", f"cannot write `{escape_unprintable(shown)}`: "
                           f"{err.strerror or err}", None,
                           "remove or rename what is in the way (a directory of that name, "
                           "say), or choose another -o DIR") from None
            written[model] = shown
    return written
