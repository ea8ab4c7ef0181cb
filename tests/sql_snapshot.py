"""A syrupy extension that stores each snapshot as a plain `.sql` file under the
repository's top-level `snapshots/` folder, so a reviewer reads SQL diffs:

    snapshots/<dialect>/<example>/<model>.sql

The test using it is parametrized with `example`, `dialect` and `model`; those
parameters, not the test's name, give the file's place. The snapshot's name is
derived from that place too (`<test>[<dialect>/<example>/<model>]`), both when
writing and when syrupy rediscovers the file, so syrupy sees every file it wrote
as used and reports a file whose model is gone as unused (deleted by
`pytest --snapshot-update` on a full run).
"""

from __future__ import annotations

from pathlib import Path

from syrupy.data import Snapshot, SnapshotCollection
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from syrupy.location import PyTestLocation

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOTS = ROOT / "snapshots"


class SqlSnapshotExtension(SingleFileSnapshotExtension):
    file_extension = "sql"
    _write_mode = WriteMode.TEXT
    test_name = "test_sql"  # the test function that asserts with this extension

    @staticmethod
    def _params(test_location: PyTestLocation) -> tuple[str, str, str] | None:
        """(dialect, example, model), or None for a test without those parameters:
        syrupy asks about every collected test when it looks for unused snapshots."""
        callspec = getattr(test_location.item, "callspec", None)
        params = callspec.params if callspec is not None else {}
        if not all(k in params for k in ("dialect", "example", "model")):
            return None
        return params["dialect"], params["example"], params["model"]

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        params = cls._params(test_location)
        if params is None:
            return str(SNAPSHOTS / ".none")  # never created: nothing to discover there
        dialect, example, _ = params
        return str(SNAPSHOTS / dialect / example)

    @classmethod
    def discovery_dirname(cls, *, test_location: PyTestLocation) -> str:
        return cls.dirname(test_location=test_location)

    @classmethod
    def get_file_basename(cls, *, test_location: PyTestLocation, index=0) -> str:
        return cls._params(test_location)[2]  # only asked for tests that assert

    @classmethod
    def get_snapshot_name(cls, *, test_location: PyTestLocation, index=0) -> str:
        dialect, example, model = cls._params(test_location)
        return f"{cls.test_name}[{dialect}/{example}/{model}]"

    @classmethod
    def matches_test_location(cls, *, test_location: PyTestLocation,
                              snapshot_location: str) -> bool:
        return Path(snapshot_location).parent == Path(cls.dirname(test_location=test_location))

    def owns_snapshot_collection(self, *, filepath: str, test_location: PyTestLocation) -> bool:
        return self.is_snapshot_location(location=filepath) and \
            Path(filepath).parent == Path(self.dirname(test_location=test_location))

    def read_snapshot_collection(self, *, snapshot_location: str) -> SnapshotCollection:
        path = Path(snapshot_location)
        dialect, example, model = path.parent.parent.name, path.parent.name, path.stem
        collection = SnapshotCollection(location=snapshot_location)
        collection.add(Snapshot(name=f"{self.test_name}[{dialect}/{example}/{model}]"))
        return collection

    def serialize(self, data, **kwargs) -> str:
        if not isinstance(data, str):
            raise TypeError(f"SQL snapshots are text, got {type(data).__name__}")
        return data if data.endswith("\n") else data + "\n"
