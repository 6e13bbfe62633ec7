"""MiniBatchAssigner: coalesces input batches into mini-batches for the keyed operators
downstream (Flink's `table.exec.mini-batch.*`).

Flink's assigner emits mini-batch markers and the aggregate buffers rows per key until a
marker arrives. Our keyed operators already fold a whole Arrow batch per key at once
(one state access and at most one -U/+U pair per key and batch), so the equivalent here
is to make the batches larger: the assigner buffers input batches and forwards their
concatenation when `size` rows are buffered, when `allow_latency_ms` has passed since the
first buffered row (checked on arrival and by the executor's idle timer `on_timer`), and
always before a watermark, before a checkpoint barrier and at the end of input. Rows keep
their own `__op` and `__wm`, so the final table is unchanged; only the intermediate
-U/+U churn shrinks.

Params: `allow_latency_ms` (0 = no time bound: flush every batch), `size` (rows; <= 0 =
no size bound), `mode` ("ProcTime"/"RowTime": EXPLAIN only), `hold` (False: forward every
batch at once). The planner clears `hold` below an operator with several inputs that
carries a rowtime on (a UNION ALL, an interval join): rows held in one input while another
input's watermark moves the operator's on would reach it late, where Flink (whose
assigner only marks batches and holds no row) has them on time.
"""

from __future__ import annotations

import time

import pyarrow as pa

from runtime.frozen import frozen_dataclass
from runtime.graph import Node
from runtime.operators.base import Operator, OperatorContext, Output
from runtime.operators.spec import OperatorParams, OperatorSpec, PlanView, register_spec

PROC_TIME = "ProcTime"
ROW_TIME = "RowTime"


@frozen_dataclass
class MiniBatchAssignerParams(OperatorParams):
    """Flush after `allow_latency_ms` (0: every batch) or `size` rows (<= 0: no bound);
    `mode` ("ProcTime" / "RowTime") is shown by EXPLAIN only; `hold` False: every batch is
    forwarded at once (see the module docstring)."""

    allow_latency_ms: int
    size: int
    mode: str = PROC_TIME
    hold: bool = True


class MiniBatchAssignerOperator(Operator):
    """Buffers batches up to the mini-batch size / latency (see the module docstring)."""

    checkpointing = "stateless"  # the buffer is flushed before every barrier

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        params = MiniBatchAssignerParams.of(node)
        self.latency_ms = params.allow_latency_ms if params.hold else 0
        self.size = params.size
        self._buffer: list[pa.RecordBatch] = []
        self._rows = 0
        self._since = 0.0

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        if batch.num_rows == 0:
            return
        if self.latency_ms <= 0:
            out.emit(batch)
            return
        if not self._buffer:
            self._since = time.monotonic()
        elif batch.schema != self._buffer[0].schema:
            self.flush(out)
            self._since = time.monotonic()
        self._buffer.append(batch)
        self._rows += batch.num_rows
        if (self.size > 0 and self._rows >= self.size) or self._expired():
            self.flush(out)

    def _expired(self) -> bool:
        return bool(self._buffer) and (time.monotonic() - self._since) * 1000.0 >= self.latency_ms

    def flush(self, out: Output) -> None:
        """Forward the buffered rows as one batch."""
        if not self._buffer:
            return
        if len(self._buffer) == 1:
            out.emit(self._buffer[0])
        else:
            table = pa.Table.from_batches(self._buffer).combine_chunks()
            out.emit(table.to_batches(max_chunksize=max(table.num_rows, 1))[0])
        self.ctx.metrics.extra["mini_batches"] = self.ctx.metrics.extra.get("mini_batches", 0) + 1
        self._buffer, self._rows = [], 0

    def on_timer(self, out: Output) -> None:
        """Called by the executor while its sources are idle: flush an expired buffer."""
        if self._expired():
            self.flush(out)

    def on_watermark(self, watermark: int, out: Output) -> None:
        self.flush(out)
        out.emit_watermark(watermark)

    def prepare_snapshot_pre_barrier(self, checkpoint_id: int, out: Output) -> None:
        self.flush(out)

    def end_input(self, input_index: int, out: Output) -> None:
        self.flush(out)


class MiniBatchAssignerSpec(OperatorSpec[MiniBatchAssignerParams]):
    """Only buffers: runs on every subtask, forwards the changelog."""

    name = "MiniBatchAssigner"
    params_type = MiniBatchAssignerParams
    operator_class = MiniBatchAssignerOperator
    forwards_changelog = True
    parallel = True
    rescalable = True

    def explain(self, node: PlanView) -> list[str]:
        p = self.params(node)
        return [f"interval=[{p.allow_latency_ms}ms]", f"mode=[{p.mode}]"]


MINI_BATCH_ASSIGNER = register_spec(MiniBatchAssignerSpec())
