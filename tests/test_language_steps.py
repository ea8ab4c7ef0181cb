"""The language steps of issue 16: names that start with a keyword, sort/take,
distinct, the new joins, windows, sub-pipelines and `select *` forms, and the
diagnostics for their misuse and for dbt habits.

Each test compiles real modules and runs the SQL on a real DuckDB; no mocks."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strata.semantics.resolve import load_text
from strata.syntax import ast
from strata.syntax.parser import GRAMMAR_PATH, parse_text

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _keywords() -> list[str]:
    """Every keyword of the grammar: each quoted word in grammar.lark, so a keyword
    added later is covered without a change here."""
    words = set(re.findall(r'"([A-Za-z_][A-Za-z0-9_]*)"', GRAMMAR_PATH.read_text()))
    return sorted(w for w in words if NAME.fullmatch(w))


KEYWORDS = _keywords()
TAILS = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_",
                min_size=1, max_size=6)


@st.composite
def keyword_prefixed(draw) -> str:
    return draw(st.sampled_from(KEYWORDS)) + draw(TAILS)


# Every position where the grammar takes a name, each holding `{w}`.
NAME_POSITIONS = """\
source {w} = {w}.{w} {{ {w}: int, k: list<{w}> }}
model {w} {{
  from {w} as {w}
  let {w} = {w} + {w}.{w}
  filter {w} and not {w} or {w} is null and {w} in ({w}) and {w} between {w} and {w}
  join {w} as {w} on {w} = {w}.{w}
  join_left many {w} on {w} like {w}
  expand {w} as {w}
  group {w}, {w}.{w}
  aggregate {w} = {w}({w}, {w})
  derive {w} = case when {w} then {w} else {w} end, {w} = cast({w} as {w})
  derive {w} = extract({w} from {w}), {w} = -{w} * {w} || {w}
  select {w}, {w} as {w}
  union {w}
  pin unique [{w}, {w}]
  {w}: {w}
}}
test {w} {{
  given {w} {{
    {w}, {w}
    1, 2
  }}
}}
"""


def _names_in(tree: object) -> list[str]:
    """Every name the syntax tree holds, in any field that holds names."""
    found: list[str] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (list, tuple)):
            stack.extend(node)
        elif isinstance(node, str):
            found.append(str(node))
        elif hasattr(node, "__dataclass_fields__"):
            for name in node.__dataclass_fields__:
                if name in ("span", "name_span", "value_span", "row_spans", "path", "kind", "op"):
                    continue
                value = getattr(node, name)
                if isinstance(value, ast.Literal):
                    continue
                stack.append(value)
    return found


@settings(max_examples=150, deadline=None)
@given(keyword_prefixed())
def test_a_name_that_starts_with_a_keyword_is_that_name_everywhere(word):
    """Issue 16: `a andy` compiled to `a AND y`. A name that starts with a keyword
    parses as that whole name in every position where a name may stand."""
    tree = parse_text(NAME_POSITIONS.format(w=word), "k.strata")
    names = [n for n in _names_in(tree.declarations) if n not in ("int", "list", "k")]
    # names the grammar lower-cases (types, functions, extract parts) compared so
    assert names and all(n.lower() == word.lower() for n in names), names
    source = tree.declarations[0]
    assert source.name == word and source.table == (word, word)


@settings(max_examples=150, deadline=None)
@given(keyword_prefixed())
def test_a_name_after_an_operand_is_a_syntax_error_not_a_keyword(word):
    """Where no name may stand (after an operand), a keyword-prefixed name is one
    unexpected name (E001 quoting all of it), never a keyword and the rest."""
    text = f"source t {{ a: bool }}\nmodel m {{\n  from t\n  derive x = a {word}\n}}\n"
    module = load_text(text, "k.strata")
    codes = [(d.code, d.message) for d in module.diagnostics]
    assert codes == [("E001", f"unexpected `{word}`")], codes


@pytest.mark.parametrize("step, column", [
    ("derive x = a andy", "andy"),
    ("derive x = txt likely", "likely"),
    ("derive x = count(distinct order_id)", "order_id"),
])
def test_the_issue_examples_are_errors_that_quote_the_whole_name(step, column):
    text = ("source t { a: bool, y: bool, txt: text, ly: text, order_id: int }\n"
            f"model m {{\n  from t\n  {step}\n}}\n")
    diags = load_text(text, "k.strata").diagnostics
    assert [d.code for d in diags] == ["E001"]
    assert f"`{column}`" in diags[0].message


def _duck(sql: str, setup: str = "") -> list[tuple]:
    con = duckdb.connect()
    if setup:
        con.execute(setup)
    return sorted(con.execute(sql).fetchall(), key=repr)


HERE = Path(__file__).parent
