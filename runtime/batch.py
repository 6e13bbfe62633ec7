"""Conventions for the system columns a batch may carry after its data columns.

A batch's first N columns are the data columns of its edge's schema (N = len(schema)).
After them, by name, optional system columns:

- `__op` (int8): the row kind of each row in a changelog stream (absent = all +I).
- `__wm` (int64): the watermark (ms) in effect when the row arrived, i.e. the watermark
  the source emitted just before this row. It lets an operator decide lateness per row
  exactly as Flink does with a per-record watermark, while still working a batch at a time.
  Operators that pass rows through (Calc, WindowTableFunction, Union) keep it; operators
  that make new rows (aggregates) do not emit it.
- `__split` (dictionary<int32, string>): the source split a row came from, only between a
  source that reads its splits together (Kafka partitions) and the table's
  WatermarkAssigner, which keeps one watermark per split (Flink's per-partition
  watermarks). Its dictionary lists every split the source subtask reads (so a split
  that has produced nothing yet holds the watermark back, as in Flink); a batch holds
  rows of one split. Calc forwards it; the WatermarkAssigner drops it.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

ROW_KIND = "__op"
ROW_WATERMARK = "__wm"
ROW_SPLIT = "__split"
SYSTEM_COLUMNS = (ROW_KIND, ROW_WATERMARK, ROW_SPLIT)

INSERT = 0
UPDATE_BEFORE = 1
UPDATE_AFTER = 2
DELETE = 3
ROW_KIND_NAMES = ("+I", "-U", "+U", "-D")

# Watermark before any was emitted, and the final one a bounded source emits at its end.
MIN_WATERMARK = -(2**63)
MAX_WATERMARK = 2**63 - 1


def data_width(batch: pa.RecordBatch) -> int:
    """Number of data columns (those before any system column)."""
    names = batch.schema.names
    n = len(names)
    while n and names[n - 1] in SYSTEM_COLUMNS:
        n -= 1
    return n


def data_columns(batch: pa.RecordBatch) -> pa.RecordBatch:
    """The batch without its system columns."""
    n = data_width(batch)
    if n == batch.num_columns:
        return batch
    return pa.RecordBatch.from_arrays(batch.columns[:n], schema=pa.schema(list(batch.schema)[:n]))


def row_kinds(batch: pa.RecordBatch) -> np.ndarray:
    """Row kinds as an int8 numpy array (all INSERT when the batch has no `__op`)."""
    idx = batch.schema.get_field_index(ROW_KIND)
    if idx < 0:
        return np.zeros(batch.num_rows, dtype=np.int8)
    return batch.column(idx).to_numpy(zero_copy_only=False).astype(np.int8, copy=False)


def row_watermarks(batch: pa.RecordBatch) -> np.ndarray | None:
    idx = batch.schema.get_field_index(ROW_WATERMARK)
    if idx < 0:
        return None
    return batch.column(idx).to_numpy(zero_copy_only=False)


def with_system_columns(
    data: pa.RecordBatch, kinds: np.ndarray | pa.Array | None = None, watermarks: np.ndarray | pa.Array | None = None
) -> pa.RecordBatch:
    """`data` (data columns only) with `__op` and/or `__wm` appended."""
    arrays = list(data.columns)
    fields = list(data.schema)
    if kinds is not None:
        arrays.append(pa.array(kinds, type=pa.int8()))
        fields.append(pa.field(ROW_KIND, pa.int8(), False))
    if watermarks is not None:
        arrays.append(pa.array(watermarks, type=pa.int64()))
        fields.append(pa.field(ROW_WATERMARK, pa.int64(), False))
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))


def carry_system_columns(source: pa.RecordBatch, data: pa.RecordBatch) -> pa.RecordBatch:
    """New data columns (same row count as `source`) with `source`'s system columns kept."""
    n = data_width(source)
    if n == source.num_columns:
        return data
    arrays = list(data.columns) + list(source.columns[n:])
    fields = list(data.schema) + list(source.schema)[n:]
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))
