"""Data and modules for the run-engine benchmarks.

* `dag`: the peers benchmark's sources (`orders` N rows, `customers` max(1000, N/100)
  rows; bench/peers/generate.py, deterministic) and its DAG of M models (filters,
  joins to customers, an aggregate every tenth model).
* `trivial`: two sources `a` and `b` of N rows and M trivial models in two chains,
  one per source (model i reads model i-2), so changing `b` makes half of them stale.

`raw_statements` writes Strata's own compiled SQL of every model as
`CREATE OR REPLACE TABLE v_<model> AS ...` (upstream models are read as `v_<model>`),
the same statements run directly in one DuckDB connection by raw_sql.py.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent


def _peers():
    """bench/peers/generate.py (same file name as this one: loaded by path)."""
    spec = importlib.util.spec_from_file_location("peers_generate",
                                                  REPO / "bench" / "peers" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["peers_generate"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


peers = _peers()

SOURCE_COLUMNS = {
    "orders": ["id", "customer_id", "amount", "status", "updated_at"],
    "customers": ["id", "name", "region"],
    "a": ["id", "k", "v"],
    "b": ["id", "k", "v"],
}


def make_data(rows: int, out: Path, kind: str = "dag") -> Path:
    """The sources in a DuckDB file (made once, reused while it exists)."""
    import duckdb

    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    con = duckdb.connect(str(tmp))
    if kind == "dag":
        for statement in peers.data_sql(rows):
            con.execute(statement)
    else:
        for name in ("a", "b"):
            con.execute(f"CREATE TABLE {name} AS SELECT i::BIGINT AS id, (i % 97)::BIGINT AS k, "
                        f"'{name}' || i AS v FROM range({rows}) AS t(i)")
    con.execute("CHECKPOINT")
    con.close()
    tmp.replace(out)
    return out


def change_source_sql(source: str) -> str:
    if source == "customers":  # 10% of customers change region
        return peers.change_customers_sql("chg", 3)
    return f"UPDATE {source} SET v = v || '!' WHERE id % 10 = 0"


def dag_module(root: Path, models: int) -> Path:
    out = root / f"dag{models}"
    if out.exists():
        return out
    out.mkdir(parents=True)
    (out / "sources.strata").write_text(peers.STRATA_SOURCES)
    for model in peers.dag_models(models):
        (out / f"{model.name}.strata").write_text(model.strata)
    return out


def trivial_module(root: Path, models: int) -> Path:
    out = root / f"trivial{models}.strata"
    if out.exists():
        return out
    root.mkdir(parents=True, exist_ok=True)
    parts = ["source a {\n  id: int\n  k: int\n  v: text\n}\n",
             "source b {\n  id: int\n  k: int\n  v: text\n}\n"]
    for i in range(models):
        upstream = ("a", "b")[i] if i < 2 else f"t{i - 2:04d}"
        parts.append(f"model t{i:04d} {{\n  from {upstream}\n  let k1 = k + 1\n"
                     f"  select id, k1 as k, v\n}}\n")
    out.write_text("\n".join(parts))
    return out


def raw_statements(module_path: Path, out: Path, downstream_of: str | None = None) -> Path:
    """Strata's compiled full SQL per model as CTAS statements, in dependency order."""
    from strata.compiler import compile_statements
    from strata.semantics.resolve import load_module

    module = load_module(module_path)
    assert module.ok, [d.message for d in module.errors]
    lines = []
    for statement in compile_statements(module, "duckdb"):
        if statement.label != "full":
            continue
        if downstream_of and downstream_of not in module.sources_upstream(statement.model):
            continue
        lines.append(f"CREATE OR REPLACE TABLE v_{statement.model} AS\n{statement.sql};\n")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines))
    return out
