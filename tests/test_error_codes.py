"""Every compile-time error code: a small module that triggers it, the code, and where
it points (line, column and the text under the caret).

Codes raised only while running models (E061–E064, E070–E083, E085) are tested with
the engine. The last tests check that each case also fails cleanly through the CLI
(exit 1, `error[Ennn]`, no traceback) and that one pass reports every independent error.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

import strata.cli.compile_cmds  # noqa: F401  (registers the commands on `cli`)
from strata.cli.main import cli
from strata.compiler import compile_statements
from strata.diagnostics import CATALOGUE, Diagnostic
from strata.semantics.resolve import load_module, load_text

RUN_TIME_CODES = {"E061", "E062", "E063", "E064", "E067", "E068", "E069", *(f"E{n:03d}" for n in range(70, 84)), "E085",
                  "E094", "E096", "E117", "E119", "E120", "E121", "E140", "E160",
                  *(f"E{n}" for n in range(150, 157)),
                  "E212", "E213", "E214"}  # a history's run: tests/test_history_merge.py  # E150-E156: strata diff, tests/test_diff.py  # E160: tests/test_lsp_hostile.py; E140: tests/test_postgres_readers.py; E121: tests/test_engine_run_postgres.py; E119-E120: tests/test_failed_runs.py; E117, drift with on_drift: fail: tests/test_drift.py; E094, a table where a live view goes: tests/test_hostile_env.py;
# E096, rollback to a quarantined snapshot: tests/test_snapshot_repair.py
COMPILE_TIME_CODES = sorted(set(CATALOGUE) - RUN_TIME_CODES)

PRELUDE = """\
source orders {
  id: int
  customer_id: int
  amount: decimal(12, 2)
  status: text
  tags: list<text>
  updated_at: timestamp
}
source customers {
  id: int
  name: text
  region: text
}
"""
PRELUDE_LINES = PRELUDE.count("\n")


@dataclass(frozen=True)
class Case:
    code: str
    body: str  # the module after PRELUDE
    line: int  # where the diagnostic points, counted in `body` (1 = its first line)
    column: int
    marked: str  # the text under the caret (its first line)

    @property
    def text(self) -> str:
        return PRELUDE + self.body


_UPSERT = ("model m {\n  from orders\n  select id, updated_at\n  incremental\n"
           "  merge_strategy: upsert\n  merge_keys: [id]\n  cdc_column: updated_at\n")

# One case per code a module can trigger. A few codes have more than one way in;
# the first case of a code is its catalogue example.
CASES = [
    Case("E001", "model m {\n  from orders\n  filter\n}\n", 4, 1, "}"),
    # the lexer cuts the keyword `in` off `int` here; the caret covers the whole word
    Case("E001", "source s { id int }\n", 1, 15, "int"),
    Case("E001", "model m {\n  from orders\n  derive `` = 1\n}\n", 3, 10, "``"),
    Case("E003", "model m {\n  from orders\n  filter status = 'x\n}\n", 3, 19, "'"),
    Case("E010", "model m { from ordrs }\n", 1, 11, "from ordrs"),
    Case("E011", "model m {\n  from orders\n  filter amont > 0\n}\n", 3, 10, "amont"),
    Case("E012", "source suppliers {\n  id: int\n  name: text\n}\nmodel m {\n  from orders\n"
         "  join customers on customer_id = customers.id\n"
         "  join suppliers on customer_id = suppliers.id\n  select id, name\n}\n",
         9, 14, "name"),
    Case("E013", "model a { from b }\nmodel b { from a }\n", 1, 7, "a"),
    Case("E014", "model m { from orders }\nmodel m { from customers }\n", 2, 7, "m"),
    Case("E015", "model m {\n  from orders\n  derive id = 1\n}\n", 3, 10, "id"),
    Case("E016", "model m {\n  from orders\n  derive x = uper(status)\n}\n", 3, 14,
         "uper(status)"),
    Case("E017", "model m {\n  from orders\n  filter c.id = 1\n}\n", 3, 10, "c.id"),
    Case("E018", "model m {\n  from orders\n  incremental\n  merge_strategy: append\n"
         "  cdc_column: updated_at\n  cdc_column: updated_at\n}\n", 6, 3,
         "cdc_column: updated_at"),
    Case("E019", "model m {\n  from orders\n  materialize: table\n}\n", 3, 3,
         "materialize: table"),
    Case("E020", "source s { id: integer }\n", 1, 16, "integer"),
    Case("E021", "model m {\n  from orders\n  incremental\n  compact_layers: many\n}\n", 4, 19,
         "many"),
    Case("E030", "model m {\n  from orders\n  filter status + 1 > 0\n}\n", 3, 10, "status + 1"),
    Case("E031", "model m {\n  from orders\n  derive x = upper(1, 2)\n}\n", 3, 14,
         "upper(1, 2)"),
    Case("E032", "model m {\n  from orders\n  derive t = now()\n}\n", 3, 14, "now()"),
    Case("E033", "model m {\n  from orders\n  derive s = sum(amount)\n}\n", 3, 14, "sum(amount)"),
    Case("E034", "model m {\n  from orders\n  filter amount\n}\n", 3, 10, "amount"),
    Case("E035", "model m {\n  from orders\n  derive x = cast(tags as int)\n}\n", 3, 14,
         "cast(tags as int)"),
    Case("E036", "model m {\n  from orders\n  filter updated_at > date '2024-13-45'\n}\n", 3, 23,
         "date '2024-13-45'"),
    # 1e999 is inf to Python; rendered it would read as a column called `inf`
    Case("E036", "model m {\n  from orders\n  derive big = 1e999\n}\n", 3, 16, "1e999"),
    Case("E037", "model m {\n  from orders\n  aggregate n = amount\n}\n", 3, 17, "amount"),
    Case("E038", "model m {\n  from orders\n  expand status as s\n}\n", 3, 10, "status"),
    Case("E039", "model m {\n  from orders\n  derive x = case when amount > 0 then 1 else 'a' end"
         "\n}\n", 3, 47, "'a'"),
    Case("E050", "model m {\n  select id\n}\n", 2, 3, "select id"),
    Case("E050", "model m {\n  from orders\n  from customers\n}\n", 3, 3, "from customers"),
    Case("E051", "model m {\n  from orders\n  join customers on customer_id = customers.id\n"
         "  let x = 1\n}\n", 4, 3, "let x = 1"),
    Case("E052", "model m {\n  from orders\n  union customers\n}\n", 3, 3, "union customers"),
    Case("E053", "model m {\n  from orders\n  group status\n}\n", 3, 3, "group status"),
    Case("E054", "model m {\n  from orders\n  select amount * 2\n}\n", 3, 10, "amount * 2"),
    Case("E055", "model m { from m }\n", 1, 11, "from m"),
    Case("E060", "model m {\n  from orders\n  select id\n  pin columns { id: text }\n}\n", 4, 3,
         "pin columns { id: text }"),
    Case("E065", "model m {\n  from orders\n  pin rows between 10 and 1\n}\n", 3, 3,
         "pin rows between 10 and 1"),
    Case("E066", "model m { from orders }\ntest t {\n  given orders {\n    id, status\n    1\n"
         "  }\n}\n", 5, 5, "1"),
    Case("E086", "model m {\n  from orders\n  incremental\n  merge_strategy: merge\n}\n", 4, 19,
         "merge"),
    Case("E087", "model m {\n  from orders\n  group status\n  aggregate n = count(), "
         "last = max(updated_at)\n  incremental\n  merge_strategy: append\n"
         "  cdc_column: last\n}\n", 6, 19, "append"),
    Case("E088", "model m {\n  from orders\n  incremental\n  merge_strategy: append\n"
         "  cdc_column: nope\n}\n", 5, 15, "nope"),
    Case("E089", "model m {\n  from orders\n  incremental\n  merge_strategy: upsert\n"
         "  cdc_column: updated_at\n}\n", 4, 19, "upsert"),
    # issue 16: the language steps and SQL habits
    Case("E097", "model m {\n  from orders\n  derive n = row_number()\n}\n", 3, 14, "row_number()"),
    Case("E098",
         "model m {\n  from orders\n  window by customer_id\n  select id\n}\n",
         3, 3, "window by customer_id"),
    Case("E099",
         "model m {\n  from orders\n  window by customer_id\n  derive n = row_number()\n}\n",
         4, 14, "row_number()"),
    Case("E100", "model m {\n  from orders\n  take 10\n}\n", 3, 3, "take 10"),
    Case("E101", "model m {\n  from orders\n  distinct by id\n}\n", 3, 3, "distinct by id"),
    Case("E102",
         "model m {\n  from orders\n  window by customer_id\n  derive n = count_distinct(status)\n"
         "}\n",
         4, 14, "count_distinct(status)"),
    Case("E103",
         "model m {\n  from orders\n"
         "  window order id, amount range between 1 preceding and current row\n"
         "  derive s = sum(amount)\n}\n",
         3, 27, "range between 1 preceding and current row"),
    Case("E104",
         "model m {\n  from customers\n"
         "  join (from orders | group customer_id | aggregate n = count()) on customer_id = id\n"
         "}\n",
         3, 9, "from orders | group customer_id | aggregate n = count()"),
    Case("E105",
         "model m {\n  from orders\n  window order id rows between current row and 1 preceding\n"
         "  derive s = sum(amount)\n}\n",
         3, 19, "rows between current row and 1 preceding"),
    Case("E106",
         "model m {\n  from orders\n  left join customers on customer_id = customers.id\n}\n",
         3, 3, "left join"),
    Case("E107",
         "model m {\n  from orders\n  derive x = amount::numeric(16,2)\n}\n",
         3, 20, "::numeric(16,2)"),
    Case("E108",
         "model m {\n  from orders\n  derive n = row_number() over (partition by customer_id)\n}\n",
         3, 27, "over ("),
    Case("E109",
         "model m {\n  from orders\n  group status\n  aggregate n = count(distinct customer_id)\n"
         "}\n",
         4, 17, "count(distinct"),
    Case("E111",
         "model m {\n  from orders\n  window order amount range between 1 preceding and "
         "current row\n  derive f = first_value(status)\n}\n",
         4, 14, "first_value(status)"),
    Case("E112",
         "model m {\n  from orders\n  join_cross customers on customers.id = customer_id\n}\n",
         3, 3, "join_cross customers on"),
    Case("E113",
         "model m {\n  from orders\n  window order status range between 1 preceding and "
         "current row\n  derive n = count()\n}\n",
         3, 23, "range between 1 preceding and current row"),
    # issue 17: drift, lookback and deletes of incremental models
    Case("E114", f"{_UPSERT}  on_drift: retry\n}}\n", 8, 13, "retry"),
    Case("E115", f"{_UPSERT}  lookback: 3\n}}\n", 8, 13, "3"),
    Case("E116", f"{_UPSERT}  delete_when: updated_at\n}}\n", 8, 16, "updated_at"),
    Case("E118", "model m {\n  from orders\n  select id, updated_at\n  incremental\n"
         "  merge_strategy: append\n  cdc_column: updated_at\n  lookback: 3 days\n}\n",
         7, 3, "lookback: 3 days"),
    # issue 40: `with` relations and functions of the module
    Case("E170", "model m {\n  with a = (from orders)\n  with a = (from customers)\n"
         "  from a\n}\n", 3, 8, "a"),
    Case("E171", "model m {\n  with a = (from orders)\n  from orders\n}\n", 2, 8, "a"),
    Case("E172", "model m {\n  with a = (from a)\n  from a\n}\n", 2, 13, "from a"),
    Case("E173", "model m {\n  from orders\n  with a = (from orders)\n"
         "  join a as x on x.id = id\n}\n", 3, 3, "with a = (from orders)"),
    Case("E174", "fn sum(x: int) -> int = x\n", 1, 4, "sum"),
    Case("E175", "fn f(x: int) -> int = f(x - 1)\n", 1, 23, "f(x - 1)"),
    Case("E176", "fn f(x: int) -> int = 'a'\n", 1, 23, "'a'"),
    Case("E177", "fn f(x: int, x: text) -> int = 1\n", 1, 14, "x"),
    Case("E205", "model m {\n  from orders\n  description: orders\n}\n", 3, 3,
         "description: orders"),
    Case("E206", "model m {\n  from orders\n  column nope { description: 'x' }\n}\n", 3, 10,
         "nope"),
    # issue 40, round 2
    Case("E180", "model m {\n  from range(1, id) as n\n}\n", 2, 17, "id"),
    Case("E181", "model m {\n  from range(1, 10, 0) as n\n}\n", 2, 21, "0"),
    Case("E181", "model m {\n  from range(date '2024-01-01', date '2024-02-01', 1) as d\n}\n",
         2, 52, "1"),
    Case("E182", "model m {\n  from range(10, 1) as n\n}\n", 2, 8, "range(10, 1)"),
    Case("E183", "model m {\n  from range(0, 100000000) as n\n}\n", 2, 8,
         "range(0, 100000000)"),
    Case("E184", "model m {\n  from orders\n  derive x = interval '1 day'\n}\n", 3, 14,
         "interval '1 day'"),
    Case("E184", "model m {\n  from range(1, 2, interval 'two days') as n\n}\n", 2, 20,
         "interval 'two days'"),
    Case("E185", "model m {\n  from generate_series(1, 3) as n\n}\n", 2, 8,
         "generate_series(1, 3)"),
    Case("E186", "model m {\n  from orders\n  group status\n  aggregate g = grouping(status)\n}\n",
         4, 17, "grouping(status)"),
    Case("E187", "model m {\n  from orders\n  group sets(status)\n  aggregate n = count()\n}\n",
         3, 9, "sets"),
    Case("E188", "model m {\n  from orders\n  select id, customer_id\n"
         "  union (from m | select customer_id as id, id as customer_id)\n}\n",
         4, 10, "from m"),
    Case("E188", "model m {\n  with recursive t as (select 1)\n}\n", 2, 3, "with recursive"),
    Case("E210", "model m {\n  from orders\n  incremental\n  merge_strategy: history\n"
         "  merge_keys: [id]\n  cdc_column: updated_at\n}\n", 6, 3, "cdc_column: updated_at"),
    Case("E211", "model m {\n  from orders\n  select id, updated_at as valid_to\n  incremental\n"
         "  merge_strategy: history\n  merge_keys: [id]\n}\n", 5, 19, "history"),
    Case("E189", "model m {\n  from orders\n  window by customer_id order id\n"
         "  derive cheapest = arg_min(id, amount)\n}\n", 4, 21, "arg_min(id, amount)"),
]

# Codes that come from the file system or a command option, not from module text;
# each has its own test below (E093, build's file system: tests/test_hostile_output.py;
# E110, init's directory: tests/test_init.py).
SPECIAL = {"E002", "E004", "E005", "E084", "E090", "E091", "E092", "E093", "E110"}
SPECIAL |= {"E130"}  # a planted link where strata writes: tests/test_planted_links.py
SPECIAL |= {f"E{n}" for n in range(190, 195)}  # --select/--exclude: tests/test_selection.py
SPECIAL |= {f"E{n}" for n in range(195, 199)}  # show and sql: tests/test_show_command.py
SPECIAL |= {f"E{n}" for n in range(199, 205)}  # imports (two modules): tests/test_imports.py
SPECIAL |= {f"E{n}" for n in range(220, 223)}  # strata fmt: tests/test_fmt.py


def marked(text: str, diag: Diagnostic) -> str:
    """The text under a diagnostic's caret (on its first line)."""
    span = diag.span
    line = text.splitlines()[span.line - 1]
    end = span.end_column if span.end_line == span.line else len(line) + 1
    return line[span.column - 1:end - 1]


