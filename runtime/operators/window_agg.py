"""WindowAggregate: TUMBLE / HOP / CUMULATE (incremental, keyed accumulators) and
SESSION (see session.py) over insert-only input."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa

from runtime.aggregates.aggset import AggregateSet
from runtime.batch import MAX_WATERMARK
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
from runtime.operators.window_assign import (
    assign_windows,
    wall_to_instant,
    window_input,
    window_prop_arrays,
)
from runtime.operators.window_slicing import BoundedPartials, SlicedFold, can_slice, slice_unit
from runtime.operators.window_slots import WindowSlotCache
from runtime.plan_params import AggCallParams, WindowParams
from runtime.plan_text import format_agg, format_window
from runtime.spill import MANAGED_MEMORY_SIZE, SpilledStateError, spill_refusal, tmp_dir
from runtime.state import KeyedStateBackend, create_backend
from runtime.state.ttl import now_ms as processing_time_ms

# Window properties an aggregate may output (in `window_props`) and their EXPLAIN function.
WINDOW_PROPERTIES = {"window_start": "start", "window_end": "end", "window_time": "rowtime"}


@frozen_dataclass
class WindowAggregateParams(OperatorParams):
    """Aggregate `aggs` per window `window` (over the time column `time_index`) and the
    grouping columns `grouping`; the output ends with the `window_props` (a subset of
    window_start / window_end / window_time, in output order)."""

    window: WindowParams
    time_index: int
    grouping: tuple[int, ...]
    aggs: tuple[AggCallParams, ...]
    window_props: tuple[str, ...] = ()
    # The time column is a processing-time attribute: in STREAMING a window fires when the
    # processing-time clock passes its end (Flink's processing-time timers), not by watermark.
    proctime: bool = False


# Rows per output batch when windows fire (a final BATCH firing emits every group).
_EMIT_CHUNK_ROWS = 1 << 16


def _grow(arr: np.ndarray, n: int) -> np.ndarray:
    if len(arr) >= n:
        return arr
    out = np.zeros(max(n, 2 * len(arr), 16), dtype=arr.dtype)
    out[: len(arr)] = arr
    return out


class WindowAggregateOperator(Operator):
    """Aggregates per (window, grouping keys) and emits each window once, when it fires.

    Streaming: a (row, window) pair is dropped as late when the window's timer
    (`window_end - 1`, as an instant) is <= the row's `__wm`; a row dropped from all its
    windows counts in `metrics.late_rows_dropped`. Windows fire in `on_watermark` when
    their timer <= the watermark, in timer order, emitting +I rows. Batch: no lateness,
    everything is emitted at `end_input`. Output: grouping columns, aggregate values, the
    requested window properties.

    Checkpoints: generic (key index by key group + accumulators, timers, sessions).
    BATCH's bounded partials (`window_slicing.BoundedPartials`, spilled or not) are not in
    that snapshot: with checkpointing configured a BATCH job folds into the keyed state
    instead (as STREAMING does, fired at the end of input), and a snapshot of a job without
    it (a savepoint taken by hand) is refused (runtime.spill.SpilledStateError).
    """

    checkpointing = "generic"
    state_attributes = ("aggset", "timers", "sessions", "ltz")
    # restore with another parallelism (runtime/checkpoint/rescale.py)
    state_merge = {"aggset": "slot_object", "timers": "slot_array", "sessions": "session_windows", "ltz": "any"}
    slot_attributes = ("timers",)  # rocksdb: written into RocksDB per slot

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        p = WindowAggregateParams.of(node)
        self.spec: WindowParams = p.window
        self.kind = self.spec.kind.upper()
        self.time_index = p.time_index
        self.grouping: list[int] = list(p.grouping)
        self.calls: list[AggCallParams] = list(p.aggs)
        self.props: list[str] = list(p.window_props)
        self.proctime = p.proctime and not ctx.is_batch
        self.prop_types = [f.type.to_arrow() for f in node.schema[len(node.schema) - len(self.props) :]]
        self.key_types = [f.type.to_arrow() for f in node.schema[: len(self.grouping)]]
        self.state: KeyedStateBackend = ctx.state if ctx.state is not None else create_backend(ctx.config)
        self.aggset: AggregateSet | None = None
        self.ltz = False
        self.timers = np.zeros(0, dtype=np.int64)
        self.sessions: SessionWindows | None = None
        # BATCH SESSION: the rows, sorted by (keys, rowtime) on disk past the bound (session_sort.py)
        self.session_input: SortedSessionInput | None = None
        if self.kind == "SESSION":
            self.sessions = SessionWindows(self, int(self.spec.gap_ms or 0))
            if ctx.is_batch and not ctx.checkpointing:  # with checkpointing the sessions hold the rows (snapshot)
                bound = MANAGED_MEMORY_SIZE.get(ctx.config)
                self.session_input = SortedSessionInput(ctx.config, self.grouping, self.sessions.gap, bound)
        self.sliced: SlicedFold | None = None  # decided on the first batch (needs input types)
        self.slicing_checked = False
        # BATCH with sliced calls: the merged partial rows, emitted at end_input (no hash
        # index per (window, key): window_slicing.BoundedPartials)
        self.bounded: BoundedPartials | None = None
        # Restored from a snapshot: BATCH goes on folding into the keyed state it restored
        # (a group must not be split between that state and bounded partials).
        self.restored = False
        # (window, key) -> slot in front of the state's lookup (one integer grouping key)
        unit = slice_unit(self.spec)
        self.slot_cache: WindowSlotCache | None = (
            WindowSlotCache(unit) if unit and len(self.grouping) == 1 and self.state.stable_slots else None
        )

    # ------------------------------------------------------------------ input
    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        if self.proctime:  # windows the clock passed fire before later rows arrive
            self.fire(processing_time_ms(), out)
        taken = window_input(batch, self.time_index, self.ctx.time_zone, self.ctx.is_batch, WINDOW_AGGREGATE.name)
        if taken is None:
            return
        data, ts, wms, self.ltz = taken
        if self.session_input is not None:
            self.session_input.add(data, ts)
            return
        if self.sessions is not None:
            self.sessions.process(data, ts, wms, out)
            return
        if not self.slicing_checked:
            self.slicing_checked = True
            if can_slice(self.spec, self.calls, [f.type for f in data.schema], self.grouping):
                self.sliced = SlicedFold(self.spec, self.calls, self.grouping)
        grouping = self.grouping
        row_wms = wms
        if self.sliced is not None and self.ctx.is_batch and not self.ctx.checkpointing and not self.restored:
            # bounded: merge partials, emit at the end
            partial, slice_start, _ = self.sliced.partials(data, ts, None, None, adaptive=True)
            if self.bounded is None:
                conf = self.ctx.config
                self.bounded = BoundedPartials(
                    self.sliced, memory_bytes=MANAGED_MEMORY_SIZE.get(conf), spill_dir=tmp_dir(conf)
                )
            self.bounded.add(partial, slice_start)
            return
        if self.sliced is not None:  # pre-aggregate per (slice, key): window_slicing.py
            sl = self.sliced
            starts = sl.slice_start(ts)
            late_some = None if wms is None else self.timer_of(sl.first_end(starts)) <= wms
            data, slice_start, row_wms = sl.partials(data, ts, wms, late_some, slice_start=starts)
            row_wms = None if wms is None else row_wms
            grouping = list(range(len(self.grouping)))
            rows, start, end = assign_windows(self.spec, slice_start)
        else:
            rows, start, end = assign_windows(self.spec, ts)
        self.fold_windows(data, grouping, rows, start, end, row_wms)

    def fold_windows(
        self,
        data: pa.RecordBatch,
        grouping: list[int],
        rows: np.ndarray,
        start: np.ndarray,
        end: np.ndarray,
        row_wms: np.ndarray | None,
    ) -> None:
        """Fold (row, window) pairs into the window state: drop the late pairs (timer at
        or below the row's `__wm`), look up (window, keys) slots, fold. `data` is the input
        or, when sliced, the partial rows (what GlobalWindowAggregate passes too)."""
        timer = self.timer_of(end)
        if row_wms is not None:
            ok = timer > row_wms[rows]
            kept_rows = np.zeros(data.num_rows, dtype=bool)
            kept_rows[rows[ok]] = True
            self.ctx.metrics.late_rows_dropped += int(data.num_rows - kept_rows.sum())
            rows, start, end, timer = rows[ok], start[ok], end[ok], timer[ok]
        if len(rows) == 0:
            return
        if len(rows) == data.num_rows and (rows == np.arange(len(rows))).all():
            pairs = data  # every row in exactly one window (TUMBLE, nothing late)
        else:
            take = pa.array(rows, type=pa.int64())
            pairs = pa.RecordBatch.from_arrays([c.take(take) for c in data.columns], schema=data.schema)
        keys = [pa.array(start), pa.array(end)] + [pairs.column(g) for g in grouping]
        # Rows reach this subtask by their group keys alone: so must the state's key groups.
        self.state.group_key_columns = range(2, len(keys))
        if self.slot_cache is not None:
            slots = self.slot_cache.lookup(self.state, keys, end)
        else:
            slots = self.state.lookup(keys, len(rows))
        if self.aggset is None:
            types = [f.type for f in data.schema]
            self.aggset = self.sliced.aggset(types) if self.sliced else AggregateSet(self.calls, types, retract=False)
        self.aggset.grow(self.state.capacity)
        self.timers = _grow(self.timers, self.state.capacity)
        self.timers[slots] = timer
        self.aggset.fold(slots, np.ones(len(rows), dtype=np.int64), pairs)

    def timer_of(self, end: np.ndarray) -> np.ndarray:
        """The instant at which windows ending (wall clock) at `end` fire."""
        return wall_to_instant(end - 1, self.ctx.time_zone) if self.ltz else end - 1

    # ------------------------------------------------------------------ firing
    def on_watermark(self, watermark: int, out: Output) -> None:
        self.fire(watermark, out)
        out.emit_watermark(watermark)

    def on_timer(self, out: Output) -> None:
        """Processing-time windows fire once the processing-time clock (the one PROCTIME()
        reads, `runtime.state.ttl.now_ms`) passes their end, also while no rows arrive."""
        if self.proctime:
            self.fire(processing_time_ms(), out)

    def end_input(self, input_index: int, out: Output) -> None:
        if self.session_input is not None and self.sessions is not None:
            self.session_input.finish(self.sessions, out)
            return
        if self.bounded is not None:
            # as many groups as input rows at worst: made a chunk at a time, as the
            # executor takes them (Output.emit_later), never all at once
            out.emit_later(self.final_batches())
            return
        self.fire(MAX_WATERMARK, out)

    def final_batches(self) -> Iterator[pa.RecordBatch]:
        """BATCH end of input with bounded partials: `drain_bounded`'s chunks, then what
        the keyed state holds (HOP / CUMULATE windows)."""
        buffer = Output()
        for _ in self.drain_bounded(buffer):
            yield from buffer.drain()[0]
        self.fire(MAX_WATERMARK, buffer)
        yield from buffer.drain()[0]

    def drain_bounded(self, out: Output) -> Iterator[None]:
        """BATCH: emit the merged partial rows of `self.bounded`, in chunks ordered by
        window, yielding after each chunk. A TUMBLE slice is its window and each partial
        row one (window, key) group, so a chunk is finished by a MergedAggregateSet over slots 0..n-1 (the same merge
        and result rules as the streaming state); HOP / CUMULATE partials are replicated
        into their windows and folded into the keyed state, fired by `fire`."""
        bounded, self.bounded = self.bounded, None
        assert bounded is not None and self.sliced is not None
        grouping = list(range(len(self.grouping)))
        size = int(self.spec.size_ms or 0)
        aggset = None
        for part, slice_start in bounded.drain(_EMIT_CHUNK_ROWS):
            if self.kind != "TUMBLE":
                rows, start, end = assign_windows(self.spec, slice_start)
                self.fold_windows(part, grouping, rows, start, end, None)
                continue
            if aggset is None:
                aggset = self.sliced.aggset([f.type for f in part.schema])
            n = part.num_rows
            slots = np.arange(n, dtype=np.int64)
            aggset.grow(n)
            aggset.fold(slots, np.ones(n, dtype=np.int64), part)
            cols = [part.column(j).cast(t) for j, t in zip(grouping, self.key_types, strict=True)]
            cols += aggset.results(slots)
            end = slice_start + size
            cols += window_prop_arrays(slice_start, end, self.props, self.prop_types, self.ctx.time_zone, self.ltz)
            out.emit(make_batch(self.node, cols, np.zeros(n, dtype=np.int8)))
            aggset.reset(slots)
            yield

    def fire(self, watermark: int, out: Output) -> None:
        if self.sessions is not None:
            self.sessions.fire(watermark, out)
            return
        if self.aggset is None:
            return
        live = self.state.live_slots()
        due = live[self.timers[live] <= watermark]
        if len(due) == 0:
            return
        due = due[np.argsort(self.timers[due], kind="stable")]
        # The final firing of a bounded input (BATCH end_input) may hold every group of the
        # job: emit it in chunks, so the output's Arrow columns never exist all at once, and
        # skip forgetting the keys one by one (a hash-based unique over all slots): the
        # operator is done (its accumulators are dropped at once).
        final = self.ctx.is_batch and watermark == MAX_WATERMARK
        for lo in range(0, len(due), _EMIT_CHUNK_ROWS):
            chunk = due[lo : lo + _EMIT_CHUNK_ROWS]
            self.emit_slots(chunk, out)
            if not final:
                self.aggset.reset(chunk)
                self.state.remove(chunk)
        if self.slot_cache is not None:
            self.slot_cache.fired(watermark, self.timer_of)
        if final:
            self.aggset = None
            self.timers = np.zeros(0, dtype=np.int64)

    def emit_slots(self, slots: np.ndarray, out: Output) -> None:
        """Emit the (window, key) groups at these slots: keys, aggregate values, window
        properties."""
        assert self.aggset is not None
        # the keys as Arrow columns straight from the state's key store (no tuple per key)
        keys = self.state.key_arrays(slots, [pa.int64(), pa.int64(), *self.key_types])
        start = keys[0].to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
        end = keys[1].to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
        cols = list(keys[2:])
        cols += self.aggset.results(slots)
        cols += window_prop_arrays(start, end, self.props, self.prop_types, self.ctx.time_zone, self.ltz)
        out.emit(make_batch(self.node, cols, np.zeros(len(slots), dtype=np.int8)))

    def emit_windows(
        self, key_cols: list[pa.Array], aggs: list[pa.Array], start: np.ndarray, end: np.ndarray, out: Output
    ) -> None:
        """Emit fired windows (used by the session implementation)."""
        cols = list(key_cols) + list(aggs)
        cols += window_prop_arrays(start, end, self.props, self.prop_types, self.ctx.time_zone, self.ltz)
        out.emit(make_batch(self.node, cols, np.zeros(len(start), dtype=np.int8)))

    # ------------------------------------------------------------------ checkpoints
    def snapshot_state(self, checkpoint_id: int) -> Any:
        """The generic snapshot; a BATCH SESSION aggregation's sorted rows go to its
        sessions first (a hand-taken savepoint; refused with a hint once they spilled), which
        hold the rows from then on. BATCH bounded partials (only without checkpointing) are
        outside the keyed state: refused (runtime.spill.SpilledStateError)."""
        if self.bounded is not None:
            what = f"the BATCH window aggregation ({self.node.label or self.node.operator})"
            if self.bounded.spill is not None:
                raise spill_refusal(what)
            raise SpilledStateError(f"{what} holds its partial results outside its keyed state")
        self._unsort_sessions()
        return super().snapshot_state(checkpoint_id)

    def _unsort_sessions(self) -> None:
        if self.session_input is not None and self.sessions is not None:
            self.session_input.move_to(self.sessions)
            self.session_input.close()
            self.session_input = None

    def after_restore(self) -> None:
        self.restored = True
        if self.slot_cache is not None:  # the restored state's slots are not the cached ones
            self.slot_cache.clear()
        if self.sessions is not None:
            self.sessions.op = self
            self._unsort_sessions()  # restored sessions hold rows: the rest joins them in memory

    def close(self) -> None:
        """Remove a BATCH SESSION aggregation's spill directory (also when the job failed)."""
        if self.session_input is not None:
            self.session_input.close()
        super().close()


def explain_window_aggregate(
    node: PlanView,
    grouping: Sequence[int],
    calls: Sequence[str],
    window: str,
    window_props: Sequence[str],
) -> list[str]:
    """`groupBy=[k], window=[...], select=[k, calls..., start('w$) AS window_start]`."""
    in_names = [f.name for f in node.inputs[0].fields]
    keys = [in_names[i] for i in grouping]
    props = [
        f"{WINDOW_PROPERTIES[w]}('w$) AS {f.name}"
        for w, f in zip(window_props, node.fields[len(keys) + len(calls) :], strict=True)
    ]
    parts = [f"groupBy=[{', '.join(keys)}]"] if keys else []
    return [*parts, f"window=[{window}]", f"select=[{', '.join(keys + list(calls) + props)}]"]


class WindowAggregateSpec(OperatorSpec[WindowAggregateParams]):
    """Keyed by the grouping columns (SESSION windows: also the partition keys); emits
    each window once (insert-only) and needs an insert-only input."""

    name = "WindowAggregate"
    params_type = WindowAggregateParams
    operator_class = WindowAggregateOperator
    input_distribution = KEYED
    rescalable = True
    spark: ClassVar[SparkCapability | None] = SparkCapability(
        True,
        True,
        "TUMBLE / HOP → `window()`, SESSION → `session_window()`, CUMULATE (batch only) → exploded windows. "
        "Streaming: append output mode, no DISTINCT aggregates.",
    )

    def input_keys(self, params: WindowAggregateParams, input_index: int) -> tuple[int, ...]:
        return params.grouping or params.window.partition_keys

    def changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str:
        insert_only_input(node, inputs, "a window aggregation needs an insert-only input")
        return "I"

    def explain(self, node: PlanView) -> list[str]:
        p = self.params(node)
        in_names = [f.name for f in node.inputs[0].fields]
        agg_fields = node.fields[len(p.grouping) : len(p.grouping) + len(p.aggs)]
        calls = [format_agg(a, in_names, f.name) for a, f in zip(p.aggs, agg_fields, strict=True)]
        window = format_window(p.window, in_names[p.time_index])
        return explain_window_aggregate(node, p.grouping, calls, window, p.window_props)


WINDOW_AGGREGATE = register_spec(WindowAggregateSpec())
