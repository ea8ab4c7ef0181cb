"""`strata fmt` (issue 38): one canonical layout, idempotent, every comment kept, the
meaning never changed; `--check` for CI; only .strata files, never through a link.

The property: every module in the repository (examples/, tests/golden/, the
differential modules) and a fixed sample of the fuzz corpus (random derivations of
the grammar, mutations of the repository's modules) that parses formats to a
fixpoint, keeps its tokens, comments and line breaks, and compiles to the same SQL
(or the same diagnostics) as before."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from enginehelpers import strata
from fuzzgen import corpus, derive, mutate

from strata.compiler import compile_statements
from strata.diagnostics import StrataError
from strata.fmt import format_source
from strata.semantics.resolve import load_module, load_text
from strata.syntax.layout import check_same, lex

ROOT = Path(__file__).resolve().parent.parent
DIALECTS = ("duckdb", "postgres", "spark")

MESSY = """\
-- header comment, kept as it is


source   orders{id:int,amount : decimal(12,2)   -- money
  tags : list < text >
status:text}
model paid_orders {
from orders   as o
    filter o.status='paid'and amount>-1   -- only paid
      and amount <   1000
  derive   big = amount>=100 , neg = - amount,
  twice = amount*2
  -- a comment on its own line
     select id,big,
  neg , twice


}
model by_status{
  from (from orders|filter status!='x')
  group status
  aggregate n=count( )
}
"""

CANONICAL = """\
-- header comment, kept as it is

source orders { id: int, amount: decimal(12, 2)  -- money
  tags: list<text>
  status: text }

model paid_orders {
  from orders as o
  filter o.status = 'paid' and amount > -1  -- only paid
    and amount < 1000
  derive big = amount >= 100, neg = -amount,
         twice = amount * 2
  -- a comment on its own line
  select id, big,
         neg, twice
}

model by_status {
  from (from orders | filter status != 'x')
  group status
  aggregate n = count()
}
"""


def sql_of(module) -> dict[str, list[str]] | list[str]:
    """Each dialect's statements, or the diagnostics' codes when the module fails."""
    errors = [d.code for d in module.diagnostics if d.severity == "error"]
    if errors:
        return errors
    out: dict[str, list[str]] = {}
    for dialect in DIALECTS:
        try:
            out[dialect] = [s.sql for s in compile_statements(module, dialect, keep_trees=False,
                                                              clock=None)]
        except StrataError as err:
            out[dialect] = [d.code for d in err.diagnostics]
    return out


def assert_formats_to_a_fixpoint(text: str, name: str) -> str | None:
    """The formatted text, or None when `text` does not parse (fmt leaves it)."""
    try:
        once = format_source(text, name)
    except StrataError as err:
        assert all(d.code != "E221" for d in err.diagnostics), err
        return None
    assert format_source(once, name) == once, f"{name}: a second fmt changed the text"
    check_same(text, once, name)  # same tokens, comments and line breaks
    assert [t for t in lex(once) if t != "\n" and t.kind == "comment"] == \
        [t.__class__(t.kind, t.text.rstrip()) for t in lex(text) if t != "\n" and t.kind == "comment"]
    return once


def test_a_messy_module_takes_the_canonical_layout_and_keeps_its_comments() -> None:
    assert format_source(MESSY, "messy.strata") == CANONICAL
    assert format_source(CANONICAL, "messy.strata") == CANONICAL
    assert sql_of(load_text(CANONICAL)) == sql_of(load_text(MESSY))


@pytest.mark.parametrize("name", sorted(corpus()))
def test_every_repository_module_formats_to_a_fixpoint_with_the_same_sql(name: str) -> None:
    text = corpus()[name]
    formatted = assert_formats_to_a_fixpoint(text, name)
    if formatted is not None:
        assert sql_of(load_text(formatted, name)) == sql_of(load_text(text, name))


def test_the_differential_modules_format_to_a_fixpoint() -> None:
    for path in sorted((ROOT / "tests" / "differential").rglob("*.strata")):
        text = path.read_text(encoding="utf-8")
        formatted = assert_formats_to_a_fixpoint(text, str(path))
        assert formatted is not None, path
        assert sql_of(load_text(formatted)) == sql_of(load_text(text))


def fuzz_corpus() -> list[str]:
    """A fixed sample: 150 derivations of the grammar, 150 mutations of the
    repository's modules."""
    rng = random.Random(38)
    texts = [derive(rng.randrange, size=rng.choice((20, 60, 120))) for _ in range(150)]
    modules = [t for name, t in sorted(corpus().items()) if "joined" not in name]
    texts += [mutate(rng.choice(modules), rng.randrange) for _ in range(150)]
    return texts


def test_the_fuzz_corpus_formats_to_a_fixpoint_with_the_same_meaning() -> None:
    parsed = 0
    for i, text in enumerate(fuzz_corpus()):
        formatted = assert_formats_to_a_fixpoint(text, f"fuzz{i}.strata")
        if formatted is None:
            continue
        parsed += 1
        assert sql_of(load_text(formatted)) == sql_of(load_text(text)), text
    assert parsed >= 50  # the sample does reach the formatter (58 of 300 parse)


