"""Arithmetic: plus, minus, times, divide, mod, negate, with Flink's (Java's) semantics.

- Integers wrap around on overflow (Java int/long arithmetic); integer division truncates
  toward zero and a zero divisor raises `EvaluationError("/ by zero")`.
- DECIMAL results take Flink's precision/scale (LogicalTypeMerging), are rounded HALF_UP,
  and become NULL when they overflow the result precision.
- FLOAT/DOUBLE follow IEEE (x / 0.0 = Infinity).
- TIMESTAMP/DATE/TIME ± INTERVAL; INTERVAL ± INTERVAL.
"""

from __future__ import annotations

import decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.errors import EvaluationError
from runtime.functions._common import (
    cannot_apply,
    common_numeric,
    decimal_divide_type,
    decimal_mod_type,
    decimal_plus_type,
    decimal_ps,
    decimal_times_type,
    decimal_type,
    null_mask,
    round_decimal,
    to_array,
    to_numpy,
    with_null,
)
from runtime.functions.registry import ArgValue, EvalContext, FunctionTypeError, document, scalar
from runtime.types import DECIMAL, DataType

MS_PER_DAY = 86_400_000
_SYMBOL = {"plus": "+", "minus": "-", "times": "*", "divide": "/", "mod": "MOD"}
_TEMPORAL = ("TIMESTAMP", "TIMESTAMP_LTZ", "DATE", "TIME")
_INTERVALS = ("INTERVAL_DAY_TIME", "INTERVAL_YEAR_MONTH")


# ---------------------------------------------------------------------- type inference
def _numeric_result(op: str, a: DataType, b: DataType) -> DataType:
    if a.name == "NULL" and b.name == "NULL":
        return DataType("NULL")
    common = common_numeric(a, b)
    if common.name == "DECIMAL":
        rule = {
            "plus": decimal_plus_type,
            "minus": decimal_plus_type,
            "times": decimal_times_type,
            "divide": decimal_divide_type,
            "mod": decimal_mod_type,
        }[op]
        x = a if a.name != "NULL" else b
        y = b if b.name != "NULL" else a
        p, s = rule(x, y)
        return DECIMAL(p, s)
    if op == "mod" and common.is_integer and b.is_integer:
        return b  # Calcite: MOD has the type of its second operand
    return common


def _infer_binary(op: str):
    def infer(types: list[DataType]) -> DataType:
        if len(types) != 2:
            raise FunctionTypeError(
                f"Invalid number of arguments to function '{_SYMBOL[op]}'. Was expecting 2 arguments"
            )
        a, b = types
        na, nb = a.name, b.name
        if (a.is_numeric or na == "NULL") and (b.is_numeric or nb == "NULL"):
            return with_null(_numeric_result(op, a, b), types)
        if op in ("plus", "minus"):
            if na in _TEMPORAL and (nb in _INTERVALS or nb == "NULL"):
                return with_null(a, types)
            if op == "plus" and nb in _TEMPORAL and na in _INTERVALS:
                return with_null(b, types)
            if na in _INTERVALS and na == nb:
                return with_null(a, types)
        if op in ("times", "divide") and na in _INTERVALS and b.is_numeric:
            return with_null(a, types)
        if op == "times" and nb in _INTERVALS and a.is_numeric:
            return with_null(b, types)
        sym = _SYMBOL[op]
        form = f"<NUMERIC> {sym} <NUMERIC>" if sym != "MOD" else "MOD(<EXACT_NUMERIC>, <EXACT_NUMERIC>)"
        raise cannot_apply(sym, types, form)

    return infer


def _infer_negate(types: list[DataType]) -> DataType:
    (a,) = types
    if a.is_numeric or a.name in _INTERVALS or a.name == "NULL":
        return a
    raise cannot_apply("-", types, "'-<NUMERIC>'")


