"""Incremental merge at 1e7 rows: a 1% upsert against a full refresh, and the cost of
reading a layered snapshot. Not a test: a measurement, printed and written to
bench/incremental/RESULTS.md (+ results.json).

    .venv/bin/python bench/incremental/run.py                 # 1e7 rows, 5 reps
    .venv/bin/python bench/incremental/run.py --rows 1e6 --reps 3
    .venv/bin/python bench/incremental/run.py --only write    # write|profile|floor|read|detect

The data is bench/peers' (the same `orders`/`customers` SQL, the same 1% change:
`amount + 1, status 'paid', updated_at 2025-01-01 12:00 WHERE id % 100 = 0`), so the
figures line up with the dbt and SQLMesh rows of bench/peers (2.41 s and 1.92 s).

write   For each variant, one warehouse is built (first run) and the 1% change
        applied; each repetition copies it twice and times, interleaved (the order
        alternating), the WHOLE `strata run` process of the incremental refresh and
        of a `--full-refresh` of the same model. Variants: `upserted` (the cdc
        column passes through: pushdown) and `upserted_joined` (a join_left to
        customers: full-then-filter). Correctness of every incremental result is
        checked (N rows, N distinct ids, N/100 changed rows).
profile One incremental refresh of `upserted` in-process, timing each step (open,
        source fingerprint, delta scan + layer write, layer hash, replaced-rows hash,
        pins, publish, close) and the process start-up (`strata --help`).
floor   The DuckDB work any run meeting SPEC must do, alone in a bare process: import
        duckdb, open, the source fingerprint, the watermark, the delta scan + layer
        write, the layer's and the replaced rows' hashes, the composing view, close.
        Timed interleaved with the `strata run` of the refresh and a --full-refresh:
        the floor's ratio to the full refresh bounds what any incremental run can reach.
detect  Drift detection's cost (issue 17): the 1% upsert of `upserted` (detection on,
        the default) against `upserted_unchecked` (the same model with `on_drift:
        ignore`), each from its own prepared warehouse, whole processes interleaved;
        and a no-op `run --only-stale` (nothing changed since the merge) of each.
        Ratios of medians, in one run.
read    A chain of 1% upserts on distinct ids (default thresholds: 8 layers, 20%):
        depth 1..8 layered, the 9th run compacts. `count(*)` and a downstream
        aggregate over the snapshots at depth 1, 4, 8 and the compacted one, in one
        read-only connection, interleaved, medians. The 9th run's time is the
        compaction's.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
WORK = HERE / "work"
PEERS = REPO / "bench" / "peers"

_spec = importlib.util.spec_from_file_location("peers_generate", PEERS / "generate.py")
gen = importlib.util.module_from_spec(_spec)
sys.modules["peers_generate"] = gen  # dataclasses look their module up
_spec.loader.exec_module(gen)

MODULE = gen.STRATA_SOURCES + """
-- the cdc column passes through: the watermark lands in the base CTE (pushdown)
model upserted {
  from orders
  select id, customer_id, amount, status, updated_at
  incremental
  merge_strategy: upsert
  merge_keys: [id]
  cdc_column: updated_at
}

-- the same model without drift detection (on_drift: ignore): the baseline of `detect`
model upserted_unchecked {
  from orders
  select id, customer_id, amount, status, updated_at
  incremental
  merge_strategy: upsert
  merge_keys: [id]
  cdc_column: updated_at
  on_drift: ignore
}

-- the joined model without drift detection: the baseline of `detect` for full-then-filter
model upserted_joined_unchecked {
  from orders
  join_left customers as c on customer_id = c.id
  select id, customer_id, amount, status, updated_at, c.region as region
  incremental
  merge_strategy: upsert
  merge_keys: [id]
  cdc_column: updated_at
  on_drift: ignore
}

