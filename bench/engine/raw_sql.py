"""The raw floor: run a file of `;\n`-separated SQL statements in one DuckDB
connection; print the seconds the statements took (the process is timed outside).
Usage: python raw_sql.py WAREHOUSE.duckdb FILE.sql"""

import sys
import time

import duckdb

con = duckdb.connect(sys.argv[1])
with open(sys.argv[2]) as f:
    statements = [s.strip() for s in f.read().split(";\n") if s.strip()]
start = time.perf_counter()
for statement in statements:
    con.execute(statement)
print(time.perf_counter() - start)
con.close()
