"""Start-up of a command: what each process pays before any work.

The Lark parser's LALR tables are cached on disk (`cache=True`); a process that
loads them must parse exactly like one that built them: same trees, same spans,
same diagnostics.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

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


def test_a_parser_loaded_from_the_cache_parses_like_a_built_one(tmp_path):
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # a fresh cache folder
    outs = [subprocess.run([sys.executable, "-c", PROBE, TEXT], capture_output=True, text=True,
                           env=env, check=True).stdout for _ in range(2)]
    assert any(p.name.startswith(".lark_cache") for p in tmp_path.iterdir())
    first, second = (json.loads(o) for o in outs)
    assert first == second
    assert first["diagnostics"] and first["diagnostics"][0][0] == "E011"
