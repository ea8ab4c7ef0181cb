"""An engine whose Python client is not installed is a coded error naming the pip
extra that installs it, never a traceback (issue 18: every location kind of `-o`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "shop"

# The process runs the real CLI with the client's import refused, as Python refuses a
# module that is not installed (ModuleNotFoundError naming it).
WITHOUT = ("import sys; sys.modules[{module!r}] = None; sys.argv = {argv!r}; "
           "from strata.cli.main import main; main()")


@pytest.mark.parametrize(("location", "module", "extra"), [
    ("postgresql://me:s3cret@localhost/shop", "psycopg", "postgres"),
    ("spark:{tmp}/wh", "pyspark", "spark"),
    ("sc://localhost:15002", "pyspark", "spark"),
])
def test_a_missing_engine_client_is_E070_naming_the_extra(tmp_path, location, module,
                                                           extra):
    argv = ["strata", "run", str(EXAMPLE), "-o", location.format(tmp=tmp_path)]
    proc = subprocess.run([sys.executable, "-c", WITHOUT.format(module=module, argv=argv)],
                          capture_output=True, text=True, check=False, timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "error[E070]" in out, out
    assert f"`{module}`) is not installed" in out and f"'strata-models[{extra}]'" in out
    assert "Traceback" not in out and "s3cret" not in out
