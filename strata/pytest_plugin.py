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

from pathlib import Path

import pytest

from strata.pytest_options import configured_modules

NODE = "strata-sql"  # the collector's node id: tests read strata-sql::test_model_sql[...]


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


def pytest_configure(config: pytest.Config) -> None:
    """A model's locked file left unused (the model was deleted or renamed) fails the
    run: syrupy then names each such file (its --snapshot-details), which holds the
    module, dialect and model, instead of only counting them (issue 38).

    A test id the plugin prints (`strata-sql::test_model_sql[models/duckdb/orders]`)
    is no file pytest could collect: such arguments are taken out of pytest's and
    select among the SQL tests instead, so an id printed by one run can be passed to
    the next (issue 38)."""
    if configured_modules(config) and hasattr(config.option, "include_snapshot_details"):
        config.option.include_snapshot_details = True
    ours = [a for a in config.args if _names_ours(a)]
    if ours:
        config.args[:] = [a for a in config.args if not _names_ours(a)]
        config.stash[_CHOSEN] = ours


def _names_ours(arg: str) -> bool:
    return arg == NODE or arg.startswith(NODE + "::")


_CHOSEN = pytest.StashKey[list]()  # the SQL tests named on the command line


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
    added = collector.collect()
    chosen = config.stash.get(_CHOSEN, None)
    if chosen is not None:  # only the SQL tests named, as pytest selects by node id
        kept = [i for i in added if any(i.nodeid == c or i.nodeid.startswith(c + "[")
                                        or c in (NODE, NODE + "::test_model_sql")
                                        for c in chosen)]
        if not kept:
            raise pytest.UsageError(f"no Strata SQL test has the id {chosen[0]!r}: run "
                                    "pytest --collect-only -q to list them")
        config.hook.pytest_deselected(items=[i for i in added if i not in kept])
        added = kept
    items.extend(added)
