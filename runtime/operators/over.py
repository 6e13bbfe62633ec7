"""OverAggregate: `agg(...) OVER (PARTITION BY ... ORDER BY time ... frame)` per row.

BATCH: all rows are collected and evaluated once at `end_input` (DuckDB window functions,
see over_frames.py), ties on the order key broken by arrival order. Past
`taskmanager.memory.managed.size` the rows go through an external merge sort (`ExternalSort`,
as ORDER BY's) by (partition keys, order keys, arrival); the merged rows are then evaluated a
few complete partitions at a time, so the operator holds about the bound plus the partition
being read (a partition larger than the bound is held whole, unless every call's frame is a
bounded number of rows: ROWS frames with offset bounds, LAG / LEAD; then it is evaluated a
slice at a time with the rows the frames reach back to and ahead). In memory too, a large
input's frames are computed over slices of whole partitions (`_sliced_values`). Spilled, the output comes in
that sorted order instead of arrival order (Flink's batch OVER sorts its input too).

STREAMING, ORDER BY a rowtime (Flink's RowTime*PrecedingFunction semantics):
- a row is buffered until the watermark passes its timestamp, then emitted (+I) with the
  aggregate values over its frame: the rows of its partition emitted before it (kept in
  `history`, pruned to what any later frame can still reach) plus the rows firing with it.
- late rows are dropped and counted (`metrics.late_rows_dropped`), with Flink's rules:
  an UNBOUNDED PRECEDING frame drops a row whose timestamp is at or below the watermark
  when it arrives; a bounded frame drops a row whose timestamp is at or below the last
  timestamp already fired for its partition (so a row behind the watermark is kept when its
  partition has not fired that far). `__wm` gives each row's arrival watermark; rows that
  arrive behind the watermark are the only candidates and are checked one by one (the
  only per-row loop, over those rare rows).
- ORDER BY a proctime: rows are evaluated on arrival, in arrival order.

STREAMING with a non-time ORDER BY or an updating input (beyond Flink, which rejects both):
see over_updating.py (recompute touched partitions, emit the retract diff).

The output is the input columns followed by one column per call; insert-only.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.batch import MIN_WATERMARK, data_columns, row_kinds, row_watermarks
from runtime.checkpoint import format as state_format
from runtime.checkpoint.rescale import (
    OldStates,
    key_group_zero_state,
    load_state,
    max_parallelism_of,
    merged_keyed,
    plan_slots,
    take_slot_array,
)
from runtime.distinct import sorted_distinct
from runtime.expr.ir import Literal
from runtime.frozen import frozen_dataclass
from runtime.graph import Node
from runtime.operators._common import make_batch
from runtime.operators.base import Operator, OperatorContext, Output
from runtime.operators.external_sort import ExternalSort
from runtime.operators.over_frames import SEQ, OverComputer, OverFrame, _epoch_ms
from runtime.operators.over_updating import UpdatingOver
from runtime.operators.rank_common import SortKey, _plain, _same_adjacent, sort_order
from runtime.operators.spec import KEYED, OperatorParams, OperatorSpec, PlanView, SparkCapability, register_spec
from runtime.plan_params import AggCallParams
from runtime.plan_text import format_literal
from runtime.spill import MANAGED_MEMORY_SIZE
from runtime.state import KeyedStateBackend, create_backend
from runtime.state.ttl import now_ms

SLOT = "__slot"
TS = "__ts"
WM = "__wm_in"
# BATCH, spilled: rows of complete partitions evaluated together (fewer, larger DuckDB runs).
_SPILLED_CHUNK_ROWS = 1 << 16


def _concat(tables: list[pa.Table]) -> pa.Table:
    tables = [t for t in tables if t is not None]
    if len(tables) == 1:
        return tables[0]
    return pa.concat_tables(tables, promote_options="permissive")


@frozen_dataclass
class OverAggregateParams(OperatorParams):
    """One window group: `partition` (input columns), `order`, `frame` and the `calls`
    (aggregates, ranking functions, LAG / LEAD with `params` offset / default, NTILE with
    buckets) over it; `time_kind` the ORDER BY key's time attribute (ROWTIME | PROCTIME |
    None, STREAMING); `updating`: recompute touched partitions and emit a retract diff (a
    non-time ORDER BY or an updating input; beyond Flink)."""

    partition: tuple[int, ...]
    order: tuple[SortKey, ...]
    frame: OverFrame
    calls: tuple[AggCallParams, ...]
    time_kind: str | None = None
    updating: bool = False


class OverAggregateOperator(Operator):
    checkpointing = "custom"
    watermark_attributes = ("watermark",)

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        p = OverAggregateParams.of(node)
        self.calls: list[AggCallParams] = list(p.calls)
        self.width = len(node.schema) - len(self.calls)
        self.partition: list[int] = list(p.partition)
        self.order: list[SortKey] = list(p.order)
        self.frame = p.frame
        self.time_kind: str | None = p.time_kind
        self.computer = OverComputer(self.width, p.partition, p.order, p.frame, p.calls)
        self.state: KeyedStateBackend = ctx.state if ctx.state is not None else create_backend(ctx.config)
        self.seq = 0
        self.pending: list[pa.Table] = []
        self.history: pa.Table | None = None
        self.last_fired = np.zeros(0, dtype=np.int64)
        self.watermark = MIN_WATERMARK
        self.updating: Any = None
        # BATCH: the input, sorted by (partition, order, arrival) on disk past the bound
        self.sorter: ExternalSort | None = None
        if ctx.is_batch:
            keys = [SortKey(i) for i in self.partition] + self.order
            # with checkpointing the input is held (the snapshot's "input"), never spilled
            bound = 0 if ctx.checkpointing else MANAGED_MEMORY_SIZE.get(ctx.config)
            self.sorter = ExternalSort(ctx.config, keys, bound)
        if p.updating and not ctx.is_batch:
            self._start_updating()

    def _start_updating(self) -> None:
        if self.updating is None:
            self.updating = UpdatingOver(self)

    # ------------------------------------------------------------------ helpers
    @property
    def bounded(self) -> bool:
        return self.frame.lower is not None

    def _slots(self, data: pa.RecordBatch) -> np.ndarray:
        if not self.partition:
            return np.zeros(data.num_rows, dtype=np.int64)
        return self.state.lookup([data.column(i) for i in self.partition], data.num_rows).astype(np.int64)

    def _grow(self, n: int) -> None:
        if len(self.last_fired) < n:
            grown = np.zeros(max(n, 2 * len(self.last_fired), 16), dtype=np.int64)
            grown[: len(self.last_fired)] = self.last_fired
            self.last_fired = grown

    def _table(self, data: pa.RecordBatch, slots: np.ndarray, ts: np.ndarray, wm: np.ndarray) -> pa.Table:
        n = data.num_rows
        seq = np.arange(self.seq, self.seq + n, dtype=np.int64)
        self.seq += n
        cols = list(data.columns) + [pa.array(seq), pa.array(slots), pa.array(ts), pa.array(wm)]
        names = [f"c{i}" for i in range(self.width)] + [SEQ, SLOT, TS, WM]
        return pa.Table.from_arrays(cols, names=names)

    # ------------------------------------------------------------------ input
    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        data = data_columns(batch)
        n = data.num_rows
        if n == 0:
            return
        kinds = row_kinds(batch)
        # An input that may retract (its edge's changelog mode, set by the executor before
        # the first batch) needs the recompute mode from the first row on: switching when
        # the first retraction arrives would lose the rows already emitted as final.
        may_retract = any(m != "I" for m in (self.input_changelog_modes or ()))
        if not self.ctx.is_batch and self.updating is None and (may_retract or bool((kinds != 0).any())):
            self._start_updating()
        if self.updating is not None:
            self.updating.process(data, kinds, out)
            return
        if self.sorter is not None:
            self.sorter.add(data)
            return
        slots = self._slots(data)
        if self.time_kind == "PROCTIME":
            now = now_ms()  # the runtime's processing-time clock (PROCTIME() reads it too)
            ts = np.full(n, now, dtype=np.int64)
            self.pending.append(self._table(data, slots, ts, ts - 1))
            self._fire(now, out)
            return
        ts_arr = _epoch_ms(data.column(self.order[0].index))
        ts = pc.fill_null(ts_arr, MIN_WATERMARK).to_numpy(zero_copy_only=False).astype(np.int64)
        wm = row_watermarks(batch)
        wm = np.full(n, self.watermark, dtype=np.int64) if wm is None else wm.astype(np.int64)
        keep = self._not_late(slots, ts, wm)
        dropped = int(n - keep.sum())
        if dropped:
            self.ctx.metrics.late_rows_dropped += dropped
        if keep.any():
            mask = pa.array(keep)
            self.pending.append(self._table(data.filter(mask), slots[keep], ts[keep], wm[keep]))

    def _not_late(self, slots: np.ndarray, ts: np.ndarray, wm: np.ndarray) -> np.ndarray:
        """Flink's lateness rule per row (see the module docstring)."""
        if not self.bounded:
            return ts > wm
        self._grow(int(slots.max()) + 1)
        keep = ts > self.last_fired[slots]
        # Flink's lastTriggeringTs starts at 0: rows at or before the epoch never fire.
        candidates = np.nonzero(keep & (ts <= wm))[0]
        if len(candidates) == 0:
            return keep
        old = _concat(self.pending) if self.pending else None
        o_slot = old.column(SLOT).to_numpy() if old is not None else np.zeros(0, dtype=np.int64)
        o_ts = old.column(TS).to_numpy() if old is not None else np.zeros(0, dtype=np.int64)
        o_wm = old.column(WM).to_numpy() if old is not None else np.zeros(0, dtype=np.int64)
        for r in candidates:  # rows behind the watermark only (rare)
            prev = np.nonzero(keep[:r] & (slots[:r] == slots[r]))[0]
            q_ts = np.concatenate([o_ts[o_slot == slots[r]], ts[prev]])
            q_wm = np.concatenate([o_wm[o_slot == slots[r]], wm[prev]])
            fired = (q_ts <= wm[r]) & (q_wm < wm[r])
            if bool((fired & (q_ts >= ts[r])).any()):
                keep[r] = False
        return keep

    # ------------------------------------------------------------------ firing
    def on_watermark(self, watermark: int, out: Output) -> None:
        if self.updating is None and not self.ctx.is_batch and self.pending:
            self._fire(watermark, out)
        self.watermark = watermark
        out.emit_watermark(watermark)

    def _fire(self, watermark: int, out: Output) -> None:
        pending = _concat(self.pending)
        ts = pending.column(TS).to_numpy()
        wm = pending.column(WM).to_numpy()
        ready = (ts <= watermark) & (wm < watermark)
        if not ready.any():
            return
        fire = pending.filter(pa.array(ready))
        rest = pending.filter(pa.array(~ready))
        self.pending = [rest] if rest.num_rows else []
        f_slot = fire.column(SLOT).to_numpy()
        f_ts = fire.column(TS).to_numpy()
        self._grow(int(f_slot.max()) + 1)
        np.maximum.at(self.last_fired, f_slot, f_ts)
        # Emit in timer order: timestamp, then partition, then arrival.
        order = np.lexsort((fire.column(SEQ).to_numpy(), f_slot, f_ts))
        fire = fire.take(pa.array(order))
        hist = self.history
        if hist is not None and hist.num_rows:
            hist = hist.filter(pc.is_in(hist.column(SLOT), value_set=pa.array(sorted_distinct(f_slot))))
        frame = _concat([hist, fire]) if hist is not None and hist.num_rows else fire
        values = self.computer.compute(frame)
        start = frame.num_rows - fire.num_rows
        cols = [fire.column(i).combine_chunks() for i in range(self.width)]
        cols += [v.slice(start) for v in values]
        kinds = np.zeros(fire.num_rows, dtype=np.int8)
        wms = np.full(fire.num_rows, self.watermark, dtype=np.int64)
        out.emit(make_batch(self.node, cols, kinds, wms))
        self._retain(fire)

    def _retain(self, fired: pa.Table) -> None:
        """Keep the fired rows a later frame can still reach."""
        hist = _concat([self.history, fired]) if self.history is not None else fired
        lower = self.frame.lower
        lags = [int(c.params.get("offset", 1)) for c in self.calls if c.name == "lag"]
        aggs = [c for c in self.calls if c.name != "lag"]
        if aggs and lower is None:
            self.history = hist  # UNBOUNDED PRECEDING: every row stays in the frame
            return
        keep_rows = max(lags, default=0)
        keep_ms = None
        reach = -int(lower) if lower is not None else 0
        if aggs and self.frame.kind == "ROWS":
            keep_rows = max(keep_rows, reach)
        elif aggs:
            keep_ms = reach
        slot = hist.column(SLOT).to_numpy()
        ts = hist.column(TS).to_numpy()
        order = np.lexsort((hist.column(SEQ).to_numpy(), ts, slot))
        s_sorted = slot[order]
        # position from the end of each partition's run
        ends = np.r_[np.nonzero(np.diff(s_sorted))[0], len(s_sorted) - 1]
        run_end = np.repeat(ends, np.diff(np.r_[-1, ends]))
        from_end = run_end - np.arange(len(s_sorted))
        keep_sorted = from_end < keep_rows
        if keep_ms is not None:
            keep_sorted |= ts[order] >= self.last_fired[s_sorted] - keep_ms
        keep = np.zeros(len(slot), dtype=bool)
        keep[order] = keep_sorted
        self.history = hist.filter(pa.array(keep))

    # ------------------------------------------------------------------ end
    def end_input(self, input_index: int, out: Output) -> None:
        if self.updating is not None or self.sorter is None:
            return
        if self.sorter.spilled:  # evaluated as the executor takes the batches
            out.emit_later(self._spilled_output())
            return
        table = self.sorter.take_buffer()
        if table is not None:
            table = table.append_column(SEQ, pa.array(np.arange(table.num_rows, dtype=np.int64)))
            cols = [table.column(i).combine_chunks() for i in range(self.width)] + self._sliced_values(table)
            out.emit(make_batch(self.node, cols, np.zeros(table.num_rows, dtype=np.int8)))

    def _sliced_values(self, table: pa.Table) -> list[pa.Array]:
        """The calls' values for `table` (in memory, in arrival order), computed over slices
        of whole partitions of about `_SPILLED_CHUNK_ROWS` rows: DuckDB's working set over
        all rows at once is several times the input's size."""
        n = table.num_rows
        if not self.partition or n <= 2 * _SPILLED_CHUNK_ROWS:
            return self.computer.compute(table)
        keys = [table.column(i).combine_chunks() for i in self.partition]
        idx = sort_order(keys, [SortKey(j) for j in range(len(keys))], None, np.arange(n, dtype=np.int64))
        take = pa.array(idx)
        same = np.ones(n, dtype=bool)
        for key in keys:
            same &= _same_adjacent(_plain(key).take(take))
        starts = np.flatnonzero(~same)  # partition starts in sorted order (row 0 among them)
        cuts = starts[np.r_[True, np.diff(starts // _SPILLED_CHUNK_ROWS) > 0]].tolist() + [n]
        parts: list[list[pa.Array]] = [[] for _ in self.calls]
        for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):
            for acc, v in zip(parts, self.computer.compute(table.take(take.slice(lo, hi - lo))), strict=True):
                acc.append(v)
        back = np.empty(n, dtype=np.int64)
        back[idx] = np.arange(n, dtype=np.int64)
        return [pa.concat_arrays(acc).take(pa.array(back)) for acc in parts]

    def _evaluate(self, tables: list[pa.Table], skip: int = 0, stop: int | None = None) -> pa.RecordBatch:
        """The rows of `tables` (data columns, then `SEQ`; whole partitions, or a bounded
        frame's context around rows [skip, stop)) with their calls' values."""
        table = _concat(tables).combine_chunks()
        values = self.computer.compute(table)
        stop = table.num_rows if stop is None else stop
        if skip or stop < table.num_rows:
            table = table.slice(skip, stop - skip)
            values = [v.slice(skip, stop - skip) for v in values]
        cols = [table.column(i).combine_chunks() for i in range(self.width)] + values
        return make_batch(self.node, cols, np.zeros(table.num_rows, dtype=np.int8))

    def _bounded_context(self) -> tuple[int, int] | None:
        """(rows before, rows after) a row of its partition that all its values depend on,
        when that is bounded: every call an aggregate over a ROWS frame with both bounds
        offsets, or LAG / LEAD. None otherwise (ranking, UNBOUNDED or RANGE frames)."""
        before = after = 0
        for c in self.calls:
            if c.name in OFFSET_FUNCTIONS:
                offset = abs(int(c.params.get("offset") or 1))
                before, after = (max(before, offset), after) if c.name == "lag" else (before, max(after, offset))
            elif c.name in RANKING_FUNCTIONS:
                return None
            elif self.frame.kind != "ROWS" or self.frame.lower is None or self.frame.upper is None:
                return None
            else:
                before, after = max(before, -self.frame.lower), max(after, self.frame.upper)
        return before, after

    def _spilled_output(self) -> Iterator[pa.RecordBatch]:
        """BATCH past the bound: the merged sorted rows cut at partition starts; complete
        partitions are evaluated (a few together). The open one is held until it ends, or,
        when every call's frame is a bounded number of rows (`_bounded_context`), its rows
        are evaluated as they pass a quarter of the bound, each time keeping the rows the
        next ones' frames reach back to (and the last rows, whose frames reach ahead)."""
        assert self.sorter is not None
        names = [f"c{i}" for i in range(self.width)] + [SEQ]
        context = self._bounded_context()
        ready: list[pa.Table] = []  # complete partitions not evaluated yet
        ready_rows = ready_bytes = 0
        open_rows: list[pa.Table] = []  # the partition the merge is in
        open_n = open_bytes = 0
        emitted = 0  # rows at the start of `open_rows` already emitted (a bounded frame's look-back)
        last: pa.Table | None = None  # the previous piece's last row
        limit = max(self.sorter.bound // 4, 1)
        for piece in self.sorter.merged():
            piece = piece.rename_columns(names)
            starts = np.flatnonzero(self._partition_starts(last, piece))
            last = piece.slice(piece.num_rows - 1)
            if not len(starts):
                open_rows.append(piece)
                open_n += piece.num_rows
                open_bytes += piece.nbytes
                if context is not None and (open_bytes >= limit or open_n >= _SPILLED_CHUNK_ROWS):
                    before, after = context
                    stop = open_n - after
                    if stop > emitted:
                        table = _concat(open_rows).combine_chunks()
                        yield self._evaluate([table], emitted, stop)
                        kept = table.slice(max(stop - before, 0))
                        emitted = stop - max(stop - before, 0)
                        open_rows, open_n, open_bytes = [kept], kept.num_rows, kept.nbytes
                continue
            cut = int(starts[-1])
            done = [*open_rows, piece.slice(0, cut)]
            open_rows = [piece.slice(cut)]
            open_n, open_bytes = open_rows[0].num_rows, open_rows[0].nbytes
            if emitted:  # the rest of a partition partly emitted
                yield self._evaluate(done, emitted)
                done, emitted = [], 0
            ready.extend(done)
            ready_rows += sum(t.num_rows for t in done)
            ready_bytes += sum(t.nbytes for t in done)
            if ready_rows >= _SPILLED_CHUNK_ROWS or ready_bytes >= limit:
                yield self._evaluate(ready)
                ready, ready_rows, ready_bytes = [], 0, 0
        if any(t.num_rows for t in ready):
            yield self._evaluate(ready)
        if any(t.num_rows for t in open_rows):
            yield self._evaluate(open_rows, emitted)

    def _partition_starts(self, last: pa.Table | None, piece: pa.Table) -> np.ndarray:
        """Per row of `piece` (sorted by partition): a partition starts there (its
        partition differs from the previous row's, `last` for the first row; NULL keys
        are one partition)."""
        n = piece.num_rows
        probe = piece if last is None else pa.concat_tables([last, piece])
        same = np.ones(probe.num_rows, dtype=bool)
        for i in self.partition:
            same &= _same_adjacent(_plain(probe.column(i)))
        same[0] = False
        return ~same[probe.num_rows - n :]

    def close(self) -> None:
        """Remove the BATCH sort's spill directory (also when the job failed)."""
        if self.sorter is not None:
            self.sorter.close()
        super().close()

    # ------------------------------------------------------------------ checkpoints
    def snapshot_state(self, checkpoint_id: int) -> Any:
        return state_format.pack(
            {
                "keys": self.state.snapshot(),
                "seq": self.seq,
                "pending": self.pending,
                "history": self.history,
                "last_fired": self.last_fired,
                "watermark": self.watermark,
                "updating": self.updating.snapshot() if self.updating is not None else None,
                "input": self.sorter.snapshot() if self.sorter is not None else None,  # BATCH
            }
        )

    def restore_state(self, handles: Any) -> None:
        if handles is None:  # a subtask that owns none of an unpartitioned OVER's rows
            return
        d = state_format.unpack(handles)
        self.state.restore(d["keys"])
        self.seq, self.pending, self.history = d["seq"], d["pending"], d["history"]
        self.last_fired, self.watermark = d["last_fired"], d["watermark"]
        if d.get("updating") is not None:
            self._start_updating()
            self.updating.restore(d["updating"])
        if d.get("input") and self.sorter is not None:
            self.sorter.restore(d["input"])

    def rescale_snapshots(self, old: OldStates, new_range: tuple[int, int], index: int, parallelism: int) -> Any:
        """The partitions whose key (the PARTITION BY columns, the exchange key) is in
        range: their slots re-numbered densely, with their pending and fired rows, the
        last fired time per partition and the recompute mode's live rows and values. No
        PARTITION BY: every row went to key group 0, whose new owner takes its old owner's
        state unchanged. Arrival numbers continue after the largest old one."""
        if not self.partition:
            return key_group_zero_state(old, new_range)
        snaps = [load_state(s) for _, s in old]
        snaps = [d for d in snaps if d is not None]
        plans = plan_slots([d["keys"] for d in snaps], new_range)

        def kept(table: pa.Table | None, plan: Any) -> tuple[pa.Table | None, np.ndarray]:
            if table is None or table.num_rows == 0:
                return None, np.zeros(0, dtype=bool)
            slots = plan.remap(table.column(SLOT).to_numpy())
            keep = slots >= 0
            t = table.filter(pa.array(keep))
            return t.set_column(t.schema.get_field_index(SLOT), SLOT, pa.array(slots[keep])), keep

        pending: list[pa.Table] = []
        history: list[pa.Table] = []
        last_fired: list[np.ndarray] = []
        live: list[pa.Table] = []
        values: list[list[pa.Array]] = []
        for d, plan in zip(snaps, plans, strict=True):
            for t in d["pending"]:
                k, _ = kept(t, plan)
                if k is not None and k.num_rows:
                    pending.append(k)
            h, _ = kept(d["history"], plan)
            if h is not None:
                history.append(h)
            last_fired.append(take_slot_array(d["last_fired"], plan.old_slots, "last_fired", pad=True))
            u = d.get("updating")
            if u is not None:
                lv, mask = kept(u["live"], plan)
                if lv is not None:
                    live.append(lv)
                    values.append([v.filter(pa.array(mask)) for v in u["values"]])
        updating = None
        if any(d.get("updating") is not None for d in snaps):
            updating = {
                "live": _concat(live) if live else None,
                "values": [pa.concat_arrays(list(vs)) for vs in zip(*values, strict=True)] if values else [],
            }
        return state_format.pack(
            {
                "keys": merged_keyed(plans, max_parallelism_of(self.state)),
                "seq": max((int(d["seq"]) for d in snaps), default=0),
                "pending": pending,
                "history": _concat(history) if history else None,
                "last_fired": np.concatenate(last_fired) if last_fired else np.zeros(0, dtype=np.int64),
                "watermark": min((int(d["watermark"]) for d in snaps), default=self.watermark),
                "updating": updating,
            }
        )


# ---------------------------------------------------------------------- spec
# OVER-only functions (the binder types them; the rest are aggregate functions).
RANKING_FUNCTIONS = ("row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile")
OFFSET_FUNCTIONS = ("lag", "lead")


def over_call_text(c: AggCallParams, names: Sequence[str]) -> str:
    """An OVER call Flink-style: `LAG(v, 2, 0)`, `NTILE(4)`, `COUNT(DISTINCT v)`."""
    args = [names[i] for i in c.args]
    params = c.params
    if c.name in OFFSET_FUNCTIONS:
        if params.get("offset") is not None and (params["offset"] != 1 or params.get("default") is not None):
            args.append(str(params["offset"]))
        default = params.get("default")
        if default is not None:
            args.append(format_literal(default) if isinstance(default, Literal) else str(default))
    if c.name == "ntile" and params.get("buckets") is not None:
        args = [str(params["buckets"])]
    inner = ", ".join(args) if args else ("*" if c.name == "count" else "")
    if c.distinct:
        inner = "DISTINCT " + inner
    return f"{c.name.upper()}({inner})"


class OverAggregateSpec(OperatorSpec[OverAggregateParams]):
    """OVER windows: one node per window group, keyed on the PARTITION BY columns."""

    name = "OverAggregate"
    params_type = OverAggregateParams
    operator_class = OverAggregateOperator
    input_distribution = KEYED
    rescalable = True
    spark = SparkCapability(
        True,
        False,
        "Batch: Spark window functions (ROW_NUMBER / RANK / DENSE_RANK / PERCENT_RANK / CUME_DIST / NTILE / LAG / "
        "LEAD, COUNT / SUM / AVG / MIN / MAX / variance over ROWS or RANGE frames; a RANGE offset over a timestamp "
        "is in milliseconds, peers included as in Flink). ROWS frames, ROW_NUMBER, NTILE and LAG / LEAD fail the "
        "job when rows with equal ORDER BY keys differ (Flink orders them by arrival). No DISTINCT, FIRST_VALUE, "
        "LAST_VALUE or LISTAGG (arrival order). Streaming: Structured Streaming has no OVER windows.",
    )

    def input_keys(self, params: OverAggregateParams, input_index: int) -> tuple[int, ...]:
        return params.partition

    drops_update_before = True  # over an update stream: the recomputed rows' +U alone

    def changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str:
        if inputs[0].changelog_mode == "I" and not self.params(node).updating:
            return "I"
        return "I,UB,UA,D"

    def explain(self, node: PlanView) -> list[str]:
        p = self.params(node)
        names = [f.name for f in node.inputs[0].fields]
        parts = []
        if p.partition:
            parts.append(f"partitionBy=[{', '.join(names[i] for i in p.partition)}]")
        order = [f"{names[k.index]} {'DESC' if k.descending else 'ASC'}" for k in p.order]
        parts.append(f"orderBy=[{', '.join(order)}]")
        parts.append(f"window=[ {p.frame.text()}]")
        width = len(names)
        calls = [f"{over_call_text(c, names)} AS {node.fields[width + i].name}" for i, c in enumerate(p.calls)]
        parts.append(f"select=[{', '.join(names + calls)}]")
        return parts


OVER_AGGREGATE = register_spec(OverAggregateSpec())
