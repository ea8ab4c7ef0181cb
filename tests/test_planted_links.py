"""Issue 39, planted links (items 1, 2, 3, 4, 13, 14): a symbolic link committed to a
user's repository (by a pull request that CI then runs on) never makes Strata write,
delete or read anything outside the folders it owns; and Strata deletes only files it
wrote itself.

One test per item, then the class: every command that writes or deletes a file, run
against a planted file link and a planted folder link, leaves the link's target and
everything outside untouched, and fails with a coded diagnostic, no traceback.

The CLI runs as a real process (tests/enginehelpers.py); the pytest plugin as a real
inner pytest (`pytester`); the race of `strata init` is staged with the CLI's own
pause point (STRATA_PAUSE_AT), so it is decided every time, not 2% of the time.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from enginehelpers import error_code, script_popen, strata, wait_for

from strata.scaffold import scaffold_files

pytest_plugins = ["pytester"]

CANARY = "CANARY-7f3a secret that must never be printed"
OWNED = "-- model paid_orders (full)\nSELECT 'outside, not strata''s to touch';\n"
PLUGIN_CONFIG = '[tool.pytest.ini_options]\nstrata_modules = ["{}"]\n'


# ---------------------------------------------------------------- the scene
@dataclass(frozen=True)
class Scene:
    """A user's repository `repo/` with a module `repo/proj/`, beside a folder
    `outside/` the links point into (a file holding a secret, a file that looks like
    one Strata writes, a note)."""

    repo: Path
    outside: Path

    @property
    def module(self) -> Path:
        return self.repo / "proj"

    def state(self) -> dict[str, bytes | str]:
        """Everything outside, by path: what a command must leave exactly as it was."""
        found: dict[str, bytes | str] = {}
        for path in sorted(self.outside.rglob("*")):
            rel = str(path.relative_to(self.outside))
            found[rel] = f"-> {os.readlink(path)}" if path.is_symlink() else (
                "<dir>" if path.is_dir() else path.read_bytes())
        return found


def scene(root: Path) -> Scene:
    repo, outside = root / "repo", root / "outside"
    for rel, text in scaffold_files("proj").items():
        path = repo / "proj" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (outside / "sub").mkdir(parents=True)
    (outside / "secret.txt").write_text(CANARY + "\n")
    (outside / "paid_orders.sql").write_text(CANARY + "\n")
    (outside / "old_model.sql").write_text(OWNED)
    (outside / "notes.md").write_text("mine\n")
    (outside / "sub" / "keep.sql").write_text(OWNED)
    return Scene(repo, outside)


def plant(link: Path, target: Path) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)


def refused(proc: subprocess.CompletedProcess, code: str = "E130") -> None:
    """Failed with `code`, no traceback, and no secret read back to the user."""
    assert error_code(proc) == code, proc.stderr
    assert CANARY not in proc.stdout + proc.stderr


# ---------------------------------------------------------------- one test per item
def test_item1_snapshot_does_not_write_or_delete_through_a_linked_dialect_folder(tmp_path):
    s = scene(tmp_path)
    plant(s.module / "sql_snapshots" / "duckdb", s.outside)
    before = s.state()
    refused(strata("snapshot", "proj", "--dialect", "duckdb", cwd=s.repo))
    assert s.state() == before


def test_item2_plugin_does_not_write_through_a_planted_file_link(pytester):
    s = scene(pytester.path)
    plant(s.module / "sql_snapshots" / "duckdb" / "paid_orders.sql", s.outside / "secret.txt")
    plugin_update_is_refused(pytester, s)


def test_item2_plugin_does_not_delete_through_a_planted_folder_link(pytester):
    s = scene(pytester.path)
    plant(s.module / "sql_snapshots" / "duckdb", s.outside)
    plugin_update_is_refused(pytester, s)


def plugin_update_is_refused(pytester, s) -> None:
    """`pytest --snapshot-update` fails with E130, no traceback, no canary, and
    nothing inside or outside the repository changed."""
    pytester.makefile(".toml", pyproject=PLUGIN_CONFIG.format("repo/proj"))
    before = s.state()
    result = pytester.runpytest("-p", "no:cacheprovider", "--snapshot-update")
    assert result.ret != 0
    out = result.stdout.str() + result.stderr.str()
    assert "error[E130]" in out and "Traceback" not in out and CANARY not in out
    assert s.state() == before


def test_item3_plugin_deletes_only_files_it_wrote(pytester):
    """A README, a sub-folder's file, a user's own .sql file without Strata's header
    stay; the file of a model that is gone (Strata's header) goes."""
    s = scene(pytester.path)
    pytester.makefile(".toml", pyproject=PLUGIN_CONFIG.format("repo/proj"))
    pytester.runpytest("-p", "no:cacheprovider", "--snapshot-update").assert_outcomes(passed=2)
    folder = s.module / "sql_snapshots" / "duckdb"
    (folder / "README.md").write_text("how we review SQL\n")
    (folder / "sub").mkdir()
    (folder / "sub" / "keep.sql").write_text(OWNED)
    (folder / "notes.sql").write_text("select 'my own query';\n")
    (folder / "old_model.sql").write_text(OWNED.replace("paid_orders", "old_model"))

    pytester.runpytest("-p", "no:cacheprovider", "--snapshot-update").assert_outcomes(passed=2)
    left = sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))
    assert left == ["README.md", "customer_revenue.sql", "notes.sql", "paid_orders.sql",
                    "sub", "sub/keep.sql"]


