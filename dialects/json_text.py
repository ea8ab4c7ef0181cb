"""`json_text(doc, path)`: the path steps Strata accepts, and PostgreSQL's spelling of
them (the other engines refuse, dialects/functions.py says why).
"""

from __future__ import annotations

from sqlglot import exp

from dialects.base import cast, num
from dialects.spelling import case

# the portable JSON paths: `$`, then `.key` (a key of letters, digits and _, not
# starting with a digit) and `[n]` (an array index from 0) steps
JSON_KEY = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
JsonStep = str | int  # a key, or an array index


def json_path_steps(path: str) -> list[JsonStep] | str:
    """The steps of a portable JSON path (`$.a.b[0]`), or what is wrong with it."""
    hint = "paths are `$`, then `.key` (letters, digits, _) and `[n]` steps, such as '$.a.b[0]'"
    if not path.startswith("$"):
        return f"path {path!r} does not start with `$`; {hint}"
    steps: list[JsonStep] = []
    i = 1
    while i < len(path):
        if path[i] == ".":
            j = i + 1
            while j < len(path) and path[j] in JSON_KEY:
                j += 1
            key = path[i + 1:j]
            if not key or key[0].isdigit():
                return f"path {path!r} has a key that is not portable at {i}; {hint}"
            steps.append(key)
            i = j
        elif path[i] == "[":
            j = path.find("]", i)
            digits = path[i + 1:j] if j > 0 else ""
            if not digits.isascii() or not digits.isdigit() or (len(digits) > 1 and digits[0] == "0"):
                return f"path {path!r} has an index that is not portable at {i}; {hint}"
            steps.append(int(digits))
            i = j + 1
        else:
            return f"path {path!r} has {path[i]!r} at {i}; {hint}"
    return steps


def _json_path(node: exp.Expression) -> tuple[exp.Expression, list[JsonStep]]:
    """The document and the path steps of a json_text node: CASE WHEN
    JSON_TYPE(j, path) = 'VARCHAR' THEN JSON_EXTRACT_STRING(j, path) END."""
    extract = node.args["ifs"][0].args["true"]
    document, path = extract.expressions
    steps = json_path_steps(path.this)
    assert not isinstance(steps, str), steps  # the checker accepted the path
    return document, steps


def _json_typeof(value: exp.Expression, kind: str) -> exp.Expression:
    return exp.EQ(this=exp.Anonymous(this="JSON_TYPEOF", expressions=[value]),
                  expression=exp.Literal.string(kind))


def _pg_json_value(level: int) -> exp.Column:
    return exp.column("v", table=f"strata_json_{level}")


def _pg_json_step(level: int, step: JsonStep) -> exp.Expression:
    """The value one step below level `level - 1`, as a derived table: an array element by
    `->`; an object key's FIRST value (DuckDB's choice among duplicate keys, where
    PostgreSQL's `->` takes the last) by JSON_EACH in document order; no row when there
    is none."""
    above = _pg_json_value(level - 1)
    if isinstance(step, int):
        select = exp.select(exp.alias_(exp.JSONExtract(this=above, expression=num(step)), "v"))
    else:
        pairs = exp.Table(this=exp.Anonymous(this="JSON_EACH", expressions=[
            case((_json_typeof(above.copy(), "object"), above.copy()))]), ordinality=True,
            alias=exp.TableAlias(this=exp.to_identifier("e"), columns=[
                exp.to_identifier(c) for c in ("key", "value", "n")]))
        select = (exp.select(exp.alias_(exp.column("value", table="e"), "v")).from_(pairs)
                  .where(exp.EQ(this=exp.column("key", table="e"),
                                expression=exp.Literal.string(step)))
                  .order_by(exp.column("n", table="e")).limit(1))
    return exp.Lateral(this=exp.Subquery(this=select),
                       alias=exp.TableAlias(this=exp.to_identifier(f"strata_json_{level}")))


def json_text_each(node: exp.Expression) -> exp.Expression:
    """PostgreSQL: the text cast to JSON (malformed text raises, as on DuckDB), walked a
    step at a time, and the leaf's text when it is a string, in a scalar subquery."""
    document, steps = _json_path(node)
    start = exp.select(exp.alias_(cast(document.copy(), "JSON"), "v")).subquery("strata_json_0")
    leaf = _pg_json_value(len(steps))
    text = exp.JSONBExtractScalar(this=leaf.copy(), expression=exp.Literal.string("{}"))
    query = exp.select(case((_json_typeof(leaf, "string"), text))).from_(start)
    for level, step in enumerate(steps, start=1):
        query = query.join(_pg_json_step(level, step), join_type="CROSS")
    return exp.Subquery(this=query)
