"""Item 16 of issue 14: a corrupted snapshot can be replaced.

One byte flipped in a live snapshot's storage makes DuckDB refuse its block (block
checksums). `verify` says E077 and quarantines the snapshot (a `quarantine` history
entry: nothing published is rewritten); from then on no run reuses it by identity,
keeps it as up to date or merges onto it: the model is computed into a new table
(another name: the damaged one keeps its own until gc) and the view is repointed.
A run that finds an unreadable snapshot itself quarantines it and starts over.
Rollback to a run listing a quarantined snapshot is E096.

Real DuckDB files, the real CLI in subprocesses; the damage is a real flipped byte
inside the snapshot table's own data block of the .duckdb file.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

ROOT = Path(__file__).resolve().parent.parent
STRATA = str(Path(sys.executable).parent / "strata")
SHOP = str(ROOT / "examples" / "shop")
HEADER_BYTES = 3 * 4096  # DuckDB's file header and its two database headers
CHECKSUM_BYTES = 8  # each block starts with the checksum of the rest

PLAIN = """\
source orders {
  id: int
  amount: double
  status: text
  updated_at: timestamp
}
model paid {
  from orders
  filter status = 'paid'
  select id, amount, updated_at
}
model total {
  from paid
  aggregate n = count(), s = sum(amount)
}
"""

UPSERT = """\
source orders {
  id: int
  amount: double
  status: text
  updated_at: timestamp
}
model up {
  from orders
  select id, amount, status, updated_at
  incremental
  merge_strategy: upsert
  merge_keys: [id]
  cdc_column: updated_at
}
"""


# ---------------------------------------------------------------- helpers
def cli(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([STRATA, *args], capture_output=True, text=True, check=False,
                          env={**os.environ, "NO_COLOR": "1"}, timeout=180)
    if check and proc.returncode != 0:
        raise AssertionError(f"strata {' '.join(args)} exited {proc.returncode}:\n"
                             f"{proc.stdout}\n{proc.stderr}")
    return proc


def run_json(module: str, wh: Path, *extra: str) -> dict:
    return json.loads(cli("run", module, "-o", str(wh), "--json", *extra).stdout)


def history(wh: Path) -> list[dict]:
    return json.loads(cli("history", "-o", str(wh), "--json").stdout)


def codes(proc: subprocess.CompletedProcess) -> list[str]:
    return [line.split("]")[0].split("[")[1] for line in proc.stderr.splitlines()
            if line.startswith("error[")]


def sql(wh: Path, statement: str, read_only: bool = True):
    con = duckdb.connect(str(wh), read_only=read_only)
    try:
        return con.execute(statement).fetchall()
    finally:
        con.close()


def view_rows(wh: Path, model: str) -> list[tuple]:
    return sorted(sql(wh, f'SELECT * FROM main."v_{model}"'), key=repr)


def live(wh: Path, model: str) -> str:
    (text,) = sql(wh, "SELECT sql FROM duckdb_views() WHERE schema_name = 'main' AND "
                      f"view_name = 'v_{model}'")[0]
    return text.rsplit(".", 1)[1].strip(' ";\n')


def flip_a_byte(wh: Path, table: str) -> None:
    """Flip one byte inside the data block of strata_internal.<table>, a block no other
    table uses (so exactly this snapshot is damaged); the file is closed meanwhile."""
    con = duckdb.connect(str(wh), read_only=True)
    try:
        (block_size,) = con.execute("SELECT block_size FROM pragma_database_size()").fetchone()
        users: dict[int, set[str]] = {}
        for (name,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE "
                                   "schema_name = 'strata_internal'").fetchall():
            for (block,) in con.execute(
                    "SELECT DISTINCT block_id FROM pragma_storage_info(?) WHERE block_id >= 0",
                    [f"strata_internal.{name}"]).fetchall():
                users.setdefault(block, set()).add(name)
    finally:
        con.close()
    block = min(b for b, names in users.items() if names == {table})
    position = HEADER_BYTES + block * block_size + CHECKSUM_BYTES + 64
    with open(wh, "r+b") as f:
        f.seek(position)
        byte = f.read(1)
        f.seek(position)
        f.write(bytes([byte[0] ^ 0xFF]))


def unreadable(wh: Path, model: str) -> bool:
    try:
        view_rows(wh, model)
    except duckdb.Error as err:
        return "checksum" in str(err).lower()
    return False


def quarantined(wh: Path) -> dict[str, dict]:
    out = {}
    for entry in history(wh):
        if entry["kind"] == "quarantine":
            out.update(entry["details"]["quarantined"])
    return out


@pytest.fixture
def shop(tmp_path):
    """The shop example published once; order_totals' snapshot then damaged."""
    wh = tmp_path / "w.duckdb"
    first = run_json(SHOP, wh)
    rows = view_rows(wh, "order_totals")
    damaged = f"snap_{first['run_id']}_order_totals"
    assert live(wh, "order_totals") == damaged
    flip_a_byte(wh, damaged)
    assert unreadable(wh, "order_totals")
    return wh, first, rows, damaged


