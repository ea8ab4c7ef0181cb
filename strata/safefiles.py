"""Files Strata writes, reads back and deletes in a user's folders, never through a
symbolic link.

A user's repository may hold a link committed by anyone (a pull request CI runs on):
`sql_snapshots/duckdb -> ~/.ssh`, `graph.html -> ~/.bashrc`. Followed, it makes a
command write, delete or print files anywhere the user can. So every path Strata
writes under is walked one component at a time from a folder it may trust, each
component opened with O_NOFOLLOW, and every later step is made relative to the open
folder (`dir_fd`), so a link planted between a check and a write is never followed
either (no check-then-act):

- a path the user gives (`-o DIR`, `--dir`, `--out FILE`, `init DIR`): relative, every
  component from the working directory; absolute, its last component (the folders
  above it are the user's own choice, `/tmp` may well be a link);
- a folder Strata adds below one (`sql_snapshots/<dialect>/`): every component.

A link in the way is E130, never followed, never replaced, never deleted. A file is
replaced by renaming a new file onto it, so a reader never sees half a file.

Where the OS has no `dir_fd` (Windows) the same rules are kept by an lstat before
each step, which a racing process could defeat; the folders a user commits there are
not links in practice (creating one needs a privilege).
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from strata.diagnostics import StrataError, fail
from strata.textsafe import escape_unprintable

_AT = {os.open, os.mkdir, os.unlink, os.rename, os.stat} <= os.supports_dir_fd
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO planted as a file must not block
_TEMP = ".strata-"


def link_error(shown: str | Path) -> StrataError:
    """E130: what a command says instead of following `shown`."""
    return fail("E130", f"`{escape_unprintable(str(shown))}` is a symbolic link: strata "
                "does not write, read or delete through a link", None,
                "a link where strata keeps its files could send them anywhere (one "
                "committed in a pull request, say); replace it by a folder or file of "
                "its own, or choose another place")


@dataclass(frozen=True)
class Place:
    """A path to reach without links: `start` as it is (followed), then each of
    `parts` opened without following a link."""

    start: Path
    parts: tuple[str, ...] = ()

    @classmethod
    def given(cls, path: str | os.PathLike) -> Place:
        """A path the user gave: see the module's docstring."""
        path = Path(path)
        if not path.is_absolute():
            return cls(Path("."), path.parts)
        return cls(path.parent, (path.name,)) if path.name else cls(path)

    def __truediv__(self, name: str) -> Place:
        return Place(self.start, (*self.parts, name))

    @property
    def path(self) -> Path:
        """As the user spells it, for messages."""
        return self.start.joinpath(*self.parts)

    def split(self) -> tuple[Place, str]:
        """The folder and the last component (a file's name)."""
        if not self.parts:
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(self.path))
        return Place(self.start, self.parts[:-1]), self.parts[-1]


