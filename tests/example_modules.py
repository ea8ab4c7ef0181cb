"""The example modules under examples/, loaded and compiled from the repository root,
so file paths in the rendered SQL are the same on every machine
(`examples/shop/data/orders.csv`)."""

from __future__ import annotations

import contextlib
from functools import cache
from pathlib import Path

from strata.compiler import Statement, compile_statements
from strata.semantics.module import Module
from strata.semantics.resolve import load_module

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


@cache
def statements(example: str, dialect: str) -> tuple[Statement, ...]:
    with contextlib.chdir(ROOT):
        return tuple(compile_statements(load(example), dialect))


def models(example: str) -> list[str]:
    return list(load(example).order)
