"""Text → Arrow conversion with Java's parsing rules, a whole column at a time.

Flink's CSV and JSON formats turn text into values with `Integer.parseInt`,
`Double.parseDouble`, `new BigDecimal(...)`, `Boolean.parseBoolean`, `Date.valueOf`,
`Timestamp.valueOf` and `java.time` formatters. What they accept and reject decides which
rows fail a job, so these converters reproduce those rules over Arrow string arrays
(regular expressions + casts) instead of parsing value by value.

Every converter returns `(values, bad)`: `values` is the typed array (NULL where the input
was NULL or could not be parsed) and `bad` a numpy bool mask of the rows whose non-NULL
text did not parse (the caller decides: fail naming the line, or ignore).
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.types import DataType, timestamp_unit

# Java's String.trim() strips every char <= U+0020.
_JAVA_WS = "".join(chr(i) for i in range(33))

_INT_RANGES = {
    "TINYINT": (-(2**7), 2**7 - 1, pa.int8()),
    "SMALLINT": (-(2**15), 2**15 - 1, pa.int16()),
    "INT": (-(2**31), 2**31 - 1, pa.int32()),
    "INTERVAL_YEAR_MONTH": (-(2**31), 2**31 - 1, pa.int32()),
    "BIGINT": (-(2**63), 2**63 - 1, pa.int64()),
}

# Styles of temporal text: which Java parser the format uses.
CSV = "csv"  # Date.valueOf / Timestamp.valueOf / LocalTime.parse
SQL = "sql"  # JSON 'SQL' timestamp standard: yyyy-MM-dd HH:mm:ss[.fffffffff]
ISO = "iso"  # JSON 'ISO-8601': yyyy-MM-ddTHH:mm[:ss[.fffffffff]]
# JSON 'ISO-8601-WITH-OFFSET': yyyy-MM-ddTHH:mm[:ss[.fffffffff]]±HH:mm (or Z), normalized to UTC
ISO_OFFSET = "iso-offset"

Result = tuple[pa.Array, np.ndarray]


def _mask(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A boolean Arrow array (nulls = False) as numpy."""
    return np.asarray(pc.fill_null(arr, False).to_numpy(zero_copy_only=False), dtype=bool)


def java_trim(strings: pa.Array) -> pa.Array:
    return pc.utf8_trim(strings, characters=_JAVA_WS)


