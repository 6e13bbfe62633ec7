"""Local and global phases of a two-phase window aggregation (TUMBLE / HOP / CUMULATE;
planner/optimizer/two_phase_window_agg.py builds them and documents the partial layout).

LocalWindowAggregate: per input (mini-)batch, one row per (slice, key) with partial
accumulators, computed with one Arrow hash aggregation (`window_slicing.SlicedFold`, the
same pre-aggregation the one-phase WindowAggregate does inside itself), plus `$slice_end`.
It keeps nothing between batches, so it is "stateless" for checkpoints: there is no
buffer to flush before a barrier or a watermark. Lateness stays exact: a row that is late
for some of its windows (judged with its own `__wm`, as the one-phase operator does) keeps
a partial row of its own carrying that `__wm`; rows late for none of their windows are
merged and their partial row carries the minimum watermark (never late).

GlobalWindowAggregate: the WindowAggregate operator over partial rows: each partial row
is assigned to the windows of its slice, late (row, window) pairs are dropped against the
row's `__wm`, the rest merged into the per-(window, key) state (a MergedAggregateSet),
and windows fire on watermarks exactly as in WindowAggregate. Same checkpoint state
("generic", `state_merge` for rescaling) as WindowAggregate.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from runtime.batch import INSERT, data_columns, row_kinds, row_watermarks
from runtime.errors import JobError
from runtime.graph import Node
from runtime.operators._common import make_batch
from runtime.operators.base import Operator, OperatorContext, Output, register_operator
from runtime.operators.window_agg import WindowAggregateOperator
from runtime.operators.window_assign import assign_windows, is_ltz, rowtime_ms, wall_to_instant
from runtime.operators.window_slicing import SlicedFold


@register_operator("LocalWindowAggregate")
class LocalWindowAggregateOperator(Operator):
    """Pre-aggregates each batch per (slice, key) into partial rows (module docstring)."""

    checkpointing = "stateless"  # nothing is kept between batches

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        p = node.params
        self.spec: dict[str, Any] = p["window"]
        self.time_index = int(p["time_index"])
        self.grouping: list[int] = list(p.get("grouping") or [])
        self.calls: list[dict[str, Any]] = list(p.get("aggs") or [])
        self.sliced = SlicedFold(self.spec, self.calls, self.grouping)

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        data = data_columns(batch)
        if data.num_rows == 0:
            return
        if (row_kinds(batch) != INSERT).any():
            raise JobError("WindowAggregate doesn't support consuming update and delete changes")
        tcol = data.column(self.time_index)
        ltz = is_ltz(tcol)
        ts, valid = rowtime_ms(tcol, self.ctx.time_zone)
        wms = None if self.ctx.is_batch else row_watermarks(batch)
        if not valid.all():  # rows without a rowtime belong to no window
            data, ts = data.filter(pa.array(valid)), ts[valid]
            wms = None if wms is None else wms[valid]
            if data.num_rows == 0:
                return
        sl = self.sliced
        late_some = None
        if wms is not None:
            first_end = sl.first_end(ts - np.mod(ts - sl.offset, sl.unit)) - 1
            timer = wall_to_instant(first_end, self.ctx.time_zone) if ltz else first_end
            late_some = timer <= wms
        partials, slice_start, pwm = sl.partials(data, ts, wms, late_some)
        cols = [*partials.columns, pa.array(slice_start + sl.unit, type=pa.int64())]
        out.emit(make_batch(self.node, cols, None, None if wms is None else pwm))


@register_operator("GlobalWindowAggregate")
class GlobalWindowAggregateOperator(WindowAggregateOperator):
    """Merges LocalWindowAggregate's partial rows into window state and fires windows as
    WindowAggregate does (module docstring)."""

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        p = node.params
        self.slice_end = int(p["slice_end"])
        self.ltz = bool(p.get("ltz"))
        self.sliced = SlicedFold(self.spec, self.calls, self.grouping)
        self.slicing_checked = True

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        data = data_columns(batch)
        if data.num_rows == 0:
            return
        assert self.sliced is not None
        slice_end = data.column(self.slice_end).to_numpy(zero_copy_only=False).astype(np.int64)
        partials = pa.RecordBatch.from_arrays(
            data.columns[: self.slice_end], schema=pa.schema(list(data.schema)[: self.slice_end])
        )
        wms = None if self.ctx.is_batch else row_watermarks(batch)
        rows, start, end = assign_windows(self.spec, slice_end - self.sliced.unit)
        self.fold_windows(partials, self.grouping, rows, start, end, wms)
