"""Values → text as Flink's CSV and JSON serializers write them, a column at a time.

Both use Jackson: numbers as Java prints them (DOUBLE via `Double.toString`, DECIMAL in
plain notation), booleans 'true'/'false', DATE `yyyy-MM-dd`, TIME `HH:mm:ss[.fraction]`,
TIMESTAMP `yyyy-MM-dd HH:mm:ss[.fraction]` where the fraction has as few digits as
needed (`appendFraction(NANO_OF_SECOND, 0, 9, true)`); JSON's TIMESTAMP_LTZ adds 'Z'.
"""

from __future__ import annotations

import base64

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.render import render_array
from runtime.types import DataType

_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


def _fraction(frac: np.ndarray, digits: int) -> pa.Array:
    """'.5' for 500 ms, '' for 0: Java's minimal-width fraction."""
    text = pc.utf8_lpad(pc.cast(pa.array(frac), pa.string()), digits, "0")
    text = pc.utf8_rtrim(text, characters="0")
    return pc.if_else(pa.array(frac == 0), "", pc.binary_join_element_wise(".", text, ""))


def format_timestamp(array: pa.Array, iso: bool = False) -> pa.Array:
    unit = array.type.unit
    per = _PER_SECOND[unit]
    raw = pc.fill_null(pc.cast(array, pa.int64()), 0).to_numpy(zero_copy_only=False)
    secs = np.floor_divide(raw, per)
    frac = raw - secs * per
    base = pc.strftime(pa.array(secs, pa.timestamp("s")), format="%Y-%m-%dT%H:%M:%S" if iso else "%Y-%m-%d %H:%M:%S")
    text = pc.binary_join_element_wise(base, _fraction(frac, len(str(per)) - 1), "")
    return pc.if_else(array.is_null(), pa.nulls(len(array), pa.string()), text)


def format_time(array: pa.Array) -> pa.Array:
    ms = pc.fill_null(pc.cast(array, pa.int32()), 0).to_numpy(zero_copy_only=False).astype(np.int64)
    secs = ms // 1000
    base = pc.strftime(pa.array(secs, pa.timestamp("s")), format="%H:%M:%S")
    text = pc.binary_join_element_wise(base, _fraction(ms - secs * 1000, 3), "")
    return pc.if_else(array.is_null(), pa.nulls(len(array), pa.string()), text)


def format_text_column(array: pa.Array | pa.ChunkedArray, dtype: DataType, style: str = "csv") -> pa.Array:
    """Text of each value (nulls stay null) for the 'csv' or 'json' serializer."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    n = dtype.name
    if n == "BOOLEAN":
        return pc.if_else(array, "true", "false")
    if n in ("FLOAT", "DOUBLE"):
        return render_array(array, dtype)
    if n in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        text = format_timestamp(array)
        if n == "TIMESTAMP_LTZ" and style == "json":
            text = pc.binary_join_element_wise(text, "Z", "")
        return text
    if n == "TIME":
        return format_time(array)
    if n in ("BINARY", "VARBINARY"):
        return pa.array([None if b is None else base64.b64encode(b).decode() for b in array.to_pylist()], pa.string())
    if n == "INTERVAL_DAY_TIME":
        return pc.cast(pc.cast(array, pa.int64()), pa.string())
    return pc.cast(array, pa.string())
