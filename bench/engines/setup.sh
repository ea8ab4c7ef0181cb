#!/usr/bin/env bash
# Creates the engine benchmark's virtual environments under bench/engines/.venvs/
# (ignored by git) and records the installed versions in .venvs/versions.json.
#
#   dbt      dbt-core<1.12 + dbt-postgres (+ dbt-spark[session] with --spark)
#            (dbt-core 1.12's build downloads from an unreachable host, 1.11.x works;
#            the same pin as bench/peers/setup_peers.sh)
#   sqlmesh  sqlmesh[postgres] (+ pyspark<4 with --spark: SQLMesh's Spark engine)
#   (neither with --strata-only: what `run.py --tools strata,strata-sc,raw` needs)
#
# Strata itself runs from the repository's own .venv (the CLI under test, with
# psycopg 3 and pyspark 4: `pip install -e .[test]`); when that does not exist
# a third venv `strata` is made with the repository installed editable.
#
# Usage: bash bench/engines/setup.sh [--spark] [--force] [--strata-only]   (idempotent)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
VENVS="$HERE/.venvs"
PY="${PYTHON:-python3}"
FORCE=0
SPARK=0
PEERS=1
for arg in "$@"; do
  case "$arg" in
    --force) FORCE=1 ;;
    --spark) SPARK=1 ;;
    --strata-only) PEERS=0 ;;
    *) echo "unknown argument $arg" >&2; exit 2 ;;
  esac
done
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

if [[ $PEERS == 1 ]]; then
  echo "== dbt venv"
  mkvenv dbt
  pip_in dbt "dbt-core<1.12" "dbt-postgres"
  if [[ $SPARK == 1 ]]; then pip_in dbt "dbt-spark[session]"; fi

  echo "== sqlmesh venv"
  mkvenv sqlmesh
  pip_in sqlmesh "sqlmesh[postgres]"
  if [[ $SPARK == 1 ]]; then pip_in sqlmesh "pyspark>=3.5,<4"; fi
fi

if [[ -x "$REPO/.venv/bin/strata" ]]; then
  ln -sfn "$REPO/.venv" "$VENVS/strata"
  echo "== strata: the repository's .venv"
else
  echo "== strata venv (the repository, editable)"
  mkvenv strata
  pip_in strata -e "$REPO[test]" --config-settings editable_mode=compat
fi

"$VENVS/strata/bin/python" - "$VENVS" <<'PY'
import json, subprocess, sys
from pathlib import Path
venvs = Path(sys.argv[1])
def ver(venv, dist):
    if not (venvs / venv / "bin" / "python").exists():  # --strata-only
        return None
    code = ("import importlib.metadata as m, sys\n"
            "try: print(m.version(sys.argv[1]))\n"
            "except Exception: print('')")
    out = subprocess.run([str(venvs / venv / "bin" / "python"), "-c", code, dist],
                         capture_output=True, text=True)
    return out.stdout.strip() or None
versions = {
    "dbt": {d: ver("dbt", d) for d in ("dbt-core", "dbt-postgres", "dbt-spark", "psycopg2-binary",
                                       "pyspark")},
    "sqlmesh": {d: ver("sqlmesh", d) for d in ("sqlmesh", "sqlglot", "psycopg2",
                                               "pyspark")},
    "strata": {d: ver("strata", d) for d in ("strata-models", "sqlglot", "psycopg", "pyspark",
                                             "duckdb")},
    "python": sys.version.split()[0],
}
(venvs / "versions.json").write_text(json.dumps(versions, indent=2) + "\n")
print(json.dumps(versions, indent=2))
PY