def where(case: Case, diag: Diagnostic) -> tuple[str, int, int, str]:
    return (diag.code, diag.span.line - PRELUDE_LINES, diag.span.column,
            marked(case.text, diag))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.code)
def test_code_and_span(case: Case) -> None:
    module = load_text(case.text, "m.strata")
    assert [d.code for d in module.diagnostics] == [case.code], module.diagnostics
    assert where(case, module.diagnostics[0]) == (case.code, case.line, case.column, case.marked)


def test_every_compile_time_code_has_a_case() -> None:
    covered = {c.code for c in CASES} | SPECIAL
    assert covered == set(COMPILE_TIME_CODES)


# ---------------------------------------------------------------- file system and options
def test_E002_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "bad.strata"
    path.write_bytes(b"model m {\n  from orders \xff\xfe\n}\n")
    module = load_module(path)
    [diag] = module.diagnostics
    assert (diag.code, diag.span.line, diag.span.column) == ("E002", 2, 15)


def test_E002_a_nul_byte(tmp_path: Path) -> None:
    path = tmp_path / "bad.strata"
    path.write_bytes(b"source s { id: int }\nmodel m { from s\x00 }\n")
    [diag] = load_module(path).diagnostics
    assert (diag.code, diag.span.line, diag.span.column) == ("E002", 2, 17)