# ---------------------------------------------------------------------- kernels
def _prep(v: ArgValue, t: DataType, target: pa.DataType) -> ArgValue:
    if v.type == target:
        return v
    if isinstance(v, pa.Array):
        return v.cast(target, safe=False)
    if not v.is_valid:
        return pa.scalar(None, target)
    return pa.array([v.as_py()], v.type).cast(target, safe=False)[0]


def _int_cast(v: ArgValue, target: pa.DataType) -> ArgValue:
    """Wrap-around cast of an integer value (Java narrowing)."""
    if v.type == target:
        return v
    if isinstance(v, pa.Scalar):
        return pc.cast(pa.array([v.as_py()], v.type), target, safe=False)[0]
    return pc.cast(v, target, safe=False)


def _binary_kernel(op: str):
    def kernel(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
        a, b = args
        ta, tb = types
        out = rt.to_arrow()
        if ta.name == "NULL" or tb.name == "NULL" or rt.name == "NULL":
            return pa.nulls(ctx.num_rows, out)
        if rt.is_integer:
            return _integer_op(op, a, b, out, ctx)
        if rt.name in ("DOUBLE", "FLOAT"):
            return _float_op(op, _prep(a, ta, out), _prep(b, tb, out), ctx)
        if rt.name == "DECIMAL":
            return _decimal_op(op, a, b, ta, tb, rt, ctx)
        return _temporal_op(op, a, b, ta, tb, rt, ctx)

    return kernel


def _integer_op(op: str, a: ArgValue, b: ArgValue, out: pa.DataType, ctx: EvalContext) -> ArgValue:
    wide = pa.int64()
    if op in ("plus", "minus", "times"):
        fn = {"plus": pc.add, "minus": pc.subtract, "times": pc.multiply}[op]
        # Unchecked: wraps like Java. A wrapped sum / difference / product modulo 2^bits
        # depends only on the operands modulo 2^bits, so computing in the result's width
        # (operands never wider: the result type is their common type) equals computing
        # in 64 bits and narrowing, without the two widening casts.
        return fn(_int_cast(a, out), _int_cast(b, out))
    # divide / mod: numpy, Java truncation, "/ by zero" on a valid zero divisor
    n = ctx.num_rows
    aa = to_array(_int_cast(a, wide), n)
    bb = to_array(_int_cast(b, wide), n)
    nulls = null_mask(aa) | null_mask(bb)
    x = to_numpy(aa, 0).astype(np.int64)
    y = to_numpy(bb, 1).astype(np.int64)
    y = np.where(nulls, 1, y)
    if (y == 0).any():
        raise EvaluationError("/ by zero")
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        if op == "divide":
            q = np.floor_divide(x, y)
            adjust = (np.remainder(x, y) != 0) & ((x < 0) != (y < 0))
            res = q + adjust
        else:
            res = np.fmod(x, y)
    res = np.where(y == -1, -x if op == "divide" else 0, res)  # MIN / -1 wraps to MIN
    arr = pa.array(res, pa.int64(), mask=nulls)
    return pc.cast(arr, out, safe=False)


def _float_op(op: str, a: ArgValue, b: ArgValue, ctx: EvalContext) -> ArgValue:
    if op == "plus":
        return pc.add(a, b)
    if op == "minus":
        return pc.subtract(a, b)
    if op == "times":
        return pc.multiply(a, b)
    if op == "divide":
        return pc.divide(a, b)
    n = ctx.num_rows
    aa, bb = to_array(a, n), to_array(b, n)
    nulls = null_mask(aa) | null_mask(bb)
    with np.errstate(all="ignore"):
        res = np.fmod(to_numpy(aa, 0.0), to_numpy(bb, 1.0))
    return pa.array(res, aa.type, mask=nulls)


def _as_decimal(v: ArgValue, t: DataType) -> ArgValue:
    if t.name == "DECIMAL":
        return v
    p, s = decimal_ps(t)
    return _prep(v, t, pa.decimal128(p, s))


def _decimal_op(
    op: str, a: ArgValue, b: ArgValue, ta: DataType, tb: DataType, rt: DataType, ctx: EvalContext
) -> ArgValue:
    da, db = _as_decimal(a, ta), _as_decimal(b, tb)
    p, s = rt.precision or 10, rt.scale or 0
    if op == "mod":
        return _decimal_mod(da, db, p, s, ctx)
    ta_, tb_ = da.type, db.type
    if op in ("plus", "minus"):
        need = max(ta_.precision - ta_.scale, tb_.precision - tb_.scale) + max(ta_.scale, tb_.scale) + 1
        if need > 38:
            da, db = _wide(da), _wide(db)
        res = (pc.add if op == "plus" else pc.subtract)(da, db)
    elif op == "times":
        if ta_.precision + tb_.precision + 1 > 38:
            da, db = _tight(da), _tight(db)
            if da.type.precision + db.type.precision + 1 > 76:
                return round_decimal(_decimal_product_exact(da, db, ctx), p, s)
            if da.type.precision + db.type.precision + 1 > 38:
                da, db = _wide(da), _wide(db)
        res = pc.multiply(da, db)
    else:
        res = _decimal_quotient(da, db, s, ctx)
    if isinstance(res, pa.Scalar):
        return round_decimal(pa.array([res.as_py()], res.type), p, s)[0]
    return round_decimal(res, p, s)


def _tight(v: ArgValue) -> ArgValue:
    """`v` cast to the fewest decimal digits its actual values need (same scale).

    Arrow sizes a quotient by the declared precisions, so a COUNT (DECIMAL(19, 0)) divisor
    under a SUM (DECIMAL(38, s)) would ask for more than 76 digits; the values nearly always
    need far fewer. One reduction per batch, no per-row work."""
    t = v.type
    biggest = pc.max(pc.abs(v)) if isinstance(v, pa.Array) else (pc.abs(v) if v.is_valid else None)
    if biggest is None or not biggest.is_valid:
        return v
    m = biggest.as_py()
    int_digits = m.adjusted() + 1 if m >= 1 else 0
    precision = max(int_digits + t.scale, 1)
    if precision >= t.precision:
        return v
    return _prep(v, DataType("DECIMAL"), decimal_type(precision, t.scale))


def _decimal_quotient(da: ArgValue, db: ArgValue, s: int, ctx: EvalContext) -> ArgValue:
    """a / b with at least s + 1 fractional digits, truncated (round_decimal then rounds
    HALF_UP to s, which equals Java's BigDecimal.divide(b, s, HALF_UP))."""
    da, db = _tight(da), _tight(db)
    ta, tb = da.type, db.type
    # Arrow: quotient scale = max(4, s1 + p2 - s2 + 1); rescale the dividend to reach s + 1.
    s1 = max(ta.scale, s + tb.scale - tb.precision)
    p1 = ta.precision - ta.scale + s1
    wide_p = p1 - s1 + tb.scale + max(4, s1 + tb.precision - tb.scale + 1)
    if wide_p > 76:
        return _decimal_quotient_exact(da, db, s, ctx)
    if wide_p > 38:
        da = _prep(da, DataType("DECIMAL"), pa.decimal256(p1, s1))
        db = _wide(db)
    else:
        da = _prep(da, DataType("DECIMAL"), decimal_type(p1, s1))
    try:
        return pc.divide(da, db)
    except pa.ArrowInvalid as e:
        if "zero" in str(e).lower():
            raise EvaluationError("Division by zero") from None
        raise


def _decimal_quotient_exact(da: ArgValue, db: ArgValue, s: int, ctx: EvalContext) -> ArgValue:
    """a / b over values too wide for Arrow's 76-digit quotient (both near 38 digits): a
    loop with Python Decimals at 80 digits of context, then the usual rounding."""
    n = ctx.num_rows
    out: list[decimal.Decimal | None] = []
    with decimal.localcontext() as dctx:
        dctx.prec = 80
        quantum = decimal.Decimal(1).scaleb(-(s + 1))
        for x, y in zip(to_array(da, n).to_pylist(), to_array(db, n).to_pylist(), strict=True):
            if x is None or y is None:
                out.append(None)
            elif y == 0:
                raise EvaluationError("Division by zero")
            else:
                out.append((x / y).quantize(quantum, rounding=decimal.ROUND_DOWN))
    return pa.array(out, decimal_type(76, s + 1))


def _decimal_product_exact(da: ArgValue, db: ArgValue, ctx: EvalContext) -> pa.Array:
    """a * b over values whose exact product exceeds Arrow's 76 digits: Python Decimals
    (rare: both factors near 38 significant digits); the caller rounds and NULLs overflow,
    so a product is capped to 76 digits here (it overflows DECIMAL(38, s) anyway)."""
    n = ctx.num_rows
    scale = da.type.scale + db.type.scale
    limit = decimal.Decimal(10) ** (76 - scale)
    out: list[decimal.Decimal | None] = []
    with decimal.localcontext() as dctx:
        dctx.prec = 160
        for x, y in zip(to_array(da, n).to_pylist(), to_array(db, n).to_pylist(), strict=True):
            if x is None or y is None:
                out.append(None)
            else:
                v = x * y
                out.append(v if abs(v) < limit else limit.copy_sign(v) - decimal.Decimal(1).scaleb(-scale))
    return pa.array(out, decimal_type(76, scale))


def _wide(v: ArgValue) -> ArgValue:
    """`v` as a 256-bit decimal of the same precision and scale: Arrow then sizes the
    result from the real precisions and may go past 38 digits (up to 76)."""
    t = v.type
    if isinstance(t, pa.Decimal256Type):
        return v
    return _prep(v, DataType("DECIMAL"), pa.decimal256(t.precision, t.scale))


def _decimal_mod(da: ArgValue, db: ArgValue, p: int, s: int, ctx: EvalContext) -> ArgValue:
    """DECIMAL MOD: rare, computed with Python Decimals (a loop over rows)."""
    n = ctx.num_rows
    xs = to_array(da, n).to_pylist()
    ys = to_array(db, n).to_pylist()
    out: list[decimal.Decimal | None] = []
    for x, y in zip(xs, ys, strict=True):
        if x is None or y is None:
            out.append(None)
        elif y == 0:
            raise EvaluationError("Division by zero")
        else:
            out.append(x.__class__(x) % y)  # Decimal % keeps the dividend's sign, like Java
    arr = pa.array(out, decimal_type(76, max(da.type.scale, db.type.scale)))
    return round_decimal(arr, p, s)


# ---------------------------------------------------------------------- temporal
def add_months_days(days: np.ndarray, months: np.ndarray) -> np.ndarray:
    """Days since epoch plus a number of months, clamping the day to the month's end."""
    d = days.astype("datetime64[D]")
    month = d.astype("datetime64[M]")
    dom = (d - month.astype("datetime64[D]")).astype(np.int64)
    new_month = month + months.astype(np.int64)
    month_len = ((new_month + 1).astype("datetime64[D]") - new_month.astype("datetime64[D]")).astype(np.int64)
    return (new_month.astype("datetime64[D]").astype(np.int64) + np.minimum(dom, month_len - 1)).astype(np.int64)


def _unit_per_ms(t: pa.DataType) -> int:
    return {"s": 1, "ms": 1, "us": 1000, "ns": 1_000_000}[t.unit]


def _raw_int(a: pa.Array) -> pa.Array:
    """The integer behind a temporal value (DATE days, TIME ms are 32-bit in Arrow)."""
    if pa.types.is_date32(a.type) or pa.types.is_time32(a.type):
        return pc.cast(a, pa.int32())
    return pc.cast(a, pa.int64())


def _temporal_op(
    op: str, a: ArgValue, b: ArgValue, ta: DataType, tb: DataType, rt: DataType, ctx: EvalContext
) -> ArgValue:
    n = ctx.num_rows
    if op == "plus" and ta.name in _INTERVALS and tb.name in _TEMPORAL:
        a, b, ta, tb = b, a, tb, ta
    out = rt.to_arrow()
    if op == "times" and tb.name in _INTERVALS:
        a, b, ta, tb = b, a, tb, ta
    sign = -1 if op == "minus" else 1
    if (
        op in ("plus", "minus")
        and ta.name in ("TIMESTAMP", "TIMESTAMP_LTZ")
        and tb.name == "INTERVAL_DAY_TIME"
        and isinstance(a, pa.Array)
        and not a.null_count
        and isinstance(b, pa.Scalar)
        and b.is_valid
    ):  # a timestamp column +/- a constant day-time interval (a WATERMARK expression): one add
        step = int(pc.cast(b, pa.int64()).as_py()) * sign * _unit_per_ms(a.type)
        res = a.view(pa.int64()).to_numpy(zero_copy_only=False) + step
        return pa.array(res, pa.int64()).cast(out)
    aa, bb = to_array(a, n), to_array(b, n)
    nulls = null_mask(aa) | null_mask(bb)
    if op in ("times", "divide"):
        x = to_numpy(pc.cast(aa, pa.int64()), 0).astype(np.float64 if op == "divide" else np.int64)
        y = to_numpy(pc.cast(bb, pa.float64()), 1.0)
        with np.errstate(all="ignore"):
            r = x * y if op == "times" else x / y
        return pa.array(np.trunc(r).astype(np.int64), pa.int64(), mask=nulls).cast(out)
    x = to_numpy(_raw_int(aa), 0).astype(np.int64)
    y = to_numpy(_raw_int(bb), 0).astype(np.int64)
    y = y * sign
    name = ta.name
    if name in _INTERVALS:
        res = x + y
        return pa.array(res, pa.int64(), mask=nulls).cast(out)
    if tb.name == "INTERVAL_YEAR_MONTH":
        if name == "DATE":
            res = add_months_days(x, y)
        elif name == "TIME":
            res = x
        else:
            per_ms = _unit_per_ms(aa.type)
            per_day = MS_PER_DAY * per_ms
            days = np.floor_divide(x, per_day)
            res = add_months_days(days, y) * per_day + (x - days * per_day)
    else:  # day-time interval in ms
        if name == "DATE":
            res = x + np.trunc(y / MS_PER_DAY).astype(np.int64)
        elif name == "TIME":
            res = np.mod(x + y, MS_PER_DAY)
        else:
            res = x + y * _unit_per_ms(aa.type)
    return pa.array(res, pa.int64(), mask=nulls).cast(pa.int32() if name in ("DATE", "TIME") else pa.int64()).cast(out)


# ---------------------------------------------------------------------- negate
def _negate(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    (a,) = args
    t = types[0]
    if t.name == "NULL":
        return pa.nulls(ctx.num_rows, rt.to_arrow())
    if t.is_integer:
        return _int_cast(pc.negate(_int_cast(a, pa.int64())), a.type)
    if t.name in _INTERVALS:
        return pc.cast(pc.negate(pc.cast(a, pa.int64())), a.type)
    return pc.negate(a)


for _op in ("plus", "minus", "times", "divide", "mod"):
    scalar(_op, _infer_binary(_op))(_binary_kernel(_op))
scalar("negate", _infer_negate)(_negate)

__all__ = ["add_months_days"]


# docs/functions.md: signature and one example per function of this module
document(
    {
        "plus": ("a + b (also datetime + interval)", "1 + 2.5"),
        "minus": ("a - b", "DATE '2024-03-01' - INTERVAL '1' DAY"),
        "times": ("a * b", "1.5 * 2"),
        "divide": ("a / b", "7 / 2"),
        "mod": ("a % b, MOD(a, b)", "MOD(-7, 3)"),
        "negate": ("-a", "-(3)"),
    }
)
