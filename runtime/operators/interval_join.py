"""IntervalJoin: `l.k = r.k AND r.ts BETWEEN l.ts + lower AND l.ts + upper` on the rowtime
attributes of both (append-only) inputs, INNER / LEFT / RIGHT / FULL.

Streaming follows Flink's TimeIntervalJoin (RowTimeIntervalJoin), with `d = r.ts - l.ts`
bounded by [lower, upper]:

- a new row joins the cached rows of the other side whose time is in its range;
- a left row at t is cached while the operator watermark `wm < t + upper` (right rows
  that may still match can arrive), a right row at s while `wm < s - lower`; a row that is
  not cached and never matched is emitted NULL-padded at once when its side is outer;
- when the watermark advances, cached rows whose range is over (`t + upper < wm`,
  `s - lower < wm`) are dropped; unmatched ones of an outer side are emitted NULL-padded.

Output is insert-only. The output watermark is held back by max(upper, -lower, 0) so the
NULL-padded rows emitted on expiry are not late downstream. Rows with a NULL time never
match.

Batch: both inputs are sorted by time (in memory; past `taskmanager.memory.managed.size`
through the external merge sort of the BATCH operators, `ExternalSort`) and at the end
swept side by side: a left row at t is joined once the right side has been read past
t + upper (every right row that can match it is held), then forgotten (NULL-padded first
when unmatched and the left side is outer); a right row at s is forgotten (padded likewise)
once the earliest left row still to join is past s - lower. Rows without a time never match
(an outer side's are padded as they arrive). Spilled, the join holds about the rows of a
time band of the bounds' width and a merge piece; spilled or not, it pairs rows only within
the band (a hash join of the whole inputs on the keys, then filtered by time, made every
pair of rows of a key: 7 GB at 1M rows of 10,000 keys). With periodic checkpoints the inputs are
held unsorted (the snapshot) and joined at once at the end.

Processing time (`proctime`, bounds on both sides' PROCTIME attributes; Flink's
ProcTimeIntervalJoin): the same steps with the processing-time clock (`runtime.state.ttl.now_ms`,
which PROCTIME() reads too, so a test's `set_clock` drives both) in place of the
watermark: a row's time is the clock when the operator receives it (Flink takes the timer
service's current time, not the column), cached rows expire when the clock passes their
range, checked on every batch and on `on_timer` (called while sources are idle), and
watermarks pass through unchanged (nothing emitted is event-time late: the planner refuses
rowtime attributes in such a join's inputs, as Flink does). At end of input nothing more is
emitted: Flink cancels pending processing-time timers when a bounded input finishes
(FLINK-14231), so outer rows still waiting are not padded.

State is one Arrow table per side plus numpy arrays (time, matched flag); every step is a
vectorized hash join + range filter over the whole cache.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from runtime.batch import MAX_WATERMARK, MIN_WATERMARK
from runtime.checkpoint import format as state_format
from runtime.checkpoint.rescale import OldStates, in_key_group_range, key_groups_of, load_state, max_parallelism_of
from runtime.expr.ir import Expr
from runtime.frozen import frozen_dataclass
from runtime.graph import Node
from runtime.operators._join_util import (
    EMPTY,
    concat,
    gather,
    insert_only,
    instant_ms,
    join_names,
    join_type_name,
    joined_batch,
    key_pairs,
    require_insert_only,
    residual_mask,
)
from runtime.operators.base import Operator, OperatorContext, Output
from runtime.operators.external_sort import ExternalSort
from runtime.operators.rank_common import SortKey
from runtime.operators.spec import KEYED, OperatorParams, OperatorSpec, PlanView, SparkCapability, register_spec
from runtime.plan_text import format_expr
from runtime.spill import MANAGED_MEMORY_SIZE
from runtime.state.ttl import now_ms


@frozen_dataclass
class IntervalJoinParams(OperatorParams):
    """`kind` INNER | LEFT | RIGHT | FULL; equi-keys `left_keys` / `right_keys`; the rowtime
    columns `left_time` / `right_time` (the right one indexes the right input) with
    `lower_ms <= r.ts - l.ts <= upper_ms`; `condition` the rest, over the left columns then
    the right columns; `left_width` the left input's width; `proctime` True when the bounds
    are on processing-time attributes (rows timed and expired by the processing-time clock)."""

    kind: str
    left_keys: tuple[int, ...]
    right_keys: tuple[int, ...]
    left_time: int
    right_time: int
    lower_ms: int
    upper_ms: int
    condition: Expr | None
    left_width: int
    proctime: bool = False


@state_format.register_state_type
class _Side:
    """One input's cache: rows, their time (ms) and whether each row was joined yet."""

    def __init__(self) -> None:
        self.rows: pa.Table | None = None
        self.time = EMPTY
        self.matched = np.zeros(0, dtype=bool)
        self.valid = np.zeros(0, dtype=bool)

    @property
    def size(self) -> int:
        return 0 if self.rows is None else self.rows.num_rows

    def add(self, rows: pa.RecordBatch, time: np.ndarray, matched: np.ndarray, valid: np.ndarray) -> None:
        self.rows = concat(self.rows, rows)
        self.time = np.concatenate([self.time, time])
        self.matched = np.concatenate([self.matched, matched])
        self.valid = np.concatenate([self.valid, valid])

    def keep(self, mask: np.ndarray) -> None:
        if self.rows is None:
            return
        self.rows = self.rows.filter(pa.array(mask))
        self.time = self.time[mask]
        self.matched = self.matched[mask]
        self.valid = self.valid[mask]


