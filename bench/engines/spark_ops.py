"""The harness's own Spark work on one tool's local warehouse: load the sources,
change them, run the raw floor, read results. Run by the tool's own venv python
(dbt-spark and Strata: pyspark 4; SQLMesh: pyspark 3.5), so that each warehouse's
Derby metastore is only ever opened by the Spark version of the tool that uses it.

    python spark_ops.py DIR exec FILE...     each statement of the files (`;` + newline)
    python spark_ops.py DIR query < SQL.json  a JSON list of queries -> JSON list of rows
    python spark_ops.py DIR load PARQUET_DIR  default.orders/customers from parquet files

The session is the one `strata -o spark:DIR` opens (strata/engine/adapters/spark.py,
local_session): Hive catalog in DIR/metastore_db, tables in DIR/warehouse, local[2],
2 shuffle partitions, UTC; dbt's and SQLMesh's configs in run.py name the same.
`strata-sc`'s warehouse is held by its Spark Connect server: run.py sends the same
load, change and query statements through that server instead.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from decimal import Decimal
from pathlib import Path


def spark_conf(root: Path) -> dict[str, str]:
    """The Spark settings of a local warehouse in ROOT (shared with run.py)."""
    return {
        "spark.master": "local[2]",
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": str(root / "warehouse"),
        "spark.hadoop.javax.jdo.option.ConnectionURL":
            f"jdbc:derby:;databaseName={root / 'metastore_db'};create=true",
        "spark.driver.extraJavaOptions": f"-Duser.timezone=UTC -Dderby.system.home={root}",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": "2",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.legacy.allowNonEmptyLocationInCTAS": "true",
    }


def session(root: Path):
    from pyspark.sql import SparkSession

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = SparkSession.builder.appName("bench-engines")
    for key, value in spark_conf(root).items():
        builder = builder.config(key, value)
    spark = builder.enableHiveSupport().getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    logging.getLogger("py4j").setLevel(logging.ERROR)
    return spark


def load_statements(src: Path) -> list[str]:
    """default.orders/customers from the parquet files in SRC (also sent through a
    Spark Connect server by run.py, for `strata-sc`)."""
    return [
        "CREATE DATABASE IF NOT EXISTS default",
        "CREATE TABLE default.customers USING parquet AS SELECT CAST(id AS BIGINT) "
        "AS id, name, region FROM parquet.`" + str(src / "customers.parquet") + "`",
        "CREATE TABLE default.orders USING parquet AS SELECT CAST(id AS BIGINT) AS id, "
        "CAST(customer_id AS BIGINT) AS customer_id, "
        "CAST(amount AS DECIMAL(12, 2)) AS amount, status, "
        "CAST(updated_at AS TIMESTAMP) AS updated_at "
        "FROM parquet.`" + str(src / "orders.parquet") + "`",
    ]


def statements(path: str) -> list[str]:
    return [s for s in Path(path).read_text().split(";\n") if s.strip()]


def plain(value):
    if isinstance(value, Decimal):
        return str(value.normalize()) if value == value.to_integral() else str(value)
    return value


def main() -> None:
    root, op, *rest = sys.argv[1:]
    root_path = Path(root).resolve()
    root_path.mkdir(parents=True, exist_ok=True)
    spark = session(root_path)
    if op == "exec":
        for path in rest:
            for stmt in statements(path):
                spark.sql(stmt)
    elif op == "query":
        out = [[[plain(v) for v in row] for row in spark.sql(q).collect()]
               for q in json.load(sys.stdin)]
        print(json.dumps(out, default=str))
    elif op == "load":
        for stmt in load_statements(Path(rest[0])):
            spark.sql(stmt)
    else:
        raise SystemExit(f"unknown op {op}")
    spark.stop()


if __name__ == "__main__":
    main()
