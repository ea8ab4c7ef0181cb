"""The tests the pytest plugin (strata/pytest_plugin.py) adds: one per model and
dialect of each configured module, comparing the model's SQL with its locked file.

Not collected by pytest's file walk (the name does not match `test_*.py`): the
plugin collects this file itself when modules are configured.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from syrupy.data import Snapshot, SnapshotCollection, SnapshotCollections
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from syrupy.location import PyTestLocation

from strata.buildfiles import SUFFIX
from strata.diagnostics import StrataError
from strata.pytest_options import configured_dialects, configured_modules
from strata.safefiles import Place


@dataclass(frozen=True)
class SqlCase:
    """One test: a model's SQL in one dialect, locked at `path`. `model` is None for
    a module that does not load: the test fails showing its diagnostics."""

    module: str  # the module's path as configured
    dialect: str
    model: str | None
    path: Path | None  # the snapshot file
    text: str = ""  # the model's SQL as `strata snapshot` writes it
    error: str | None = None  # the rendered diagnostics when the module does not compile

    @property
    def id(self) -> str:
        return f"{self.module}/{self.dialect}/{self.model or '<module>'}"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "strata_case" in metafunc.fixturenames:
        cases = sql_cases(metafunc.config)
        metafunc.parametrize("strata_case", cases, ids=[c.id for c in cases])


def sql_cases(config: pytest.Config) -> list[SqlCase]:
    from strata.review import (
        default_dir,
        load_for_review,
        model_texts,
        module_base,
        snapshot_path,
    )

    root = config.rootpath
    cases: list[SqlCase] = []
    for path in configured_modules(config):
        shown = _shown(path, root)
        directory = default_dir(path)
        for dialect in configured_dialects(config):
            try:
                texts = model_texts(load_for_review(path), dialect, module_base(path))
            except StrataError as err:
                cases.append(SqlCase(shown, dialect, None, None, error=_rendered(err)))
                continue
            cases += [SqlCase(shown, dialect, model, snapshot_path(directory, dialect, model),
                              text) for model, text in texts.items()]
    return cases


def test_model_sql(strata_case: SqlCase, snapshot) -> None:
    """The model's SQL is what its file locks (`pytest --snapshot-update` writes it)."""
    if strata_case.error is not None:
        pytest.fail(f"module {strata_case.module} does not compile for "
                    f"{strata_case.dialect}:\n{strata_case.error}", pytrace=False)
    try:  # before syrupy: a planted link is E130, said plainly, never read or written
        locked = read_snapshot(strata_case.path)
    except StrataError as err:
        pytest.fail(_rendered(err), pytrace=False)
    matched = snapshot.use_extension(StrataSqlExtension) == strata_case.text
    if not matched:  # this module's asserts are not rewritten: say what differs, plainly
        pytest.fail(_mismatch(strata_case, locked), pytrace=False)


def _mismatch(case: SqlCase, locked: str | None) -> str:
    """A unified diff from the locked file to the SQL compiled now (syrupy's own
    diff is coloured character by character, unreadable in a CI log)."""
    from strata.review import unified_diff

    if locked is None:
        return (f"model `{case.model}` ({case.dialect}) has no locked SQL at {case.path}; "
                "run pytest --snapshot-update to write it")
    return (f"the SQL of model `{case.model}` ({case.dialect}) differs from its locked file "
            "(run pytest --snapshot-update to lock it, then review the diff):\n"
            + unified_diff(locked, case.text, str(case.path)))


# ---------------------------------------------------------------- the files, safely
# syrupy opens, writes and deletes paths as they are, following links, and deletes
# every file it finds in a snapshot folder that no test claims. Here every file goes
# through strata/review.py and strata/safefiles.py instead: the folders
# `<module>/sql_snapshots/<dialect>/` are reached without a link, and only strata's
# own files in them (review.is_snapshot_file) are ever found, and so deleted.
def _folder(dirname: str | Path) -> Place:
    """A dialect folder, `<module dir>/sql_snapshots/<dialect>`: its last two parts
    are strata's, never a link."""
    path = Path(dirname)
    return Place(path.parent.parent, (path.parent.name, path.name))


def _place(location: str | Path) -> tuple[Place, str]:
    """The dialect folder of a snapshot file, and the file's name."""
    return _folder(Path(location).parent), Path(location).name


def read_snapshot(location: str | Path) -> str | None:
    from strata.review import opened, read_locked

    place, name = _place(location)
    with opened(place) as folder:
        return read_locked(folder, name, place.path / name)