# BATCH: rows per piece of an input sorted in memory that the sweep reads at a time.
_SWEEP_ROWS = 1 << 16


class IntervalJoinOperator(Operator):
    checkpointing = "custom"
    watermark_attributes = ("wm",)

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        p = IntervalJoinParams.of(node)
        self.keys = (list(p.left_keys), list(p.right_keys))
        self.time_index = (p.left_time, p.right_time)
        self.lower = p.lower_ms
        self.upper = p.upper_ms
        self.kind = p.kind.upper()
        self.condition = p.condition
        nl = p.left_width
        self.types = (
            [f.type.to_arrow() for f in node.schema[:nl]],
            [f.type.to_arrow() for f in node.schema[nl:]],
        )
        self.outer = (self.kind in ("LEFT", "FULL"), self.kind in ("RIGHT", "FULL"))
        self.sides = (_Side(), _Side())
        self.wm = MIN_WATERMARK
        self.proctime = p.proctime
        self.delay = 0 if p.proctime else max(self.upper, -self.lower, 0)
        # BATCH: each input's rows with a time, sorted by it (the input's columns, then the
        # time as ms), on disk past the bound; with checkpointing the sides hold the rows
        # (the snapshot)
        self.sorting = ctx.is_batch and not ctx.checkpointing
        self.sorters: list[ExternalSort | None] = [None, None]

    # ------------------------------------------------------------------ helpers
    def _pairs(
        self, side: int, rows: pa.RecordBatch | pa.Table, time: np.ndarray, valid: np.ndarray, other: _Side
    ) -> tuple[np.ndarray, np.ndarray]:
        """Pairs (index into `rows`, index into `other`) that satisfy keys, range and the
        residual condition; `rows` belong to input `side`."""

        if other.rows is None or other.size == 0 or rows.num_rows == 0:
            return EMPTY, EMPTY
        mine = [rows.column(k) for k in self.keys[side]]
        theirs = [other.rows.column(k) for k in self.keys[1 - side]]
        a, b = key_pairs(mine, theirs, rows.num_rows, other.size)
        d = other.time[b] - time[a] if side == 0 else time[a] - other.time[b]
        ok = valid[a] & other.valid[b] & (d >= self.lower) & (d <= self.upper)
        a, b = a[ok], b[ok]
        if self.condition is not None and len(a):
            lrows, rrows = (rows, other.rows) if side == 0 else (other.rows, rows)
            li, ri = (a, b) if side == 0 else (b, a)
            mask = residual_mask(self.condition, gather(lrows, li), gather(rrows, ri), self.ctx)
            assert mask is not None
            a, b = a[mask], b[mask]
        return a, b

    def _emit_pairs(self, side: int, rows: Any, other: _Side, a: np.ndarray, b: np.ndarray, out: Output) -> None:
        if side == 0:
            batch = joined_batch(self.node, rows, other.rows, a, b, *self.types)
        else:
            batch = joined_batch(self.node, other.rows, rows, b, a, *self.types)
        if batch is not None:
            out.emit(batch)

    def _emit_padded(self, side: int, rows: Any, idx: np.ndarray, out: Output) -> None:
        if len(idx) == 0:
            return
        none = np.full(len(idx), -1, dtype=np.int64)
        if side == 0:
            batch = joined_batch(self.node, rows, None, idx, none, *self.types)
        else:
            batch = joined_batch(self.node, None, rows, none, idx, *self.types)
        if batch is not None:
            out.emit(batch)

    # ------------------------------------------------------------------ input
    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        rows = insert_only(batch, self.node.operator)
        if rows.num_rows == 0:
            return
        side = input_index
        if self.proctime and not self.ctx.is_batch:
            now = now_ms()
            self._expire(now, out)
            time, valid = np.full(rows.num_rows, now, dtype=np.int64), np.ones(rows.num_rows, dtype=bool)
            operator_time = now
        else:
            time, valid = instant_ms(rows.column(self.time_index[side]))
            operator_time = self.wm
        if self.ctx.is_batch:
            if self.sorting:
                self._sort(side, rows, time, valid, out)
                return
            self.sides[side].add(rows, time, np.zeros(rows.num_rows, dtype=bool), valid)
            return
        other = self.sides[1 - side]
        a, b = self._pairs(side, rows, time, valid, other)
        self._emit_pairs(side, rows, other, a, b, out)
        matched = np.zeros(rows.num_rows, dtype=bool)
        matched[a] = True
        if len(b):
            other.matched[b] = True
        # Rows whose range the operator time (watermark or clock) has not passed yet wait
        # for the other side.
        horizon = time + self.upper if side == 0 else time - self.lower
        cache = valid & (operator_time < horizon)
        if cache.any():
            self.sides[side].add(rows.filter(pa.array(cache)), time[cache], matched[cache], valid[cache])
        if self.outer[side]:
            self._emit_padded(side, rows, np.flatnonzero(~cache & ~matched), out)

    def on_watermark(self, watermark: int, out: Output) -> None:
        self.wm = watermark
        if self.proctime:  # rows expire by the clock; the watermark passes through
            out.emit_watermark(watermark)
            return
        if not self.ctx.is_batch:
            self._expire(watermark, out)
        held = watermark if watermark in (MIN_WATERMARK, MAX_WATERMARK) else watermark - self.delay
        out.emit_watermark(held)

    def on_timer(self, out: Output) -> None:
        """Processing time passed while the sources were idle: expire (and pad) cached rows."""
        if self.proctime and not self.ctx.is_batch:
            self._expire(now_ms(), out)

    def _expire(self, watermark: int, out: Output) -> None:
        """Drop cached rows whose range ends before `watermark` (the operator time: the
        watermark, or the clock in processing time), padding an outer side's unmatched ones."""
        for side in (0, 1):
            s = self.sides[side]
            if s.size == 0:
                continue
            horizon = s.time + self.upper if side == 0 else s.time - self.lower
            gone = horizon < watermark
            if not gone.any():
                continue
            if self.outer[side]:
                self._emit_padded(side, s.rows, np.flatnonzero(gone & ~s.matched), out)
            s.keep(~gone)

    def end_input(self, input_index: int, out: Output) -> None:
        self._ended = getattr(self, "_ended", set()) | {input_index}
        if not self.ctx.is_batch or len(self._ended) < 2:
            return
        if self.sorting:  # swept in time order, spilled or not (pairs only within the band)
            out.emit_later(self._sorted_join())
            return
        left, right = self.sides
        if left.rows is not None and right.rows is not None:
            a, b = self._pairs(0, left.rows, left.time, left.valid, right)
            self._emit_pairs(0, left.rows, right, a, b, out)
        else:
            a, b = EMPTY, EMPTY
        for side, s, idx in ((0, left, a), (1, right, b)):
            if self.outer[side] and s.rows is not None:
                hit = np.zeros(s.size, dtype=bool)
                hit[idx] = True
                self._emit_padded(side, s.rows, np.flatnonzero(~hit), out)

    # ------------------------------------------------------------------ BATCH past the bound
    def _sort(self, side: int, rows: pa.RecordBatch, time: np.ndarray, valid: np.ndarray, out: Output) -> None:
        """BATCH: rows with a time to the side's sort; those without never match (emitted
        NULL-padded at once when the side is outer)."""
        if not valid.all():
            if self.outer[side]:
                self._emit_padded(side, rows, np.flatnonzero(~valid), out)
            rows, time = rows.filter(pa.array(valid)), time[valid]
        if not rows.num_rows:
            return
        sorter = self.sorters[side]
        if sorter is None:
            w = rows.num_columns
            sorter = self.sorters[side] = ExternalSort(
                self.ctx.config, [SortKey(w)], MANAGED_MEMORY_SIZE.get(self.ctx.config)
            )
        sorter.add(pa.Table.from_batches([rows]).append_column("$time", pa.array(time, pa.int64())))

    def _unsort(self) -> None:
        """BATCH, nothing spilled: the sorted inputs' rows to the sides, in arrival order
        (before a snapshot, after a restore, at the end of input); from then on rows go there."""
        self.sorting = False
        for side, sorter in enumerate(self.sorters):
            if sorter is None:
                continue
            sorter.snapshot()  # spilled: refused with a hint
            table = sorter.take_buffer()
            if table is not None:
                n = table.num_columns - 1
                time = table.column(n).to_numpy()
                ones = np.ones(len(time), dtype=bool)
                self.sides[side].add(table.select(range(n)), time, ~ones, ones)
            sorter.close()
            self.sorters[side] = None

    def _sorted(self, side: int) -> Iterator[pa.Table]:
        """One input's rows and time column sorted by time (then arrival), in pieces: the
        merge of a spilled sort, or the buffer sorted in memory."""
        sorter = self.sorters[side]
        if sorter is not None:
            yield from sorter.sorted_pieces(_SWEEP_ROWS)

    def _sorted_join(self) -> Iterator[pa.RecordBatch]:
        """Sweep both time-sorted inputs (module docstring): read the left side while no
        left row is held, else the right side until it passes the held left rows' last time
        + upper; after each read join the left rows whose partners are all read, and forget
        the right rows no left row still to join can reach."""
        pieces = (self._sorted(0), self._sorted(1))
        done = [False, False]
        last: list[int | None] = [None, None]  # the time of each side's last row read (None: none yet)
        left: pa.Table | None = None  # left rows not joined yet (sorted, with their time column)
        right = _Side()  # right rows still reachable, with their matched flags
        buffer = Output()
        while not all(done):
            if not done[0] and (left is None or done[1]):
                side = 0
            elif not done[1] and (left is None or last[1] is None or last[1] <= _last_time(left) + self.upper):
                side = 1
            else:
                side = 0 if not done[0] else 1
            piece = next(pieces[side], None)
            if piece is None:
                done[side] = True
            else:
                n = piece.num_columns - 1
                time = piece.column(n).to_numpy()
                last[side] = int(time[-1])
                if side == 0:
                    left = piece if left is None else pa.concat_tables([left, piece])
                else:
                    ones = np.ones(len(time), dtype=bool)
                    right.add(piece.select(range(n)).combine_chunks(), time, ~ones, ones)
            # left rows all of whose partners were read: t + upper < the right side's last time
            if left is not None:
                n = left.num_columns - 1
                lt = left.column(n).to_numpy()
                if done[1]:
                    cut = len(lt)
                else:  # nothing read of the right side yet: no left row is complete
                    cut = 0 if last[1] is None else int(np.searchsorted(lt + self.upper, last[1], side="left"))
                if cut:
                    rows = left.slice(0, cut).select(range(n)).combine_chunks()
                    left = left.slice(cut) if cut < len(lt) else None
                    a, b = self._pairs(0, rows, lt[:cut], np.ones(cut, dtype=bool), right)
                    self._emit_pairs(0, rows, right, a, b, buffer)
                    if len(b):
                        right.matched[b] = True
                    if self.outer[0]:
                        hit = np.zeros(cut, dtype=bool)
                        hit[a] = True
                        self._emit_padded(0, rows, np.flatnonzero(~hit), buffer)
            # right rows no left row still to join reaches: s - lower < the earliest such t
            if right.size:
                # (the left rows still to join: those held, else those unread, from the last read time)
                first = _first_time(left) if left is not None else None if done[0] else last[0]
                if first is None:  # left done: nothing reaches them; nothing read yet: all may
                    gone = np.full(right.size, done[0], dtype=bool)
                else:
                    gone = right.time - self.lower < first
                if gone.any():
                    if self.outer[1]:
                        self._emit_padded(1, right.rows, np.flatnonzero(gone & ~right.matched), buffer)
                    right.keep(~gone)
            yield from buffer.drain()[0]
        for sorter in self.sorters:
            if sorter is not None:
                sorter.close()

    def close(self) -> None:
        """Remove the BATCH sorts' spill directories (also when the job failed)."""
        for sorter in self.sorters:
            if sorter is not None:
                sorter.close()
        super().close()

    # ------------------------------------------------------------------ checkpoints
    def rescale_snapshots(self, old: OldStates, new_range: tuple[int, int], index: int, parallelism: int) -> Any:
        """Interval join: each side's cached rows whose join key is in range (with their time,
        matched and valid flags); the operator watermark is the minimum over the old subtasks."""
        snaps = [load_state(s) for _, s in old]
        snaps = [s for s in snaps if s is not None]
        max_par = max_parallelism_of(self.ctx.state)
        sides = []
        for side in (0, 1):
            new = type(self.sides[side])()
            for s in snaps:
                cache = s["sides"][side]
                if cache.rows is None or cache.size == 0:
                    continue
                rows = cache.rows
                keys = [rows.column(k) for k in self.keys[side]]
                keep = in_key_group_range(key_groups_of(keys, rows.num_rows, max_par), new_range)
                if keep.any():
                    mask = pa.array(keep)
                    kept = rows.filter(mask)
                    batch = kept.combine_chunks().to_batches()
                    rb = pa.concat_batches(batch) if batch else pa.RecordBatch.from_pylist([], schema=kept.schema)
                    new.add(rb, cache.time[keep], cache.matched[keep], cache.valid[keep])
            sides.append(new)
        wms = [int(s["wm"]) for s in snaps]
        ended = [set(s.get("ended") or ()) for s in snaps]
        return state_format.pack(
            {
                "sides": tuple(sides),
                "wm": min(wms) if wms else self.wm,
                "ended": set.intersection(*ended) if ended else set(),
            }
        )

    def snapshot_state(self, checkpoint_id: int) -> Any:
        self._unsort()  # BATCH sorted rows (a hand-taken savepoint) to the sides; refused once spilled
        return state_format.pack({"sides": self.sides, "wm": self.wm, "ended": getattr(self, "_ended", set())})

    def restore_state(self, handles: Any) -> None:
        d = state_format.unpack(handles)
        self.sides, self.wm = d["sides"], d["wm"]
        self._ended = set(d.get("ended") or ())
        self._unsort()  # the restored sides hold rows: the rest joins them in memory