def _finish(values: pa.Array, ok: np.ndarray, strings: pa.Array) -> Result:
    """Null out rows that did not parse and report them as bad."""
    absent = np.asarray(strings.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    bad = ~absent & ~ok
    drop = bad | absent
    if drop.any():
        values = pc.if_else(pa.array(drop), pa.nulls(len(values), values.type), values)
    return values, bad


# ---------------------------------------------------------------------- scalars
def _no_errors(strings: pa.Array) -> np.ndarray:
    return np.zeros(len(strings), dtype=bool)


def _try_cast(strings: pa.Array, target: pa.DataType) -> pa.Array | None:
    """Arrow's strict cast, or None when some value needs the slower, exact rules."""
    try:
        return pc.cast(strings, target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def parse_integer(strings: pa.Array, dtype: DataType) -> Result:
    """`Integer.parseInt(text.trim())` and friends: optional sign, ASCII digits, in range."""
    lo, hi, arrow_type = _INT_RANGES[dtype.name]
    # Fast path: Arrow accepts the same plain '[-]digits' text (plus hex, which Java does not).
    if not pc.any(pc.match_substring(strings, "x", ignore_case=True)).as_py():
        wide = _try_cast(strings, pa.int64())
        if wide is not None:
            in_range = pc.and_(pc.greater_equal(wide, lo), pc.less_equal(wide, hi))
            if pc.all(in_range).as_py() is not False:
                return pc.cast(wide, arrow_type), _no_errors(strings)
    t = java_trim(strings)
    ok = _mask(pc.match_substring_regex(t, r"^[+-]?[0-9]+$"))
    clean = pc.if_else(pa.array(ok), pc.replace_substring_regex(t, r"^\+", ""), pa.scalar("0"))
    # Long digit strings would overflow the int64 cast: find them first (rare).
    digits = pc.utf8_length(pc.utf8_ltrim(pc.utf8_ltrim(clean, characters="-"), characters="0")).to_numpy(
        zero_copy_only=False
    )
    long_rows = np.flatnonzero(ok & (digits >= 19))
    if len(long_rows):
        clean_list = clean.to_pylist()
        for i in long_rows:  # only numbers of 19+ digits: at most a handful
            v = int(clean_list[i])
            if lo <= v <= hi:
                continue
            ok[i] = False
            clean_list[i] = "0"
        clean = pa.array(clean_list, pa.string())
    wide = pc.cast(pc.if_else(pa.array(ok), clean, pa.scalar("0")), pa.int64())
    wide_np = wide.to_numpy(zero_copy_only=False)
    ok &= (wide_np >= lo) & (wide_np <= hi)
    values = pc.cast(pc.if_else(pa.array(ok), wide, pa.scalar(0, pa.int64())), arrow_type)
    return _finish(values, ok, strings)


def parse_boolean(strings: pa.Array) -> Result:
    """`Boolean.parseBoolean(text.trim())`: 'true' in any case is TRUE, anything else FALSE."""
    values = pc.equal(pc.utf8_lower(java_trim(strings)), "true")
    return values, np.zeros(len(strings), dtype=bool)


_JAVA_FLOAT = r"^[+-]?(NaN|Infinity|(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)[fFdD]?)$"


def parse_float(strings: pa.Array, dtype: DataType) -> Result:
    """`Double.parseDouble(text.trim())`: decimal/exponent syntax, NaN, Infinity, f/d suffix."""
    fast = _try_cast(strings, pa.float64())
    if fast is not None and pc.all(pc.is_finite(fast)).as_py() is not False:
        return pc.cast(fast, dtype.to_arrow()), _no_errors(strings)
    t = java_trim(strings)
    ok = _mask(pc.match_substring_regex(t, _JAVA_FLOAT))
    clean = pc.replace_substring_regex(t, r"[fFdD]$", "")
    clean = pc.replace_substring(clean, "Infinity", "inf")
    clean = pc.if_else(pa.array(ok), clean, pa.scalar("0"))
    values = pc.cast(pc.cast(clean, pa.float64()), dtype.to_arrow())
    return _finish(values, ok, strings)


_BIG_DECIMAL = r"^(?P<sign>[+-]?)(?P<int>[0-9]*)(?:\.(?P<frac>[0-9]*))?(?:[eE](?P<exp>[+-]?[0-9]+))?$"


def parse_decimal(strings: pa.Array, dtype: DataType, trim: bool = False) -> Result:
    """`new BigDecimal(text)` rounded HALF_UP to the scale; a value too wide for the
    precision becomes NULL (Flink's `DecimalData.fromBigDecimal`), not an error."""
    p = dtype.precision or 10
    s = dtype.scale or 0
    fast = _try_cast(strings, dtype.to_arrow())  # exact text that needs no rounding
    if fast is not None:
        return fast, _no_errors(strings)
    t = java_trim(strings) if trim else strings
    parts = pc.extract_regex(t, _BIG_DECIMAL)
    matched = _mask(parts.is_valid())
    int_part = pc.fill_null(pc.struct_field(parts, "int"), "")
    frac_part = pc.fill_null(pc.struct_field(parts, "frac"), "")
    has_digit = _mask(pc.greater(pc.add(pc.utf8_length(int_part), pc.utf8_length(frac_part)), 0))
    ok = matched & has_digit
    exp_rows = np.flatnonzero(
        ok & _mask(pc.greater(pc.utf8_length(pc.fill_null(pc.struct_field(parts, "exp"), "")), 0))
    )

    int_stripped = pc.utf8_ltrim(int_part, characters="0")
    int_len = pc.utf8_length(int_stripped).to_numpy(zero_copy_only=False)
    overflow = ok & (int_len > p - s)
    usable = ok & ~overflow
    usable[exp_rows] = False
    frac_fixed = pc.utf8_slice_codeunits(pc.utf8_rpad(frac_part, s + 1, "0"), 0, s + 1)
    sign = pc.fill_null(pc.struct_field(parts, "sign"), "")
    text = pc.binary_join_element_wise(sign, pc.if_else(pc.equal(int_stripped, ""), "0", int_stripped), frac_fixed, "")
    # insert the decimal point before the last s+1 digits
    text = pc.binary_join_element_wise(
        pc.utf8_slice_codeunits(text, 0, -(s + 1)), pc.utf8_slice_codeunits(text, -(s + 1)), "."
    )
    text = pc.if_else(pa.array(usable), text, pa.scalar("0." + "0" * (s + 1)))
    wide_p = p + 2
    wide_type = pa.decimal128(wide_p, s + 1) if wide_p <= 38 else pa.decimal256(wide_p, s + 1)
    rounded = pc.round(pc.cast(text, wide_type), ndigits=s, round_mode="half_towards_infinity")
    target = dtype.to_arrow()
    bound = Decimal(10) ** (p - s)
    limit = (
        pa.scalar(bound, pa.decimal256(min(76, p + 2), 0)) if p + 2 > 38 else pa.scalar(bound, pa.decimal128(p + 2, 0))
    )
    fits = _mask(pc.less(pc.abs(rounded), limit))
    null_rows = overflow | (usable & ~fits)
    keep = usable & fits
    values = pc.cast(pc.if_else(pa.array(keep), rounded, pa.scalar(Decimal(0), wide_type)), target, safe=False)
    if len(exp_rows):
        pylist = values.to_pylist()
        raw = t.to_pylist()
        quant = Decimal(1).scaleb(-s)
        for i in exp_rows:  # scientific notation only: rare in data files
            try:
                d = Decimal(raw[i]).quantize(quant, rounding=ROUND_HALF_UP)
            except InvalidOperation:
                d = None
            if d is None or abs(d) >= bound:
                null_rows[i] = True
                pylist[i] = None
            else:
                pylist[i] = d
                keep[i] = True
        values = pa.array(pylist, target)
    values = pc.if_else(pa.array(null_rows), pa.nulls(len(values), target), values)
    return _finish(values, ok, strings)


def parse_string(strings: pa.Array) -> Result:
    return strings.cast(pa.string()), np.zeros(len(strings), dtype=bool)


def parse_binary(strings: pa.Array) -> Result:
    """Jackson's `binaryValue()` of a text node: base64."""
    import base64

    vals = strings.to_pylist()
    out: list[bytes | None] = []
    bad = np.zeros(len(vals), dtype=bool)
    for i, v in enumerate(vals):  # BINARY columns in text files are rare; base64 has no Arrow kernel
        if v is None:
            out.append(None)
            continue
        try:
            out.append(base64.b64decode(v, validate=True))
        except ValueError:
            out.append(None)
            bad[i] = True
    return pa.array(out, pa.binary()), bad


# ---------------------------------------------------------------------- temporal
def days_from_civil(y: np.ndarray, m: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm);
    a day beyond the month's end rolls over, as java.sql.Date does."""
    y = y.astype(np.int64) - (m <= 2)
    era = np.floor_divide(y, 400)
    yoe = y - era * 400
    mp = (m.astype(np.int64) + 9) % 12
    doy = (153 * mp + 2) // 5
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468 + (d.astype(np.int64) - 1)


def _days_in_month(y: np.ndarray, m: np.ndarray) -> np.ndarray:
    leap = ((y % 4 == 0) & (y % 100 != 0)) | (y % 400 == 0)
    dim = np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], dtype=np.int64)[np.clip(m, 0, 12)]
    return dim + ((m == 2) & leap)