def test_item3_snapshot_deletes_only_files_it_wrote(tmp_path):
    s = scene(tmp_path)
    folder = s.module / "sql_snapshots" / "duckdb"
    folder.mkdir(parents=True)
    (folder / "notes.sql").write_text("select 'my own query';\n")
    (folder / "old_model.sql").write_text(OWNED.replace("paid_orders", "old_model"))
    wrote = strata("snapshot", "proj", "--dialect", "duckdb", cwd=s.repo, check=True)
    assert "3 files written or removed" in wrote.stdout
    assert sorted(p.name for p in folder.iterdir()) == \
        ["customer_revenue.sql", "notes.sql", "paid_orders.sql"]


def test_item4_snapshot_check_does_not_read_through_a_link(tmp_path):
    s = scene(tmp_path)
    assert strata("snapshot", "proj", cwd=s.repo).returncode == 0
    locked = s.module / "sql_snapshots" / "duckdb" / "paid_orders.sql"
    locked.unlink()
    plant(locked, s.outside / "secret.txt")
    check = strata("snapshot", "proj", "--check", cwd=s.repo)
    refused(check)
    assert "proj/sql_snapshots/duckdb/paid_orders.sql" in check.stderr
    assert "symbolic link" in check.stderr
    as_json = strata("snapshot", "proj", "--check", "--json", cwd=s.repo)
    assert CANARY not in as_json.stdout and '"E130"' in as_json.stdout


def test_item13_graph_does_not_write_through_a_planted_link(tmp_path):
    s = scene(tmp_path)
    plant(s.repo / "graph.html", s.outside / "secret.txt")
    before = s.state()
    refused(strata("graph", "proj", cwd=s.repo))
    assert s.state() == before
    assert (s.repo / "graph.html").is_symlink()


@pytest.mark.parametrize("command", [["graph", "proj", "--out", "{target}"],
                                     ["build", "proj", "-o", "{folder}"]])
def test_a_device_or_pipe_where_a_file_goes_is_refused_and_stays(tmp_path, command):
    """Replacing a file is renaming a new one onto it: onto a device (as root) that
    replaced the device itself (a fuzz run's `graph --out /dev/zero` left the machine a
    /dev/zero holding a page). A pipe stands in for a device here; it stays a pipe."""
    s = scene(tmp_path)
    folder = s.repo / "out"
    folder.mkdir()
    target = s.repo / "graph.html"
    for pipe in (target, folder / "paid_orders.sql"):
        os.mkfifo(pipe)
    args = [a.format(target=target, folder=folder) for a in command]
    proc = strata(*args, cwd=s.repo)
    assert proc.returncode == 1 and "error[E093]" in proc.stderr, proc.stderr
    assert "not a regular file" in proc.stderr and "Traceback" not in proc.stderr
    for pipe in (target, folder / "paid_orders.sql"):
        assert stat.S_ISFIFO(os.lstat(pipe).st_mode)


def init_racing(repo: Path, name: str, plant_in: Callable[[Path], None]
                ) -> subprocess.CompletedProcess:
    """`strata init NAME`, with `plant_in(DIR)` run after init found DIR empty and
    before it wrote anything (its pause point `init_checked`)."""
    resume = repo / ".resume"
    proc = script_popen("init", name, cwd=repo, text=True, stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        env={"STRATA_PAUSE_AT": "init_checked", "STRATA_RESUME_FILE":
                             str(resume), "STRATA_PAUSE_SECONDS": "60"})
    try:
        seen = wait_for(proc, "paused at init_checked")
        plant_in(repo / name)
        resume.touch()
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, seen + err)


def test_item14_init_does_not_follow_a_data_link_planted_after_its_check(tmp_path):
    s = scene(tmp_path)
    (s.repo / "new").mkdir()
    before = s.state()
    made = init_racing(s.repo, "new", lambda d: plant(d / "data", s.outside))
    refused(made)
    assert s.state() == before  # no customers.csv, orders.csv written outside
    assert (s.repo / "new" / "data").is_symlink()


