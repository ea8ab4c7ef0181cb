"""Which files on disk make the module of a document an editor opens, found without
walking more of the file system than that module (issue 39, item 9).

The module is the document's folder, widened upward while the parent holds `.strata`
files of its own (or the `module` initialization option). The search is bounded:

- it never widens into, and never walks below, a *wide* folder: `/` or the home
  folder (or one above it). A scratch file in `~` or at `/` is a module of the
  `.strata` files beside it, not of everything under them;
- below the module root it follows a symbolic link only when the link's target is
  inside the root (a link to `/` or to another project is skipped), each folder once,
  by its own path first (so that a file is named as the editor names it);
- it stops after MAX_FOLDERS folders or MAX_ENTRIES directory entries, and says so
  (E160), instead of listing a whole disk that happens to hold a `.strata` file.

`strata check PATH` walks what it is given; this is the editor's guess of a module,
made before any answer and again as files appear, so it must stay cheap.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

MAX_FOLDERS = 2_000
MAX_ENTRIES = 100_000


@dataclass(frozen=True)
class Listing:
    """The `.strata` files found, what was listed to find them, and whether a bound
    cut the search short."""

    files: tuple[Path, ...]
    folders: int = 0
    entries: int = 0
    truncated: bool = False


def wide_folders() -> set[Path]:
    """`/` (each drive's root), the home folder and every folder above it."""
    wide = {Path(Path.cwd().anchor or "/"), Path("/")}
    try:
        home = Path.home().absolute()
    except (RuntimeError, KeyError, OSError):  # no HOME, no passwd entry
        return wide
    return wide | {home, *home.parents}


def is_wide(folder: Path) -> bool:
    return folder == Path(folder.anchor) or folder in wide_folders()


def find_module_root(file: Path, stop: Path | None = None) -> Path:
    """The module a file belongs to: its folder, widened upward while the parent
    holds .strata files of its own (`shop/models/x.strata` belongs to `shop/` when
    `shop/sources.strata` exists), never into a wide folder, never above `stop` (the
    editor's workspace)."""
    root = file.parent
    while root.parent != root and root != stop:
        parent = root.parent
        if stop is not None and not parent.is_relative_to(stop):
            break
        if is_wide(parent) or not _holds_strata_file(parent):
            break
        root = parent
    return root


def _holds_strata_file(folder: Path) -> bool:
    try:
        with os.scandir(folder) as entries:
            for n, entry in enumerate(entries):
                if n >= MAX_ENTRIES:
                    return False
                if entry.name.endswith(".strata") and not _is_dir(entry):
                    return True
    except OSError:
        pass
    return False


def list_module(root: Path, max_folders: int = MAX_FOLDERS,
                max_entries: int = MAX_ENTRIES) -> Listing:
    """Every `*.strata` that is not a folder, under `root` (a FIFO or device of that
    name is listed, so that reading it says E005). A wide root is listed alone,
    without its subfolders; a file root is itself."""
    try:
        if not root.is_dir():
            return Listing((root,))
    except OSError:
        return Listing((root,))
    inside = os.path.realpath(root)
    found: list[Path] = []
    seen: set[tuple[int, int]] = set()
    folders: list[str] = [str(root)]
    linked: list[str] = []  # walked after every folder reached without a link
    listed = entries = 0
    deep = not is_wide(root)
    while folders or linked:
        if listed >= max_folders or entries >= max_entries:
            return Listing(tuple(sorted(found)), listed, entries, True)
        folder = folders.pop() if folders else linked.pop()
        try:
            info = os.stat(folder)
            if (info.st_dev, info.st_ino) in seen:
                continue
            seen.add((info.st_dev, info.st_ino))
            with os.scandir(folder) as it:
                listed += 1
                below = []
                for entry in it:
                    entries += 1
                    if entries > max_entries:
                        return Listing(tuple(sorted(found)), listed, entries, True)
                    link = entry.is_symlink()
                    if link and not _within(entry.path, inside):
                        continue  # never through a link out of the root
                    if _is_dir(entry):
                        if deep:
                            (linked if link else below).append(entry.path)
                    elif entry.name.endswith(".strata"):
                        found.append(Path(entry.path))
                folders.extend(sorted(below, reverse=True))
        except OSError:  # unreadable, or gone mid-walk (as under /proc)
            continue
    return Listing(tuple(sorted(found)), listed, entries, False)


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _within(path: str, root: str) -> bool:
    try:
        target = os.path.realpath(path)
    except (OSError, ValueError):
        return False
    return target == root or target.startswith(root.rstrip(os.sep) + os.sep)
