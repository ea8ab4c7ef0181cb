"""Issue 40: a window's (and `take`'s, `distinct by`'s) tie-breakers are added only
when rows can tie. An order that holds a key no two rows share (a `pin unique` of the
model read, or the `group` keys) gets none; an order that holds part of one gets the
rest of that key, not every remaining column; an order with no key in scope keeps
every column as its tie-breakers (docs/LANGUAGE.md, Ties).

Through the real CLI: `compile --show-sql` prints the ORDER BY, and `run` on a real
DuckDB file gives the rows the order defines.
"""

from __future__ import annotations

import re
from pathlib import Path

from enginehelpers import query, strata

MODULE = """\
source raw = file 'raw.csv' {
  id: int
  k: int
  t: int
  v: text
}

model keyed {
  from raw
  pin unique [id]
}

-- the order holds the key: no tie-breaker
model by_key {
  from keyed
  window by k order id desc
  derive n = row_number()
}

-- the order ties on t: the rest of the key breaks the ties, not every column
model by_time {
  from keyed
  window by k order t
  derive n = row_number()
}

-- one row per group: the grouped key is unique
model grouped {
  from raw
  group k
  aggregate s = sum(t)
  window order k
  derive n = row_number()
}

-- a full join adds right rows whose left id is NULL: the key holds no more
model full_joined {
  from keyed
  join_full raw as r on r.id = id
  window order id
  derive n = row_number()
}

-- nothing is known unique about raw: every column breaks ties
model unkeyed {
  from raw
  window by k order t
  derive n = row_number()
}
"""

ROWS = [(1, 1, 5, "a"), (2, 1, 5, "b"), (3, 1, 4, "c"), (4, 2, 7, "d"), (5, 2, 7, "a")]


def window_orders(sql: str) -> dict[str, str]:
    """model -> the ORDER BY of its window, spaces normalised."""
    out = {}
    for model, text in re.findall(r"-- model (\w+) \(full\)\n(.*?)(?=\n-- model |\Z)", sql,
                                  re.DOTALL):
        found = re.search(r"ROW_NUMBER\(\) OVER \((.*?)\) AS n", " ".join(text.split()))
        if found:
            out[model] = found.group(1)
    return out


def project(tmp_path: Path) -> Path:
    (tmp_path / "m.strata").write_text(MODULE)
    (tmp_path / "raw.csv").write_text("id,k,t,v\n" + "".join(
        f"{i},{k},{t},{v}\n" for i, k, t, v in ROWS))
    return tmp_path


def test_tie_breakers_are_added_only_when_rows_can_tie(tmp_path):
    folder = project(tmp_path)
    shown = strata("compile", "m.strata", "--show-sql", cwd=folder, check=True).stdout
    orders = window_orders(shown)
    assert orders.pop("full_joined").strip() == (
        "ORDER BY base.id ASC, base.k ASC, base.t ASC, base.v ASC, r.id ASC, r.k ASC, "
        "r.t ASC, r.v ASC")
    assert orders == {
        "by_key": "PARTITION BY base.k ORDER BY base.id DESC",
        "by_time": "PARTITION BY base.k ORDER BY base.t ASC, base.id ASC",
        "grouped": "ORDER BY aggregated.k ASC",
        "unkeyed": "PARTITION BY base.k ORDER BY base.t ASC, base.id ASC, base.v ASC",
    }

    strata("run", "m.strata", "-o", "wh.duckdb", cwd=folder, check=True)
    wh = folder / "wh.duckdb"
    assert query(wh, "SELECT id, n FROM main.v_by_key ORDER BY id") == \
        [(1, 3), (2, 2), (3, 1), (4, 2), (5, 1)]
    # ties on t (rows 1 and 2, rows 4 and 5) are broken by id, the key
    assert query(wh, "SELECT id, n FROM main.v_by_time ORDER BY id") == \
        [(1, 2), (2, 3), (3, 1), (4, 1), (5, 2)]
    assert query(wh, "SELECT k, s, n FROM main.v_grouped ORDER BY k") == [(1, 14, 1), (2, 14, 2)]
    assert query(wh, "SELECT id, n FROM main.v_unkeyed ORDER BY id") == \
        [(1, 2), (2, 3), (3, 1), (4, 1), (5, 2)]
