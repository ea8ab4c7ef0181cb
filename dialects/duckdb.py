"""DuckDB: the embedded default. Transactional DDL, reads CSV/Parquet in a query."""

from __future__ import annotations

from sqlglot import exp

from dialects.base import Dialect


class DuckDB(Dialect):
    def file_source(self, path: str, source_name: str,
                    types: dict[str, exp.DataType] | None = None) -> exp.Expression:
        parquet = path.lower().endswith((".parquet", ".pq"))
        if not parquet and types is not None:
            return csv_reader(path, {n: t.sql("duckdb") for n, t in types.items()})
        reader = "read_parquet" if parquet else "read_csv"
        args: list[exp.Expression] = [exp.Literal.string(path)]
        # A Table around the call, so the caller can alias it (`FROM read_csv(..) AS o`):
        # the model's columns are read as `<alias>.<column>`.
        return exp.Table(this=exp.Anonymous(this=reader, expressions=args))


# ---------------------------------------------------------------- engine data
# How DuckDB's own type names map onto Strata's type kinds, for source contracts
# and `pin columns` checks against real tables.
TYPE_KINDS = {
    "TINYINT": "int", "SMALLINT": "int", "INTEGER": "int", "BIGINT": "int", "HUGEINT": "int",
    "UTINYINT": "int", "USMALLINT": "int", "UINTEGER": "int", "UBIGINT": "int",
    "UHUGEINT": "int", "FLOAT": "double", "DOUBLE": "double", "VARCHAR": "text",
    "BOOLEAN": "bool", "DATE": "date", "TIMESTAMP": "timestamp", "TIMESTAMP_NS": "timestamp",
    "TIMESTAMP_MS": "timestamp", "TIMESTAMP_S": "timestamp",
}

DIALECT = DuckDB(name="duckdb", sqlglot="duckdb", transactional_ddl=True,
                 create_or_replace_view=True, reads_files=True, row_hash="hash",
                 fingerprints_files=True, type_kinds=tuple(TYPE_KINDS.items()))


def quoted(name: str) -> str:
    """A DuckDB identifier in double quotes (plain string work: this runs per column of
    every table a run hashes)."""
    return '"' + name.replace('"', '""') + '"'


def row_hash_expr(columns: list[str]) -> str:
    """The per-row hash of `columns` (a constant for a table without columns)."""
    return f"hash({', '.join(quoted(c) for c in columns)})" if columns else "0::UBIGINT"


def row_hash_aggregate(columns: list[str]) -> str:
    """count, sum and xor of a per-row hash: an order-independent content hash whose
    parts add up (so a layered snapshot's hash is derived from its layers)."""
    return row_hash_parts(row_hash_expr(columns))


def row_hash_parts(row: str) -> str:
    """count, sum and xor (as text: sums exceed 64 bits) of the row hashes `row`."""
    return (f"count(*), coalesce(sum({row}::HUGEINT), 0)::VARCHAR, "
            f"coalesce(bit_xor({row}), 0)::VARCHAR")


def csv_reader(path: str, types: dict[str, str]) -> exp.Expression:
    """read_csv with the declared types forced, so the contract, not a guess, types it."""
    args: list[exp.Expression] = [exp.Literal.string(path)]
    if types:
        struct = exp.Struct(expressions=[
            exp.PropertyEQ(this=exp.Literal.string(name), expression=exp.Literal.string(t))
            for name, t in types.items()])
        args.append(exp.PropertyEQ(this=exp.to_identifier("types"), expression=struct))
    # a Table around the call, as in file_source, so it can take the model's alias
    return exp.Table(this=exp.Anonymous(this="read_csv", expressions=args))


# Integer types whose values can index a bitmap: a uniqueness check on them is one
# `bitstring_agg` pass instead of a hash aggregate over every distinct key.
INTEGER_TYPES = frozenset({"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT",
                           "USMALLINT", "UINTEGER", "UBIGINT"})


def bitmap_distinct(slot: str, size: int) -> str:
    """How many distinct values an integer `slot` in [0, size) takes, in one pass over
    a bitmap of `size` bits (0 on no rows)."""
    return f"coalesce(bit_count(bitstring_agg({slot}, 0, {size - 1})), 0)"


def is_database_file(path) -> bool:
    """Does an existing, non-empty file start like a DuckDB database (the `DUCK`
    magic after the 8-byte checksum)? DuckDB 2 opens other files too: a CSV path
    becomes an in-memory database exposing it, where a run's writes would vanish."""
    try:
        with open(path, "rb") as f:
            head = f.read(12)
    except OSError:
        return True  # unreadable: DuckDB's own open says why (E070)
    return len(head) == 12 and head[8:12] == b"DUCK"
