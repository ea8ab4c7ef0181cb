"""Issue 14, a hostile environment: what the warehouse's file, folder, disk and the
process's environment do to a command. Every failure is a coded diagnostic that
names what it is about (E070 for the warehouse file itself, never a model or a
source blamed for the file's I/O failure), with --json a document on stdout, and
never a traceback.

Real parts only: the shop example run into a real DuckDB file by the real `strata`
script in subprocesses; the file truncated with os.truncate; a folder made
read-only and the command run as root without the capabilities that let root write
anyway; a real full disk (a small tmpfs, mounted here as root).
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

ROOT = Path(__file__).resolve().parent.parent
STRATA = str(Path(sys.executable).parent / "strata")
OTHER_CODES = ("E000", "E071", "E077", "E080")  # what the file's failures were blamed as


def _env(extra: dict | None = None) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("STRATA_") or k == "STRATA_CACHE_DIR"}
    env["STRATA_LOCK_TIMEOUT"] = "5"
    env.update(extra or {})
    return env


def strata(*args: str, cwd: Path, env: dict | None = None, preexec=None,
           remove: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    full = _env(env)
    for name in remove:
        full.pop(name, None)
    proc = subprocess.run([STRATA, *args], cwd=cwd, env=full, capture_output=True,
                          text=True, timeout=120, check=False, preexec_fn=preexec)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


def codes(proc: subprocess.CompletedProcess) -> list[str]:
    return [line.split("]")[0].split("[")[1] for line in proc.stderr.splitlines()
            if line.startswith("error[")]


def assert_file_failure(proc: subprocess.CompletedProcess, warehouse: str, what: str) -> None:
    """E070 naming the warehouse and what is wrong with it, exit 1, no other code."""
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert set(codes(proc)) == {"E070"}, proc.stderr
    assert f"the warehouse `{warehouse}`" in proc.stderr, proc.stderr
    assert what in proc.stderr, proc.stderr


# ---------------------------------------------------------------- the warehouse
@dataclass
class Shop:
    """A copy of examples/shop (so its data can change) and a warehouse with two runs:
    the second changed a product, so the first run's snapshots of the models that read
    it are no longer live (something for gc to collect)."""

    dir: Path
    template: Path
    first: str
    second: str

    @property
    def module(self) -> str:
        return str(self.dir / "shop")

    def warehouse(self, folder: Path, name: str = "W.duckdb") -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / name
        shutil.copyfile(self.template, target)
        return target

    def change_data(self) -> None:
        """A product goes inactive: a run after this rebuilds what reads it."""
        products = self.dir / "shop" / "data" / "products.csv"
        products.write_text(products.read_text().replace(",true,", ",false,", 1))


@pytest.fixture(scope="module")
def shop(tmp_path_factory) -> Shop:
    base = tmp_path_factory.mktemp("shop")
    shutil.copytree(ROOT / "examples" / "shop", base / "shop")
    wh = base / "template.duckdb"
    first = strata("run", "shop", "-o", str(wh), "--json", cwd=base)
    assert first.returncode == 0, first.stderr
    made = Shop(base, wh, json.loads(first.stdout)["run_id"], "")
    made.change_data()
    second = strata("run", "shop", "-o", str(wh), "--json", cwd=base)
    assert second.returncode == 0, second.stderr
    made.second = json.loads(second.stdout)["run_id"]
    assert json.loads(second.stdout)["rebuilt"], "the second run rebuilt nothing"
    return made


def history(wh: Path) -> list[tuple]:
    con = duckdb.connect(str(wh), read_only=True)
    try:
        return con.execute("SELECT seq, id, kind FROM strata_internal.history "
                           "ORDER BY seq").fetchall()
    finally:
        con.close()


# ---------------------------------------------------------------- 6, 9: STRATA_LOCK_TIMEOUT
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1", "86401", "1e400"])
def test_6_lock_timeout_nan_inf_negative_or_huge_is_E084_at_once(shop, tmp_path, value):
    """`nan` waited forever (every deadline comparison false); inf, a negative or a
    huge value is no wait anyone means. Sane: 0 to 86400 seconds, said in the hint.
    Asked even while another process holds the lock, the answer comes at once."""
    wh = shop.warehouse(tmp_path)
    holder = duckdb.connect(str(wh))  # holds DuckDB's lock on the file
    try:
        proc = strata("history", "-o", str(wh), cwd=tmp_path,
                      env={"STRATA_LOCK_TIMEOUT": value})
    finally:
        holder.close()
    assert proc.returncode == 1 and codes(proc) == ["E084"], proc.stderr
    assert f"STRATA_LOCK_TIMEOUT is `{value}`" in proc.stderr
    assert "from 0 to 86400" in proc.stderr and "waiting for the warehouse lock" not in proc.stderr


@pytest.mark.parametrize("value", ["0", "0.5", "86400"])
def test_6_lock_timeout_from_0_to_a_day_is_accepted(shop, tmp_path, value):
    wh = shop.warehouse(tmp_path)
    proc = strata("history", "-o", str(wh), cwd=tmp_path, env={"STRATA_LOCK_TIMEOUT": value})
    assert proc.returncode == 0, proc.stderr
    assert shop.second in proc.stdout


@pytest.mark.parametrize("value", ["abc", "", "10s"])
def test_9_lock_timeout_not_a_number_or_empty_is_E084_on_every_command(shop, tmp_path, value):
    """Was a ValueError (E000) on every command that opens a warehouse."""
    wh = shop.warehouse(tmp_path)
    before = history(wh)
    for args in (["history"], ["gc", "--older-than", "0d"], ["rollback", shop.first],
                 ["run", shop.module]):
        proc = strata(*args, "-o", str(wh), cwd=tmp_path, env={"STRATA_LOCK_TIMEOUT": value})
        assert proc.returncode == 1 and codes(proc) == ["E084"], (args, proc.stderr)
        shown = "empty" if not value.strip() else f"`{value}`"
        assert f"STRATA_LOCK_TIMEOUT is {shown}" in proc.stderr
    assert history(wh) == before  # nothing ran


def test_9_lock_timeout_unset_is_the_default(shop, tmp_path):
    wh = shop.warehouse(tmp_path)
    proc = strata("history", "-o", str(wh), cwd=tmp_path, remove=("STRATA_LOCK_TIMEOUT",))
    assert proc.returncode == 0, proc.stderr


# ---------------------------------------------------------------- 10: gc --older-than
@pytest.mark.parametrize("age", ["2738000d", "365001d", "99999999999999999999999w"])
def test_10_gc_older_than_too_long_is_E082(shop, tmp_path, age):
    """Was an OverflowError (E000): the cutoff fell before year 1."""
    wh = shop.warehouse(tmp_path)
    before = history(wh)
    proc = strata("gc", "-o", str(wh), "--older-than", age, cwd=tmp_path)
    assert proc.returncode == 1 and codes(proc) == ["E082"], proc.stderr
    assert f"duration `{age}` is too long: at most 365000d" in proc.stderr
    assert history(wh) == before


def test_10_gc_older_than_the_longest_collects_nothing(shop, tmp_path):
    wh = shop.warehouse(tmp_path)
    proc = strata("gc", "-o", str(wh), "--older-than", "365000d", "--keep-last", "0",
                  "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["collected"] == []


# ---------------------------------------------------------------- 11: a user's v_<model>
def _own_table(wh: Path, name: str) -> None:
    con = duckdb.connect(str(wh))
    try:
        con.execute(f"CREATE TABLE main.{name} AS SELECT 42 AS mine")
    finally:
        con.close()


def _internal_tables(wh: Path) -> set[str]:
    con = duckdb.connect(str(wh), read_only=True)
    try:
        return {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() "
                                          "WHERE schema_name = 'strata_internal'").fetchall()}
    finally:
        con.close()


def test_11_users_table_named_like_a_live_view_is_E094_before_anything_is_built(shop, tmp_path):
    """Was E000 "Existing object ... is of type Table" after building everything."""
    wh = tmp_path / "W.duckdb"
    _own_table(wh, "v_shop_kpis")
    proc = strata("run", shop.module, "-o", str(wh), cwd=tmp_path)
    assert proc.returncode == 1 and codes(proc) == ["E094"], proc.stderr
    assert "`main.v_shop_kpis` is a table strata did not create" in proc.stderr
    assert "model `shop_kpis`" in proc.stderr and "RENAME TO" in proc.stderr
    con = duckdb.connect(str(wh), read_only=True)
    try:
        assert con.execute("SELECT mine FROM main.v_shop_kpis").fetchall() == [(42,)]
    finally:
        con.close()
    assert not any(t.startswith("snap_") for t in _internal_tables(wh))  # nothing built
    assert history(wh) == []


def test_11_rollback_onto_a_users_table_is_E094_and_repoints_nothing(shop, tmp_path):
    wh = shop.warehouse(tmp_path)
    con = duckdb.connect(str(wh))
    try:
        con.execute("DROP VIEW main.v_shop_kpis")
        con.execute("CREATE TABLE main.v_shop_kpis AS SELECT 42 AS mine")
        views = con.execute("SELECT view_name, sql FROM duckdb_views() "
                            "WHERE schema_name = 'main' ORDER BY 1").fetchall()
    finally:
        con.close()
    before = history(wh)
    proc = strata("rollback", shop.first, "-o", str(wh), cwd=tmp_path)
    assert proc.returncode == 1 and codes(proc) == ["E094"], proc.stderr
    con = duckdb.connect(str(wh), read_only=True)
    try:
        assert con.execute("SELECT view_name, sql FROM duckdb_views() "
                           "WHERE schema_name = 'main' ORDER BY 1").fetchall() == views
    finally:
        con.close()
    assert history(wh) == before


# ---------------------------------------------------------------- 12: a truncated file
# a command that writes finds the truncation before writing: E070 always (a run
# used to quarantine what it could not read and publish "2 rebuilt, 12 reused")
WRITERS_12 = [["gc", "--older-than", "0d", "--keep-last", "0"], ["branch", "create", "b"],
              ["replay", "SECOND", "--execute"], ["run", "MODULE"], ["rollback", "FIRST"]]


def _truncate(wh: Path, fraction: float) -> None:
    os.truncate(wh, int(wh.stat().st_size * fraction))


@pytest.mark.parametrize("fraction", [0.5, 0.3])
def test_12_truncated_warehouse_is_E070_naming_the_file(shop, tmp_path, fraction):
    """Was E000 (history, verify, gc, rollback, branch create, replay), E071 or E080
    blaming a source or a model (run), E077 "changed after it was published"
    (verify). What still reads (the catalogue and history may sit in the half that
    is left) may work; what fails is E070 naming the file, and verify, which reads
    every snapshot, always fails so."""
    commands = [["history"], ["verify", shop.second], ["gc", "--older-than", "0d",
                "--keep-last", "0"], ["rollback", shop.first], ["branch", "create", "b"],
                ["replay", shop.second], ["replay", shop.second, "--execute"],
                ["run", shop.module]]
    writers = [_args(shop, a) for a in WRITERS_12]
    for args in commands:
        wh = shop.warehouse(tmp_path, "W.duckdb")
        _truncate(wh, fraction)
        proc = strata(*args, "-o", "W.duckdb", cwd=tmp_path)
        assert not set(codes(proc)) & set(OTHER_CODES), (args, proc.stderr)
        if proc.returncode != 0 or args[0] == "verify" or args in writers:
            assert_file_failure(proc, "W.duckdb", "is truncated or damaged")
            assert "W.duckdb" in proc.stderr  # the engine's words, or the sizes, name it
        assert "quarantined" not in proc.stdout + proc.stderr, (args, proc.stdout)


@pytest.mark.parametrize("fraction", [0.5, 0.3])
def test_12_truncated_warehouse_command_that_writes_is_E070_and_writes_nothing(
        shop, tmp_path, fraction):
    """A run into a truncated file quarantined the snapshots it could not read,
    rebuilt them and published there; gc, rollback, branch create and replay
    --execute wrote what they could before reaching the missing part. A writable
    open compares the file's size with the blocks in use its header counts: E070
    before anything is written, the file byte for byte as it was, no WAL beside it."""
    for args in WRITERS_12:
        wh = shop.warehouse(tmp_path, "W.duckdb")
        _truncate(wh, fraction)
        before = wh.read_bytes()
        proc = strata(*_args(shop, args), "-o", "W.duckdb", cwd=tmp_path)
        assert_file_failure(proc, "W.duckdb", "is truncated or damaged")
        assert "its header counts" in proc.stderr, proc.stderr  # the sizes, compared
        assert wh.read_bytes() == before and not Path(f"{wh}.wal").exists(), args


# ---------------------------------------------------------------- 13: not writable
_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH, _CAP_FOWNER = 1, 2, 3
_PR_CAPBSET_DROP = 24


def _as_a_user_bound_by_permissions() -> None:
    """preexec_fn: root keeps its uid but loses the capabilities that let it write
    where the permission bits say no (the bounding set, dropped before exec, is what
    the new program gets). A non-root user is bound by them already."""
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH, _CAP_FOWNER):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


@pytest.fixture
def read_only_folder(shop, tmp_path):
    """The warehouse in a folder nobody may write (the file itself writable: DuckDB
    must still create FILE.wal beside it), restored afterwards."""
    folder = tmp_path / "ro"
    wh = shop.warehouse(folder)
    folder.chmod(0o555)
    yield folder, wh
    folder.chmod(0o755)


WRITES = [["gc", "--older-than", "0d", "--keep-last", "0"],
          ["rollback", "FIRST"], ["branch", "create", "b"], ["replay", "SECOND", "--execute"],
          ["run", "MODULE", "--full-refresh"]]


def _args(shop: Shop, args: list[str]) -> list[str]:
    names = {"FIRST": shop.first, "SECOND": shop.second, "MODULE": shop.module}
    return [names.get(a, a) for a in args]


def test_13_folder_not_writable_is_E070_permission_denied(shop, read_only_folder):
    """Was E000 (gc, rollback, branch create, replay --execute) and E080 blaming a
    model (run). Reading commands still work; once the folder is writable again,
    everything does, and nothing was half-written."""
    folder, wh = read_only_folder
    before = history(wh)
    for args in WRITES:
        proc = strata(*_args(shop, args), "-o", "W.duckdb", cwd=folder,
                      preexec=_as_a_user_bound_by_permissions)
        assert_file_failure(proc, "W.duckdb", "permission denied")
        assert "W.duckdb.wal" in proc.stderr  # which file the engine could not create
    compact = strata("gc", "--older-than", "365000d", "--compact-file", "-o", "W.duckdb",
                     cwd=folder, preexec=_as_a_user_bound_by_permissions)
    assert compact.returncode == 1 and codes(compact) == ["E070"], compact.stderr
    assert "W.duckdb" in compact.stderr and "the original is untouched" in compact.stderr
    for args in (["history"], ["verify", shop.second], ["replay", shop.first]):
        proc = strata(*args, "-o", "W.duckdb", cwd=folder,
                      preexec=_as_a_user_bound_by_permissions)
        assert proc.returncode == 0, (args, proc.stderr)
    folder.chmod(0o755)
    assert history(wh) == before
    assert strata("verify", shop.second, "-o", "W.duckdb", cwd=folder).returncode == 0
    assert strata("rollback", shop.first, "-o", "W.duckdb", cwd=folder).returncode == 0


def test_13_warehouse_file_not_writable_is_E070_when_opened_for_writing(shop, read_only_folder):
    folder, wh = read_only_folder
    folder.chmod(0o755)
    wh.chmod(0o444)
    folder.chmod(0o555)
    proc = strata("rollback", shop.first, "-o", "W.duckdb", cwd=folder,
                  preexec=_as_a_user_bound_by_permissions)
    assert_file_failure(proc, "W.duckdb", "permission denied")
    assert "create files in its folder" in proc.stderr  # the hint says what to fix


# ---------------------------------------------------------------- 14: a full disk
@dataclass
class Disk:
    folder: Path
    how: str  # "tmpfs" or "RLIMIT_FSIZE"
    preexec: object

    def fill(self) -> None:
        """Take every free byte (tmpfs); under a file size limit there is nothing to
        take: the limit is the full disk."""
        if self.how != "tmpfs":
            return
        for name, size in (("filler", 1 << 16), ("filler2", 1)):  # then the last bytes
            try:
                with open(self.folder / name, "wb", buffering=0) as out:
                    while True:
                        out.write(b"\0" * size)
            except OSError as err:
                assert err.errno == errno.ENOSPC

    def free(self) -> None:
        for name in ("filler", "filler2"):
            (self.folder / name).unlink(missing_ok=True)


def _limit_file_size(limit: int):
    def preexec() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past it fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return preexec


@contextmanager
def _small_disk(folder: Path, mib: int, fallback_limit: int):
    """A tmpfs of `mib` MiB mounted at `folder` (we are root in CI); where mounting
    is not allowed, the nearest real stand-in: RLIMIT_FSIZE of `fallback_limit`
    bytes on the command (SIGXFSZ ignored, so a write that grows a file past it
    fails with EFBIG, "File too large")."""
    folder.mkdir()
    name = f"strata-{uuid.uuid4().hex[:8]}"
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={mib}m", name, str(folder)],
                             capture_output=True, check=False).returncode == 0
    if not mounted:
        yield Disk(folder, "RLIMIT_FSIZE", _limit_file_size(fallback_limit))
        return
    try:
        yield Disk(folder, "tmpfs", None)
    finally:
        subprocess.run(["umount", str(folder)], check=True)


@pytest.fixture
def full_disk(tmp_path):
    """24 MiB, or a file size limit of 1 byte: the warehouse, its WAL and a
    compaction's copy cannot grow."""
    with _small_disk(tmp_path / "disk", 24, 1) as disk:
        yield disk


