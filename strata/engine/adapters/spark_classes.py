"""A class archive for the local Spark JVM (Java's class-data sharing), so that a
`spark:DIR` process starts in about half the time.

A local Spark process spends most of a short run starting: the JVM loads and
verifies some 15,000 classes of Spark, Hive and Derby before the first query
(measured: 11-12 s for a session and its first catalogue read; 7 s with the
archive). Java 17 can write the classes a JVM loaded into an archive when it exits
(`-XX:ArchiveClassesAtExit`) and map that archive at the next start
(`-XX:SharedArchiveFile`). So the first `spark:DIR` process on a machine records
the archive as its JVM exits (it waits for the JVM: a few seconds, once), and every
later one starts from it.

The archive is the JVM's to check: one made by another JDK or over other jars is
refused at start and the JVM loads its classes as before, silently (`-Xlog:cds=off`).
Its name holds a hash of the java binary and of Spark's jars, so an upgrade records
a new one. It lives in Strata's private cache folder (`strata.cachedirs`): a JVM
maps what it finds there, so a folder another user can write to is never used.
STRATA_SPARK_CLASS_ARCHIVE=0 turns it off; STRATA_NO_CACHE does too.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from strata.cachedirs import cache_home, private_dir

# JVM options that keep a refused archive quiet: the JVM then starts as before
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
# a recording left by a process killed before its JVM exited is someone's no longer
RECORDING_ABANDONED_SECONDS = 600.0


@dataclass(frozen=True)
class ClassArchive:
    """Where this Spark installation's archive is, and whether this process records
    it (then `recording` is where its JVM writes it on exit)."""

    path: Path
    recording: Path | None = None

    def java_options(self) -> str:
        if self.recording is not None:
            return f"-XX:ArchiveClassesAtExit={self.recording} {QUIET}"
        return f"-XX:SharedArchiveFile={self.path} {QUIET}"


def class_archive(spark_home: str) -> ClassArchive | None:
    """The archive to start this process's JVM from, or to record; None when off, when
    the cache folder is not private, or when a path would not survive Spark's
    splitting of the JVM options (a space or a quote in it)."""
    if os.environ.get("STRATA_SPARK_CLASS_ARCHIVE", "1") == "0" or os.environ.get(
            "STRATA_NO_CACHE"):
        return None
    folder = private_dir(cache_home() / "spark")
    if folder is None or any(c in str(folder) for c in " \t\"'\\"):
        return None
    path = folder / f"classes-{_installation_key(spark_home)}.jsa"
    if path.is_file() and not path.is_symlink():
        return ClassArchive(path)
    recording = _claim_recording(path)
    return None if recording is None else ClassArchive(path, recording)


def finish_recording(archive: ClassArchive, jvm) -> None:
    """After the session stopped: let the JVM exit (it writes the archive as it does)
    and move the archive into place. `jvm` is the gateway's process; the JVM exits
    when its standard input closes. Any failure leaves no archive, never a partial
    one: the next process records again."""
    recording = archive.recording
    if recording is None:
        return
    try:
        if jvm is not None and jvm.stdin is not None:
            jvm.stdin.close()
            jvm.wait(timeout=120)
        if recording.is_file() and not recording.is_symlink() and recording.stat().st_size:
            os.replace(recording, archive.path)
    except (OSError, ValueError, subprocess.TimeoutExpired):
        pass
    finally:
        with contextlib.suppress(OSError):
            recording.unlink()
        with contextlib.suppress(OSError):
            _claim_path(archive.path).unlink()


def _claim_recording(path: Path) -> Path | None:
    """The file this process's JVM records into, when no other process records the
    same archive now (one recording at a time: each costs its JVM a few seconds)."""
    claim = _claim_path(path)
    with contextlib.suppress(OSError):
        if time.time() - claim.lstat().st_mtime > RECORDING_ABANDONED_SECONDS:
            claim.unlink()
    try:
        os.close(os.open(claim, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
    except OSError:
        return None
    return path.with_name(f"{path.stem}.{os.getpid()}.recording")


def _claim_path(path: Path) -> Path:
    return path.with_name(path.name + ".claim")


def _installation_key(spark_home: str) -> str:
    """A hash of what the archive was made from: the java binary the launcher runs
    and Spark's jars (name, size, modification time)."""
    digest = hashlib.sha256()
    java = _java_binary()
    for item in [java, *sorted(_jars(spark_home))]:
        try:
            st = os.stat(item)
            digest.update(f"{item}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
        except OSError:
            digest.update(f"{item}\0missing\n".encode())
    return digest.hexdigest()[:16]


def _java_binary() -> str:
    """The java Spark's launcher runs: $JAVA_HOME/bin/java, else the one on PATH."""
    home = os.environ.get("JAVA_HOME")
    found = os.path.join(home, "bin", "java") if home else shutil.which("java") or "java"
    return os.path.realpath(found)


def _jars(spark_home: str) -> list[str]:
    folder = os.path.join(spark_home, "jars")
    try:
        return [e.path for e in os.scandir(folder) if e.name.endswith(".jar")]
    except OSError:
        return []
