"""The on-disk parse cache (strata/syntax/cache.py): same trees as parsing, keyed by
content, never trusted blindly, bounded in size, off unless asked for."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import strata.cli.compile_cmds  # noqa: F401  (registers the commands on `cli`)
from strata import cachedirs
from strata.cli.main import cli
from strata.diagnostics import StrataError
from strata.semantics.resolve import load_module
from strata.syntax import cache
from strata.syntax.parser import parse_text

TEXT = """\
source orders { id: int, status: text, updated_at: timestamp }
model paid {
  from orders
  filter status = 'paid'
  incremental
  merge_strategy: upsert
  merge_keys: [id]
  cdc_column: updated_at
  pin unique [id]
}
"""


def entries(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.pickle"))


def test_a_hit_gives_the_same_tree_without_parsing(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    first = cache.parse_cached(TEXT, "m.strata", tmp_path)
    assert first == parse_text(TEXT, "m.strata")
    assert len(entries(tmp_path)) == 1

    def no_parsing(*_args):
        raise AssertionError("parsed again")

    monkeypatch.setattr(cache, "_parse", no_parsing)
    again = cache.parse_cached(TEXT, "m.strata", tmp_path)
    assert again == first
    # names keep their spans through pickling (merge_keys, pins point at names)
    model = again.declarations[1]
    keys = next(p for p in model.properties if p.name == "merge_keys").value
    assert keys == ("id",) and keys.spans[0].line == 7 and keys.span.column == 15
    assert model.pins[0].columns.spans[0].column == 15


def test_the_key_is_the_text_and_the_shown_path(tmp_path: Path) -> None:
    cache.parse_cached(TEXT, "m.strata", tmp_path)
    cache.parse_cached(TEXT, "other/m.strata", tmp_path)  # spans name the path
    cache.parse_cached(TEXT + "\n-- edited\n", "m.strata", tmp_path)
    assert len(entries(tmp_path)) == 3


def test_a_corrupt_entry_is_parsed_again_and_replaced(tmp_path: Path) -> None:
    cache.parse_cached(TEXT, "m.strata", tmp_path)
    [entry] = entries(tmp_path)
    for junk in (b"not a pickle", pickle.dumps({"a": "dict, not a syntax tree"})):
        entry.write_bytes(junk)
        assert cache.parse_cached(TEXT, "m.strata", tmp_path) == parse_text(TEXT, "m.strata")
        assert entry.read_bytes() != junk


def test_syntax_errors_are_not_kept(tmp_path: Path) -> None:
    with pytest.raises(StrataError):
        cache.parse_cached("model m {", "m.strata", tmp_path)
    assert entries(tmp_path) == []


def test_an_unwritable_directory_only_costs_time(tmp_path: Path) -> None:
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("")
    assert cache.parse_cached(TEXT, "m.strata", blocked / "parse") == parse_text(TEXT, "m.strata")


def test_the_least_recently_used_entries_go(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache, "MAX_ENTRIES", 4)
    for i in range(4):
        cache.parse_cached(TEXT + f"-- {i}\n", "m.strata", tmp_path)
    for n, entry in enumerate(entries(tmp_path)):
        os.utime(entry, (1000 + n, 1000 + n))
    cache.parse_cached(TEXT + "-- 0\n", "m.strata", tmp_path)  # a hit: now the newest
    cache.parse_cached(TEXT + "-- 4\n", "m.strata", tmp_path)  # the fifth: prune to 3
    assert len(entries(tmp_path)) == 3
    kept_texts = {TEXT + f"-- {i}\n" for i in (0, 4)}
    for text in kept_texts:  # the two used last are still there
        before = len(entries(tmp_path))
        cache.parse_cached(text, "m.strata", tmp_path)
        assert len(entries(tmp_path)) == before


def test_the_library_parses_afresh_unless_given_a_directory(tmp_path: Path) -> None:
    path = tmp_path / "m.strata"
    path.write_text(TEXT)
    store = tmp_path / "cache"
    assert load_module(path).ok and not store.exists()
    assert load_module(path, parse_cache=store).ok and len(entries(store)) == 1


def test_the_cli_uses_STRATA_CACHE_DIR_unless_STRATA_NO_CACHE(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "m.strata"
    path.write_text(TEXT)
    monkeypatch.setenv("STRATA_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setenv("STRATA_NO_CACHE", "1")
    assert CliRunner().invoke(cli, ["check", str(path)]).exit_code == 0
    # no parse entries; the compiled grammar (the parser's LALR tables) is kept all the
    # same, as Python keeps bytecode
    assert [p.name for p in (tmp_path / "c").glob("*") if p.name != "grammar"] == []
    monkeypatch.delenv("STRATA_NO_CACHE")
    for _ in range(2):
        result = CliRunner().invoke(cli, ["compile", str(path), "--show-sql"])
        assert result.exit_code == 0 and "-- model paid (incremental: upsert" in result.stdout
    assert len(entries(tmp_path / "c" / "parse")) == 1


def test_a_module_loaded_from_the_cache_does_not_import_the_parser(tmp_path: Path) -> None:
    """Lark and the parser cost ~30 ms of every command; a cached tree needs neither."""
    (tmp_path / "m.strata").write_text(TEXT)
    probe = ("import sys\nfrom pathlib import Path\n"
             "from strata.semantics.resolve import load_module\n"
             "m = load_module(Path(sys.argv[1]), parse_cache=Path(sys.argv[2]))\n"
             "assert m.ok, m.diagnostics\n"
             "print('lark' in sys.modules, 'strata.syntax.parser' in sys.modules)\n")
    args = [sys.executable, "-c", probe, str(tmp_path / "m.strata"), str(tmp_path / "c")]
    cold = subprocess.run(args, capture_output=True, text=True, check=True).stdout.split()
    warm = subprocess.run(args, capture_output=True, text=True, check=True).stdout.split()
    assert cold == ["True", "True"]
    assert warm == ["False", "False"]


PARALLEL_PROBE = r"""
import json, sys
from pathlib import Path
from strata.semantics.resolve import load_module
from strata.syntax import cache
cache.PARALLEL_MIN = int(sys.argv[2])
calls = []
real = cache._parse_all
cache._parse_all = lambda items: calls.append(len(items)) or real(items)
import multiprocessing
forks = []
real_context = multiprocessing.get_context
multiprocessing.get_context = lambda method=None: forks.append(method) or real_context(method)
m = load_module(Path(sys.argv[1]), parse_cache=Path(sys.argv[3]))
print(json.dumps({"order": m.order, "calls": calls, "forks": forks,
                  "diagnostics": [[d.code, d.message, d.span.file, d.span.line, d.span.column]
                                  for d in m.diagnostics]}))
