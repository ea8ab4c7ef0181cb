"""docs/ERRORS.md is the catalogue: every code of strata/diagnostics.py CATALOGUE has
a section (and no section names a code the catalogue lacks), each titled with the
catalogue's meaning, and every example module in it prints exactly the text shown
under it (rendered as `strata check` does, with the example as the whole file).

After an intended change of a message: STRATA_UPDATE_GOLDEN=1 pytest this file
rewrites the ```text blocks that follow ```strata examples; review the diff.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path

import pytest

from strata.cli.render import render_all
from strata.diagnostics import CATALOGUE
from strata.semantics.resolve import load_text

DOC = Path(__file__).resolve().parent.parent / "docs" / "ERRORS.md"
UPDATE = bool(os.environ.get("STRATA_UPDATE_GOLDEN"))
HEADING = re.compile(r"^### (E\d{3}) — (.+)$", re.MULTILINE)
# an example module and the output shown right under it
EXAMPLE = re.compile(r"```strata\n(?P<body>.*?)```\n+```text\n(?P<out>.*?)```", re.DOTALL)
PRELUDE = re.compile(r"<!-- prelude -->\n```strata\n(.*?)```", re.DOTALL)


def doc() -> str:
    return DOC.read_text()


def sections(text: str) -> dict[str, str]:
    """code -> its section's text (up to the next heading)."""
    marks = list(HEADING.finditer(text))
    out = {}
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        out[m.group(1)] = text[m.start():end]
    return out


def rendered(prelude: str, body: str) -> str:
    """What `strata check` prints for `body` in a file after the shared sources,
    with lines counted from the start of `body`."""
    shift = prelude.count("\n")
    module = load_text(prelude + body, "example.strata")
    diags = [replace(d, span=replace(d.span, line=d.span.line - shift,
                                     end_line=d.span.end_line - shift))
             if d.span is not None else d for d in module.diagnostics]
    assert all(d.span is None or d.span.line >= 1 for d in diags), "error in the prelude"
    return render_all(diags, {"example.strata": body}) + "\n"


def test_every_code_is_documented_and_nothing_else() -> None:
    documented = [m.group(1) for m in HEADING.finditer(doc())]
    assert len(documented) == len(set(documented)), "a code documented twice"
    assert set(documented) == set(CATALOGUE)
    assert documented == sorted(documented), "sections in code order"


def test_titles_are_the_catalogue_meanings() -> None:
    for m in HEADING.finditer(doc()):
        assert m.group(2) == CATALOGUE[m.group(1)][0], m.group(1)


def test_every_example_prints_what_the_doc_shows() -> None:
    text = doc()
    prelude = PRELUDE.search(text).group(1)
    checked: set[str] = set()
    updated = text
    for code, section in sections(text).items():
        for m in EXAMPLE.finditer(section):
            actual = rendered(prelude, m.group("body"))
            assert f"error[{code}]" in actual, (code, actual)
            if UPDATE:
                fixed = m.group(0).replace("```text\n" + m.group("out"), "```text\n" + actual)
                updated = updated.replace(m.group(0), fixed, 1)
            else:
                assert actual == m.group("out"), f"{code}: docs/ERRORS.md shows other output"
            checked.add(code)
    if UPDATE and updated != text:
        DOC.write_text(updated)
    # every code a module's text can trigger has a runnable example; the others come
    # from files, options or the engine and are shown as console sessions
    not_from_text = {"E002", "E004", "E005", "E084", "E090", "E091", "E092", "E093", "E094",
                     "E061", "E062", "E063", "E064", "E067", "E068", "E069", "E096", "E110", "E117",
                     "E119", "E120", "E121", "E140",
                     *(f"E{n:03d}" for n in range(70, 86))}
    not_from_text |= {"E130"}  # a planted link in a folder strata writes
    not_from_text |= {"E160"}  # the editor's search for a module's files
    not_from_text |= {f"E{n}" for n in range(190, 195)}  # --select/--exclude: test_selection.py
    not_from_text |= {f"E{n}" for n in range(150, 157)}  # strata diff: test_diff.py
    not_from_text |= {f"E{n}" for n in range(195, 199)}  # show and sql: test_show_command.py
    not_from_text |= {f"E{n}" for n in range(199, 205)}  # imports (two modules): test_imports.py
    not_from_text |= {"E212", "E213", "E214"}  # a history's run: test_history_merge.py
    not_from_text |= {f"E{n}" for n in range(220, 223)}  # strata fmt: test_fmt.py
    assert checked == set(CATALOGUE) - not_from_text


@pytest.mark.parametrize("code", sorted(CATALOGUE))
def test_every_section_has_an_example(code: str) -> None:
    section = sections(doc())[code]
    assert "```" in section, f"{code}: no example"