def test_E004_an_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.strata"
    path.write_text("-- nothing here yet\n\n")
    [diag] = load_module(path).diagnostics
    assert (diag.code, diag.span.line, diag.span.column) == ("E004", 1, 1)


def test_E002_and_E004_from_text_as_from_files() -> None:
    """load_text used to let a NUL through (to crash on a file source's path) and
    to accept an empty module."""
    [diag] = load_text("source s = file 'a\x00b' { id: int }\n").diagnostics
    assert (diag.code, diag.span.line, diag.span.column) == ("E002", 1, 19)
    for text in ("", "-- comments only\n"):
        [diag] = load_text(text).diagnostics
        assert diag.code == "E004"


def test_a_syntax_error_in_one_file_adds_no_false_unknown_names(tmp_path: Path) -> None:
    (tmp_path / "sources.strata").write_text("source orders { id: int\n")  # no `}`
    (tmp_path / "models.strata").write_text("model m { from orders }\n")
    assert [d.code for d in load_module(tmp_path).diagnostics] == ["E001"]


def test_E004_a_directory_without_modules(tmp_path: Path) -> None:
    [diag] = load_module(tmp_path).diagnostics
    assert diag.code == "E004" and diag.span is None


def test_E005_a_missing_path(tmp_path: Path) -> None:
    [diag] = load_module(tmp_path / "missing.strata").diagnostics
    assert diag.code == "E005" and diag.span is None


