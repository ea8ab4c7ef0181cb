"""Change markers (strata/engine/markers.py, issue 41): a run reuses a source's
fingerprint only when a marker every change moves has not moved; otherwise it hashes.

A source is changed in every way its engine allows (insert, update, delete,
truncate, rewrite by rename, a same-size overwrite whose modification time is put
back, a change another process commits just before the run) and each change is
detected; between changes a no-op run proves the marker was in force (its source is
`unchanged`: not read). Files' times must be STRATA_MARKER_SETTLE seconds old to be
proof; the tests shorten it and wait that long after a change, so a change is found
by its marker moving, not by its file being too young."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from enginehelpers import ORDERS_SQL, Project, execute

from strata.engine.adapters.duckdb import DuckDBAdapter
from strata.engine.locations import DuckDBFile
from strata.engine.sources import bind_source, prepare
from strata.semantics.resolve import load_module

SETTLE = 0.3
ENV = {"STRATA_MARKER_SETTLE": str(SETTLE)}

MODULE = """\
source lines = file 'data/lines.{ext}' {{
  id: int
  amount: int
}}
source orders {{
  id: int
  amount: double
}}
model totals {{
  from lines
  aggregate n = count(), total = sum(amount)
}}
model order_count {{
  from orders
  aggregate n = count()
}}
"""


def settle() -> None:
    """Wait until what was just written is old enough for its marker to be proof."""
    time.sleep(SETTLE + 0.15)


def write_csv(path: Path, rows: list[tuple[int, int]]) -> None:
    path.write_text("id,amount\n" + "".join(f"{i},{a}\n" for i, a in rows))


def write_parquet(path: Path, rows: list[tuple[int, int]]) -> None:
    values = ", ".join(f"({i}, {a})" for i, a in rows) or "(0, 0)"
    where = "" if rows else " WHERE false"
    duckdb.sql(f"COPY (SELECT * FROM (VALUES {values}) AS t(id, amount){where}) "
               f"TO '{path}' (FORMAT parquet)")


WRITERS = {"csv": write_csv, "parquet": write_parquet}


def same_size_overwrite(path: Path, old: bytes, new: bytes) -> None:
    """Change bytes in place, keeping the size, and put the times back."""
    before = path.stat()
    data = path.read_bytes()
    assert len(old) == len(new) and data.count(old) == 1
    with open(path, "r+b") as f:  # in place: same inode
        f.write(data.replace(old, new))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == \
        (before.st_size, before.st_mtime_ns, before.st_ino)


def rewrite_by_rename(path: Path, ext: str, rows: list[tuple[int, int]]) -> None:
    fresh = path.with_name("fresh." + ext)
    WRITERS[ext](fresh, rows)
    os.replace(fresh, path)


def another_process_writes(path: Path, old: bytes, new: bytes) -> None:
    """A same-size change, times put back, committed by another process: the run
    starts right after it, with no wait."""
    code = ("import os, sys; p = sys.argv[1]; st = os.stat(p); d = open(p, 'rb').read(); "
            f"open(p, 'r+b').write(d.replace({old!r}, {new!r})); "
            "os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))")
    subprocess.run([sys.executable, "-c", code, str(path)], check=True)


def lines_project(root: Path, ext: str) -> tuple[Project, Path]:
    (root / "data").mkdir(parents=True)
    (root / "m.strata").write_text(MODULE.format(ext=ext))
    execute(root / "wh.duckdb", ORDERS_SQL.format(name="orders", rows=10))
    path = root / "data" / f"lines.{ext}"
    return Project(root, root / "m.strata", root / "wh.duckdb"), path


def totals(p: Project) -> tuple[int, int | None]:
    (n, total), = p.query("SELECT n, total FROM v_totals")
    return n, total


@pytest.mark.parametrize("ext", ["csv", "parquet"])
def test_every_change_to_a_file_source_moves_its_marker(tmp_path, ext):
    p, path = lines_project(tmp_path / "p", ext)
    write = WRITERS[ext]
    write(path, [(1, 10), (2, 20), (3, 30)])
    settle()
    first = p.run_json(env=ENV)
    assert first["sources"] == {"lines": "hashed", "orders": "hashed"}

    def rewrite_same_size() -> None:
        same_size_overwrite(path, b"2,20", b"2,29")

    changes = [
        ("insert", lambda: write(path, [(1, 10), (2, 20), (3, 30), (4, 40)]), (4, 100)),
        ("update", lambda: write(path, [(1, 10), (2, 25), (3, 30), (4, 40)]), (4, 105)),
        ("delete", lambda: write(path, [(2, 25), (3, 30), (4, 40)]), (3, 95)),
        ("truncate", lambda: write(path, []), (0, None)),
        ("rewrite by rename", lambda: rewrite_by_rename(path, ext, [(1, 10), (2, 20)]),
         (2, 30)),
    ]
    if ext == "csv":  # a Parquet file's bytes are not its values: only a CSV is edited
        changes.append(("same-size overwrite, mtime put back", rewrite_same_size, (2, 39)))
    for what, change, expected in changes:
        change()
        settle()
        report = p.run_json("--only-stale", env=ENV)
        assert report["sources"]["lines"] == "hashed", what
        assert report["stale"] == {"totals": "source `lines` changed"}, what
        assert totals(p) == expected, what
        # the marker now in force: nothing read, nothing to do
        noop = p.run_json("--only-stale", env=ENV)
        assert noop["status"] == "up_to_date", what
        assert noop["sources"]["lines"] == "unchanged", what
        # a DuckDB table keeps no marker that every change must move: always hashed
        assert noop["sources"]["orders"] == "hashed", what

    if ext == "csv":
        another_process_writes(path, b"2,29", b"2,21")
        report = p.run_json("--only-stale", env=ENV)  # at once: no wait
        assert report["stale"] == {"totals": "source `lines` changed"}
        assert totals(p) == (2, 31)


def test_a_young_file_is_hashed_until_a_later_run_records_its_marker(tmp_path):
    """A file written within STRATA_MARKER_SETTLE of the run proves nothing (its times
    could be shared by a write in the same tick): hashed, no marker recorded."""
    p, path = lines_project(tmp_path / "p", "csv")
    write_csv(path, [(1, 10)])
    env = {"STRATA_MARKER_SETTLE": "3600"}
    assert p.run_json(env=env)["sources"]["lines"] == "hashed"
    assert "lines" not in p.history()[0].get("source_markers", {})
    assert p.run_json("--only-stale", env=env)["sources"]["lines"] == "hashed"


def _prepared_cpu(adapter, src, known, repeat: int = 5) -> float:
    """The least CPU time (all threads) one `prepare` of the source took."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        found = prepare(adapter, src, bind_source(src, None), None, known)
        best = min(best, time.process_time() - start)
        assert found.hashed == (known is None)
    return best


