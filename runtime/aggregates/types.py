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

# Every aggregate function name (lower case) of SQL: the binder recognizes a call of one as an
# aggregate, and a user function of the same name does not shadow it (planner.functions_catalog).
AGGREGATE_FUNCTIONS = {
    *AGGREGATE_NAMES,
    # BIT_AND / BIT_OR / BIT_XOR (Calcite's): recognized as aggregates by name, so a call is
    # refused as an unsupported aggregate rather than taken for a scalar function.
    "bit_and",
    "bit_or",
    "bit_xor",
}

# STDDEV / VARIANCE family: aliases resolved by the binder's callers (`canonical_aggregate`).
VARIANCE_NAMES = ("stddev_pop", "stddev_samp", "stddev", "var_pop", "var_samp", "variance")


def is_aggregate(name: str) -> bool:
    return name.lower() in AGGREGATE_NAMES


# How many arguments each built-in aggregate takes (min, max), as Flink's operand checks
# (COUNT takes any number; the aggregates of runtime/aggregates/more.py check their own).
_ARITY: dict[str, tuple[int, int]] = {
    **dict.fromkeys(("sum", "sum0", "avg", "min", "max", "first_value", "last_value", "collect"), (1, 1)),
    **dict.fromkeys(("stddev_pop", "stddev_samp", "var_pop", "var_samp", "stddev", "variance"), (1, 1)),
    **dict.fromkeys(("bit_and", "bit_or", "bit_xor", "array_agg", "json_arrayagg"), (1, 1)),
    "listagg": (1, 2),
    "json_objectagg": (2, 2),
}
# MIN/MAX/FIRST_VALUE/LAST_VALUE compare values: not over these types (Flink's MinMax
# aggregate functions support only atomic comparable types).
_NOT_COMPARABLE = ("ARRAY", "MAP", "MULTISET", "ROW", "RAW", "STRUCTURED")


def check_arity(name: str, count: int) -> None:
    """FunctionTypeError with Flink's message when aggregate `name` gets `count` arguments
    it does not take."""
    lo, hi = _ARITY.get(name.lower(), (0, 1 << 30))
    if not lo <= count <= hi:
        want = str(lo) if lo == hi else f"{lo} to {hi}"
        raise FunctionTypeError(
            f"Invalid number of arguments to function '{name.upper()}'. Was expecting {want} arguments"
        )


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
    check_arity(n, len(arg_types))
    t = arg_types[0]
    if n in ("min", "max") and t.name in _NOT_COMPARABLE:
        raise FunctionTypeError(
            f"Cannot apply '{name.upper()}' to arguments of type '{name.upper()}(<{t}>)': "
            f"{name.upper()} supports only comparable atomic types, not {t.name}"
        )
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


__all__ = ["AGGREGATE_FUNCTIONS", "AGGREGATE_NAMES", "VARIANCE_NAMES", "infer_aggregate", "is_aggregate"]
