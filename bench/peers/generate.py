"""Generate the same synthetic project for Strata, dbt (dbt-duckdb), SQLMesh and raw DuckDB.

Two parts, generated independently so the harness can reuse them:

* data: a DuckDB file holding the two sources, ``orders`` (N rows) and
  ``customers`` (max(1000, N/100) rows), in schema ``main``, made with DuckDB
  SQL only (``range()`` + ``hash()``), so the same N gives the same rows.
* projects: a DAG of M models (filters, derived columns, joins to customers,
  an aggregate every tenth model) plus one upsert model ``upserted`` keyed by
  ``id`` on ``updated_at``, written four ways:

    strata/   a directory module: sources.strata + one .strata file per model
    dbt/      dbt project + profiles.yml (path from env var BENCH_DB); target
              `dev` runs THREADS models at once (`threads`), target `serial` one
    sqlmesh/  SQLMesh project, DuckDB gateway (path from env var BENCH_DB),
              FULL models, upsert as INCREMENTAL_BY_UNIQUE_KEY; gateway `local`
              runs THREADS tasks at once (`concurrent_tasks`), gateway `serial` one
    raw/      models.sql: the same SQL as CREATE OR REPLACE TABLE statements,
              upsert.sql: the in-place delete+insert floor of the upsert

All initial ``updated_at`` values lie in 2024. The benchmark's "1% changed rows"
get ``updated_at = CHANGE_TS`` (2025-01-01 12:00), which is after every
watermark and inside SQLMesh's daily interval [2025-01-01, 2025-01-02).

Usage:
  python generate.py data --rows 1000000 --out work/data/orders_1000000.duckdb
  python generate.py project --models 100 --out work/projects/m100 [--threads 4]

THREADS is what Strata's `run --workers` is in the benchmark (its default, 4):
every tool gets the same concurrency.
"""

from __future__ import annotations

import argparse
import shutil
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

STATUSES = ["paid", "pending", "shipped", "void"]
REGIONS = ["eu", "us", "apac", "latam"]
START_DATE = "2024-01-01"  # every initial updated_at is in 2024
PLAN_EXECUTION_TIME = "2025-01-01"  # SQLMesh: intervals of 2024 are complete
CHANGE_TS = "2025-01-01 12:00:00"  # updated_at of the changed 1% rows
UPSERT_EXECUTION_TIME = "2025-01-02"  # SQLMesh: makes [2025-01-01, 2025-01-02) due

SQLMESH_SCHEMA = "bench"


# --------------------------------------------------------------------------- data

