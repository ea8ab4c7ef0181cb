"""Issue 41 item 3: a `spark:DIR` process starts its JVM from a class archive
(Java's class-data sharing) that the first such process on the machine records as
its JVM exits (strata/engine/adapters/spark_classes.py). The archive lives in
Strata's private cache folder, is recorded by one process at a time, and one the JVM
refuses (another JDK, other jars, damaged) costs nothing but the speed-up: the run
works and says nothing of it. Real JVMs record one and run past a damaged one in
tests/test_quiet_noop.py's cycle of CLI processes (each JVM costs CI seconds)."""

from __future__ import annotations

import os
from pathlib import Path

from strata.engine.adapters import spark_classes as SC


def fake_spark(tmp_path: Path, jars: int = 2) -> str:
    home = tmp_path / "spark"
    (home / "jars").mkdir(parents=True, exist_ok=True)
    for i in range(jars):
        (home / "jars" / f"lib{i}.jar").write_bytes(b"jar")
    return str(home)


def test_the_first_process_records_the_archive_and_a_later_one_starts_from_it(
        tmp_path, monkeypatch):
    monkeypatch.setenv("STRATA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("STRATA_NO_CACHE", raising=False)
    home = fake_spark(tmp_path)
    first = SC.class_archive(home)
    assert first.recording is not None and first.path.parent == tmp_path / "cache" / "spark"
    assert first.java_options().startswith(f"-XX:ArchiveClassesAtExit={first.recording} ")
    # one recording at a time: another process meanwhile starts as before
    assert SC.class_archive(home) is None
    first.recording.write_bytes(b"archive")  # what the JVM writes as it exits
    SC.finish_recording(first, None)
    assert first.path.read_bytes() == b"archive"
    assert sorted(p.name for p in first.path.parent.iterdir()) == [first.path.name]
    later = SC.class_archive(home)
    assert later == SC.ClassArchive(first.path)
    assert later.java_options().startswith(f"-XX:SharedArchiveFile={first.path} ")
    assert "-Xlog:cds=off" in later.java_options()  # a refused archive is silent


def test_other_jars_make_another_archive(tmp_path, monkeypatch):
    monkeypatch.setenv("STRATA_CACHE_DIR", str(tmp_path / "cache"))
    home = fake_spark(tmp_path)
    before = SC.class_archive(home).path
    (Path(home) / "jars" / "lib9.jar").write_bytes(b"upgrade")
    assert SC.class_archive(home).path != before


def test_a_failed_recording_leaves_no_archive_and_the_next_process_records(
        tmp_path, monkeypatch):
    monkeypatch.setenv("STRATA_CACHE_DIR", str(tmp_path / "cache"))
    home = fake_spark(tmp_path)
    first = SC.class_archive(home)
    SC.finish_recording(first, None)  # the JVM wrote nothing (killed, full disk)
    assert not first.path.exists()
    assert SC.class_archive(home).recording is not None


def test_off_when_asked_or_when_the_cache_folder_is_not_private(tmp_path, monkeypatch):
    home = fake_spark(tmp_path)
    monkeypatch.setenv("STRATA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("STRATA_SPARK_CLASS_ARCHIVE", "0")
    assert SC.class_archive(home) is None
    monkeypatch.delenv("STRATA_SPARK_CLASS_ARCHIVE")
    monkeypatch.setenv("STRATA_NO_CACHE", "1")
    assert SC.class_archive(home) is None
    monkeypatch.delenv("STRATA_NO_CACHE")
    shared = tmp_path / "shared"
    (shared / "spark").mkdir(parents=True)
    os.chmod(shared / "spark", 0o777)  # anyone could plant an archive a JVM would map
    monkeypatch.setenv("STRATA_CACHE_DIR", str(shared))
    assert SC.class_archive(home) is None


def test_an_archive_that_is_a_symbolic_link_is_never_mapped_nor_written_through(
        tmp_path, monkeypatch):
    monkeypatch.setenv("STRATA_CACHE_DIR", str(tmp_path / "cache"))
    home = fake_spark(tmp_path)
    path = SC.class_archive(home).path
    SC._claim_path(path).unlink()
    target = tmp_path / "elsewhere.jsa"
    target.write_bytes(b"someone's")
    path.symlink_to(target)
    archive = SC.class_archive(home)
    assert archive.recording is not None  # not mapped: recorded anew
    archive.recording.write_bytes(b"ours")
    SC.finish_recording(archive, None)
    assert target.read_bytes() == b"someone's" and not path.is_symlink()