class Folder:
    """An open folder reached without links; names are one component inside it."""

    def __init__(self, fd: int | None, path: Path):
        self.fd = fd  # None where the OS has no dir_fd: `path` is used, lstat first
        self.path = path

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    # ------------------------------------------------------------ looking
    def _at(self, name: str) -> dict:
        """Keyword arguments of an os call on `name` (a path without dir_fd)."""
        return {"dir_fd": self.fd} if self.fd is not None else {}

    def _name(self, name: str) -> str:
        return name if self.fd is not None else str(self.path / name)

    def lstat(self, name: str) -> os.stat_result | None:
        try:
            return os.stat(self._name(name), follow_symlinks=False, **self._at(name))
        except FileNotFoundError:
            return None

    def _refuse_link(self, name: str) -> None:
        info = self.lstat(name)
        if info is not None and stat.S_ISLNK(info.st_mode):
            raise link_error(self.path / name)

    def _refuse_replacing(self, name: str) -> None:
        """Only a regular file (or nothing) is replaced: a link is E130; a device, pipe
        or socket is an OSError the command reports (renamed onto as root, `--out
        /dev/zero` replaced the machine's /dev/zero with a page)."""
        self._refuse_link(name)
        info = self.lstat(name)
        if info is not None and not stat.S_ISREG(info.st_mode) and not stat.S_ISDIR(
                info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file (a device, pipe or socket): "
                          "strata replaces only files")

    def names(self) -> list[str]:
        return sorted(os.listdir(self.fd if self.fd is not None else self.path))

    def files(self) -> list[str]:
        """Names of the regular files directly inside (no link, no folder)."""
        with os.scandir(self.fd if self.fd is not None else self.path) as entries:
            return sorted(e.name for e in entries if e.is_file(follow_symlinks=False))

    def folders(self) -> list[str]:
        """Names of the folders directly inside (no link to one)."""
        with os.scandir(self.fd if self.fd is not None else self.path) as entries:
            return sorted(e.name for e in entries if e.is_dir(follow_symlinks=False))

    # ------------------------------------------------------------ folders
    def folder(self, name: str, create: bool = False, new: bool = False) -> Folder:
        """The folder `name` inside, opened without following a link; made if missing
        and `create`; with `new`, made now or FileExistsError (init's)."""
        if create or new:
            try:
                os.mkdir(self._name(name), 0o777, **self._at(name))
            except FileExistsError:
                self._refuse_link(name)
                if new:
                    raise
        return self._open_dir(name)

    def _open_dir(self, name: str) -> Folder:
        self._refuse_link(name)  # the only check where there is no dir_fd
        if self.fd is None:  # (Windows cannot open a folder as a file either)
            return self._checked_dir(name)
        try:
            fd = os.open(self._name(name), os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC,
                         **self._at(name))
        except OSError:
            self._refuse_link(name)  # became a link since: say so
            raise
        return Folder(fd, self.path / name)

    def _checked_dir(self, name: str) -> Folder:
        info = self.lstat(name)
        shown = str(self.path / name)
        if info is None:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), shown)
        if not stat.S_ISDIR(info.st_mode):
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), shown)
        return Folder(None, self.path / name)

    # ------------------------------------------------------------ files
    def read_text(self, name: str) -> str | None:
        """The text of the regular file `name`, None if there is none; a link is E130,
        anything but a regular file an OSError."""
        self._refuse_link(name)
        try:
            fd = os.open(self._name(name), os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC,
                         **self._at(name))
        except FileNotFoundError:
            return None
        except OSError:
            self._refuse_link(name)
            raise
        with os.fdopen(fd, "rb") as file:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(errno.EINVAL, "not a regular file")
            return file.read().decode("utf-8")

    def head(self, name: str, size: int) -> bytes:
        """The first `size` bytes of the regular file `name`; b"" for anything else."""
        try:
            fd = os.open(self._name(name), os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC,
                         **self._at(name))
        except OSError:
            return b""
        with os.fdopen(fd, "rb") as file:
            return file.read(size) if stat.S_ISREG(os.fstat(fd).st_mode) else b""

    def write_text(self, name: str, text: str) -> None:
        """Replace (or make) `name` with `text`: a new file renamed onto it, so a reader
        sees the old file or the new one; a link there is E130 and stays as it is."""
        self._refuse_replacing(name)
        temp = f"{_TEMP}{secrets.token_hex(8)}.tmp"
        self.create_text(temp, text)
        try:
            self._refuse_replacing(name)  # a rename would replace a link, never follow it
            if self.fd is not None:
                os.rename(temp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
            else:
                os.replace(self._name(temp), self._name(name))
        except BaseException:
            self.remove(temp)
            raise

    def create_text(self, name: str, text: str) -> None:
        """Make the new file `name` (never an existing one, never through a link)."""
        try:
            fd = os.open(self._name(name),
                         os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o666,
                         **self._at(name))
        except FileExistsError:
            self._refuse_link(name)
            raise
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
                out.write(text)
        except BaseException:
            self.remove(name)
            raise

    def remove(self, name: str) -> None:
        """Unlink the entry `name` in this folder (a link itself, never its target)."""
        try:
            os.unlink(self._name(name), **self._at(name))
        except FileNotFoundError:
            pass

    def remove_own(self, name: str, ours: Callable[[Folder, str], bool]) -> bool:
        """Delete `name` only if it is a regular file `ours` says Strata wrote."""
        info = self.lstat(name)
        if info is None or not stat.S_ISREG(info.st_mode) or not ours(self, name):
            return False
        self.remove(name)
        return True


def open_folder(place: Place, create: bool = False) -> Folder:
    """The folder at `place`, each of its parts opened without following a link (made
    if missing when `create`). FileNotFoundError when missing; E130 at a link."""
    if create:  # the folders above the given path are the user's: made as mkdir -p would
        place.start.mkdir(parents=True, exist_ok=True)
    fd = os.open(place.start, os.O_RDONLY | _DIRECTORY | _CLOEXEC) if _AT else None
    folder = Folder(fd, place.start)
    try:
        for part in place.parts:
            inner = folder.folder(part, create=create)
            folder.close()
            folder = inner
    except BaseException:
        folder.close()
        raise
    return folder


def write_file(place: Place, text: str, create: bool = False) -> None:
    """Write the file at `place` (its folder made if missing when `create`)."""
    where, name = place.split()
    with open_folder(where, create=create) as folder:
        folder.write_text(name, text)
