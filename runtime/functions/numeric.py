"""Numeric functions: ABS, SIGN, POWER, SQRT, EXP, LN, LOG10, LOG2, LOG, ROUND, TRUNCATE,
FLOOR, CEIL, PI, E, RAND.

Result types follow Flink: ABS/SIGN/FLOOR/CEIL keep an integer or approximate type, the
math functions return DOUBLE, ROUND/TRUNCATE of a DECIMAL narrow the scale to the number
of digits (LogicalTypeMerging.findRoundDecimalType). ROUND/TRUNCATE of a DOUBLE round the
value's shortest decimal text (BigDecimal.valueOf), so ROUND(2.675, 2) = 2.68, not the
binary 2.67.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.errors import EvaluationError
from runtime.functions._common import HALF_UP, calcite_name, decimal_ps, null_mask, round_decimal, to_array, to_numpy
from runtime.functions.java_math import java_sin
from runtime.functions.registry import ArgValue, EvalContext, FunctionTypeError, document, scalar
from runtime.types import DECIMAL, DOUBLE, DataType


def _numeric_arg(name: str, types: list[DataType], count: tuple[int, ...]) -> None:
    if len(types) not in count:
        raise FunctionTypeError(f"Invalid number of arguments to function '{name}'. Was expecting {count[0]} arguments")
    for t in types:
        if not (t.is_numeric or t.name == "NULL"):
            sig = f"{name}(" + ", ".join(f"<{calcite_name(x)}>" for x in types) + ")"
            form = f"{name}(<NUMERIC>" + ", <NUMERIC>" * (len(types) - 1) + ")"
            raise FunctionTypeError(f"Cannot apply '{name}' to arguments of type '{sig}'. Supported form(s): '{form}'")


def as_double(v: ArgValue, t: DataType, n: int) -> np.ndarray:
    """Values as float64 numpy (nulls → NaN); DECIMAL goes through its exact text so the
    conversion is correctly rounded, as Java's BigDecimal.doubleValue is."""
    arr = to_array(v, n)
    if t.name == "NULL" or arr.type == pa.null():
        return np.full(n, np.nan)
    if pa.types.is_decimal(arr.type):
        arr = pc.cast(pc.cast(arr, pa.string()), pa.float64())
    elif arr.type != pa.float64():
        arr = pc.cast(arr, pa.float64(), safe=False)  # BIGINT beyond 2**53 rounds, as Java's (double)
    return to_numpy(arr, np.nan).astype(np.float64)


def _nulls(args: list[ArgValue], n: int) -> np.ndarray:
    m = np.zeros(n, dtype=bool)
    for a in args:
        m |= null_mask(to_array(a, n))
    return m