def _ints(parts: pa.StructArray, name: str, n: int) -> np.ndarray:
    col = pc.struct_field(parts, name)
    col = pc.if_else(pc.equal(pc.fill_null(col, ""), ""), "0", col)
    return pc.cast(col, pa.int64()).to_numpy(zero_copy_only=False) if n else np.zeros(0, np.int64)


def _nanos(parts: pa.StructArray) -> np.ndarray:
    frac = pc.fill_null(pc.struct_field(parts, "f"), "")
    padded = pc.utf8_slice_codeunits(pc.utf8_rpad(frac, 9, "0"), 0, 9)
    return pc.cast(padded, pa.int64()).to_numpy(zero_copy_only=False)


_DATE_PATTERNS = {
    CSV: r"^(?P<y>[0-9]{4})-(?P<m>[0-9]{1,2})-(?P<d>[0-9]{1,2})$",
    SQL: r"^(?P<y>[0-9]{4})-(?P<m>[0-9]{2})-(?P<d>[0-9]{2})$",
    ISO: r"^(?P<y>[0-9]{4})-(?P<m>[0-9]{2})-(?P<d>[0-9]{2})$",
}
_DATE_PATTERNS[ISO_OFFSET] = _DATE_PATTERNS[ISO]
_TIME = r"(?P<H>[0-9]{2}):(?P<M>[0-9]{2})"
_TS_PATTERNS = {
    CSV: r"^(?P<y>[0-9]{4})-(?P<m>[0-9]{1,2})-(?P<d>[0-9]{1,2}) (?P<H>[0-9]{1,2}):(?P<M>[0-9]{1,2}):(?P<S>[0-9]{1,2})(?:\.(?P<f>[0-9]{0,9}))?$",
    SQL: r"^(?P<y>[0-9]{4})-(?P<m>[0-9]{2})-(?P<d>[0-9]{2}) " + _TIME + r":(?P<S>[0-9]{2})(?:\.(?P<f>[0-9]{1,9}))?",
    ISO: r"^(?P<y>[0-9]{4})-(?P<m>[0-9]{2})-(?P<d>[0-9]{2})T"
    + _TIME
    + r"(?::(?P<S>[0-9]{2})(?:\.(?P<f>[0-9]{1,9}))?)?",
}
_TIME_PATTERNS = {
    CSV: r"^" + _TIME + r"(?::(?P<S>[0-9]{2})(?:\.(?P<f>[0-9]{1,9}))?)?$",
    SQL: r"^" + _TIME + r":(?P<S>[0-9]{2})(?:\.(?P<f>[0-9]{1,9}))?$",
    ISO: r"^" + _TIME + r"(?::(?P<S>[0-9]{2})(?:\.(?P<f>[0-9]{1,9}))?)?$",
}
_TIME_PATTERNS[ISO_OFFSET] = _TIME_PATTERNS[ISO]
# The offset of an 'ISO-8601-WITH-OFFSET' timestamp (Java's ISO_OFFSET_DATE_TIME: 'Z' or ±HH:mm[:ss]).
_OFFSET = r"(?P<o>Z|(?P<os>[+-])(?P<oh>[0-9]{2}):(?P<om>[0-9]{2})(?::(?P<osec>[0-9]{2}))?)$"
_TS_PATTERNS[ISO_OFFSET] = _TS_PATTERNS[ISO] + _OFFSET


