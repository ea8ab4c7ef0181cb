"""The pytest plugin (entry point `strata`): lock every model's SQL of a user's modules
as plain .sql files in their repository, on syrupy, so a pull request shows how the
generated SQL changed. Two lines of configuration turn it on:

    [tool.pytest.ini_options]
    strata_modules = ["models"]              # module paths, relative to this file
    strata_dialects = ["duckdb", "postgres"] # optional; default duckdb

(or `pytest --strata-module models --strata-dialect duckdb`). Each model in each
dialect is one test, `strata-sql::test_model_sql[<module>/<dialect>/<model>]`;
`pytest --snapshot-update` writes the files, a later run fails with a SQL diff for
a model whose SQL changed, and syrupy reports (and on update deletes) the file of a
model that is gone: only strata's own files, never through a symbolic link
(strata/pytest_sql.py hands syrupy's file handling to strata/safefiles.py). The files are those of `strata snapshot`
(`<module dir>/sql_snapshots/<dialect>/<model>.sql`, see strata/review.py), so CI
without pytest can run `strata snapshot MODULE --check` on the same files.

The tests and the syrupy extension are in strata/pytest_sql.py (imported only when
modules are configured, so a project without syrupy is unaffected), added to the session's items
before selection (`-k`, `-m`, `--deselect` apply to them as to any test).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

NODE = "strata-sql"  # the collector's node id: tests read strata-sql::test_model_sql[...]


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


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("strata", "Strata SQL review")
    group.addoption("--strata-module", action="append", default=[], metavar="PATH",
                    help="a Strata module whose models' SQL is locked (repeatable)")
    group.addoption("--strata-dialect", action="append", default=[], metavar="D",
                    help="a dialect to lock the SQL for (repeatable; default duckdb)")
    parser.addini("strata_modules", type="paths",
                  help="Strata modules whose models' SQL is locked as .sql files")
    parser.addini("strata_dialects", type="args", default=[],
                  help="dialects to lock the SQL for (default duckdb)")


def configured_modules(config: pytest.Config) -> list[Path]:
    """--strata-module paths (relative to where pytest runs), then the ini's (relative
    to the ini file, as pytest reads `paths`), each module once."""
    here = config.invocation_params.dir
    named = [here / p for p in config.getoption("strata_module")] + \
        list(config.getini("strata_modules"))
    # one module named twice (on the command line and in the ini) is tested once: its
    # tests ran twice, as paid_orders0 and paid_orders1 (issue 38)
    unique: dict[Path, Path] = {}
    for path in named:
        unique.setdefault(path.resolve(), path)
    return list(unique.values())


def configured_dialects(config: pytest.Config) -> list[str]:
    import dialects

    names = config.getoption("strata_dialect") or config.getini("strata_dialects")
    return list(dict.fromkeys(names)) or [dialects.DEFAULT]


def pytest_configure(config: pytest.Config) -> None:
    """A model's locked file left unused (the model was deleted or renamed) fails the
    run: syrupy then names each such file (its --snapshot-details), which holds the
    module, dialect and model, instead of only counting them (issue 38)."""
    if configured_modules(config) and hasattr(config.option, "include_snapshot_details"):
        config.option.include_snapshot_details = True


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    """Add the SQL tests first, so selection and syrupy see them like any other."""
    if not configured_modules(config):
        return
    try:
        import strata.pytest_sql
    except ImportError as err:  # syrupy is the user's test dependency, not strata's
        raise pytest.UsageError(f"strata's SQL review needs syrupy ({err}): pip install "
                                "'strata-models[review]' or pip install syrupy") from None

    collector = pytest.Module.from_parent(session, path=Path(strata.pytest_sql.__file__),
                                          nodeid=NODE)
    items.extend(collector.collect())
