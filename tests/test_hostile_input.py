"""Hostile input (issue 14, items 4-8): inputs built to make parsing or resolving
hang, grow without bound or crash. Each must end soon, in bounded memory, with a
result or a coded diagnostic (`error[Ennn]`), never a traceback.

Speed is not timed here (that is bench/): the inputs are sized so that the old,
quadratic code takes minutes where the linear code takes well under a second, and
a generous subprocess timeout tells the two apart.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

STRATA = [sys.executable, "-c", "from strata.cli.main import main; main()"]
CODED = re.compile(r"error\[E0(?!00)\d\d\]")
TIMEOUT = 20  # seconds; the quadratic lexer took 167 s on one 32,000-line run


def check(path: Path | str, timeout: float = TIMEOUT, preexec=None,
          cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`strata check path` as a process, without the parse cache."""
    env = {**os.environ, "STRATA_NO_CACHE": "1"}
    return subprocess.run([*STRATA, "check", str(path)], capture_output=True, text=True,
                          timeout=timeout, env=env, preexec_fn=preexec, cwd=cwd, check=False)


def assert_coded_failure(proc: subprocess.CompletedProcess, code: str) -> None:
    assert proc.returncode == 1, proc.stderr
    assert f"error[{code}]" in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr


# ---------------------------------------------------------------- item 4
RUN = 32_000


