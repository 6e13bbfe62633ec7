"""CAST and TRY_CAST with Flink 2.x semantics (legacy cast behaviour disabled).

The target type is the Call's type. CAST of a malformed value (CAST('abc' AS INT)) fails
the job with `EvaluationError`; TRY_CAST gives NULL. Numeric narrowing follows Java:
integers wrap (CAST(300 AS TINYINT) = 44), DOUBLE → INT truncates toward zero and
saturates, DECIMAL rounds HALF_UP and overflows to NULL. Anything → STRING uses the SQL
client's rendering (`runtime.render`). TIMESTAMP ↔ TIMESTAMP_LTZ go through the session
time zone. ARRAY/MAP/ROW cast element-, entry- and field-wise.
"""

from __future__ import annotations

import dataclasses
import decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.errors import EvaluationError
from runtime.functions._common import (
    HALF_UP,
    calcite_name,
    decimal_type,
    java_div,
    java_int_from_double,
    null_mask,
    round_decimal,
    to_array,
    to_numpy,
)
from runtime.functions.registry import ArgValue, EvalContext, FunctionTypeError, document, scalar
from runtime.functions.zones import wall_to_instant
from runtime.map_values import map_array, map_keys, map_values
from runtime.render import local_time, render_array
from runtime.types import (
    BIGINT,
    BOOLEAN,
    BYTES,
    CHAR,
    DATE,
    DECIMAL,
    DOUBLE,
    FLOAT,
    INT,
    INTERVAL_DAY_TIME,
    INTERVAL_YEAR_MONTH,
    MAX_VARCHAR,
    SMALLINT,
    STRING,
    TIME,
    TIMESTAMP,
    TIMESTAMP_LTZ,
    TINYINT,
    DataType,
)

_CONSTRUCTED = ("ARRAY", "MULTISET", "MAP", "ROW")
_INT_BITS = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}
_INT_RANGE = {b: (-(2 ** (b - 1)), 2 ** (b - 1) - 1) for b in (8, 16, 32, 64)}

_NUMBER_RE = r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$"
# Flink's BinaryStringDataUtil.toLong: digits, then an optional '.' and digits that are
# dropped; the integer digits may be missing ('.5' and '.' are 0), the whole may not be
# empty or a bare sign
_INTEGER_RE = r"^[+-]?\d*(\.\d*)?$"
_JAVA_TRIM = r"^[\x00-\x20]+|[\x00-\x20]+$"
# CAST(string AS TIMESTAMP / TIMESTAMP_LTZ): the text as Flink's DateTimeUtils
# DEFAULT_TIMESTAMP_FORMATTER reads it: `yyyy-[MM][M]-[dd][d]`, then optionally
# ` [HH][H]:[mm][m]:[ss][s]` and a fraction of up to nine digits: one space (no 'T'), both
# colons, each time number of up to two digits (possibly none: 0), no trimming. (The Spark
# runner's CAST reads this same regex, runtime/executor/spark/text_time.py.)
_CAST_TS_RE = (
    r"^(?P<y>\d{4})-(?P<mo>\d{1,2})-(?P<d>\d{1,2})"
    r"(?: (?P<h>\d{0,2}):(?P<mi>\d{0,2}):(?P<s>\d{0,2})(?:\.(?P<f>\d{0,9}))?)?$"
)
# Flink's DateTimeUtils.parseTime (CAST(string AS TIME)): `h[:m[:s[.fraction]]]`, each number
# digits only with Java's trim around it, any number of digits and no range check (its
# milliseconds add up, so '123' is 123 hours), then an optional zone `-h[:m]` or `+h[:m]`
# that is subtracted / added. `_TIME_SPLIT_*` cut the zone off at the first '-' (else the
# first '+'); `_TIME_MAIN_RE` / `_TIME_ZONE_RE` parse the two parts.
_W = r"[\x00-\x20]*"
_TIME_SPLIT_MINUS = r"^(?P<main>[^-]*)-(?P<zone>.*)$"
_TIME_SPLIT_PLUS = r"^(?P<main>[^+]*)\+(?P<zone>.*)$"
_TIME_MAIN_RE = rf"^{_W}(?P<h>\d+){_W}(?::{_W}(?P<mi>\d+){_W}(?::{_W}(?P<s>\d+){_W}(?:\.(?P<f>.*))?)?)?$"
_TIME_ZONE_RE = rf"^{_W}(?P<h>\d+){_W}(?::{_W}(?P<mi>\d+){_W})?$"
_TRUE_WORDS = ["t", "true", "y", "yes", "1"]
_FALSE_WORDS = ["f", "false", "n", "no", "0"]