-- a join_left: computed in full, then filtered (__full / __delta)
model upserted_joined {
  from orders
  join_left customers as c on customer_id = c.id
  select id, customer_id, amount, status, updated_at, c.region as region
  incremental
  merge_strategy: upsert
  merge_keys: [id]
  cdc_column: updated_at
}
"""

AGGREGATE = ("SELECT status, count(*) AS n, sum(amount) AS total, avg(amount) AS mean "
             "FROM {rel} GROUP BY status ORDER BY status")


def strata_exe() -> str:
    venv = REPO / ".venv" / "bin" / "strata"
    return str(venv) if venv.exists() else "strata"


def python_exe() -> str:
    venv = REPO / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


CPU: list[float] = []  # CPU seconds (user + sys) of the last timed() process
# Byte-compiled modules, as after any install: with PYTHONDONTWRITEBYTECODE set, a
# module edited since its .pyc was written is compiled again by every process.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(argv: list[str]) -> tuple[float, str]:
    """Wall clock of a whole process; its CPU time (user + sys, all threads) goes to
    CPU[-1]: on a shared, loaded machine the wall clock inflates, CPU time much less."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, check=False, env=ENV)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n{proc.stdout}\n"
                         f"{proc.stderr}")
    return elapsed, proc.stdout


def sql(db: Path, *statements: str, read_only: bool = False):
    import duckdb
    con = duckdb.connect(str(db), read_only=read_only)
    try:
        rows = None
        for s in statements:
            cur = con.execute(s)
            rows = cur.fetchall() if cur.description else None
        return rows
    finally:
        con.close()


def copy_db(src: Path, dst: Path) -> Path:
    for p in (dst, Path(str(dst) + ".wal")):
        p.unlink(missing_ok=True)
    shutil.copyfile(src, dst)
    # Written back before the timed run: otherwise the run's first fsync (DuckDB's
    # checkpoint on close) flushes the copy's ~300 MB of dirty pages too, which cost
    # the incremental run 0.10-0.15 s that no real warehouse pays.
    os.sync()
    return dst


def seed(rows: int) -> Path:
    peers = PEERS / "work" / "data" / f"orders_{rows}.duckdb"
    if peers.exists():
        return peers
    out = WORK / f"orders_{rows}.duckdb"
    if not out.exists():
        print(f"generating {rows:,} rows ...", flush=True)
        gen.make_data(rows, out)
    return out


def module_path() -> Path:
    path = WORK / "bench.strata"
    path.write_text(MODULE)
    return path


def run_strata(db: Path, model: str, *extra: str) -> tuple[float, dict]:
    secs, out = timed([strata_exe(), "run", str(module_path()), "-o", str(db), "--models",
                       model, "--json", *extra])
    return secs, json.loads(out)


def model_of(report: dict, model: str) -> dict:
    return next(m for m in report["models"] if m["model"] == model)


def check_upsert(db: Path, model: str, rows: int, changed: int) -> None:
    got = sql(db, f"SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE updated_at = "
                  f"TIMESTAMP '{gen.CHANGE_TS}') FROM main.v_{model}", read_only=True)[0]
    want = (rows, rows, changed)
    if tuple(got) != want:
        raise SystemExit(f"WRONG {model}: rows/distinct ids/changed = {got}, want {want}")


# ------------------------------------------------------------------ write
def built_and_changed(rows: int, model: str) -> Path:
    """A warehouse after the model's first run, with the 1% change applied."""
    out = WORK / f"{model}_{rows}_changed.duckdb"
    if out.exists():
        return out
    tmp = copy_db(seed(rows), WORK / "tmp_build.duckdb")
    secs, _ = run_strata(tmp, model)
    print(f"  first build of {model}: {secs:.2f} s", flush=True)
    sql(tmp, gen.CHANGE_ORDERS_1PCT_SQL, "CHECKPOINT")
    tmp.replace(out)
    return out


