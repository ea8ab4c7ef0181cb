"""SQL review: every model's SQL, per dialect, kept as plain `.sql` files in the user's
repository, so a pull request that changes a model shows how its SQL changed.

Two front ends share this module and so the same files, byte for byte:
`strata snapshot MODULE [--check]` (CI without pytest) and the pytest plugin
(strata/pytest_plugin.py, on syrupy). The layout is

    <dir>/<dialect>/<model file>.sql       default <dir>: sql_snapshots/ beside the module

where the model's file name is `build`'s (strata/buildfiles.py: a plain name keeps
its own name, any other gets a safe one with a hash), and the text is what
`strata compile --show-sql` prints for that model (full and incremental statements).

The text must not depend on the machine or on where the command runs: a file
source's path is written relative to the module's directory (Spark's absolute
`file://` URI with `<module>` in place of that directory).

The folders are reached, and the files written, read back and deleted, without
following a symbolic link (strata/safefiles.py: a planted link is E130), and the only
files ever deleted are strata's own (`is_snapshot_file`): a README or a team's own
query in a dialect folder stays.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from strata.buildfiles import SUFFIX, file_name
from strata.compiler import compile_statements, format_statements
from strata.diagnostics import StrataError, fail
from strata.safefiles import Folder, Place, open_folder
from strata.semantics.module import Module
from strata.semantics.resolve import load_module
from strata.textsafe import escape_unprintable

DEFAULT_DIR = "sql_snapshots"
MODULE_MARK = "<module>"  # stands for the module's directory in a snapshot


def module_base(module_path: str | os.PathLike) -> Path:
    """The directory a module's relative paths are read against: the module itself
    when it is a directory, else the directory of its file."""
    path = Path(module_path).resolve()
    return path if path.is_dir() else path.parent


def default_dir(module_path: str | os.PathLike) -> Path:
    """Where snapshots go when no directory is given: `sql_snapshots/` in the
    module's directory (beside its .strata files). As the user spelled the module's
    path, so messages show a path they recognise."""
    path = Path(module_path)
    return (path if path.is_dir() else path.parent) / DEFAULT_DIR


def load_for_review(module_path: str | os.PathLike) -> Module:
    """The module, or its errors raised: SQL of a broken module cannot be locked."""
    module = load_module(module_path)
    if module.errors:
        raise StrataError(module.diagnostics)
    return module


def model_texts(module: Module, dialect: str, base: Path) -> dict[str, str]:
    """Model name -> the text locked for it in `dialect`, in dependency order.

    Compiled with `base` as the working directory, because the compiler writes a
    file source's path relative to it; the one absolute form (a `file://` URI)
    has `base` replaced by `<module>`."""
    with contextlib.chdir(base):
        statements = compile_statements(module, dialect, clock=None)  # the same text every day
    by_model: dict[str, list] = {}
    for statement in statements:
        by_model.setdefault(statement.model, []).append(statement)
    absolute = f"file://{base}/"
    return {model: format_statements(stmts).rstrip("\n").replace(
                absolute, f"file://{MODULE_MARK}/") + "\n"
            for model, stmts in by_model.items()}


def snapshot_place(module_path: str | os.PathLike, directory: str | None = None) -> Place:
    """Where the dialect folders are: `--dir` as given, else `sql_snapshots/` beside
    the module. Reached without a link (strata/safefiles.py): the default folder and
    every dialect folder below either are strata's own, never a link."""
    if directory is not None:
        return Place.given(directory)
    return Place(default_dir(module_path).parent, (DEFAULT_DIR,))


def choose_dialects(given: list[str], place: Place) -> list[str]:
    """The dialects given; else those already locked under `place` (so CI's
    `strata snapshot MODULE --check` checks every folder the team keeps); else the
    default dialect."""
    import dialects

    if given:
        return list(dict.fromkeys(given))
    try:
        with open_folder(place) as folder:
            locked = [n for n in folder.folders() if n in dialects.DIALECTS]
    except OSError:  # none yet, or a folder the OS refuses to look at (too long a
        locked = []  # name): none locked there; writing into it says what is wrong
    return locked or [dialects.DEFAULT]


def snapshot_path(directory: Path, dialect: str, model: str) -> Path:
    return directory / dialect / file_name(model)


# Which files in a dialect folder are strata's, the only ones it ever deletes: a
# regular file directly inside (not in a sub-folder, not a link), named as
# strata/buildfiles.py names a model's file, that starts with the `-- model NAME`
# header strata writes. A README, a sub-folder, a query of the team's own stay.
_OWN_NAME = re.compile(r"[A-Za-z0-9_]{1,64}(-[0-9a-f]{16})?" + re.escape(SUFFIX))
HEADER = b"-- model "


def is_snapshot_file(folder: Folder, name: str) -> bool:
    """`name` in `folder` is a file strata wrote (see above)."""
    return _OWN_NAME.fullmatch(name) is not None and \
        folder.head(name, len(HEADER)) == HEADER


