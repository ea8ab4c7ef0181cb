"""`strata fmt`: put `.strata` files in the canonical layout (strata/syntax/layout.py).

Only files that parse are touched (a syntax error is reported, the file left as it
is); only `.strata` files named on the command line or found under a module folder
are read; a file is rewritten only when its layout changes, and never through a
symbolic link: a link on the way to a file (a linked folder, a linked file) is a
warning and the file is skipped, read or written.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from strata.diagnostics import Diagnostic, StrataError
from strata.safefiles import Place, write_file
from strata.semantics.resolve import display_path, module_files
from strata.syntax.layout import format_text
from strata.syntax.text import read_text
from strata.textsafe import escape_unprintable


@dataclass
class FmtReport:
    """What a `fmt` did (or, with `check`, would do) to each file."""

    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)  # for diagnostics' source lines

    @property
    def failed(self) -> bool:
        return any(d.severity == "error" for d in self.diagnostics)


def format_source(text: str, file: str = "<string>") -> str:
    """`text` in the canonical layout. Raises StrataError when it does not parse."""
    from strata.syntax.parser import parse_text

    parse_text(text, file)
    return format_text(text, file)


def format_paths(paths: list[str], check: bool = False) -> FmtReport:
    """Format every file of `paths` (files or module folders); with `check`, write
    nothing and only report which files would change."""
    report = FmtReport()
    for given in paths:
        for place in _places(given, report):
            _format_one(place, check, report)
    return report


def _places(given: str, report: FmtReport) -> list[Place]:
    root = Path(given)
    if not os.path.lexists(root):
        report.diagnostics.append(Diagnostic(
            "E005", f"no such file or directory: `{escape_unprintable(given)}`", None,
            "give a .strata file or a module folder"))
        return []
    base = Place.given(root)
    if not root.is_dir():
        if not root.name.endswith(".strata"):
            report.diagnostics.append(Diagnostic(
                "E220", f"`{escape_unprintable(given)}` is not a .strata file", None,
                "strata fmt formats .strata files and the module folders holding them"))
            return []
        return [base] if _no_link(base, report) else []
    places = []
    for path in module_files(root):
        place = Place(base.start, (*base.parts, *path.relative_to(root).parts))
        if _no_link(place, report):
            places.append(place)
    return places


def _no_link(place: Place, report: FmtReport) -> bool:
    """Whether no component of `place` after its start is a symbolic link."""
    current = place.start
    for part in place.parts:
        current = current / part
        try:
            linked = stat.S_ISLNK(os.lstat(current).st_mode)
        except OSError:
            linked = False
        if linked:
            report.diagnostics.append(Diagnostic(
                "E130", f"`{escape_unprintable(str(place.path))}` is reached through the "
                f"symbolic link `{escape_unprintable(str(current))}`: left as it is", None,
                "strata fmt never reads or writes through a link; format the file where "
                "it lives", severity="warning"))
            return False
    return True


def _format_one(place: Place, check: bool, report: FmtReport) -> None:
    shown = display_path(place.path)
    try:
        text = read_text(place.path, shown)
        report.texts[shown] = text
        formatted = format_source(text, shown)
    except StrataError as err:
        report.diagnostics.extend(err.diagnostics)
        return
    if formatted == text:
        report.unchanged.append(shown)
        return
    report.changed.append(shown)
    if not check:
        try:
            write_file(place, formatted)
        except StrataError as err:
            report.diagnostics.extend(err.diagnostics)
        except OSError as err:
            report.diagnostics.append(Diagnostic(
                "E222", f"cannot write `{escape_unprintable(shown)}`: {err.strerror or err}",
                None, "check the permissions of the file and its folder"))
