"""Sort (batch ORDER BY), Limit (LIMIT / OFFSET without ORDER BY) and TemporalSort
(streaming ORDER BY a time attribute).

- Sort: buffers its input and emits it sorted at `end_input` (stable: ties keep arrival
  order). Batch only; the planner rejects a streaming sort on a non-time column. Past
  `taskmanager.memory.managed.size` it is an external merge sort (`ExternalSort`,
  runtime/operators/external_sort.py).
- Limit: passes rows [offset, offset + fetch) of its (insert-only) input through, in
  arrival order, as they come (a slice per batch); then ignores the rest.
- TemporalSort: buffers rows and, when the watermark reaches them, emits the rows with
  rowtime <= watermark sorted by the ORDER BY keys (the rowtime first). Rows whose rowtime
  is <= the watermark when they arrive are late and dropped (counted), as Flink's
  RowTimeSortOperator drops them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from runtime.batch import MAX_WATERMARK, row_watermarks
from runtime.checkpoint import format as state_format
from runtime.checkpoint.rescale import OldStates, key_group_zero_state
from runtime.frozen import frozen_dataclass
from runtime.graph import Node
from runtime.operators._common import make_batch
from runtime.operators._join_util import insert_only
from runtime.operators.base import Operator, OperatorContext, Output
from runtime.operators.external_sort import ExternalSort
from runtime.operators.rank import input_names, is_batch_node, offset_fetch
from runtime.operators.rank_common import SortKey, format_order, sort_order, take_rows
from runtime.operators.spec import (
    SINGLE,
    OperatorParams,
    OperatorSpec,
    PlanRefusedError,
    PlanView,
    SparkCapability,
    register_spec,
)
from runtime.operators.window_assign import rowtime_ms
from runtime.spill import MANAGED_MEMORY_SIZE


@frozen_dataclass
class SortParams(OperatorParams):
    """ORDER BY `order` (batch: the whole input, emitted sorted at its end)."""

    order: tuple[SortKey, ...]


@frozen_dataclass
class LimitParams(OperatorParams):
    """OFFSET `offset` FETCH `fetch` (None = no limit) without ORDER BY: rows in arrival order."""

    offset: int = 0
    fetch: int | None = None


@frozen_dataclass
class TemporalSortParams(OperatorParams):
    """Streaming ORDER BY `order`, whose first key is a time attribute (`time_kind`
    ROWTIME | PROCTIME) ascending: rows are emitted sorted as the watermark passes them."""

    order: tuple[SortKey, ...]
    time_kind: str = "ROWTIME"


class SortOperator(Operator):
    """Batch ORDER BY (module docstring): an `ExternalSort` bounded by
    `taskmanager.memory.managed.size` in BATCH mode."""

    # Batch mode only in practice (the buffer is sorted at end of input); snapshotted as is.
    checkpointing = "generic"
    state_attributes = ("buffer",)
    state_merge = {"buffer": "concat"}  # restore with another parallelism: subtask 0 takes all

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        order = SortParams.of(node).order
        # with checkpointing the buffer is the snapshot (never spilled)
        bound = MANAGED_MEMORY_SIZE.get(ctx.config) if ctx.is_batch and not ctx.checkpointing else 0
        self.sorter = ExternalSort(ctx.config, order, bound)

    @property
    def buffer(self) -> list[pa.RecordBatch | pa.Table]:
        """The rows held (the generic checkpoint's state; never spilled with checkpointing)."""
        return self.sorter.snapshot()

    @buffer.setter
    def buffer(self, value: list[pa.RecordBatch | pa.Table]) -> None:
        self.sorter.restore(value)

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        data = insert_only(batch, self.node.operator)
        if data.num_rows:
            self.sorter.add(data)

    def end_input(self, input_index: int, out: Output) -> None:
        if self.sorter.spilled:
            # merged a file per run at a time, as the executor takes the batches
            out.emit_later(self._merged())
            return
        table = self.sorter.take_buffer()
        if table is None:
            return
        cols = [table.column(i).combine_chunks() for i in range(table.num_columns)]
        idx = sort_order(cols, self.sorter.order, None, np.arange(table.num_rows, dtype=np.int64))
        out.emit(make_batch(self.node, take_rows(table, idx), np.zeros(len(idx), dtype=np.int8)))

    def _merged(self) -> Iterator[pa.RecordBatch]:
        width = len(self.node.schema)
        for piece in self.sorter.merged():
            cols = [piece.column(i).combine_chunks() for i in range(width)]
            yield make_batch(self.node, cols, np.zeros(piece.num_rows, np.int8))

    def close(self) -> None:
        """Remove the spill directory (also when the job failed before the end)."""
        self.sorter.close()
        super().close()


class LimitOperator(Operator):
    """LIMIT without ORDER BY (module docstring)."""

    checkpointing = "custom"  # the number of rows seen

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        p = LimitParams.of(node)
        self.offset = p.offset
        self.stop = None if p.fetch is None else self.offset + p.fetch
        self.seen = 0

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        data = insert_only(batch, self.node.operator)
        n = data.num_rows
        if n == 0:
            return
        lo = max(self.offset - self.seen, 0)
        hi = n if self.stop is None else min(max(self.stop - self.seen, 0), n)
        self.seen += n
        if hi > lo:
            part = data.slice(lo, hi - lo)
            out.emit(make_batch(self.node, list(part.columns), np.zeros(hi - lo, dtype=np.int8)))

    def snapshot_state(self, checkpoint_id: int) -> Any:
        return self.seen

    def restore_state(self, handles: Any) -> None:
        if handles is not None:  # None: a subtask the "single" exchange sends no row
            self.seen = int(handles)

    def rescale_snapshots(self, old: OldStates, new_range: tuple[int, int], index: int, parallelism: int) -> Any:
        """Every row reaches subtask 0 (a "single" exchange): it keeps the count."""
        return key_group_zero_state(old, new_range)


class TemporalSortOperator(Operator):
    """Streaming ORDER BY a time attribute (module docstring)."""

    checkpointing = "custom"  # rows waiting for the watermark

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        self.order: list[SortKey] = list(TemporalSortParams.of(node).order)
        self.time_index = self.order[0].index
        self.buffer: list[pa.RecordBatch] = []
        self.times: list[np.ndarray] = []

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        data = insert_only(batch, self.node.operator)
        if data.num_rows == 0:
            return
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
        if handles is None:  # a subtask the "single" exchange sends no row
            return
        d = state_format.unpack(handles)
        self.buffer, self.times = d["buffer"], d["times"]

    def rescale_snapshots(self, old: OldStates, new_range: tuple[int, int], index: int, parallelism: int) -> Any:
        """Every row reaches subtask 0 (a "single" exchange): it keeps the waiting rows."""
        return key_group_zero_state(old, new_range)


# ---------------------------------------------------------------------- specs
class _InsertOnlySpec(OperatorSpec[Any]):
    """Consumes an insert-only input and emits one (every row at most once)."""

    input_distribution = SINGLE
    rescalable = True  # all state in subtask 0 (`key_group_zero_state`)

    def changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str:
        if any(i.changelog_mode != "I" for i in inputs):
            raise PlanRefusedError(f"{self.name} doesn't support consuming update and delete changes")
        return "I"


class SortSpec(OperatorSpec[SortParams]):
    """Batch ORDER BY over all rows (one subtask); planned in BATCH mode only."""

    name = "Sort"
    params_type = SortParams
    operator_class = SortOperator
    input_distribution = SINGLE
    rescalable = True  # generic state, `state_merge`
    spark = SparkCapability(True, False, "Batch: `orderBy`.")

    def explain(self, node: PlanView) -> list[str]:
        return [f"orderBy=[{format_order(SortParams.of(node).order, input_names(node))}]"]


class LimitSpec(_InsertOnlySpec):
    """LIMIT / OFFSET without ORDER BY (one subtask: arrival order)."""

    name = "Limit"
    params_type = LimitParams
    operator_class = LimitOperator
    spark = SparkCapability(
        True,
        False,
        "Batch: LIMIT without ORDER BY keeps the first rows to arrive, which Spark does not define: the job runs "
        "only where the result cannot depend on it (at most FETCH rows, at most OFFSET rows, or all rows equal; "
        "checked at run time, the job fails naming the operator otherwise); over a Sort it is a SortLimit. "
        "Streaming: arrival order again.",
    )

    def explain(self, node: PlanView) -> list[str]:
        p = LimitParams.of(node)
        return offset_fetch(p.offset, p.fetch) + (["global=[true]"] if is_batch_node(node) else [])


class TemporalSortSpec(_InsertOnlySpec):
    """Streaming ORDER BY a time attribute (one subtask)."""

    name = "TemporalSort"
    params_type = TemporalSortParams
    operator_class = TemporalSortOperator
    spark = SparkCapability(False, False, "Structured Streaming cannot sort a stream.")

    def explain(self, node: PlanView) -> list[str]:
        return [f"orderBy=[{format_order(TemporalSortParams.of(node).order, input_names(node))}]"]


SORT = register_spec(SortSpec())
LIMIT = register_spec(LimitSpec())
TEMPORAL_SORT = register_spec(TemporalSortSpec())