def test_14_full_disk_is_E070_no_space_and_everything_recovers(shop, full_disk):
    """Was E000 (gc, --compact-file) and E080 blaming a model (run). Invariants hold:
    nothing is half-written, and once space is freed the same commands work."""
    wh = shop.warehouse(full_disk.folder)
    before = history(wh)
    shop_changed = full_disk.folder.parent / "changed"
    shutil.copytree(shop.dir / "shop", shop_changed)
    products = shop_changed / "data" / "products.csv"
    products.write_text(products.read_text().replace(",true,", ",false,", 2))
    full_disk.fill()
    what = ("no space left on the device" if full_disk.how == "tmpfs"
            else "reached the largest size this process may write")
    # in an order that works once there is space (gc last: it collects the first run)
    failing = [["rollback", shop.first], ["branch", "create", "b"], ["run", str(shop_changed)],
               ["gc", "--older-than", "0d", "--keep-last", "0"],
               ["gc", "--older-than", "365000d", "--compact-file"]]
    for args in failing:
        proc = strata(*args, "-o", "W.duckdb", cwd=full_disk.folder, preexec=full_disk.preexec)
        assert not set(codes(proc)) & set(OTHER_CODES), (args, proc.stderr)
        if args[1:] == ["--older-than", "365000d", "--compact-file"]:
            assert proc.returncode == 1 and codes(proc) == ["E070"], proc.stderr
            assert "the original is untouched" in proc.stderr
        else:
            assert_file_failure(proc, "W.duckdb", what)
    as_json = strata("run", str(shop_changed), "-o", "W.duckdb", "--json",
                     cwd=full_disk.folder, preexec=full_disk.preexec)
    assert json.loads(as_json.stdout)["error"][0]["code"] == "E070"
    full_disk.free()
    assert history(wh) == before
    for run_id in (shop.first, shop.second):
        assert strata("verify", run_id, "-o", "W.duckdb", cwd=full_disk.folder).returncode == 0
    for args in failing:
        proc = strata(*args, "-o", "W.duckdb", cwd=full_disk.folder)
        assert proc.returncode == 0, (args, proc.stderr)
    latest = json.loads(strata("history", "-o", "W.duckdb", "--json", cwd=full_disk.folder
                               ).stdout)
    last_run = next(e["id"] for e in latest if e["kind"] == "run")
    assert last_run not in (shop.first, shop.second)
    assert strata("verify", last_run, "-o", "W.duckdb", cwd=full_disk.folder).returncode == 0


