"""SessionWindowTableFunction: `SELECT * FROM TABLE(SESSION(TABLE t [PARTITION BY k],
DESCRIPTOR(ts), gap))` not followed by a window aggregation.

A session's extent is known only when it closes, so unlike TUMBLE / HOP / CUMULATE (the
stateless WindowTableFunction) the rows wait: each is buffered in the open session of its
partition key, sessions merge as rows bridge them, and when the watermark passes a
session's end (`window_end - 1`) its rows are emitted, in arrival order, with the session's
window_start, window_end and window_time appended. This is Flink 1.19+'s
UnalignedWindowTableFunctionOperator: rows late for every session of their key are
dropped (and counted), rows with a NULL time are dropped, sessions are emitted in timer
order. The output is insert-only and a window Top-N, window deduplication or window join
may follow it (Flink: "experimental" for SESSION).

The sessions and buffered rows are session.py's (`SessionWindows`, shared with the
SESSION window aggregate): here a fired session yields its rows instead of aggregates.
BATCH (beyond Flink, whose session TVF is streaming only): every row is buffered and the
sessions are emitted at the end of the input; past `taskmanager.memory.managed.size` the rows
are sorted on disk by (partition keys, rowtime) and a few complete sessions are emitted at a
time (session_sort.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from runtime.batch import MAX_WATERMARK
from runtime.checkpoint.format import register_state_type
from runtime.frozen import frozen_dataclass
from runtime.graph import Node
from runtime.operators._common import make_batch
from runtime.operators.base import Operator, OperatorContext, Output
from runtime.operators.session import SessionWindows
from runtime.operators.session_sort import SortedSessionInput
from runtime.operators.spec import (
    KEYED,
    OperatorParams,
    OperatorSpec,
    PlanView,
    SparkCapability,
    insert_only_input,
    register_spec,
)
from runtime.operators.window_assign import wall_to_instant, window_input, window_prop_arrays
from runtime.plan_params import WindowParams
from runtime.plan_text import format_window
from runtime.spill import MANAGED_MEMORY_SIZE
from runtime.state import KeyedStateBackend, create_backend

_PROPS = ["window_start", "window_end", "window_time"]


@frozen_dataclass
class SessionWindowTableFunctionParams(OperatorParams):
    """SESSION window `window` (gap, partition keys) over the time column `time_index`."""

    window: WindowParams
    time_index: int


@register_state_type
class SessionRows(SessionWindows):
    """SessionWindows whose fired sessions emit their buffered rows (the TVF's output)."""

    def _emit(self, out: Output) -> None:
        taken = self.take_fired()
        if taken is None:
            return
        fired, slots, start, end, _ = taken
        order = np.argsort(slots, kind="stable")  # session by session, arrival order within
        op = self.op
        assert isinstance(op, SessionWindowTableFunctionOperator)
        op.emit_rows(fired.take(pa.array(order, type=pa.int64())), start[slots[order]], end[slots[order]], out)


class SessionWindowTableFunctionOperator(Operator):
    """The module docstring. Keyed by the SESSION's partition keys (none: one subtask)."""

    checkpointing = "generic"
    state_attributes = ("sessions", "ltz")
    # restore with another parallelism (runtime/checkpoint/rescale.py), as WindowAggregate's sessions
    state_merge = {"sessions": "session_windows", "ltz": "any"}

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        p = SessionWindowTableFunctionParams.of(node)
        self.time_index = p.time_index
        self.grouping: list[int] = list(p.window.partition_keys)
        self.prop_types = [f.type.to_arrow() for f in node.schema[-3:]]
        self.state: KeyedStateBackend = ctx.state if ctx.state is not None else create_backend(ctx.config)
        self.ltz = False
        self.sessions = SessionRows(self, int(p.window.gap_ms or 0))
        # BATCH: the rows, sorted by (keys, rowtime) on disk past the bound (session_sort.py);
        # with checkpointing the sessions hold them (the snapshot)
        self.session_input: SortedSessionInput | None = None
        if ctx.is_batch and not ctx.checkpointing:
            bound = MANAGED_MEMORY_SIZE.get(ctx.config)
            self.session_input = SortedSessionInput(ctx.config, self.grouping, self.sessions.gap, bound)

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        taken = window_input(
            batch, self.time_index, self.ctx.time_zone, self.ctx.is_batch, "A SESSION window table function"
        )
        if taken is None:
            return
        data, ts, wms, self.ltz = taken
        if self.session_input is not None:
            self.session_input.add(data, ts)
            return
        self.sessions.process(data, ts, wms, out)

    def timer_of(self, end: np.ndarray) -> np.ndarray:
        """The instant at which sessions ending (wall clock) at `end` fire."""
        return wall_to_instant(end - 1, self.ctx.time_zone) if self.ltz else end - 1

    def emit_rows(self, rows: pa.RecordBatch, start: np.ndarray, end: np.ndarray, out: Output) -> None:
        cols = list(rows.columns)
        cols += window_prop_arrays(start, end, _PROPS, self.prop_types, self.ctx.time_zone, self.ltz)
        out.emit(make_batch(self.node, cols, np.zeros(rows.num_rows, dtype=np.int8)))

    def on_watermark(self, watermark: int, out: Output) -> None:
        self.sessions.fire(watermark, out)
        out.emit_watermark(watermark)

    def end_input(self, input_index: int, out: Output) -> None:
        if self.session_input is not None:
            self.session_input.finish(self.sessions, out)
            return
        self.sessions.fire(MAX_WATERMARK, out)

    def snapshot_state(self, checkpoint_id: int) -> Any:
        """The generic snapshot; BATCH sorted rows go to the sessions first (a hand-taken
        savepoint; refused with a hint once they spilled), which hold the rows from then on."""
        self._unsort()
        return super().snapshot_state(checkpoint_id)

    def _unsort(self) -> None:
        if self.session_input is not None:
            self.session_input.move_to(self.sessions)
            self.session_input.close()
            self.session_input = None

    def after_restore(self) -> None:
        self.sessions.op = self
        self._unsort()  # restored sessions hold rows: the rest joins them in memory

    def close(self) -> None:
        """Remove the BATCH spill directory (also when the job failed)."""
        if self.session_input is not None:
            self.session_input.close()
        super().close()


class SessionWindowTableFunctionSpec(OperatorSpec[SessionWindowTableFunctionParams]):
    """Keyed by the partition keys; insert-only in and out."""

    name = "SessionWindowTableFunction"
    params_type = SessionWindowTableFunctionParams
    operator_class = SessionWindowTableFunctionOperator
    input_distribution = KEYED
    rescalable = True
    spark = SparkCapability(False, True, "Batch: not mapped yet.")

    def input_keys(self, params: SessionWindowTableFunctionParams, input_index: int) -> tuple[int, ...]:
        return params.window.partition_keys

    def changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str:
        insert_only_input(node, inputs, "a SESSION window table function needs an insert-only input")
        return "I"

    def explain(self, node: PlanView) -> list[str]:
        p = self.params(node)
        in_names = [f.name for f in node.inputs[0].fields]
        return [f"window=[{format_window(p.window, in_names[p.time_index])}]"]


SESSION_WINDOW_TABLE_FUNCTION = register_spec(SessionWindowTableFunctionSpec())
