"""Hostile values for every CLI option and argument, and for every environment
variable strata reads (issue 14): each call ends in exit 0, exit 1 with a coded
`error[Ennn]` (never E000) or click's exit-2 usage error, never a traceback, and
within fuzzgen.budget(len(value)).

The options are read from the click command objects (strata/cli/), the variables
from the `os.environ` reads in strata/, so a new option or variable is fuzzed as
soon as it exists. Every call is the real `strata` in its own process, against a
real warehouse that one good run has filled.

Fixed budget in CI: a few derandomized values per option (the same on every run);
STRATA_FUZZ_SCALE=20 tries 20x as many, freshly random.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import click
import pytest
from enginehelpers import Project, make_project
from fuzzgen import ROOT, assert_coded, run_bounded
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from strata.cli.main import _load_commands, cli

SCALE = float(os.environ.get("STRATA_FUZZ_SCALE", "1"))
CI = settings(deadline=None, database=None, derandomize=SCALE <= 1, print_blob=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.function_scoped_fixture])


def examples(n: int) -> int:
    return max(1, int(n * SCALE))


# ---------------------------------------------------------------- what takes a value
@dataclass(frozen=True)
class Slot:
    """One value the command line takes: an option with a value, or an argument."""

    command: tuple[str, ...]  # ("branch", "create")
    param: click.Parameter

    def params(self) -> list[click.Parameter]:
        """Every parameter of the slot's command, in its order."""
        command: click.Command = cli
        for name in self.command:
            command = command.commands[name]  # type: ignore[attr-defined]
        return command.params

    @property
    def id(self) -> str:
        flag = max(self.param.opts, key=len) if isinstance(self.param, click.Option) \
            else self.param.name.upper()
        return " ".join([*self.command, flag])


def _commands(group: click.Group, path: tuple[str, ...] = ()):
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield from _commands(command, (*path, name))
        else:
            yield (*path, name), command


def value_slots() -> list[Slot]:
    _load_commands()
    slots = []
    for path, command in _commands(cli):
        for param in command.params:
            takes_value = isinstance(param, click.Argument) or (
                isinstance(param, click.Option) and not param.is_flag and not param.count)
            if takes_value:
                slots.append(Slot(path, param))
    return slots


SLOTS = value_slots()


def test_every_command_has_its_values_fuzzed() -> None:
    """The enumeration itself: the commands of `strata --help`, and every value of
    the ones the README relies on."""
    ids = {s.id for s in SLOTS}
    assert {"compile --watermark", "gc --older-than", "run --workers", "history --limit",
            "check MODULE", "branch create NAME", "backfill --reason"} <= ids
    _load_commands()
    top = {path[0] for path, _ in _commands(cli)}
    assert top == set(cli.list_commands(click.Context(cli)))


# ---------------------------------------------------------------- the values
class Long(str):
    """A long value that hypothesis reports by its recipe, not its 100 kB."""

    def __repr__(self) -> str:
        return f"{self[:1]!r} * {len(self)}"


HOSTILE = [
    "", " ", "\t", "\n", "\r\n", "\x01", "\x1b[31mred", "\x7f", "\u0085", "-1", "0", "-0",
    "+5", "1", "64", "65", "9" * 30, "-" + "9" * 30, Long("9" * 5000), "1e999", "-1e999",
    "nan", "NaN", "inf", "-inf", "0x10", "1_000", "1.5", "é", "☃", "𝔘", "\u202e", "\ufeff",
    "\u2028", Long("a" * 100_000), "--json", "-", "--", "=", ",", ",,", "a=b", "a=", "=b",
    "orders=", "orders=orders", "orders=nope.nope", "x,,y", "main", "MAIN", "../../x", "~",
    "%s%n", "{}", "'", '"', "`", "\\", "*", "?", "30d", "0d", "-5d", "1.5h", "d",
    "9" * 25 + "d", "99999999w", "2024-01-01", "2024-02-30", "2024-01-01 12:00:00",
    "feedbeef",
]
# Tried on every slot besides the random draws: nothing, and a number no machine type
# holds (an int() past 4,300 digits raises).
EVERY_OPTION_TRIES = ["", Long("9" * 5000)]
# and on every variable: nothing, no number, not text a terminal should echo
EVERY_VARIABLE_TRIES = ["", "nan", "x\x1b[31m"]


def built_project(root: Path) -> tuple[Project, str]:
    """A warehouse after one good run, and that run's id."""
    p = make_project(root / "proj")
    return p, p.run_json()["run_id"]


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> tuple[Project, str]:
    return built_project(tmp_path_factory.mktemp("fuzzcli"))


@pytest.fixture(scope="module")
def env_project(tmp_path_factory) -> tuple[Project, str]:
    """The variables' own warehouse: whatever the option fuzzing did to the other one
    (a rollback, a gc, a branch) cannot stop a run before it reads the variable."""
    return built_project(tmp_path_factory.mktemp("fuzzenv"))


