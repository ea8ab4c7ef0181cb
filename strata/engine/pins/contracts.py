"""`pin columns` (a contract) against the columns and types the engine reports.
"""

from __future__ import annotations

from dialects import duckdb as duck
from dialects.base import Dialect
from strata.semantics.checks import types_fit
from strata.semantics.types import Type


def contract_problems_engine(contract, actual: list[tuple[str, str]],
                             dialect: Dialect = duck.DIALECT) -> list[str]:
    """`pin columns` against the real schema (names and the engine's types)."""
    have = dict(actual)
    want = dict(contract)
    problems = [f"lacks `{n}`" for n in want if n not in have]
    problems += [f"has `{n}`, which is not in the contract" for n in have if n not in want]
    for name, declared in want.items():
        if name in have and not _kind_fits(declared, have[name], dialect):
            problems.append(f"has `{name}` as {have[name]}, the contract says {declared}")
    return problems


def _kind_fits(declared: Type, engine_type: str, dialect: Dialect = duck.DIALECT) -> bool:
    """Does a column of this engine type hold the declared type? (Type names are the
    engine's: `dialect` reads them.)"""
    kind = dialect.type_kind(engine_type)
    if declared.kind == "list":
        element = dialect.element_type(engine_type)
        return (kind.startswith("list<") and element is not None
                and _kind_fits(declared.element, element, dialect))
    if kind.startswith(("other", "list")):
        return False
    if declared.kind == "decimal" and kind == "decimal":
        return dialect.keeps_scale(engine_type, declared.scale)
    return types_fit(declared, Type(kind))
