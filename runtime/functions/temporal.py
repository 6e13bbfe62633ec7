"""Temporal scalar functions with Flink 2.3 semantics, vectorized with numpy/Arrow.

Conventions (docs/architecture.md): TIMESTAMP(3) is Arrow timestamp('ms') holding the
wall clock; TIMESTAMP_LTZ(3) is timestamp('ms', tz='UTC') holding the instant, shown in
the session zone `ctx.time_zone`. Internally everything is int64 epoch milliseconds:
"wall" ms (a wall clock read as if it were UTC) or "instant" ms; `to_wall` / `to_instant`
convert between them for a zone.

Parsing/formatting follows the Java class Flink uses for each function (see
`datetime_patterns`): TO_TIMESTAMP(s, fmt) is DateTimeFormatter (strict: NULL for
'32.01.2024'), TO_DATE(s, fmt) / UNIX_TIMESTAMP / DATE_FORMAT(string) are SimpleDateFormat
(lenient, prefix parse). Unparsable input gives NULL (UNIX_TIMESTAMP: Long.MIN_VALUE).
EXTRACT uses floor arithmetic, so pre-1970 values get the correct fields (Flink 2.3 has a
bug there; see tests/conformance/flink-bugs/022_temporal_extract).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.batch import MIN_WATERMARK
from runtime.errors import EvaluationError
from runtime.functions import datetime_patterns as dp
from runtime.functions._common import java_div, java_rem
from runtime.functions._text_common import (
    any_nullable,
    check_arity,
    const,
    grouped_apply,
    is_integerish,
    is_scalar,
    is_stringish,
    np_ints,
    np_valid,
    require,
    to_array,
)
from runtime.functions.arithmetic import add_months_days
from runtime.functions.registry import ArgValue, EvalContext, FunctionTypeError, document, scalar
from runtime.functions.zones import wall_to_instant
from runtime.state.ttl import now_ms
from runtime.types import BIGINT, DATE, INT, STRING, TIME, TIMESTAMP, TIMESTAMP_LTZ, DataType

STR = pa.string()
TS = pa.timestamp("ms")
TS_LTZ = pa.timestamp("ms", tz="UTC")
LONG_MIN = -(2**63)


# ---------------------------------------------------------------------- zone helpers


def normalize_zone(tz: str) -> str:
    """A Java zone id in a form Arrow accepts ('GMT+08:00' -> '+08:00', 'Z' -> 'UTC')."""
    t = tz.strip()
    if t in ("Z", "GMT", "UT", "UTC"):
        return "UTC"
    for prefix in ("GMT", "UTC", "UT"):
        if t.startswith(prefix) and len(t) > len(prefix) and t[len(prefix)] in "+-":
            t = t[len(prefix) :]
            break
    if t and t[0] in "+-":
        body = t[1:].replace(":", "")
        if body.isdigit():
            hh = int(body[:2]) if len(body) > 2 else int(body)
            mm = int(body[2:4]) if len(body) > 2 else 0
            return f"{t[0]}{hh:02d}:{mm:02d}"
    return t


def _is_utc(tz: str) -> bool:
    return normalize_zone(tz) in ("UTC", "+00:00", "-00:00", "Etc/UTC")


def to_wall(instant_ms: np.ndarray, tz: str) -> np.ndarray:
    """Instant epoch ms -> wall-clock ms in zone `tz`."""
    if _is_utc(tz):
        return instant_ms
    arr = pa.array(instant_ms, pa.timestamp("ms", tz=normalize_zone(tz)))
    return pc.local_timestamp(arr).cast(pa.int64()).to_numpy(zero_copy_only=False)


def to_instant(wall_ms: np.ndarray, tz: str) -> np.ndarray:
    """Wall-clock ms in zone `tz` -> instant epoch ms, as Java's `LocalDateTime.atZone`:
    the earlier offset in an overlap, a time in a DST gap shifted forward by the gap."""
    if _is_utc(tz):
        return wall_ms
    inst = wall_to_instant(pa.array(wall_ms, TS), normalize_zone(tz))
    return inst.cast(pa.int64()).to_numpy(zero_copy_only=False)


def _ms_of(a: pa.Array, t: DataType) -> np.ndarray:
    """int64 epoch ms of a TIMESTAMP/TIMESTAMP_LTZ/DATE/TIME array (nulls as 0)."""
    if t.name == "DATE":
        return np_ints(a.cast(pa.int32())) * dp.MS_PER_DAY
    if t.name == "TIME":
        return np_ints(a.cast(pa.int32()))
    if pa.types.is_timestamp(a.type) and a.type.unit != "ms":
        raw = np_ints(a.cast(pa.int64()))
        div = {"s": None, "us": 1000, "ns": 1_000_000}[a.type.unit]
        return raw * 1000 if div is None else np.floor_divide(raw, div)
    return np_ints(a.cast(pa.int64()))


def wall_ms(a: pa.Array, t: DataType, tz: str) -> np.ndarray:
    """Wall-clock ms of a temporal value (TIMESTAMP_LTZ converted to the session zone)."""
    ms = _ms_of(a, t)
    return to_wall(ms, tz) if t.name == "TIMESTAMP_LTZ" else ms


def _ts_array(ms: np.ndarray, valid: np.ndarray, arrow_type: pa.DataType = TS) -> pa.Array:
    return pa.array(ms, pa.int64(), mask=~valid).cast(arrow_type)


def _arr(v: ArgValue, ctx: EvalContext) -> pa.Array:
    return to_array(v, ctx.num_rows)


def _maybe_scalar(out: pa.Array, args: list[ArgValue]) -> ArgValue:
    """A scalar result when every argument was a literal (lets the evaluator fold)."""
    if args and all(is_scalar(a) for a in args) and len(out) >= 1:
        return out[0]
    return out


# ---------------------------------------------------------------------- type helpers


def _is_temporal(t: DataType) -> bool:
    return t.name in ("TIMESTAMP", "TIMESTAMP_LTZ", "DATE", "NULL")


def _ts3(nullable: bool) -> DataType:
    return TIMESTAMP(3, nullable)


# ---------------------------------------------------------------------- parse


def _infer_to_timestamp(types: list[DataType]) -> DataType:
    check_arity("to_timestamp", types, 1, 2)
    require("to_timestamp", types, [is_stringish, is_stringish], "TO_TIMESTAMP(<CHARACTER>[, <CHARACTER>])")
    return _ts3(True)


@scalar("to_timestamp", _infer_to_timestamp)
def to_timestamp(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    """TIMESTAMP(3) from 'yyyy-MM-dd HH:mm:ss[.SSS]' or a date-only string, or with a
    DateTimeFormatter pattern; NULL when unparsable."""
    s = _arr(args[0], ctx)
    if len(args) == 1:
        ms, ok = dp.parse_default_timestamp(s, smart=True)
        return _maybe_scalar(_ts_array(ms, ok & np_valid(s)), args)

    def run(sub: list[ArgValue], p: list[Any]) -> ArgValue:
        strings = sub[0]
        try:
            ms, ok = dp.parse(strings, p[0], lenient=False)
        except ValueError:
            return pa.nulls(len(strings), TS)
        return _ts_array(ms, ok & np_valid(strings))

    return _maybe_scalar(grouped_apply([s, args[1]], [1], run, ctx.num_rows, TS), args)


def _infer_to_date(types: list[DataType]) -> DataType:
    check_arity("to_date", types, 1, 2)
    require("to_date", types, [is_stringish, is_stringish], "TO_DATE(<CHARACTER>[, <CHARACTER>])")
    return DATE(True)


@scalar("to_date", _infer_to_date)
def to_date(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    """DATE from 'yyyy-MM-dd' (a time part after a space is ignored) or with a lenient
    SimpleDateFormat pattern (trailing text ignored, '32.01.2024' -> 2024-02-01)."""
    s = _arr(args[0], ctx)
    if len(args) == 1:
        days, ok = dp.parse_default_date(s)
        return _maybe_scalar(
            pa.array(days.astype(np.int32), pa.int32(), mask=~(ok & np_valid(s))).cast(pa.date32()), args
        )

    def run(sub: list[ArgValue], p: list[Any]) -> ArgValue:
        strings = sub[0]
        try:
            ms, ok = dp.parse(strings, p[0], lenient=True)
        except ValueError:
            return pa.nulls(len(strings), pa.date32())
        days = np.floor_divide(ms, dp.MS_PER_DAY).astype(np.int32)
        return pa.array(days, pa.int32(), mask=~(ok & np_valid(strings))).cast(pa.date32())

    return _maybe_scalar(grouped_apply([s, args[1]], [1], run, ctx.num_rows, pa.date32()), args)


def _infer_to_timestamp_ltz(types: list[DataType]) -> DataType:
    return _infer_to_timestamp_ltz_lit(types, [None] * len(types))


_LTZ_PRECISIONS = (0, 3, 6, 9)
# Flink's TIMESTAMP range in milliseconds: 0000-01-01 00:00:00 .. 9999-12-31 23:59:59.999
_MIN_MS, _MAX_MS = -62167219200000, 253402300799999


def _infer_to_timestamp_ltz_lit(types: list[DataType], literals: list[object]) -> DataType:
    check_arity("to_timestamp_ltz", types, 1, 3)
    t0 = types[0]
    if t0.is_string:
        require(
            "to_timestamp_ltz",
            types,
            [is_stringish, is_stringish, is_stringish],
            "TO_TIMESTAMP_LTZ(<STRING>[, <STRING>[, <STRING>]])",
        )
        # the precision of the format's fraction (SSSSSS: 6), at least 3
        fmt = literals[1] if len(literals) > 1 and isinstance(literals[1], str) else ""
        runs = [len(r) for r in re.findall("S+", re.sub("'[^']*'", "", fmt))]
        return TIMESTAMP_LTZ(min(max([3, *runs]), 9), True)
    if not (t0.is_numeric or t0.name == "NULL"):
        raise FunctionTypeError(
            f"Unsupported argument type {t0} for TO_TIMESTAMP_LTZ: expected a numeric epoch value (and a precision)"
        )
    if len(types) > 2 or (len(types) == 2 and not is_integerish(types[1])):
        raise FunctionTypeError("TO_TIMESTAMP_LTZ(<NUMERIC>, <INTEGER precision>) expects a literal precision")
    precision = literals[1] if len(literals) > 1 and literals[1] is not None else 3
    if precision not in _LTZ_PRECISIONS:
        raise FunctionTypeError(
            f"The precision value '{precision}' for function TO_TIMESTAMP_LTZ is unsupported, "
            "the supported value is '0', '3', '6' or '9'"
        )
    # out of range epochs give NULL, so the result is nullable
    return TIMESTAMP_LTZ(max(3, int(precision)), True)


@scalar("to_timestamp_ltz", _infer_to_timestamp_ltz, infer_with_literals=_infer_to_timestamp_ltz_lit)
def to_timestamp_ltz(
    args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext
) -> ArgValue:
    """TIMESTAMP_LTZ from an epoch in seconds (precision 0), milliseconds (3, the default),
    microseconds (6) or nanoseconds (9), or from a timestamp string read in the given zone
    (default UTC, whatever the session zone: Flink's documented default).

    As Flink: a DECIMAL epoch is truncated toward zero to the unit, a DOUBLE one floored to
    milliseconds; an epoch outside 0000-01-01 .. 9999-12-31 gives NULL. The precision,
    format and zone may be columns (Flink types the result TIMESTAMP_LTZ(3) then): the rows
    are converted per distinct combination, NULL where one of them is NULL."""
    params = list(range(1, len(args)))
    if all(isinstance(args[i], pa.Scalar) for i in params):
        return _to_timestamp_ltz_const(args, arg_types, result_type, ctx)
    n = ctx.num_rows
    values = to_array(args[0], n)

    def run(sub: list[ArgValue], p: list[Any]) -> ArgValue:
        idx = np_ints(sub[0])
        consts = [pa.scalar(v, arg_types[i].to_arrow()) for i, v in zip(params, p, strict=True)]
        group_ctx = replace(ctx, num_rows=len(idx))
        return _to_timestamp_ltz_const([values.take(idx), *consts], arg_types, result_type, group_ctx)

    rows = pa.array(np.arange(n, dtype=np.int64))
    return grouped_apply([rows, *args[1:]], params, run, n, result_type.to_arrow())


def _to_timestamp_ltz_const(
    args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext
) -> ArgValue:
    """TO_TIMESTAMP_LTZ whose precision, format and zone are constants."""
    v = _arr(args[0], ctx)
    if arg_types[0].is_string:
        tz = const(args[2]) if len(args) > 2 else "UTC"
        sub_ns = np.zeros(len(v), np.int64)
        if len(args) > 1:
            ms, ok, sub_ns = dp.parse_fine(v, const(args[1]), lenient=False)
        else:
            ms, ok = dp.parse_default_timestamp(v)
        inst = to_instant(ms, tz)
        if (result_type.precision or 3) > 3:
            ns = np.where(ok, inst, 0) * 1_000_000 + sub_ns
            out = pa.array(ns, pa.int64(), mask=~(ok & np_valid(v))).cast(pa.timestamp("ns", tz="UTC"))
            return _maybe_scalar(out.cast(result_type.to_arrow()), args)
        return _maybe_scalar(_ts_array(inst, ok & np_valid(v), TS_LTZ), args)
    precision = const(args[1]) if len(args) > 1 else 3
    if precision not in _LTZ_PRECISIONS:
        raise EvaluationError(
            f"The precision value '{precision}' for function TO_TIMESTAMP_LTZ is unsupported, "
            "the supported value is '0', '3', '6' or '9'"
        )
    valid = np_valid(v)
    target = result_type.to_arrow()
    if precision in (6, 9) and pa.types.is_integer(v.type):
        raw = np_ints(v)
        per_ms = 1000 if precision == 6 else 1_000_000
        ms = np.floor_divide(raw, per_ms)
        ok = valid & (ms >= _MIN_MS) & (ms <= _MAX_MS)
        return _maybe_scalar(pa.array(raw, pa.int64(), mask=~ok).cast(target), args)
    ms_per_unit = {0: 1000.0, 3: 1.0, 6: 0.001, 9: 0.000001}[int(precision)]
    if pa.types.is_integer(v.type):
        raw = np_ints(v)
        lo, hi = _MIN_MS / ms_per_unit, _MAX_MS / ms_per_unit
        ok = valid & (raw >= lo) & (raw <= hi)
        safe = np.where(ok, raw, 0)
        ms = safe * int(ms_per_unit) if precision in (0, 3) else np.floor_divide(safe, int(1 / ms_per_unit))
    else:
        f = pc.cast(v, pa.float64()).fill_null(0).to_numpy(zero_copy_only=False)
        with np.errstate(invalid="ignore", over="ignore"):
            if arg_types[0].name == "DECIMAL":
                scaled = np.trunc(f) * ms_per_unit  # whole units, toward zero
            else:
                scaled = np.floor(f * ms_per_unit)  # whole milliseconds, floored
            ok = valid & np.isfinite(scaled) & (scaled >= _MIN_MS) & (scaled <= _MAX_MS)
        ms = np.where(ok, np.floor(np.where(ok, scaled, 0)), 0).astype(np.int64)
    ok = ok & (ms >= _MIN_MS) & (ms <= _MAX_MS)
    return _maybe_scalar(_ts_array(np.where(ok, ms, 0), ok, TS_LTZ).cast(target), args)


# ---------------------------------------------------------------------- format


def _infer_date_format(types: list[DataType]) -> DataType:
    check_arity("date_format", types, 2)
    if not (_is_temporal(types[0]) or types[0].is_string) or not is_stringish(types[1]):
        raise FunctionTypeError(
            f"Cannot apply 'DATE_FORMAT' to arguments of type 'DATE_FORMAT(<{types[0]}>, <{types[1]}>)'. "
            "Supported form(s): 'DATE_FORMAT(<TIMESTAMP>, <STRING>)', 'DATE_FORMAT(<STRING>, <STRING>)'"
        )
    return STRING(True if types[0].is_string else any_nullable(types))


def _check_local_pattern(pattern: str, x: pa.Array, ms: np.ndarray, ok: np.ndarray) -> None:
    """Flink formats a LocalDateTime with java.time's DateTimeFormatter, which has no zone:
    a zone or offset letter fails the job (as Flink's DateTimeException does)."""

    letters = {tok.letter for tok in dp.tokenize(pattern)}
    if letters & {"z", "V", "v"}:
        first = int(np.flatnonzero(ok)[0])
        wall = dp.format_wall(ms[first : first + 1], ok[first : first + 1], "yyyy-MM-dd'T'HH:mm:ss.SSS", "UTC")
        raise EvaluationError(f"Unable to extract ZoneId from temporal {wall[0].as_py()}")
    if letters & {"X", "x", "Z", "O"}:
        raise EvaluationError("Unsupported field: OffsetSeconds")


@scalar("date_format", _infer_date_format)
def date_format(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    """Format a timestamp (LTZ in the session zone) with a SimpleDateFormat pattern; a
    string argument must hold a full 'yyyy-MM-dd HH:mm:ss' timestamp (else NULL)."""
    x = _arr(args[0], ctx)
    t = arg_types[0]
    if t.is_string:
        ms, ok = dp.parse(x, "yyyy-MM-dd HH:mm:ss", lenient=True)
    elif t.name == "NULL":
        return pa.scalar(None, STR) if is_scalar(args[0]) else pa.nulls(ctx.num_rows, STR)
    else:
        ms, ok = wall_ms(x, t, ctx.time_zone), np.ones(len(x), bool)
    ok = ok & np_valid(x)
    zone = ctx.time_zone if t.name == "TIMESTAMP_LTZ" else "UTC"
    pattern = const(args[1]) if is_scalar(args[1]) else None
    if pattern is not None and ok.any():
        _check_local_pattern(str(pattern), x, ms, ok)

    def run(sub: list[ArgValue], p: list[Any]) -> ArgValue:
        rows = sub[0]
        idx = np_ints(rows)
        return dp.format_wall(ms[idx], ok[idx], p[0], zone)

    rows = pa.array(np.arange(len(x), dtype=np.int64))
    return _maybe_scalar(grouped_apply([rows, args[1]], [1], run, ctx.num_rows, STR), args)


def _infer_unix_timestamp(types: list[DataType]) -> DataType:
    check_arity("unix_timestamp", types, 0, 2)
    require("unix_timestamp", types, [is_stringish, is_stringish], "UNIX_TIMESTAMP([<STRING>[, <STRING>]])")
    return BIGINT(any_nullable(types))


@scalar("unix_timestamp", _infer_unix_timestamp, deterministic=False)
def unix_timestamp(
    args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext
) -> ArgValue:
    """Epoch seconds of a 'yyyy-MM-dd HH:mm:ss' (or given SimpleDateFormat) string read in
    the session zone, or in the offset the text states when the format has a zone letter
    ('yyyy-MM-dd HH:mm:ss.SSS X'); Long.MIN_VALUE when unparsable. Without arguments: now."""
    if not args:
        return pa.scalar(ctx.now_ms // 1000, pa.int64())
    s = _arr(args[0], ctx)
    fmt = args[1] if len(args) > 1 else pa.scalar("yyyy-MM-dd HH:mm:ss", STR)

    def run(sub: list[ArgValue], p: list[Any]) -> ArgValue:
        strings = sub[0]
        try:
            ms, ok = dp.parse(strings, p[0], lenient=True)
            offsets = dp.parse_offsets(strings, p[0], lenient=True)
        except ValueError:
            ms, ok = np.zeros(len(strings), np.int64), np.zeros(len(strings), bool)
            offsets = None
        # a zone the text states (pattern letter X, Z, z) wins over the session zone
        instant = to_instant(ms, ctx.time_zone) if offsets is None else ms - offsets
        secs = np.floor_divide(instant, 1000)
        out = np.where(ok, secs, LONG_MIN)
        return pa.array(out, pa.int64(), mask=~np_valid(strings))

    return _maybe_scalar(grouped_apply([s, fmt], [1], run, ctx.num_rows, pa.int64()), args)


def _infer_from_unixtime(types: list[DataType]) -> DataType:
    check_arity("from_unixtime", types, 1, 2)
    require(
        "from_unixtime",
        types,
        [lambda t: t.is_numeric or t.name == "NULL", is_stringish],
        "FROM_UNIXTIME(<NUMERIC>[, <STRING>])",
    )
    return STRING(any_nullable(types))


@scalar("from_unixtime", _infer_from_unixtime)
def from_unixtime(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    """Epoch seconds formatted in the session zone ('yyyy-MM-dd HH:mm:ss' by default)."""
    v = _arr(args[0], ctx)
    secs = np_ints(pc.cast(pc.floor(v) if pa.types.is_floating(v.type) else v, pa.int64(), safe=False))
    wall = to_wall(secs * 1000, ctx.time_zone)
    valid = np_valid(v)
    fmt = args[1] if len(args) > 1 else pa.scalar("yyyy-MM-dd HH:mm:ss", STR)

    def run(sub: list[ArgValue], p: list[Any]) -> ArgValue:
        idx = np_ints(sub[0])
        return dp.format_wall(wall[idx], valid[idx], p[0], ctx.time_zone)

    rows = pa.array(np.arange(len(v), dtype=np.int64))
    return _maybe_scalar(grouped_apply([rows, fmt], [1], run, ctx.num_rows, STR), args)


# ---------------------------------------------------------------------- extract

_UNITS = {
    "MILLENNIUM",
    "CENTURY",
    "DECADE",
    "YEAR",
    "ISOYEAR",
    "QUARTER",
    "MONTH",
    "WEEK",
    "DAY",
    "DOY",
    "DOW",
    "ISODOW",
    "HOUR",
    "MINUTE",
    "SECOND",
    "MILLISECOND",
    "MICROSECOND",
    "NANOSECOND",
    "EPOCH",
}


def _extract_fields(unit: str, wall: np.ndarray) -> np.ndarray:
    """One calendar field of wall-clock ms, with Flink 2.3's arithmetic: the day is the
    epoch millis divided by a day's millis and the time of day the remainder, both
    truncating as Java's `/` and `%` do. Before 1970 that is not the calendar's answer
    (1969-12-31 23:59:59.999 has HOUR 0, MILLISECOND -1 and YEAR 1970; 1969-07-20 20:17:40
    has DAY 21 and HOUR -3), and it is what Flink returns (the functions oracle corpus;
    see tests/conformance/flink-bugs/README.md)."""
    u = unit.upper()
    days = java_div(wall, dp.MS_PER_DAY)
    if u in ("HOUR", "MINUTE", "SECOND", "MILLISECOND", "MICROSECOND", "NANOSECOND", "EPOCH"):
        tod = wall - days * dp.MS_PER_DAY
        return {
            "HOUR": java_div(tod, 3_600_000),
            "MINUTE": java_rem(java_div(tod, 60_000), 60),
            "SECOND": java_rem(java_div(tod, 1000), 60),
            "MILLISECOND": java_rem(tod, 1000),
            "MICROSECOND": java_rem(tod, 1000) * 1000,
            "NANOSECOND": java_rem(tod, 1000) * 1_000_000,
            "EPOCH": java_div(wall, 1000),
        }[u]
    wall = days * dp.MS_PER_DAY  # the date Flink sees
    ts = pa.array(wall, TS)
    if u == "YEAR":
        return dp.civil_from_days(days)[0]
    if u == "MONTH":
        return dp.civil_from_days(days)[1]
    if u == "DAY":
        return dp.civil_from_days(days)[2]
    fn = {
        "QUARTER": pc.quarter,
        "WEEK": pc.iso_week,
        "ISOYEAR": pc.iso_year,
        "DOY": pc.day_of_year,
    }.get(u)
    if fn is not None:
        return np_ints(fn(ts))
    if u == "DOW":
        return np_ints(pc.day_of_week(ts, count_from_zero=False, week_start=7))
    if u == "ISODOW":
        return np_ints(pc.day_of_week(ts, count_from_zero=False, week_start=1))
    y = dp.civil_from_days(days)[0]
    if u == "DECADE":
        return np.floor_divide(y, 10)
    if u == "CENTURY":
        return np.where(y > 0, (y + 99) // 100, -((-y + 99) // 100))
    if u == "MILLENNIUM":
        return np.where(y > 0, (y + 999) // 1000, -((-y + 999) // 1000))
    raise FunctionTypeError(f"EXTRACT unit {unit} is not supported")


def _extract_interval(unit: str, v: pa.Array, t: DataType) -> np.ndarray:
    """EXTRACT from an interval: fields of the signed duration (truncating, as Calcite)."""
    raw = np_ints(v.cast(pa.int64()))
    u = unit.upper()
    if t.name == "INTERVAL_YEAR_MONTH":
        years = np.trunc(raw / 12).astype(np.int64)
        return {"YEAR": years, "MONTH": raw - years * 12, "QUARTER": (raw - years * 12) // 3 + 1}.get(u, raw)
    sign = np.sign(raw)
    a = np.abs(raw)
    vals = {
        "DAY": a // dp.MS_PER_DAY,
        "HOUR": a // 3_600_000 % 24,
        "MINUTE": a // 60_000 % 60,
        "SECOND": a // 1000 % 60,
        "MILLISECOND": a % 60_000,
        "EPOCH": a // 1000,
    }
    if u not in vals:
        raise FunctionTypeError(f"EXTRACT({unit} FROM interval) is not supported")
    return sign * vals[u]


def _infer_extract(types: list[DataType]) -> DataType:
    check_arity("extract", types, 2)
    t = types[1]
    if not (_is_temporal(t) or t.name in ("TIME", "INTERVAL_DAY_TIME", "INTERVAL_YEAR_MONTH")):
        raise FunctionTypeError(f"Cannot apply 'EXTRACT' to arguments of type 'EXTRACT(<INTERVAL SYMBOL> FROM <{t}>)'")
    return BIGINT(t.nullable)


@scalar("extract", _infer_extract)
def extract(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    unit = str(const(args[0])).upper()
    if unit not in _UNITS:
        raise FunctionTypeError(f"EXTRACT unit {unit} is not supported")
    return _extract(unit, args[1], arg_types[1], ctx, [args[1]])


def _extract(unit: str, x: ArgValue, t: DataType, ctx: EvalContext, all_args: list[ArgValue]) -> ArgValue:
    v = _arr(x, ctx)
    if t.name == "NULL":
        return pa.nulls(len(v), pa.int64())
    if t.name.startswith("INTERVAL"):
        out = _extract_interval(unit, v, t)
    else:
        out = _extract_fields(unit, wall_ms(v, t, ctx.time_zone))
    return _maybe_scalar(pa.array(np.asarray(out, np.int64), pa.int64(), mask=~np_valid(v)), all_args)


def _shorthand(name: str, unit: str) -> None:
    def infer(types: list[DataType]) -> DataType:
        check_arity(name, types, 1)
        if not (_is_temporal(types[0]) or types[0].name == "TIME"):
            raise FunctionTypeError(
                f"Cannot apply '{name.upper()}' to arguments of type '{name.upper()}(<{types[0]}>)'"
            )
        return BIGINT(types[0].nullable)

    def kernel(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
        return _extract(unit, args[0], arg_types[0], ctx, args)

    scalar(name, infer)(kernel)


for _n, _u in (
    ("year", "YEAR"),
    ("quarter", "QUARTER"),
    ("month", "MONTH"),
    ("week", "WEEK"),
    ("dayofyear", "DOY"),
    ("dayofmonth", "DAY"),
    ("dayofweek", "DOW"),
    ("hour", "HOUR"),
    ("minute", "MINUTE"),
    ("second", "SECOND"),
):
    _shorthand(_n, _u)


# ---------------------------------------------------------------------- now & co


def _query_now(ctx: EvalContext) -> int:
    """The instant CURRENT_TIMESTAMP & co return: the query's start in BATCH mode, else now."""
    return ctx.query_now_ms if ctx.query_now_ms is not None else ctx.now_ms


@scalar("current_timestamp", lambda types: TIMESTAMP_LTZ(3, False), "now", deterministic=False)
def current_timestamp(
    args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext
) -> ArgValue:
    return pa.scalar(_query_now(ctx), TS_LTZ)


@scalar("current_row_timestamp", lambda types: TIMESTAMP_LTZ(3, False), deterministic=False)
def current_row_timestamp(
    args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext
) -> ArgValue:
    """CURRENT_ROW_TIMESTAMP(): evaluated for each record in both modes (per batch here)."""
    return pa.scalar(ctx.now_ms, TS_LTZ)


@scalar("proctime", lambda types: TIMESTAMP_LTZ(3, False), deterministic=False)
def proctime(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    """PROCTIME(): the wall-clock time at which the batch is processed (Flink evaluates it
    per record; within one batch every row gets the same instant). It reads the one
    processing-time clock of the runtime (`runtime.state.ttl.now_ms`, which state TTL and
    processing-time interval joins read too), so a test's `set_clock` fixes all of them."""
    return pa.scalar(now_ms(), TS_LTZ)


@scalar("localtimestamp", lambda types: TIMESTAMP(3, False), deterministic=False)
def localtimestamp(
    args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext
) -> ArgValue:
    return pa.scalar(int(to_wall(np.array([_query_now(ctx)]), ctx.time_zone)[0]), TS)


@scalar("current_date", lambda types: DATE(False), deterministic=False)
def current_date(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    wall = int(to_wall(np.array([_query_now(ctx)]), ctx.time_zone)[0])
    return pa.scalar(wall // dp.MS_PER_DAY, pa.int32()).cast(pa.date32())


@scalar("current_time", lambda types: TIME(0, False), "localtime", deterministic=False)
def current_time(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    wall = int(to_wall(np.array([_query_now(ctx)]), ctx.time_zone)[0])
    return pa.scalar(wall % dp.MS_PER_DAY // 1000 * 1000, pa.int32()).cast(pa.time32("ms"))


def _infer_current_watermark(types: list[DataType]) -> DataType:
    if len(types) != 1 or types[0].name not in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        shown = ", ".join(str(t) for t in types)
        raise FunctionTypeError(f"The argument of CURRENT_WATERMARK() must be a rowtime attribute, but was '{shown}'.")
    return DataType(types[0].name, True, precision=3)


@scalar("current_watermark", _infer_current_watermark, deterministic=False)
def current_watermark(
    args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext
) -> ArgValue:
    """CURRENT_WATERMARK(rowtime): the watermark in effect when each row arrived, in the
    rowtime's type with precision 3; NULL before the first watermark (the binder checks
    that the argument is a rowtime attribute of a streaming query)."""

    target = result_type.to_arrow()
    wm = ctx.watermarks
    if wm is None:
        return pa.nulls(ctx.num_rows, target)
    values = np.asarray(wm, dtype=np.int64)
    return pa.array(values, pa.int64(), mask=values == MIN_WATERMARK).cast(target)


# ---------------------------------------------------------------------- arithmetic by unit

_UNIT_MS = {
    "MILLISECOND": 1,
    "SECOND": 1000,
    "MINUTE": 60_000,
    "HOUR": 3_600_000,
    "DAY": dp.MS_PER_DAY,
    "WEEK": 7 * dp.MS_PER_DAY,
}
_UNIT_MONTHS = {"MONTH": 1, "QUARTER": 3, "YEAR": 12}


def _add_months(wall: np.ndarray, months: np.ndarray) -> np.ndarray:
    """Add months, clamping the day to the target month's end (Calcite's addMonths)."""
    days = np.floor_divide(wall, dp.MS_PER_DAY)
    tod = wall - days * dp.MS_PER_DAY
    y, m, d = dp.civil_from_days(days)
    total = y * 12 + (m - 1) + months
    ny, nm = np.floor_divide(total, 12), total % 12 + 1
    nd = np.minimum(d, dp.days_in_month(ny, nm))
    return dp.days_from_civil(ny, nm, nd) * dp.MS_PER_DAY + tod


def _infer_timestampadd(types: list[DataType]) -> DataType:
    check_arity("timestampadd", types, 3)
    t = types[2]
    if not (_is_temporal(t) or t.name == "TIME") or not is_integerish(types[1]):
        raise FunctionTypeError("Cannot apply 'TIMESTAMPADD' to arguments: expected (unit, <INTEGER>, <DATETIME>)")
    if t.name == "DATE":
        return DATE(any_nullable(types[1:]))
    if t.name == "TIME":
        return DataType("TIME", any_nullable(types[1:]), precision=t.precision or 0)
    return DataType(t.name, any_nullable(types[1:]), precision=t.precision if t.precision is not None else 3)


@scalar("timestampadd", _infer_timestampadd)
def timestampadd(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    """`timestampadd('UNIT', n, x)`: x plus n units (months clamp the day of month)."""
    unit = str(const(args[0])).upper()
    n_arr, x = _arr(args[1], ctx), _arr(args[2], ctx)
    t = arg_types[2]
    valid = np_valid(n_arr) & np_valid(x)
    n = np_ints(n_arr)
    is_ltz = t.name == "TIMESTAMP_LTZ"
    base = _ms_of(x, t)
    if unit in _UNIT_MS:
        out = base + n * _UNIT_MS[unit]
    elif unit in _UNIT_MONTHS:
        wall = to_wall(base, ctx.time_zone) if is_ltz else base
        out = _add_months(wall, n * _UNIT_MONTHS[unit])
        out = to_instant(out, ctx.time_zone) if is_ltz else out
    else:
        raise FunctionTypeError(f"TIMESTAMPADD unit {unit} is not supported")
    if t.name == "DATE":
        days = np.floor_divide(out, dp.MS_PER_DAY).astype(np.int32)
        return _maybe_scalar(pa.array(days, pa.int32(), mask=~valid).cast(pa.date32()), args[1:])
    if t.name == "TIME":  # the time of day wraps around midnight; months leave it as it is
        tod = np.mod(out if unit in _UNIT_MS else base, dp.MS_PER_DAY).astype(np.int32)
        return _maybe_scalar(pa.array(tod, pa.int32(), mask=~valid).cast(pa.time32("ms")), args[1:])
    return _maybe_scalar(
        _ts_array(out, valid, result_type.to_arrow() if result_type.precision in (None, 0, 1, 2, 3) else TS), args[1:]
    )


def _infer_timestampdiff(types: list[DataType]) -> DataType:
    check_arity("timestampdiff", types, 3)
    if not (_is_temporal(types[1]) and _is_temporal(types[2])):
        raise FunctionTypeError("Cannot apply 'TIMESTAMPDIFF' to arguments: expected (unit, <DATETIME>, <DATETIME>)")
    return INT(any_nullable(types[1:]))


def _months_between_days(d0: np.ndarray, d1: np.ndarray) -> np.ndarray:
    """Calcite's subtractMonths(date0, date1) for date0 >= date1: the most months m with
    date1 + m months (day clamped to the month's end) <= date0, so 2024-01-31 to
    2024-02-29 is one month."""

    y0, m0, _ = dp.civil_from_days(d0)
    y1, m1, _ = dp.civil_from_days(d1)
    m = (y0 * 12 + m0) - (y1 * 12 + m1)
    return np.where(add_months_days(d1, m) > d0, m - 1, m)


def _subtract_months(t0: np.ndarray, t1: np.ndarray) -> np.ndarray:
    """Calcite's DateTimeUtils.subtractMonths(t0, t1) on epoch milliseconds, which Flink's
    TIMESTAMPDIFF(MONTH/QUARTER/YEAR, t1, t0) uses: whole months on the calendar by days,
    one less when the day matches but the time of day of t0 is earlier."""

    ms0, ms1 = np.mod(t0, dp.MS_PER_DAY), np.mod(t1, dp.MS_PER_DAY)
    d0, d1 = np.floor_divide(t0, dp.MS_PER_DAY), np.floor_divide(t1, dp.MS_PER_DAY)
    forward = d0 >= d1
    x = np.where(
        forward,
        _months_between_days(np.where(forward, d0, d1), np.where(forward, d1, d0)),
        -_months_between_days(np.where(forward, d0, d1), np.where(forward, d1, d0)),
    )
    return np.where((add_months_days(d1, x) == d0) & (ms0 < ms1), x - 1, x)


@scalar("timestampdiff", _infer_timestampdiff)
def timestampdiff(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    """`timestampdiff('UNIT', a, b)`: whole units from a to b (truncated toward zero)."""
    unit = str(const(args[0])).upper()
    a, b = _arr(args[1], ctx), _arr(args[2], ctx)
    valid = np_valid(a) & np_valid(b)
    wa, wb = wall_ms(a, arg_types[1], ctx.time_zone), wall_ms(b, arg_types[2], ctx.time_zone)
    if unit in _UNIT_MS:
        diff = wb - wa
        out = np.sign(diff) * (np.abs(diff) // _UNIT_MS[unit])
    elif unit in _UNIT_MONTHS:
        months = _subtract_months(wb, wa)
        out = np.sign(months) * (np.abs(months) // _UNIT_MONTHS[unit])
    else:
        raise FunctionTypeError(f"TIMESTAMPDIFF unit {unit} is not supported")
    return _maybe_scalar(pa.array(out.astype(np.int32), pa.int32(), mask=~valid), args[1:])


# ---------------------------------------------------------------------- zones


def _infer_convert_tz(types: list[DataType]) -> DataType:
    check_arity("convert_tz", types, 3)
    require("convert_tz", types, [is_stringish] * 3, "CONVERT_TZ(<STRING>, <STRING>, <STRING>)")
    return STRING(True)


def _java_time_zone(tz: str) -> str:
    """java.util.TimeZone.getTimeZone: an id it does not know is GMT (no error)."""
    try:
        to_instant(np.zeros(1, dtype=np.int64), tz)
    except (pa.ArrowInvalid, ValueError, KeyError):
        return "UTC"
    return tz


def _to_instant_standard(wall: np.ndarray, tz: str) -> np.ndarray:
    """Wall-clock ms → instant as java.util.Calendar resolves it (CONVERT_TZ's
    SimpleDateFormat): a time in the fall-back overlap takes the later (standard) offset;
    a time in a gap moves forward, as with `to_instant`."""
    earlier = to_instant(wall, tz)
    later = earlier + 3_600_000  # every DST overlap Flink's tests meet is one hour
    return np.where(to_wall(later, tz) == wall, later, earlier)


@scalar("convert_tz", _infer_convert_tz)
def convert_tz(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    """A 'yyyy-MM-dd HH:mm:ss' string moved from one zone to another."""
    s = _arr(args[0], ctx)
    ms, ok = dp.parse_default_timestamp(s)
    ok &= np_valid(s)
    rows = pa.array(np.arange(len(s), dtype=np.int64))

    def run(sub: list[ArgValue], p: list[Any]) -> ArgValue:
        idx = np_ints(sub[0])
        src, dst = _java_time_zone(p[0]), _java_time_zone(p[1])
        wall = to_wall(_to_instant_standard(ms[idx], src), dst)
        return dp.format_wall(wall, ok[idx], "yyyy-MM-dd HH:mm:ss", "UTC")

    return _maybe_scalar(grouped_apply([rows, args[1], args[2]], [1, 2], run, ctx.num_rows, STR), args)


def _zone_shift(to_utc: bool):
    def infer(types: list[DataType]) -> DataType:
        check_arity("to_utc_timestamp" if to_utc else "from_utc_timestamp", types, 2)
        if not (_is_temporal(types[0]) or types[0].is_string) or not is_stringish(types[1]):
            raise FunctionTypeError("expected (<TIMESTAMP>, <STRING time zone>)")
        return TIMESTAMP(3, any_nullable(types))

    def kernel(args: list[ArgValue], arg_types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
        x = _arr(args[0], ctx)
        if arg_types[0].is_string:
            base, ok = dp.parse_default_timestamp(x)
        else:
            base, ok = _ms_of(x, arg_types[0]), np.ones(len(x), bool)
        ok &= np_valid(x)
        rows = pa.array(np.arange(len(x), dtype=np.int64))

        def run(sub: list[ArgValue], p: list[Any]) -> ArgValue:
            idx = np_ints(sub[0])
            out = to_instant(base[idx], p[0]) if to_utc else to_wall(base[idx], p[0])
            return _ts_array(out, ok[idx])

        return _maybe_scalar(grouped_apply([rows, args[1]], [1], run, ctx.num_rows, TS), args)

    return infer, kernel


_i, _k = _zone_shift(True)
scalar("to_utc_timestamp", _i)(_k)
_i, _k = _zone_shift(False)
scalar("from_utc_timestamp", _i)(_k)


# docs/functions.md: signature and one example per function of this module
document(
    {
        "convert_tz": ("CONVERT_TZ(string, from_tz, to_tz)", "CONVERT_TZ('2024-01-01 00:00:00', 'UTC', 'Asia/Tokyo')"),
        "current_date": ("CURRENT_DATE", "CURRENT_DATE"),
        "current_time": ("CURRENT_TIME, LOCALTIME", "CURRENT_TIME"),
        "current_timestamp": ("CURRENT_TIMESTAMP, NOW()", "CURRENT_TIMESTAMP"),
        "current_row_timestamp": ("CURRENT_ROW_TIMESTAMP()", "CURRENT_ROW_TIMESTAMP()"),
        "current_watermark": ("CURRENT_WATERMARK(rowtime)", ""),
        "date_format": (
            "DATE_FORMAT(timestamp | string, format)",
            "DATE_FORMAT(TIMESTAMP '2024-05-17 10:45:00', 'yyyy/MM/dd HH')",
        ),
        "dayofmonth": ("DAYOFMONTH(date)", "DAYOFMONTH(DATE '2024-05-17')"),
        "dayofweek": ("DAYOFWEEK(date)", "DAYOFWEEK(DATE '2024-05-17')"),
        "dayofyear": ("DAYOFYEAR(date)", "DAYOFYEAR(DATE '2024-05-17')"),
        "extract": ("EXTRACT(unit FROM datetime)", "EXTRACT(MONTH FROM DATE '2024-05-17')"),
        "from_unixtime": ("FROM_UNIXTIME(seconds[, format])", "FROM_UNIXTIME(86400)"),
        "from_utc_timestamp": (
            "FROM_UTC_TIMESTAMP(timestamp, tz)",
            "FROM_UTC_TIMESTAMP(TIMESTAMP '2024-01-01 00:00:00', 'Asia/Tokyo')",
        ),
        "hour": ("HOUR(timestamp)", "HOUR(TIMESTAMP '2024-05-17 10:45:00')"),
        "localtimestamp": ("LOCALTIMESTAMP", "LOCALTIMESTAMP"),
        "minute": ("MINUTE(timestamp)", "MINUTE(TIMESTAMP '2024-05-17 10:45:00')"),
        "month": ("MONTH(date)", "MONTH(DATE '2024-05-17')"),
        "proctime": ("PROCTIME() (a processing-time attribute)", ""),
        "quarter": ("QUARTER(date)", "QUARTER(DATE '2024-05-17')"),
        "second": ("SECOND(timestamp)", "SECOND(TIMESTAMP '2024-05-17 10:45:30')"),
        "timestampadd": ("TIMESTAMPADD(unit, n, datetime)", "TIMESTAMPADD(DAY, 3, TIMESTAMP '2024-02-27 00:00:00')"),
        "timestampdiff": (
            "TIMESTAMPDIFF(unit, from, to)",
            "TIMESTAMPDIFF(HOUR, TIMESTAMP '2024-01-01 00:00:00', TIMESTAMP '2024-01-02 06:00:00')",
        ),
        "to_date": ("TO_DATE(string[, format])", "TO_DATE('2024-05-17')"),
        "to_timestamp": ("TO_TIMESTAMP(string[, format])", "TO_TIMESTAMP('2024-05-17 10:45:00')"),
        "to_timestamp_ltz": (
            "TO_TIMESTAMP_LTZ(epoch[, precision]), TO_TIMESTAMP_LTZ(string[, format[, tz]])",
            "TO_TIMESTAMP_LTZ(1700000000000, 3)",
        ),
        "to_utc_timestamp": (
            "TO_UTC_TIMESTAMP(timestamp, tz)",
            "TO_UTC_TIMESTAMP(TIMESTAMP '2024-01-01 09:00:00', 'Asia/Tokyo')",
        ),
        "unix_timestamp": ("UNIX_TIMESTAMP([string[, format]])", "UNIX_TIMESTAMP('1970-01-02 00:00:00')"),
        "week": ("WEEK(date)", "WEEK(DATE '2024-05-17')"),
        "year": ("YEAR(date)", "YEAR(DATE '2024-05-17')"),
    }
)
