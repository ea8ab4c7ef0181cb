"""What pin and join checks report: the log of what ran and was skipped
(`CheckLog`, which also renders and times every statement), a `Violation`, and
`PinError`, which fails a run before anything publishes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

from sqlglot import exp

from dialects import duckdb as duck
from dialects.base import Dialect
from strata.diagnostics import Diagnostic, Span, StrataError
from strata.engine.adapters.base import Adapter
from strata.sqlgen.build import Relations
from strata.sqlgen.clock import bind_clock

SAMPLE = 5
NOTHING_PUBLISHED = "nothing was published"


@dataclass
class CheckLog:
    """What was checked and what was skipped (and why), for --json and the display;
    every statement run, with its time, for tests and the benchmark.

    Statements are SQLGlot trees, rendered here for the warehouse's engine: `dialect`
    (DuckDB's unless a caller says otherwise), and `bitmaps` says whether that engine
    has DuckDB's `bitstring_agg`/`bit_count` for the one-scan uniqueness check (an
    engine without them groups by the key instead)."""

    ran: list[str] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)
    statements: list[str] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    dialect: Dialect = duck.DIALECT
    bitmaps: bool = True
    # the run's Relations where the model reads the run's clock: a check built from
    # the model's own expressions (a join condition) binds run_date() as its SQL does
    clock: Relations | None = None

    def render(self, statement: exp.Expression) -> str:
        if self.clock is not None:
            statement = bind_clock(statement, self.clock)
        # a statement's own nodes are built for it; the nodes it shares with the
        # check's other statements are only copied for an engine whose rewrites edit
        # the tree in place (DuckDB has none)
        return self.dialect.render(statement, pretty=False, copy=bool(self.dialect.rewrites))

    def sql(self, wh, statement: exp.Expression) -> None:
        self.rows(wh, statement)

    def rows(self, wh, statement: exp.Expression) -> list[tuple]:
        """The statement's rows from `wh`: an engine adapter (which renders for its
        engine: `dialect` should be its dialect), or a DuckDB warehouse/connection."""
        text = self.render(statement)
        started = time.perf_counter()
        # an adapter runs the text rendered here (its dialect is the log's): one render
        rows = wh.rows_text(text) if isinstance(wh, Adapter) else wh.execute(text).fetchall()
        self.statements.append(text)
        self.seconds.append(time.perf_counter() - started)
        return rows

    def skip(self, check: str, reason: str) -> None:
        self.skipped.append({"check": check, "reason": reason})


@dataclass(frozen=True)
class Violation:
    """One failed check: its code (E060–E064), the model, the check, how many rows (or
    key values) offend, and a sample of them."""

    code: str
    model: str
    check: str
    count: int
    message: str
    sample: tuple[dict, ...] = ()
    span: Span | None = None
    hint: str = NOTHING_PUBLISHED

    def diagnostic(self) -> Diagnostic:
        notes = (f"sample: {_sample_text(self.sample)}",) if self.sample else ()
        return Diagnostic(self.code, f"model `{self.model}`: {self.check} violated: "
                          f"{self.message}", self.span, self.hint, notes=notes)

    def to_json(self) -> dict:
        return {"code": self.code, "model": self.model, "check": self.check,
                "count": self.count, "message": self.message,
                "sample": [{k: _json_value(v) for k, v in row.items()} for row in self.sample]}


class PinError(StrataError):
    """Pins or join cardinality violated: the run fails and publishes nothing."""

    def __init__(self, violations: list[Violation], note: str | None = None):
        self.violations = list(violations)
        diagnostics = [v.diagnostic() for v in self.violations]
        if note and diagnostics:  # e.g. the models a failing model kept from being built
            last = diagnostics[-1]
            diagnostics[-1] = replace(last, notes=(*last.notes, note))
        super().__init__(diagnostics)


def _json_value(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    return str(value)


def _sample_text(sample) -> str:
    return "; ".join("(" + ", ".join(f"{k}={_shown(v)}" for k, v in row.items()) + ")"
                     for row in sample)


def _shown(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, str):
        if len(value) > 60:  # a sample is to recognise rows, not to dump them
            value = value[:57] + "..."
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_shown(v) for v in value[:10]) + (", ...]" if len(value) > 10
                                                                  else "]")
    return str(value)
