"""Values as the Flink SQL client prints them (and as CAST(x AS STRING) spells them).

`render_column(array, dtype, time_zone)` turns a whole column into `str | None` per row,
vectorized with Arrow casts and string kernels for the common types:

- DOUBLE/FLOAT: Java's Double.toString / Float.toString. Arrow's float→string cast already
  produces the shortest round-trip digits (like Java 19+); values in [1e-3, 1e7) only need
  a ".0" when integral. Values outside that range use Java's "d.dddE[-]n" form and are
  formatted one by one (they are rare in practice; ~1 µs each).
- TIMESTAMP(p): `yyyy-MM-dd HH:mm:ss` plus exactly p fractional digits; TIMESTAMP_LTZ is
  first shifted to the session time zone.
- DECIMAL keeps its scale, BOOLEAN is TRUE/FALSE, DATE yyyy-MM-dd, TIME HH:mm:ss.
- ARRAY `[a, b]`, MAP `{k=v}`, ROW `(a, b)` render their children vectorized, then join
  per row (a loop over rows, only for nested types); NULL elements are `NULL`.
- BITMAP `{1,2,3}` (unsigned values in ascending order).
- BYTES `x'0102'`, INTERVAL `+0 00:00:10.000` (day-time) and `+1-02` (year-month).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.map_values import map_keys, map_values
from runtime.types import DataType

__all__ = ["render_column", "render_value", "java_double_str", "java_float_str", "render_array"]


def render_column(array: pa.Array | pa.ChunkedArray, dtype: DataType, time_zone: str = "UTC") -> list[str | None]:
    """The Flink SQL client's text of each value of `array` (None for NULL)."""
    return render_array(array, dtype, time_zone).to_pylist()


def render_value(value: Any, dtype: DataType, time_zone: str = "UTC") -> str | None:
    """One Python value (as Arrow's `as_py()` gives it) rendered like `render_column`."""
    if value is None:
        return None
    arr = pa.array([value], type=dtype.to_arrow())
    return render_column(arr, dtype, time_zone)[0]