# ------------------------------------------- issue 39, item 10: the disk fills mid-run
WIDE_MODELS = 6
WIDE_ROWS = 100_000  # under a DuckDB row group: a table is written to the WAL at COMMIT


def _wide_module(folder: Path, rows: int) -> Path:
    """WIDE_MODELS models, each a copy of a source of `rows` rows: with WIDE_ROWS, far
    more than an 8 MiB disk holds, and each table small enough that the transaction
    keeps it until the COMMIT writes it (the commit is what meets the full disk)."""
    (folder / "data").mkdir(parents=True, exist_ok=True)
    models = "".join(f"model m{i} {{\n  from wide\n  derive k = id + {i}\n  select id, s, k\n}}\n"
                     for i in range(1, WIDE_MODELS + 1))
    (folder / "m.strata").write_text(
        "source wide = file 'data/wide.csv' {\n  id: int\n  s: text\n}\n" + models)
    with open(folder / "data" / "wide.csv", "w") as out:
        out.write("id,s\n")
        out.writelines(f"{i},{uuid.UUID(int=i * 0x9E3779B97F4A7C15 % (1 << 128)).hex}\n"
                       for i in range(rows))
    return folder


def _views(wh: Path) -> dict[str, list]:
    """Every published view's rows."""
    con = duckdb.connect(str(wh), read_only=True)
    try:
        names = [r[0] for r in con.execute(
            "SELECT view_name FROM duckdb_views() WHERE schema_name = 'main' AND NOT internal"
        ).fetchall()]
        return {n: con.execute(f'SELECT * FROM "{n}" ORDER BY ALL').fetchall() for n in names}
    finally:
        con.close()


