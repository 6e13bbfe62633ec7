"""Shared helpers for the core scalar functions: Flink's type-merging rules (numeric
promotion, DECIMAL precision/scale derivation), Calcite-style type names for error
messages, and vectorized conversions between Arrow values (decimal rounding, null masks).

Kept apart from the function modules so arithmetic, comparison, cast and numeric
functions agree on one definition of "the common type of INT and DECIMAL(5, 2)".
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.functions.registry import ArgValue, FunctionTypeError
from runtime.types import (
    BIGINT,
    DECIMAL,
    DOUBLE,
    FLOAT,
    INTEGER_TYPES,
    DataType,
)

MAX_PRECISION = 38
MINIMUM_ADJUSTED_SCALE = 6

# Flink treats an integer mixed with a DECIMAL as DECIMAL(digits, 0).
INT_AS_DECIMAL = {"TINYINT": (3, 0), "SMALLINT": (5, 0), "INT": (10, 0), "BIGINT": (19, 0)}
_INT_RANK = {n: i for i, n in enumerate(INTEGER_TYPES)}

# Java rounding mode HALF_UP (ties away from zero) in Arrow's vocabulary.
HALF_UP = "half_towards_infinity"


# ---------------------------------------------------------------------- type helpers
def any_nullable(types: list[DataType]) -> bool:
    return any(t.nullable for t in types)


def with_null(t: DataType, types: list[DataType]) -> DataType:
    """`t` made nullable if any argument is nullable (Flink's default nullability rule)."""
    return t.with_nullable(any_nullable(types))


def calcite_name(t: DataType) -> str:
    """The type's spelling in Calcite validation messages (`INTEGER`, `VARCHAR(10)`)."""
    n = t.name
    if n == "INT":
        return "INTEGER"
    if n in ("CHAR", "VARCHAR", "BINARY", "VARBINARY"):
        return f"{n}({t.precision})"
    if n == "DECIMAL":
        return f"DECIMAL({t.precision}, {t.scale})"
    if n == "TIMESTAMP":
        return f"TIMESTAMP({t.precision})"
    if n == "TIMESTAMP_LTZ":
        return f"TIMESTAMP_WITH_LOCAL_TIME_ZONE({t.precision})"
    if n == "INTERVAL_DAY_TIME":
        return "INTERVAL SECOND"
    if n == "INTERVAL_YEAR_MONTH":
        return "INTERVAL MONTH"
    if n in ("ARRAY", "MULTISET"):
        return f"{calcite_name(t.children[0])} {n}"
    if n == "MAP":
        return f"({calcite_name(t.children[0])}, {calcite_name(t.children[1])}) MAP"
    if n == "ROW":
        return (
            "RecordType("
            + ", ".join(f"{calcite_name(c)} {f}" for f, c in zip(t.field_names, t.children, strict=True))
            + ")"
        )
    return n


def cannot_apply(op: str, types: list[DataType], form: str) -> FunctionTypeError:
    """Calcite's "Cannot apply 'op' to arguments of type ..." validation error."""
    if len(types) == 2 and not op.isalpha():
        sig = f"<{calcite_name(types[0])}> {op} <{calcite_name(types[1])}>"
    else:
        sig = f"{op}(" + ", ".join(f"<{calcite_name(t)}>" for t in types) + ")"
    return FunctionTypeError(f"Cannot apply '{op}' to arguments of type '{sig}'. Supported form(s): '{form}'")


def adjust_precision_scale(precision: int, scale: int) -> tuple[int, int]:
    """Flink's LogicalTypeMerging.adjustPrecisionScale: cap at 38 digits, giving up scale
    (but keeping at least min(scale, 6) fractional digits)."""
    if precision <= MAX_PRECISION:
        return precision, scale
    digit_part = precision - scale
    min_scale_part = min(scale, MINIMUM_ADJUSTED_SCALE)
    adjust_scale = max(MAX_PRECISION - digit_part, min_scale_part)
    return MAX_PRECISION, adjust_scale


def decimal_ps(t: DataType) -> tuple[int, int]:
    """(precision, scale) of a DECIMAL or of an integer type seen as a DECIMAL."""
    if t.name == "DECIMAL":
        return t.precision or 10, t.scale or 0
    if t.name in INT_AS_DECIMAL:
        return INT_AS_DECIMAL[t.name]
    raise ValueError(f"not an exact numeric type: {t}")


def decimal_plus_type(a: DataType, b: DataType) -> tuple[int, int]:
    p1, s1 = decimal_ps(a)
    p2, s2 = decimal_ps(b)
    scale = max(s1, s2)
    return adjust_precision_scale(max(p1 - s1, p2 - s2) + scale + 1, scale)


def decimal_times_type(a: DataType, b: DataType) -> tuple[int, int]:
    p1, s1 = decimal_ps(a)
    p2, s2 = decimal_ps(b)
    return adjust_precision_scale(p1 + p2 + 1, s1 + s2)  # LogicalTypeMerging: p1 + p2 + 1


def decimal_divide_type(a: DataType, b: DataType) -> tuple[int, int]:
    p1, s1 = decimal_ps(a)
    p2, s2 = decimal_ps(b)
    scale = max(6, s1 + p2 + 1)
    return adjust_precision_scale(p1 - s1 + s2 + scale, scale)


def decimal_mod_type(a: DataType, b: DataType) -> tuple[int, int]:
    p1, s1 = decimal_ps(a)
    p2, s2 = decimal_ps(b)
    scale = max(s1, s2)
    return adjust_precision_scale(min(p1 - s1, p2 - s2) + scale, scale)


def common_numeric(a: DataType, b: DataType) -> DataType:
    """Least restrictive numeric type of two numeric types (nullability not merged)."""
    if a.name == "NULL":
        return b
    if b.name == "NULL":
        return a
    if "DOUBLE" in (a.name, b.name):
        return DOUBLE()
    if "FLOAT" in (a.name, b.name):
        return DOUBLE() if "DECIMAL" in (a.name, b.name) else FLOAT()
    if a.name == "DECIMAL" or b.name == "DECIMAL":
        p1, s1 = decimal_ps(a)
        p2, s2 = decimal_ps(b)
        scale = max(s1, s2)
        p, s = adjust_precision_scale(max(p1 - s1, p2 - s2) + scale, scale)
        return DECIMAL(p, s)
    return a if _INT_RANK[a.name] >= _INT_RANK[b.name] else b


def common_type(types: list[DataType]) -> DataType | None:
    """Least restrictive type of a list (for CASE/COALESCE/IN/GREATEST), or None when the
    types do not mix. Nullable when any input is."""
    known = [t for t in types if t.name != "NULL"]
    nullable = any(t.nullable for t in types)
    if not known:
        return types[0].with_nullable(True) if types else None
    first = known[0]
    if all(t.is_numeric for t in known):
        out = known[0]
        for t in known[1:]:
            out = common_numeric(out, t)
        return out.with_nullable(nullable)
    if all(t.is_string for t in known):
        if all(t.name == "CHAR" for t in known):
            lens = {t.precision for t in known}
            if len(lens) == 1:
                return first.with_nullable(nullable)
            return DataType("VARCHAR", nullable, precision=max(t.precision or 1 for t in known))
        return DataType("VARCHAR", nullable, precision=max(t.precision or 1 for t in known))
    if all(t.name in ("BINARY", "VARBINARY") for t in known):
        return DataType("VARBINARY", nullable, precision=max(t.precision or 1 for t in known))
    if all(t.name in ("TIMESTAMP", "TIMESTAMP_LTZ", "DATE") for t in known):
        if all(t.name == "DATE" for t in known):
            return first.with_nullable(nullable)
        name = "TIMESTAMP_LTZ" if all(t.name == "TIMESTAMP_LTZ" for t in known) else "TIMESTAMP"
        prec = max((t.precision if t.precision is not None else 0) for t in known if t.name != "DATE")
        return DataType(name, nullable, precision=prec)
    if all(t.name == first.name for t in known):
        if first.name in ("ARRAY", "MULTISET", "MAP", "ROW"):
            if all(t.with_nullable(True) == first.with_nullable(True) for t in known):
                return first.with_nullable(nullable)
            # element-wise, as Calcite's leastRestrictive: MAP['a', 1] and MAP['bb', NULL]
            # mix into MAP<VARCHAR(2), INT>; a ROW keeps the first one's field names
            width = len(first.children)
            if any(len(t.children) != width for t in known):
                return None
            inner = [common_type([t.children[i] for t in known]) for i in range(width)]
            if any(c is None for c in inner):
                return None
            return replace(first, nullable=nullable, children=tuple(c for c in inner if c is not None))
        if first.name == "TIME":
            return DataType("TIME", nullable, precision=max(t.precision or 0 for t in known))
        return first.with_nullable(nullable)
    return None


def comparable(a: DataType, b: DataType) -> bool:
    """Whether Flink (Calcite) allows `a = b` / `a < b`."""
    if a.name == "NULL" or b.name == "NULL":
        return True
    if a.is_numeric and b.is_numeric:
        return True
    if a.is_string and b.is_string:
        return True
    kinds = {a.name, b.name}
    if kinds <= {"TIMESTAMP", "TIMESTAMP_LTZ", "DATE"}:
        return True
    if kinds <= {"BINARY", "VARBINARY"}:
        return True
    if a.name == b.name and a.name in ("BOOLEAN", "TIME", "INTERVAL_DAY_TIME", "INTERVAL_YEAR_MONTH"):
        return True
    if a.name == b.name and a.name in ("ARRAY", "MAP", "ROW", "MULTISET"):
        return common_type([a, b]) is not None
    return False


# ---------------------------------------------------------------------- value helpers
def to_array(v: ArgValue, n: int) -> pa.Array:
    """A kernel argument as an array of `n` rows (broadcasting a Scalar)."""
    if isinstance(v, pa.Scalar):
        return pa.repeat(v, n)
    if isinstance(v, pa.ChunkedArray):
        return v.combine_chunks()
    return v


def java_div(a: np.ndarray, b: int) -> np.ndarray:
    """Java's integer division of longs (truncates toward zero; numpy floors)."""
    q = np.floor_divide(a, b)
    return np.where((a < 0) & (q * b != a), q + 1, q)


def java_rem(a: np.ndarray, b: int) -> np.ndarray:
    """Java's `%` of longs (the sign of the dividend)."""
    return a - java_div(a, b) * b


def null_mask(v: pa.Array) -> np.ndarray:
    return v.is_null().to_numpy(zero_copy_only=False)


def to_numpy(v: pa.Array, fill: object = 0) -> np.ndarray:
    """Values of a primitive array as numpy, nulls replaced by `fill`."""
    if v.null_count:
        v = pc.fill_null(v, pa.scalar(fill, v.type))
    return v.to_numpy(zero_copy_only=False)


def all_scalars(args: list[ArgValue]) -> bool:
    return all(isinstance(a, pa.Scalar) for a in args)


def decimal_type(p: int, s: int) -> pa.DataType:
    return pa.decimal128(p, s) if p <= 38 else pa.decimal256(p, s)


def round_decimal(v: ArgValue, p: int, s: int) -> ArgValue:
    """Decimal/integer values rounded HALF_UP to scale `s` and cast to DECIMAL(p, s);
    values that do not fit in p digits become NULL (Flink's overflow behaviour)."""
    src = v.type
    if pa.types.is_integer(src):
        v = pc.cast(v, decimal_type(min(max(p, 19 + s), 76), s)) if s > 0 else pc.cast(v, pa.decimal256(max(19, p), 0))
        src = v.type
    if not pa.types.is_decimal(src):
        raise TypeError(f"round_decimal of {src}")
    if src.scale > s:
        # one more integer digit: rounding may carry (99.99 -> 100.0)
        src = decimal_type(min(src.precision + 1, 76), src.scale)
        v = pc.cast(v, src)
        v = pc.round(v, ndigits=s, round_mode=HALF_UP)
        # rounding keeps the scale; drop the now-zero digits (cannot lose information)
        v = pc.cast(v, decimal_type(max(src.precision - (src.scale - s), 1), s), safe=False)
    elif src.scale < s:
        wider = min(src.precision + (s - src.scale), 76)
        v = pc.cast(v, decimal_type(wider, s))
    cur = v.type
    target = pa.decimal128(p, s)
    if cur.precision - cur.scale > p - s:
        limit = _limit_scalar(p - s, cur)
        too_big = pc.greater_equal(pc.abs(v), limit)
        v = pc.if_else(too_big, pa.scalar(None, cur), v)
        return pc.cast(v, target, safe=False)
    return pc.cast(v, target)


def _limit_scalar(int_digits: int, t: pa.DataType) -> pa.Scalar:
    """10**int_digits as a scalar of decimal type `t` (the first value that overflows)."""
    import decimal

    return pa.scalar(decimal.Decimal(10) ** int_digits, t)


def java_int_from_double(values: np.ndarray, bits: int) -> np.ndarray:
    """Java's narrowing (int)/(long) of doubles: truncate toward zero, saturate, NaN → 0;
    then (byte)/(short) wrap from int."""
    with np.errstate(invalid="ignore", over="ignore"):
        t = np.trunc(values.astype(np.float64))
        t = np.where(np.isnan(t), 0.0, t)
        if bits == 64:
            lo, hi = -(2**63), 2**63 - 1
            out = np.where(t >= 2.0**63, hi, np.where(t < -(2.0**63), lo, 0)).astype(np.int64)
            inside = (t < 2.0**63) & (t >= -(2.0**63))
            out[inside] = t[inside].astype(np.int64)
            return out
        t = np.clip(t, -(2**31), 2**31 - 1).astype(np.int64)
        return t.astype({8: np.int8, 16: np.int16, 32: np.int32}[bits])


def bigint_or_double(t: DataType) -> DataType:
    return BIGINT() if t.is_integer else DOUBLE()
