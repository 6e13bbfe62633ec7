"""Result types of aggregate functions, following Flink's rules. The binder calls
`infer_aggregate`; the operators compute values of exactly these types."""

from __future__ import annotations

from runtime.aggregates.more import MORE_AGGREGATES, infer_more_aggregate
from runtime.functions.registry import FunctionTypeError
from runtime.types import BIGINT, DECIMAL, STRING, DataType

AGGREGATE_NAMES = (
    "count",
    "sum",
    "sum0",
    "avg",
    "min",
    "max",
    "listagg",
    "first_value",
    "last_value",
    "stddev_pop",
    "stddev_samp",
    "stddev",
    "var_pop",
    "var_samp",
    "variance",
    "collect",
    *MORE_AGGREGATES,
)

# STDDEV / VARIANCE family: aliases resolved by the binder's callers (`canonical_aggregate`).
VARIANCE_NAMES = ("stddev_pop", "stddev_samp", "stddev", "var_pop", "var_samp", "variance")


def is_aggregate(name: str) -> bool:
    return name.lower() in AGGREGATE_NAMES


def infer_aggregate(name: str, arg_types: list[DataType]) -> DataType:
    """Result type of aggregate `name` (lower case) over `arg_types` (COUNT(*) has none)."""
    n = name.lower()
    more = infer_more_aggregate(n, arg_types)
    if more is not None:
        return more
    if n == "count":
        return BIGINT(nullable=False)
    if not arg_types:
        raise FunctionTypeError(f"{name.upper()} requires an argument")
    t = arg_types[0]
    if n in ("sum", "sum0", "avg"):
        if not t.is_numeric:
            raise FunctionTypeError(f"Cannot apply '{name.upper()}' to arguments of type '{name.upper()}(<{t}>)'")
        if t.name == "DECIMAL":
            if n == "avg":
                return DECIMAL(38, max(6, t.scale or 0))
            return DECIMAL(38, t.scale or 0)
        return t.with_nullable(n != "sum0").as_time_attr(None)
    if n in ("min", "max", "first_value", "last_value"):
        return t.with_nullable(True).as_time_attr(None)
    if n == "listagg":
        return STRING()
    if n in VARIANCE_NAMES:
        # Calcite's AVG_AGG_FUNCTION rule: the argument's type (INT stays INT, truncating),
        # DECIMAL(p, s) -> DECIMAL(38, max(6, s)) like AVG.
        if not t.is_numeric:
            raise FunctionTypeError(f"Cannot apply '{name.upper()}' to arguments of type '{name.upper()}(<{t}>)'")
        if t.name == "DECIMAL":
            return DECIMAL(38, max(6, t.scale or 0))
        return t.with_nullable(True).as_time_attr(None)
    if n == "collect":
        return DataType("MULTISET", False, children=(t.with_nullable(False).as_time_attr(None),))
    raise FunctionTypeError(f"No match found for function signature {name.upper()}")


__all__ = ["AGGREGATE_NAMES", "VARIANCE_NAMES", "infer_aggregate", "is_aggregate"]
