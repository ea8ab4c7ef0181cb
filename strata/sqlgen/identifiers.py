"""Names an engine would cut short (issue 39 item 17).

PostgreSQL keeps the first 63 bytes of an identifier (NAMEDATALEN - 1) and drops the
rest without an error, so two column names that differ only past that point become
one: a model's table then has the same column twice and its CREATE TABLE fails
mid-run (E080), or a reference to one is ambiguous. The engine's limit is dialect
data (`Dialect.max_identifier_bytes`); this check reads it, whatever the engine.

What is checked is the model's query as rendered: every column, alias and CTE name
in it, including the ones the compiler makes from the user's (`customer_2`,
`orders_id`). Relation names are left out: a model's tables and views get a
physical name that keeps long ones apart (PostgresAdapter.physical_name), and a
source's table exists in the engine under the name the engine gave it.

A clash is E091 (the dialect cannot express this) pointing at the model, found by
`compile --dialect D` / `build` before any statement is printed, and by `run -o` on
that engine before anything is built. `strata check` does not know the engine and
does not look.
"""

from __future__ import annotations

from sqlglot import exp

from dialects.base import Dialect
from strata.diagnostics import fail
from strata.semantics.module import Module
from strata.sqlgen.build import Relations, model_query
from strata.textsafe import shown_name


def cut(name: str, max_bytes: int) -> str:
    """The name as the engine keeps it: its first `max_bytes` bytes of UTF-8, never
    half a character (PostgreSQL's pg_mbcliplen)."""
    return name.encode()[:max_bytes].decode(errors="ignore")


def clashes(tree: exp.Expression, max_bytes: int) -> list[tuple[str, str]]:
    """Pairs of different names in `tree` (not relation names) that are one name once
    cut to `max_bytes`."""
    kept: dict[str, str] = {}
    found: list[tuple[str, str]] = []
    for node in tree.find_all(exp.Identifier):
        name = node.this
        if isinstance(node.parent, exp.Table) or len(name.encode()) < max_bytes - 3:
            continue  # kept whole, and no cut name is that short (a cut drops at most
            # the 3 bytes of a character it would split)
        short = cut(name, max_bytes)
        other = kept.setdefault(short, name)
        if other != name and (other, name) not in found:
            found.append((other, name))
    return found


def check_model(module: Module, name: str, tree: exp.Expression, dialect: Dialect) -> None:
    """E091 at the model when two of its names are one to the engine."""
    limit = dialect.max_identifier_bytes
    if limit is None:
        return
    found = clashes(tree, limit)
    if not found:
        return
    first, second = found[0]
    raise fail("E091", f"{dialect.name} keeps the first {limit} bytes of a name, and "
               f"model `{shown_name(name)}` has two names that are the same there: "
               f"`{first}` and `{second}`", module.models[name].decl.name_span,
               f"rename one so that they differ in their first {limit} bytes (a name "
               "made from a join's alias and a column, as `alias_column`, counts too)")


def check_models(module: Module, models: list[str], dialect: Dialect,
                 relations: Relations) -> None:
    """The check for the models a run is about to build, before it builds any."""
    if dialect.max_identifier_bytes is None:
        return
    for name in models:
        check_model(module, name, model_query(module.plan(name), relations), dialect)
