"""Names PostgreSQL would cut alike (issue 39 item 17).

PostgreSQL keeps an identifier's first 63 bytes and drops the rest silently; two
column names of a model that share their first 63 bytes passed `check` and failed the
run with E080 (the table had one column twice). The limit is dialect data
(`dialects/postgres.py: MAX_IDENTIFIER_BYTES`), checked by `compile --dialect
postgres` and by `run -o postgresql://...` before anything is built: E091 at the model.
`strata check` knows no engine and still passes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_warehouses import _postgres
from enginehelpers import error_code, strata

from dialects import postgres as pg_dialect
from strata.compiler import compile_statements
from strata.diagnostics import StrataError
from strata.semantics.resolve import load_text
from strata.sqlgen.identifiers import cut

LONG = "a" * 63
SOURCE = """source orders = file 'data/orders.csv' {
  id: int
  amount: int
}
"""
ALIKE = SOURCE + f"""
model wide {{
  from orders
  derive {LONG}_one = id + 1, {LONG}_two = amount * 2
  select id, {LONG}_one, {LONG}_two
}}
"""
# the two names meet only in the query's first CTE: one of them is read, ambiguously
ALIKE_INSIDE = SOURCE + f"""
model narrow {{
  from orders
  let {LONG}_one = id + 1, {LONG}_two = amount * 2
  select id, {LONG}_one as total
}}
"""
# 62 bytes, then a 2-byte character the cut would split: it is dropped whole
SPLIT = "b" * 62
ALIKE_SPLIT = SOURCE + f"""
model split {{
  from orders
  select id, id as {SPLIT}, amount as `{SPLIT}é_more`
}}
"""


def _project(root: Path, module: str) -> Path:
    (root / "data").mkdir(parents=True)
    (root / "m.strata").write_text(module)
    (root / "data" / "orders.csv").write_text("id,amount\n1,10\n2,20\n")
    return root


@pytest.mark.parametrize("module, model", [(ALIKE, "wide"), (ALIKE_INSIDE, "narrow"),
                                           (ALIKE_SPLIT, "split")],
                         ids=["output", "inside", "split-character"])
def test_names_alike_in_their_first_63_bytes_are_E091_at_the_model_for_postgres(
        module, model):
    loaded = load_text(module, "m.strata")
    assert not loaded.diagnostics  # `check` knows no engine: nothing to say
    compile_statements(loaded, "duckdb")  # DuckDB keeps names whole
    with pytest.raises(StrataError) as raised:
        compile_statements(loaded, "postgres")
    diag = raised.value.diagnostics[0]
    assert diag.code == "E091" and "63 bytes" in diag.message
    line = module.splitlines()[diag.span.line - 1]
    assert line[diag.span.column - 1:diag.span.end_column - 1] == model


def test_compile_for_postgres_says_E091_and_check_passes(tmp_path):
    root = _project(tmp_path / "p", ALIKE)
    strata("check", ".", cwd=root, check=True)
    done = strata("compile", ".", "--dialect", "postgres", cwd=root, check=False)
    assert error_code(done) == "E091"
    assert f"{LONG}_one" in done.stderr and f"{LONG}_two" in done.stderr


def test_a_run_on_postgresql_refuses_names_alike_in_63_bytes_before_building_anything(
        pg_warehouse_url, tmp_path):
    root = _project(tmp_path / "p", ALIKE)
    done = strata("run", ".", "-o", pg_warehouse_url, cwd=root, check=False)
    assert error_code(done) == "E091", done.stderr  # was E080, from the CREATE TABLE
    wh = _postgres(pg_warehouse_url)
    assert not {t for t in wh.internal_tables() if t.startswith(("snap_", "layer_"))}
    assert wh.sql("SELECT count(*) FROM strata_internal.history")[0][0] == 0


def test_the_cut_is_the_servers_own(postgres_engine):
    """`cut` keeps what PostgreSQL keeps of a name (its `name` type is the cut), a
    character the limit would split included."""
    names = [LONG + "_one", SPLIT + "é_more", "é" * 40, "x" * 63, "short"]
    with _session(postgres_engine) as con:
        for name in names:
            kept = con.execute("SELECT %s::name::text", [name]).fetchone()[0]
            assert cut(name, pg_dialect.MAX_IDENTIFIER_BYTES) == kept, name


def _session(engine):
    import psycopg

    from strata.engine.locations import parse_location

    return psycopg.connect(**parse_location(engine.url()).connect_args(), autocommit=True)
