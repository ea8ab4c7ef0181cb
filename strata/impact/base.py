"""The base of a diff: the module as it was at a git revision (read with `git archive`
into a folder of its own, the user's work tree untouched), or a second module folder."""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from strata.diagnostics import fail


@dataclass(frozen=True)
class Base:
    path: Path  # the base module (a folder or a .strata file) to load
    label: str  # what the report calls it: `origin/main (3f2a9c1)` or the folder
    folder: tempfile.TemporaryDirectory | None = None  # kept alive while in use

    def close(self) -> None:
        if self.folder is not None:
            self.folder.cleanup()


def _git(cwd: Path, *args: str, binary: bool = False) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", "-C", str(cwd), *args], capture_output=True,
                              text=not binary, timeout=120, check=False)
    except FileNotFoundError:
        raise fail("E150", "git is not installed: --base REF reads the module at a git "
                   "revision", None, "give --base a module folder instead") from None


def open_base(module: str, ref: str, imported: list[Path] = ()) -> Base:
    """The base module `--base REF` names: an existing folder or .strata file as it is,
    else the module's own path at git revision REF, beside the modules it imports
    (`imported`: the head's, those of the repository that REF has), each in its place,
    so `import '../shared'` reads the shared module as it was. E150: the module is not
    in a git repository; E151: REF names no revision; E152: the module is not at REF."""
    given = Path(ref)
    if given.exists():
        return Base(given, ref)
    here = Path(module).resolve()
    folder = here if here.is_dir() else here.parent
    top = _git(folder, "rev-parse", "--show-toplevel")
    if top.returncode != 0:
        raise fail("E150", f"`{module}` is not in a git repository, and `{ref}` is no folder",
                   None, "give --base a git revision of the module's repository, or "
                   "another module folder")
    root = Path(top.stdout.strip()).resolve()
    found = _git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
    if found.returncode != 0:
        raise fail("E151", f"`{ref}` is no revision of the repository at `{root}`", None,
                   "give a branch, tag or commit (`git log --oneline` lists them), "
                   "e.g. --base origin/main")
    commit = found.stdout.strip()
    inside = os.path.relpath(here, root)
    archive = _git(root, "archive", "--format=tar", commit, "--", inside, binary=True)
    if archive.returncode != 0 or not archive.stdout:
        raise fail("E152", f"`{inside}` is not in revision `{ref}`", None,
                   "the module is new since then: give an older --base, or compare "
                   "with a folder")
    folder_tmp = tempfile.TemporaryDirectory(prefix="strata-diff-base-")
    for tar_bytes in [archive.stdout, *_imported_archives(root, commit, imported)]:
        with tarfile.open(fileobj=io.BytesIO(tar_bytes)) as tar:
            tar.extractall(folder_tmp.name, filter="data")
    return Base(Path(folder_tmp.name) / inside, f"{ref} ({commit[:7]})", folder_tmp)


def _imported_archives(root: Path, commit: str, imported: list[Path]) -> list[bytes]:
    """The imported modules inside the repository, as they were at `commit` (one the
    revision lacks is left out: the base then says E201 where it imports it)."""
    found = []
    for path in imported:
        inside = os.path.relpath(path.resolve(), root)
        if inside.startswith(".."):
            continue  # outside the repository: no revision of it to read
        archive = _git(root, "archive", "--format=tar", commit, "--", inside, binary=True)
        if archive.returncode == 0 and archive.stdout:
            found.append(archive.stdout)
    return found
