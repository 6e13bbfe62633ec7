"""Expression IR: the only expression form that crosses from planner to runtime.

Bound, typed and positional: a column is an index into the input batch's data columns,
a function is a canonical name looked up in `runtime.functions.registry`. Plain data,
so a JobGraph holding expressions serializes to JSON and back unchanged.
"""

from __future__ import annotations

from typing import Any

from runtime.frozen import frozen_dataclass
from runtime.types import DataType


@frozen_dataclass
class InputRef:
    """The value of data column `index` of the input batch."""

    index: int
    type: DataType

    def __str__(self) -> str:
        return f"${self.index}"


@frozen_dataclass
class Literal:
    """A constant.

    `value` is JSON-able and encoded by type: integers and floats as Python numbers,
    DECIMAL as a str ("1.50"), BOOLEAN as bool, strings as str, DATE as days since epoch
    (int), TIME as ms of day (int), TIMESTAMP/TIMESTAMP_LTZ as int in the Arrow unit of the
    type (ms for precision <= 3), INTERVAL_DAY_TIME as int ms, INTERVAL_YEAR_MONTH as int
    months, NULL as None.
    """

    value: Any
    type: DataType

    def __str__(self) -> str:
        if self.value is None:
            return "null"
        if isinstance(self.value, str):
            return repr(self.value)
        return str(self.value)


@frozen_dataclass
class Call:
    """A function call. `name` is the registry's canonical lower-case name; `type` is the
    result type the binder inferred (CAST / TRY_CAST carry their target type here)."""

    name: str
    args: tuple[Expr, ...]
    type: DataType

    def __str__(self) -> str:
        return f"{self.name}({', '.join(str(a) for a in self.args)})"


Expr = InputRef | Literal | Call


def expr_to_json(e: Expr) -> dict[str, Any]:
    if isinstance(e, InputRef):
        return {"ref": e.index, "type": e.type.to_json()}
    if isinstance(e, Literal):
        return {"lit": e.value, "type": e.type.to_json()}
    return {"call": e.name, "args": [expr_to_json(a) for a in e.args], "type": e.type.to_json()}


def expr_from_json(d: dict[str, Any]) -> Expr:
    t = DataType.from_json(d["type"])
    if "ref" in d:
        return InputRef(d["ref"], t)
    if "lit" in d:
        return Literal(d["lit"], t)
    return Call(d["call"], tuple(expr_from_json(a) for a in d["args"]), t)


def input_refs(e: Expr) -> set[int]:
    """Indices of the input columns an expression reads (for projection pushdown)."""
    if isinstance(e, InputRef):
        return {e.index}
    if isinstance(e, Call):
        out: set[int] = set()
        for a in e.args:
            out |= input_refs(a)
        return out
    return set()


def remap_refs(e: Expr, mapping: dict[int, int]) -> Expr:
    """The same expression over a re-ordered input: column i becomes mapping[i]."""
    if isinstance(e, InputRef):
        return InputRef(mapping[e.index], e.type)
    if isinstance(e, Call):
        return Call(e.name, tuple(remap_refs(a, mapping) for a in e.args), e.type)
    return e