# ---------------------------------------------------------------- the tests
def test_item16_verify_quarantines_and_full_refresh_replaces_the_damaged_snapshot(shop):
    wh, first, rows, damaged = shop
    proc = cli("verify", first["run_id"], "-o", str(wh), check=False)
    assert proc.returncode == 1 and codes(proc) == ["E077"]
    assert f"`{damaged}` of `order_totals`" in proc.stderr
    # the hint is the exact command that repairs it
    command = f"strata run {shlex.quote(SHOP)} -o {shlex.quote(str(wh))}"
    assert f"`{command}` rebuilds `order_totals` into a new table" in proc.stderr
    assert "quarantined by verify of run" in proc.stderr
    assert list(quarantined(wh)) == [damaged]  # only the damaged snapshot

    refresh = run_json(SHOP, wh, "--full-refresh")
    assert refresh["rebuilt"] == ["order_totals"]  # not "0 rebuilt, 14 reused"
    model = next(m for m in refresh["models"] if m["model"] == "order_totals")
    assert model["snapshot"] != damaged and model["snapshot"].startswith("snap_")
    assert any(f"quarantined {damaged}" in n for n in model["notes"])
    assert live(wh, "order_totals") == model["snapshot"]
    assert view_rows(wh, "order_totals") == rows  # readable, the same rows as published
    assert json.loads(cli("verify", refresh["run_id"], "-o", str(wh), "--json").stdout)["ok"]

    # the next plain run reuses the new table, never the damaged one
    again = run_json(SHOP, wh)
    assert again["rebuilt"] == [] and live(wh, "order_totals") == model["snapshot"]
    assert json.loads(cli("verify", again["run_id"], "-o", str(wh), "--json").stdout)["ok"]
    # the damaged table is still there (published tables are never dropped by a run)
    assert sql(wh, "SELECT count(*) FROM duckdb_tables() WHERE schema_name = "
                   f"'strata_internal' AND table_name = '{damaged}'") == [(1,)]


def test_item16_rollback_to_a_run_with_a_quarantined_snapshot_is_E096(shop):
    wh, first, rows, damaged = shop
    cli("verify", first["run_id"], "-o", str(wh), check=False)
    repaired = run_json(SHOP, wh)
    assert repaired["rebuilt"] == ["order_totals"]
    proc = cli("rollback", first["run_id"], "-o", str(wh), check=False)
    assert proc.returncode == 1 and codes(proc) == ["E096"]
    assert f"`{damaged}` of `order_totals` is quarantined" in proc.stderr
    assert f"`strata run {shlex.quote(SHOP)} -o {shlex.quote(str(wh))}`" in proc.stderr
    assert view_rows(wh, "order_totals") == rows  # nothing was repointed
    assert [e["kind"] for e in history(wh)][:2] == ["run", "quarantine"]


def test_item16_only_stale_rebuilds_a_quarantined_snapshot(shop):
    wh, first, rows, damaged = shop
    cli("verify", first["run_id"], "-o", str(wh), check=False)
    report = run_json(SHOP, wh, "--only-stale")
    assert report["status"] == "published" and report["rebuilt"] == ["order_totals"]
    assert "quarantined" in report["stale"]["order_totals"]
    assert live(wh, "order_totals") not in (damaged, "")
    assert view_rows(wh, "order_totals") == rows


def test_item16_a_run_that_cannot_read_a_snapshot_quarantines_it_and_starts_over(tmp_path):
    """No verify first: the run merges clean_orders onto its damaged previous snapshot
    (and downstream models read it); it quarantines it and computes it in full."""
    wh = tmp_path / "w.duckdb"
    first = run_json(SHOP, wh)
    rows = view_rows(wh, "clean_orders")
    damaged = f"snap_{first['run_id']}_clean_orders"
    flip_a_byte(wh, damaged)
    report = run_json(SHOP, wh)  # not E080, not E000
    assert report["status"] == "published"
    assert any(f"`{damaged}` of `clean_orders` could not be read" in n
               and "started over" in n for n in report["notes"])
    model = next(m for m in report["models"] if m["model"] == "clean_orders")
    assert model["status"] == "rebuilt" and model["path"] == "full"
    assert any(f"previous snapshot `{damaged}` is quarantined" in n for n in model["notes"])
    assert view_rows(wh, "clean_orders") == rows
    assert json.loads(cli("verify", report["run_id"], "-o", str(wh), "--json").stdout)["ok"]
    assert list(quarantined(wh)) == [damaged]