def render_array(array: pa.Array | pa.ChunkedArray, dtype: DataType, time_zone: str = "UTC") -> pa.Array:
    """Like `render_column` but returns an Arrow string array (nulls stay null)."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    n = dtype.name
    if n == "NULL" or array.type == pa.null():
        return pa.nulls(len(array), pa.string())
    if n == "DATE":
        return _four_digit_year(pc.cast(array, pa.string()))
    if n in ("TINYINT", "SMALLINT", "INT", "BIGINT", "CHAR", "VARCHAR"):
        return pc.cast(array, pa.string())
    if n == "DECIMAL":
        return render_decimal(array)
    if n == "BOOLEAN":
        return pc.if_else(array, pa.scalar("TRUE"), pa.scalar("FALSE"))
    if n == "DOUBLE":
        return _render_floating(array, java_double_str)
    if n == "FLOAT":
        return _render_floating(array, java_float_str)
    if n in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        return _four_digit_year(_render_timestamp(array, dtype, time_zone))
    if n == "TIME":
        return _render_time(array, dtype)
    if n in ("BINARY", "VARBINARY"):
        return pa.array([None if b is None else "x'" + b.hex() + "'" for b in array.to_pylist()], pa.string())
    if n == "INTERVAL_DAY_TIME":
        return pa.array(
            [None if v is None else _day_time(v) for v in pc.cast(array, pa.int64()).to_pylist()], pa.string()
        )
    if n == "INTERVAL_YEAR_MONTH":
        return pa.array([None if v is None else _year_month(v) for v in array.to_pylist()], pa.string())
    if n == "BITMAP":
        # RoaringBitmap.toString: `{1,2,4294967295}` (unsigned, ascending)
        joined = pc.binary_join(pc.cast(array, pa.list_(pa.string())), ",")
        return pc.binary_join_element_wise("{", joined, "}", "")
    if n == "MULTISET":
        return _render_multiset(array, dtype, time_zone)
    if n == "ARRAY":
        return _render_list(array, dtype, time_zone)
    if n == "MAP":
        return _render_map(array, dtype, time_zone)
    if n == "ROW":
        return _render_row(array, dtype, time_zone)
    if n == "STRUCTURED":
        return _render_row(array, dtype, time_zone, named=True)
    return pc.cast(array, pa.string())


def render_decimal(array: pa.Array) -> pa.Array:
    """Plain notation with exactly the type's scale (Java's BigDecimal.toPlainString).
    Arrow switches to "1.2E-7" for small magnitudes; those few rows are re-formatted."""
    text = pc.cast(array, pa.string())
    sci = pc.fill_null(pc.match_substring(text, "E"), False)
    if not pc.any(sci).as_py():
        return text
    import decimal

    out = text.to_pylist()
    for i in np.flatnonzero(sci.to_numpy(zero_copy_only=False)):
        out[i] = format(decimal.Decimal(out[i]), "f")
    return pa.array(out, pa.string())


# ---------------------------------------------------------------------- floating point
def _render_floating(array: pa.Array, one) -> pa.Array:
    text = pc.cast(array, pa.string())
    values = array.to_numpy(zero_copy_only=False)
    with np.errstate(invalid="ignore"):
        absval = np.abs(np.nan_to_num(values.astype(np.float64), nan=0.0))
        plain = (absval >= 1e-3) & (absval < 1e7)
    valid = array.is_valid().to_numpy(zero_copy_only=False)
    needs_point = plain & valid
    has_point = pc.fill_null(pc.match_substring(text, "."), True).to_numpy(zero_copy_only=False)
    fixed = pc.if_else(pa.array(needs_point & ~has_point), pc.binary_join_element_wise(text, ".0", ""), text)
    special = np.flatnonzero(valid & ~plain)
    if len(special) == 0:
        return fixed
    out = fixed.to_pylist()
    for i in special:
        out[i] = one(float(values[i]))
    return pa.array(out, pa.string())


def _java_format(x: float, digits_repr: str) -> str:
    """Java's Double/Float.toString given the shortest scientific digits of x."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0.0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    mant, _, exp_s = digits_repr.partition("e")
    exp = int(exp_s)
    sign = ""
    if mant.startswith("-"):
        sign, mant = "-", mant[1:]
    digits = mant.replace(".", "").rstrip("0") or "0"
    a = abs(x)
    if 1e-3 <= a < 1e7:
        point = exp + 1
        if point <= 0:
            s = "0." + "0" * (-point) + digits
        elif point >= len(digits):
            s = digits + "0" * (point - len(digits)) + ".0"
        else:
            s = digits[:point] + "." + digits[point:]
        return sign + s
    frac = digits[1:] or "0"
    return f"{sign}{digits[0]}.{frac}E{exp}"


def java_double_str(x: float) -> str:
    """Java's Double.toString(x) (shortest round-trip digits, as JDK 19+)."""
    return _java_format(x, _shortest_sci(x))


def _shortest_sci(x: float) -> str:
    r = repr(x)
    if "e" in r and "." not in r.split("e")[0] and x != 0:
        # Java prints at least two digits and then picks the closest two-digit decimal:
        # Double.MIN_VALUE (repr 5e-324) is 4.9E-324
        two = f"{x:.1e}"
        if float(two) == x:
            return two
    if "e" in r or "inf" in r or "nan" in r:
        return r if "e" in r else "0e0"
    # repr is positional here: convert to d.ddd e n
    sign = "-" if r.startswith("-") else ""
    body = r.lstrip("-")
    intpart, _, frac = body.partition(".")
    digits = (intpart + frac).lstrip("0")
    if intpart.strip("0"):
        exp = len(intpart.lstrip("0")) - 1
    else:
        exp = -(len(frac) - len(frac.lstrip("0")) + 1)
    digits = digits.rstrip("0") or "0"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}e{exp}"


