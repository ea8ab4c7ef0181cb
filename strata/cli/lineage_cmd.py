"""`strata lineage MODULE MODEL.COLUMN [--downstream] [--json]`: where a column comes
from, down to source columns, or which model columns read it (strata/lineage.py)."""

from __future__ import annotations

import click

from strata.cli.compile_cmds import json_option, load_checked
from strata.cli.main import cli, console, handled, print_json
from strata.lineage import (
    Origin,
    Reader,
    column_lineage,
    downstream,
    model_lineage,
    reader_names,
    relation_downstream,
    split_target,
)
from strata.semantics import metadata


@cli.command(name="lineage")
@click.argument("module", type=click.Path())
@click.argument("target", metavar="MODEL.COLUMN")
@click.option("--downstream", "down", is_flag=True,
              help="Which model columns read MODEL.COLUMN (a source's column too), "
                   "directly and through others.")
@json_option
@handled
def lineage_cmd(module: str, target: str, down: bool, as_json: bool) -> None:
    """Where MODEL.COLUMN of MODULE comes from: each step that makes it, through
    sub-pipelines and upstream models, down to source columns (MODEL alone: every
    column). With --downstream, the model columns that read it."""
    mod = load_checked(module)
    relation, column = split_target(mod, target)
    note = _Notes(mod)
    if down and column is None:  # a model or source alone: each of its columns
        trees = relation_downstream(mod, relation)
        if as_json:
            print_json({"columns": [{"column": t.name, "downstream": t.to_json(),
                                     "readers": reader_names(t)} for t in trees]})
        else:
            _print_lines([*note.relation(relation), *[
                line for t in trees for line in [*_reader_lines(t, note), ""]][:-1]])
        return
    if down:
        tree = downstream(mod, relation, column)
        if as_json:
            print_json({"column": tree.name, "downstream": tree.to_json(),
                        "readers": reader_names(tree)})
        else:
            _print_lines(_reader_lines(tree, note))
        return
    origins = [column_lineage(mod, relation, column)] if column is not None \
        else model_lineage(mod, relation)
    if as_json:
        print_json({**metadata.to_json(metadata.of_relation(mod, relation)),
                    "columns": [{"column": o.name, "description": note.of(o),
                                 "sources": o.sources(), "lineage": o.to_json()}
                                for o in origins]})
        return
    lines: list[str] = note.relation(relation) if column is None else []
    for origin in origins:
        lines += _origin_lines(origin, note)
        lines.append(f"sources: {', '.join(origin.sources()) or '(none: a constant)'}")
        lines.append("")
    _print_lines(lines[:-1])


class _Notes:
    """The module's descriptions, as lineage shows them: a column's after its label
    (`-- ...`, as a comment in the language), a model's or source's above its tree."""

    def __init__(self, module):
        self.module = module

    def of(self, node: Origin | Reader) -> str | None:
        return metadata.of_column(self.module, node.relation, node.column).description

    def after(self, node: Origin | Reader) -> str:
        text = self.of(node)
        return f"  -- {text}" if text else ""

    def relation(self, name: str) -> list[str]:
        found = metadata.lines(metadata.of_relation(self.module, name))
        return [f"-- {line}" for line in found] + ([""] if found else [])


def _label(node: Origin) -> str:
    if node.kind == "source":
        return f"{node.name}  (source column)"
    return f"{node.name}  {node.step}" + (f": {node.expression}" if node.expression else "")


def _origin_lines(node: Origin, note: _Notes, prefix: str = "", last: bool = True,
                  top: bool = True) -> list[str]:
    branch = "" if top else ("└─ " if last else "├─ ")
    lines = [prefix + branch + _label(node) + note.after(node)]
    below = prefix + ("" if top else ("   " if last else "│  "))
    for i, child in enumerate(node.inputs):
        lines += _origin_lines(child, note, below, i == len(node.inputs) - 1, top=False)
    return lines


def _reader_lines(node: Reader, note: _Notes, prefix: str = "", last: bool = True,
                  top: bool = True) -> list[str]:
    branch = "" if top else ("└─ " if last else "├─ ")
    label = node.name + ("  (source column)" if node.kind == "source" else "")
    if top and not node.readers:
        label += "  (no model reads it)"
    lines = [prefix + branch + label + note.after(node)]
    below = prefix + ("" if top else ("   " if last else "│  "))
    for i, child in enumerate(node.readers):
        lines += _reader_lines(child, note, below, i == len(node.readers) - 1, top=False)
    return lines


def _print_lines(lines: list[str]) -> None:
    out = console()
    for line in lines:
        out.print(line, markup=False, highlight=False)