def test_a_no_op_reads_no_rows_however_large_the_source(tmp_path, monkeypatch):
    """With its marker unmoved a source's cost does not grow with its rows; hashed, it
    does (the same sources, the same process, CPU time only)."""
    monkeypatch.setenv("STRATA_MARKER_SETTLE", str(SETTLE))
    sizes = (100_000, 3_000_000)
    sources = {}
    for rows in sizes:
        folder = tmp_path / str(rows)
        folder.mkdir()
        duckdb.sql(f"COPY (SELECT range AS id, range % 1000 AS amount FROM range({rows})) "
                   f"TO '{folder / 'lines.parquet'}' (FORMAT parquet)")
        (folder / "m.strata").write_text(MODULE.format(ext="parquet").replace(
            "data/", ""))
        sources[rows] = load_module(folder / "m.strata").sources["lines"]
    settle()
    adapter = DuckDBAdapter(DuckDBFile(""), duckdb.connect())
    try:
        known = {rows: prepare(adapter, src, bind_source(src, None)).recorded
                 for rows, src in sources.items()}
        assert all(known.values())
        small, large = (_prepared_cpu(adapter, sources[n], known[n]) for n in sizes)
        hashed_small, hashed_large = (_prepared_cpu(adapter, sources[n], None)
                                      for n in sizes)
    finally:
        adapter.close()
    assert hashed_large > 5 * hashed_small  # the test can tell a scan
    assert large < 2 * small + 0.005
    assert large < hashed_large / 5


def test_postgresql_hashes_its_tables_and_proves_only_files(pg_warehouse_url, tmp_path):
    """PostgreSQL keeps no exact change marker of a table (its statistics counters
    lag and can be reset): a table source is hashed on every run, and another
    session's committed UPDATE just before the run is seen. A CSV, read here and
    loaded, is proven by its file's marker like anywhere else."""
    import psycopg

    from strata.engine.locations import parse_location

    root = tmp_path / "p"
    (root / "data").mkdir(parents=True)
    (root / "m.strata").write_text(MODULE.format(ext="csv"))
    write_csv(root / "data" / "lines.csv", [(1, 10), (2, 20)])
    args = parse_location(pg_warehouse_url).connect_args()
    with psycopg.connect(**args, autocommit=True) as con:
        con.execute("CREATE TABLE orders (id int, amount double precision)")
        con.execute("INSERT INTO orders SELECT i, i FROM generate_series(1, 10) AS i")
    p = Project(root, root / "m.strata", root / "unused")
    settle()

    def run(*flags: str) -> dict:
        return p.strata_json("run", "m.strata", "-o", pg_warehouse_url, *flags, env=ENV)

    assert run()["sources"] == {"lines": "hashed", "orders": "hashed"}
    noop = run("--only-stale")
    assert noop["status"] == "up_to_date"
    assert noop["sources"] == {"lines": "unchanged", "orders": "hashed"}
    with psycopg.connect(**args, autocommit=True) as con:  # another session, committed
        con.execute("UPDATE orders SET amount = amount + 1 WHERE id = 3")
    report = run("--only-stale")
    assert report["sources"] == {"lines": "unchanged", "orders": "hashed"}
    assert report["stale"] == {"order_count": "source `orders` changed"}


