"""A run's date and time in a model's SQL: `run_date()` and `run_timestamp()`.

A model may read the moment its run started without losing content identity: the
value is bound once when a run starts, recorded in its history entry (beside the
sources' fingerprints, so a change of value makes the models that read it stale, and
only those), and used again by `replay`, `verify` and `backfill`.

The compiled tree holds a placeholder column, `__run.run_date`, in the model's
canonical SQL (so the code fingerprint does not move with the clock); every query a
run executes has it replaced by the run's value as a typed literal:

    WHERE orders.ordered_at <= __run.run_date           -- canonical
    WHERE orders.ordered_at <= CAST('2026-12-02' AS DATE) -- as the run executes it
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from sqlglot import exp

from strata.plan import RelationRef
from strata.sqlgen.literals import lit
from strata.sqlgen.names import column

CLOCK = "__run"  # the placeholder's table name: no relation is ever called so
NAMES = ("run_date", "run_timestamp")

# a `__run.name` token outside string literals and quoted identifiers
_TOKEN = re.compile(r"""'(?:[^']|'')*'|"(?:[^"]|"")*"|(?<![\w."])__run\.(run_date|run_timestamp)"""
                    r"""(?![\w".(])""")


@dataclass(frozen=True)
class RunClock:
    """The moment a run is bound to: `run_timestamp()` is it (to the second),
    `run_date()` its date."""

    at: dt.datetime

    @classmethod
    def parse(cls, text: str) -> RunClock | None:
        """A clock from `--at` / a history entry: a date (midnight) or a date and time;
        None when the text is neither."""
        try:
            value = dt.datetime.fromisoformat(text.strip())
        except ValueError:
            return None
        return cls(value.replace(microsecond=0, tzinfo=None))

    def value(self, name: str):
        return self.at.date() if name == "run_date" else self.at

    def fingerprints(self, names) -> dict[str, str]:
        """`run_date()` -> its value as text, for each name read: what a run records
        beside its sources' fingerprints."""
        return {f"{n}()": str(self.value(n)) for n in sorted(names)}

    def literal(self, name: str) -> exp.Expression:
        return lit(self.value(name))


def clock_column(name: str) -> exp.Column:
    """The placeholder a call of `name()` compiles to."""
    return column(name, CLOCK)


def is_clock(node: exp.Expression) -> bool:
    return isinstance(node, exp.Column) and node.table == CLOCK and node.name in NAMES


def bind_clock(tree: exp.Expression, relations) -> exp.Expression:
    """`tree` with each placeholder replaced by what `relations` says the clock reads
    (`RelationRef("clock", name)`): the run's literal, or the placeholder itself for
    the canonical text."""
    def swap(node: exp.Expression) -> exp.Expression:
        return relations(RelationRef("clock", node.name), None) if is_clock(node) else node
    return tree.transform(swap, copy=False)


def relink_clock(text: str, literals: dict[str, str]) -> str:
    """The canonical text with each placeholder replaced by its literal's text."""
    return _TOKEN.sub(lambda m: literals[m.group(1)] if m.group(1) else m.group(0), text)
