"""The LSP's index after an edit (issue 38, Editors): built from the previous one,
it walks only the edited file's models and the readers whose inputs changed, and
answers exactly as an index built from nothing for the same texts.

The CPU time is compared in one run (never the wall clock): after a one-file edit
of a 300-model module, the index costs a small fraction of a whole one. The figure
at 1,000 models over the wire is bench/lsp/run.py's (`hover after an edit`)."""

from __future__ import annotations

import time

import pytest

from strata.lsp.index import Index, build_index
from strata.lsp.loader import Session

SOURCES = """\
source orders { id: int, customer: int, amount: int, status: text }

fn doubled(x: int) -> int = x * 2
"""


def group(k: int, size: int = 10) -> str:
    """`size` models in a chain; the first reads the previous group's last model."""
    upstream = f"m{k - 1}_{size - 1}" if k else "orders"
    out = []
    for j in range(size):
        source = upstream if j == 0 else f"m{k}_{j - 1}"
        out.append(f"""\
model m{k}_{j} {{
  with kept = (from {source} | filter amount > {j})
  from kept
  derive score{j} = doubled(amount) + {k}
  select id, customer, amount, status, score{j}
}}
""")
    return "\n".join(out)


def texts(groups: int) -> dict[str, str]:
    files = {"sources.strata": SOURCES}
    files.update({f"g{k:03}.strata": group(k) for k in range(groups)})
    return files


def span(s) -> tuple:
    return (s.file, s.line, s.column, s.end_line, s.end_column)


def projection(index: Index) -> dict:
    """Everything a request reads of an index, as plain values."""
    def col(c) -> tuple:
        d = c.definition
        return (d.name, span(d.span), str(d.type), d.origin, c.qualifier, c.visible)

    defs = [*index.definitions.values(), *index.column_defs, *index.functions.values(),
            *index.relations]
    return {
        "references": sorted((span(r.span), r.target.kind, r.target.name, span(r.target.span),
                              str(r.target.type)) for r in index.references),
        "scopes": sorted((span(s.span), tuple(map(col, s.columns)), tuple(map(col, s.after)),
                          tuple(s.aliases)) for s in index.scopes),
        "outputs": {name: [col(c) for c in cols] for name, cols in index.outputs.items()},
        "definitions": sorted((d.kind, d.name, span(d.span), str(d.type), d.origin)
                              for d in defs),
    }


def checked(session: Session, files: dict[str, str]):
    module = session.check(files)
    assert not [d for d in module.diagnostics if d.severity == "error"], module.diagnostics
    return module


EDITS = {
    "a filter's constant": lambda f: {**f, "g005.strata": f["g005.strata"].replace(
        "filter amount > 3", "filter amount > 30")},
    "lines added above every model of a file": lambda f: {
        **f, "g005.strata": "-- a note\n\n" + f["g005.strata"]},
    "a column its readers carry renamed": lambda f: {**f, "g005.strata": f["g005.strata"]
                                                     .replace("score9", "total9")},
    "a source column added": lambda f: {**f, "sources.strata": f["sources.strata"].replace(
        "status: text }", "status: text, note: text }")},
    "the fn's body": lambda f: {**f, "sources.strata": f["sources.strata"].replace(
        "x * 2", "x * 3")},
    "a model removed, one added": lambda f: {**f, "g009.strata": f["g009.strata"].replace(
        "model m9_9 {", "model m9_9b {")},
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_the_index_after_an_edit_is_the_index_built_from_nothing(edit: str) -> None:
    session = Session(None)
    before = texts(10)
    old = build_index(checked(session, before))
    module = checked(session, EDITS[edit](before))
    assert projection(build_index(module, old)) == projection(build_index(module))


def test_a_second_edit_builds_on_the_first() -> None:
    session = Session(None)
    files = texts(10)
    index = build_index(checked(session, files))
    for edit in ("lines added above every model of a file", "a filter's constant",
                 "a column its readers carry renamed"):
        files = EDITS[edit](files)
        module = checked(session, files)
        index = build_index(module, index)
        assert projection(index) == projection(build_index(module)), edit


def cpu(work) -> float:
    """The least CPU time of three runs of `work`."""
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        work()
        best = min(best, time.process_time() - start)
    return best


def test_an_edit_of_one_file_costs_a_small_fraction_of_a_whole_index() -> None:
    """300 models in 30 files: a constant typed in one file walks its 10 models (and
    no reader: their columns are the same), at most a fifth of a whole index's CPU
    time (measured: about a twentieth)."""
    session = Session(None)
    files = texts(30)
    module = checked(session, files)
    previous = build_index(module)
    edited = checked(session, EDITS["a filter's constant"](files))
    whole = cpu(lambda: build_index(edited))
    incremental = cpu(lambda: build_index(edited, previous))
    assert incremental < whole / 5, (incremental, whole)