def data_sql(rows: int) -> list[str]:
    """DuckDB statements that create the two sources deterministically.

    Each column hashes its own string (``i || ':salt'``) and keeps the high 32
    bits: DuckDB's ``hash(i, 'salt')`` only mixes a constant into ``hash(i)``, so
    its columns are correlated (status and customer_id shared their parity),
    and its low bits follow the parity of ``i``."""
    customers = max(1000, rows // 100)
    regions = ", ".join(f"'{r}'" for r in REGIONS)
    statuses = ", ".join(f"'{s}'" for s in STATUSES)
    return [
        f"""CREATE OR REPLACE TABLE main.customers AS
SELECT i::BIGINT AS id,
       'customer_' || i AS name,
       ([{regions}])[1 + ((hash(i::VARCHAR || ':region') >> 32) % 4)::INTEGER] AS region
FROM range(1, {customers} + 1) AS t(i)""",
        f"""CREATE OR REPLACE TABLE main.orders AS
SELECT i::BIGINT AS id,
       (1 + (hash(i::VARCHAR || ':customer') >> 32) % {customers})::BIGINT AS customer_id,
       (((hash(i::VARCHAR || ':amount') >> 32) % 100000)::DECIMAL(12, 0) / 100)::DECIMAL(12, 2) AS amount,
       ([{statuses}])[1 + ((hash(i::VARCHAR || ':status') >> 32) % 4)::INTEGER] AS status,
       TIMESTAMP '{START_DATE} 00:00:00'
         + to_seconds(((hash(i::VARCHAR || ':ts') >> 32) % 31536000)::BIGINT) AS updated_at
FROM range(1, {rows} + 1) AS t(i)""",
    ]


# The data changes the harness applies between runs (plain SQL on the sources).
def change_customers_sql(tag: str, residue: int) -> str:
    """Prefix the region of every tenth customer with TAG (10% of customers)."""
    return (f"UPDATE main.customers SET region = '{tag}_' || region "
            f"WHERE id % 10 = {residue}")


CHANGE_ORDERS_1PCT_SQL = (
    "UPDATE main.orders SET amount = amount + 1, status = 'paid', "
    f"updated_at = TIMESTAMP '{CHANGE_TS}' WHERE id % 100 = 0"
)


def make_data(rows: int, out: Path) -> Path:
    import duckdb  # imported here: generating projects needs no duckdb

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp.duckdb")
    for p in (tmp, Path(str(tmp) + ".wal")):
        p.unlink(missing_ok=True)
    con = duckdb.connect(str(tmp))
    for stmt in data_sql(rows):
        con.execute(stmt)
    con.execute("CHECKPOINT")
    con.close()
    tmp.replace(out)
    return out


# ------------------------------------------------------------------------- models

Ref = Callable[[str], str]  # model or source name -> relation text in a tool's SQL


@dataclass
class Model:
    name: str
    deps: list[str]  # models and sources read (for docs/tests)
    strata: str  # the model block in Strata syntax
    sql: Callable[[Ref], str]  # SELECT statement given a relation renderer
    kind: str = "full"  # "full" or "upsert"
    columns: list[str] = field(default_factory=list)


def _strata_block(name: str, steps: list[str]) -> str:
    body = "\n".join(f"  {s}" for s in steps)
    return f"model {name} {{\n{body}\n}}\n"


def dag_models(m: int) -> list[Model]:
    """M models in groups of ten; model 10 of each group is an aggregate."""
    models: list[Model] = []
    for i in range(1, m + 1):
        g, k = divmod(i - 1, 10)
        k += 1  # position 1..10 inside the group
        name = f"m{i:03d}"
        base = 10 * g

        def p(j: int, _base=base) -> str:  # name of model j (1..10) of this group
            return f"m{_base + j:03d}"

        if k == 1:
            status = STATUSES[g % len(STATUSES)]
            steps = ["from orders", "let net = amount * 0.9", f"filter status = '{status}'",
                     "select id, customer_id, net, updated_at"]
            sql = (lambda r, status=status:
                   "SELECT id, customer_id, amount * 0.9 AS net, updated_at\n"
                   f"FROM {r('orders')}\nWHERE status = '{status}'")
            deps = ["orders"]
        elif k == 2:
            src = p(1)
            steps = [f"from {src}", "join customers on customer_id = customers.id",
                     "derive region_upper = upper(region)",
                     "select id, customer_id, net, updated_at, region_upper"]
            sql = (lambda r, src=src:
                   "SELECT t.id, t.customer_id, t.net, t.updated_at, upper(c.region) AS region_upper\n"
                   f"FROM {r(src)} AS t\nJOIN {r('customers')} AS c ON t.customer_id = c.id")
            deps = [src, "customers"]
        elif k == 3:
            src = p(2)
            threshold = (g % 50) * 10
            steps = [f"from {src}", f"filter net > {threshold}",
                     "derive net_tax = round(net * 1.2, 2)",
                     "select id, customer_id, net, updated_at, region_upper, net_tax"]
            sql = (lambda r, src=src, threshold=threshold:
                   "SELECT id, customer_id, net, updated_at, region_upper, "
                   "round(net * 1.2, 2) AS net_tax\n"
                   f"FROM {r(src)}\nWHERE net > {threshold}")
            deps = [src]
        elif k == 4:
            src = p(3)
            steps = [f"from {src}",
                     "derive bucket = case when net > 500 then 'big' else 'small' end",
                     "select id, customer_id, net, updated_at, region_upper, net_tax, bucket"]
            sql = (lambda r, src=src:
                   "SELECT id, customer_id, net, updated_at, region_upper, net_tax, "
                   "CASE WHEN net > 500 THEN 'big' ELSE 'small' END AS bucket\n"
                   f"FROM {r(src)}")
            deps = [src]
        elif k == 5:
            src = p(2)
            steps = [f"from {src}", "filter region_upper != 'EU'",
                     "select id, customer_id, net, updated_at, region_upper"]
            sql = (lambda r, src=src:
                   "SELECT id, customer_id, net, updated_at, region_upper\n"
                   f"FROM {r(src)}\nWHERE region_upper <> 'EU'")
            deps = [src]
        elif k == 6:
            src = p(5)
            steps = [f"from {src}", "derive net_gap = abs(net - 100)",
                     "select id, customer_id, net, updated_at, region_upper, net_gap"]
            sql = (lambda r, src=src:
                   "SELECT id, customer_id, net, updated_at, region_upper, "
                   "abs(net - 100) AS net_gap\n"
                   f"FROM {r(src)}")
            deps = [src]
        elif k == 7:
            src = p(4)
            steps = [f"from {src}", "join customers on customer_id = customers.id",
                     "derive cust_name = lower(name)",
                     "select id, customer_id, net, updated_at, region_upper, bucket, cust_name"]
            sql = (lambda r, src=src:
                   "SELECT t.id, t.customer_id, t.net, t.updated_at, t.region_upper, t.bucket, "
                   "lower(c.name) AS cust_name\n"
                   f"FROM {r(src)} AS t\nJOIN {r('customers')} AS c ON t.customer_id = c.id")
            deps = [src, "customers"]
        elif k == 8:
            src = p(6)
            steps = [f"from {src}", "filter updated_at >= timestamp '2024-07-01 00:00:00'",
                     "select id, customer_id, net, updated_at, region_upper, net_gap"]
            sql = (lambda r, src=src:
                   "SELECT id, customer_id, net, updated_at, region_upper, net_gap\n"
                   f"FROM {r(src)}\nWHERE updated_at >= TIMESTAMP '2024-07-01 00:00:00'")
            deps = [src]
        elif k == 9:
            src = p(7)
            steps = [f"from {src}", "derive name_len = length(cust_name)",
                     "select id, customer_id, net, updated_at, region_upper, cust_name, name_len"]
            sql = (lambda r, src=src:
                   "SELECT id, customer_id, net, updated_at, region_upper, cust_name, "
                   "length(cust_name) AS name_len\n"
                   f"FROM {r(src)}")
            deps = [src]
        else:  # k == 10
            src = p(9)
            steps = [f"from {src}", "group region_upper",
                     "aggregate n = count(), total = sum(net)"]
            sql = (lambda r, src=src:
                   "SELECT region_upper, count(*) AS n, sum(net) AS total\n"
                   f"FROM {r(src)}\nGROUP BY region_upper")
            deps = [src]
        models.append(Model(name, deps, _strata_block(name, steps), sql))
    return models


UPSERT_COLUMNS = "id, customer_id, amount, status, updated_at"


def upsert_model() -> Model:
    steps = ["from orders", "incremental", "merge_strategy: upsert", "merge_keys: [id]",
             "cdc_column: updated_at", f"select {UPSERT_COLUMNS}"]
    return Model(
        "upserted", ["orders"], _strata_block("upserted", steps),
        lambda r: f"SELECT {UPSERT_COLUMNS}\nFROM {r('orders')}", kind="upsert",
    )


def all_models(m: int) -> list[Model]:
    return dag_models(m) + [upsert_model()]


SOURCES = {"orders", "customers"}

STRATA_SOURCES = """\
source orders {
  id: int
  customer_id: int
  amount: decimal(12, 2)
  status: text
  updated_at: timestamp
}

source customers {
  id: int
  name: text
  region: text
}
"""


# ------------------------------------------------------------------------ writers

def write_strata(models: list[Model], out: Path) -> None:
    out.mkdir(parents=True)
    (out / "sources.strata").write_text(STRATA_SOURCES)
    for mdl in models:
        (out / f"{mdl.name}.strata").write_text(mdl.strata)


def _dbt_ref(name: str) -> str:
    if name in SOURCES:
        return f"{{{{ source('raw', '{name}') }}}}"
    return f"{{{{ ref('{name}') }}}}"


def write_dbt(models: list[Model], out: Path, threads: int) -> None:
    (out / "models").mkdir(parents=True)
    (out / "dbt_project.yml").write_text(textwrap.dedent("""\
        name: bench
        version: '1.0'
        config-version: 2
        profile: bench
        model-paths: ["models"]
        models:
          bench:
            +materialized: table
        """))
    (out / "profiles.yml").write_text(textwrap.dedent(f"""\
        bench:
          target: dev
          outputs:
            dev:
              type: duckdb
              path: "{{{{ env_var('BENCH_DB') }}}}"
              schema: main
              threads: {threads}
            serial:
              type: duckdb
              path: "{{{{ env_var('BENCH_DB') }}}}"
              schema: main
              threads: 1
        """))
    (out / "models" / "sources.yml").write_text(textwrap.dedent("""\
        version: 2
        sources:
          - name: raw
            schema: main
            tables:
              - name: orders
                columns:
                  - {name: id, data_type: bigint}
                  - {name: customer_id, data_type: bigint}
                  - {name: amount, data_type: "decimal(12,2)"}
                  - {name: status, data_type: varchar}
                  - {name: updated_at, data_type: timestamp}
              - name: customers
                columns:
                  - {name: id, data_type: bigint}
                  - {name: name, data_type: varchar}
                  - {name: region, data_type: varchar}
        """))
    for mdl in models:
        body = mdl.sql(_dbt_ref)
        if mdl.kind == "upsert":
            text = (
                "{{ config(materialized='incremental', unique_key='id') }}\n\n"
                f"{body}\n"
                "{% if is_incremental() %}\n"
                "WHERE updated_at > (SELECT max(updated_at) FROM {{ this }})\n"
                "{% endif %}\n"
            )
        else:
            text = body + "\n"
        (out / "models" / f"{mdl.name}.sql").write_text(text)


def _sqlmesh_ref(name: str) -> str:
    return f"main.{name}" if name in SOURCES else f"{SQLMESH_SCHEMA}.{name}"


def write_sqlmesh(models: list[Model], out: Path, threads: int) -> None:
    (out / "models").mkdir(parents=True)
    (out / "config.yaml").write_text(textwrap.dedent(f"""\
        gateways:
          local:
            connection:
              type: duckdb
              database: "{{{{ env_var('BENCH_DB') }}}}"
              concurrent_tasks: {threads}
          serial:
            connection:
              type: duckdb
              database: "{{{{ env_var('BENCH_DB') }}}}"
              concurrent_tasks: 1
        default_gateway: local
        model_defaults:
          dialect: duckdb
          start: '{START_DATE}'
          cron: '@daily'
        """))
    # No external_models.yaml on purpose: with the sources' column types declared
    # there, SQLMesh 0.236 infers `amount * 0.9` as DECIMAL(12, 2) (DuckDB says
    # DECIMAL(14, 3)), creates the table with that type and rounds every value,
    # so its results would differ from the other tools'. See README.md.
    for mdl in models:
        body = mdl.sql(_sqlmesh_ref)
        if mdl.kind == "upsert":
            header = (f"MODEL (\n  name {SQLMESH_SCHEMA}.{mdl.name},\n"
                      "  kind INCREMENTAL_BY_UNIQUE_KEY (unique_key id)\n);\n\n")
            body += "\nWHERE updated_at BETWEEN @start_ts AND @end_ts"
        else:
            header = f"MODEL (\n  name {SQLMESH_SCHEMA}.{mdl.name},\n  kind FULL\n);\n\n"
        (out / "models" / f"{mdl.name}.sql").write_text(header + body + "\n")


def _raw_ref(name: str) -> str:
    return f"main.{name}"


def write_raw(models: list[Model], out: Path) -> None:
    out.mkdir(parents=True)
    def ctas(mdl: Model) -> str:
        return f"CREATE OR REPLACE TABLE main.{mdl.name} AS\n{mdl.sql(_raw_ref)};\n"

    (out / "models.sql").write_text("\n".join(ctas(m) for m in models))
    # The floor of a rerun after `customers` changed: only its downstream models.
    down = downstream(models, "customers")
    (out / "downstream_customers.sql").write_text(
        "\n".join(ctas(m) for m in models if m.name in down))
    up = upsert_model()
    # The floor of an upsert: delete the changed keys, insert the delta, in place.
    delta = (f"SELECT {UPSERT_COLUMNS} FROM main.orders "
             "WHERE updated_at > (SELECT max(updated_at) FROM main.upserted)")
    (out / "upsert_full.sql").write_text(
        f"CREATE OR REPLACE TABLE main.upserted AS\n{up.sql(_raw_ref)};\n")
    (out / "upsert.sql").write_text(
        f"CREATE TEMP TABLE delta AS {delta};\n"
        "DELETE FROM main.upserted WHERE id IN (SELECT id FROM delta);\n"
        "INSERT INTO main.upserted SELECT * FROM delta;\n")


def downstream(models: list[Model], root: str) -> set[str]:
    """Names of the models that read ROOT directly or transitively."""
    found: set[str] = set()
    for mdl in models:  # models are in topological order
        if any(d == root or d in found for d in mdl.deps):
            found.add(mdl.name)
    return found


def make_project(m: int, out: Path, threads: int = 4) -> Path:
    if out.exists():
        shutil.rmtree(out)
    models = all_models(m)
    write_strata(models, out / "strata")
    write_dbt(models, out / "dbt", threads)
    write_sqlmesh(models, out / "sqlmesh", threads)
    write_raw(models, out / "raw")
    # Models that read `customers` directly: what a SQLMesh user restates after
    # that source changed (SQLMesh does not know the table without external models).
    (out / "readers_of_customers.txt").write_text(
        "".join(f"{m.name}\n" for m in models if "customers" in m.deps))
    return out


# ---------------------------------------------------------------------------- cli

def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("data", help="create the sources in a DuckDB file")
    d.add_argument("--rows", type=lambda s: int(float(s)), required=True)
    d.add_argument("--out", type=Path, required=True)
    p = sub.add_parser("project", help="write the project four ways")
    p.add_argument("--models", type=int, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--threads", type=int, default=4,
                   help="dbt threads / SQLMesh concurrent_tasks (Strata's --workers)")
    args = ap.parse_args(argv)
    if args.cmd == "data":
        print(make_data(args.rows, args.out))
    else:
        print(make_project(args.models, args.out, args.threads))


if __name__ == "__main__":
    main()
