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

    def file_source(self, path: str, source_name: str) -> exp.Expression:
        """The relation a `source x = file '...'` reads.

        Engines that cannot read files directly read the table named after the
        source: load the file into it first.
        """
        return exp.Table(this=exp.to_identifier(source_name, quoted=False))

    def render(self, tree: exp.Expression, pretty: bool = True, copy: bool = True) -> str:
        """The tree as SQL text. copy=False lets SQLGlot apply this engine's rewrites to
        `tree` itself instead of a deep copy: for a caller that drops the tree after."""
        # SQLGlot only logs a warning for what a dialect cannot express and renders
        # something wrong anyway; raising lets the compiler say E091 instead.
        return tree.sql(dialect=self.sqlglot, pretty=pretty, copy=copy,
                        unsupported_level=ErrorLevel.RAISE)
