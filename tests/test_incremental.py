"""Compile-time validation of incremental merge_strategy (delivery note: E086–E089).

Each failing model is a valid one with a single change, so the test shows exactly
which detail the check is about; `replace` (or no merge_strategy) needs nothing
extra. Execution of append/upsert merges is in test_incremental_merge.py.
"""

from __future__ import annotations

import pytest

from strata.compiler import compile_statements
from strata.semantics.resolve import load_text

SOURCES = """\
source orders {
  id: int
  customer_id: int
  amount: decimal(12, 2)
  status: text
  tags: list<text>
  updated_at: timestamp
}
"""
SOURCE_LINES = SOURCES.count("\n")

UPSERT = """\
model m {
  from orders
  incremental
  merge_strategy: upsert
  merge_keys: [id]
  cdc_column: updated_at
}
"""

APPEND = """\
model m {
  from orders
  incremental
  merge_strategy: append
  cdc_column: updated_at
}
"""

AGGREGATE_REPLACE = """\
model m {
  from orders
  group customer_id
  aggregate total = sum(amount), last_change = max(updated_at)
  incremental
  merge_strategy: replace
  merge_keys: [customer_id]
  cdc_column: last_change
}
"""


def almost(model: str, old: str, new: str) -> str:
    """`model` with one change: `old` (which must occur once) becomes `new`."""
    assert model.count(old) == 1, old
    return model.replace(old, new)


def diagnostics(model: str) -> list[tuple[str, int, int, str]]:
    """(code, line in the model, column, text under the caret) of each diagnostic."""
    text = SOURCES + model
    lines = text.splitlines()
    out = []
    for d in load_text(text, "m.strata").diagnostics:
        s = d.span
        out.append((d.code, s.line - SOURCE_LINES, s.column,
                    lines[s.line - 1][s.column - 1:s.end_column - 1]))
    return out


class TestValidModels:
    """The models the cases below start from compile, full and incremental."""

    @pytest.mark.parametrize("model", [UPSERT, APPEND, AGGREGATE_REPLACE],
                             ids=["upsert", "append", "replace on an aggregate"])
    def test_compiles(self, model: str) -> None:
        module = load_text(SOURCES + model, "m.strata")
        assert module.ok, module.diagnostics
        compile_statements(module)

    @pytest.mark.parametrize("model", [
        "model m {\n  from orders\n  incremental\n}\n",
        "model m {\n  from orders\n  merge_strategy: replace\n}\n",
        "model m {\n  from orders\n  incremental\n  merge_strategy: replace\n}\n",
    ], ids=["incremental", "merge_strategy replace", "both"])
    def test_replace_needs_nothing_extra(self, model: str) -> None:
        assert diagnostics(model) == []

    def test_cdc_column_may_be_a_let(self) -> None:
        model = almost(APPEND, "  incremental\n", "  let changed = updated_at\n  incremental\n")
        model = almost(model, "cdc_column: updated_at", "cdc_column: changed")
        assert diagnostics(model) == []

    def test_cdc_column_may_be_renamed_by_select(self) -> None:
        model = almost(UPSERT, "  incremental\n",
                       "  select id, amount, updated_at as changed_at\n  incremental\n")
        model = almost(model, "cdc_column: updated_at", "cdc_column: changed_at")
        assert diagnostics(model) == []


class TestE086UnknownStrategy:
    @pytest.mark.parametrize("written", ["merge", "Upsert", "upserts", "incremental"])
    def test_a_word_that_is_not_a_strategy(self, written: str) -> None:
        model = almost(UPSERT, "merge_strategy: upsert", f"merge_strategy: {written}")
        assert diagnostics(model) == [("E086", 4, 19, written)]

    def test_a_near_miss_gets_a_suggestion(self) -> None:
        model = almost(UPSERT, "merge_strategy: upsert", "merge_strategy: Upsert")
        [diag] = load_text(SOURCES + model).diagnostics
        assert diag.hint == "did you mean `upsert`?"

    def test_a_list_is_not_a_strategy(self) -> None:
        model = almost(UPSERT, "merge_strategy: upsert", "merge_strategy: [upsert]")
        assert diagnostics(model) == [("E086", 4, 19, "[upsert]")]
        [diag] = load_text(SOURCES + model).diagnostics
        assert diag.message == "unknown merge_strategy `[upsert]`"  # was `('upsert',)`

    def test_a_number_is_not_a_strategy(self) -> None:
        model = almost(APPEND, "merge_strategy: append", "merge_strategy: 2")
        assert diagnostics(model) == [("E086", 4, 19, "2")]


class TestE087MergeOnAggregate:
    def test_upsert_of_an_aggregate_keyed_by_its_group(self) -> None:
        """Everything else is right: keys are the group, cdc is an output column."""
        model = almost(AGGREGATE_REPLACE, "merge_strategy: replace", "merge_strategy: upsert")
        assert diagnostics(model) == [("E087", 6, 19, "upsert")]

    def test_append_of_an_aggregate_without_group(self) -> None:
        model = almost(APPEND, "  incremental\n",
                       "  aggregate n = count(), updated_at = max(updated_at)\n  incremental\n")
        assert diagnostics(model) == [("E087", 5, 19, "append")]