def java_float_str(x: float) -> str:
    """Java's Float.toString(x) (shortest digits that round-trip through float32)."""
    if math.isnan(x) or math.isinf(x) or x == 0.0:
        return _java_format(x, "0e0")
    s = np.format_float_scientific(np.float32(x), unique=True, trim="-")
    return _java_format(x, s)


# ---------------------------------------------------------------------- time
def _render_timestamp(array: pa.Array, dtype: DataType, time_zone: str) -> pa.Array:
    p = 6 if dtype.precision is None else dtype.precision
    t = array.type
    if dtype.name == "TIMESTAMP_LTZ" or (pa.types.is_timestamp(t) and t.tz is not None):
        array = local_time(array, time_zone)
    text = pc.cast(array, pa.string())  # "yyyy-MM-dd HH:mm:ss.fff" with the unit's digits
    unit_digits = {"s": 0, "ms": 3, "us": 6, "ns": 9}[array.type.unit]
    if p == unit_digits:
        return text
    if p < unit_digits:
        return pc.utf8_slice_codeunits(text, 0, 19 + (p + 1 if p > 0 else 0))
    pad = "0" * (p - unit_digits)
    if unit_digits == 0:
        pad = "." + pad
    return pc.binary_join_element_wise(text, pad, "")


def _four_digit_year(text: pa.Array) -> pa.Array:
    """Flink (Calcite's DateTimeUtils) prints the year with exactly four digits, so a date
    past 9999-12-31 (9999-12-31 + INTERVAL '1' DAY) shows as year 0000."""
    return pc.replace_substring_regex(text, r"^\d+(\d{4})-", r"\1-")


def local_time(array: pa.Array, time_zone: str) -> pa.Array:
    """A TIMESTAMP_LTZ instant as the naive wall-clock timestamp of `time_zone`."""
    unit = array.type.unit
    zoned = array.cast(pa.timestamp(unit, tz=time_zone))
    return pc.local_timestamp(zoned)


def _render_time(array: pa.Array, dtype: DataType) -> pa.Array:
    p = dtype.precision or 0
    ms = pc.cast(array, pa.time32("ms")).cast(pa.int32())
    outside = pc.or_(pc.less(ms, 0), pc.greater_equal(ms, 86_400_000))
    if pc.any(outside).as_py():
        text = _time_beyond_a_day(ms)
    else:
        text = pc.cast(array, pa.string())  # HH:mm:ss.fff
    return pc.utf8_slice_codeunits(text, 0, 8 + (p + 1 if p > 0 else 0))


