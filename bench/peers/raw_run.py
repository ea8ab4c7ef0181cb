"""The raw-DuckDB floor: run a file of SQL statements in one Python process
with one duckdb connection.  Usage: python raw_run.py WAREHOUSE.duckdb FILE.sql [FILE.sql ...]"""
import sys

import duckdb


def statements(text: str) -> list[str]:
    # generate.py ends every statement with ";\n" and never puts ";" inside one.
    return [s.strip() for s in text.split(";\n") if s.strip()]


def main() -> None:
    con = duckdb.connect(sys.argv[1])
    for path in sys.argv[2:]:
        with open(path) as f:
            for stmt in statements(f.read()):
                con.execute(stmt)
    con.close()


if __name__ == "__main__":
    main()
