"""Pin and join-cardinality checks on a 1e7-row model, as a ratio to materializing it.

The materialization is what a run does for the model anyway: `CREATE TABLE AS` the
model's query (a 1e7-row scan joined to 1e5 customers). Each check is then timed on
the new table exactly as a run calls it (`check_pins` / `check_joins` from
strata.engine.pins.checks and .joins), alone, and all together as the run does. Rounds are
interleaved (materialize, then every check) and each cell is the median.

For comparison, `before:` rows time the queries the checks ran before they were
optimized (a GROUP BY per unique pin, a scan per not_null pin, a GROUP BY over the
right side of every join).

    .venv/bin/python bench/pins/run.py                   # 1e7 rows, 5 rounds
    .venv/bin/python bench/pins/run.py --rows 1000000 --repeat 3 --json out.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

import duckdb

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
WORK = HERE / "work"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench" / "peers"))

import generate as gen  # the peers' generator: the same orders/customers sources

from strata.engine.pins.checks import check_pins
from strata.engine.pins.joins import check_joins
from strata.engine.pins.results import CheckLog
from strata.plan import Plan
from strata.semantics.resolve import load_module
from strata.sqlgen.build import model_query
from strata.sqlgen.names import table

CUSTOMERS = 100_000

MODULE = gen.STRATA_SOURCES + """
source order_notes {
  id: int
  note: text
}

-- the 1e7-row model: every order with its customer's region
model enriched {
  from orders
  join customers as c on customer_id = c.id
  derive ref = 'o-' || cast(id as text)
  select id, ref, customer_id, amount, status, updated_at, c.region as region
  pin unique [id]
  pin not_null [id, customer_id]
  pin rows >= 1
  pin columns { id: int, ref: text, customer_id: int, amount: decimal(12, 2), status: text,
                updated_at: timestamp, region: text }
}

-- a join whose right side has 1e7 rows too
model noted {
  from orders
  join order_notes as n on id = n.id
  select id, n.note as note
}

