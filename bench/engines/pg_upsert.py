"""Where Strata's 1% upsert spends its time on PostgreSQL (issue 41 item 4).

    .venv/bin/python bench/engines/pg_upsert.py --code /tmp/before --code . --reps 3
    .venv/bin/python bench/engines/pg_upsert.py --code . --explain   # one traced pass

A throwaway cluster (tests/real_engines.py's server, the settings of
bench/engines/run.py: shared_buffers 256MB, work_mem 32MB, fsync off) holding
`public.orders` of N rows (the peers' columns: id, customer_id, amount, status,
updated_at) in a template database. For each repetition and each checkout at
`--code` (interleaved): a copy of the template, Strata's first build of the upsert
model (`upserted`, merge keys [id], cdc updated_at: bench/peers/generate.py's), the
peers' 1% UPDATE of orders and its ANALYZE (untimed), then the upsert run, timed
whole (wall clock of the CLI process); the result is checked (N rows, N distinct ids,
N/100 changed). `--explain` loads auto_explain in every session (log_analyze: every
statement Strata sends, with its plan and actual rows and times, nested ones
included) and prints each statement of the upsert run with its time, slowest first.
Writes bench/engines/pg_upsert.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
PYTHON = sys.executable
CHANGE_TS = "2025-01-01 12:00:00"
MODULE = """source orders {
  id: int
  customer_id: int
  amount: decimal(12, 2)
  status: text
  updated_at: timestamp
}

model upserted {
  from orders
  incremental
  merge_strategy: upsert
  merge_keys: [id]
  cdc_column: updated_at
  select id, customer_id, amount, status, updated_at
}
"""
SEED = """
CREATE TABLE public.orders (id bigint, customer_id bigint, amount numeric(12, 2),
                            status text, updated_at timestamp);
INSERT INTO public.orders
SELECT i, i % 1000, (i % 5000) / 4.0, (ARRAY['new', 'shipped', 'returned'])[1 + i % 3],
       TIMESTAMP '2024-01-01' + (i % 500000) * INTERVAL '1 minute'
