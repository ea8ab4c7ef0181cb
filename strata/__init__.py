"""Strata: declarative data models → SQLGlot trees → SQL, run as immutable snapshots.

The library API (the CLI is a thin layer over it):

    module = load_module("examples/shop")       # parse + resolve; never raises for bad input
    module.diagnostics                          # [Diagnostic(code, message, span, hint)]
    model_tree(module, "region_sales")          # the model's SQLGlot tree
    model_sql(module, "region_sales", "spark")  # its SQL for a dialect
    compile_statements(module, "duckdb")        # every statement `compile --show-sql` prints
"""

from __future__ import annotations

from sqlglot import exp

from strata.compiler import compile_relations, compile_statements, format_statements, require_ok
from strata.diagnostics import Diagnostic, Span, StrataError
from strata.distribution import DISTRIBUTION  # the name to install: strata-models
from strata.semantics.module import Module
from strata.semantics.resolve import load_module, load_text

__all__ = [
    "DISTRIBUTION",
    "Diagnostic",
    "Module",
    "Span",
    "StrataError",
    "compile_statements",
    "format_statements",
    "load_module",
    "load_text",
    "model_sql",
    "model_tree",
]


def model_tree(module: Module, model: str, dialect: str = "duckdb") -> exp.Select:
    """The full query of `model` as a SQLGlot tree (models read as their live views)."""
    import dialects
    from strata.compiler import select_models
    from strata.sqlgen.build import model_query

    require_ok(module)
    select_models(module, [model])  # E079 for an unknown model
    from strata.clock import run_clock

    # run_date()/run_timestamp() as a run now would bind them
    return model_query(module.plan(model), compile_relations(module, dialects.get(dialect),
                                                              run_clock()))


def model_sql(module: Module, model: str, dialect: str = "duckdb", pretty: bool = True) -> str:
    import dialects
    from strata.compiler import render

    return render(model_tree(module, model, dialect), dialects.get(dialect), pretty)
