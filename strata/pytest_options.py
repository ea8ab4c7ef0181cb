"""What a project configured for the pytest plugin (strata/pytest_plugin.py): the
modules whose SQL is locked and the dialects. Read by the plugin, to know whether
to add the SQL tests at all, and by the tests (strata/pytest_sql.py) it then adds.
"""

from __future__ import annotations

from pathlib import Path

import pytest


def configured_modules(config: pytest.Config) -> list[Path]:
    """--strata-module paths (relative to where pytest runs), then the ini's (relative
    to the ini file, as pytest reads `paths`)."""
    here = config.invocation_params.dir
    return [here / p for p in config.getoption("strata_module")] + \
        list(config.getini("strata_modules"))


def configured_dialects(config: pytest.Config) -> list[str]:
    import dialects

    names = config.getoption("strata_dialect") or config.getini("strata_dialects")
    return list(dict.fromkeys(names)) or [dialects.DEFAULT]
