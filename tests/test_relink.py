"""A run executes each model's canonical SQL relinked to its physical relations
(strata/sqlgen/relink.py) instead of rendering the tree twice. The relinked text
must be exactly what rendering the tree over those relations gives, and anything
the relinker cannot vouch for must fall back to rendering (None)."""

from __future__ import annotations

from pathlib import Path

import pytest

from strata.engine.fingerprints import canonical_sql
from strata.semantics.resolve import load_module
from strata.sqlgen.build import model_query
from strata.sqlgen.clock import RunClock, relink_clock
from strata.sqlgen.names import table
from strata.sqlgen.relink import relink

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


CLOCK = RunClock.parse("2026-12-02 06:30:00")


def physical(ref, alias):
    """Models in the internal schema under a snapshot name; sources in `raw`; the run's
    clock as its literal (what a run executes)."""
    if ref.kind == "clock":
        return CLOCK.literal(ref.name)
    if ref.kind == "model":
        return table("strata_internal", f"snap_0123abcd_{ref.name}", alias=alias)
    return table("raw", ref.name, alias=alias)


def bare(ref, alias):
    """Every relation by its bare name, as a source without a schema is read."""
    return table(ref.name, alias=alias)


def targets(plan, relation=physical):
    return {(r.kind, r.name): relation(r, None).sql(dialect="duckdb") for r in plan.reads}


def relinked(plan, relation=physical):
    """What a run executes: the canonical text relinked, then the clock's placeholders
    replaced by its literals (strata/engine/run/build.py)."""
    out = relink(canonical_sql(plan), plan, targets(plan, relation))
    literals = {n: CLOCK.literal(n).sql(dialect="duckdb") for n in plan.clock}
    return None if out is None else relink_clock(out, literals)


def rendered(plan, relation=physical):
    return model_query(plan, relation).sql(dialect="duckdb")


def module_from(tmp_path, text):
    path = tmp_path / "m.strata"
    path.write_text(text)
    module = load_module(path)
    assert module.ok, module.diagnostics
    return module


def test_every_example_model_relinks_to_exactly_the_rendered_query():
    module = load_module(EXAMPLES / "shop")
    for name in module.order:
        plan = module.plan(name)
        assert relinked(plan) == rendered(plan), name


LITERALS = """
source orders { id: int, note: text }
model tricky {
  from orders
  filter note <> '__model.orders' and note <> 'it''s __source.orders'
  select id, note
}
"""


def test_placeholder_text_inside_a_string_literal_is_left_alone(tmp_path):
    module = module_from(tmp_path, LITERALS)
    plan = module.plan("tricky")
    out = relink(canonical_sql(plan), plan, targets(plan))
    assert out == rendered(plan)
    assert "'__model.orders'" in out and "'it''s __source.orders'" in out
    assert "FROM raw.orders" in out


SHADOW = """
source orders { id: int }
model shadowed { from orders as __source; select id }
"""


def test_an_alias_named_like_a_placeholder_schema_falls_back(tmp_path):
    module = module_from(tmp_path, SHADOW)
    plan = module.plan("shadowed")
    assert relink(canonical_sql(plan), plan, targets(plan)) is None


BASE_NAMED = """
source orders { id: int }
model m { from orders; select id }
"""


def test_a_bare_relation_named_like_a_cte_of_the_query_falls_back(tmp_path):
    """`--override orders=base` must not be read as the query's own `base` CTE."""
    module = module_from(tmp_path, BASE_NAMED)
    plan = module.plan("m")
    assert relink(canonical_sql(plan), plan, {("source", "orders"): "base"}) is None


def test_a_bare_relation_name_is_relinked_like_the_rendered_query(tmp_path):
    """The usual source, `orders` without a schema: exactly what rendering gives."""
    module = module_from(tmp_path, LITERALS)
    plan = module.plan("tricky")
    out = relink(canonical_sql(plan), plan, targets(plan, bare))
    assert out is not None and out == rendered(plan, bare)
    assert "FROM orders AS orders" in out


def test_an_unknown_relation_falls_back(tmp_path):
    module = module_from(tmp_path, BASE_NAMED)
    plan = module.plan("m")
    assert relink(canonical_sql(plan), plan, {}) is None


@pytest.mark.parametrize("comment", ["/* __model.orders */ "])
def test_a_comment_falls_back(tmp_path, comment):
    module = module_from(tmp_path, BASE_NAMED)
    plan = module.plan("m")
    assert relink(comment + canonical_sql(plan), plan, targets(plan)) is None


@pytest.mark.parametrize("parts", [("strata_internal", "snap_0a1b_m1"), ("main", "Orders"),
                                   ("a b", "select"), ('x"y', "z"), ("raw", "orders")])
def test_relation_text_is_what_sqlglot_renders(parts):
    from strata.sqlgen.names import dotted

    assert dotted(*parts) == table(*parts).sql(dialect="duckdb")


def test_every_example_model_relinks_to_bare_source_names_as_rendered():
    module = load_module(EXAMPLES / "shop")

    def bare_sources(ref, alias):
        return table(ref.name, alias=alias) if ref.kind == "source" else physical(ref, alias)

    for name in module.order:
        plan = module.plan(name)
        assert relinked(plan, bare_sources) == rendered(plan, bare_sources), name


CTE_NAMED = """
source base { id: int }
source combined { id: int }
model m { from base; filter id > 0; union combined }
"""


def test_sources_named_like_the_query_ctes_never_read_the_wrong_relation(tmp_path):
    module = module_from(tmp_path, CTE_NAMED)
    plan = module.plan("m")
    out = relink(canonical_sql(plan), plan, targets(plan, bare))
    assert out is None or out == rendered(plan, bare)
