"""Sort (batch ORDER BY), Limit (LIMIT / OFFSET without ORDER BY) and TemporalSort
(streaming ORDER BY a time attribute).

- Sort: buffers its input and emits it sorted at `end_input` (stable: ties keep arrival
  order). Batch only; the planner rejects a streaming sort on a non-time column.
- Limit: passes rows [offset, offset + fetch) of its (insert-only) input through, in
  arrival order, as they come (a slice per batch); then ignores the rest.
- TemporalSort: buffers rows and, when the watermark reaches them, emits the rows with
  rowtime <= watermark sorted by the ORDER BY keys (the rowtime first). Rows whose rowtime
  is <= the watermark when they arrive are late and dropped (counted), as Flink's
  RowTimeSortOperator drops them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from runtime.batch import INSERT, MAX_WATERMARK, data_columns, row_kinds, row_watermarks
from runtime.checkpoint import format as state_format
from runtime.errors import JobError
from runtime.graph import Node
from runtime.operators._common import make_batch
from runtime.operators.base import Operator, OperatorContext, Output, register_operator
from runtime.operators.rank_common import sort_order, take_rows
from runtime.operators.window_assign import rowtime_ms


def _insert_only(batch: pa.RecordBatch, name: str) -> None:
    if (row_kinds(batch) != INSERT).any():
        raise JobError(f"{name} doesn't support consuming update and delete changes")


@register_operator("Sort")
class SortOperator(Operator):
    """Params: order ([{index, descending, nulls_first}])."""

    # Batch mode only in practice (the buffer is sorted at end of input); snapshotted as is.
    checkpointing = "generic"
    state_attributes = ("buffer",)
    state_merge = {"buffer": "concat"}  # restore with another parallelism: subtask 0 takes all

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        self.order: list[dict[str, Any]] = list(node.params.get("order") or [])
        self.buffer: list[pa.RecordBatch] = []

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        data = data_columns(batch)
        if data.num_rows:
            _insert_only(batch, "Sort")
            self.buffer.append(data)

    def end_input(self, input_index: int, out: Output) -> None:
        if not self.buffer:
            return
        table = pa.Table.from_batches(self.buffer).combine_chunks()
        self.buffer = []
        cols = [table.column(i).combine_chunks() for i in range(table.num_columns)]
        idx = sort_order(cols, self.order, None, np.arange(table.num_rows, dtype=np.int64))
        out.emit(make_batch(self.node, take_rows(table, idx), np.zeros(len(idx), dtype=np.int8)))


@register_operator("Limit")
class LimitOperator(Operator):
    """Params: offset, fetch (None = no limit)."""

    checkpointing = "custom"  # the number of rows seen

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        self.offset = int(node.params.get("offset") or 0)
        fetch = node.params.get("fetch")
        self.stop = None if fetch is None else self.offset + int(fetch)
        self.seen = 0

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        data = data_columns(batch)
        n = data.num_rows
        if n == 0:
            return
        _insert_only(batch, "Limit")
        lo = max(self.offset - self.seen, 0)
        hi = n if self.stop is None else min(max(self.stop - self.seen, 0), n)
        self.seen += n
        if hi > lo:
            part = data.slice(lo, hi - lo)
            out.emit(make_batch(self.node, list(part.columns), np.zeros(hi - lo, dtype=np.int8)))

    def snapshot_state(self, checkpoint_id: int) -> Any:
        return self.seen

    def restore_state(self, handles: Any) -> None:
        self.seen = int(handles)


@register_operator("TemporalSort")
class TemporalSortOperator(Operator):
    """Params: order (the first key is the time attribute, ascending)."""

    checkpointing = "custom"  # rows waiting for the watermark

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        self.order: list[dict[str, Any]] = list(node.params.get("order") or [])
        self.time_index = int(self.order[0]["index"])
        self.buffer: list[pa.RecordBatch] = []
        self.times: list[np.ndarray] = []

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        data = data_columns(batch)
        if data.num_rows == 0:
            return
        _insert_only(batch, "TemporalSort")
        ts, valid = rowtime_ms(data.column(self.time_index), self.ctx.time_zone)
        wms = row_watermarks(batch)
        ok = valid.copy()
        if wms is not None:
            ok &= ts > wms
        if not ok.all():
            self.ctx.metrics.late_rows_dropped += int((~ok).sum())
            data, ts = data.filter(pa.array(ok)), ts[ok]
        if data.num_rows:
            self.buffer.append(data)
            self.times.append(ts)

    def on_watermark(self, watermark: int, out: Output) -> None:
        self._fire(watermark, out)
        out.emit_watermark(watermark)

    def end_input(self, input_index: int, out: Output) -> None:
        self._fire(MAX_WATERMARK, out)

    def _fire(self, watermark: int, out: Output) -> None:
        if not self.buffer:
            return
        ts = np.concatenate(self.times)
        due = ts <= watermark
        if not due.any():
            return
        table = pa.Table.from_batches(self.buffer).combine_chunks()
        if due.all():
            self.buffer, self.times = [], []
        else:
            self.buffer = table.filter(pa.array(~due)).to_batches()
            self.times = [ts[~due]]
            table = table.filter(pa.array(due))
        cols = [table.column(i).combine_chunks() for i in range(table.num_columns)]
        idx = sort_order(cols, self.order, None, np.arange(table.num_rows, dtype=np.int64))
        out.emit(make_batch(self.node, take_rows(table, idx), np.zeros(len(idx), dtype=np.int8)))

    def snapshot_state(self, checkpoint_id: int) -> Any:
        return state_format.pack({"buffer": self.buffer, "times": self.times})

    def restore_state(self, handles: Any) -> None:
        d = state_format.unpack(handles)
        self.buffer, self.times = d["buffer"], d["times"]
