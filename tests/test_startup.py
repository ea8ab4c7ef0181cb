"""Start-up of a command: what each process pays before any work.

The Lark parser's LALR tables are cached on disk, in Strata's cache folder (never
the shared temp folder, where Lark would unpickle whatever file another user put
under its predictable name); a process that loads them must parse exactly like one
that built them: same trees, same spans, same diagnostics.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import lark

PROBE = r"""
import json, sys
from strata.semantics.resolve import load_text
module = load_text(sys.argv[1], "probe.strata")
print(json.dumps({
    "order": module.order,
    "diagnostics": [[d.code, d.message, d.span.line, d.span.column] for d in module.diagnostics],
}))
"""

TEXT = """
source orders {
  id: int
  updated_at: timestamp
}
model m {
  from orders
  filter id > 0
  select id, updated_at
}
model bad {
  from orders
  select idd
}
"""


def probe(cache: Path, temp: Path) -> dict:
    env = {**os.environ, "STRATA_CACHE_DIR": str(cache), "TMPDIR": str(temp)}
    env.pop("STRATA_NO_CACHE", None)
    out = subprocess.run([sys.executable, "-c", PROBE, TEXT], capture_output=True, text=True,
                         env=env, check=True)
    assert not out.stderr, out.stderr
    return json.loads(out.stdout)


def test_a_parser_loaded_from_the_cache_parses_like_a_built_one(tmp_path):
    cache, temp = tmp_path / "cache", tmp_path / "temp"
    temp.mkdir()
    first, second = probe(cache, temp), probe(cache, temp)
    assert [p.name for p in (cache / "grammar").iterdir()] == [
        "lalr-py{}.{}-lark{}.tables".format(*sys.version_info[:2], lark.__version__)]
    assert oct((cache / "grammar").stat().st_mode & 0o777) == oct(0o700)
    assert list(temp.iterdir()) == []  # nothing in the shared temp folder
    assert first == second
    assert first["diagnostics"] and first["diagnostics"][0][0] == "E011"


class _Planted:
    """What another user could leave for pickle to run: here it only makes a folder."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.mkdir, (str(self.marker),))


def test_tables_in_a_folder_others_can_write_are_never_loaded(tmp_path):
    cache, temp, marker = tmp_path / "cache", tmp_path / "temp", tmp_path / "ran"
    temp.mkdir()
    grammar = cache / "grammar"
    grammar.mkdir(parents=True)
    grammar.chmod(0o777)  # e.g. STRATA_CACHE_DIR in a shared folder
    name = "lalr-py{}.{}-lark{}.tables".format(*sys.version_info[:2], lark.__version__)
    (grammar / name).write_bytes(b"0\n" + pickle.dumps(_Planted(marker)))
    result = probe(cache, temp)
    assert not marker.exists(), "a planted tables file was unpickled"
    assert result["diagnostics"][0][0] == "E011"  # parsed all the same, tables built afresh
