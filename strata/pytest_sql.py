"""The tests the pytest plugin (strata/pytest_plugin.py) adds: one per model and
dialect of each configured module, comparing the model's SQL with its locked file.

Not collected by pytest's file walk (the name does not match `test_*.py`): the
plugin collects this file itself when modules are configured.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from syrupy.data import Snapshot, SnapshotCollection
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from syrupy.location import PyTestLocation

from strata.buildfiles import SUFFIX
from strata.diagnostics import StrataError
from strata.pytest_plugin import SqlCase, configured_dialects, configured_modules


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
    locked = snapshot.use_extension(StrataSqlExtension)
    matched = locked == strata_case.text
    if not matched:  # this module's asserts are not rewritten: say what differs, plainly
        pytest.fail(_mismatch(strata_case), pytrace=False)


def _mismatch(case: SqlCase) -> str:
    """A unified diff from the locked file to the SQL compiled now (syrupy's own
    diff is coloured character by character, unreadable in a CI log)."""
    from strata.review import unified_diff

    try:
        locked = case.path.read_text(encoding="utf-8")
    except OSError:
        return (f"model `{case.model}` ({case.dialect}) has no locked SQL at {case.path}; "
                "run pytest --snapshot-update to write it")
    return (f"the SQL of model `{case.model}` ({case.dialect}) differs from its locked file "
            "(run pytest --snapshot-update to lock it, then review the diff):\n"
            + unified_diff(locked, case.text, str(case.path)))


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

    def read_snapshot_collection(self, *, snapshot_location: str) -> SnapshotCollection:
        collection = SnapshotCollection(location=snapshot_location)
        collection.add(Snapshot(name=self._name(snapshot_location)))
        return collection

    def serialize(self, data, **kwargs) -> str:
        if not isinstance(data, str):
            raise TypeError(f"SQL snapshots are text, got {type(data).__name__}")
        return data
