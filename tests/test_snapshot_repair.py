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
import re
import shlex
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from strata.diagnostics import StrataError

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
    sql(wh, "INSERT INTO orders SELECT 50000 + i, 1.0, 'new', TIMESTAMP '2025-01-01' + to_seconds(i) "
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


# ---------------------------------------------------------------- quarantine on evidence only
# Quarantine follows evidence that ONE snapshot's storage is damaged (a block whose
# checksum does not match, or verify's content hash), never the whole file failing
# (E070) nor a passing failure (out of memory): adapters.duckdb_file.damaged_storage decides.
def test_item16_a_truncated_warehouse_is_E070_for_run_and_nothing_is_written(tmp_path):
    """The shop's warehouse cut to half: `run` quarantined the snapshots it could not
    read, rebuilt them and published into the truncated file ("2 rebuilt, 12
    reused"). Now it stops with E070 naming the file; the file is byte for byte as
    it was (no quarantine entry, no table, no WAL)."""
    wh = tmp_path / "w.duckdb"
    run_json(SHOP, wh)
    os.truncate(wh, wh.stat().st_size // 2)
    before = wh.read_bytes()
    for extra in ([], ["--full-refresh"], ["--only-stale"]):
        proc = cli("run", SHOP, "-o", str(wh), *extra, check=False)
        assert proc.returncode == 1 and codes(proc) == ["E070"], proc.stdout + proc.stderr
        assert f"the warehouse `{wh}` is truncated or damaged" in proc.stderr
        assert "quarantined" not in proc.stdout + proc.stderr
        assert wh.read_bytes() == before and not Path(f"{wh}.wal").exists()
    proc = cli("verify", "--json", "x", "-o", str(wh), check=False)  # verify: E070 too
    assert [d["code"] for d in json.loads(proc.stdout)["error"]] == ["E070"]
    assert wh.read_bytes() == before


def test_item16_only_a_block_checksum_is_evidence_of_a_damaged_snapshot(shop, tmp_path):
    """damaged_storage, asked with the engine's own errors: a checksum mismatch on
    reading a table is; a truncated file (E070 instead) and out of memory are not."""
    from strata.engine.adapters.duckdb_file import damaged_storage, file_failure

    wh, first, _, damaged = shop

    def error_reading(path: Path, table: str, *settings: str) -> duckdb.Error | None:
        con = duckdb.connect(str(path), read_only=True)
        try:
            for setting in settings:
                con.execute(setting)
            con.execute(f"SELECT * FROM strata_internal.{table}").fetchall()
        except duckdb.Error as err:
            return err
        finally:
            con.close()
        return None

    checksum = error_reading(wh, damaged)
    assert damaged_storage(str(wh), checksum)

    cut = tmp_path / "cut.duckdb"
    cut.write_bytes(wh.read_bytes()[: wh.stat().st_size // 2])
    tables = [r[0] for r in sql(wh, "SELECT table_name FROM duckdb_tables() WHERE "
                                    "schema_name = 'strata_internal' AND table_name "
                                    "LIKE 'snap_%' ORDER BY table_name")]
    truncated = next(e for e in (error_reading(cut, t) for t in tables) if e is not None)
    assert "could not read enough bytes" in str(truncated).lower()
    assert not damaged_storage(str(cut), truncated)
    assert file_failure(str(cut), truncated).code == "E070"

    healthy = f"snap_{first['run_id']}_clean_orders"
    memory = error_reading(wh, healthy, "SET threads = 1", "SET memory_limit = '300KB'")
    assert isinstance(memory, duckdb.OutOfMemoryException)
    assert not damaged_storage(str(wh), memory)


WIDE_COLUMNS = 150


def _wide_module(path: Path, changed: bool) -> None:
    """`wide`: 150 columns of 100,000 rows (reading it pins a block per column: ~20
    MiB); `total` reads every column of it. `changed` alters only `total`'s code."""
    derive = ", ".join(f"c{i} = amount + {i}" for i in range(1, WIDE_COLUMNS + 1))
    names = ", ".join(f"c{i}" for i in range(1, WIDE_COLUMNS + 1))
    total = " + ".join(f"c{i}" for i in range(1, WIDE_COLUMNS + 1))
    path.write_text(
        PLAIN.split("model paid")[0]
        + f"model wide {{\n  from orders\n  derive {derive}\n  select id, {names}\n}}\n"
        + "model total {\n  from wide\n  aggregate n = count(), "
        + ("m = max(id), " if changed else "") + f"s = sum({total})\n}}\n")


def test_item16_out_of_memory_reading_an_input_quarantines_nothing(tmp_path):
    """A passing failure says nothing about a snapshot: with the engine's memory
    limit too small to read `wide` (a real DuckDB setting on the run's own
    connection; the run and verify in this process), the run that rebuilds `total`
    fails with E080 and verify with E080, and `wide` is not quarantined: a run with
    memory reuses it. (Before, both quarantined the healthy `wide`.)"""
    from strata.engine import history as hist
    from strata.engine.ops import verify
    from strata.engine.run import RunOptions, execute
    from strata.engine.warehouse import Warehouse
    from strata.semantics.resolve import load_module

    wh, module = tmp_path / "w.duckdb", tmp_path / "m.strata"
    sql(wh, "CREATE TABLE orders AS SELECT i::BIGINT AS id, (i % 97)::DOUBLE AS amount, "
            "'paid' AS status, TIMESTAMP '2024-01-01' + to_seconds(i) AS updated_at "
            "FROM range(100000) t(i)", read_only=False)
    _wide_module(module, changed=False)
    first = run_json(str(module), wh)
    _wide_module(module, changed=True)
    loaded = load_module(str(module))

    def short_of_memory() -> Warehouse:
        opened = Warehouse.open(str(wh))
        opened.con.execute("SET threads = 1")
        opened.con.execute("SET memory_limit = '16MB'")  # the bookkeeping fits, `wide` not
        return opened

    opened = short_of_memory()
    try:
        base = hist.last_with_snapshots(opened, "main")
        opts = RunOptions(only_stale=True, source_fingerprints=base.source_fingerprints)
        with pytest.raises(StrataError) as failed:
            execute(loaded, opened, opts)
        assert [d.code for d in failed.value.diagnostics] == ["E080"]
        assert "Out of Memory" in failed.value.diagnostics[0].message
        with pytest.raises(StrataError) as unverified:
            verify(opened, first["run_id"])
        assert [d.code for d in unverified.value.diagnostics] == ["E080"]
        assert "nothing was quarantined" in unverified.value.diagnostics[0].hint
    finally:
        opened.close()
    assert quarantined(wh) == {}
    again = run_json(str(module), wh, "--only-stale")
    assert again["rebuilt"] == ["total"]
    assert next(m for m in again["models"] if m["model"] == "wide")["status"] == "kept"
    assert live(wh, "wide") == f"snap_{first['run_id']}_wide"


# ---------------------------------------------------------------- verify, read-only
@pytest.mark.parametrize("file_mode", [0o444, 0o644], ids=["file-read-only", "file-writable"])
def test_item16_verify_read_only_reports_E077_and_a_run_still_repairs(tmp_path, file_mode):
    """verify opened the warehouse for writing (to record the quarantine) and so
    failed with E070 on a read-only file. In a read-only folder (and a read-only
    file, or a writable one whose FILE.wal cannot be created), for a root without
    CAP_DAC_OVERRIDE, it reports E077 as before, says in a note that it could not
    record the quarantine, and writes nothing. The next run, which merges onto the
    damaged clean_orders, finds it unreadable, quarantines it and starts over."""
    from test_hostile_env import _as_a_user_bound_by_permissions

    folder = tmp_path / "ro"
    folder.mkdir()
    wh = folder / "W.duckdb"
    first = run_json(SHOP, wh)
    rows = view_rows(wh, "clean_orders")
    damaged = f"snap_{first['run_id']}_clean_orders"
    flip_a_byte(wh, damaged)
    wh.chmod(file_mode)
    folder.chmod(0o555)
    try:
        proc = subprocess.run([STRATA, "verify", first["run_id"], "-o", "W.duckdb"],
                              cwd=folder, capture_output=True, text=True, timeout=180,
                              check=False, env={**os.environ, "NO_COLOR": "1"},
                              preexec_fn=_as_a_user_bound_by_permissions)
    finally:
        folder.chmod(0o755)
        wh.chmod(0o644)
    assert proc.returncode == 1 and codes(proc) == ["E077"], proc.stderr
    assert f"`{damaged}` of `clean_orders`" in proc.stderr
    assert "not quarantined: verify could not record it" in proc.stderr
    assert "permission denied" in proc.stderr
    assert "a run that reads it (a merge onto it, a model reading it) still finds it" in (
        " ".join(proc.stderr.split()))
    assert quarantined(wh) == {} and not Path(f"{wh}.wal").exists()

    repaired = run_json(SHOP, wh)
    assert any(f"`{damaged}` of `clean_orders` could not be read" in n
               for n in repaired["notes"])
    assert live(wh, "clean_orders") != damaged
    assert view_rows(wh, "clean_orders") == rows
    assert list(quarantined(wh)) == [damaged]


# ---------------------------------------------------------------- plan and history
def test_item16_plan_says_a_quarantined_model_is_rebuilt_and_run_only_stale_agrees(shop):
    wh, first, rows, damaged = shop
    cli("verify", first["run_id"], "-o", str(wh), check=False)
    plan = json.loads(cli("plan", SHOP, "-o", str(wh), "--json").stdout)
    to_rebuild = {m["model"]: m["reason"] for m in plan["models"] if m["rebuild"]}
    assert list(to_rebuild) == ["order_totals"]
    why = to_rebuild["order_totals"]
    assert why.startswith(f"snapshot `{damaged}` quarantined by verify of run "
                          f"{first['run_id']}: recorded ")
    assert "now unreadable: Corrupt database file" in why
    text = cli("plan", SHOP, "-o", str(wh)).stdout
    shown = next(line for line in text.splitlines() if " order_totals " in line)
    assert shown.lstrip().startswith("+ order_totals") and f"`{damaged}` quarantined" in shown

    report = run_json(SHOP, wh, "--only-stale")
    assert report["rebuilt"] == list(to_rebuild)
    assert report["stale"]["order_totals"] == why  # the same words
    assert view_rows(wh, "order_totals") == rows
    after = json.loads(cli("plan", SHOP, "-o", str(wh), "--json").stdout)
    assert not [m for m in after["models"] if m["rebuild"]]


def test_item16_history_columns_line_up_with_a_quarantine_entry(shop):
    """`quarantine` is 10 characters: the 8-wide kind column pushed that row's branch,
    time and counts two characters right of every other row's."""
    wh, first, _, _ = shop
    cli("verify", first["run_id"], "-o", str(wh), check=False)
    run_json(SHOP, wh)
    lines = cli("history", "-o", str(wh)).stdout.splitlines()
    columns = [re.match(r"(\S+) +(\S+) +(\S+) +(\S+ \S+) +(\S+)", line) for line in lines]
    assert [m.group(2) for m in columns] == ["run", "quarantine", "run"]
    for column in (2, 3, 4, 5):  # kind, branch (main, *), time, counts: one start each
        assert len({m.start(column) for m in columns}) == 1, lines
