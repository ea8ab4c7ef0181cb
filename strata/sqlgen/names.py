"""Identifiers through SQLGlot nodes, quoted whenever plain text would not be safe."""

from __future__ import annotations

import re
from functools import lru_cache

from sqlglot import exp
from sqlglot.tokens import Tokenizer

_PLAIN = re.compile(r"^[a-z_][a-z0-9_]*$")
# Every word any SQLGlot tokenizer knows as a keyword, plus a few that some engines
# reserve without SQLGlot treating them as tokens.
_RESERVED = {k.lower() for k in Tokenizer.KEYWORDS if k.replace("_", "").isalpha()} | {
    "all", "and", "any", "array", "as", "between", "by", "case", "cast", "check", "collate",
    "column", "constraint", "create", "cross", "current", "default", "distinct", "do", "else",
    "end", "except", "false", "fetch", "for", "foreign", "from", "full", "grant", "group",
    "having", "in", "inner", "intersect", "interval", "into", "is", "join", "lateral", "left",
    "like", "limit", "natural", "not", "null", "of", "offset", "on", "only", "or", "order",
    "outer", "over", "partition", "primary", "qualify", "range", "references", "right", "rows",
    "select", "some", "table", "then", "to", "true", "union", "unique", "user", "using",
    "values", "when", "where", "window", "with", "year", "month", "day", "hour", "minute",
    "second", "date", "time", "timestamp", "value", "position", "key", "level", "language",
}


@lru_cache(maxsize=65536)
def needs_quotes(name: str) -> bool:
    return not _PLAIN.match(name) or name in _RESERVED


def ident(name: str) -> exp.Identifier:
    return exp.Identifier(this=name, quoted=needs_quotes(name))


def dotted(*parts: str) -> str:
    """`table(*parts)` as DuckDB text, written directly (rendering a Table node through
    SQLGlot costs ~0.1 ms; a run writes one for every relation a model reads)."""
    return ".".join('"' + p.replace('"', '""') + '"' if needs_quotes(p) else p for p in parts)


def column(name: str, table: str | None = None) -> exp.Column:
    return exp.Column(this=ident(name), table=ident(table) if table else None)


def table(*parts: str, alias: str | None = None) -> exp.Table:
    """A table from its name parts (catalog.db.name, any prefix optional)."""
    *prefix, name = parts
    args = {"this": ident(name)}
    if prefix:
        args["db"] = ident(prefix[-1])
    if len(prefix) > 1:
        args["catalog"] = ident(prefix[-2])
    node = exp.Table(**args)
    if alias:
        node.set("alias", exp.TableAlias(this=ident(alias)))
    return node


def aliased(node: exp.Expression, name: str) -> exp.Expression:
    """`node AS name`, leaving out the alias when the column already has that name."""
    if isinstance(node, exp.Column) and node.name == name:
        return node
    return exp.Alias(this=node, alias=ident(name))
