"""Change markers: proof that a source's data has not changed since a run hashed it,
so a run can take that run's fingerprint instead of reading every row again.

The fingerprint (schema + row hash, `fingerprints.py`) stays the source's identity;
a marker only decides whether it must be computed. A run records, beside each
fingerprint it computed, the marker it took before reading and a key of what it
hashed (`Recorded`); the next run takes the marker again, and only when marker and
key are equal does it reuse the fingerprint. A marker must be proof, never a hint:
a change it misses is a stale model published as up to date. So a marker exists
only where the engine or the file system keeps one that every change moves:

- a file (or a folder of files) read where this process sees it: each file's path,
  device, inode, size and modification and change times in nanoseconds. The change
  time (ctime) moves on every write and cannot be set back by a user, so a same-size
  overwrite whose modification time is restored (`touch -r`, `os.utime`) still
  moves it; a file replaced by rename has another inode.
- a Spark file table: the same, over the files its catalogue lists
  (`SparkAdapter.table_marker`).
- nothing else: a DuckDB or PostgreSQL table keeps no marker a change must move
  (PostgreSQL's statistics counters are updated asynchronously and can be reset),
  so those sources are hashed on every run.

Timestamps have a granularity (a kernel tick, a second on some file systems): a
file written within that tick after the marker was taken keeps the same times. A
marker is therefore taken only of files whose times are `settled_seconds()` in the
past (git's "racily clean" rule); a younger file is hashed, and its marker recorded
by a later run. Taken before the read and again after it: a file that moved
meanwhile records no marker either.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from strata.engine.environment import env_seconds
from strata.engine.fingerprints import sha

# a file's times must be this far behind the clock for its marker to be proof: above
# every file system's timestamp granularity (a kernel tick; 1 s on ext3 and HFS+,
# 2 s on FAT)
SETTLED_SECONDS = 3.0


def settled_seconds() -> float:
    """How old a file's times must be to prove it unchanged: STRATA_MARKER_SETTLE
    seconds (tests shorten it on file systems with nanosecond times), else 3."""
    return env_seconds("STRATA_MARKER_SETTLE", SETTLED_SECONDS, 86400.0,
                       "how many seconds old a file's times must be to prove it unchanged")


@dataclass(frozen=True)
class Recorded:
    """What a run recorded of a source it hashed: the marker taken before reading, the
    key of what it hashed (`hash_key`) and what the hash gave."""

    marker: str
    key: str
    fingerprint: str
    rows: int

    def to_json(self) -> dict:
        return {"marker": self.marker, "key": self.key, "fingerprint": self.fingerprint,
                "rows": self.rows}

    @staticmethod
    def from_json(data) -> Recorded | None:
        """None for anything that is not a whole record (an entry written by hand)."""
        try:
            return Recorded(str(data["marker"]), str(data["key"]), str(data["fingerprint"]),
                            int(data["rows"]))
        except (TypeError, KeyError, ValueError):
            return None


def recorded_of(markers: dict) -> dict[str, Recorded]:
    """source -> its record, from a history entry's `source_markers` (anything else
    there, an entry edited by hand, is no record: the source is hashed)."""
    if not isinstance(markers, dict):
        return {}
    found = {name: Recorded.from_json(data) for name, data in markers.items()}
    return {name: r for name, r in found.items() if r is not None}


def hash_key(*parts) -> str:
    """What a fingerprint depends on besides the data: the relation read, the declared
    columns, their types and the row-hash expression as rendered. A marker proves the
    data unchanged; the key proves the same hash was asked of it."""
    return sha("source-hash", *parts)[:32]


def files_marker(paths: Iterable[Path], identity=()) -> str | None:
    """The marker of files (a folder stands for every file under it), with `identity`
    (what else names the data: a table's location, format) hashed in; None when any
    file is missing or too young to be proof (`settled_seconds`)."""
    settled_before = time.time_ns() - int(settled_seconds() * 1e9)
    stats = []
    for path in paths:
        for file in _files(path):
            try:
                st = os.stat(file)
            except OSError:
                return None
            if max(st.st_mtime_ns, st.st_ctime_ns) > settled_before:
                return None
            stats.append((str(file), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns,
                          st.st_ctime_ns))
    return sha("files", list(identity), sorted(stats))[:32]


def _files(path: Path) -> list[Path]:
    """The path itself, or for a folder the folder and every file and folder under it
    (a folder's own times move when an entry is added, removed or renamed)."""
    if not path.is_dir():
        return [path]
    found = [path]
    for root, dirs, files in os.walk(path):
        dirs.sort()
        found += [Path(root, d) for d in dirs] + [Path(root, f) for f in sorted(files)]
    return found


# a folder's state is proof only while the files it must read back are few: beyond this
# many bytes written within the settling time, no state is taken (the next run asks
# the engine)
RACY_BYTES = 64 << 20


@dataclass(frozen=True)
class FolderState:
    """Every entry under a folder when the state was taken (relative path -> device,
    inode, size and times in nanoseconds), and the content hash of each file whose
    times were not yet settled then: a write in the same clock tick keeps a file's
    times, never its content (git's racily clean rule, applied as git does)."""

    taken_ns: int
    entries: dict[str, list]
    contents: dict[str, str]

    def to_json(self) -> dict:
        return {"taken_ns": self.taken_ns, "entries": self.entries, "contents": self.contents}

    @staticmethod
    def from_json(data) -> FolderState | None:
        try:
            return FolderState(int(data["taken_ns"]), dict(data["entries"]),
                               dict(data["contents"]))
        except (TypeError, KeyError, ValueError):
            return None

    def moved_by(self, now: FolderState, root: Path, skip=lambda rel: False) -> bool:
        """Has anything under `root` (outside `skip`) changed between this state and
        `now`, taken later? An entry added, removed or with other stats; or a file
        whose times were unsettled when this state was taken and whose content is
        other now."""
        mine = {n: e for n, e in self.entries.items() if not skip(n)}
        theirs = {n: e for n, e in now.entries.items() if not skip(n)}
        if mine != theirs:
            return True
        return any(not skip(rel) and (now.contents.get(rel) or _content(root / rel)) != digest
                   for rel, digest in self.contents.items())

    def still(self, root: Path, skip) -> bool:
        """Is every entry under `root` (outside `skip`) as it was when this was taken?"""
        now = folder_state(root, skip, hash_racy=False)
        return now is not None and not self.moved_by(now, root)


def folder_state(root: Path, skip, hash_racy: bool = True) -> FolderState | None:
    """The state of every entry under `root` but those `skip(relative path)` says;
    None when it cannot be taken (an entry vanished meanwhile, too many young bytes)."""
    taken = time.time_ns()
    settled_before = taken - int(settled_seconds() * 1e9)
    entries: dict[str, list] = {}
    contents: dict[str, str] = {}
    young_bytes = 0
    for path in _files(root)[1:]:
        rel = path.relative_to(root).as_posix()
        if skip(rel):
            continue
        try:
            st = os.lstat(path)
        except OSError:
            return None
        entries[rel] = [st.st_mode, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns,
                        st.st_ctime_ns]
        if hash_racy and max(st.st_mtime_ns, st.st_ctime_ns) > settled_before and \
                os.path.isfile(path) and not os.path.islink(path):
            young_bytes += st.st_size
            digest = _content(path)
            if digest is None or young_bytes > RACY_BYTES:
                return None
            contents[rel] = digest
    return FolderState(taken, entries, contents)


def _content(path: Path) -> str | None:
    digest = hashlib.sha256()
    try:
        with open(path, "rb", buffering=0) as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()