INCREMENTAL = PRELUDE + """\
model m {
  from orders
  incremental
  merge_strategy: append
  cdc_column: updated_at
}
"""


def _compile_error(text: str, **kwargs) -> Diagnostic:
    from strata.diagnostics import StrataError

    module = load_text(text, "m.strata")
    assert module.ok, module.diagnostics
    with pytest.raises(StrataError) as info:
        compile_statements(module, **kwargs)
    [diag] = info.value.diagnostics
    return diag


def test_E084_a_watermark_that_does_not_fit_the_cdc_column() -> None:
    diag = _compile_error(INCREMENTAL, watermark="not-a-timestamp")
    assert diag.code == "E084" and diag.span is None
    assert "not-a-timestamp" in diag.message


@pytest.mark.parametrize("value", ["nan", "inf", "-Infinity"])
@pytest.mark.parametrize("column", ["score", "amount"])
def test_E084_a_watermark_that_is_not_a_finite_number(value: str, column: str) -> None:
    """nan/inf used to pass (Decimal('NaN') then crashed lit(); float nan rendered as
    the bare word `nan`)."""
    text = PRELUDE + f"""\
source scores {{ id: int, score: double, amount: decimal(12, 2) }}
model m {{
  from scores
  incremental
  merge_strategy: append
  cdc_column: {column}
}}
"""
    diag = _compile_error(text, watermark=value)
    assert diag.code == "E084" and value in diag.message


