"""`.ci/run` is exactly the README's test command (issue 15: both make sure PostgreSQL
and Java are there, and CI=true makes a missing engine fail the run, where a plain
`pytest` skips that engine's tests); it runs the suite on two processes."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def readme_test_command() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = text.split("Install what the tests need and run them", 1)[1]
    command = block.split("```sh", 1)[1].split("```", 1)[0].strip()
    return [part.strip() for part in command.split("&&")]


def ci_run_commands() -> list[str]:
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    return [line.strip() for line in lines
            if line.strip() and not line.startswith(("#", "set ", "cd "))]


def test_ci_run_runs_the_readme_test_command_in_order():
    # .ci/run may upgrade pip first on a fresh runner; every other step is the README's
    steps = [c for c in ci_run_commands() if c != ".venv/bin/pip install -q --upgrade pip"]
    assert steps == readme_test_command()


def test_the_test_command_installs_the_engines_and_is_strict_about_them():
    steps = readme_test_command()
    assert steps[0] == ".ci/engines"
    assert steps[-1].startswith("CI=true ") and "pytest" in steps[-1]
    assert (ROOT / ".ci" / "engines").stat().st_mode & 0o111


def test_the_suite_runs_on_two_processes_with_spark_on_one_of_them():
    """pytest-xdist (`-n 2`) keeps a 2-core CI machine busy while a test waits on a
    CLI subprocess or an engine; `--dist loadgroup` honours conftest's `spark` group
    (one Spark JVM per run). The plugin comes with the command's own install."""
    pytest_args = shlex.split(readme_test_command()[-1])
    assert pytest_args[pytest_args.index("-n") + 1] == "2"
    assert pytest_args[pytest_args.index("--dist") + 1] == "loadgroup"
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]["test"]
    assert any(re.match(r"pytest-xdist\b", requirement) for requirement in extra), extra


def _spark_test_without_java(ci: str | None) -> subprocess.CompletedProcess:
    """A test that needs Spark (the Spark Connect fixture's own test: a small module
    to collect), run where no `java` can be found."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("JAVA_HOME", "CI") and not k.startswith("PYTEST_XDIST")}
    env["PATH"] = ""
    if ci is not None:
        env["CI"] = ci
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs",
         "tests/test_engine_fixtures.py", "-k", "spark_connect_url"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)


def test_a_missing_engine_is_skipped_locally_and_fails_in_ci():
    local = _spark_test_without_java(None)
    assert local.returncode == 0 and "1 skipped" in local.stdout, local.stdout
    assert "no `java`" in local.stdout
    ci = _spark_test_without_java("true")
    assert ci.returncode == 1 and "CI needs every engine" in ci.stdout, ci.stdout