def _last_time(rows: pa.Table) -> int:
    """The time of the last of these rows (the time column is their last)."""
    return int(rows.column(rows.num_columns - 1)[-1].as_py())


def _first_time(rows: pa.Table) -> int:
    return int(rows.column(rows.num_columns - 1)[0].as_py())


class IntervalJoinSpec(OperatorSpec[IntervalJoinParams]):
    """A join bounded in time on both inputs' rowtimes or proctimes (insert-only in and out)."""

    name = "IntervalJoin"
    params_type = IntervalJoinParams
    operator_class = IntervalJoinOperator
    input_distribution = KEYED
    rescalable = True
    spark = SparkCapability(
        True,
        True,
        "A join on the keys and `lower <= r.ts - l.ts <= upper` (batch: INNER / LEFT / RIGHT / FULL). Streaming: "
        "INNER only, a stream-stream join in append mode over watermarked inputs, no other stateful operator in "
        "the job; a bounded input with rows below the watermark is refused (outer joins: Spark emits the padded "
        "rows in a later micro-batch, which a bounded query may never run).",
    )

    def input_keys(self, params: IntervalJoinParams, input_index: int) -> tuple[int, ...]:
        return params.left_keys if input_index == 0 else params.right_keys

    def changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str:
        return require_insert_only(self.name, inputs)

    def explain(self, node: PlanView) -> list[str]:
        p = self.params(node)
        names = join_names(node)
        cond = node.info.get("condition")
        # Flink's bounds are on l.ts - r.ts.
        bounds = (
            f"isRowTime={'false' if p.proctime else 'true'}, leftLowerBound={-p.upper_ms}, leftUpperBound={-p.lower_ms}, "
            f"leftTimeIndex={p.left_time}, rightTimeIndex={p.right_time}"
        )
        return [
            f"joinType=[{join_type_name(p.kind)}]",
            f"windowBounds=[{bounds}]",
            f"where=[{format_expr(cond, names) if cond is not None else 'true'}]",
            f"select=[{', '.join(names[: len(node.fields)])}]",
        ]


INTERVAL_JOIN = register_spec(IntervalJoinSpec())