def stale_files(folder: Folder, owned: set[str]) -> list[str]:
    """Strata's files in `folder` that no model of the module owns any more."""
    return [n for n in folder.files() if n not in owned and is_snapshot_file(folder, n)]


@contextlib.contextmanager
def opened(place: Place, create: bool = False) -> Iterator[Folder | None]:
    """The folder at `place` (None when it does not exist and is not to be made);
    E130 at a link on the way, E093 when the OS refuses it."""
    try:
        folder = open_folder(place, create=create)
    except FileNotFoundError:
        if create:
            raise _os_error("create", place.path, FileNotFoundError()) from None
        folder = None
    except OSError as err:
        raise _os_error("create" if create else "read", place.path, err) from None
    try:
        yield folder
    finally:
        if folder is not None:
            folder.close()


def read_locked(folder: Folder | None, name: str, shown: Path) -> str | None:
    """The locked text of file `name`, None if there is none (a link is E130)."""
    if folder is None:
        return None
    try:
        return folder.read_text(name)
    except (OSError, UnicodeDecodeError) as err:
        raise _os_error("read", shown, err) from None


def _os_error(verb: str, shown: Path, err: Exception) -> StrataError:
    reason = getattr(err, "strerror", None) or err
    return fail("E093", f"cannot {verb} `{escape_unprintable(str(shown))}`: {reason}", None,
                "remove what is in the way, or choose another --dir")


@dataclass(frozen=True)
class Change:
    """One model whose locked SQL differs from what the module compiles to now."""

    dialect: str
    model: str | None  # None: a file no model of the module owns any more
    path: str
    kind: str  # "changed", "new" (no file yet) or "removed" (file without a model)
    diff: str  # unified diff, locked file -> current SQL

    def to_json(self) -> dict:
        return {"dialect": self.dialect, "model": self.model, "path": self.path,
                "kind": self.kind, "diff": self.diff}


@dataclass(frozen=True)
class Review:
    """The outcome of writing or checking a module's SQL snapshots."""

    directory: str
    dialects: tuple[str, ...]
    models: int
    changes: tuple[Change, ...]
    written: tuple[str, ...] = ()  # paths written or removed (write mode)

    def to_json(self) -> dict:
        return {"status": "changed" if self.changes else "ok", "directory": self.directory,
                "dialects": list(self.dialects), "models": self.models,
                "changes": [c.to_json() for c in self.changes],
                "written": list(self.written)}


def compare(module: Module, dialects: list[str], base: Path, place: Place) -> list[Change]:
    """Every difference between strata's files under `place` and the module's SQL."""
    changes: list[Change] = []
    for dialect in dialects:
        texts = model_texts(module, dialect, base)
        where = place / dialect
        with opened(where) as folder:
            owned = set()
            for model, text in texts.items():
                name = file_name(model)
                owned.add(name)
                shown = where.path / name
                locked = read_locked(folder, name, shown)
                if locked != text:
                    kind = "new" if locked is None else "changed"
                    changes.append(Change(dialect, model, str(shown), kind,
                                          unified_diff(locked or "", text, str(shown))))
            for name in stale_files(folder, owned) if folder is not None else []:
                shown = where.path / name
                changes.append(Change(dialect, None, str(shown), "removed", unified_diff(
                    read_locked(folder, name, shown) or "", "", str(shown))))
    return changes


def write(module: Module, dialects: list[str], base: Path, place: Place) -> list[str]:
    """Write every model's file; remove strata's files no model owns any more (a
    deleted or renamed model), so the pull request shows that too. Returns the
    paths written or removed."""
    touched: list[str] = []
    for dialect in dialects:
        texts = model_texts(module, dialect, base)
        where = place / dialect
        with opened(where, create=True) as folder:
            for model, text in texts.items():
                name = file_name(model)
                shown = where.path / name
                if read_locked(folder, name, shown) != text:
                    write_locked(folder, name, text, shown)
                    touched.append(str(shown))
            for name in stale_files(folder, {file_name(m) for m in texts}):
                try:
                    folder.remove_own(name, is_snapshot_file)
                except OSError as err:
                    raise _os_error("remove", where.path / name, err) from None
                touched.append(str(where.path / name))
    return touched


def write_locked(folder: Folder, name: str, text: str, shown: Path) -> None:
    try:
        folder.write_text(name, text)
    except OSError as err:
        raise _os_error("write", shown, err) from None


def review(module: Module, module_path: str, dialects: list[str],
           directory: str | None = None, check: bool = False) -> Review:
    """`strata snapshot`: write the files (or with check=True only compare them) for
    `module`, loaded from `module_path`. Everything is compared (and so every link on
    the way refused) before anything is written."""
    base = module_base(module_path)
    place = snapshot_place(module_path, directory)
    changes = compare(module, dialects, base, place)
    written = () if check else tuple(write(module, dialects, base, place))
    return Review(str(place.path), tuple(dialects), len(module.order), tuple(changes), written)


def unified_diff(old: str, new: str, path: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(keepends=True),
                                        new.splitlines(keepends=True),
                                        fromfile=f"{path} (locked)",
                                        tofile=f"{path} (compiled now)"))