def bench_write(rows: int, reps: int) -> dict:
    results = {}
    for model in ("upserted", "upserted_joined"):
        print(f"== write: {model}", flush=True)
        template = built_and_changed(rows, model)
        inc, full, detail, inc_cpu, full_cpu = [], [], [], [], []
        for rep in range(reps):
            a = copy_db(template, WORK / "inc.duckdb")
            b = copy_db(template, WORK / "full.duckdb")
            order = ["inc", "full"] if rep % 2 == 0 else ["full", "inc"]
            for which in order:
                if which == "inc":
                    secs, report = run_strata(a, model)
                    m = model_of(report, model)
                    inc.append(secs)
                    inc_cpu.append(CPU[-1])
                    detail.append({"seconds": secs, "run_seconds": report["seconds"],
                                   "fingerprint_seconds": report["fingerprint_seconds"],
                                   "model_seconds": m["seconds"], "path": m["path"],
                                   "delta_rows": m["delta_rows"]})
                    check_upsert(a, model, rows, rows // 100)
                else:
                    secs, report = run_strata(b, model, "--full-refresh")
                    assert model_of(report, model)["path"] == "full"
                    full.append(secs)
                    full_cpu.append(CPU[-1])
            print(f"  rep {rep}: incremental {inc[-1]:.2f} s ({detail[-1]['path']}, delta "
                  f"{detail[-1]['delta_rows']}), full refresh {full[-1]:.2f} s", flush=True)
        results[model] = {
            "incremental": median(inc), "full_refresh": median(full),
            "ratio": median(inc) / median(full), "samples_incremental": inc,
            "incremental_cpu": median(inc_cpu), "full_refresh_cpu": median(full_cpu),
            "samples_full": full, "path": detail[0]["path"],
            "delta_rows": detail[0]["delta_rows"],
            "in_process": {k: median([d[k] for d in detail]) for k in
                           ("run_seconds", "fingerprint_seconds", "model_seconds")},
        }
    return results


# ------------------------------------------------------------------ detect
def bench_detect(rows: int, reps: int) -> dict:
    """Detection on vs off, interleaved: the 1% upsert, then a no-op --only-stale; and
    the 1% upsert of the full-then-filter model (`joined`), where the check computes
    the model's whole result once more."""
    load_before = os.getloadavg()[0]
    out = _detect_pair(rows, reps, {"detect": "upserted", "ignore": "upserted_unchecked"},
                       "pushdown")
    joined = _detect_pair(rows, reps, {"detect": "upserted_joined",
                                       "ignore": "upserted_joined_unchecked"},
                          "full-then-filter", noop=False)
    out["upsert_1pct_joined"] = joined["upsert_1pct"]
    # other processes share the machine: wall clocks inflate with them, CPU time less
    out["load_average"] = [load_before, os.getloadavg()[0]]
    return out


def _detect_pair(rows: int, reps: int, pairs: dict[str, str], path: str,
                 noop: bool = True) -> dict:
    templates = {k: built_and_changed(rows, m) for k, m in pairs.items()}
    upsert: dict[str, list[float]] = {k: [] for k in pairs}
    noops: dict[str, list[float]] = {k: [] for k in pairs}
    cpu: dict[tuple[str, str], list[float]] = {}  # (case, which) -> CPU seconds
    merged: dict[str, Path] = {}
    for rep in range(reps):
        order = list(pairs) if rep % 2 == 0 else list(reversed(pairs))
        for which in order:
            db = copy_db(templates[which], WORK / f"detect_{which}.duckdb")
            secs, report = run_strata(db, pairs[which])
            m = model_of(report, pairs[which])
            if m["path"] != path or m["drift"] is not None:
                raise SystemExit(f"{pairs[which]}: expected a {path} merge, no drift: {m}")
            upsert[which].append(secs)
            cpu.setdefault(("upsert_1pct", which), []).append(CPU[-1])
            check_upsert(db, pairs[which], rows, rows // 100)
            merged[which] = db
        for which in order if noop else ():
            secs, report = run_strata(merged[which], pairs[which], "--only-stale")
            if report["status"] != "up_to_date":
                raise SystemExit(f"{pairs[which]}: --only-stale was not a no-op: {report}")
            noops[which].append(secs)
            cpu.setdefault(("noop_only_stale", which), []).append(CPU[-1])
        print(f"  rep {rep}: {path} upsert {upsert['detect'][-1]:.2f} / "
              f"{upsert['ignore'][-1]:.2f} s" + (
                  f", no-op --only-stale {noops['detect'][-1]:.2f} / "
                  f"{noops['ignore'][-1]:.2f} s" if noop else "") + " (detect / ignore)",
              flush=True)
    out = {}
    for name, samples in (("upsert_1pct", upsert), ("noop_only_stale", noops)):
        if not samples["detect"]:
            continue
        on, off = median(samples["detect"]), median(samples["ignore"])
        cpu_on, cpu_off = median(cpu[(name, "detect")]), median(cpu[(name, "ignore")])
        out[name] = {"detect": on, "ignore": off, "overhead": on / off - 1,
                     "cpu_detect": cpu_on, "cpu_ignore": cpu_off,
                     "cpu_overhead": cpu_on / cpu_off - 1,
                     "samples_detect": samples["detect"], "samples_ignore": samples["ignore"]}
    return out


# ------------------------------------------------------------------ profile
PROFILE = r'''
import json, sys, time
import strata.engine.warehouse as W
import strata.engine.run as M
import strata.engine.run.observe as O
import strata.engine.sources as S
import strata.engine.incremental as I
import strata.engine.history as H
import strata.engine.branches as B
t_imports = time.perf_counter()
from strata.semantics.resolve import load_module
steps = {}
def add(key, secs):
    steps[key] = steps.get(key, 0.0) + secs
def wrap(owner, name, key):
    orig = getattr(owner, name)
    def inner(*a, **k):
        t = time.perf_counter()
        try:
            return orig(*a, **k)
        finally:
            add(key, time.perf_counter() - t)
    setattr(owner, name, inner)
orig_exec = W.Warehouse.execute
def execute(self, statement, params=None):
    t = time.perf_counter()
    try:
        return orig_exec(self, statement, params)
    finally:
        s = statement.lstrip().upper()
        target = s.split(" AS ", 1)[0]  # CREATE TABLE <target> AS ...
        key = ("delta scan + layer write (CTAS)" if s.startswith("CREATE TABLE") and "LAYER_" in target
               else "compaction (CTAS of the composed rows)" if s.startswith("CREATE TABLE")
               else "watermark (max cdc)" if s.startswith("SELECT MAX(")
               else "other statements (registry, views, describe)")
        add(key, time.perf_counter() - t)
W.Warehouse.execute = execute
wrap(W.Warehouse, "open", "open warehouse")
wrap(W.Warehouse, "close", "close (checkpoint)")
wrap(S, "counted_fingerprint", "source fingerprint (hash of 1e7 source rows)")
wrap(S, "check_contract", "source contract check")
wrap(I, "replaced_rows_hash", "hash of replaced rows")
wrap(I, "_check_incremental_pins", "pins")
wrap(O, "code_fingerprints", "code fingerprints")
t0 = time.perf_counter()
module = load_module(sys.argv[1])
add("parse + resolve module", time.perf_counter() - t0)
t0 = time.perf_counter()
report = M.run(module, sys.argv[2], M.RunOptions(models=["upserted"]))
total = time.perf_counter() - t0
m = next(r for r in report.results if r.model == "upserted")
print(json.dumps({"total_run": total, "steps": steps, "path": m.path,
                  "delta_rows": m.delta_rows}))
'''


def bench_profile(rows: int, reps: int) -> dict:
    print("== profile: upserted, in-process", flush=True)
    template = built_and_changed(rows, "upserted")
    runs = []
    for _ in range(reps):
        db = copy_db(template, WORK / "prof.duckdb")
        _, out = timed([python_exe(), "-c", PROFILE, str(module_path()), str(db)])
        runs.append(json.loads(out))
    keys = sorted({k for r in runs for k in r["steps"]})
    steps = {k: median([r["steps"].get(k, 0.0) for r in runs]) for k in keys}
    startup = median([timed([strata_exe(), "--help"])[0] for _ in range(reps)])
    imports = median([timed([python_exe(), "-c", ("import strata.cli.main; "
                                                  "from strata.cli import run_cmds")])[0]
                       for _ in range(reps)])
    bare = median([timed([python_exe(), "-c", "import duckdb"])[0] for _ in range(reps)])
    out = {"total_run": median([r["total_run"] for r in runs]), "steps": steps,
           "startup_help": startup, "import_cli": imports, "python_import_duckdb": bare}
    for k, v in sorted(steps.items(), key=lambda kv: -kv[1]):
        print(f"  {v:6.3f} s  {k}")
    print(f"  {out['total_run']:6.3f} s  run() in-process total")
    print(f"  {startup:6.3f} s  `strata --help` (process start-up); imports of the run "
          f"command {imports:.3f} s; python + import duckdb {bare:.3f} s", flush=True)
    return out


# ------------------------------------------------------------------ floor
FLOOR = r'''
import json, sys
import duckdb
db, spec = sys.argv[1], json.loads(sys.argv[2])
con = duckdb.connect(db)
con.execute(spec["fingerprint"]).fetchone()
(watermark,) = con.execute(spec["watermark"]).fetchone()
con.execute(spec["layer"], [watermark])
layer_rows = con.execute(spec["layer_hash"]).fetchone()[0]
replaced_rows = con.execute(spec["replaced_hash"]).fetchone()[0]
con.execute(spec["publish"])
con.close()
print(layer_rows, replaced_rows)
'''


def floor_statements(template: Path) -> dict:
    """The statements of the floor, on the template's snapshot of `upserted`."""
    from dialects.duckdb import row_hash_aggregate

    (snap,) = sql(template, "SELECT name FROM strata_internal.snapshots WHERE model = "
                            "'upserted'", read_only=True)[0]
    cols = ["id", "customer_id", "amount", "status", "updated_at"]
    agg, listed = row_hash_aggregate(cols), ", ".join(cols)
    base, layer = f"strata_internal.{snap}", "strata_internal.layer_floor"
    return {
        "fingerprint": f"SELECT {agg} FROM main.orders",
        "watermark": f"SELECT max(updated_at) FROM {base}",
        "layer": f"CREATE TABLE {layer} AS SELECT {listed} FROM main.orders "
                 "WHERE updated_at > ?",
        "layer_hash": f"SELECT {agg} FROM {layer}",
        "replaced_hash": f"SELECT {agg} FROM {base} AS __t WHERE EXISTS (SELECT 1 FROM "
                         f"{layer} AS __d WHERE __d.id IS NOT DISTINCT FROM __t.id)",
        "publish": f"CREATE VIEW main.v_floor AS SELECT {listed} FROM {base} AS __t WHERE "
                   f"NOT EXISTS (SELECT 1 FROM {layer} AS __l WHERE __l.id IS NOT DISTINCT "
                   f"FROM __t.id) UNION ALL SELECT {listed} FROM {layer}",
    }


def bench_floor(rows: int, reps: int) -> dict:
    print("== floor: the required DuckDB work alone, against strata's refresh", flush=True)
    template = built_and_changed(rows, "upserted")
    spec = json.dumps(floor_statements(template))
    times: dict[str, list[float]] = {"floor": [], "incremental": [], "full_refresh": []}
    for rep in range(reps):
        order = ["floor", "incremental", "full_refresh"]
        order = order[rep % 3:] + order[:rep % 3]
        for which in order:
            db = copy_db(template, WORK / f"{which}.duckdb")
            if which == "floor":
                secs, out = timed([python_exe(), "-c", FLOOR, str(db), spec])
                if out.split() != [str(rows // 100)] * 2:  # the delta, each replacing a row
                    raise SystemExit(f"WRONG floor: layer / replaced rows {out.split()}")
            else:
                extra = ("--full-refresh",) if which == "full_refresh" else ()
                secs, _ = run_strata(db, "upserted", *extra)
            times[which].append(secs)
        print("  rep " + str(rep) + ": " + ", ".join(f"{k} {v[-1]:.2f} s"
                                                  for k, v in times.items()), flush=True)
    med = {k: median(v) for k, v in times.items()}
    return {**med, "floor_ratio": med["floor"] / med["full_refresh"],
            "incremental_ratio": med["incremental"] / med["full_refresh"],
            "samples": times}


# ------------------------------------------------------------------ read
def bench_read(rows: int, reps: int) -> dict:
    print("== read: a chain of 1% upserts on distinct ids", flush=True)
    db = copy_db(seed(rows), WORK / "chain.duckdb")
    run_strata(db, "upserted")
    snaps, writes = {}, {}
    for k in range(1, 10):
        sql(db, f"UPDATE main.orders SET amount = amount + 1, status = 'paid', updated_at = "
                f"TIMESTAMP '2025-01-0{k} 12:00:00' WHERE id % 100 = {k}", "CHECKPOINT")
        if k == 9:  # the compaction: in-process, to see where its time goes
            keep = copy_db(db, WORK / "chain_before_compaction.duckdb")
            _, out = timed([python_exe(), "-c", PROFILE, str(module_path()), str(keep)])
            compaction_steps = json.loads(out)["steps"]
            keep.unlink()
        secs, report = run_strata(db, "upserted")
        m = model_of(report, "upserted")
        snaps[k] = m["snapshot"]
        writes[k] = {"seconds": secs, "model_seconds": m["seconds"], "path": m["path"],
                     "compacted": m.get("compacted"), "delta_rows": m["delta_rows"]}
        print(f"  run {k}: {secs:.2f} s ({m['path']}{', compacted' if m.get('compacted') else ''}"
              f", model {m['seconds']:.2f} s)", flush=True)
    for key, v in sorted(compaction_steps.items(), key=lambda kv: -kv[1]):
        print(f"    compaction run: {v:6.3f} s  {key}")
    import duckdb
    con = duckdb.connect(str(db), read_only=True)
    kinds = {k: con.execute("SELECT kind FROM strata_internal.snapshots WHERE name = ?",
                            [snaps[k]]).fetchone()[0] for k in snaps}
    targets = {"depth 1": snaps[1], "depth 4": snaps[4], "depth 8": snaps[8],
               "compacted": snaps[9]}
    assert kinds[8] == "layered" and kinds[9] == "table", kinds
    queries = {"count(*)": "SELECT count(*) FROM {rel}", "aggregate": AGGREGATE}
    samples = {(t, q): [] for t in targets for q in queries}
    for rep in range(reps + 1):
        for q, text in queries.items():
            names = list(targets) if rep % 2 == 0 else list(reversed(targets))
            for t in names:
                rel = f"strata_internal.{targets[t]}"
                start = time.perf_counter()
                con.execute(text.format(rel=rel)).fetchall()
                if rep:  # the first round warms the cache
                    samples[(t, q)].append(time.perf_counter() - start)
    con.close()
    out = {"writes": writes, "reads": {}, "compaction_steps": compaction_steps}
    for q in queries:
        base = median(samples[("compacted", q)])
        for t in targets:
            med = median(samples[(t, q)])
            out["reads"][f"{q} @ {t}"] = {"seconds": med, "ratio": med / base}
            print(f"  {q:<10} {t:<10} {med:7.4f} s  {med / base:5.2f}x", flush=True)
    return out


# ------------------------------------------------------------------ report
def markdown(rows: int, res: dict) -> str:
    lines = [f"# Incremental merge, {rows:,} rows (generated by bench/incremental/run.py)", ""]
    if "write" in res:
        lines += ["| model (path) | incremental run | --full-refresh | ratio | CPU s inc / full |",
                  "|---|---|---|---|---|"]
        for model, r in res["write"].items():
            lines.append(f"| `{model}` ({r['path']}, delta {r['delta_rows']:,}) | "
                         f"{r['incremental']:.2f} s | {r['full_refresh']:.2f} s | "
                         f"{r['ratio']:.2f}x | {r['incremental_cpu']:.2f} / "
                         f"{r['full_refresh_cpu']:.2f} |")
        lines.append("")
    if "profile" in res:
        p = res["profile"]
        lines += ["| step of the incremental run of `upserted` | seconds |", "|---|---|"]
        for k, v in sorted(p["steps"].items(), key=lambda kv: -kv[1]):
            lines.append(f"| {k} | {v:.3f} |")
        lines += [f"| run() in-process total | {p['total_run']:.3f} |",
                  f"| `strata --help` (start-up) | {p['startup_help']:.3f} |", ""]
    if "floor" in res:
        f = res["floor"]
        lines += ["| whole process, interleaved | seconds | vs --full-refresh |",
                  "|---|---|---|",
                  (f"| DuckDB floor (bare process: the required statements only) | "
                   f"{f['floor']:.2f} | {f['floor_ratio']:.2f}x |"),
                  (f"| `strata run` (incremental refresh of `upserted`) | "
                   f"{f['incremental']:.2f} | {f['incremental_ratio']:.2f}x |"),
                  f"| `strata run --full-refresh` | {f['full_refresh']:.2f} | 1.00x |", ""]
    if "detect" in res:
        d = res["detect"]
        lines += [("| drift detection (issue 17), whole process, interleaved | detection on "
                  "| `on_drift: ignore` | overhead | CPU s on / ignore | CPU overhead |"),
                  "|---|---|---|---|---|---|"]
        for key, label in (("upsert_1pct", "1% upsert of `upserted` (pushdown)"),
                           ("noop_only_stale", "no-op `run --only-stale`"),
                           ("upsert_1pct_joined",
                            "1% upsert of `upserted_joined` (full-then-filter)")):
            if key not in d:
                continue
            r = d[key]
            lines.append(f"| {label} | {r['detect']:.3f} s | {r['ignore']:.3f} s | "
                         f"{r['overhead']:+.1%} | {r['cpu_detect']:.2f} / "
                         f"{r['cpu_ignore']:.2f} | {r['cpu_overhead']:+.1%} |")
        if "load_average" in d:
            lines.append(f"\n1-minute load average {d['load_average'][0]:.1f} at the start, "
                         f"{d['load_average'][1]:.1f} at the end ({os.cpu_count()} CPUs): "
                         "the CPU columns are the steadier measure on a shared machine.")
        lines.append("")
    if "read" in res:
        lines += ["| read | seconds | vs compacted |", "|---|---|---|"]
        for k, v in res["read"]["reads"].items():
            lines.append(f"| {k} | {v['seconds']:.4f} | {v['ratio']:.2f}x |")
        lines += ["", "| chain run | seconds (process) | path |", "|---|---|---|"]
        for k, w in res["read"]["writes"].items():
            lines.append(f"| {k} | {w['seconds']:.2f} | {w['path']}"
                         f"{', compacted' if w['compacted'] else ''} |")
    return "\n".join(lines) + "\n"


sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from strata_bytecode import compile_strata


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=lambda s: int(float(s)), default=10_000_000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--only", default="write,profile,floor,read,detect")
    ap.add_argument("--fresh", action="store_true", help="rebuild the prepared warehouses")
    args = ap.parse_args()
    compile_strata(sys.executable)  # as an installed package has it (strata_bytecode.py)
    WORK.mkdir(parents=True, exist_ok=True)
    if args.fresh:
        for p in WORK.glob("*_changed.duckdb"):
            p.unlink()
    parts = args.only.split(",")
    res: dict = {"rows": args.rows, "reps": args.reps}
    saved = HERE / "results.json"
    if saved.exists() and set(parts) != {"write", "profile", "floor", "read", "detect"}:
        # a partial run keeps the other parts' figures of the same size
        old = json.loads(saved.read_text())
        if old.get("rows") == args.rows:
            res = {**old, "reps": args.reps}
    if "write" in parts:
        res["write"] = bench_write(args.rows, args.reps)
    if "profile" in parts:
        res["profile"] = bench_profile(args.rows, args.reps)
    if "floor" in parts:
        res["floor"] = bench_floor(args.rows, args.reps)
    if "read" in parts:
        res["read"] = bench_read(args.rows, args.reps)
    if "detect" in parts:
        res["detect"] = bench_detect(args.rows, args.reps)
    text = markdown(args.rows, res)
    print(text)
    (HERE / "RESULTS.md").write_text(text)
    (HERE / "results.json").write_text(json.dumps(res, indent=2))
    for p in WORK.glob("*.duckdb"):
        if not p.name.endswith("_changed.duckdb"):
            p.unlink(missing_ok=True)


if __name__ == "__main__":
    os.environ.setdefault("STRATA_LOCK_TIMEOUT", "60")
    main()