def test_E090_an_unknown_dialect() -> None:
    diag = _compile_error(INCREMENTAL, dialect_name="oracle")
    assert diag.code == "E090" and diag.span is None


def test_E091_a_construct_the_dialect_cannot_express() -> None:
    """SQLGlot only logged a warning and rendered it anyway; now it is E091."""
    from sqlglot import exp, parse_one

    import dialects
    from strata.compiler import render
    from strata.diagnostics import StrataError

    except_all = exp.Except(this=parse_one("SELECT 1 AS a"), expression=parse_one("SELECT 2 AS a"),
                            distinct=False)
    assert "EXCEPT ALL" in render(except_all, dialects.get("duckdb"))
    with pytest.raises(StrataError) as info:
        render(except_all, dialects.get("bigquery"))
    [diag] = info.value.diagnostics
    assert diag.code == "E091" and "EXCEPT ALL" in diag.message


class TestTooDeep:
    """E092: expressions deeper than Python's recursion limit raised RecursionError
    from Lark's transformer, the typer or SQLGlot's generator."""

    def test_a_long_chain_is_refused_while_parsing(self) -> None:
        body = "model m {\n  from orders\n  filter " + " and ".join(["id > 1"] * 20000) + "\n}\n"
        [diag] = load_text(PRELUDE + body, "m.strata").diagnostics
        assert diag.code == "E092"
        assert (diag.span.line - PRELUDE_LINES, diag.span.column) == (3, 3)  # the filter

    def test_deep_but_parsable_is_refused_when_rendering(self) -> None:
        from strata.diagnostics import StrataError

        body = "model m {\n  from orders\n  filter " + "not " * 1200 + "id > 1\n}\n"
        module = load_text(PRELUDE + body, "m.strata")
        if module.ok:
            with pytest.raises(StrataError) as info:
                compile_statements(module)
            [diag] = info.value.diagnostics
        else:
            [diag] = module.diagnostics
        assert diag.code == "E092"

    def test_a_few_hundred_levels_still_compile(self) -> None:
        body = "model m {\n  from orders\n  filter id > " + " + ".join(["1"] * 200) + "\n}\n"
        module = load_text(PRELUDE + body, "m.strata")
        assert module.ok
        assert "1 + 1 + 1" in compile_statements(module)[0].sql