# ---------------------------------------------------------------- the command
@pytest.fixture
def shop(tmp_path: Path) -> Path:
    module = tmp_path / "shop"
    shutil.copytree(ROOT / "examples" / "tpch", module)
    (module / "models" / "messy.strata").write_text(MESSY.replace("orders", "orders_m")
                                                    .replace("paid_orders", "paid_m")
                                                    .replace("by_status", "by_status_m"))
    return module


def test_check_reports_and_writes_nothing_then_fmt_writes_only_what_changes(shop: Path) -> None:
    before = {p: p.read_bytes() for p in shop.rglob("*.strata")}
    meaning = sql_of(load_module(shop))
    checked = strata("fmt", "--check", "shop", cwd=shop.parent, check=False)
    assert checked.returncode == 1
    assert "would reformat shop/models/messy.strata" in checked.stderr
    assert {p: p.read_bytes() for p in shop.rglob("*.strata")} == before

    untouched = shop / "models" / "q01.strata"
    mtime = untouched.stat().st_mtime_ns
    strata("fmt", "shop", cwd=shop.parent, check=True)
    assert (shop / "models" / "messy.strata").read_text().startswith(
        "-- header comment, kept as it is\n\nsource orders_m { id: int,")
    assert untouched.stat().st_mtime_ns == mtime  # unchanged files are not rewritten
    again = strata("fmt", "--check", "shop", cwd=shop.parent, check=True)
    assert "0 of 24 file(s) would reformat" in again.stderr
    assert sql_of(load_module(shop)) == meaning


def test_check_as_json_lists_the_files(shop: Path) -> None:
    ran = strata("fmt", "--check", "--json", "shop", cwd=shop.parent, check=False)
    assert ran.returncode == 1
    doc = json.loads(ran.stdout)
    assert doc["status"] == "ok" and doc["check"] is True
    assert "shop/models/messy.strata" in doc["changed"]
    assert len(doc["changed"]) + len(doc["unchanged"]) == 24 and doc["diagnostics"] == []


def test_fmt_leaves_a_file_that_does_not_parse_and_says_why(tmp_path: Path) -> None:
    broken = tmp_path / "broken.strata"
    broken.write_text("model m {\n  from x\n  filter a ==\n}\n")
    fine = tmp_path / "fine.strata"
    fine.write_text("source x{a:int}\n")
    ran = strata("fmt", ".", cwd=tmp_path, check=False)
    assert ran.returncode == 1 and "error[E001]" in ran.stderr
    assert broken.read_text() == "model m {\n  from x\n  filter a ==\n}\n"
    assert fine.read_text() == "source x { a: int }\n"  # the others are still formatted


def test_fmt_takes_only_strata_files(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("model   m {}\n")
    ran = strata("fmt", "notes.txt", cwd=tmp_path, check=False)
    assert ran.returncode == 1 and "error[E220]" in ran.stderr
    assert notes.read_text() == "model   m {}\n"


def test_fmt_never_reads_or_writes_through_a_link(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "elsewhere.strata"
    target.write_text("source   s{a:int}\n")
    module = tmp_path / "module"
    module.mkdir()
    (module / "own.strata").write_text("source   t{a:int}\n")
    os.symlink(target, module / "linked.strata")
    os.symlink(outside, module / "linked_folder")
    ran = strata("fmt", "module", cwd=tmp_path, check=True)  # a warning, not a failure
    assert ran.stderr.count("warning[E130]") == 2, ran.stderr
    assert target.read_text() == "source   s{a:int}\n"
    assert (module / "linked.strata").is_symlink()
    assert (module / "own.strata").read_text() == "source t { a: int }\n"


def test_a_file_fmt_cannot_write_is_E222(tmp_path: Path) -> None:
    """A folder nobody may write into: read-only for a user; for root (who writes
    through permissions) immutable (`chattr +i`)."""
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "m.strata"
    path.write_text("source   s{a:int}\n")
    os.chmod(folder, 0o555)
    immutable = False
    try:
        if os.access(folder, os.W_OK):
            immutable = shutil.which("chattr") is not None and subprocess.run(
                ["chattr", "+i", str(folder)], capture_output=True, check=False).returncode == 0
            if not immutable:
                pytest.skip("this user writes to read-only folders and chattr +i failed")
        ran = strata("fmt", "ro", cwd=tmp_path, check=False)
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
        os.chmod(folder, 0o755)
    assert ran.returncode == 1 and "error[E222]" in ran.stderr, ran.stderr
    assert path.read_text() == "source   s{a:int}\n"


def test_the_guard_refuses_a_layout_that_moves_a_line_break() -> None:
    with pytest.raises(StrataError) as err:
        check_same("model m {\n  from x\n}\n", "model m { from x\n}\n", "m.strata")
    assert err.value.diagnostics[0].code == "E221"
    check_same("model m {\n  from   x\n\n\n}\n", "model m {\n  from x\n}\n", "m.strata")