def test_item4_comment_run_before_brace_is_linear(tmp_path: Path) -> None:
    """A run of comment or blank lines before `}`, `and`, `,` or `)` is lexed in one
    pass: the separator pattern used to rescan the rest of the run at every newline
    (32,000 comment lines before `}` took 167 s)."""
    comments = "  -- a comment line\n" * RUN
    blanks = "\n" * RUN
    module = (
        "source s { a: int, b: int }\n"
        "model before_brace {\n  from s\n" + comments + "}\n"
        "model before_and {\n  from s\n  filter a > 1\n" + blanks + "  and b > 2\n}\n"
        "model before_comma {\n  from s\n  select a\n" + comments + "  , b\n}\n"
        "model before_paren {\n  from s\n  filter a in (1, 2\n" + blanks + ")\n}\n")
    path = tmp_path / "runs.strata"
    path.write_text(module)
    proc = check(path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "4 models" in proc.stdout


def test_item4_a_run_before_a_new_statement_still_separates(tmp_path: Path) -> None:
    """The run is skipped as a whole only where the next line continues the statement;
    before a new statement it still ends the previous one."""
    path = tmp_path / "sep.strata"
    path.write_text("source s { a: int }\nmodel m {\n  from s\n" + "  -- c\n\n" * 100
                    + "  derive b = a + 1\n" + "\n" * 100 + "  filter b > 1\n}\n")
    proc = check(path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# ---------------------------------------------------------------- item 5
GRAPH_SCRIPT = textwrap.dedent("""
    import sys
    from pathlib import Path
    from strata.diagnostics import Span
    from strata.semantics.module import Module
    from strata.semantics.resolve import Resolver
    from strata.syntax import ast

    n = int(sys.argv[1])
    span = Span("m.strata", 1, 1, 1, 2)
    col = ast.ColumnDecl("a", ast.TypeRef("int", (), None, span), span)
    decls = [ast.SourceDecl("s", (col,), None, None, span, span)]
    for i in range(n):
        # pairs: an independent model (many ready at once), then one reading it
        upstream = "s" if i % 2 == 0 else f"m{i - 1}"
        decls.append(ast.ModelDecl(f"m{i}", (ast.From(upstream, None, span),), (), (),
                                   span, span))
    module = Module(root=Path.cwd(), files={})
    resolver = Resolver(module, [ast.ModuleFile("m.strata", tuple(decls))])
    resolver._collect()
    order = resolver._graph()
    assert not module.diagnostics, module.diagnostics[:3]
    assert order == [f"m{i}" for i in range(n)], order[:10]
    print(len(order))
""")


def test_item5_dependency_order_of_many_models_is_linear() -> None:
    """The dependency sort of 100,000 models finishes at once, in declaration order
    where models are independent and upstream first otherwise. It sorted the ready
    list and popped its head at every step and tested membership in a list
    (40,000 models: 98 s to resolve)."""
    proc = subprocess.run([sys.executable, "-c", GRAPH_SCRIPT, "100000"], capture_output=True,
                          text=True, timeout=TIMEOUT, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "100000"


def test_item5_cycles_are_still_reported(tmp_path: Path) -> None:
    path = tmp_path / "cycle.strata"
    path.write_text("source s { a: int }\nmodel a { from s }\nmodel b { from c }\n"
                    "model c { from b }\nmodel d { from c }\n")
    proc = check(path)
    assert_coded_failure(proc, "E013")
    assert "dependency cycle: b -> c -> b" in proc.stdout + proc.stderr


# ---------------------------------------------------------------- item 6
posix_only = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs and /dev")


@posix_only
def test_item6_a_device_as_module_path_is_E005_at_once() -> None:
    """`strata check /dev/zero` read forever."""
    proc = check("/dev/zero")
    assert_coded_failure(proc, "E005")
    assert "character device, not a regular file" in proc.stdout + proc.stderr


@posix_only
def test_item6_a_fifo_as_module_path_is_E005_at_once(tmp_path: Path) -> None:
    """Opening a FIFO waited for a writer that never came."""
    os.mkfifo(tmp_path / "pipe.strata")
    proc = check(tmp_path / "pipe.strata")
    assert_coded_failure(proc, "E005")
    assert "FIFO" in proc.stdout + proc.stderr


@posix_only
def test_item6_a_fifo_inside_a_directory_module_is_E005_at_once(tmp_path: Path) -> None:
    (tmp_path / "ok.strata").write_text("source s { a: int }\nmodel m { from s }\n")
    os.mkfifo(tmp_path / "x.strata")
    proc = check(tmp_path)
    assert_coded_failure(proc, "E005")
    assert "x.strata` is a FIFO" in proc.stdout + proc.stderr


# ---------------------------------------------------------------- item 7
HUGE = "9" * 4_301  # one digit past Python's int-string limit (int() raises ValueError)
PLACES = {
    "expression": ("model m {\n  from s\n  derive x = {N}\n}\n", "E036"),
    "negative expression": ("model m {\n  from s\n  filter a > -{N}\n}\n", "E036"),
    "pin rows": ("model m {\n  from s\n  pin rows >= {N}\n}\n", "E036"),
    "pin rows between": ("model m {\n  from s\n  pin rows between 1 and {N}\n}\n", "E036"),
    "property": (("model m {\n  from s\n  incremental\n  merge_strategy: append\n"
                 "  cdc_column: u\n  compact_layers: {N}\n}\n"), "E036"),
    "decimal precision": ("model m {\n  from s\n  derive x = cast(a as decimal({N}, 2))\n}\n",
                          "E020"),
    "decimal scale": ("source t { d: decimal(10, {N}) }\nmodel m { from t }\n", "E020"),
    "test row": (("model m { from s }\ntest t {\n  given s {\n    a, u\n    {N}, null\n  }\n"
                 "  expect m {\n    a, u\n  }\n}\n"), "E036"),
}


@pytest.mark.parametrize("digits", [4_300, 4_301, 50_000])
@pytest.mark.parametrize("place", sorted(PLACES))
def test_item7_integer_past_the_int_string_limit_is_coded(tmp_path: Path, place: str,
                                                          digits: int) -> None:
    """An integer literal of more than 4,300 digits (Python's int-string limit) was a
    crash wherever an integer is read; now it is the same diagnostic as any integer
    out of range (E036), or the type's own check (E020) in a type argument."""
    body, code = PLACES[place]
    path = tmp_path / "big.strata"
    path.write_text("source s { a: int, u: timestamp }\n" + body.replace("{N}", "9" * digits))
    proc = check(path)
    assert_coded_failure(proc, code)
    if code == "E036":  # the message names the number without printing all its digits
        assert f"({digits} characters) is out of range" in proc.stdout + proc.stderr


def test_item7_leading_zeros_do_not_make_a_number_large(tmp_path: Path) -> None:
    path = tmp_path / "zeros.strata"
    path.write_text("source s { a: int }\nmodel m {\n  from s\n  derive x = "
                    + "0" * 5_000 + "7\n  pin rows >= " + "0" * 5_000 + "1\n}\n")
    proc = check(path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize(("literal", "digits"), [
    ("9" * 39, None),  # an integer: E036 as past BIGINT, tested above
    ("9" * 38 + ".5", 39), ("0." + "0" * 37 + "1", 39), ("1" + "0" * 40 + ".0", 42)])
def test_a_decimal_literal_wider_than_38_digits_is_E036(tmp_path: Path, literal: str,
                                                        digits: int | None) -> None:
    """DuckDB read a 40-digit decimal literal as a double (its digits silently lost),
    PostgreSQL kept it exact and Spark refused it: past 38 digits no engine's decimal
    means the same, so check refuses it, naming the digits it needs."""
    path = tmp_path / "wide.strata"
    path.write_text(f"source s {{ a: int }}\nmodel m {{\n  from s\n  derive x = {literal}\n}}\n")
    proc = check(path)
    assert_coded_failure(proc, "E036")
    if digits is not None:
        assert f"needs {digits} digits; a decimal holds at most 38" in proc.stdout + proc.stderr


def test_a_38_digit_decimal_literal_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "wide.strata"
    path.write_text("source s { a: int }\nmodel m {\n  from s\n  derive x = "
                    + "9" * 36 + ".5, y = 0." + "0" * 36 + "1\n}\n")
    proc = check(path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# ---------------------------------------------------------------- item 8
FIFTY_MB = 50 * 1024 * 1024
MEMORY_LIMIT = 2 * 1024**3  # address space for the whole `strata check` process


def _limit_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


HUGE_INPUTS = {
    "string literal": lambda: ("source s { a: text }\nmodel m {\n  from s\n  filter a = '"
                               + "x" * FIFTY_MB + "'\n}\n"),
    "unterminated string": lambda: ("source s { a: text }\nmodel m {\n  from s\n"
                                    "  filter a = '" + "x" * FIFTY_MB + "\n}\n"),
    "newlines": lambda: "\n" * FIFTY_MB,
    "newlines inside a model": lambda: ("source s { a: int }\nmodel m {\n  from s"
                                        + "\n" * FIFTY_MB + "}\n"),
}


@posix_only
@pytest.mark.parametrize("kind", sorted(HUGE_INPUTS))
def test_item8_fifty_megabytes_fit_in_linear_memory(tmp_path: Path, kind: str) -> None:
    """A 50 MB string literal or 50 MB of newlines ran out of memory (the patterns kept
    backtracking state per byte, ~280 bytes each): now the process ends in a 2 GB
    address space with a result or a coded diagnostic, never MemoryError (E000)."""
    path = tmp_path / "huge.strata"
    path.write_text(HUGE_INPUTS[kind]())
    proc = check(path, timeout=120, preexec=_limit_memory)
    out = proc.stdout + proc.stderr
    assert proc.returncode in (0, 1), out[:2000]
    assert "Traceback" not in out and "MemoryError" not in out and "E000" not in out
    assert proc.returncode == 0 or CODED.search(out), out[:2000]


def test_fuzz_F2_a_module_path_too_long_for_the_os_is_E005() -> None:
    """pathlib raised ENAMETOOLONG from exists(): an internal error (fuzz finding F2)."""
    assert_coded_failure(check("m" * 5000 + ".strata"), "E005")


def test_fuzz_F6_a_loop_of_linked_folders_is_walked_once(tmp_path: Path) -> None:
    """A directory module whose walk meets a link back to itself ends (fuzz F6)."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "loop").symlink_to(tmp_path)
    (tmp_path / "m.strata").write_text("source s { x: int }\nmodel m { from s }\n")
    proc = check(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "1 models" in proc.stdout