# ---------------------------------------------------------------------- support matrix
_DATETIME = ("DATE", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ")
_INTERVALS = ("INTERVAL_DAY_TIME", "INTERVAL_YEAR_MONTH")
# Flink 2.3 refuses these at planning time with a message of its own (its
# TimestampToNumericCastRule / NumericToTimestampCastRule), not Calcite's generic one
_TIMESTAMP_TO_NUMERIC = (
    "The cast from TIMESTAMP type to NUMERIC type is not allowed. "
    "It's recommended to use UNIX_TIMESTAMP(CAST(timestamp_col AS STRING)) instead."
)
_LTZ_TO_NUMERIC = "The cast from TIMESTAMP_LTZ type to NUMERIC type is not allowed."
_NUMERIC_TO_TIMESTAMP = (
    "The cast from NUMERIC type to TIMESTAMP type is not allowed. It's recommended to use "
    "TO_TIMESTAMP(FROM_UNIXTIME(numeric_col)) instead, note the numeric is in seconds."
)
_NUMERIC_TO_LTZ = (
    "The cast from NUMERIC type to TIMESTAMP_LTZ type is not allowed. It's recommended to use "
    "TO_TIMESTAMP_LTZ(numeric_col, precision) instead."
)


def cast_refusal(src: DataType, dst: DataType) -> str | None:
    """Why Flink 2.3 refuses CAST(src AS dst) at planning time, or None when it accepts it.

    The pairs are Flink's SQL validation (Calcite's cast rules for primitive types, its
    LogicalTypeCasts for constructed ones) narrowed to the pairs a runtime cast rule exists
    for, as pinned by Flink's CastFunctionITCase; docs/functions.md ("CAST") has the table."""
    s, d = src.name, dst.name
    if s == "NULL" or (s == d and s not in _CONSTRUCTED):
        return None
    if d in ("CHAR", "VARCHAR"):
        return None  # every type has a text form (ARRAY/MAP/ROW as the SQL client prints them)
    if s in _CONSTRUCTED or d in _CONSTRUCTED:
        if s != d or len(src.children) != len(dst.children):
            return _cannot(src, dst)
        for a, b in zip(src.children, dst.children, strict=True):
            if cast_refusal(a, b) is not None:
                return _cannot(src, dst)
        return None
    if src.is_string:
        return None if d not in _INTERVALS else _cannot(src, dst)
    numeric_or_bool = src.is_numeric or s == "BOOLEAN"
    if dst.is_numeric or d == "BOOLEAN":
        if numeric_or_bool:
            return None
        if s == "TIMESTAMP" and dst.is_numeric:
            return _TIMESTAMP_TO_NUMERIC
        if s == "TIMESTAMP_LTZ" and dst.is_numeric:
            return _LTZ_TO_NUMERIC
        return _cannot(src, dst)
    if d in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        if s in _DATETIME:
            return None
        if src.is_numeric:
            return _NUMERIC_TO_TIMESTAMP if d == "TIMESTAMP" else _NUMERIC_TO_LTZ
        return _cannot(src, dst)
    if d == "DATE":
        return None if s in ("TIMESTAMP", "TIMESTAMP_LTZ") else _cannot(src, dst)
    if d == "TIME":
        return None if s in ("TIMESTAMP", "TIMESTAMP_LTZ") else _cannot(src, dst)
    if d in ("BINARY", "VARBINARY"):
        return None if s in ("BINARY", "VARBINARY") else _cannot(src, dst)
    return _cannot(src, dst)


def _cannot(src: DataType, dst: DataType) -> str:
    """Calcite's message for a refused cast, with the types as Flink's SQL names them."""
    return f"Cast function cannot convert value of type {calcite_name(src)} to type {calcite_name(dst)}"


def cast_matrix() -> list[tuple[str, list[str]]]:
    """Per primitive target type, the source types CAST accepts (docs/functions.md)."""
    types = [BOOLEAN(), TINYINT(), SMALLINT(), INT(), BIGINT(), DECIMAL(), FLOAT(), DOUBLE(), CHAR(), STRING()]
    types += [DataType("BINARY", True, precision=1), BYTES(), DATE(), TIME(), TIMESTAMP(3), TIMESTAMP_LTZ(3)]
    types += [INTERVAL_YEAR_MONTH(), INTERVAL_DAY_TIME()]
    names = [_doc_name(t) for t in types]
    return [(_doc_name(d), [n for s, n in zip(types, names, strict=True) if cast_refusal(s, d) is None]) for d in types]


def _doc_name(t: DataType) -> str:
    return {"INTERVAL_YEAR_MONTH": "INTERVAL YEAR TO MONTH", "INTERVAL_DAY_TIME": "INTERVAL DAY TO SECOND"}.get(
        t.name, t.name
    )


def cast_hint(dst: DataType) -> str:
    """What a refused CAST's target accepts, for the error's hint (from cast_refusal)."""
    d = dst.name
    if d in _CONSTRUCTED:
        return f"a value casts to {d} only from another {d} whose parts cast (or use STRING as the target)"
    candidates = [BOOLEAN(), TINYINT(), STRING(), BYTES(), DATE(), TIME(), TIMESTAMP(3), TIMESTAMP_LTZ(3)]
    candidates += [INTERVAL_YEAR_MONTH(), INTERVAL_DAY_TIME()]
    names = {"TINYINT": "numeric types", "VARCHAR": "character strings", "VARBINARY": "binary strings"}
    accepted = [names.get(c.name, calcite_name(c).split("(")[0]) for c in candidates if cast_refusal(c, dst) is None]
    return f"CAST to {calcite_name(dst)} accepts: " + ", ".join(accepted)


def cast_supported(src: DataType, dst: DataType) -> bool:
    """Whether Flink accepts CAST(src AS dst) (the binder's validation); see cast_refusal."""
    return cast_refusal(src, dst) is None


# Flink's LogicalTypeCasts implicit rules: target root → source roots it takes without an
# explicit CAST (INSERT into a sink column, UNION branches, function arguments, comparisons).
_IMPLICIT_FROM: dict[str, frozenset[str]] = {
    "CHAR": frozenset({"CHAR"}),
    "VARCHAR": frozenset({"CHAR", "VARCHAR"}),
    "BOOLEAN": frozenset({"BOOLEAN"}),
    "BINARY": frozenset({"BINARY"}),
    "VARBINARY": frozenset({"BINARY", "VARBINARY"}),
    "DECIMAL": frozenset({"TINYINT", "SMALLINT", "INT", "BIGINT", "DECIMAL", "FLOAT", "DOUBLE"}),
    "TINYINT": frozenset({"TINYINT"}),
    "SMALLINT": frozenset({"TINYINT", "SMALLINT"}),
    "INT": frozenset({"TINYINT", "SMALLINT", "INT"}),
    "BIGINT": frozenset({"TINYINT", "SMALLINT", "INT", "BIGINT"}),
    "FLOAT": frozenset({"TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DECIMAL"}),
    "DOUBLE": frozenset({"TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DECIMAL", "DOUBLE"}),
    "DATE": frozenset({"DATE", "TIMESTAMP"}),
    "TIME": frozenset({"TIME", "TIMESTAMP"}),
    "TIMESTAMP": frozenset({"TIMESTAMP", "TIMESTAMP_LTZ"}),
    "TIMESTAMP_LTZ": frozenset({"TIMESTAMP_LTZ", "TIMESTAMP"}),
    "INTERVAL_YEAR_MONTH": frozenset({"INTERVAL_YEAR_MONTH"}),
    "INTERVAL_DAY_TIME": frozenset({"INTERVAL_DAY_TIME"}),
}


def implicit_cast_supported(src: DataType, dst: DataType) -> bool:
    """Whether Flink converts a `src` value to `dst` without an explicit CAST (its
    LogicalTypeCasts.supportsImplicitCast, nullability aside: the NOT NULL enforcer of a
    sink handles a nullable value going into a NOT NULL column)."""
    s, d = src.name, dst.name
    if s == "NULL":
        return True
    if s in _CONSTRUCTED or d in _CONSTRUCTED:
        if s != d or len(src.children) != len(dst.children):
            return False
        return all(implicit_cast_supported(a, b) for a, b in zip(src.children, dst.children, strict=True))
    return s in _IMPLICIT_FROM.get(d, frozenset({d}))


def _infer_cast(types: list[DataType]) -> DataType:
    """CAST's result type is the Call's own type (set by the binder); the argument type is
    all this can see, so it is returned unchanged."""
    if len(types) != 1:
        raise FunctionTypeError("CAST takes one argument")
    return types[0]


# ---------------------------------------------------------------------- entry points
@scalar("cast", _infer_cast)
def _cast(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    return cast_value(args[0], types[0], rt, ctx, strict=True)


@scalar("try_cast", _infer_cast)
def _try_cast(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    """CAST that gives NULL instead of failing. A constructed value (ARRAY, MAP, ROW) whose
    element, key, value or field fails is NULL as a whole: Flink's TRY_CAST catches the
    failure around the whole value (FLINK-31300), it does not null the element."""
    out = cast_value(args[0], types[0], rt, ctx, strict=False)
    if rt.name in _CONSTRUCTED and types[0].name in _CONSTRUCTED:
        src = to_array(args[0], len(out))
        failed = _failed_parts(src, out, rt)
        if failed.any():
            out = pc.if_else(pa.array(failed), pa.nulls(len(out), out.type), out)
    return out


def _failed_parts(src: pa.Array, out: pa.Array, dst: DataType) -> np.ndarray:
    """Per row: whether a non-NULL part of `src` became NULL in `out` (a failed TRY_CAST)."""
    present = src.is_valid().to_numpy(zero_copy_only=False)
    if dst.name in ("ARRAY", "MULTISET", "MAP"):
        src_items, out_items = src.flatten(), out.flatten()
        if dst.name == "MAP":  # entries: a key or a value that failed
            (src_keys, src_values), (out_keys, out_values) = src_items.flatten(), out_items.flatten()
            child = _failed_parts(src_keys, out_keys, dst.children[0])
            child |= _failed_parts(src_values, out_values, dst.children[1])
        else:
            child = _failed_parts(src_items, out_items, dst.children[0])
        failed = np.zeros(len(src), dtype=bool)
        parents = pc.list_parent_indices(src).to_numpy(zero_copy_only=False)
        failed[parents[child]] = True
        return failed & present
    if dst.name == "ROW":
        failed = np.zeros(len(src), dtype=bool)
        for src_field, out_field, field_type in zip(src.flatten(), out.flatten(), dst.children, strict=True):
            failed |= _failed_parts(src_field, out_field, field_type)
        return failed & present
    return present & ~out.is_valid().to_numpy(zero_copy_only=False)


def cast_value(v: ArgValue, src: DataType, dst: DataType, ctx: EvalContext, strict: bool = True) -> pa.Array:
    """`v` (of type `src`) converted to `dst`. strict: raise on malformed input (CAST),
    otherwise give NULL (TRY_CAST)."""
    n = ctx.num_rows if isinstance(v, pa.Scalar) else len(v)
    arr = to_array(v, n)
    target = dst.to_arrow()
    if src.name == "NULL" or arr.type == pa.null():
        return pa.nulls(len(arr), target)
    if len(arr) == 0:
        return pa.array([], target)
    fn = _TARGETS.get(dst.name)
    if fn is None:
        raise EvaluationError(f"Unsupported cast from {src} to {dst}")
    out = fn(arr, src, dst, ctx, strict)
    if out.type != target:
        out = out.cast(target, safe=False)
    return out


def _fail(strict: bool, bad: np.ndarray, arr: pa.Array, dst: DataType, kind: str = "number") -> None:
    """Raise for the first malformed value when strict (CAST)."""
    if strict and bad.any():
        i = int(np.flatnonzero(bad)[0])
        value = arr[i].as_py()
        if kind == "number":
            raise EvaluationError(f"java.lang.NumberFormatException: For input string: '{value}'")
        if kind == "decimal":
            raise EvaluationError(
                f"java.lang.NumberFormatException: For input string: '{value}': it does not fit in {dst} "
                "(use TRY_CAST to get NULL instead, or a wider DECIMAL)"
            )
        # the exception texts of Flink's parsers, so a failing job reads as in Flink
        if dst.name == "BOOLEAN":
            raise EvaluationError(f"Cannot parse '{value}' as BOOLEAN.")
        if dst.name in ("TIMESTAMP", "TIMESTAMP_LTZ"):
            raise EvaluationError(f"java.time.format.DateTimeParseException: Text '{value}' could not be parsed")
        raise EvaluationError(f"java.time.DateTimeException: For input string: '{value}'.")


def _strings(arr: pa.Array) -> pa.Array:
    """Text with Java's String.trim() applied (every char up to U+0020 at either end),
    as Double.parseDouble and Flink's date/time parsers trim."""
    return pc.replace_substring_regex(arr.cast(pa.string()), _JAVA_TRIM, "")


def _trim_chars(arr: pa.Array, chars: str) -> pa.Array:
    """Text with the given characters stripped at both ends: Flink's string-to-integer
    cast trims spaces only (BinaryStringData.trim), its string-to-DECIMAL parser spaces,
    tabs and newlines, so CAST('\t12' AS INT) fails while CAST('\t12' AS DECIMAL) is 12."""
    return pc.utf8_trim(arr.cast(pa.string()), characters=chars)


# ---------------------------------------------------------------------- to integers
def _to_integer(arr: pa.Array, src: DataType, dst: DataType, ctx: EvalContext, strict: bool) -> pa.Array:
    bits = _INT_BITS[dst.name]
    target = dst.to_arrow()
    nulls = null_mask(arr)
    s = src.name
    if src.is_integer:
        return pc.cast(arr, target, safe=False)
    if s in ("DOUBLE", "FLOAT"):
        vals = java_int_from_double(to_numpy(arr, 0.0), bits)
        return pa.array(vals, target, mask=nulls)
    if s == "DECIMAL":
        t = pc.round(arr, ndigits=0, round_mode="towards_zero")
        as_long = _decimal_to_int64(t)
        return pc.cast(as_long, target, safe=False)
    if s == "BOOLEAN":
        return pc.cast(arr, target)
    if s in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        ms = pc.cast(arr.cast(pa.timestamp("ms", tz=arr.type.tz), safe=False), pa.int64())
        return pc.cast(pc.divide(ms, 1000), target, safe=False)
    if src.is_string:
        text = _trim_chars(arr, " ")
        shape = pc.and_(
            pc.match_substring_regex(text, _INTEGER_RE), pc.invert(pc.match_substring_regex(text, r"^[+-]?$"))
        )
        ok = pc.fill_null(shape, True).to_numpy(zero_copy_only=False)
        int_part = pc.replace_substring_regex(text, r"\..*$", "")
        int_part = pc.if_else(pc.match_substring_regex(int_part, r"^[+-]?$"), "0", int_part)  # '.5' → 0
        int_part = pc.if_else(pa.array(ok), int_part, pa.scalar(None, pa.string()))
        parsed, overflow = _parse_int64(int_part, bits)
        bad = (~ok | overflow) & ~nulls
        _fail(strict, bad, arr, dst)
        return pa.array(parsed, target, mask=nulls | bad)
    raise EvaluationError(f"Unsupported cast from {src} to {dst}")


def _decimal_to_int64(arr: pa.Array) -> pa.Array:
    """Integral decimals to int64 with Java's long wrap-around for huge values."""
    try:
        return pc.cast(arr, pa.int64())
    except pa.ArrowInvalid:
        vals = [None if x is None else ((int(x) + 2**63) % 2**64) - 2**63 for x in arr.to_pylist()]
        return pa.array(vals, pa.int64())


def _parse_int64(text: pa.Array, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """Digits strings → int64 values and an overflow mask for the target width."""
    lo, hi = _INT_RANGE[bits]
    lengths = pc.fill_null(pc.utf8_length(pc.replace_substring_regex(text, r"^[+-]?0*", "")), 0)
    too_long = pc.greater(lengths, 19).to_numpy(zero_copy_only=False)
    safe_text = pc.if_else(pa.array(too_long), pa.scalar(None, pa.string()), text)
    as_dec = pc.cast(safe_text, pa.decimal128(20, 0))
    big = pc.fill_null(pc.cast(as_dec, pa.float64()), 0.0).to_numpy(zero_copy_only=False)
    out_of_range = too_long | (big > float(hi) + 1.0) | (big < float(lo) - 1.0)
    exact = pc.if_else(pa.array(out_of_range), pa.scalar(None, pa.decimal128(20, 0)), as_dec)
    dec_lo = pa.scalar(decimal.Decimal(lo), pa.decimal128(20, 0))
    dec_hi = pa.scalar(decimal.Decimal(hi), pa.decimal128(20, 0))
    over = pc.fill_null(pc.or_(pc.less(exact, dec_lo), pc.greater(exact, dec_hi)), False).to_numpy(zero_copy_only=False)
    overflow = out_of_range | over
    exact = pc.if_else(pa.array(overflow), pa.scalar(None, pa.decimal128(20, 0)), exact)
    vals = pc.fill_null(pc.cast(exact, pa.int64()), 0).to_numpy(zero_copy_only=False)
    return vals, overflow & text.is_valid().to_numpy(zero_copy_only=False)


# ---------------------------------------------------------------------- to floating point
def _to_floating(arr: pa.Array, src: DataType, dst: DataType, ctx: EvalContext, strict: bool) -> pa.Array:
    target = dst.to_arrow()
    s = src.name
    if src.is_integer or s in ("DOUBLE", "FLOAT", "BOOLEAN"):
        return pc.cast(arr, target, safe=False)
    if s == "DECIMAL":
        # via the exact decimal text: correctly rounded, unlike a binary conversion
        return pc.cast(pc.cast(arr, pa.string()), target)
    if src.is_string:
        # Java's Double.parseDouble / Float.parseFloat: String.trim(), then a decimal
        # number with an optional d/f suffix, or [+-]NaN / [+-]Infinity spelled so
        text = _strings(arr)
        ok_special = pc.match_substring_regex(text, r"^[+-]?(Infinity|NaN)$")
        norm = pc.replace_substring_regex(text, r"^([+-]?)Infinity$", r"\1inf")
        norm = pc.replace_substring_regex(norm, r"^[+-]NaN$", "NaN")
        norm = pc.replace_substring_regex(norm, r"([0-9.])[dDfF]$", r"\1")  # Java's 1.5d / 2f suffixes
        ok_num = pc.match_substring_regex(norm, _NUMBER_RE)
        ok = pc.fill_null(pc.or_(ok_num, ok_special), True).to_numpy(zero_copy_only=False)
        nulls = null_mask(arr)
        bad = ~ok & ~nulls
        _fail(strict, bad, arr, dst)
        clean = pc.if_else(pa.array(ok), norm, pa.scalar(None, pa.string()))
        return pc.cast(clean, target)
    raise EvaluationError(f"Unsupported cast from {src} to {dst}")


# ---------------------------------------------------------------------- to DECIMAL
def _to_decimal(arr: pa.Array, src: DataType, dst: DataType, ctx: EvalContext, strict: bool) -> pa.Array:
    p, s = dst.precision or 10, dst.scale or 0
    name = src.name
    if src.is_integer or name == "DECIMAL":
        return round_decimal(arr, p, s)
    if name == "BOOLEAN":
        return round_decimal(pc.cast(arr, pa.int8()), p, s)
    if name in ("DOUBLE", "FLOAT"):
        # Flink: BigDecimal.valueOf((double) v), the shortest decimal text of the double; a
        # FLOAT is widened first, so CAST(CAST(0.1 AS FLOAT) AS DECIMAL(10, 9)) is 0.100000001
        wide = pc.cast(arr, pa.float64())
        finite = np.isfinite(to_numpy(wide, 0.0))
        text = pc.if_else(pa.array(finite), pc.cast(wide, pa.string()), pa.scalar(None, pa.string()))
        return _decimal_from_text(text, p, s)
    if src.is_string:
        # BinaryStringDataUtil.toDecimal trims spaces, tabs and newlines; a value that does
        # not fit fails the CAST like a malformed one (Flink's CastFunctionITCase:
        # CAST('12345.6789' AS DECIMAL(8, 4)) is a NumberFormatException), TRY_CAST is NULL
        text = _trim_chars(arr, " \t\n")
        ok = pc.fill_null(pc.match_substring_regex(text, _NUMBER_RE), True).to_numpy(zero_copy_only=False)
        nulls = null_mask(arr)
        _fail(strict, ~ok & ~nulls, arr, dst)
        text = pc.if_else(pa.array(ok), text, pa.scalar(None, pa.string()))
        out = _decimal_from_text(text, p, s)
        _fail(strict, ok & ~nulls & null_mask(out), arr, dst, kind="decimal")
        return out
    raise EvaluationError(f"Unsupported cast from {src} to {dst}")


def _decimal_from_text(text: pa.Array, p: int, s: int) -> pa.Array:
    """Validated numeric strings → DECIMAL(p, s), HALF_UP, overflow → NULL."""
    try:
        wide = pc.cast(text, pa.decimal256(76, max(s + 1, 20)))
        return round_decimal(wide, p, s)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        out: list[decimal.Decimal | None] = []
        q = decimal.Decimal(1).scaleb(-s)
        limit = decimal.Decimal(10) ** (p - s)
        for t in text.to_pylist():
            if t is None or decimal.Decimal(t).adjusted() >= p - s:  # too large: overflow
                out.append(None)
                continue
            d = decimal.Decimal(t).quantize(q, rounding=decimal.ROUND_HALF_UP, context=decimal.Context(prec=200))
            out.append(d if abs(d) < limit else None)
        return pa.array(out, pa.decimal128(p, s))


# ---------------------------------------------------------------------- to BOOLEAN
def _to_boolean(arr: pa.Array, src: DataType, dst: DataType, ctx: EvalContext, strict: bool) -> pa.Array:
    if src.is_numeric:
        zero = pa.scalar(decimal.Decimal(0), arr.type) if src.name == "DECIMAL" else pa.scalar(0, arr.type)
        return pc.not_equal(arr, zero)
    if src.is_string:
        text = pc.utf8_lower(arr.cast(pa.string()))  # no trimming: CAST('  true ' AS BOOLEAN) fails
        is_true = pc.is_in(text, value_set=pa.array(_TRUE_WORDS))
        is_false = pc.is_in(text, value_set=pa.array(_FALSE_WORDS))
        bad = ~(is_true.to_numpy(zero_copy_only=False) | is_false.to_numpy(zero_copy_only=False)) & ~null_mask(arr)
        _fail(strict, bad, arr, dst, kind="value")
        return pa.array(is_true.to_numpy(zero_copy_only=False), pa.bool_(), mask=null_mask(arr) | bad)
    if src.name == "BOOLEAN":
        return arr
    raise EvaluationError(f"Unsupported cast from {src} to {dst}")


# ---------------------------------------------------------------------- to STRING / BYTES
def _to_string(arr: pa.Array, src: DataType, dst: DataType, ctx: EvalContext, strict: bool) -> pa.Array:
    if src.name in ("BINARY", "VARBINARY"):
        # malformed UTF-8 is replaced, not an error, so TRY_CAST gives the same text
        text = _utf8_replacing(arr)
    elif src.name in _CONSTRUCTED and _has_binary(src):
        # Flink casts each element to STRING with the same rules, so bytes inside an ARRAY,
        # MAP or ROW are decoded as UTF-8 ("[ab]"), not printed as the client prints them
        textual = _binary_as_text(src)
        text = render_array(cast_value(arr, src, textual, ctx, strict), textual, ctx.time_zone)
    else:
        text = render_array(arr, src, ctx.time_zone)
    n = dst.precision or MAX_VARCHAR
    if n < MAX_VARCHAR:
        text = pc.utf8_slice_codeunits(text, 0, n)
        if dst.name == "CHAR":
            text = pc.utf8_rpad(text, width=n, padding=" ")
    return text


def _has_binary(t: DataType) -> bool:
    return t.name in ("BINARY", "VARBINARY") or any(_has_binary(c) for c in t.children)


def _binary_as_text(t: DataType) -> DataType:
    """`t` with every BINARY/VARBINARY inside it replaced by STRING."""
    if t.name in ("BINARY", "VARBINARY"):
        return STRING(t.nullable)
    return dataclasses.replace(t, children=tuple(_binary_as_text(c) for c in t.children))


def _utf8_replacing(arr: pa.Array) -> pa.Array:
    """Bytes as UTF-8 text, a malformed byte becoming U+FFFD (Java's new String(bytes, UTF_8),
    which CAST(bytes AS STRING) uses): Arrow's cast when all is valid, else per value."""
    try:
        return pc.cast(arr, pa.string())
    except pa.ArrowInvalid:
        return pa.array(
            [None if b is None else b.decode("utf-8", errors="replace") for b in arr.to_pylist()], pa.string()
        )


def _to_binary(arr: pa.Array, src: DataType, dst: DataType, ctx: EvalContext, strict: bool) -> pa.Array:
    if src.is_string or src.name in ("BINARY", "VARBINARY"):
        out = pc.cast(arr, pa.binary())
        n = dst.precision or MAX_VARCHAR
        if n < MAX_VARCHAR:
            if dst.name == "BINARY":  # Flink pads a BINARY(n) with zero bytes
                out = pc.binary_join_element_wise(out, pa.scalar(b"\x00" * n), b"")
            out = pc.binary_slice(out, 0, n)
        return out
    raise EvaluationError(f"Unsupported cast from {src} to {dst}")


# ---------------------------------------------------------------------- temporal
def _scalar_as_array(v: pa.Scalar) -> pa.Array:
    """A one-row array of a temporal scalar, via its raw integer (no Python datetime,
    which cannot hold year 0000)."""
    raw = getattr(v, "value", None) if v.is_valid else None
    return pa.array([raw], pa.int64()).cast(v.type)


def ltz_to_timestamp(v: ArgValue, time_zone: str, target: pa.DataType) -> ArgValue:
    """TIMESTAMP_LTZ instant → the wall-clock TIMESTAMP in the session zone."""
    if isinstance(v, pa.Scalar):
        return ltz_to_timestamp(_scalar_as_array(v), time_zone, target)[0]
    return local_time(v, time_zone).cast(target, safe=False)


def timestamp_to_ltz(v: ArgValue, time_zone: str, target: pa.DataType) -> ArgValue:
    """Wall-clock TIMESTAMP in the session zone → the TIMESTAMP_LTZ instant, with Java's
    `atZone` rules: a time in a DST gap moves forward by the gap's length, an ambiguous
    one takes the earlier offset (see `runtime.functions.zones`)."""
    if isinstance(v, pa.Scalar):
        return timestamp_to_ltz(_scalar_as_array(v), time_zone, target)[0]
    return wall_to_instant(v, time_zone).cast(target, safe=False)


_NANOS_RANGE = "TIMESTAMP(7..9) values before 1677-09-22 or after 2262-04-11 are not supported"
_UNIT_PER_US = {"s": (1_000_000, 0), "ms": (1000, 0), "us": (1, 0), "ns": (0, 1000)}
_US_PER_DAY = 86_400_000_000


def _units_from_micros(us: np.ndarray, nanos: np.ndarray, unit: str, mask: np.ndarray) -> np.ndarray:
    """Microseconds (+ sub-microsecond nanos) → int64 in an Arrow timestamp unit (floor).
    Arrow's nanosecond timestamps only reach 1677..2262, so TIMESTAMP(7..9) values
    outside that range cannot be represented and fail clearly instead of wrapping."""
    div, mul = _UNIT_PER_US[unit]
    if div:
        return np.floor_divide(us, div)
    lo, hi = np.iinfo(np.int64).min // mul + 1, np.iinfo(np.int64).max // mul - 1
    out_of_range = ((us < lo) | (us > hi)) & ~mask
    if out_of_range.any():
        raise EvaluationError(_NANOS_RANGE)
    return np.where(mask, 0, us) * mul + nanos


def _parse_cast_timestamp(arr: pa.Array, dst: DataType, strict: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Strings → (microseconds since epoch, nanoseconds below the microsecond, bad-or-null
    mask), as Flink's CAST parses them (`_CAST_TS_RE`) and java.time's SMART resolver then
    resolves them: years 0000..9999 (Flink's TIMESTAMP range; java.time's year-of-era would
    refuse 0000, not verified against Flink), a day past the month's end but not past 31 becomes its
    last day ('2024-02-30' is 2024-02-29), 24:00:00 is midnight of the next day; an hour
    above 23 (else), a minute or second above 59 fails."""
    text = arr.cast(pa.string())
    nulls = null_mask(arr)
    parts = pc.extract_regex(text, _CAST_TS_RE)
    ok = to_numpy(parts.is_valid(), False)

    def num(name: str) -> np.ndarray:
        col = pc.fill_null(parts.field(name), "0")
        col = pc.if_else(pc.equal(col, ""), "0", col)
        return to_numpy(pc.cast(col, pa.int64()), 0).astype(np.int64)

    y, mo, d, h, mi, sec = (num(n) for n in ("y", "mo", "d", "h", "mi", "s"))
    f_text = pc.utf8_rpad(pc.fill_null(parts.field("f"), ""), width=9, padding="0")
    frac = to_numpy(pc.cast(f_text, pa.int64()), 0).astype(np.int64)
    end_of_day = (h == 24) & (mi == 0) & (sec == 0) & (frac == 0)
    ok &= (y >= 0) & (mo >= 1) & (mo <= 12) & (d >= 1) & (d <= 31) & ((h <= 23) | end_of_day)
    ok &= (mi <= 59) & (sec <= 59)
    month = ((np.clip(y, 0, 9999) - 1970) * 12 + np.clip(mo, 1, 12) - 1).astype("datetime64[M]")
    days_in_month = ((month + 1).astype("datetime64[D]") - month.astype("datetime64[D]")).astype(np.int64)
    d = np.minimum(d, days_in_month)  # SMART: the previous valid day
    bad = ~ok & ~nulls
    _fail(strict, bad, arr, dst, "value")
    days = month.astype("datetime64[D]").astype(np.int64) + d - 1 + end_of_day
    h = np.where(end_of_day, 0, h)
    us = days * _US_PER_DAY + ((h * 60 + mi) * 60 + sec) * 1_000_000 + frac // 1000
    return np.where(ok, us, 0), frac % 1000, nulls | bad


def _to_timestamp(arr: pa.Array, src: DataType, dst: DataType, ctx: EvalContext, strict: bool) -> pa.Array:
    target = dst.to_arrow()
    naive = pa.timestamp(target.unit)
    name = src.name
    precision = 6 if dst.precision is None else dst.precision
    if src.is_string:
        us, nanos, mask = _parse_cast_timestamp(arr, dst, strict)
        raw = _units_from_micros(us, nanos, target.unit, mask)
        # the fraction beyond the precision is cut off (DateTimeUtils.parseTimestampData)
        local = pa.array(_truncate(raw, target.unit, precision, toward_zero=False), pa.int64(), mask=mask).cast(naive)
    elif name == "DATE":
        local = pc.cast(arr, pa.timestamp("ms")).cast(naive)
    elif name == "TIME":
        # Flink's TimeToTimestampCastRule: the time of day on 1970-01-01
        ms = pc.cast(pc.cast(arr, pa.time32("ms")), pa.int32())
        local = pc.cast(pc.cast(ms, pa.int64()), pa.timestamp("ms")).cast(naive)
    elif name in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        return _timestamp_to_timestamp(arr, src, dst, ctx)
    elif src.is_integer and dst.name == "TIMESTAMP_LTZ":
        ms = pc.multiply(pc.cast(arr, pa.int64()), 1000)
        return pc.cast(ms, pa.timestamp("ms", tz="UTC")).cast(target)
    else:
        raise EvaluationError(f"Unsupported cast from {src} to {dst}")
    if dst.name == "TIMESTAMP_LTZ":
        return timestamp_to_ltz(local, ctx.time_zone, target)
    return local


def _timestamp_to_timestamp(arr: pa.Array, src: DataType, dst: DataType, ctx: EvalContext) -> pa.Array:
    """Flink's TimestampToTimestampCastRule: convert through the session zone when one side
    is a TIMESTAMP_LTZ, then, if the target precision is lower, cut the value with
    DateTimeUtils.truncate (epoch milliseconds toward zero for a precision up to 3, the
    digits below the millisecond floored above it). A rowtime/proctime TIMESTAMP keeps
    millisecond precision whatever the target says (the rule's time-attribute exception)."""
    target = dst.to_arrow()
    src_p = 6 if src.precision is None else src.precision
    dst_p = 6 if dst.precision is None else dst.precision
    if src.name == "TIMESTAMP" and dst.name == "TIMESTAMP" and src.time_attr in ("ROWTIME", "PROCTIME"):
        dst_p = 3
    if src.name == "TIMESTAMP_LTZ" and dst.name == "TIMESTAMP":
        arr = local_time(arr, ctx.time_zone)
    elif src.name == "TIMESTAMP" and dst.name == "TIMESTAMP_LTZ":
        arr = timestamp_to_ltz(arr, ctx.time_zone, pa.timestamp(arr.type.unit, tz="UTC"))
    unit = arr.type.unit
    tz = target.tz
    if src_p > dst_p:
        raw = to_numpy(pc.cast(arr, pa.int64()), 0).astype(np.int64)
        cut = _truncate(raw, unit, dst_p, toward_zero=True)
        arr = pa.array(cut, pa.int64(), mask=null_mask(arr))
    try:
        return arr.cast(pa.timestamp(unit, tz=tz)).cast(target)
    except pa.ArrowInvalid:  # a finer unit than the value's range allows (ns: 1677..2262)
        raise EvaluationError(_NANOS_RANGE) from None


_PER_MS = {"s": 0, "ms": 1, "us": 1000, "ns": 1_000_000}


def _truncate(values: np.ndarray, unit: str, precision: int, toward_zero: bool) -> np.ndarray:
    """Timestamps (int64 in `unit`) cut to `precision` fractional digits: below the
    millisecond always floored; at or above it floored, or cut toward zero on the epoch
    milliseconds as Flink's DateTimeUtils.truncate does (pre-1970 values move up)."""
    per_ms = _PER_MS[unit]
    unit_digits = {1: 3, 1000: 6, 1_000_000: 9}[per_ms]
    if precision >= unit_digits:
        return values
    if precision > 3:
        step = 10 ** (unit_digits - precision)
        return np.floor_divide(values, step) * step
    ms = np.floor_divide(values, per_ms)
    step = 10 ** (3 - precision)
    ms = (java_div(ms, step) if toward_zero else np.floor_divide(ms, step)) * step
    return ms * per_ms


# Flink's DateTimeUtils.parseDate: text after a space (not at the start) is ignored, and
# month and day may be left out ('12' is 0012-01-01); each part may carry spaces but no
# sign (its isInteger check), so '-0' is NULL although year 0 itself is valid.
_LENIENT_DATE_RE = r"^\s*(?P<y>\d+)\s*(?:-\s*(?P<m>\d+)\s*(?:-\s*(?P<d>\d+)\s*)?)?$"


def _parse_date(arr: pa.Array, dst: DataType, strict: bool) -> tuple[np.ndarray, np.ndarray]:
    """Strings → (days since epoch, bad-or-null mask), as Flink's CAST(string AS DATE)."""
    text = pc.replace_substring_regex(_strings(arr), pattern=r"^(\S[^ ]*) .*$", replacement=r"\1")
    nulls = null_mask(arr)
    parts = pc.extract_regex(text, _LENIENT_DATE_RE)
    ok = parts.is_valid().to_numpy(zero_copy_only=False)

    def num(name: str, default: str) -> np.ndarray:
        col = pc.fill_null(parts.field(name), default)
        col = pc.if_else(pc.equal(col, ""), default, col)
        return to_numpy(pc.cast(col, pa.int64()), 0).astype(np.int64)

    y, mo, d = num("y", "0"), num("m", "1"), num("d", "1")
    # DateTimeUtils.isIllegalDate accepts years 0..9999 (proleptic Gregorian, year 0 leap)
    valid = ok & (y >= 0) & (y <= 9999) & (mo >= 1) & (mo <= 12) & (d >= 1)
    month = ((np.clip(y, 0, 9999) - 1970) * 12 + np.clip(mo, 1, 12) - 1).astype("datetime64[M]")
    days_in_month = ((month + 1).astype("datetime64[D]") - month.astype("datetime64[D]")).astype(np.int64)
    valid &= d <= days_in_month
    bad = ~valid & ~nulls
    _fail(strict, bad, arr, dst, "value")
    days = month.astype("datetime64[D]").astype(np.int64) + d - 1
    return days, nulls | bad


def _to_date(arr: pa.Array, src: DataType, dst: DataType, ctx: EvalContext, strict: bool) -> pa.Array:
    name = src.name
    if src.is_string:
        days, mask = _parse_date(arr, dst, strict)
        return pa.array(days.astype(np.int32), pa.date32(), mask=mask)
    if name == "TIMESTAMP_LTZ":
        ts = local_time(arr, ctx.time_zone).cast(pa.timestamp("ms"), safe=False)
        days = np.floor_divide(to_numpy(pc.cast(ts, pa.int64()), 0), 86_400_000).astype(np.int32)
        return pa.array(days, pa.date32(), mask=null_mask(arr))
    if name == "TIMESTAMP":
        # Flink 2.3 divides the epoch millis by a day's millis truncating, as Java's `/`:
        # 1969-12-31 23:59:59.999 becomes 1970-01-01 (the functions oracle corpus)
        ts = arr.cast(pa.timestamp("ms"), safe=False)
        days = java_div(to_numpy(pc.cast(ts, pa.int64()), 0), 86_400_000).astype(np.int32)
        return pa.array(days, pa.date32(), mask=null_mask(arr))
    if name == "DATE":
        return arr
    raise EvaluationError(f"Unsupported cast from {src} to {dst}")


def _parse_time(arr: pa.Array, dst: DataType, strict: bool) -> tuple[np.ndarray, np.ndarray]:
    """Strings → (milliseconds as Flink's DateTimeUtils.parseTime computes them, bad-or-null
    mask). Not cut to a day: '123' is 123 hours (Flink prints it '23:00:00', the last two
    digits of the hour, `runtime.render`), '12:60' is 13:00; the sum wraps as Java's int."""
    text = arr.cast(pa.string())
    nulls = null_mask(arr)
    minus = pc.extract_regex(text, _TIME_SPLIT_MINUS)
    has_minus = minus.is_valid()
    plus = pc.extract_regex(text, _TIME_SPLIT_PLUS)
    has_plus = pc.and_(pc.invert(has_minus), plus.is_valid())
    main = pc.if_else(has_minus, minus.field("main"), pc.if_else(has_plus, plus.field("main"), text))
    zone = pc.if_else(has_minus, minus.field("zone"), pc.if_else(has_plus, plus.field("zone"), pa.scalar("0")))
    sign = np.where(to_numpy(has_minus, False), -1, 1).astype(np.int64)
    m_parts = pc.extract_regex(main, _TIME_MAIN_RE)
    z_parts = pc.extract_regex(zone, _TIME_ZONE_RE)
    ok = to_numpy(pc.and_(m_parts.is_valid(), z_parts.is_valid()), False)
    # Flink looks for the colons and the dot in the whole text: one that lies in the zone
    # part while the time part still lacks it makes a number span the sign (refused).
    zone_colon = to_numpy(pc.match_substring(zone, ":"), False)
    zone_dot = to_numpy(pc.match_substring(zone, "."), False)
    # (a group that took no part in the match reads as "")
    has_s = to_numpy(pc.greater(pc.utf8_length(pc.fill_null(m_parts.field("s"), "")), 0), False)
    has_f = has_s & to_numpy(pc.match_substring(main, "."), False)
    ok &= ~(zone_colon & ~has_s) & ~(zone_dot & has_s & ~has_f)

    def num(parts: pa.StructArray, name: str) -> tuple[np.ndarray, np.ndarray]:
        """The digits as a number, and where they overflow Java's int (Integer.parseInt fails)."""
        digits = pc.fill_null(parts.field(name), "0")
        digits = pc.replace_substring_regex(digits, r"^0+(\d)", r"\1")
        digits = pc.if_else(pc.equal(digits, ""), pa.scalar("0"), digits)
        too_long = to_numpy(pc.greater(pc.utf8_length(digits), 10), False)
        digits = pc.if_else(too_long, pa.scalar("0"), digits)
        values = to_numpy(pc.cast(digits, pa.int64()), 0).astype(np.int64)
        return values, too_long | (values > 2**31 - 1)

    h, over_h = num(m_parts, "h")
    mi, over_mi = num(m_parts, "mi")
    sec, over_s = num(m_parts, "s")
    zh, over_zh = num(z_parts, "h")
    zm, over_zm = num(z_parts, "mi")
    ok &= ~(over_h | over_mi | over_s | over_zh | over_zm)
    milli = _parse_fraction(m_parts.field("f"))
    total = (h + sign * zh) * 3_600_000 + (mi + sign * zm) * 60_000 + sec * 1000 + milli
    total = (total + 2**31) % 2**32 - 2**31  # Java int arithmetic
    bad = ~ok & ~nulls
    _fail(strict, bad, arr, dst, "value")
    return np.where(ok, total, 0), nulls | bad


def _parse_fraction(frac: pa.Array) -> np.ndarray:
    """Milliseconds of the text after the dot, as Flink's DateTimeUtils.parseFraction: Java's
    trim, then the first three characters as hundreds, tens and ones (a non-digit counts 0),
    plus one when the fourth is '5' or above (any character from '5' up, as Flink compares)."""
    text = pc.replace_substring_regex(pc.fill_null(frac, ""), _JAVA_TRIM, "")
    padded = pc.utf8_rpad(text, 4, "\x00")
    total = np.zeros(len(frac), dtype=np.int64)
    for i, weight in enumerate((100, 10, 1)):  # three characters, not a loop over rows
        ch = pc.utf8_slice_codeunits(padded, i, i + 1)
        digit = pc.if_else(pc.match_substring_regex(ch, r"^[0-9]$"), ch, pa.scalar("0"))
        total += to_numpy(pc.cast(digit, pa.int64()), 0).astype(np.int64) * weight
    fourth = pc.utf8_slice_codeunits(padded, 3, 4)
    total += to_numpy(pc.greater_equal(fourth, "5"), False).astype(np.int64)
    return total


def _to_time(arr: pa.Array, src: DataType, dst: DataType, ctx: EvalContext, strict: bool) -> pa.Array:
    """The time of day in milliseconds, cut to the target's precision (a TIME(0) holds whole
    seconds: CAST('12:34:56.789' AS TIME) = TIME '12:34:56')."""
    name = src.name
    step = 10 ** (3 - min(3, 0 if dst.precision is None else dst.precision))
    if src.is_string:
        raw, mask = _parse_time(arr, dst, strict)
        ms = java_div(raw, step) * step
        return pa.array(ms.astype(np.int32), pa.time32("ms"), mask=mask)
    if name == "TIMESTAMP_LTZ":
        arr = local_time(arr, ctx.time_zone)
        name = "TIMESTAMP"
    if name == "TIMESTAMP":
        raw = to_numpy(pc.cast(arr, pa.int64()), 0).astype(np.int64)
        ms = np.floor_divide(raw, _PER_MS[arr.type.unit])
        ms = np.mod(ms, 86_400_000) // step * step
        return pa.array(ms.astype(np.int32), pa.time32("ms"), mask=null_mask(arr))
    if name == "TIME":
        if step == 1:
            return arr
        ms = to_numpy(pc.cast(pc.cast(arr, pa.time32("ms")), pa.int32()), 0).astype(np.int64) // step * step
        return pa.array(ms.astype(np.int32), pa.time32("ms"), mask=null_mask(arr))
    raise EvaluationError(f"Unsupported cast from {src} to {dst}")


# ---------------------------------------------------------------------- nested
def _to_array(arr: pa.Array, src: DataType, dst: DataType, ctx: EvalContext, strict: bool) -> pa.Array:
    if src.name not in ("ARRAY", "MULTISET"):
        raise EvaluationError(f"Unsupported cast from {src} to {dst}")
    values = arr.flatten()
    inner = cast_value(values, src.children[0], dst.children[0], ctx, strict)
    offsets = pc.subtract(arr.offsets, arr.offsets[0])
    return pa.ListArray.from_arrays(offsets, inner, type=dst.to_arrow(), mask=arr.is_null())


def _to_map(arr: pa.Array, src: DataType, dst: DataType, ctx: EvalContext, strict: bool) -> pa.Array:
    if src.name != "MAP":
        raise EvaluationError(f"Unsupported cast from {src} to {dst}")
    raw = arr.offsets
    lo = raw[0].as_py()
    hi = raw[-1].as_py()
    keys = cast_value(map_keys(arr).slice(lo, hi - lo), src.children[0], dst.children[0], ctx, strict)
    items = cast_value(map_values(arr).slice(lo, hi - lo), src.children[1], dst.children[1], ctx, strict)
    offsets = pc.subtract(raw, lo)
    mask = arr.is_null() if arr.null_count else None
    return map_array(offsets, keys, items, dst.to_arrow(), mask=mask)


def _to_row(arr: pa.Array, src: DataType, dst: DataType, ctx: EvalContext, strict: bool) -> pa.Array:
    if src.name != "ROW":
        raise EvaluationError(f"Unsupported cast from {src} to {dst}")
    children = arr.flatten()
    fields = [
        cast_value(c, st, dt, ctx, strict) for c, st, dt in zip(children, src.children, dst.children, strict=True)
    ]
    return pa.StructArray.from_arrays(fields, fields=list(dst.to_arrow()), mask=arr.is_null())


def _identity(arr: pa.Array, src: DataType, dst: DataType, ctx: EvalContext, strict: bool) -> pa.Array:
    if src.name != dst.name:
        raise EvaluationError(f"Unsupported cast from {src} to {dst}")
    return arr


_TARGETS = {
    "TINYINT": _to_integer,
    "SMALLINT": _to_integer,
    "INT": _to_integer,
    "BIGINT": _to_integer,
    "FLOAT": _to_floating,
    "DOUBLE": _to_floating,
    "DECIMAL": _to_decimal,
    "BOOLEAN": _to_boolean,
    "CHAR": _to_string,
    "VARCHAR": _to_string,
    "BINARY": _to_binary,
    "VARBINARY": _to_binary,
    "TIMESTAMP": _to_timestamp,
    "TIMESTAMP_LTZ": _to_timestamp,
    "DATE": _to_date,
    "TIME": _to_time,
    "ARRAY": _to_array,
    "MULTISET": _to_array,
    "MAP": _to_map,
    "ROW": _to_row,
    "INTERVAL_DAY_TIME": _identity,
    "INTERVAL_YEAR_MONTH": _identity,
}

__all__ = [
    "cast_value",
    "cast_supported",
    "cast_refusal",
    "cast_hint",
    "ltz_to_timestamp",
    "timestamp_to_ltz",
    "HALF_UP",
    "decimal_type",
]


# docs/functions.md: signature and one example per function of this module
document(
    {
        "cast": ("CAST(v AS type)", "CAST('42' AS INT)"),
        "try_cast": ("TRY_CAST(v AS type)", "TRY_CAST('x' AS INT)"),
    }
)
