"""`strata init DIR`: a new module that runs as it is written.

A first-time user learns the language from a module that works, so the scaffold is
small but complete: a CSV source, a staging model and a model built on it (a join
and an aggregate), a pin on each, and a `test` block that states the expected rows.
`strata run DIR -o w.duckdb` and `strata test DIR` pass on it unchanged
(tests/test_init.py runs both).

The target must be missing or empty: writing into a directory that holds something
could overwrite a user's files, so that is refused (E110) before anything is written.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path

from strata.diagnostics import StrataError, fail
from strata.safefiles import Folder, Place, open_folder
from strata.textsafe import escape_unprintable

CUSTOMERS_CSV = """\
id,name,country
1,Ada,UK
2,Grace,US
3,Linus,FI
"""

ORDERS_CSV = """\
id,customer_id,ordered_on,amount,status
1,1,2024-01-05,120.50,paid
2,1,2024-02-11,35.00,paid
3,2,2024-02-12,80.00,refunded
4,2,2024-03-01,42.25,paid
5,3,2024-03-02,10.00,paid
"""

SOURCES = """\
-- Where the data comes from: CSV files beside this module (paths are relative to
-- this file). A source declares its columns and their types.

source customers = file 'data/customers.csv' {
  id: int
  name: text
  country: text
}

source orders = file 'data/orders.csv' {
  id: int
  customer_id: int
  ordered_on: date
  amount: decimal(12, 2)
  status: text
}
"""

MODELS = """\
-- Models: each reads a source or another model, step by step, and becomes a view
-- in the warehouse. A pin is checked on every run; a test runs on rows you give.

model paid_orders {
  from orders
  filter status = 'paid'
  select id as order_id, customer_id, ordered_on, amount
  pin unique [order_id]
}

model customer_revenue {
  from customers
  join_left (from paid_orders
             | group customer_id
             | aggregate n = count(), total = sum(amount))
            as o on o.customer_id = id
  derive n_orders = coalesce(o.n, 0), revenue = coalesce(o.total, 0)
  select id as customer_id, name, country, n_orders, revenue
  pin unique [customer_id]
  pin not_null [customer_id, name]
}

test revenue_counts_paid_orders_only {
  given orders {
    id, customer_id, ordered_on, amount, status
    1, 1, date '2024-01-01', 10.00, 'paid'
    2, 1, date '2024-01-02', 5.00, 'refunded'
  }
  given customers {
    id, name, country
    1, 'Ada', 'UK'
    2, 'Grace', 'US'
  }
  expect customer_revenue {
    customer_id, name, country, n_orders, revenue
    1, 'Ada', 'UK', 1, 10.00
    2, 'Grace', 'US', 0, 0
  }
}
"""

README = """\
# {name}

A Strata module. Check it, run it into a DuckDB warehouse, run its tests:

    strata check .
    strata run . -o warehouse.duckdb
    strata test .
"""


@dataclass(frozen=True)
class Scaffold:
    """What `init` wrote: the directory and its files, relative to it."""

    directory: str
    files: tuple[str, ...]

    def to_json(self) -> dict:
        return {"status": "ok", "directory": self.directory, "files": list(self.files)}


def scaffold_files(name: str) -> dict[str, str]:
    """Relative path -> text of every file of a new module called `name`."""
    return {
        "data/customers.csv": CUSTOMERS_CSV,
        "data/orders.csv": ORDERS_CSV,
        "sources.strata": SOURCES,
        "models.strata": MODELS,
        "README.md": README.replace("{name}", name),
    }


def init_module(directory: str) -> Scaffold:
    """Write a new module into `directory` (created if missing; refused unless empty).

    The directory is opened once, without following a link, and every file and
    folder is made new inside it (O_EXCL, no link followed): whatever appears there
    between the emptiness check and the writes (a planted `data` link) makes init
    stop, never write through it."""
    files = scaffold_files(Path(directory).resolve().name or "strata module")
    try:
        with open_folder(Place.given(directory), create=True) as target:
            _require_empty(target, directory)
            pause_point("init_checked")
            _write_new(target, files)
    except StrataError:
        raise
    except FileExistsError as err:
        raise fail("E110", f"`{escape_unprintable(directory)}` changed while init wrote "
                   f"into it: `{escape_unprintable(err.filename or '')}` appeared", None,
                   "init writes only into a missing or empty directory; run it again on "
                   "a new one") from None
    except NotADirectoryError:
        raise fail("E110", f"`{escape_unprintable(directory)}` exists and is not a "
                   "directory", None,
                   "give a new directory name, e.g. strata init my_project") from None
    except OSError as err:
        raise fail("E110", f"cannot write the new module into "
                   f"`{escape_unprintable(directory)}`: {err.strerror or err}", None,
                   "choose a directory you can write to") from None
    return Scaffold(str(Path(directory)), tuple(files))


def _write_new(target: Folder, files: dict[str, str]) -> None:
    """Each file made new, each folder made new (one level: `data/`)."""
    made: dict[str, Folder] = {}
    try:
        for rel, text in files.items():
            folder_name, _, name = rel.rpartition("/")
            if folder_name and folder_name not in made:
                try:
                    made[folder_name] = target.folder(folder_name, new=True)
                except FileExistsError:
                    raise FileExistsError(errno.EEXIST, "exists", folder_name) from None
            try:
                (made[folder_name] if folder_name else target).create_text(name, text)
            except FileExistsError:
                raise FileExistsError(errno.EEXIST, "exists", rel) from None
    finally:
        for folder in made.values():
            folder.close()


def pause_point(step: str) -> None:
    """The tests' pause point (strata.engine.environment.crash_point), imported only when
    asked for: init must not pay for the engine's imports."""
    if os.environ.get("STRATA_PAUSE_AT") == step:
        from strata.engine.environment import crash_point

        crash_point(step)


def _require_empty(target: Folder, shown: str) -> None:
    entries = target.names()
    if entries:
        listed = ", ".join(escape_unprintable(e) for e in entries[:3]) + (
            ", ..." if len(entries) > 3 else "")
        raise fail("E110", f"`{escape_unprintable(shown)}` is not empty ({listed})", None,
                   "init writes a new module only into a missing or empty directory, so "
                   "it never overwrites a file; give a new directory name")
