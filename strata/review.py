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
"""

from __future__ import annotations

import contextlib
import difflib
import os
from dataclasses import dataclass
from pathlib import Path

from strata.buildfiles import SUFFIX, file_name, write_files
from strata.compiler import compile_statements, format_statements
from strata.diagnostics import StrataError, fail
from strata.semantics.module import Module
from strata.semantics.resolve import load_module

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
        statements = compile_statements(module, dialect)
    by_model: dict[str, list] = {}
    for statement in statements:
        by_model.setdefault(statement.model, []).append(statement)
    absolute = f"file://{base}/"
    return {model: format_statements(stmts).rstrip("\n").replace(
                absolute, f"file://{MODULE_MARK}/") + "\n"
            for model, stmts in by_model.items()}


def choose_dialects(given: list[str], directory: Path) -> list[str]:
    """The dialects given; else those already locked under `directory` (so CI's
    `strata snapshot MODULE --check` checks every folder the team keeps); else the
    default dialect."""
    import dialects

    if given:
        return list(dict.fromkeys(given))
    try:
        locked = sorted(p.name for p in directory.glob("*") if p.is_dir()
                        and p.name in dialects.DIALECTS) if directory.is_dir() else []
    except OSError:  # a folder the OS refuses to look at (too long a name): none locked
        locked = []  # there; writing into it says what is wrong (E093)
    return locked or [dialects.DEFAULT]


def snapshot_path(directory: Path, dialect: str, model: str) -> Path:
    return directory / dialect / file_name(model)


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


def compare(module: Module, dialects: list[str], base: Path, directory: Path) -> list[Change]:
    """Every difference between the files under `directory` and the module's SQL."""
    changes: list[Change] = []
    for dialect in dialects:
        texts = model_texts(module, dialect, base)
        owned = set()
        for model, text in texts.items():
            path = snapshot_path(directory, dialect, model)
            owned.add(path.name)
            locked = _read(path)
            if locked != text:
                kind = "new" if locked is None else "changed"
                changes.append(Change(dialect, model, str(path), kind,
                                      unified_diff(locked or "", text, str(path))))
        for path in _stale_files(directory / dialect, owned):
            changes.append(Change(dialect, None, str(path), "removed",
                                  unified_diff(_read(path) or "", "", str(path))))
    return changes


def write(module: Module, dialects: list[str], base: Path, directory: Path) -> list[str]:
    """Write every model's file; remove `.sql` files no model owns any more (a
    deleted or renamed model), so the pull request shows that too. Returns the
    paths written or removed."""
    touched: list[str] = []
    for dialect in dialects:
        texts = model_texts(module, dialect, base)
        target = directory / dialect
        changed = {m: t for m, t in texts.items()
                   if _read(snapshot_path(directory, dialect, m)) != t}
        touched += write_files(changed, str(target)).values()
        owned = {file_name(m) for m in texts}
        for path in _stale_files(target, owned):
            try:
                path.unlink()
            except OSError as err:
                raise fail("E093", f"cannot remove `{path}`: {err.strerror or err}") from None
            touched.append(str(path))
    return touched


def review(module: Module, module_path: str, dialects: list[str],
           directory: str | None = None, check: bool = False) -> Review:
    """`strata snapshot`: write the files (or with check=True only compare them) for
    `module`, loaded from `module_path`."""
    base = module_base(module_path)
    where = Path(directory) if directory is not None else default_dir(module_path)
    changes = compare(module, dialects, base, where)
    written = () if check else tuple(write(module, dialects, base, where))
    return Review(str(where), tuple(dialects), len(module.order), tuple(changes), written)


def unified_diff(old: str, new: str, path: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(keepends=True),
                                        new.splitlines(keepends=True),
                                        fromfile=f"{path} (locked)",
                                        tofile=f"{path} (compiled now)"))


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as err:
        raise fail("E093", f"cannot read `{path}`: {getattr(err, 'strerror', None) or err}",
                   None, "remove what is in the way, or choose another --dir") from None


def _stale_files(folder: Path, owned: set[str]) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir()
                  if p.name.endswith(SUFFIX) and p.name not in owned and p.is_file())
