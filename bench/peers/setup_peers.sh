#!/usr/bin/env bash
# Creates the three benchmark virtual environments under bench/peers/.venvs/
# (ignored by git) and records the installed versions in .venvs/versions.json.
#
#   dbt      dbt-core<1.12 + dbt-duckdb   (dbt-core 1.12's build downloads from
#                                          an unreachable host, 1.11.x works)
#   sqlmesh  sqlmesh + duckdb<2           (SQLMesh 0.236 needs duckdb<2)
#   strata   duckdb<2 + pip install -e <repo>, plus matplotlib for the chart
#
# All three pin the SAME duckdb version (the one the sqlmesh venv resolved), so
# every tool is measured on the same engine.
#
# Usage: bash bench/peers/setup_peers.sh [--force]   (idempotent; --force rebuilds)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
VENVS="$HERE/.venvs"
PY="${PYTHON:-python3}"
FORCE=0
[[ "${1:-}" == "--force" ]] && FORCE=1
mkdir -p "$VENVS"

mkvenv() {  # name
  local dir="$VENVS/$1"
  if [[ $FORCE == 1 && -d "$dir" ]]; then rm -rf "$dir"; fi
  if [[ ! -x "$dir/bin/python" ]]; then
    "$PY" -m venv "$dir"
    "$dir/bin/python" -m pip install -q --upgrade pip
  fi
}

pip_in() {  # name args...
  local name="$1"; shift
  "$VENVS/$name/bin/python" -m pip install -q "$@"
}

echo "== sqlmesh venv"
mkvenv sqlmesh
pip_in sqlmesh "sqlmesh" "duckdb<2"
DUCKDB_VERSION="$("$VENVS/sqlmesh/bin/python" -c 'import duckdb; print(duckdb.__version__)')"
echo "   duckdb $DUCKDB_VERSION (pinned in every venv)"

echo "== dbt venv"
mkvenv dbt
pip_in dbt "dbt-core<1.12" "dbt-duckdb" "duckdb==$DUCKDB_VERSION"

echo "== strata venv"
mkvenv strata
pip_in strata "duckdb==$DUCKDB_VERSION" "matplotlib"
if [[ -f "$REPO/pyproject.toml" ]]; then
  # Keep duckdb pinned while installing the package in editable mode.
  echo "duckdb==$DUCKDB_VERSION" > "$VENVS/strata-constraints.txt"
  # editable_mode=compat puts the repo on sys.path (a .pth line), so packages
  # the other engineer adds later (or that had no __init__.py at install
  # time) import as regular packages, not as stale namespace packages.
  pip_in strata -c "$VENVS/strata-constraints.txt" -e "$REPO" \
    --config-settings editable_mode=compat
else
  echo "   $REPO/pyproject.toml not found yet: strata not installed (rerun later)"
fi

"$VENVS/strata/bin/python" - "$VENVS" <<'PY'
import json, subprocess, sys
from pathlib import Path
venvs = Path(sys.argv[1])
def ver(venv, dist):
    code = ("import importlib.metadata as m, sys\n"
            "try: print(m.version(sys.argv[1]))\n"
            "except Exception: print('')")
    out = subprocess.run([str(venvs / venv / "bin" / "python"), "-c", code, dist],
                         capture_output=True, text=True)
    return out.stdout.strip() or None
versions = {
    "dbt": {d: ver("dbt", d) for d in ("dbt-core", "dbt-duckdb", "duckdb")},
    "sqlmesh": {d: ver("sqlmesh", d) for d in ("sqlmesh", "sqlglot", "duckdb")},
    "strata": {d: ver("strata", d) for d in ("strata-models", "sqlglot", "duckdb", "matplotlib")},
    "python": sys.version.split()[0],
}
(venvs / "versions.json").write_text(json.dumps(versions, indent=2) + "\n")
print(json.dumps(versions, indent=2))
PY
