"""`strata lsp`: the language server over stdio (strata/lsp/server.py)."""

from __future__ import annotations

from strata.cli.main import cli


@cli.command()
def lsp() -> None:
    """Run the language server for .strata files on stdin/stdout (for an editor)."""
    from strata.lsp.server import main  # pygls: only when the server runs

    main()