# ---------------------------------------------------------------- the dependency graph
class TestCycles:
    """E013 names a real cycle, once per cycle, at its first declared model."""

    def cycles(self, body: str) -> list[tuple[str, int]]:
        module = load_text(PRELUDE + body, "m.strata")
        return [(d.message, d.span.line - PRELUDE_LINES) for d in module.diagnostics]

    def test_a_model_that_also_reads_a_healthy_model(self) -> None:
        # `a` reads `c` first: the report used to follow it and say "a -> c -> a"
        body = ("model a {\n  from c\n  join b on id = b.id\n}\nmodel b { from a }\n"
                "model c { from orders }\n")
        assert self.cycles(body) == [("dependency cycle: a -> b -> a", 1)]

    def test_a_reader_of_a_cycle_is_not_reported_again(self) -> None:
        body = "model a { from b }\nmodel b { from a }\nmodel c { from a }\n"
        assert self.cycles(body) == [("dependency cycle: a -> b -> a", 1)]

    def test_a_reader_declared_first(self) -> None:
        body = "model c { from a }\nmodel a { from b }\nmodel b { from a }\n"
        assert self.cycles(body) == [("dependency cycle: a -> b -> a", 2)]

    def test_two_separate_cycles_and_a_longer_one(self) -> None:
        body = ("model a { from b }\nmodel b { from c }\nmodel c {\n  from orders\n"
                "  join a on id = a.id\n}\nmodel x { from y }\nmodel y { from x }\n")
        assert self.cycles(body) == [("dependency cycle: a -> b -> c -> a", 1),
                                     ("dependency cycle: x -> y -> x", 7)]


# ---------------------------------------------------------------- the CLI
def _cli(args: list[str]):
    return CliRunner().invoke(cli, args, catch_exceptions=False)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.code)
def test_cli_check_exits_1_with_the_code(case: Case, tmp_path: Path) -> None:
    path = tmp_path / "m.strata"
    path.write_text(case.text)
    result = _cli(["check", str(path)])
    assert result.exit_code == 1
    assert f"error[{case.code}]" in result.stderr
    assert "Traceback" not in result.output
    result = _cli(["check", str(path), "--json"])
    assert result.exit_code == 1
    assert f'"code": "{case.code}"' in result.stdout


def test_cli_codes_from_files_and_options(tmp_path: Path) -> None:
    bad = tmp_path / "bad.strata"
    bad.write_bytes(b"\xff\xfe")
    good = tmp_path / "m.strata"
    good.write_text(INCREMENTAL)
    runs = {
        "E002": ["check", str(bad)],
        "E004": ["check", str(tmp_path / "nothing")],
        "E005": ["check", str(tmp_path / "missing.strata")],
        "E084": ["compile", str(good), "--show-sql", "--watermark", "yesterday"],
        "E090": ["compile", str(good), "--dialect", "oracle"],
    }
    (tmp_path / "nothing").mkdir()
    for code, args in runs.items():
        result = _cli(args)
        assert result.exit_code == 1, (code, result.output)
        assert f"error[{code}]" in result.stderr, (code, result.output)


