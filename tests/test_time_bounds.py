"""Time bounds in tests read CPU time, never the wall clock (issue 39, item 19): a
fresh clone's test run failed once on a loaded machine because a fuzz test timed
itself with `time.perf_counter`. A bound is the CPU time (user + system) of the test
process (`time.process_time()`) or of the CLI's process (the fork server's `wait4`,
or `getrusage(RUSAGE_CHILDREN)` for the script), or a growth ratio, n against 8n,
in the same run. The wall clock (`time.monotonic`) stays only as a deadline against
a hang."""

from __future__ import annotations

import ast
from pathlib import Path

from enginehelpers import strata

TESTS = Path(__file__).resolve().parent
WALL_CLOCKS = {"perf_counter", "perf_counter_ns", "time", "time_ns"}


def wall_clock_reads(source: str) -> list[int]:
    """Lines that read a wall clock other than `time.monotonic`: `time.perf_counter()`,
    `time.time()`, or such a name imported from `time`."""
    tree = ast.parse(source)
    lines = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr in WALL_CLOCKS
                and isinstance(node.value, ast.Name) and node.value.id == "time"):
            lines.append(node.lineno)
        if isinstance(node, ast.ImportFrom) and node.module == "time" and any(
                alias.name in WALL_CLOCKS for alias in node.names):
            lines.append(node.lineno)
    return lines


def test_no_test_times_itself_by_the_wall_clock():
    found = {path.relative_to(TESTS).as_posix(): lines
             for path in sorted(TESTS.rglob("*.py"))
             if (lines := wall_clock_reads(path.read_text(encoding="utf-8")))}
    assert found == {}


def test_the_wall_clock_check_sees_each_way_of_reading_it():
    assert wall_clock_reads("import time\nt = time.perf_counter()\n") == [2]
    assert wall_clock_reads("import time\nt = time.time()\n") == [2]
    assert wall_clock_reads("from time import perf_counter\n") == [1]
    assert wall_clock_reads("import time\nd = time.monotonic() + 5\n") == []
    assert wall_clock_reads("import time\nt = time.process_time()\n") == []


def test_a_cli_call_reports_the_cpu_time_its_process_used(tmp_path: Path):
    """The CPU seconds a CLI call carries are its own process's: a call that does more
    work reports more, and neither is zero."""
    small = tmp_path / "small.strata"
    small.write_text("source s { x: int }\nmodel m { from s }\n")
    large = tmp_path / "large.strata"
    large.write_text("source s { x: int }\n" + "".join(
        f"model m{i} {{ from s\n  derive y{i} = x + {i}\n  filter y{i} > 0 }}\n"
        for i in range(1500)))
    env = {"STRATA_NO_CACHE": "1"}
    light = strata("compile", str(small), "--show-sql", cwd=tmp_path, env=env, check=True)
    heavy = strata("compile", str(large), "--show-sql", cwd=tmp_path, env=env, check=True)
    assert 0 < light.cpu_seconds < heavy.cpu_seconds