def parse_date(strings: pa.Array, style: str) -> Result:
    """CSV: `Date.valueOf` (1–2 digit month/day, day overflow rolls over); JSON:
    ISO_LOCAL_DATE (strict: the date must exist)."""
    fast = _try_cast(strings, pa.date32())  # Arrow takes exactly yyyy-MM-dd of real dates
    if fast is not None:
        return fast, _no_errors(strings)
    parts = pc.extract_regex(strings, _DATE_PATTERNS[style])
    ok = _mask(parts.is_valid())
    n = len(strings)
    y, m, d = _ints(parts, "y", n), _ints(parts, "m", n), _ints(parts, "d", n)
    ok &= (m >= 1) & (m <= 12) & (d >= 1) & (d <= 31)
    if style != CSV:
        ok &= d <= _days_in_month(y, m)
    days = np.where(ok, days_from_civil(y, m, d), 0).astype(np.int32)
    return _finish(pa.array(days, pa.date32()), ok, strings)


def _time_of_day_nanos(parts: pa.StructArray, n: int) -> tuple[np.ndarray, np.ndarray]:
    hh, mm, ss = _ints(parts, "H", n), _ints(parts, "M", n), _ints(parts, "S", n)
    ok = (hh <= 23) & (mm <= 59) & (ss <= 59)
    return ((hh * 3600 + mm * 60 + ss) * 1_000_000_000 + _nanos(parts)), ok


def parse_time(strings: pa.Array, dtype: DataType, style: str) -> Result:
    """TIME as milliseconds of the day, cut to the type's precision (Flink's CSV rule)."""
    parts = pc.extract_regex(strings, _TIME_PATTERNS[style])
    ok = _mask(parts.is_valid())
    nanos, valid = _time_of_day_nanos(parts, len(strings))
    ok &= valid
    ms = nanos // 1_000_000
    p = dtype.precision or 0
    if p < 3:
        step = 10 ** (3 - p)
        ms = ms // step * step
    return _finish(pa.array(np.where(ok, ms, 0).astype(np.int32), pa.time32("ms")), ok, strings)


