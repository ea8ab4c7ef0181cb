"""merge_strategy history: a type-2 history of a changing relation (dbt's snapshots).

The model's rows are the relation as it is now, each with `valid_from` the run's
timestamp and `valid_to` NULL (semantics/checks.py adds them). A merge composes them
with the previous snapshot, the history so far, into a new table (published tables
are never changed): a version is a key's values (every column but the two), open
while `valid_to` is NULL.

    WITH <the model's CTEs>, __cur AS (<the model's final select>)
    SELECT cols FROM <previous> AS __prev WHERE __prev.valid_to IS NOT NULL   -- closed
    UNION ALL
    SELECT cols FROM <previous> AS __prev WHERE __prev.valid_to IS NULL       -- unchanged
      AND EXISTS (SELECT 1 FROM __cur WHERE <every column matches, NULL with NULL>)
    UNION ALL
    SELECT <cols but valid_to>, <run timestamp> AS valid_to FROM <previous> AS __prev
      WHERE __prev.valid_to IS NULL AND NOT EXISTS (<the same probe>)        -- closed now
    UNION ALL
    SELECT cols FROM __cur WHERE NOT EXISTS (SELECT 1 FROM <previous> AS __prev
      WHERE __prev.valid_to IS NULL AND <every column matches>)              -- opened now

A changed row closes its key's open version and opens a new one; an unchanged row
does nothing; a key gone from the relation has its open version closed (a key that
comes back opens a new one). Probes are filters only (no EXISTS in a select list,
which Spark refuses), and the match is null-safe, spelled per engine (`match`).
"""

from __future__ import annotations

from sqlglot import exp

from strata.sqlgen.names import column, ident, table
from strata.sqlgen.rewrites import PREV, KeyMatch, keys_match, null_safe

CURRENT = "__cur"
VALID_FROM, VALID_TO = "valid_from", "valid_to"


def history_query(columns: list[str], previous: exp.Expression, current: exp.Select,
                  at: exp.Expression, match: KeyMatch = null_safe) -> exp.Expression:
    """The new history: `previous` (a table) merged with `current` (the model's
    query, as the run reads its relations) at the run's timestamp `at`."""
    compared = tuple(c for c in columns if c not in (VALID_FROM, VALID_TO))
    with_ = current.args.get("with_")
    current.set("with_", None)
    body = current.copy()
    current.set("with_", with_)
    ctes = [*(with_.expressions if with_ else []),
            exp.CTE(this=body, alias=exp.TableAlias(this=ident(CURRENT)))]

    def prev_rows(items: list[exp.Expression], where: exp.Expression) -> exp.Select:
        prev = previous.copy()
        prev.set("alias", exp.TableAlias(this=ident(PREV)))
        part = exp.Select(expressions=items)
        part.set("from_", exp.From(this=prev))
        part.set("where", exp.Where(this=where))
        return part

    def in_current() -> exp.Exists:
        probe = exp.Select(expressions=[exp.Literal.number(1)])
        probe.set("from_", exp.From(this=table(CURRENT)))
        probe.set("where", exp.Where(this=keys_match(compared, CURRENT, PREV, match)))
        return exp.Exists(this=probe)

    def is_open() -> exp.Expression:
        return exp.Is(this=column(VALID_TO, PREV), expression=exp.Null())

    kept = [column(c, PREV) for c in columns]
    closed = prev_rows(kept, exp.Not(this=is_open()))
    unchanged = prev_rows([column(c, PREV) for c in columns],
                          exp.And(this=is_open(), expression=in_current()))
    ending = [column(c, PREV) if c != VALID_TO else exp.Alias(this=at.copy(), alias=ident(VALID_TO))
              for c in columns]
    ended = prev_rows(ending, exp.And(this=is_open(), expression=exp.Not(this=in_current())))
    probe = exp.Select(expressions=[exp.Literal.number(1)])
    prev = previous.copy()
    prev.set("alias", exp.TableAlias(this=ident(PREV)))
    probe.set("from_", exp.From(this=prev))
    probe.set("where", exp.Where(this=exp.And(
        this=is_open(), expression=keys_match(compared, CURRENT, PREV, match))))
    opened = exp.Select(expressions=[column(c, CURRENT) for c in columns])
    opened.set("from_", exp.From(this=table(CURRENT)))
    opened.set("where", exp.Where(this=exp.Not(this=exp.Exists(this=probe))))
    out: exp.Expression = closed
    for part in (unchanged, ended, opened):
        out = exp.Union(this=out, expression=part, distinct=False)
    out.set("with_", exp.With(expressions=ctes))
    return out