"""


def test_many_new_files_are_parsed_in_parallel_with_the_same_result(tmp_path: Path) -> None:
    """Forked workers parse a module's uncached files (PARALLEL_MIN or more): same
    models, same diagnostics in file order, as parsing them one by one."""
    src = tmp_path / "mod"
    src.mkdir()
    (src / "a_sources.strata").write_text("source orders {\n  id: int\n  amount: double\n}\n")
    for i in range(60):
        (src / f"m{i:03}.strata").write_text(
            f"model m{i:03} {{\n  from orders\n  filter amount > {i}\n  select id, amount\n}}\n")
    (src / "m020.strata").write_text("model m020 {\n  from orders\n  filter amount >\n}\n")
    (src / "m040.strata").write_text("model m040 {\n  from orders\n  select id,, amount\n}\n")

    def probe(parallel_min: int, cache_dir: str) -> dict:
        out = subprocess.run([sys.executable, "-c", PARALLEL_PROBE, str(src), str(parallel_min),
                              str(tmp_path / cache_dir)], capture_output=True, text=True,
                             check=True).stdout
        return json.loads(out)

    parallel = probe(8, "c1")
    sequential = probe(10_000, "c2")
    assert parallel["calls"] == sequential["calls"] == [61]
    assert parallel["forks"] == ["fork"] and sequential["forks"] == []
    assert parallel["order"] == sequential["order"]
    assert parallel["diagnostics"] == sequential["diagnostics"]
    assert [d[0] for d in parallel["diagnostics"]] == ["E001", "E001"]
    assert parallel["diagnostics"][0][2].endswith("m020.strata")
    assert len(list((tmp_path / "c1").glob("*.pickle"))) == 59  # the clean files are kept
    warm = probe(8, "c1")
    assert warm["calls"] == [2] and warm["diagnostics"] == parallel["diagnostics"]


def test_a_cache_folder_others_can_write_to_is_not_used(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Entries are unpickled: a folder another user can write to (STRATA_CACHE_DIR in
    a shared place) could hold a planted one, so the CLI parses without a cache."""
    path = tmp_path / "m.strata"
    path.write_text(TEXT)
    shared = tmp_path / "c" / "parse"
    shared.mkdir(parents=True)
    shared.chmod(0o777)
    monkeypatch.setenv("STRATA_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.delenv("STRATA_NO_CACHE", raising=False)
    assert cachedirs.default_dir() is None
    assert CliRunner().invoke(cli, ["check", str(path)]).exit_code == 0
    assert entries(shared) == []
    shared.chmod(0o700)  # private again: used
    assert cachedirs.default_dir() == shared
    assert CliRunner().invoke(cli, ["check", str(path)]).exit_code == 0
    assert len(entries(shared)) == 1