@pytest.mark.parametrize("workers", ["1", "4"])
def test_a_disk_that_fills_during_a_run_is_E070_naming_the_file_and_no_view_changes(
        tmp_path, workers):
    """A build transaction whose COMMIT met the full disk was ended by it; the cleanup
    then rolled it back unguarded, and "cannot rollback - no transaction is active"
    replaced the failure: E000 (with --workers 1 every time). Each of several runs
    onto a disk that fills during the build is E070 naming the warehouse; every
    published view still gives its old rows and the history is as it was; the file
    left behind, given room, runs and publishes."""
    module = _wide_module(tmp_path / "mod", 50)
    first = tmp_path / "first.duckdb"
    made = strata("run", "mod", "-o", str(first), cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    published, before = _views(first), history(first)
    assert sorted(published) == [f"v_m{i}" for i in range(1, WIDE_MODELS + 1)]
    _wide_module(module, WIDE_ROWS)
    roomy = tmp_path / "roomy"
    roomy.mkdir()
    with _small_disk(tmp_path / "disk", 8, 4 << 20) as disk:
        wh = disk.folder / "W.duckdb"
        shutil.copyfile(first, wh)
        what = ("no space left on the device" if disk.how == "tmpfs"
                else "reached the largest size this process may write")
        for _ in range(4):
            proc = strata("run", str(module), "-o", "W.duckdb", "--workers", workers,
                          cwd=disk.folder, preexec=disk.preexec)
            assert_file_failure(proc, "W.duckdb", what)
            assert _views(wh) == published
            assert history(wh) == before
        for name in ("W.duckdb", "W.duckdb.wal"):
            if (disk.folder / name).exists():
                shutil.copyfile(disk.folder / name, roomy / name)
    assert _views(roomy / "W.duckdb") == published
    proc = strata("run", str(module), "-o", "W.duckdb", "--workers", workers, "--json",
                  cwd=roomy)
    assert proc.returncode == 0, proc.stderr
    assert sorted(json.loads(proc.stdout)["rebuilt"]) == [
        f"m{i}" for i in range(1, WIDE_MODELS + 1)]
    assert len(_views(roomy / "W.duckdb")["v_m1"]) == WIDE_ROWS


# ---------------------------------------------------------------- the lock-wait line
def test_lock_wait_line_shows_the_path_escaped(shop, tmp_path):
    """`waiting for the warehouse lock on PATH` went to stderr raw: a folder named
    with ESC and a carriage return drove the terminal. It is escaped as every line a
    command prints is (a real lock: another connection holds the file)."""
    folder = tmp_path / "a\x1b[2Jb\rc"
    wh = shop.warehouse(folder)
    holder = duckdb.connect(str(wh))
    try:
        proc = strata("history", "-o", str(wh), cwd=tmp_path,
                      env={"STRATA_LOCK_TIMEOUT": "0.5"})
    finally:
        holder.close()
    assert codes(proc) == ["E075"], proc.stderr
    waiting = [line for line in proc.stderr.splitlines() if "waiting for the warehouse lock" in line]
    assert len(waiting) == 1, proc.stderr
    assert "a\\x1b[2Jb\\rc" in waiting[0], waiting
    assert "\x1b" not in proc.stderr and "\r" not in proc.stderr


# ---------------------------------------------------------------- 15: --json failures
def test_15_json_coded_failure_is_a_document_on_stdout(shop, tmp_path):
    wh = shop.warehouse(tmp_path)
    _truncate(wh, 0.3)
    proc = strata("verify", shop.second, "-o", "W.duckdb", "--json", cwd=tmp_path)
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    assert data["status"] == "error"
    assert [d["code"] for d in data["error"]] == ["E070"]
    assert "`W.duckdb` is truncated or damaged" in data["error"][0]["message"]


def test_15_json_internal_error_is_a_document_on_stdout_and_text_on_stderr(shop, tmp_path):
    """An internal error (E000: here bookkeeping someone altered by hand, which
    strata does not expect) printed only text on stderr: a JSON consumer got an empty
    stdout. Now stdout parses, and stderr still has the text to report."""
    wh = shop.warehouse(tmp_path)
    con = duckdb.connect(str(wh))
    try:
        con.execute("ALTER TABLE strata_internal.history DROP COLUMN entry")
    finally:
        con.close()
    proc = strata("history", "-o", "W.duckdb", "--json", cwd=tmp_path)
    assert proc.returncode == 3
    data = json.loads(proc.stdout)
    assert data["status"] == "error" and [d["code"] for d in data["error"]] == ["E000"]
    assert "error[E000]: internal error" in proc.stderr


# ---------------------------------------------------------------- what -o names
WAREHOUSE_COMMANDS = [["run", "{module}"], ["history"], ["gc", "--older-than", "30d"],
                      ["verify", "{run}"], ["rollback", "{run}"], ["replay", "{run}"]]


def _command(shop: Shop, args: list[str], warehouse: str) -> list[str]:
    filled = [a.format(module=shop.module, run=shop.first) for a in args]
    return [*filled, "-o", warehouse]


@pytest.mark.parametrize("args", WAREHOUSE_COMMANDS, ids=lambda a: a[0])
def test_fuzz_F1_a_fifo_as_the_warehouse_is_E070_at_once(shop, tmp_path, args):
    """DuckDB opened a FIFO and waited for a writer forever (fuzz finding F1)."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    proc = strata(*_command(shop, args, str(fifo)), cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert codes(proc) == ["E070"], proc.stderr
    assert "not a regular file" in proc.stderr


@pytest.mark.parametrize("args", WAREHOUSE_COMMANDS, ids=lambda a: a[0])
def test_fuzz_F2_a_path_too_long_for_the_os_is_E070(shop, tmp_path, args):
    """A 5,000-character -o was OSError ENAMETOOLONG, an internal error (fuzz F2)."""
    proc = strata(*_command(shop, args, "w" * 5000 + ".duckdb"), cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert codes(proc) == ["E070"], proc.stderr
    assert "too long" in proc.stderr.lower()


def test_fuzz_F1_a_device_as_the_warehouse_is_E070(shop, tmp_path):
    proc = strata("history", "-o", "/dev/zero", cwd=tmp_path)
    assert codes(proc) == ["E070"], proc.stderr
    assert "not a regular file" in proc.stderr


def test_a_folder_named_strata_in_the_working_directory_does_not_shadow_strata(tmp_path):
    """Run through `python -c` (any wrapper putting the working directory first on
    sys.path: `python -m cProfile`, a notebook), a project whose models live in a
    folder named `strata` made `import strata` that folder, and the run's compiler
    fingerprint an internal error (E000)."""
    shutil.copytree(ROOT / "examples" / "shop", tmp_path / "strata")
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from strata.cli.main import main; sys.exit(main())",
         "run", "strata", "-o", str(tmp_path / "w.duckdb"), "--json"],
        cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["status"] == "published"
