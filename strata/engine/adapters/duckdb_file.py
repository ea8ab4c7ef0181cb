"""When the DuckDB file itself fails: no space, a read-only or forbidden file or folder,
a truncated file, a damaged block. The one classifier every command and the run's
model and source errors ask (through `DuckDBAdapter.file_failure`), so an I/O failure
of the file is never blamed on a model. Here, beside the DuckDB adapter, because the
adapter asks it and adapters depend on nothing above them.
"""

from __future__ import annotations

import errno
import os
import re
from dataclasses import dataclass

import duckdb

from strata.diagnostics import StrataError, fail
from strata.textsafe import first_line


@dataclass(frozen=True)
class _Trouble:
    """One way the warehouse file itself fails, told by the engine's message."""

    phrases: tuple[str, ...]  # any of these, lower case, in the engine's message
    errnos: tuple[int, ...]  # or an OSError with one of these
    what: str  # what is wrong, for the diagnostic's message
    hint: str
    anywhere: bool  # true: only the device can cause it (no file name needed)
    writing: bool = False  # only writing fails: the file can still be opened read-only


_AFTER = "what was committed before is intact: a write that fails is not committed"
_TROUBLES = (
    _Trouble(("no space left on device",), (errno.ENOSPC,),
             "cannot be written: no space left on the device",
             f"free space where it lives (DuckDB writes FILE.wal beside it), then run the "
             f"command again; {_AFTER}", True, writing=True),
    _Trouble(("disk quota exceeded",), (errno.EDQUOT,),
             "cannot be written: the disk quota is exceeded",
             f"free space or raise the quota, then run the command again; {_AFTER}", True,
             writing=True),
    _Trouble(("file too large",), (errno.EFBIG,),
             "cannot be written: the file reached the largest size this process may write",
             f"raise the file size limit (ulimit -f), then run the command again; {_AFTER}",
             True, writing=True),
    _Trouble(("read-only file system",), (errno.EROFS,),
             "cannot be written: its file system is read-only",
             "commands that write (run, backfill, gc, rollback, branch create, replay "
             "--execute) need a writable file and folder; history, verify, plan and replay "
             "only read", True, writing=True),
    _Trouble(("permission denied", "operation not permitted"), (errno.EACCES, errno.EPERM),
             "cannot be used: permission denied",
             "this user must be able to read the file and, for commands that write, write "
             "it and create files in its folder (DuckDB writes FILE.wal beside it)", False,
             writing=True),
)
_TRUNCATED = _Trouble(
    ("could not read enough bytes", "not a valid duckdb database"), (errno.EIO,),
    "is truncated or damaged: data its catalogue points to is missing from it",
    "restore the file from a copy; strata cannot repair it (history, snapshots and "
    "views all live in it)", False)
_TROUBLES = (*_TROUBLES, _TRUNCATED)
# A damaged block names no file: it is one table's, which a caller that knows the
# tables can tell (verify and a run quarantine the snapshot); asked without that
# knowledge (blocks=True), it is the warehouse's.
_DAMAGED_BLOCK = _Trouble(
    ("corrupt database file",), (), "has a damaged block (its checksum does not match)",
    "restore the file from a copy, or `strata verify RUN -o WAREHOUSE` to find and "
    "quarantine the damaged snapshots", True)


def file_failure(path: str, err: BaseException, blocks: bool = True) -> StrataError | None:
    """E070 when `err` (a DuckDB error or an OSError) is the warehouse file itself
    failing: no space, a read-only or forbidden file or folder, a truncated or damaged
    file. None when it is something else (a model's data, a source's file), which its
    caller blames as before. The one place every command and the run's model and
    source errors ask, so an I/O failure of the file is never blamed on a model.
    blocks=False leaves a damaged block (one table's) to a caller that can tell
    which snapshot it is."""
    trouble = _trouble(path, err, blocks)
    if trouble is None:
        return None
    first = first_line(str(err), type(err).__name__)
    return _diagnosed(path, trouble, f"the engine said: {first}")


def truncated(path: str, note: str) -> StrataError:
    """E070: the file is shorter than what its catalogue points to (`note` says how)."""
    return _diagnosed(path, _TRUNCATED, note)


def _diagnosed(path: str, trouble: _Trouble, note: str) -> StrataError:
    return fail("E070", f"the warehouse `{path}` {trouble.what}", None, trouble.hint,
                notes=[note])


def _trouble(path: str, err: BaseException, blocks: bool) -> _Trouble | None:
    low = str(err).lower()
    code = err.errno if isinstance(err, OSError) else None
    about_file = _names_warehouse(path, err, str(err))
    for trouble in _TROUBLES + ((_DAMAGED_BLOCK,) if blocks else ()):
        said = any(p in low for p in trouble.phrases) or code in trouble.errnos
        if said and (trouble.anywhere or about_file):
            return trouble
    return None


def write_trouble(path: str, err: BaseException) -> bool:
    """Is `err` the file refusing to be written (what a read-only open avoids)?"""
    trouble = _trouble(path, err, blocks=False)
    return trouble is not None and trouble.writing


def damaged_storage(path: str, err: BaseException) -> bool:
    """May `err`, raised reading one table, be taken as evidence that THIS table's
    storage is damaged, so the snapshot holding it is quarantined and rebuilt?

    Only a block whose checksum does not match ("Corrupt database file"): DuckDB
    checks each block it reads, so that error is about those bytes and no others.
    Nothing else says anything about one snapshot, and quarantining on it does harm:
    the whole file failing (file_failure: truncated -- "could not read enough
    bytes" --, an I/O error, permission, no space) is E070, since a run that
    "repaired" snapshots there would publish into a broken file; and a passing
    failure (out of memory, interrupted, any other engine error) leaves a healthy
    table that must not be refused and rebuilt forever after."""
    if isinstance(err, (duckdb.OutOfMemoryException, duckdb.InterruptException)):
        return False
    if _trouble(path, err, blocks=False) is not None:
        return False
    return any(p in str(err).lower() for p in _DAMAGED_BLOCK.phrases)


# what DuckDB and strata keep beside the file: its write-ahead log, its spill folder,
# a compaction's copy (and that copy's log)
_BESIDE = ("", ".wal", ".tmp", ".strata-compact", ".strata-compact.wal")


def _names_warehouse(path: str, err: BaseException, message: str) -> bool:
    """Is the failing file the warehouse or one of its own files beside it? Whole
    names only: a source `w.duckdb.csv` next to the warehouse `w.duckdb` is not it."""
    names = {os.path.abspath(path) + s for s in _BESIDE} | {
        os.path.realpath(path) + s for s in _BESIDE}
    if isinstance(err, OSError):
        given = [str(n) for n in (err.filename, err.filename2) if n is not None]
        return any(os.path.realpath(n) in names or os.path.abspath(n) in names
                   for n in given)
    return any(re.search(re.escape(n) + r"""(?=["'\s:/]|$)""", message) for n in names)


def connection_file_failure(con: duckdb.DuckDBPyConnection,
                            err: BaseException) -> StrataError | None:
    """file_failure for a caller that holds only the connection (a source's contract
    check reads through it): the file is the connection's own database."""
    try:
        row = con.execute("SELECT path FROM duckdb_databases() "
                          "WHERE database_name = current_database()").fetchone()
    except duckdb.Error:
        return None
    return file_failure(row[0], err) if row and row[0] else None