def test_E001_hints_what_the_parser_could_take() -> None:
    """Exact from the parser state, not LALR's merged look-aheads (which listed `)`,
    `:`... after `from orders`); `(` is there since a relation may be a call,
    `range(a, b)`, and `.` since it may be an imported module's, `core.orders`."""
    [diag] = load_text("model m { from orders filter }\n").diagnostics
    assert diag.hint == "expected `(`, `.`, `as`, `}`, a new line"
    [diag] = load_text("model m {\n  from orders\n  filter\n}\n").diagnostics
    assert diag.hint == "expected an expression"


def test_E001_a_quoted_source_target_says_how_to_name_a_file_or_a_table() -> None:
    [diag] = load_text("source s = table 'events' {\n  id: int\n}\n").diagnostics
    assert diag.message == "expected `file` before the path, found `table`"
    assert diag.hint == ("a file: `source name = file 'path.csv' { ... }`; a table is named "
                         "without quotes: `source name = schema.table { ... }`")


@pytest.mark.parametrize("row, message", [
    ("1.5, 1.00", "`id` is int, the row gives 1.5: not a whole number"),
    ("1, 1.255", ("`amt` is decimal(12, 2), the row gives 1.255: more than 2 digits after "
                  "the point")),
    ("2.0, 1.2", None), ("1, 1.25", None)])
def test_E066_a_given_value_the_column_would_round_is_refused(row, message) -> None:
    """A fixture that says 1.5 for an int column tests the model on 2."""
    text = ("source o {\n  id: int\n  amt: decimal(12, 2)\n}\n"
            "model m {\n  from o\n  select id, amt\n}\n"
            f"test t {{\n  given o {{\n    id, amt\n    {row}\n  }}\n"
            "  expect m {\n    id, amt\n    1, 1.00\n  }\n}\n")
    diags = load_text(text).diagnostics
    if message is None:
        assert diags == []
    else:
        [diag] = diags
        assert (diag.code, diag.message) == ("E066", f"test `t`: {message}")


CASE_SOURCE = "source src {\n  id: int\n  a: int\n}\n"


@pytest.mark.parametrize("body, code, message", [
    ("let ID = id + 100\n  select ID as big, id as small", "E015",
     "column `ID` clashes with `id`"),
    ("derive ID = id + 1\n  select id, ID", "E015", "column `ID` clashes with `id`"),
    ("select id, a as ID", "E015", "column `ID` clashes with `id`"),
    ("group id\n  aggregate n = count(), N = count()", "E015", "column `N` clashes with `n`"),
    ("select id\n  let a = 0", "E051", "`let` after `select`"),
])
def test_names_differing_only_in_case_and_a_let_after_select_are_refused(body, code, message):
    """DuckDB compares names without case: `ID` beside `id` read `id` (wrong rows, exit
    0). A `let` after `select` was computed before it, over the source's `a`."""
    text = CASE_SOURCE + f"model m {{\n  from src\n  {body}\n}}\n"
    [diag] = load_text(text).diagnostics
    assert (diag.code, diag.message) == (code, message)


def test_models_differing_only_in_case_are_E014() -> None:
    text = CASE_SOURCE + "model totals {\n  from src\n}\nmodel Totals {\n  from src\n}\n"
    [diag] = load_text(text).diagnostics
    assert diag.code == "E014"
    assert diag.message == ("`Totals` clashes with `totals`: SQL engines compare table names "
                            "without case")


@pytest.mark.parametrize("literal, ok", [("9223372036854775807", True),
                                         ("9223372036854775808", False),
                                         ("99999999999999999999999999999999999999999", False),
                                         ("1e20", True)])
def test_E036_an_integer_past_64_bits(literal, ok) -> None:
    """It became HUGEINT (or DuckDB's BIGNUM) in the table while typed `int`."""
    text = CASE_SOURCE + f"model m {{\n  from src\n  derive x = {literal}\n}}\n"
    diags = load_text(text).diagnostics
    assert [d.code for d in diags] == ([] if ok else ["E036"])


