"""Window assignment shared by WindowTableFunction and WindowAggregate (not an operator).

All arithmetic is on int64 milliseconds. For a TIMESTAMP rowtime the wall clock *is* the
epoch-based value. For a TIMESTAMP_LTZ rowtime (an instant) windows are aligned in the
session time zone, as Flink does: the instant is shifted to the local wall clock, windows
are computed there (so a 1-day window starts at local midnight), window_start/window_end
are TIMESTAMP(3) wall-clock values, and the time at which a window fires (its "timer") is
the instant of the local `window_end - 1` (Flink's `toEpochMillsForTimer`).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.batch import row_watermarks
from runtime.errors import JobError
from runtime.operators._join_util import insert_only
from runtime.plan_params import WindowParams


def is_ltz(array: pa.Array) -> bool:
    return pa.types.is_timestamp(array.type) and array.type.tz is not None


def rowtime_ms(array: pa.Array, time_zone: str) -> tuple[np.ndarray, np.ndarray]:
    """(wall-clock ms as int64, validity mask) of a rowtime column."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    valid = pc.is_valid(array).to_numpy(zero_copy_only=False) if array.null_count else np.ones(len(array), dtype=bool)
    if pa.types.is_timestamp(array.type):
        if array.type.tz is not None and time_zone.upper() not in ("UTC", "Z", "GMT", "+00:00"):
            array = pc.local_timestamp(array.cast(pa.timestamp(array.type.unit, tz=time_zone)))
        array = array.cast(pa.timestamp(array.type.unit)).cast(pa.timestamp("ms"), safe=False)
        ms = array.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    else:
        ms = array.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    return ms.astype(np.int64, copy=False), valid


WindowInput = tuple[pa.RecordBatch, np.ndarray, np.ndarray | None, bool]


def window_input(
    batch: pa.RecordBatch, time_index: int, time_zone: str, is_batch: bool, operator: str
) -> WindowInput | None:
    """A batch as a window operator takes it: (data columns, rowtimes as wall-clock ms, the
    rows' watermarks (None in BATCH mode), whether the time column is a TIMESTAMP_LTZ); None
    for an empty batch. Update and delete rows fail the job as Flink's window operators do
    ("<operator> doesn't support consuming update and delete changes"); rows without a
    rowtime belong to no window and are dropped."""
    data = insert_only(batch, operator)
    if data.num_rows == 0:
        return None
    tcol = data.column(time_index)
    ts, valid = rowtime_ms(tcol, time_zone)
    wms = None if is_batch else row_watermarks(batch)
    if not valid.all():
        data, ts = data.filter(pa.array(valid)), ts[valid]
        wms = None if wms is None else wms[valid]
    return data, ts, wms, is_ltz(tcol)


def wall_to_instant(ms: np.ndarray, time_zone: str) -> np.ndarray:
    """Local wall-clock ms in `time_zone` to epoch ms (the later instant when ambiguous)."""
    if time_zone.upper() in ("UTC", "Z", "GMT", "+00:00") or len(ms) == 0:
        return ms
    arr = pa.array(ms, type=pa.timestamp("ms"))
    inst = pc.assume_timezone(arr, timezone=time_zone, ambiguous="latest", nonexistent="earliest")
    return inst.cast(pa.int64()).to_numpy(zero_copy_only=False).astype(np.int64)


def floor_start(ts: np.ndarray, offset: int, size: int) -> np.ndarray:
    """`ts - mod(ts - offset, size)` (size > 0): the start of the `size`-aligned interval
    holding each `ts`. One floor division: numpy's int64 `np.mod` costs several times
    more, and this runs on every row of a window job."""
    return np.floor_divide(ts - offset, size) * size + offset


def assign_windows(spec: WindowParams, ts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row index, window_start, window_end) for every (row, window) pair, vectorized
    (HOP and CUMULATE replicate a row once per window containing it)."""
    kind = spec.kind.upper()
    offset = int(spec.offset_ms or 0)
    n = len(ts)
    rows = np.arange(n, dtype=np.int64)
    if kind == "TUMBLE":
        size = int(spec.size_ms or 0)
        start = floor_start(ts, offset, size)
        return rows, start, start + size
    if kind == "HOP":
        size, slide = int(spec.size_ms or 0), int(spec.slide_ms or 0)
        count = -(-size // slide)
        last = floor_start(ts, offset, slide)
        k = np.arange(count, dtype=np.int64)
        starts = last[:, None] - k[None, :] * slide
        keep = starts + size > ts[:, None]
        r = np.repeat(rows, count).reshape(n, count)
        return r[keep], starts[keep], starts[keep] + size
    if kind == "CUMULATE":
        size, step = int(spec.size_ms or 0), int(spec.step_ms or 0)
        count = -(-size // step)
        start = floor_start(ts, offset, size)
        j = np.arange(1, count + 1, dtype=np.int64)
        ends = start[:, None] + np.minimum(j[None, :] * step, size)
        keep = ends > ts[:, None]
        r = np.repeat(rows, count).reshape(n, count)
        s = np.repeat(start, count).reshape(n, count)
        return r[keep], s[keep], ends[keep]
    raise JobError(f"Unsupported window kind {kind} here")


def window_prop_arrays(
    start: np.ndarray, end: np.ndarray, props: list[str], types: list[pa.DataType], time_zone: str, ltz: bool
) -> list[pa.Array]:
    """window_start / window_end / window_time columns in the requested Arrow types. A
    TIMESTAMP_LTZ-typed property is the instant of the wall-clock value."""
    out = []
    for name, t in zip(props, types, strict=True):
        wall = {"window_start": start, "window_end": end, "window_time": end - 1}[name]
        if pa.types.is_timestamp(t) and t.tz is not None and ltz:
            wall = wall_to_instant(wall, time_zone)
        arr = pa.array(wall, type=pa.int64()).cast(pa.timestamp("ms", tz=t.tz if pa.types.is_timestamp(t) else None))
        out.append(arr.cast(t) if arr.type != t else arr)
    return out
