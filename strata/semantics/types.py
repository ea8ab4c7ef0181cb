"""Column types, their inference rules, and their SQLGlot data types."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from sqlglot import exp

NUMERIC = ("int", "decimal", "double")
SCALAR_NAMES = ("int", "double", "decimal", "text", "bool", "date", "timestamp")


@dataclass(frozen=True)
class Type:
    kind: str  # int double decimal text bool date timestamp list null
    precision: int | None = None
    scale: int | None = None
    element: Type | None = None

    def __str__(self) -> str:
        if self.kind == "decimal" and self.precision is not None:
            return f"decimal({self.precision}, {self.scale})"
        if self.kind == "list":
            return f"list<{self.element}>"
        return self.kind

    @property
    def numeric(self) -> bool:
        return self.kind in NUMERIC

    @property
    def temporal(self) -> bool:
        return self.kind in ("date", "timestamp")

    def to_sqlglot(self) -> exp.DataType:
        return _to_sqlglot(self)


INT = Type("int")
DOUBLE = Type("double")
TEXT = Type("text")
BOOL = Type("bool")
DATE = Type("date")
TIMESTAMP = Type("timestamp")
NULL = Type("null")


def decimal(precision: int = 18, scale: int = 3) -> Type:
    return Type("decimal", precision, scale)


def list_of(element: Type) -> Type:
    return Type("list", element=element)


@cache
def _to_sqlglot(t: Type) -> exp.DataType:
    if t.kind == "list":
        return exp.DataType(this=exp.DataType.Type.ARRAY, expressions=[_to_sqlglot(t.element)],
                            nested=True)
    if t.kind == "decimal":
        return exp.DataType.build(f"DECIMAL({t.precision or 18}, {t.scale or 0})")
    return exp.DataType.build({
        "int": "BIGINT", "double": "DOUBLE", "text": "TEXT", "bool": "BOOLEAN",
        "date": "DATE", "timestamp": "TIMESTAMP", "null": "NULL",
    }[t.kind])


def unify(a: Type, b: Type) -> Type | None:
    """The common type of two branches (case, coalesce, union), or None."""
    if a == b:
        return a
    if a.kind == "null":
        return b
    if b.kind == "null":
        return a
    if a.numeric and b.numeric:
        if "double" in (a.kind, b.kind):
            return DOUBLE
        if "decimal" in (a.kind, b.kind):
            return _widest_decimal(a, b)
        return INT
    if a.temporal and b.temporal:
        return TIMESTAMP
    if a.kind == "list" and b.kind == "list":
        element = unify(a.element, b.element)
        return list_of(element) if element else None
    return None


def _as_decimal(t: Type) -> Type:
    if t.kind == "decimal":
        return t
    return Type("decimal", 19, 0)  # int


def _widest_decimal(a: Type, b: Type) -> Type:
    a, b = _as_decimal(a), _as_decimal(b)
    scale = max(a.scale or 0, b.scale or 0)
    whole = max((a.precision or 18) - (a.scale or 0), (b.precision or 18) - (b.scale or 0))
    return Type("decimal", min(38, whole + scale), scale)


def arithmetic(op: str, a: Type, b: Type) -> Type | None:
    """Result type of `a op b` for + - * / %, or None when it does not apply."""
    if a.kind == "null" or b.kind == "null":
        other = b if a.kind == "null" else a
        return other if other.numeric or other.kind == "null" else None
    if op in ("+", "-") and a.temporal and b.kind == "int":
        return a
    if not (a.numeric and b.numeric):
        return None
    if op == "/":
        return DOUBLE
    if "double" in (a.kind, b.kind):
        return DOUBLE
    if "decimal" in (a.kind, b.kind):
        da, db = _as_decimal(a), _as_decimal(b)
        if op == "*":
            return Type("decimal", min(38, (da.precision or 18) + (db.precision or 18)),
                        min(38, (da.scale or 0) + (db.scale or 0)))
        return _widest_decimal(da, db)
    return INT


def comparable(a: Type, b: Type) -> bool:
    return unify(a, b) is not None or (a.temporal and b.kind == "text") or (
        b.temporal and a.kind == "text")


def castable(source: Type, target: Type) -> bool:
    if source.kind == "null" or source == target:
        return True
    if source.kind == "list" or target.kind == "list":
        return source.kind == "list" and target.kind == "list" and castable(
            source.element, target.element)
    if target.kind == "text" or source.kind == "text":
        return True
    if source.numeric and target.numeric:
        return True
    if source.kind == "bool" and target.numeric or target.kind == "bool" and source.numeric:
        return True
    return source.temporal and target.temporal


def converts(source: Type, target: Type, narrowing: bool = False) -> bool:
    """Does a value of `source` take the type `target` without a `cast` written (a
    function's argument to its parameter; with `narrowing`, its body to its declared
    return type)? The same type, NULL, a number to a wider kind (int to decimal or
    double, decimal to double; any decimal to any decimal), a date to a timestamp, a
    list whose items convert. With `narrowing` a number converts to any number."""
    if source == target or source.kind == "null":
        return True
    if source.kind == "list" or target.kind == "list":
        return source.kind == target.kind == "list" and converts(source.element,
                                                                 target.element, narrowing)
    if source.numeric and target.numeric:
        return narrowing or NUMERIC.index(source.kind) <= NUMERIC.index(target.kind)
    return (source.kind, target.kind) == ("date", "timestamp")
