"""Issue 14, hostile input: user text never leaves its place in what Strata writes.

A quoted model name may hold any character but a backtick (`` `x\\nDROP TABLE v;` ``,
`` `../../x` ``, ESC). One test per output channel:

- the `-- model NAME (...)` header of `compile --show-sql` and of `build`'s files
  (item 1): the comment holds the whole header in every dialect, and the script run
  by a real DuckDB drops nothing;
- `build`'s file names (item 2): one file per model, directly inside -o DIR, never
  through (nor over) a link already there, distinct on case- and normalisation-blind disks;
- terminal lines (item 3): the run progress line, plain command output, diagnostics
  with their source line and hints: no raw control character;
- JSON: escaped by json.dumps, read back to the exact names.

The CLI runs as the installed script, and its output is read as bytes: a carriage
return read back through universal newlines would pass for a newline.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import unicodedata
from pathlib import Path

import duckdb
import pytest
import sqlglot
from enginehelpers import STRATA, cli_env
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlglot.tokens import TokenType

import dialects
from strata.buildfiles import file_name

# Every line end some engine or tool may honour: DuckDB, psql and SQLGlot end a
# `--` comment at \r as well as \n; Python's splitlines also at \x0b \x0c \x1c-\x1e
# \x85 U+2028 U+2029 (JavaScript-based tools at the last two).
LINE_ENDS = ["\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85",
             "\u2028", "\u2029"]
SOURCE = "source orders { id: int }\n"


def injecting(i: int, end: str) -> str:
    return f"x{end}DROP TABLE victim_{i};{end}--"


INJECTING = [injecting(i, end) for i, end in enumerate(LINE_ENDS)]


def module(path: Path, names: list[str], extra: str = "") -> Path:
    text = SOURCE + "".join(f"model `{n}` {{ from orders }}\n" for n in names) + extra
    path.write_bytes(text.encode("utf-8"))
    return path


def cli(*args: str, cwd: Path, env: dict | None = None,
        code: int | None = 0) -> tuple[str, str]:
    """Run `strata ARGS`; return stdout and stderr exactly as written (no newline
    translation), after checking the exit code."""
    proc = subprocess.run([*STRATA, *args], cwd=cwd, env=cli_env(env), capture_output=True,
                          timeout=120, check=False)
    out, err = proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")
    assert "Traceback" not in out + err, err
    if code is not None:
        assert proc.returncode == code, (proc.returncode, out, err)
    return out, err


def unescaped(shown: str) -> str:
    """The name a header or progress line shows: plain as is, quoted form decoded."""
    if not shown.startswith("`"):
        return shown
    inner = shown[1:-1]
    return inner.encode("latin-1", "backslashreplace").decode("unicode_escape")


def raw_controls(text: str, keep: str = "\n") -> list[str]:
    return sorted({ch for ch in text if not ch.isprintable() and ch not in keep})


def duckdb_survivors(script: str, victims: int) -> int:
    con = duckdb.connect()
    try:
        con.execute("CREATE TABLE orders (id INTEGER)")
        for i in range(victims):
            con.execute(f"CREATE TABLE victim_{i} (x INTEGER)")
        con.execute(script)  # the whole script, as `| duckdb w.duckdb` would run it
        return con.execute("SELECT count(*) FROM duckdb_tables() "
                           "WHERE table_name LIKE 'victim%'").fetchone()[0]
    finally:
        con.close()


HEADER = re.compile(r"-- model (?P<name>\S+|`[^`]*`) \((?P<label>[^)]*)\)")


def assert_headers_hold(script: str, dialect: str, names: list[str]) -> None:
    """Each header is one line at every line end (`splitlines`), names the model
    unambiguously, and SQLGlot's tokenizer of the dialect reads it as one comment
    followed by the statement: no DROP, no `victim` outside a comment."""
    headers = [line for line in script.splitlines() if line.startswith("-- model")]
    assert [unescaped(HEADER.fullmatch(h).group("name")) for h in headers] == names
    assert raw_controls(script, keep="\n") == [], "a header carries a raw control character"
    tokens = sqlglot.Dialect.get_or_raise(dialects.get(dialect).sqlglot).tokenize(script)
    assert not any(t.token_type == TokenType.DROP or "victim" in t.text for t in tokens)
    assert [c for t in tokens for c in t.comments] == [h.removeprefix("--") for h in headers]


@pytest.mark.parametrize("dialect", sorted(dialects.DIALECTS))
def test_item1_compile_header_cannot_inject_sql(tmp_path: Path, dialect: str) -> None:
    path = module(tmp_path / "nl.strata", INJECTING)
    script, _ = cli("compile", str(path), "--show-sql", "--dialect", dialect, cwd=tmp_path)
    assert_headers_hold(script, dialect, INJECTING)
    # every dialect's text for this module is SQL DuckDB runs: run all of it
    assert duckdb_survivors(script, len(INJECTING)) == len(INJECTING)


def test_item1_build_file_header_cannot_inject_sql(tmp_path: Path) -> None:
    path = module(tmp_path / "nl.strata", INJECTING)
    out, _ = cli("build", str(path), "-o", str(tmp_path / "out"), "--json", cwd=tmp_path)
    files = json.loads(out)["models"]
    assert sorted(files) == sorted(INJECTING)
    for i, name in enumerate(INJECTING):
        script = Path(files[name]).read_bytes().decode("utf-8")
        assert_headers_hold(script, "duckdb", [name])
        assert duckdb_survivors(script, len(INJECTING)) == len(INJECTING), repr(LINE_ENDS[i])


def test_item1_header_shows_names_unambiguously(tmp_path: Path) -> None:
    """A name with a real newline and one with a backslash and `n` show differently,
    a plain name shows as it is, a name needing backticks shows between them."""
    names = ["a\nb", "a\\nb", "order items", "café", "a\u202eb", "plain_1"]
    path = module(tmp_path / "m.strata", names)
    script, _ = cli("compile", str(path), "--show-sql", cwd=tmp_path)
    headers = [HEADER.fullmatch(line).group("name") for line in script.splitlines()
               if line.startswith("-- model")]
    assert headers == ["`a\\nb`", "`a\\\\nb`", "`order items`", "`café`", "`a\\u202eb`",
                       "plain_1"]
    assert [unescaped(h) for h in headers] == names


HOSTILE_FILES = ["../../escaped", "..", ".", "a/b", "a\\b", "CON", "nul", "Com1", "lpt9",
                 "aux.txt", "x.", "x ", "esc\x1b[2J", "nl\nname", "a" * 300, "é" * 200,
                 "café", unicodedata.normalize("NFD", "café"), "Mixed_Case", "plain"]


def test_item2_build_writes_only_inside_out_dir(tmp_path: Path) -> None:
    outside = tmp_path / "work"
    outside.mkdir()
    absolute = str(tmp_path / "abs" / "target")
    names = [*HOSTILE_FILES, absolute]
    path = module(outside / "m.strata", names)
    out_dir = outside / "out" / "sub" / "dir"
    out, _ = cli("build", str(path), "-o", "out/sub/dir", "--json", cwd=outside)
    written = json.loads(out)["models"]
    root = os.path.realpath(out_dir)
    assert sorted(written) == sorted(names)
    for name, shown in written.items():
        real = os.path.realpath(outside / shown)
        assert os.path.dirname(real) == root, (name, shown)
        assert Path(real).read_text(encoding="utf-8").count("-- model ") == 1
    # nothing anywhere else: the tree holds the module and DIR's files, no temp file
    everything = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")
                        if p.is_file())
    expected = sorted(["work/m.strata",
                       *(f"work/out/sub/dir/{file_name(n)}" for n in names)])
    assert everything == expected
    assert not (tmp_path / "abs").exists()


def test_item2_file_names_keep_plain_names_and_are_safe(tmp_path: Path) -> None:
    names = HOSTILE_FILES
    path = module(tmp_path / "m.strata", names)
    out, _ = cli("build", str(path), "-o", "out", "--json", cwd=tmp_path)
    files = {n: Path(p).name for n, p in json.loads(out)["models"].items()}
    assert files["plain"] == "plain.sql" and files["Mixed_Case"] == "Mixed_Case.sql"
    assert files["../../escaped"].startswith("______escaped-")
    for name, file in files.items():
        assert len(file.encode()) <= 255 and re.fullmatch(r"[A-Za-z0-9_-]+\.sql", file), name
        # Windows reserves a device name before the first dot, whatever follows it
        assert file.split(".")[0].lower() not in {"con", "nul", "com1", "lpt9", "aux"}, name
    # distinct on a disk blind to case and to Unicode normalisation (macOS, Windows)
    folded = {unicodedata.normalize("NFC", f).casefold() for f in files.values()}
    assert len(folded) == len(names)


def test_item2_build_does_not_follow_a_link_in_out_dir(tmp_path: Path) -> None:
    """A link planted at a model's file, to an existing file and to a missing one
    outside DIR: build refuses it (E130, issue 39); neither target is written, and
    the links stay as they are (build never deletes what it did not write)."""
    out = tmp_path / "out"
    out.mkdir()
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me\n")
    for name, target in (("plain", precious), ("../x", tmp_path / "created_outside.sql")):
        (out / file_name(name)).symlink_to(target)
        path = module(tmp_path / "m.strata", [name])
        _, err = cli("build", str(path), "-o", "out", cwd=tmp_path, code=1)
        assert "error[E130]" in err and f"out/{file_name(name)}" in err
        assert (out / file_name(name)).readlink() == target
    assert precious.read_text() == "keep me\n"
    assert not (tmp_path / "created_outside.sql").exists()


def test_item2_a_file_that_cannot_be_written_is_E093(tmp_path: Path) -> None:
    (tmp_path / "out" / "plain.sql").mkdir(parents=True)
    path = module(tmp_path / "m.strata", ["plain"])
    _, err = cli("build", str(path), "-o", "out", cwd=tmp_path, code=1)
    assert "error[E093]: cannot write `out/plain.sql`" in err
    assert os.listdir(tmp_path / "out") == ["plain.sql"]  # no temporary file left


@settings(deadline=None, max_examples=300)
@given(st.lists(st.text(st.characters(blacklist_characters="`"), min_size=1, max_size=80),
                min_size=2, max_size=6, unique_by=str.lower))
def test_item2_file_names_never_clash(names: list[str]) -> None:
    """Names a module may hold together (E014: they differ by more than case) get
    files that differ on every disk, each one path component."""
    files = [file_name(n) for n in names]
    folded = {unicodedata.normalize("NFKC", f).casefold() for f in files}
    assert len(folded) == len(names)
    for file in files:
        assert os.path.basename(file) == file and file not in (".", "..")
        assert file.isascii() and file.isprintable() and len(file) <= 255


def test_item3_progress_line_escapes_a_name(tmp_path: Path) -> None:
    names = ["a\x1b]0;pwned\x07b\x1b[2J", "[/]", "r\rover"]
    path = module(tmp_path / "m.strata", names)
    warehouse = tmp_path / "w.duckdb"
    with duckdb.connect(str(warehouse)) as con:
        con.execute("CREATE TABLE orders (id INTEGER)")
    out, _ = cli("run", str(path), "-o", str(warehouse), cwd=tmp_path,
                 env={"TTY_COMPATIBLE": "1", "COLUMNS": "200"})
    # rich's own colours are the only escape sequences: ESC [ digits m
    plain = re.sub(r"\x1b\[[0-9;]*m", "", out)
    assert raw_controls(plain) == []
    shown = re.findall(r"rebuilt\s+(`[^`]*`)", plain)
    assert [unescaped(s) for s in shown] == names


def test_item3_test_report_on_a_terminal_shows_a_name_as_text(tmp_path: Path) -> None:
    """`strata test` colours its verdicts with rich markup: a test named `[/]` and
    ESC is shown as text, not read as a tag (that crashed with E000)."""
    path = tmp_path / "m.strata"
    path.write_bytes(b"source orders { id: int }\nmodel m { from orders }\n"
                     b"test `[/]t\x1b[2J` {\n  given orders {\n    id\n    1\n  }\n"
                     b"  expect m {\n    id\n    2\n  }\n}\n")
    out, _ = cli("test", str(path), cwd=tmp_path, env={"TTY_COMPATIBLE": "1"}, code=1)
    plain = re.sub(r"\x1b\[[0-9;]*m", "", out)
    assert raw_controls(plain) == []
    assert plain.startswith("test [/]t\\x1b[2J ... FAILED")


def test_terminal_output_of_every_command_is_escaped(tmp_path: Path) -> None:
    """Plain (piped) output goes through the same door: `plan` lists names, `run`'s
    summary notes, `branch create` a branch name."""
    name = "esc\x1b[2J\rname"
    path = module(tmp_path / "m.strata", [name])
    warehouse = tmp_path / "w.duckdb"
    with duckdb.connect(str(warehouse)) as con:
        con.execute("CREATE TABLE orders (id INTEGER)")
    plan, _ = cli("plan", str(path), "-o", str(warehouse), cwd=tmp_path)
    cli("run", str(path), "-o", str(warehouse), cwd=tmp_path)
    branch, _ = cli("branch", "create", "b\x1b[31m", "-o", str(warehouse), cwd=tmp_path,
                    code=None)
    for text in (plan, branch):
        assert raw_controls(text) == [], text
    assert "esc\\x1b[2J\\rname" in plan


def test_diagnostic_escapes_message_source_line_and_hint(tmp_path: Path) -> None:
    """An error on a line whose string literal holds ESC: the source line is shown
    escaped, the caret still under the culprit, and the hint (a near name with ESC)
    escaped; in colour too."""
    path = tmp_path / "m.strata"
    path.write_bytes(b"source `orders\x1b[2J` { id: int, status: text }\n"
                     b"model m {\n  from `orders\x1b[2J`\n"
                     b"  filter status = 'a\x1b[2Jb' and nope = 1\n}\n"
                     b"model n { from `orders\x1b[2K` }\n")
    for env in ({}, {"TTY_COMPATIBLE": "1"}):
        _, err = cli("check", str(path), cwd=tmp_path, env=env, code=1)
        plain = re.sub(r"\x1b\[[0-9;]*m", "", err) if env else err
        assert raw_controls(plain) == [], plain
        assert "'a\\x1b[2Jb'" in plain and "orders\\x1b[2J" in plain
        lines = plain.splitlines()
        source = next(i for i, line in enumerate(lines) if line.startswith("4 | "))
        caret = lines[source + 1]
        assert caret.index("^") == lines[source].index("nope")


def test_diagnostic_source_line_is_counted_at_newlines(tmp_path: Path) -> None:
    """U+2028 or a form feed in a string literal is no line end to the parser, so the
    line shown under an error is the one the error is on."""
    path = tmp_path / "m.strata"
    path.write_bytes(("source orders { id: int, status: text }\n"
                      "model a {\n  from orders\n  filter status = 'x\u2028y\x0cz\x85'\n}\n"
                      "model b {\n  from orders\n  select nope\n}\n").encode())
    _, err = cli("check", str(path), cwd=tmp_path, code=1)
    assert err.startswith("error[E") and err.count("error[") == 1, err
    assert "8 |   select nope\n" in err


def test_json_output_is_escaped_and_exact(tmp_path: Path) -> None:
    names = ["esc\x1b[2J", "nl\nx", "cr\rx", "sep\u2028x", "nel\x85x"]
    path = module(tmp_path / "m.strata", names, extra="model bad { from `nope\x1b[2J` }\n")
    (tmp_path / "ok.strata").write_bytes(
        (SOURCE + "".join(f"model `{n}` {{ from orders }}\n" for n in names)).encode())
    compiled, _ = cli("compile", "ok.strata", "--json", cwd=tmp_path)
    built, _ = cli("build", "ok.strata", "-o", "out", "--json", cwd=tmp_path)
    checked, _ = cli("check", str(path), "--json", cwd=tmp_path, code=1)
    for text in (compiled, built, checked):
        assert text.isascii() and raw_controls(text) == [], text
    assert [s["model"] for s in json.loads(compiled)] == names
    assert sorted(json.loads(built)["models"]) == sorted(names)
    assert any("nope\x1b[2J" in d["message"] for d in json.loads(checked))
