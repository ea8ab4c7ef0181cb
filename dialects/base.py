"""What an engine is, as data: its SQLGlot dialect and the few things that differ.

Each file beside this one describes one engine. `strata/` asks these objects and
never branches on a dialect's name.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import ErrorLevel, exp


@dataclass(frozen=True)
class Dialect:
    name: str  # the name users pass to --dialect
    sqlglot: str  # SQLGlot's dialect name
    transactional_ddl: bool  # can CREATE/DROP VIEW commit atomically with inserts?
    create_or_replace_view: bool
    reads_files: bool  # can a query read a CSV/Parquet path directly?
    row_hash: str | None = None  # SQL function hashing a row, for fingerprints

    def file_source(self, path: str, source_name: str,
                    types: dict[str, exp.DataType] | None = None) -> exp.Expression:
        """The relation a `source x = file '...'` reads; `types` are the declared
        column types, for a reader that would otherwise guess them.

        Engines that cannot read files directly read the table named after the
        source: load the file into it first.
        """
        return exp.Table(this=exp.to_identifier(source_name, quoted=False))

    def render(self, tree: exp.Expression, pretty: bool = True, copy: bool = True) -> str:
        """The tree as SQL text. copy=False lets SQLGlot apply this engine's rewrites to
        `tree` itself instead of a deep copy: for a caller that drops the tree after."""
        # SQLGlot only logs a warning for what a dialect cannot express and renders
        # something wrong anyway; raising lets the compiler say E091 instead.
        if type(self).adapt is not Dialect.adapt:
            tree = self.adapt(tree.copy() if copy else tree)
            copy = False
        return tree.sql(dialect=self.sqlglot, pretty=pretty, copy=copy,
                        unsupported_level=ErrorLevel.RAISE)

    def adapt(self, tree: exp.Expression) -> exp.Expression:
        """This engine's own rewrites of a (private) tree before rendering: where
        SQLGlot renders a function whose meaning differs from DuckDB's, the engine
        Strata's semantics follow. None by default."""
        return tree


def whole_weeks(node: exp.Expression) -> exp.Expression:
    """DuckDB's date_diff('week', a, b) counts whole weeks (days / 7, toward zero); an
    engine whose own week difference counts week boundaries gets that instead."""
    if isinstance(node, exp.DateDiff) and _unit(node) == "WEEK":
        days = exp.DateDiff(this=node.this, expression=node.expression, unit=exp.var("DAY"))
        return exp.IntDiv(this=days, expression=exp.Literal.number(7))
    return node


def _unit(node: exp.Expression) -> str:
    unit = node.args.get("unit")
    return unit.name.upper() if unit is not None else ""
