"""`strata graph MODULE [-o WAREHOUSE] [--format html|mermaid|dot] [--out FILE]`: the
model graph (strata/graph.py), with each model's state when a warehouse is given."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from strata.cli.compile_cmds import chosen_models, load_checked, selection_options
from strata.cli.main import cli, handled
from strata.diagnostics import fail
from strata.graph import build_graph, dot, mermaid
from strata.safefiles import Place, write_file
from strata.textsafe import escape_unprintable

FORMATS = ("html", "mermaid", "dot")
HTML_DEFAULT = "graph.html"  # a page is opened in a browser, not read on a terminal


@cli.command(name="graph")
@click.argument("module", type=click.Path())
@click.option("-o", "--warehouse", "warehouse", default=None, type=click.Path(),
              metavar="WAREHOUSE",
              help="A DuckDB warehouse (read only): show each model's state, rows and runs.")
@click.option("--branch", default="main", show_default=True,
              help="Branch whose runs and live views decide the state.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="html", show_default=True)
@click.option("--out", "out", default=None, metavar="FILE",
              help=f"Where to write; `-` is stdout. Default: {HTML_DEFAULT} for html, "
                   "stdout for mermaid and dot.")
@selection_options
@handled
def graph_cmd(module: str, warehouse: str | None, branch: str, fmt: str,
              out: str | None, models: str | None, select: tuple[str, ...],
              exclude: tuple[str, ...]) -> None:
    """Draw MODULE's sources and models and what each reads: a self-contained HTML page
    (pan, zoom, click a model for its SQL, columns, pins, lineage and history), or
    Mermaid or Graphviz text. With --models or --select, only the models chosen and
    the sources they read."""
    mod = load_checked(module)
    graph = build_graph(mod, warehouse, branch,
                        models=chosen_models(mod, models, select, exclude))
    if fmt == "mermaid":
        text = mermaid(graph)
    elif fmt == "dot":
        text = dot(graph)
    else:
        from strata.graph_html import page

        text = page(graph, Path(module).resolve().name or module)
    target = out if out is not None else (HTML_DEFAULT if fmt == "html" else "-")
    if target == "-":
        sys.stdout.write(text)
        return
    try:
        write_file(Place.given(target), text)
    except OSError as err:
        raise fail("E093", f"cannot write `{escape_unprintable(target)}`: "
                   f"{err.strerror or err}", None,
                   "choose another --out FILE, or `--out -` for stdout") from None
    click.echo(f"wrote {escape_unprintable(target)}: {len(graph.nodes)} nodes, "
               f"{len(graph.edges)} edges", err=True)