-- text keys: the hash path
model by_ref {
  from enriched
  select ref, status
  pin unique [ref]
  pin unique [ref, status]
}
"""


def make_data(path: Path, rows: int) -> None:
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    con = duckdb.connect(str(tmp))
    con.execute("SET enable_progress_bar = false")
    # ids unique but stored in random order, as a real extract would be
    con.execute(f"""CREATE TABLE orders AS
        SELECT range AS id, CAST(1 + hash(range, 'c') % {CUSTOMERS} AS BIGINT) AS customer_id,
               CAST((hash(range, 'a') % 100000) / 100.0 AS DECIMAL(12, 2)) AS amount,
               ['placed', 'shipped', 'delivered', 'void'][1 + CAST(hash(range, 's') % 4 AS BIGINT)] AS status,
               TIMESTAMP '2024-01-01' + to_seconds(CAST(hash(range, 't') % 31536000 AS BIGINT))
                 AS updated_at
        FROM range({rows}) ORDER BY hash(range, 'order')""")
    con.execute(f"""CREATE TABLE customers AS
        SELECT range + 1 AS id, 'c' || range AS name,
               ['eu', 'us', 'apac'][1 + range % 3] AS region FROM range({CUSTOMERS})""")
    con.execute(f"""CREATE TABLE order_notes AS
        SELECT range AS id, 'n' || range AS note FROM range({rows})
        ORDER BY hash(range, 'notes')""")
    con.close()
    tmp.rename(path)


def relations(ref, alias):
    return table(ref.name, alias=alias)


def relation_sql_of(ref) -> str:
    return table(ref.name).sql("duckdb")


def timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def only(plan: Plan, *pins: str) -> Plan:
    return replace(plan, pins=[p for p in plan.pins if p.describe() in pins])


sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from strata_bytecode import compile_strata


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", dest="json_out", default=None)
    args = parser.parse_args()
    compile_strata(sys.executable)  # as an installed package has it (strata_bytecode.py)

    data = WORK / f"pins_{args.rows}.duckdb"
    make_data(data, args.rows)
    module_path = WORK / "pins.strata"
    module_path.write_text(MODULE)
    module = load_module(module_path)
    assert module.ok, [d.message for d in module.errors]
    enriched, noted, by_ref = (module.plan(n) for n in ("enriched", "noted", "by_ref"))

    con = duckdb.connect(str(data))
    con.execute("SET enable_progress_bar = false")
    for name in ("enriched", "noted", "by_ref"):
        con.execute(f"DROP TABLE IF EXISTS {name}")

    def build(plan: Plan) -> None:
        con.execute(f"DROP TABLE IF EXISTS {plan.model}")
        con.execute(f"CREATE TABLE {plan.model} AS "
                    f"{model_query(plan, relations).sql(dialect='duckdb')}")

    def pins(plan: Plan, *names: str):
        def go():
            p = only(plan, *names) if names else plan
            check_pins(con, plan.model, p, args.rows, CheckLog())
        return go

    def joins(plan: Plan, verified: bool = False):
        return lambda: check_joins(con, plan, relations, relation_sql_of,
                                   lambda ref, cols: verified, CheckLog())

    def sql(statement: str):
        return lambda: con.execute(statement).fetchall()

    # (cell, model whose materialization it is compared to, what to time)
    cells = [
        ("pin unique [id] (integer: bitmap)", "enriched", pins(enriched, "pin unique [id]")),
        ("pin not_null [id, customer_id]", "enriched",
         pins(enriched, "pin not_null [id, customer_id]")),
        ("pin rows >= 1", "enriched", pins(enriched, "pin rows >= 1")),
        ("pin columns { ... }", "enriched", pins(enriched, enriched.pins[3].describe())),
        ("join customers (1e5 right rows)", "enriched", joins(enriched)),
        ("all checks of `enriched`, as a run does them", "enriched",
         lambda: (joins(enriched)(), pins(enriched)())),
        ("join order_notes (1e7 right rows)", "noted", joins(noted)),
        ("join order_notes, right side pinned unique and verified", "noted",
         joins(noted, verified=True)),
        ("pin unique [ref] (text: hash aggregate)", "by_ref", pins(by_ref, "pin unique [ref]")),
        ("pin unique [ref, status] (text: hash aggregate)", "by_ref",
         pins(by_ref, "pin unique [ref, status]")),
        ("before: pin unique [id] as GROUP BY ALL", "enriched",
         sql('SELECT count(*), coalesce(sum(n), 0) FROM (SELECT "id", count(*) AS n FROM '
             'enriched GROUP BY ALL HAVING count(*) > 1)')),
        ("before: pin not_null [id, customer_id] as a scan", "enriched",
         sql('SELECT count(*) FROM enriched WHERE "id" IS NULL OR "customer_id" IS NULL')),
        ("before: join order_notes as GROUP BY on the right", "noted",
         sql('SELECT count(*) FROM (SELECT "id", count(*) AS n FROM order_notes WHERE "id" '
             'IS NOT NULL GROUP BY ALL HAVING count(*) > 1)')),
        ("before: pin unique [ref] as GROUP BY ALL", "by_ref",
         sql('SELECT count(*), coalesce(sum(n), 0) FROM (SELECT "ref", count(*) AS n FROM '
             'by_ref GROUP BY ALL HAVING count(*) > 1)')),
    ]
    plans = {"enriched": enriched, "noted": noted, "by_ref": by_ref}
    build_times: dict[str, list[float]] = {m: [] for m in plans}
    check_times: dict[str, list[float]] = {c: [] for c, _, _ in cells}
    for round_ in range(args.repeat):
        for model, plan in plans.items():
            build_times[model].append(timed(lambda plan=plan: build(plan)))
            con.execute("CHECKPOINT")
            for cell, of, fn in cells:
                if of == model:
                    check_times[cell].append(timed(fn))
        print(f"round {round_ + 1}/{args.repeat} done", file=sys.stderr)

    builds = {m: statistics.median(t) for m, t in build_times.items()}
    rows = []
    for cell, of, _ in cells:
        seconds = statistics.median(check_times[cell])
        rows.append({"check": cell, "model": of, "seconds": round(seconds, 4),
                     "materialize_seconds": round(builds[of], 4),
                     "ratio": round(seconds / builds[of], 4)})
    print(f"\n{args.rows:,} rows, median of {args.repeat} interleaved rounds, "
          f"DuckDB {duckdb.__version__}\n")
    print("| model | materialization (CTAS) |")
    print("|---|---:|")
    for m, s in builds.items():
        print(f"| `{m}` | {s:.3f} s |")
    print("\n| check | model | seconds | ratio to materialization |")
    print("|---|---|---:|---:|")
    for r in rows:
        print(f"| {r['check']} | `{r['model']}` | {r['seconds']:.3f} | {r['ratio']:.1%} |")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(
            {"rows": args.rows, "repeat": args.repeat, "duckdb": duckdb.__version__,
             "materialize": builds, "checks": rows}, indent=2))
    for name in plans:
        con.execute(f"DROP TABLE IF EXISTS {name}")
    con.close()


if __name__ == "__main__":
    main()