# ---------------------------------------------------------------------- DOUBLE functions
def _double_fn(name: str, arity: tuple[int, ...], fn):
    def infer(types: list[DataType]) -> DataType:
        _numeric_arg(name.upper(), types, arity)
        return DOUBLE(any(t.nullable for t in types))

    def kernel(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
        n = ctx.num_rows
        xs = [as_double(a, t, n) for a, t in zip(args, types, strict=True)]
        with np.errstate(all="ignore"):
            res = fn(*xs)
        return pa.array(np.asarray(res, dtype=np.float64), pa.float64(), mask=_nulls(args, n))

    scalar(name, infer)(kernel)


_LN2 = math.log(2.0)
_double_fn("power", (2,), np.power)
_double_fn("sqrt", (1,), np.sqrt)
_double_fn("exp", (1,), np.exp)
_double_fn("ln", (1,), np.log)
_double_fn("log10", (1,), np.log10)
_double_fn("log2", (1,), lambda x: np.log(x) / _LN2)  # Flink: Math.log(x) / Math.log(2)
_double_fn("log", (1, 2), lambda *a: np.log(a[0]) if len(a) == 1 else np.log(a[1]) / np.log(a[0]))
_double_fn("cot", (1,), lambda x: 1.0 / np.tan(x))
_double_fn("degrees", (1,), np.degrees)
_double_fn("radians", (1,), np.radians)
_double_fn("sin", (1,), java_sin)  # Java's Math.sin (fdlibm), not the platform libm
for _trig in ("cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh"):
    _double_fn(_trig, (1,), getattr(np, {"asin": "arcsin", "acos": "arccos", "atan": "arctan"}.get(_trig, _trig)))
_double_fn("atan2", (2,), np.arctan2)


def _infer_const(types: list[DataType]) -> DataType:
    if types:
        raise FunctionTypeError("Function takes no arguments")
    return DOUBLE(False)


@scalar("pi", _infer_const)
def _pi(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    return pa.scalar(math.pi, pa.float64())


@scalar("e", _infer_const)
def _e(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    return pa.scalar(math.e, pa.float64())


def _infer_rand(types: list[DataType]) -> DataType:
    if len(types) > 1 or (types and not types[0].is_integer):
        raise FunctionTypeError("RAND takes an optional INT seed")
    return DOUBLE(False)


class JavaRandom:
    """java.util.Random: Flink's RAND(seed) / RAND_INTEGER(seed, n) draw from one per call
    site, so a seeded call gives Java's sequence (RAND(42) is 0.7275636800328681 first).
    A Python loop per draw: seeded RAND is rare and its sequence is inherently serial."""

    _MULT = 0x5DEECE66D
    _MASK = (1 << 48) - 1

    def __init__(self, seed: int) -> None:
        self.seed = (seed ^ self._MULT) & self._MASK

    def next_bits(self, bits: int) -> int:
        self.seed = (self.seed * self._MULT + 0xB) & self._MASK
        r = self.seed >> (48 - bits)
        return r - (1 << bits) if bits == 32 and r >= 1 << 31 else r

    def next_double(self) -> float:
        return ((self.next_bits(26) << 27) + self.next_bits(27)) * (1.0 / (1 << 53))

    def next_int(self, bound: int) -> int:
        r = self.next_bits(31)
        m = bound - 1
        if bound & m == 0:
            return (bound * r) >> 31
        u = r
        r = u % bound
        while u - r + m >= 1 << 31:
            u = self.next_bits(31)
            r = u % bound
        return r


@scalar("rand", _infer_rand, deterministic=False)
def _rand(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    seed = constant_seed(args[0], "RAND") if args else None
    if seed is None:
        return pa.array(np.random.default_rng().random(ctx.num_rows), pa.float64())
    rnd = seeded_random(ctx, int(seed))
    return pa.array([rnd.next_double() for _ in range(ctx.num_rows)], pa.float64())


# Flink creates a seeded generator once, when the operator opens, from the seed's value then:
# a seed that varies per row has no meaning there (its generated code does not compile).
SEED_NOT_CONSTANT = "{name}'s seed must be a constant: the generator is seeded once, when the operator opens"


def constant_seed(v: ArgValue, name: str) -> Any:
    """The seed's value: a literal, or a constant expression (one value in every row)."""
    if isinstance(v, pa.Scalar):
        return v.as_py()
    distinct = pc.unique(v)
    if len(distinct) > 1:
        raise EvaluationError(SEED_NOT_CONSTANT.format(name=name))
    return distinct[0].as_py() if len(distinct) else None


def seeded_random(ctx: EvalContext, seed: int, bound: int | None = None) -> JavaRandom:
    """The java.util.Random of this call site, seeded once: Flink creates it when the
    operator opens, so the sequence runs on across batches (kept in `ctx.state`)."""
    if ctx.state is None:
        return JavaRandom(seed)
    held = ctx.state.get(ctx.call_key)
    if held is None or held[0] != (seed, bound):
        held = ((seed, bound), JavaRandom(seed))
        ctx.state[ctx.call_key] = held
    rnd: JavaRandom = held[1]
    return rnd


# ---------------------------------------------------------------------- ABS / SIGN
def _infer_same(name: str):
    def infer(types: list[DataType]) -> DataType:
        _numeric_arg(name, types, (1,))
        return types[0]

    return infer


@scalar("abs", _infer_same("ABS"))
def _abs(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    a = args[0]
    if types[0].is_integer:  # Java: Math.abs(MIN_VALUE) == MIN_VALUE (wraps)
        return pc.cast(pc.abs(pc.cast(a, pa.int64())), a.type, safe=False)
    return pc.abs(a)


@scalar("sign", _infer_same("SIGN"))
def _sign(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    t = types[0]
    a = args[0]
    if t.name == "DECIMAL":
        s = pc.sign(pc.cast(pc.cast(a, pa.string()), pa.float64()))
        return round_decimal(pc.cast(to_array(s, ctx.num_rows), pa.int8()), t.precision or 10, t.scale or 0)
    if t.name in ("DOUBLE", "FLOAT"):
        # Math.signum: NaN stays NaN and a zero keeps its sign (signum(-0.0) = -0.0);
        # Arrow's sign gives +0 for both zeros
        res = pc.sign(a)
        return pc.if_else(pc.equal(a, pa.scalar(0.0, a.type)), a, res)
    return pc.cast(pc.sign(a), rt.to_arrow())


# ---------------------------------------------------------------------- ROUND / TRUNCATE
def _digits_literal(types: list[DataType]) -> None:
    if len(types) == 2 and not (types[1].is_integer or types[1].name == "NULL"):
        raise FunctionTypeError(
            f"The second argument of ROUND/TRUNCATE must be an integer, got {calcite_name(types[1])}"
        )


def round_type(t: DataType, r: int) -> DataType:
    """Flink's LogicalTypeMerging.findRoundDecimalType for DECIMAL; other types unchanged."""
    if t.name != "DECIMAL":
        return t
    p, s = decimal_ps(t)
    if r >= s:
        return DECIMAL(p, s, t.nullable)
    if r < 0:
        return DECIMAL(min(38, 1 + p - s), 0, t.nullable)
    return DECIMAL(1 + p - s + r, r, t.nullable)


def _infer_round(name: str):
    def infer(types: list[DataType]) -> DataType:
        _numeric_arg(name, types, (1, 2))
        _digits_literal(types)
        # The digit count is a literal in practice; the binder re-types ROUND(d, n) with
        # `round_type(arg, n)` when it knows n. Without it, assume 0 digits.
        t = round_type(types[0], 0)
        return t.with_nullable(any(x.nullable for x in types))

    return infer


def _digits(args: list[ArgValue], rt: DataType) -> int:
    if len(args) < 2:
        return 0
    d = args[1]
    if isinstance(d, pa.Scalar):
        return int(d.as_py() or 0)
    if rt.name == "DECIMAL":
        return rt.scale or 0
    vals = pc.unique(d).to_pylist()
    return int(next((v for v in vals if v is not None), 0))


# Digits beyond this make Java's BigDecimal.setScale/pow fail ("BigInteger would overflow")
_MAX_DIGITS = 100_000


def _round_kernel(mode: str):
    const_kernel = _round_const_kernel(mode)

    def kernel(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
        """Digits from a column: one constant-digits rounding per distinct value (a DECIMAL
        is rounded to each row's digits, then to the result type's scale, which is 0 when
        the digits are not a literal, as in Flink)."""
        if len(args) < 2 or isinstance(args[1], pa.Scalar):
            return const_kernel(args, types, rt, ctx)
        digits = args[1]
        distinct = [v for v in pc.unique(digits).to_pylist() if v is not None]
        if any(abs(v) > _MAX_DIGITS for v in distinct):
            raise EvaluationError("java.lang.ArithmeticException: BigInteger would overflow supported range")
        out = pa.nulls(ctx.num_rows, rt.to_arrow())
        for v in distinct:
            part = const_kernel([args[0], pa.scalar(v, digits.type)], types, rt, ctx)
            out = pc.if_else(pc.fill_null(pc.equal(digits, v), False), part, out)
        return out

    return kernel


def _round_const_kernel(mode: str):
    def kernel(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
        n = ctx.num_rows
        t = types[0]
        r = _digits(args, rt)
        a = to_array(args[0], n)
        if t.name == "NULL":
            return pa.nulls(n, rt.to_arrow())
        if t.is_integer:
            if r >= 0:
                return a
            wide = pc.cast(a, pa.decimal128(20, 0))
            rounded = pc.round(wide, ndigits=r, round_mode=mode)
            return pc.cast(rounded, a.type, safe=False)
        if t.name == "DECIMAL":
            p, s = rt.precision or 10, rt.scale or 0
            src = a.type
            wide = pc.cast(a, pa.decimal256(min(src.precision + 2, 76), src.scale))
            rounded = pc.round(wide, ndigits=r, round_mode=mode) if r < src.scale else wide
            return round_decimal(rounded, p, s)
        # DOUBLE/FLOAT: round the shortest decimal text (BigDecimal.valueOf(d))
        vals = to_numpy(a, 0.0).astype(np.float64)
        # beyond 1e15 a double has no fraction digit left to round (and would not fit the
        # decimal below): it stays as it is
        with np.errstate(invalid="ignore"):
            finite = np.isfinite(vals) & (np.abs(vals) < 1e15)
        text = pc.if_else(pa.array(finite), pc.cast(pc.cast(a, pa.float64()), pa.string()), pa.scalar("0"))
        dec = pc.cast(text, pa.decimal256(76, 30))
        rounded = pc.round(dec, ndigits=r, round_mode=mode)
        back = to_numpy(pc.cast(pc.cast(rounded, pa.string()), pa.float64()), 0.0)
        res = np.where(finite, back, vals)
        return pa.array(res, pa.float64(), mask=null_mask(a)).cast(rt.to_arrow())

    return kernel


scalar("round", _infer_round("ROUND"), infer_with_literals=lambda t, lits: infer_with_literals("round", t, lits))(
    _round_kernel(HALF_UP)
)
scalar(
    "truncate",
    _infer_round("TRUNCATE"),
    infer_with_literals=lambda t, lits: infer_with_literals("truncate", t, lits),
)(_round_kernel("towards_zero"))


# ---------------------------------------------------------------------- FLOOR / CEIL
def _infer_floor(name: str):
    def infer(types: list[DataType]) -> DataType:
        _numeric_arg(name, types, (1,))
        t = types[0]
        if t.name == "DECIMAL":
            p, s = decimal_ps(t)
            return DECIMAL(min(38, p - s + 1) if s > 0 else p, 0, t.nullable)
        return t

    return infer


def _floor_kernel(up: bool):
    def kernel(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
        t = types[0]
        a = args[0]
        if t.is_integer or t.name == "NULL":
            return a
        if t.name == "DECIMAL":
            arr = to_array(a, ctx.num_rows)
            wide = pc.cast(arr, pa.decimal256(min(arr.type.precision + 1, 76), arr.type.scale))
            rounded = pc.ceil(wide) if up else pc.floor(wide)
            return round_decimal(rounded, rt.precision or 10, 0)
        return pc.ceil(a) if up else pc.floor(a)

    return kernel


scalar("floor", _infer_floor("FLOOR"))(_floor_kernel(False))
scalar("ceil", _infer_floor("CEIL"), "ceiling")(_floor_kernel(True))


def infer_with_literals(name: str, types: list[DataType], literals: list[object]) -> DataType:
    """Result type when some arguments are literals (None where not): ROUND/TRUNCATE of a
    DECIMAL depend on the digit count, which `infer(types)` cannot see; registered as the
    functions' `infer_with_literals`, so the binder passes the literal values."""
    fn_infer = _infer_round(name.upper())
    base = fn_infer(types)
    if types and types[0].name == "DECIMAL":
        digits = literals[1] if len(literals) > 1 else None
        # `fn_infer` admits only integer (or NULL) digits, whose literal value is an int.
        r = int(digits) if isinstance(digits, int) else 0
        return round_type(types[0], r).with_nullable(base.nullable)
    return base


# docs/functions.md: signature and one example per function of this module
document(
    {
        "abs": ("ABS(numeric)", "ABS(-2.5)"),
        "acos": ("ACOS(numeric)", "ACOS(0.5e0)"),
        "asin": ("ASIN(numeric)", "ASIN(0.5e0)"),
        "atan": ("ATAN(numeric)", "ATAN(1)"),
        "atan2": ("ATAN2(y, x)", "ATAN2(1, 1)"),
        "ceil": ("CEIL(numeric)", "CEIL(-1.5)"),
        "cos": ("COS(numeric)", "COS(0)"),
        "cosh": ("COSH(numeric)", "COSH(1)"),
        "cot": ("COT(numeric)", "COT(1)"),
        "degrees": ("DEGREES(numeric)", "DEGREES(PI())"),
        "e": ("E()", "E()"),
        "exp": ("EXP(numeric)", "EXP(1)"),
        "floor": ("FLOOR(numeric)", "FLOOR(-1.5)"),
        "ln": ("LN(numeric)", "LN(E())"),
        "log": ("LOG([base, ]numeric)", "LOG(2, 8)"),
        "log10": ("LOG10(numeric)", "LOG10(1000)"),
        "log2": ("LOG2(numeric)", "LOG2(8)"),
        "pi": ("PI()", "PI()"),
        "power": ("POWER(base, exponent)", "POWER(2, 10)"),
        "radians": ("RADIANS(numeric)", "RADIANS(180)"),
        "rand": ("RAND([seed])", "RAND()"),
        "round": ("ROUND(numeric[, digits])", "ROUND(2.345, 2)"),
        "sign": ("SIGN(numeric)", "SIGN(-7)"),
        "sin": ("SIN(numeric)", "SIN(0)"),
        "sinh": ("SINH(numeric)", "SINH(1)"),
        "sqrt": ("SQRT(numeric)", "SQRT(16)"),
        "tan": ("TAN(numeric)", "TAN(0)"),
        "tanh": ("TANH(numeric)", "TANH(1)"),
        "truncate": ("TRUNCATE(numeric[, digits])", "TRUNCATE(42.324, 2)"),
    }
)