# ---------------------------------------------------------------- the class
@dataclass(frozen=True)
class Writer:
    """A command that writes or deletes files, and the link planted in its way."""

    name: str
    plant: Callable[[Scene], None]
    run: Callable[[Scene], subprocess.CompletedProcess]

    def __str__(self) -> str:
        return self.name


def _cli(*args: str) -> Callable[[Scene], subprocess.CompletedProcess]:
    return lambda s: strata(*args, cwd=s.repo)


def _locked(s: Scene) -> Path:
    return s.module / "sql_snapshots" / "duckdb"


def _plugin(s: Scene) -> subprocess.CompletedProcess:
    """`pytest --snapshot-update` in the user's repository, a real pytest process; its
    report is returned as the CLI's would be (exit 1, the test's message)."""
    (s.repo / "pyproject.toml").write_text(PLUGIN_CONFIG.format("proj"))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                           "--snapshot-update", "-q"],
                          cwd=s.repo, capture_output=True, text=True, timeout=300,
                          check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == pytest.ExitCode.TESTS_FAILED, out
    return subprocess.CompletedProcess(proc.args, 1, "", out)


def _init(name: str, link: str) -> Callable[[Scene], subprocess.CompletedProcess]:
    def run(s: Scene) -> subprocess.CompletedProcess:
        (s.repo / name).mkdir()
        target = s.outside if link == "data" else s.outside / "secret.txt"
        return init_racing(s.repo, name, lambda d: plant(d / link, target))
    return run


def _file_link(path: Callable[[Scene], Path]) -> Callable[[Scene], None]:
    return lambda s: plant(path(s), s.outside / "secret.txt")


def _empty(s: Scene) -> Path:
    """An empty folder outside: init would write a whole module into it."""
    (s.outside / "empty").mkdir()
    return s.outside / "empty"


def _folder_link(path: Callable[[Scene], Path]) -> Callable[[Scene], None]:
    return lambda s: plant(path(s), s.outside)


WRITERS = [
    Writer("snapshot-file", _file_link(lambda s: _locked(s) / "paid_orders.sql"),
           _cli("snapshot", "proj", "--dialect", "duckdb")),
    Writer("snapshot-folder", _folder_link(_locked),
           _cli("snapshot", "proj", "--dialect", "duckdb")),
    Writer("snapshot-parent-folder", _folder_link(lambda s: s.module / "sql_snapshots"),
           _cli("snapshot", "proj", "--dialect", "duckdb")),
    Writer("snapshot-dir-folder", _folder_link(lambda s: s.repo / "locked"),
           _cli("snapshot", "proj", "--dir", "locked", "--dialect", "duckdb")),
    Writer("snapshot-check-file", _file_link(lambda s: _locked(s) / "paid_orders.sql"),
           _cli("snapshot", "proj", "--check", "--dialect", "duckdb")),
    Writer("snapshot-check-folder", _folder_link(_locked),
           _cli("snapshot", "proj", "--check", "--dialect", "duckdb")),
    Writer("plugin-file", _file_link(lambda s: _locked(s) / "paid_orders.sql"), _plugin),
    Writer("plugin-folder", _folder_link(_locked), _plugin),
    Writer("graph-file", _file_link(lambda s: s.repo / "graph.html"), _cli("graph", "proj")),
    Writer("graph-folder", _folder_link(lambda s: s.repo / "site"),
           _cli("graph", "proj", "--out", "site/graph.html")),
    Writer("build-file", _file_link(lambda s: s.repo / "out" / "paid_orders.sql"),
           _cli("build", "proj", "-o", "out")),
    Writer("build-folder", _folder_link(lambda s: s.repo / "out"),
           _cli("build", "proj", "-o", "out")),
    Writer("build-nested-folder", _folder_link(lambda s: s.repo / "out"),
           _cli("build", "proj", "-o", "out/sql")),
    Writer("init-file", lambda s: None, _init("fresh", "README.md")),
    Writer("init-folder", lambda s: None, _init("fresh", "data")),
    Writer("init-target-folder", lambda s: plant(s.repo / "fresh", _empty(s)),
           _cli("init", "fresh")),
]


@pytest.mark.parametrize("writer", WRITERS, ids=str)
def test_no_command_writes_reads_or_deletes_through_a_planted_link(tmp_path, writer):
    s = scene(tmp_path)
    writer.plant(s)
    links = {p: os.readlink(p) for p in s.repo.rglob("*") if p.is_symlink()}
    before = s.state()
    refused(writer.run(s))
    assert s.state() == before
    after = {p: os.readlink(p) for p in s.repo.rglob("*") if p.is_symlink()}
    assert links.items() <= after.items()  # the links themselves stay as they were