@pytest.mark.parametrize("unit, message, hint", [
    ("'weeks'", "`date_diff`: unknown unit 'weeks'", "did you mean `week`?"),
    ("'fortnight'", "`date_diff`: unknown unit 'fortnight'",
     "units: 'year', 'quarter', 'month', 'week', 'day', 'hour', 'minute', 'second'"),
    ("id", "`date_diff` needs a unit string first, such as 'day' or 'month'", None)])
def test_E031_an_unknown_date_unit_is_named_as_such(unit, message, hint) -> None:
    text = CASE_SOURCE + f"model m {{\n  from src\n  derive w = date_diff({unit}, id, id)\n}}\n"
    [diag] = load_text(text).diagnostics
    assert (diag.code, diag.message, diag.hint) == ("E031", message, hint)


def test_a_real_process_prints_no_traceback(tmp_path: Path) -> None:
    path = tmp_path / "m.strata"
    path.write_text(CASES[0].text)
    strata = Path(sys.executable).with_name("strata")
    proc = subprocess.run([str(strata), "check", str(path)], capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 1
    assert "error[E001]" in proc.stderr and "Traceback" not in proc.stderr


def test_a_location_on_line_100_is_printed_as_it_is(tmp_path: Path) -> None:
    """`m.strata:100:11` once came out as `m.strata💯11` (rich's `:100:` emoji code)."""
    path = tmp_path / "m.strata"
    path.write_text("-- pad\n" * 99 + "model m { from nope }\n")
    strata = Path(sys.executable).with_name("strata")
    proc = subprocess.run([str(strata), "check", str(path)], capture_output=True, text=True,
                          check=False, env={**os.environ, "TTY_COMPATIBLE": "1"})
    assert proc.returncode == 1
    assert "m.strata:100:11" in proc.stderr


# ---------------------------------------------------------------- one pass, every error
def test_three_independent_errors_give_three_diagnostics() -> None:
    body = """\
model a {
  from orders
  filter amont > 0
}
model b {
  from customers
  derive x = uper(name)
}
model c {
  from orders
  incremental
  merge_strategy: merge
}
"""
    module = load_text(PRELUDE + body, "m.strata")
    assert [(d.code, d.span.line - PRELUDE_LINES) for d in module.diagnostics] == [
        ("E011", 3), ("E016", 7), ("E086", 12)]


def test_three_syntax_errors_in_three_declarations_give_three_diagnostics() -> None:
    """LALR stops at the first error; the declarations after it are parsed again one by
    one, so each broken declaration is reported (a healthy one adds nothing)."""
    text = """\
source orders {
  id: int
  amount int
}
model a {
  from orders
  filter amount >
}
model fine {
  from orders
}
test t {
  given orders {
    id, amount
    1, 2,
  }
}
model c {
  from orders
  derive x = date '2024-99-01'
}
"""
    module = load_text(text, "m.strata")
    assert [(d.code, d.span.line, d.span.column) for d in module.diagnostics] == [
        ("E001", 3, 10), ("E001", 8, 1), ("E001", 16, 3), ("E036", 20, 14)]


def test_bad_literals_in_two_declarations_give_two_diagnostics() -> None:
    body = ("model a {\n  from orders\n  derive x = 1e999\n}\n"
            "model b {\n  from orders\n  filter updated_at > timestamp 'soon'\n}\n")
    module = load_text(PRELUDE + body, "m.strata")
    assert [(d.code, d.span.line - PRELUDE_LINES) for d in module.diagnostics] == [
        ("E036", 3), ("E036", 7)]


def test_errors_inside_one_model_are_all_reported() -> None:
    body = "model m {\n  from orders\n  filter x > 1\n  derive y = nope(1)\n  select zzz\n}\n"
    module = load_text(PRELUDE + body, "m.strata")
    assert [d.code for d in module.diagnostics] == ["E011", "E016", "E011"]


def test_a_reader_of_a_broken_model_stays_quiet() -> None:
    body = "model a {\n  from orders\n  filter amont > 0\n}\nmodel b { from a }\n"
    module = load_text(PRELUDE + body, "m.strata")
    assert [d.code for d in module.diagnostics] == ["E011"]