class TestE088CdcColumn:
    def test_dropped_by_select(self) -> None:
        model = almost(UPSERT, "  incremental\n", "  select id, amount\n  incremental\n")
        assert diagnostics(model) == [("E088", 7, 15, "updated_at")]

    def test_renamed_by_select_names_the_new_name(self) -> None:
        model = almost(UPSERT, "  incremental\n",
                       "  select id, updated_at as changed_at\n  incremental\n")
        assert diagnostics(model) == [("E088", 7, 15, "updated_at")]
        [diag] = load_text(SOURCES + model).diagnostics
        assert diag.hint == "did you mean `changed_at`?"

    def test_a_typo(self) -> None:
        model = almost(APPEND, "cdc_column: updated_at", "cdc_column: update_at")
        assert diagnostics(model) == [("E088", 5, 15, "update_at")]

    def test_a_list_column_cannot_be_a_watermark(self) -> None:
        model = almost(APPEND, "cdc_column: updated_at", "cdc_column: tags")
        assert diagnostics(model) == [("E088", 5, 15, "tags")]

    def test_missing_for_append(self) -> None:
        model = almost(APPEND, "  cdc_column: updated_at\n", "")
        assert diagnostics(model) == [("E088", 4, 19, "append")]

    def test_missing_for_upsert(self) -> None:
        model = almost(UPSERT, "  cdc_column: updated_at\n", "")
        assert diagnostics(model) == [("E088", 4, 19, "upsert")]

    def test_written_as_a_list(self) -> None:
        model = almost(APPEND, "cdc_column: updated_at", "cdc_column: [updated_at]")
        assert diagnostics(model) == [("E088", 5, 15, "[updated_at]")]


class TestE089MergeKeys:
    def test_missing(self) -> None:
        model = almost(UPSERT, "  merge_keys: [id]\n", "")
        assert diagnostics(model) == [("E089", 4, 19, "upsert")]

    def test_empty(self) -> None:
        model = almost(UPSERT, "merge_keys: [id]", "merge_keys: []")
        assert diagnostics(model) == [("E089", 5, 15, "[]")]

    def test_not_an_output_column_points_at_the_key(self) -> None:
        model = almost(UPSERT, "merge_keys: [id]", "merge_keys: [id, customer]")
        assert diagnostics(model) == [("E089", 5, 20, "customer")]

    def test_dropped_by_select(self) -> None:
        model = almost(UPSERT, "  incremental\n",
                       "  select id as order_id, updated_at\n  incremental\n")
        assert diagnostics(model) == [("E089", 6, 16, "id")]

    def test_not_a_list_is_one_error(self) -> None:
        model = almost(UPSERT, "merge_keys: [id]", "merge_keys: id")
        assert diagnostics(model) == [("E089", 5, 15, "id")]

    def test_a_key_twice_points_at_the_repeat(self) -> None:
        model = almost(UPSERT, "merge_keys: [id]", "merge_keys: [id, status, id]")
        assert diagnostics(model) == [("E089", 5, 28, "id")]


def test_merge_checks_are_quiet_when_a_step_already_failed() -> None:
    """A failed `select` leaves the output incomplete; cdc_column and merge_keys
    checks against it used to add two more errors for the same mistake."""
    model = almost(UPSERT, "  incremental\n", "  select id, amont\n  incremental\n")
    assert [d[0] for d in diagnostics(model)] == ["E011"]


def test_every_merge_error_of_a_module_in_one_pass() -> None:
    bad_strategy = almost(UPSERT, "merge_strategy: upsert", "merge_strategy: merge")
    on_aggregate = almost(AGGREGATE_REPLACE, "model m", "model a").replace("replace", "upsert")
    no_cdc = almost(APPEND, "model m", "model c").replace("  cdc_column: updated_at\n", "")
    bad_key = almost(UPSERT, "model m", "model k").replace("[id]", "[nope]")
    codes = [d[0] for d in diagnostics(bad_strategy + on_aggregate + no_cdc + bad_key)]
    assert codes == ["E086", "E087", "E088", "E089"]


@pytest.mark.parametrize("value, ok", [("0.2", True), ("10", True), ("0", False),
                                       ("50", False), ("many", False)])
def test_compact_ratio_is_a_fraction_of_the_base_above_0_and_at_most_10(value, ok):
    text = SOURCES + UPSERT.replace("  cdc_column: updated_at\n",
                                    f"  cdc_column: updated_at\n  compact_ratio: {value}\n")
    diags = load_text(text).diagnostics
    if ok:
        assert diags == []
    else:
        [diag] = diags
        assert diag.code == "E021"
        assert diag.message.startswith("compact_ratio is a fraction of the base rows, above 0 "
                                       "and at most 10")
