"""Point a rendered canonical query at physical relations, without rendering again.

A run renders every model's canonical SQL (relations by logical name: `__model.x`,
`__source.y`) for its code fingerprint. The statement it executes differs from that
text only in those relation names, and rendering a second tree costs about as much
as the first (~0.5 ms a model: most of a trivial model's own cost). So the executed
SQL is the canonical text with each placeholder replaced, found by a scan that steps
over string literals and quoted identifiers. Whatever the scan cannot vouch for (a
comment, an alias that looks like a placeholder schema, a bare replacement name that
a CTE of the query also has) returns None and the caller renders the tree.
"""

from __future__ import annotations

import re

from strata.plan import Plan

PLACEHOLDER_SCHEMAS = ("__model", "__source")

# One token at a time: a string literal, a quoted identifier, or `__kind.name` that
# no identifier character, dot or quote touches on either side (`x.__model.y` and
# `__model.y.z` are not placeholders).
_TOKEN = re.compile(
    r"""'(?:[^']|'')*'"""
    r'''|"(?:[^"]|"")*"'''
    r'''|(?<![\w."])(__model|__source)\.("(?:[^"]|"")*"|[A-Za-z_]\w*)(?![\w".(])''')


def relink(canonical: str, plan: Plan, relations: dict[tuple[str, str], str]) -> str | None:
    """`canonical` with `__kind.name` replaced by `relations[(kind, name)]` (FROM-item
    SQL), or None when the text cannot be relinked safely."""
    if "/*" in canonical or _aliases_shadow(plan):
        return None
    if any(_bare(sql) and _defines_cte(canonical, sql) for sql in relations.values()):
        return None
    missing = False
    found = 0

    def replace(match: re.Match) -> str:
        nonlocal missing, found
        kind = match.group(1)
        if kind is None:  # a literal or a quoted identifier: as it is
            return match.group(0)
        name = match.group(2)
        if name.startswith('"'):
            name = name[1:-1].replace('""', '"')
        target = relations.get((kind[2:], name))
        if target is None:
            missing = True
            return match.group(0)
        found += 1
        return target

    out = _TOKEN.sub(replace, canonical)
    if missing or found == 0:
        return None
    return out


def _aliases_shadow(plan: Plan) -> bool:
    """An alias named like a placeholder schema would make `__model.x` ambiguous."""
    aliases = [plan.base.alias] + [getattr(s, "alias", None) for s in plan.stages]
    return any(a in PLACEHOLDER_SCHEMAS for a in aliases if a)


def _bare(relation_sql: str) -> bool:
    """A relation without a schema (`orders`, the usual source) is read as a CTE of
    the same name if the query has one."""
    return "." not in relation_sql and "(" not in relation_sql


def _defines_cte(canonical: str, name: str) -> bool:
    """Does the canonical text name a CTE `name`? It was planned without knowing the
    physical names (rendering over them would have picked another CTE name)."""
    return re.search(r'(?:\bWITH|,)\s+' + re.escape(name) + r'\s+AS\s+\(', canonical) is not None
