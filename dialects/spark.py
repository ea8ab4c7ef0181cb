"""Spark SQL: reads Parquet files in a query (`parquet.`path``); no transactional DDL.
Its DATEDIFF(unit, ..) counts whole units, DuckDB's date_diff boundaries: rewritten.

CSV is not read in place: `csv.`path`` takes no options, so the header row would
be data and the columns `_c0, _c1, ...` (all strings). A CSV source reads the table
named after it, like on engines that cannot read files: load the file into it first.
"""

from __future__ import annotations

from sqlglot import exp

from dialects.base import Dialect


class Spark(Dialect):
    def adapt(self, tree: exp.Expression) -> exp.Expression:
        return tree.transform(_boundaries, copy=False)

    def file_source(self, path: str, source_name: str,
                    types: dict[str, exp.DataType] | None = None) -> exp.Expression:
        if not path.lower().endswith((".parquet", ".pq")):
            return super().file_source(path, source_name, types)
        return exp.Table(this=exp.to_identifier(path, quoted=True),
                         db=exp.to_identifier("parquet", quoted=False))


def _boundaries(node: exp.Expression) -> exp.Expression:
    """DuckDB's date_diff counts unit boundaries crossed (2024-01-31 to 2024-02-01 is
    one month); Spark's DATEDIFF(unit, ..) counts whole units elapsed (zero). Whole
    units between the truncated values are the boundaries."""
    if isinstance(node, exp.DateDiff) and node.args.get("date_part_boundary"):
        unit = node.args["unit"]
        return exp.DateDiff(this=exp.TimestampTrunc(this=node.this, unit=unit.copy()),
                            expression=exp.TimestampTrunc(this=node.expression,
                                                          unit=unit.copy()),
                            unit=unit.copy())
    return node


DIALECT = Spark(name="spark", sqlglot="spark", transactional_ddl=False,
                create_or_replace_view=True, reads_files=True, row_hash="xxhash64")