@pytest.fixture(scope="module")
def odd_paths(project) -> list[str]:
    """Paths no command should choke on: devices, a FIFO nobody writes, a directory, a
    directory module holding a FIFO, a dangling link and a link loop, a missing
    directory, a text file, a file that is no DuckDB database. (Not `/`: walking the
    whole file system takes a time no input length bounds; see fuzz_findings F6.)"""
    p, _ = project
    fifo = p.dir / "fifo"
    tree = p.dir / "tree"
    if not fifo.exists():
        os.mkfifo(fifo)
        tree.mkdir()
        (tree / "m.strata").write_text("source s { x: int }\nmodel m { from s }\n")
        os.mkfifo(tree / "pipe.strata")
        (tree / "gone.strata").symlink_to("/nonexistent/gone.strata")
        (tree / "loop").symlink_to(".")
    (p.dir / "notes.txt").write_text("not a module\n")
    (p.dir / "garbage.duckdb").write_bytes(b"\x00garbage" * 100)
    (p.dir / "adir").mkdir(exist_ok=True)
    return ["/dev/zero", "/dev/null", str(fifo), str(p.dir / "adir"), str(tree), str(p.dir),
            "/nonexistent/dir/x", str(p.dir / "notes.txt"), str(p.dir / "garbage.duckdb"),
            str(p.module), str(p.warehouse)]


def values(slot_id: str, paths: list[str]) -> st.SearchStrategy[str]:
    """Hostile values, in an order of their own for each slot (derandomized runs draw
    the same indexes for every slot), and free text without NUL (argv cannot hold it)."""
    pool = HOSTILE + paths
    turn = sum(map(ord, slot_id)) % len(pool)
    pool = pool[turn:] + pool[:turn]
    free = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                   max_size=40)
    return st.one_of(st.sampled_from(pool), st.sampled_from(paths), free)


def sane(project: tuple[Project, str], tmp: Path) -> dict[str, str]:
    """A value that works, for each parameter a command needs to get going."""
    p, run_id = project
    return {"module": str(p.module), "warehouse": str(p.warehouse), "out_dir": str(tmp / "out"),
            "run_id": run_id, "name": "fuzz_branch", "older_than": "30d", "reason": "fuzz"}


def argv(slot: Slot, value: str, good: dict[str, str]) -> list[str]:
    """The command line: SLOT gets VALUE, every other needed parameter a sane one."""
    args = list(slot.command)
    for param in slot.params():
        chosen = value if param is slot.param else good.get(param.name)
        if chosen is None and not param.required:
            continue
        chosen = chosen if chosen is not None else "x"
        if isinstance(param, click.Argument):
            args.append(chosen)
        else:
            args += [max(param.opts, key=len), chosen]
    # `--` nowhere: a value that looks like an option stays a value of its option;
    # for arguments, click may read it as an unknown option (a usage error, exit 2)
    return args


@pytest.mark.parametrize("slot", SLOTS, ids=lambda s: s.id)
def test_hostile_values_for_every_option(slot: Slot, project, odd_paths, tmp_path) -> None:
    good = sane(project, tmp_path)
    p, _ = project

    @settings(CI, max_examples=examples(2))
    @given(values(slot.id, odd_paths))
    def one_value(value: str) -> None:
        outcome = run_bounded(argv(slot, value, good), p.dir, len(value))
        assert_coded(outcome, usage_ok=True)

    for value in EVERY_OPTION_TRIES:
        one_value = example(value)(one_value)
    one_value()


# ---------------------------------------------------------------- environment variables
def environment_variables() -> list[str]:
    """Every variable strata/ reads through os.environ, os.getenv or env_seconds."""
    found = set()
    pattern = re.compile(r"""(?:os\.(?:environ(?:\.get)?|getenv)|env_seconds)[\[(]\s*["']([A-Z0-9_]+)["']""")
    for path in (ROOT / "strata").rglob("*.py"):
        found.update(pattern.findall(path.read_text()))
    return sorted(found)


# STRATA_DEBUG=1 is the switch that lets an internal error's traceback through.
NOT_FUZZED = {"STRATA_DEBUG"}
ENV_VARS = [v for v in environment_variables() if v not in NOT_FUZZED]


def test_the_environment_variables_are_found() -> None:
    assert {"STRATA_LOCK_TIMEOUT", "STRATA_NOW", "STRATA_CACHE_DIR"} <= set(ENV_VARS)


@pytest.mark.parametrize("variable", ENV_VARS)
def test_hostile_values_for_every_environment_variable(variable: str, env_project,
                                                       odd_paths) -> None:
    """What a user's shell may hold: a check (the parse cache) and a run that rebuilds
    (the clock, the lock, the crash hooks) answer as for any bad input."""
    p, _ = env_project
    commands = [["check", str(p.module)],
                ["run", str(p.module), "-o", str(p.warehouse), "--full-refresh", "--json"]]

    @settings(CI, max_examples=examples(1))
    @given(values(variable, odd_paths))
    def one_value(value: str) -> None:
        for args in commands:
            outcome = run_bounded(args, p.dir, len(value), {variable: value})
            assert_coded(outcome, usage_ok=False)

    for value in EVERY_VARIABLE_TRIES:
        one_value = example(value)(one_value)
    one_value()
