"""The SQL of the model under the cursor, in a chosen dialect: what `strata compile
--show-sql --models NAME --dialect D` prints for it (a code lens runs it)."""

from __future__ import annotations

from dataclasses import dataclass

import dialects
from strata.compiler import compile_statements, format_statements
from strata.diagnostics import StrataError
from strata.semantics.module import Module

# The server's own command, listed in `executeCommandProvider`: the "Show SQL" code
# lens calls it, so any editor (Neovim's `vim.lsp.codelens.run()`) gets the SQL back
# as {model, dialect, sql, error}; an editor only decides how to display it.
COMMAND = "strata.renderSql"


@dataclass(frozen=True)
class Rendered:
    model: str | None
    dialect: str
    sql: str | None
    error: str | None = None

    def to_json(self) -> dict:
        return {"model": self.model, "dialect": self.dialect, "sql": self.sql,
                "error": self.error}


def model_at(module: Module, file: str, line: int) -> str | None:
    for name, info in module.models.items():
        span = info.decl.span
        if span.file == file and span.line <= line <= span.end_line:
            return name
    return None


def render_sql(module: Module, model: str | None, dialect: str | None) -> Rendered:
    dialect = dialect or dialects.DEFAULT
    if model is None:
        return Rendered(None, dialect, None, "no model under the cursor")
    try:
        dialects.get(dialect)
        statements = compile_statements(module, dialect, [model])
    except StrataError as err:
        return Rendered(model, dialect, None,
                        "; ".join(f"{d.code}: {d.message}" for d in err.diagnostics))
    return Rendered(model, dialect, format_statements(statements))