FROM generate_series(1, {rows}) AS i;
VACUUM ANALYZE public.orders;
"""
CHANGE = (f"UPDATE public.orders SET amount = amount + 1, status = 'paid', "
          f"updated_at = TIMESTAMP '{CHANGE_TS}' WHERE id % 100 = 0")


def cli(code: Path) -> list[str]:
    return [PYTHON, "-c", (f"import sys; sys.path.insert(0, {str(code)!r}); "
                           "from strata.cli.main import main; sys.argv[0] = 'strata'; main()")]


class Cluster:
    def __init__(self, explain: bool) -> None:
        sys.path.insert(0, str(ROOT / "tests"))
        from real_engines import PostgresServer, _pg_bindir, _server_user

        self.server = PostgresServer(Path(tempfile.mkdtemp(prefix="h41-pg-")), _pg_bindir(),
                                     _server_user())
        self.explain = explain

    @property
    def log(self) -> Path:
        return self.server.root / "server.log"

    def start(self) -> None:
        self.server.start()
        settings = ("max_connections = 40\nshared_buffers = '256MB'\nwork_mem = '32MB'\n"
                    "maintenance_work_mem = '128MB'\n")
        if self.explain:
            settings += ("session_preload_libraries = 'auto_explain'\n"
                         "auto_explain.log_min_duration = 0\nauto_explain.log_analyze = on\n"
                         "auto_explain.log_nested_statements = on\n"
                         "auto_explain.log_timing = on\nlog_min_duration_statement = 0\n")
        with open(self.server.data / "postgresql.conf", "a") as conf:
            conf.write(settings)
        done = self.server._run("pg_ctl", "-D", str(self.server.data), "-w", "-t", "60",
                                "-l", str(self.log), "restart")
        if done.returncode != 0:
            raise RuntimeError(done.stderr)

    def stop(self) -> None:
        self.server.stop()
        shutil.rmtree(self.server.root, ignore_errors=True)

    def connect(self, db: str):
        import psycopg

        return psycopg.connect(host=str(self.server.root), user="postgres", dbname=db,
                               autocommit=True, prepare_threshold=None)

    def url(self, db: str) -> str:
        return f"postgresql://postgres@{quote(str(self.server.root), safe='')}/{db}"

    def create(self, db: str, template: str | None = None) -> None:
        with self.connect("postgres") as con:
            con.execute(f'DROP DATABASE IF EXISTS "{db}"')
            con.execute(f'CREATE DATABASE "{db}"' + (f' TEMPLATE "{template}"'
                                                      if template else ""))


def run(code: Path, url: str, project: Path) -> tuple[float, dict]:
    start = time.perf_counter()
    done = subprocess.run(cli(code) + ["run", "m.strata", "-o", url, "--json", "--workers",
                                       "4", "--models", "upserted"], cwd=project,
                          capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"strata failed:\n{done.stdout}\n{done.stderr}")
    return wall, json.loads(done.stdout)


def check(cluster: Cluster, db: str, rows: int) -> None:
    with cluster.connect(db) as con:
        got = con.execute("SELECT count(*), count(DISTINCT id), sum(CASE WHEN updated_at = "
                          f"TIMESTAMP '{CHANGE_TS}' THEN 1 ELSE 0 END) FROM main.v_upserted"
                          ).fetchone()
    want = (rows, rows, rows // 100)
    if tuple(got) != want:
        raise SystemExit(f"wrong upsert result in {db}: {got}, want {want}")


def statements(log: Path, since: int) -> list[tuple[float, str]]:
    """(ms, statement with its plan) of each auto_explain entry after byte `since`."""
    text = log.read_bytes()[since:].decode(errors="replace")
    out = []
    for block in re.split(r"\n(?=\S.*LOG:  )", text):
        found = re.search(r"LOG:  duration: ([\d.]+) ms  plan:", block)
        if found:
            out.append((float(found.group(1)), block))
    return sorted(out, key=lambda item: -item[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", type=Path, action="append", required=True)
    parser.add_argument("--rows", type=float, default=1e6)
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--explain", action="store_true")
    parser.add_argument("--out", type=Path, default=HERE / "pg_upsert.json")
    args = parser.parse_args()
    rows = int(args.rows)
    cluster = Cluster(args.explain)
    cluster.start()
    results = {"rows": rows, "codes": [str(c) for c in args.code], "runs": [],
               "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               "load": os.getloadavg()}
    try:
        cluster.create("seed")
        with cluster.connect("seed") as con:
            for statement in SEED.format(rows=rows).split(";"):
                if statement.strip():
                    con.execute(statement)
        with tempfile.TemporaryDirectory(prefix="h41-pgu-") as tmp:
            project = Path(tmp)
            (project / "m.strata").write_text(MODULE)
            for rep in range(args.reps):
                for i, code in enumerate(args.code):
                    db = f"u{rep}_{i}"
                    cluster.create(db, "seed")
                    url = cluster.url(db)
                    build, _ = run(code, url, project)
                    with cluster.connect(db) as con:
                        con.execute(CHANGE)
                        con.execute("ANALYZE public.orders")
                    since = cluster.log.stat().st_size
                    wall, report = run(code, url, project)
                    check(cluster, db, rows)
                    found = {"code": str(code), "rep": rep, "build": round(build, 3),
                             "upsert": round(wall, 3), "load": os.getloadavg()[0],
                             "notes": report["models"][0].get("notes")}
                    results["runs"].append(found)
                    print(found, flush=True)
                    if args.explain:
                        for ms, block in statements(cluster.log, since):
                            print(f"---- {ms:.1f} ms\n{block[:3000]}")
                    with cluster.connect("postgres") as con:
                        con.execute(f'DROP DATABASE "{db}"')
    finally:
        cluster.stop()
    for code in args.code:
        times = [r["upsert"] for r in results["runs"] if r["code"] == str(code)]
        print(code, "upsert median", statistics.median(times), times)
    args.out.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
