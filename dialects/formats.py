"""strftime's format codes every engine prints alike, with each engine's pattern for
each, and the spellings of `strftime` built from them.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from dialects.base import CannotExpress, cast, is_a
from dialects.spelling import Spelling

# The codes a format may use (DuckDB's %-codes), and each engine's pattern for each;
# None: the engine has no pattern printing it alike (E091 there).
FORMAT_CODES: dict[str, dict[str, str | None]] = {code: dict(zip(("postgres", "spark", "snowflake", "bigquery", "trino"), row))
                for code, row in {
    "Y": ("YYYY", "yyyy", "YYYY", "%Y", "%Y"),
    "y": ("YY", "yy", "YY", "%y", "%y"),
    "m": ("MM", "MM", "MM", "%m", "%m"),
    "d": ("DD", "dd", "DD", "%d", "%d"),
    "H": ("HH24", "HH", "HH24", "%H", "%H"),
    "M": ("MI", "mm", "MI", "%M", "%i"),
    "S": ("SS", "ss", "SS", "%S", "%s"),
    "f": ("US", "SSSSSS", "FF6", None, "%f"),
    "j": ("DDD", "DDD", None, "%j", "%j"),
    "b": ("Mon", "MMM", "Mon", "%b", "%b"),
    "B": ("FMMonth", "MMMM", "MMMM", "%B", "%M"),
    "a": ("Dy", "EEE", "DY", "%a", "%a"),
    "A": ("FMDay", "EEEE", None, "%A", "%W"),
    "%": (None, None, None, "%%", "%%"),
}.items()}
FORMAT_CODE_DOCS = {
    "Y": "year, 4 digits", "y": "year, 2 digits", "m": "month 01-12", "d": "day 01-31",
    "H": "hour 00-23", "M": "minute 00-59", "S": "second 00-59",
    "f": "microsecond, 6 digits", "j": "day of year 001-366", "b": "month Jan-Dec",
    "B": "month January-December", "a": "weekday Sun-Sat", "A": "weekday Sunday-Saturday",
    "%": "a percent sign",
}
# literal characters a format may hold between codes: no letters but T (letters are
# codes in other engines' patterns) and no quotes or backslashes (their quoting)
FORMAT_LITERALS = frozenset(" -/:.,;_T()[]#+")


def format_tokens(fmt: str) -> list[tuple[str, str]] | str:
    """('code', 'Y') and ('text', '-') pieces of a strftime format, or what is wrong."""
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(fmt):
        ch = fmt[i]
        if ch == "%":
            code = fmt[i + 1:i + 2]
            if code not in FORMAT_CODES:
                return (f"format code `%{code}` is not portable; codes: "
                        + " ".join("%" + c for c in FORMAT_CODES))
            out.append(("code", code))
            i += 2
            continue
        if ch not in FORMAT_LITERALS:
            return (f"format character {ch!r} is not portable; between codes use "
                    + repr("".join(sorted(FORMAT_LITERALS))))
        if out and out[-1][0] == "text":
            out[-1] = ("text", out[-1][1] + ch)
        else:
            out.append(("text", ch))
        i += 1
    return out


def _pattern(fmt: str, engine: str, quote: Callable[[str], str]) -> str:
    tokens = format_tokens(fmt)
    assert not isinstance(tokens, str), tokens  # the checker accepted the format
    merged: list[tuple[str, str]] = []  # %% is text where the engine has no code for it
    for kind, value in tokens:
        if kind == "code" and value == "%" and FORMAT_CODES["%"][engine] is None:
            kind = "text"
        if kind == "text" and merged and merged[-1][0] == "text":
            merged[-1] = ("text", merged[-1][1] + value)
        else:
            merged.append((kind, value))
    pieces = []
    for kind, value in merged:
        if kind == "text":
            pieces.append(quote(value))
            continue
        spelled = FORMAT_CODES[value][engine]
        if spelled is None:
            raise CannotExpress(f"`strftime` on {engine}: no pattern prints %{value} "
                                f"({FORMAT_CODE_DOCS[value]}) as DuckDB does")
        pieces.append(spelled)
    return "".join(pieces)


def _format(node: exp.Expression) -> str:
    return node.args["format"].this


def to_char(engine: str) -> Spelling:
    """PostgreSQL's and Snowflake's TO_CHAR; literal text in double quotes."""
    def spell(node: exp.Expression) -> exp.Expression:
        pattern = _pattern(_format(node), engine, lambda t: '"' + t + '"')
        when = node.this if is_a(node.this, "TIMESTAMP") else cast(node.this, "TIMESTAMP")
        return exp.Anonymous(this="TO_CHAR", expressions=[when, exp.Literal.string(pattern)])
    return spell


def date_format_java(node: exp.Expression) -> exp.Expression:
    """Spark's DATE_FORMAT with a Java pattern; literal text in single quotes."""
    pattern = _pattern(_format(node), "spark", lambda t: "'" + t + "'")
    return exp.Anonymous(this="DATE_FORMAT", expressions=[node.this,
                                                          exp.Literal.string(pattern)])


def format_datetime(node: exp.Expression) -> exp.Expression:
    """BigQuery's FORMAT_DATETIME of the value as a DATETIME (its %-codes are C's)."""
    pattern = _pattern(_format(node), "bigquery", lambda t: t)
    return exp.Anonymous(this="FORMAT_DATETIME", expressions=[
        exp.Literal.string(pattern), cast(node.this, "DATETIME")])


def date_format_mysql(node: exp.Expression) -> exp.Expression:
    """Trino's date_format with MySQL's %-codes."""
    pattern = _pattern(_format(node), "trino", lambda t: t)
    return exp.Anonymous(this="DATE_FORMAT", expressions=[cast(node.this, "TIMESTAMP"),
                                                          exp.Literal.string(pattern)])
