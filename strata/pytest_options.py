"""What a project configured for the pytest plugin (strata/pytest_plugin.py): the
modules whose SQL is locked and the dialects. Read by the plugin, to know whether
to add the SQL tests at all, and by the tests (strata/pytest_sql.py) it then adds.
"""

from __future__ import annotations

from pathlib import Path

import pytest


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