def parse_timestamp(strings: pa.Array, dtype: DataType, style: str) -> Result:
    """TIMESTAMP / TIMESTAMP_LTZ text → epoch values in the column's unit (floor).

    CSV uses `Timestamp.valueOf` (trimmed, fraction optional, 1–2 digit fields); JSON uses
    the 'SQL' or 'ISO-8601' standard. For TIMESTAMP_LTZ, JSON text ends with 'Z' (UTC);
    CSV text is read as a UTC wall clock."""
    ltz = dtype.name == "TIMESTAMP_LTZ"
    if not ltz and style != ISO_OFFSET and len(strings) and strings.null_count < len(strings):
        # Fast path: Arrow's ISO parser, once the separator and the seconds are known present.
        sep = " " if style in (CSV, SQL) else "T"
        lengths = pc.utf8_length(strings)
        shaped = pc.and_(
            pc.equal(pc.utf8_slice_codeunits(strings, 10, 11), sep), pc.greater_equal(lengths, 19 if sep == " " else 16)
        )
        if pc.all(shaped).as_py() is not False:
            ns = _try_cast(strings, pa.timestamp("ns"))
            if ns is not None:
                unit = timestamp_unit(dtype.precision)
                div = {"ms": 1_000_000, "us": 1_000, "ns": 1}[unit]
                raw = pc.cast(ns, pa.int64())
                if div > 1:  # floor to the unit, like TimestampData for pre-1970 values
                    floored = np.floor_divide(pc.fill_null(raw, 0).to_numpy(zero_copy_only=False), div)
                    raw = pc.if_else(ns.is_null(), pa.nulls(len(ns), pa.int64()), pa.array(floored))
                return pc.cast(raw, dtype.to_arrow()), _no_errors(strings)
    text = java_trim(strings) if style == CSV else strings
    pattern = _TS_PATTERNS[style]
    if style not in (CSV, ISO_OFFSET):
        pattern += "Z$" if ltz else "$"
    parts = pc.extract_regex(text, pattern)
    ok = _mask(parts.is_valid())
    n = len(strings)
    y, m, d = _ints(parts, "y", n), _ints(parts, "m", n), _ints(parts, "d", n)
    ok &= (m >= 1) & (m <= 12) & (d >= 1) & (d <= 31)
    if style != CSV:
        ok &= d <= _days_in_month(y, m)
    tod, valid = _time_of_day_nanos(parts, n)
    ok &= valid
    days = np.where(ok, days_from_civil(y, m, d), 0)
    # microseconds: int64 nanoseconds overflow outside 1677..2262, Flink's range is 0000..9999
    micros = days * 86_400_000_000 + np.where(ok, tod, 0) // 1000
    if style == ISO_OFFSET:  # normalized to UTC: the wall clock minus its offset
        sign = np.where(pc.fill_null(pc.struct_field(parts, "os"), "+").to_numpy(zero_copy_only=False) == "-", -1, 1)
        oh, om, osec = _ints(parts, "oh", n), _ints(parts, "om", n), _ints(parts, "osec", n)
        ok &= (oh <= 18) & (om <= 59) & (osec <= 59)
        micros = micros - np.where(ok, sign * (oh * 3600 + om * 60 + osec), 0) * 1_000_000
    unit = timestamp_unit(dtype.precision)
    if unit == "ns":  # Arrow's ns timestamps end at 1677/2262: treat the rest as unparsable
        ok &= (micros > -(2**63) // 1000 + 1) & (micros < (2**63 - 1) // 1000 - 1)
        raw = np.where(ok, micros, 0) * 1000 + np.where(ok, tod, 0) % 1000
    else:
        raw = np.floor_divide(micros, 1000) if unit == "ms" else micros
    values = pa.array(raw, pa.int64()).cast(dtype.to_arrow())
    return _finish(values, ok, strings)


# ---------------------------------------------------------------------- dispatch
def convert_strings(strings: pa.Array, dtype: DataType, style: str = CSV) -> Result:
    """Convert a string column to `dtype` the way Flink's `style` format would."""
    if isinstance(strings, pa.ChunkedArray):
        strings = strings.combine_chunks()
    if not pa.types.is_string(strings.type):
        strings = strings.cast(pa.string())
    name = dtype.name
    if name in _INT_RANGES:
        return parse_integer(strings, dtype)
    if name == "BOOLEAN":
        return parse_boolean(strings)
    if name in ("FLOAT", "DOUBLE"):
        return parse_float(strings, dtype)
    if name == "DECIMAL":
        return parse_decimal(strings, dtype)
    if name in ("CHAR", "VARCHAR"):
        return parse_string(strings)
    if name in ("BINARY", "VARBINARY"):
        return parse_binary(strings)
    if name == "DATE":
        return parse_date(strings, style)
    if name == "TIME":
        return parse_time(strings, dtype, style)
    if name in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        return parse_timestamp(strings, dtype, style)
    if name == "INTERVAL_DAY_TIME":
        longs, bad = parse_integer(strings, DataType("BIGINT"))
        return longs.cast(pa.duration("ms")), bad
    if name == "NULL":
        return pa.nulls(len(strings)), np.zeros(len(strings), dtype=bool)
    raise NotImplementedError(f"no text conversion to {dtype}")


def first_bad(bad: np.ndarray) -> int | None:
    idx = np.flatnonzero(bad)
    return int(idx[0]) if len(idx) else None