SPARK_MODULE = """\
source lines = markers.lines {
  id: int
  amount: int
}
model totals {
  from lines
  aggregate n = count()
}
"""


def test_every_change_to_a_spark_table_moves_its_marker(spark_engine, tmp_path, monkeypatch):
    """A Parquet table of a local Spark session: its marker is the files its catalogue
    lists, stat'ed. Every change Spark allows on such a table (INSERT, an overwrite,
    which is what UPDATE and DELETE are there, TRUNCATE), a part file overwritten in
    place with its times put back and another session's insert just before are
    hashed; an unmoved marker reads no row. A view keeps no marker."""
    from strata.engine.adapters.spark import SparkAdapter

    monkeypatch.setenv("STRATA_MARKER_SETTLE", str(SETTLE))
    session = spark_engine.session
    session.sql("CREATE DATABASE IF NOT EXISTS markers")
    session.sql("DROP TABLE IF EXISTS markers.lines")
    session.sql("CREATE TABLE markers.lines (id INT, amount INT) USING parquet")
    (tmp_path / "m.strata").write_text(SPARK_MODULE)
    src = load_module(tmp_path / "m.strata").sources["lines"]
    ad = SparkAdapter(session, "spark (the test session)")

    def overwrite(rows: list[tuple[int, int]]) -> None:
        frame = session.createDataFrame(rows, "id INT, amount INT").coalesce(1)
        frame.write.insertInto("markers.lines", overwrite=True)

    def part_file() -> Path:
        (found,) = session.table("markers.lines").inputFiles()
        return Path(found.removeprefix("file:"))

    def swap_in_place() -> None:
        """The one part file's bytes replaced, in place, by a file of the same size
        holding another value (and its checksum file, which Hadoop reads beside it);
        their times put back."""
        target = part_file()
        donor = tmp_path / "donor"
        session.createDataFrame([(5, 59)], "id INT, amount INT").coalesce(1) \
            .write.parquet(str(donor))
        (part,) = donor.glob("part-*.parquet")
        for source, into in ((part, target), (donor / f".{part.name}.crc",
                                             target.with_name(f".{target.name}.crc"))):
            before = into.stat()
            assert source.stat().st_size == before.st_size
            with open(into, "r+b") as f:
                f.write(source.read_bytes())
            os.utime(into, ns=(before.st_atime_ns, before.st_mtime_ns))

    def another_session_inserts() -> None:
        session.newSession().sql("INSERT INTO markers.lines VALUES (6, 60)")

    overwrite([(5, 50)])
    settle()
    found = prepare(ad, src, bind_source(src, None))
    assert found.hashed and found.recorded is not None
    first = found.fingerprint
    changes = [  # (what, change, settled before the run?)
        ("insert", lambda: session.sql("INSERT INTO markers.lines VALUES (6, 60)"), True),
        # Spark's UPDATE and DELETE on a Parquet table: the table written over
        ("delete by overwrite", lambda: overwrite([(5, 50)]), True),
        ("update in place, times put back", swap_in_place, True),
        ("truncate", lambda: session.sql("TRUNCATE TABLE markers.lines"), True),
        ("another session's insert just before", another_session_inserts, False),
    ]
    seen = {first}
    for what, change, wait in changes:
        known = found.recorded
        assert prepare(ad, src, bind_source(src, None), None, known).hashed is False, what
        change()
        if wait:
            settle()
        found = prepare(ad, src, bind_source(src, None), None, known)
        assert found.hashed, what
        if what.startswith("delete"):  # the first rows again: the same identity
            assert found.fingerprint == first
        else:
            assert found.fingerprint not in seen, what
        seen.add(found.fingerprint)

    session.sql("CREATE OR REPLACE VIEW markers.lines_v AS SELECT * FROM markers.lines")
    view = bind_source(src, "markers.lines_v")
    assert ad.table_marker(view.relation) is None
    session.sql("DROP VIEW markers.lines_v")
    session.sql("DROP TABLE markers.lines")
