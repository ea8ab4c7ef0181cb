"""The example modules under examples/, loaded and compiled from the repository root,
so file paths in the rendered SQL are the same on every machine
(`examples/shop/data/orders.csv`)."""

from __future__ import annotations

import contextlib
import datetime as dt
from functools import cache
from pathlib import Path

from strata.compiler import Statement, compile_statements
from strata.semantics.module import Module
from strata.semantics.resolve import load_module
from strata.sqlgen.clock import RunClock

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES_DIR = ROOT / "examples"
EXAMPLES = sorted(p.name for p in EXAMPLES_DIR.iterdir()
                  if p.is_dir() and any(p.rglob("*.strata")))
DIALECTS = ("duckdb", "postgres", "snowflake", "bigquery", "spark", "trino")


@cache
def load(example: str) -> Module:
    with contextlib.chdir(ROOT):
        module = load_module(Path("examples") / example)
    assert module.ok, [d.message for d in module.errors]
    return module


# run_date() and run_timestamp() of the examples' statements: a fixed moment, so the
# snapshots and the rows compared do not change with the day the tests run
CLOCK = RunClock(dt.datetime(2024, 9, 30, 12, 0, 0))


@cache
def statements(example: str, dialect: str) -> tuple[Statement, ...]:
    with contextlib.chdir(ROOT):
        return tuple(compile_statements(load(example), dialect, clock=CLOCK))


def models(example: str) -> list[str]:
    return list(load(example).order)