def _write_snapshot(location: str, text: str) -> None:
    from strata.review import opened, write_locked

    place, name = _place(location)
    with opened(place, create=True) as folder:
        write_locked(folder, name, text, place.path / name)


def _discover(dirname: str) -> list[str]:
    """Strata's files in a dialect folder (none where it is missing or a link: the
    test of each model there says so)."""
    from strata.review import is_snapshot_file, opened

    try:
        with opened(_folder(dirname)) as folder:
            return [str(Path(dirname) / n) for n in folder.files()
                    if is_snapshot_file(folder, n)] if folder is not None else []
    except StrataError:
        return []


def _delete(location: str) -> None:
    from strata.review import is_snapshot_file, opened

    place, name = _place(location)
    with opened(place) as folder:
        if folder is not None:
            folder.remove_own(name, is_snapshot_file)


def _shown(path, root) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def _rendered(err: StrataError) -> str:
    from strata.cli.render import render_all

    return render_all(err.diagnostics, {}, colour=False)


class StrataSqlExtension(SingleFileSnapshotExtension):
    """syrupy: one plain .sql file per model and dialect, at the place
    strata/review.py gives it, holding exactly the text `strata snapshot` writes."""

    file_extension = SUFFIX.lstrip(".")
    _write_mode = WriteMode.TEXT

    @staticmethod
    def _case(test_location: PyTestLocation) -> SqlCase | None:
        """The test's case; None for any other test (syrupy asks about all of them
        when it looks for unused snapshots)."""
        callspec = getattr(test_location.item, "callspec", None)
        case = callspec.params.get("strata_case") if callspec is not None else None
        return case if isinstance(case, SqlCase) and case.path is not None else None

    @staticmethod
    def _name(path: str | Path) -> str:
        return f"test_model_sql[{Path(path).resolve()}]"  # syrupy relates it to the test by name

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        case = cls._case(test_location)
        if case is None:  # never created: nothing to discover there
            return str(Path(test_location.filepath).parent / ".strata-none")
        return str(case.path.parent)

    @classmethod
    def discovery_dirname(cls, *, test_location: PyTestLocation) -> str:
        return cls.dirname(test_location=test_location)

    @classmethod
    def get_file_basename(cls, *, test_location: PyTestLocation, index=0) -> str:
        return cls._case(test_location).path.name[:-len(SUFFIX)]

    @classmethod
    def get_snapshot_name(cls, *, test_location: PyTestLocation, index=0) -> str:
        return cls._name(cls._case(test_location).path)

    @classmethod
    def matches_test_location(cls, *, test_location: PyTestLocation,
                              snapshot_location: str) -> bool:
        return cls._case(test_location) is not None and \
            Path(snapshot_location).parent == Path(cls.dirname(test_location=test_location))

    def owns_snapshot_collection(self, *, filepath: str, test_location: PyTestLocation) -> bool:
        return self.is_snapshot_location(location=filepath) and \
            self.matches_test_location(test_location=test_location, snapshot_location=filepath)

    def discover_snapshots(self, *, test_location: PyTestLocation,
                           ignore_extensions: list[str] | None = None) -> SnapshotCollections:
        """Only strata's own files, one level in the dialect folder: syrupy's walk
        finds every file below, a README or a team's query too, and deletes them."""
        found = SnapshotCollections()
        if self._case(test_location) is not None:
            for location in _discover(self.dirname(test_location=test_location)):
                found.add(self.read_snapshot_collection(snapshot_location=location))
        return found

    def read_snapshot_data_from_location(self, *, snapshot_location: str, snapshot_name: str,
                                         session_id: str) -> str | None:
        return read_snapshot(snapshot_location)

    @classmethod
    def write_snapshot(cls, *, snapshot_location: str, snapshots: list,
                       name_order: dict[str, int] | None = None) -> None:
        """One file, one snapshot: written by strata, never through a link (syrupy's
        own makes the folders and opens the file following links)."""
        for data, _, _ in snapshots[:1]:
            _write_snapshot(snapshot_location, cls.serialize_text(data))

    def delete_snapshots(self, *, snapshot_location: str, snapshot_names: set[str]) -> None:
        _delete(snapshot_location)

    def read_snapshot_collection(self, *, snapshot_location: str) -> SnapshotCollection:
        collection = SnapshotCollection(location=snapshot_location)
        collection.add(Snapshot(name=self._name(snapshot_location)))
        return collection

    def serialize(self, data, **kwargs) -> str:
        return self.serialize_text(data)

    @staticmethod
    def serialize_text(data) -> str:
        if not isinstance(data, str):
            raise TypeError(f"SQL snapshots are text, got {type(data).__name__}")
        return data
