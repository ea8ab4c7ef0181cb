"""Size and cost of the SQL an emulation writes: copied operands, bound ones, functions.

Issue 34: an emulation of DuckDB's meaning copied its operands' text, so nested
expressions grew ~2.3x per level on PostgreSQL and Spark. Operands were then bound
once (dialects/binding.py), and long spellings are now functions Strata owns
(dialects/routines.py). This bench renders the issue's expressions the three ways in
one run (the earlier ways are the same dialect with `bind=None` / `routines=None`)
and prints, per dialect: bytes and lines of the model's SQL (with functions: the
statement, plus the CREATE statements printed at its head) and the CPU seconds to
compile it; with `--postgres`, also the time PostgreSQL takes to run each statement
over N rows, bound inline against functions (a throwaway cluster on a Unix socket,
tests/real_engines.py's).

    python3 bench/sqlsize/run.py                  # the size table
    python3 bench/sqlsize/run.py --postgres 200000 # and execution on PostgreSQL
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import dialects
import strata
from dialects import routines
from strata.semantics.resolve import load_text

SOURCE = "source t { a: double, b: int, c: decimal(10, 2), k: int }\n"
# after grouping (dialects/grouped.py): `sa`, `n`, `sc` are each group's aggregates
GROUPED = "group k\n  aggregate sa = sum(a), n = count(), sc = sum(c)\n  derive r = {}\n  select k, r"


def nested(depth: int, inner: str, outer: str) -> str:
    for _ in range(depth):
        inner = outer.format(inner)
    return inner


EXPRESSIONS = {
    "round(a / b, 2)": "round(a / b, 2)",
    "round(round(round(round(a/b,2)/c,2)/b,2)/c,2)":
        "round(round(round(round(a / b, 2) / c, 2) / b, 2) / c, 2)",
    "round nested 8": nested(8, "a", "round({}, 2)"),
    "12 divisions": nested(12, "a", "{} / b"),
    "30 divisions": nested(30, "a", "{} / b"),
    "grouped: round(sa / n, 2)": (GROUPED, "round(sa / n, 2)"),
    "grouped: round(..(sa / n, 2) / sc, 2) nested 4":
        (GROUPED, "round(round(round(round(sa / n, 2) / sc, 2) / n, 2) / sc, 2)"),
    "grouped: round nested 8": (GROUPED, nested(8, "sa / n", "round({}, 2)")),
}


MODES = ("copied", "bound", "functions")


def render(expr: str | tuple[str, str], dialect_name: str, mode: str) -> tuple[str, str, float]:
    """(the functions' CREATE statements, the model's statement, CPU seconds) as the
    dialect renders it: "copied", every operand's text copied (bind=None, no
    functions); "bound", operands named once inline (no functions); "functions", now."""
    step, expr = expr if isinstance(expr, tuple) else ("derive r = {}\n  select r", expr)
    module = load_text(SOURCE + f"model x {{\n  from t\n  {step.format(expr)}\n}}\n")
    dialect = dialects.DIALECTS[dialect_name]
    if mode != "functions":
        dialects.DIALECTS[dialect_name] = dataclasses.replace(
            dialect, routines=None, **({"bind": None} if mode == "copied" else {}))
    try:
        start = time.process_time()
        sql = strata.model_sql(module, "x", dialect_name)
        return routines.heading([sql]), sql, time.process_time() - start
    finally:
        dialects.DIALECTS[dialect_name] = dialect


def size_table(unbound_limit: int) -> None:
    print("| expression | dialect | bytes copied | bound | functions: statement + CREATEs "
          "| lines copied | bound | functions | compile CPU s copied | bound | functions |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, expr in EXPRESSIONS.items():
        for name in dialects.DIALECTS:
            cells = {}
            for mode in MODES:
                if mode == "copied" and not _copied_renders(label, expr, unbound_limit):
                    cells[mode] = ("(not rendered)",) * 3
                    continue
                head, sql, cpu = render(expr, name, mode)
                size = f"{len(sql)} + {len(head)}" if head else str(len(sql))
                lines = sql.count("\n") + 1
                cells[mode] = (size, f"{lines} + {head.count(chr(10))}" if head else str(lines),
                               f"{cpu:.2f}")
            print(f"| `{label}` | {name} | " + " | ".join(
                " | ".join(cells[m][i] for m in MODES) for i in range(3)) + " |")


# PostgreSQL planning the 55 kB of the copied round(..) nested 4 grew past 21 GB and was
# killed by the kernel (2026-12-03): copied SQL is no longer sent
COPIED_TOO_BIG = {"grouped: round(..(sa / n, 2) / sc, 2) nested 4", "grouped: round nested 8"}


def _copied_renders(label: str, expr: str | tuple[str, str], unbound_limit: int) -> bool:
    text = expr[1] if isinstance(expr, tuple) else expr
    return label not in COPIED_TOO_BIG and len(text) <= unbound_limit


def on_postgres(rows: int, reps: int) -> None:
    """Bound operands (a fenced scalar subquery) against functions of Strata's, over
    `rows` rows, each statement's median of `reps`."""
    sys.path.insert(0, str(REPO / "tests"))
    import psycopg
    from real_engines import PostgresServer, _pg_bindir, _server_user

    server = PostgresServer(Path(tempfile.mkdtemp(prefix="bench-sqlsize-")), _pg_bindir(),
                            _server_user())
    server.start()
    try:
        with psycopg.connect(host=str(server.root), user="postgres", dbname="postgres",
                             autocommit=True) as con:
            con.execute(f"CREATE TABLE t AS SELECT random() * 1000 - 500 AS a, "
                        f"(i % 7 - 3)::bigint AS b, (i % 1000 / 10.0)::numeric(10, 2) AS c, i % 1000 AS k "
                        f"FROM generate_series(1, {rows}) i")
            con.execute("ANALYZE t")
            con.execute(f"CREATE SCHEMA {routines.SCHEMA}")
            con.execute("SET statement_timeout = '120s'")
            print(f"\n| expression | PostgreSQL s, bound inline | functions | ratio |  ({rows} "
                  f"rows, median of {reps})")
            print("|---|---:|---:|---:|")
            for label, expr in EXPRESSIONS.items():
                times = {}
                for mode in ("bound", "functions"):
                    head, sql, _ = render(expr, "postgres", mode)
                    if head:
                        con.execute(head)
                    times[mode] = _time(con, f"SELECT count(*), sum(r) FROM ({sql}) q", reps)
                ratio = (f"{times['functions'] / times['bound']:.2f}" if all(
                    isinstance(t, float) for t in times.values()) else "")
                print(f"| `{label}` | {_seconds(times['bound'])} | {_seconds(times['functions'])} "
                      f"| {ratio} |")
    finally:
        server.stop()


def _time(con, query: str, reps: int) -> float | str:
    """Median seconds of `query`, or the error that stopped it (out of memory, timeout)."""
    import psycopg

    samples = []
    for _ in range(reps):
        start = time.perf_counter()
        try:
            con.execute(query).fetchall()
        except psycopg.Error as err:
            return type(err).__name__
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def _seconds(value: float | str) -> str:
    return f"{value:.3f}" if isinstance(value, float) else value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", type=int, metavar="ROWS", default=0)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--unbound-limit", type=int, default=90,
                        help="skip the copied-operand rendering of longer expressions "
                             "(30 divisions, or round nested 8 over aggregates, would take "
                             "minutes and gigabytes)")
    args = parser.parse_args()
    size_table(args.unbound_limit)
    if args.postgres:
        on_postgres(args.postgres, args.reps)


if __name__ == "__main__":
    main()