def _time_beyond_a_day(ms: pa.Array) -> pa.Array:
    """HH:mm:ss.fff of TIME values outside a day, as Flink's DateTimeUtils.formatTimestampMillis
    prints them: a negative value gets days added until it is not, the hour is not cut to a
    day and shows its last two digits (CAST('123' AS TIME), 123 hours, prints 23:00:00)."""
    raw = pc.fill_null(ms, 0).to_numpy(zero_copy_only=False).astype(np.int64)
    t = np.where(raw < 0, np.mod(raw, 86_400_000), raw).astype(np.int64)
    fields = (t // 3_600_000 % 100, t // 60_000 % 60, t // 1000 % 60, t % 1000)
    parts = [pc.utf8_lpad(pa.array(f).cast(pa.string()), w, "0") for f, w in zip(fields, (2, 2, 2, 3), strict=True)]
    text = pc.binary_join_element_wise(parts[0], parts[1], parts[2], ":")
    text = pc.binary_join_element_wise(text, parts[3], ".")
    return pc.if_else(ms.is_valid(), text, pa.scalar(None, pa.string()))


def _day_time(ms: int) -> str:
    sign = "-" if ms < 0 else "+"
    ms = abs(ms)
    days, rem = divmod(ms, 86_400_000)
    h, rem = divmod(rem, 3_600_000)
    m, rem = divmod(rem, 60_000)
    s, frac = divmod(rem, 1000)
    return f"{sign}{days} {h:02d}:{m:02d}:{s:02d}.{frac:03d}"


def _year_month(months: int) -> str:
    sign = "-" if months < 0 else "+"
    y, m = divmod(abs(months), 12)
    return f"{sign}{y}-{m:02d}"


# ---------------------------------------------------------------------- nested
def _elements(values: pa.Array, dtype: DataType, time_zone: str) -> list[str]:
    rendered = render_array(values, dtype, time_zone)
    return pc.fill_null(rendered, "NULL").to_pylist() if len(rendered) else []


def _render_list(array: pa.Array, dtype: DataType, time_zone: str) -> pa.Array:
    flat = array.flatten() if array.offset == 0 else pc.list_flatten(array)
    elems = _elements(flat, dtype.children[0], time_zone)
    offsets = pc.subtract(array.offsets, array.offsets[0]).to_pylist()
    valid = array.is_valid().to_pylist()
    out = [("[" + ", ".join(elems[offsets[i] : offsets[i + 1]]) + "]") if valid[i] else None for i in range(len(array))]
    return pa.array(out, pa.string())


def _render_multiset(array: pa.Array, dtype: DataType, time_zone: str) -> pa.Array:
    """MULTISET (Arrow: a list holding each element `count` times, equal elements adjacent)
    as Flink prints it: `{value=count, ...}`."""
    flat = array.flatten() if array.offset == 0 else pc.list_flatten(array)
    elems = _elements(flat, dtype.children[0], time_zone)
    offsets = pc.subtract(array.offsets, array.offsets[0]).to_pylist()
    valid = array.is_valid().to_pylist()
    out: list[str | None] = []
    for i in range(len(array)):
        if not valid[i]:
            out.append(None)
            continue
        runs: list[list] = []
        for e in elems[offsets[i] : offsets[i + 1]]:
            if runs and runs[-1][0] == e:
                runs[-1][1] += 1
            else:
                runs.append([e, 1])
        out.append("{" + ", ".join(f"{e}={c}" for e, c in runs) + "}")
    return pa.array(out, pa.string())


def _render_map(array: pa.Array, dtype: DataType, time_zone: str) -> pa.Array:
    raw = array.offsets.to_pylist()  # into the unsliced children
    lo0, hi0 = (raw[0], raw[-1]) if raw else (0, 0)
    keys = _elements(map_keys(array).slice(lo0, hi0 - lo0), dtype.children[0], time_zone)
    items = _elements(map_values(array).slice(lo0, hi0 - lo0), dtype.children[1], time_zone)
    offsets = [o - lo0 for o in raw]
    valid = array.is_valid().to_pylist()
    out: list[str | None] = []
    for i in range(len(array)):
        if not valid[i]:
            out.append(None)
            continue
        lo, hi = offsets[i], offsets[i + 1]
        out.append("{" + ", ".join(f"{keys[j]}={items[j]}" for j in range(lo, hi)) + "}")
    return pa.array(out, pa.string())


def _render_row(array: pa.Array, dtype: DataType, time_zone: str, named: bool = False) -> pa.Array:
    """ROW as `(1, a)`; a STRUCTURED value (`named`) as `(name=Bob, age=42)`, its
    fields' toString as Flink's Row prints them."""
    children = array.flatten()  # honours the array's offset
    cols = [_elements(children[i], ft, time_zone) for i, ft in enumerate(dtype.children)]
    if named:
        cols = [[f"{fn}={v}" for v in c] for fn, c in zip(dtype.field_names, cols, strict=True)]
    valid = array.is_valid().to_pylist()
    out = [("(" + ", ".join(c[r] for c in cols) + ")") if valid[r] else None for r in range(len(array))]
    return pa.array(out, pa.string())