def test_item16_the_same_run_id_gets_a_second_physical_table(tmp_path):
    """Same code, same data: the repairing run has the first run's id; its snapshot
    cannot take the damaged table's name, so it is snap_<run>_<model>_2."""
    wh, module = tmp_path / "w.duckdb", tmp_path / "m.strata"
    module.write_text(PLAIN)
    sql(wh, "CREATE TABLE orders AS SELECT i::BIGINT AS id, (i % 97)::DOUBLE AS amount, "
            "CASE WHEN i % 3 = 0 THEN 'open' ELSE 'paid' END AS status, "
            "TIMESTAMP '2024-01-01' + to_seconds(i) AS updated_at FROM range(50000) t(i)",
        read_only=False)
    first = run_json(str(module), wh)
    rows = view_rows(wh, "paid")
    damaged = f"snap_{first['run_id']}_paid"
    flip_a_byte(wh, damaged)
    assert codes(cli("verify", first["run_id"], "-o", str(wh), check=False)) == ["E077"]
    again = run_json(str(module), wh)
    assert again["run_id"] == first["run_id"] and again["rebuilt"] == ["paid"]
    assert live(wh, "paid") == f"{damaged}_2"
    assert view_rows(wh, "paid") == rows
    # the newest entry with that id is the repaired one: it verifies, and rolls back
    assert json.loads(cli("verify", first["run_id"], "-o", str(wh), "--json").stdout)["ok"]
    cli("rollback", first["run_id"], "-o", str(wh))
    assert live(wh, "paid") == f"{damaged}_2"
    # gc takes the damaged table once no run it keeps lists it
    gc = json.loads(cli("gc", "-o", str(wh), "--older-than", "0d", "--keep-last", "0",
                        "--json").stdout)
    assert damaged in [c["snapshot"] for c in gc["collected"]]
    assert json.loads(cli("verify", first["run_id"], "-o", str(wh), "--json").stdout)["ok"]


def test_item16_a_merge_never_builds_on_a_damaged_layer(tmp_path):
    """A layered snapshot over a damaged base: verify quarantines it and the older
    snapshot that is that base; the next run computes the model in full."""
    wh, module = tmp_path / "w.duckdb", tmp_path / "m.strata"
    module.write_text(UPSERT)
    sql(wh, "CREATE TABLE orders AS SELECT i::BIGINT AS id, (i % 97)::DOUBLE AS amount, "
            "'old' AS status, TIMESTAMP '2024-01-01' + to_seconds(i) AS updated_at "
            "FROM range(50000) t(i)", read_only=False)
    base = run_json(str(module), wh)
    sql(wh, "INSERT INTO orders SELECT i, 1.0, 'new', TIMESTAMP '2025-01-01' + to_seconds(i) "
            "FROM range(10) t(i)", read_only=False)
    layered = run_json(str(module), wh)
    base_snap, layered_snap = (f"snap_{base['run_id']}_up", f"snap_{layered['run_id']}_up")
    assert live(wh, "up") == layered_snap
    flip_a_byte(wh, base_snap)
    proc = cli("verify", layered["run_id"], "-o", str(wh), check=False)
    assert codes(proc) == ["E077"]
    assert set(quarantined(wh)) == {base_snap, layered_snap}
    assert codes(cli("rollback", base["run_id"], "-o", str(wh), check=False)) == ["E096"]

    sql(wh, "INSERT INTO orders SELECT i, 2.0, 'newer', TIMESTAMP '2026-01-01' + "
            "to_seconds(i) FROM range(5) t(i)", read_only=False)
    report = run_json(str(module), wh)
    model = report["models"][0]
    assert model["status"] == "rebuilt" and model["path"] == "full"
    assert any(f"previous snapshot `{layered_snap}` is quarantined" in n
               for n in model["notes"])
    # computed in full: the model's query over every source row, as a first run
    expected = sorted(sql(wh, "SELECT id, amount, status, updated_at FROM orders"), key=repr)
    assert view_rows(wh, "up") == expected
    assert json.loads(cli("verify", report["run_id"], "-o", str(wh), "--json").stdout)["ok"]
