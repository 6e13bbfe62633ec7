"""WindowJoin: joins the rows of two window TVF (or window aggregate) outputs that belong to
the same window (`L.window_start = R.window_start AND L.window_end = R.window_end`) plus
equi-keys and a residual condition; INNER / LEFT / RIGHT / FULL / SEMI / ANTI.

Streaming (Flink's WindowJoinOperator): rows are buffered per side until the window's
timer (`window_end - 1`, as an instant) is <= the operator watermark, then the window is
joined once and forgotten. A row whose window already fired (timer <= the watermark when it
arrives) is late: dropped and counted in `metrics.late_rows_dropped`. Outer rows without a
partner are emitted NULL-padded when their window fires. Output is insert-only.
Batch: everything is buffered and joined at the end of both inputs. Past
`taskmanager.memory.managed.size` each input goes through the external merge sort of the
BATCH operators (`ExternalSort`) by (window_start, window_end, arrival); at the end the two
sorted inputs are read side by side and the windows complete on both sides (before the
last window either side has read) are joined and emitted, then forgotten, so the operator
holds about the bound plus the windows being read (a window larger than the bound is held
whole). Results are the in-memory join's; only the order of the output rows differs
(window by window). With periodic checkpoints the inputs are held (the snapshot) and do not
spill.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from runtime.batch import MAX_WATERMARK, MIN_WATERMARK
from runtime.checkpoint import format as state_format
from runtime.checkpoint.rescale import OldStates, exchange_keys, load_state, operator_max_parallelism, owned_rows
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
from runtime.operators.window_assign import wall_to_instant
from runtime.plan_params import WindowParams
from runtime.plan_text import format_expr, format_window
from runtime.spill import MANAGED_MEMORY_SIZE


@frozen_dataclass
class WindowJoinParams(OperatorParams):
    """`kind` INNER | LEFT | RIGHT | FULL | SEMI | ANTI; equi-keys `left_keys` /
    `right_keys`; `left_window` / `right_window` the (window_start, window_end) columns of
    each input, of `window` (both sides'); `ltz`: the window columns are TIMESTAMP_LTZ;
    `condition` the residual over the left then right columns; `left_width`."""

    kind: str
    left_keys: tuple[int, ...]
    right_keys: tuple[int, ...]
    left_window: tuple[int, int]
    right_window: tuple[int, int]
    window: WindowParams
    ltz: bool
    condition: Expr | None
    left_width: int


@state_format.register_state_type
class _Buffer:
    """One side's rows waiting for their window to fire, with window start/end and timer."""

    def __init__(self) -> None:
        self.rows: pa.Table | None = None
        self.start = EMPTY
        self.end = EMPTY
        self.timer = EMPTY

    @property
    def size(self) -> int:
        return 0 if self.rows is None else self.rows.num_rows

    def add(self, rows: pa.RecordBatch | pa.Table, start: np.ndarray, end: np.ndarray, timer: np.ndarray) -> None:
        self.rows = concat(self.rows, rows)
        self.start = np.concatenate([self.start, start])
        self.end = np.concatenate([self.end, end])
        self.timer = np.concatenate([self.timer, timer])

    def split(self, due: np.ndarray) -> tuple[pa.Table | None, np.ndarray, np.ndarray]:
        """Remove and return the rows where `due` (rows, window start, window end)."""
        if self.rows is None or not due.any():
            return None, EMPTY, EMPTY
        fired = self.rows.filter(pa.array(due))
        out = (fired, self.start[due], self.end[due])
        keep = ~due
        self.rows = self.rows.filter(pa.array(keep))
        self.start, self.end, self.timer = self.start[keep], self.end[keep], self.timer[keep]
        return out


class WindowJoinOperator(Operator):
    checkpointing = "custom"
    watermark_attributes = ("wm",)

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        p = WindowJoinParams.of(node)
        self.kind = p.kind.upper()
        self.keys = (list(p.left_keys), list(p.right_keys))
        self.windows = (list(p.left_window), list(p.right_window))
        self.condition = p.condition
        self.ltz = p.ltz
        nl = p.left_width
        self.left_width = nl
        self.buffers = (_Buffer(), _Buffer())
        self.wm = MIN_WATERMARK
        self.ended: set[int] = set()
        # BATCH: each input sorted by (window_start, window_end, arrival), on disk past the
        # bound (its columns, then the window's start and end as ms; made with the input's
        # first rows); with checkpointing the buffers hold the rows (the snapshot)
        self.sorting = ctx.is_batch and not ctx.checkpointing
        self.sorters: list[ExternalSort | None] = [None, None]

    def _timer(self, end: np.ndarray) -> np.ndarray:
        return wall_to_instant(end - 1, self.ctx.time_zone) if self.ltz else end - 1

    # ------------------------------------------------------------------ input
    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        rows = insert_only(batch, self.node.operator)
        if rows.num_rows == 0:
            return
        ws_i, we_i = self.windows[input_index]
        start, ok_s = instant_ms(rows.column(ws_i))
        end, ok_e = instant_ms(rows.column(we_i))
        keep = ok_s & ok_e
        timer = self._timer(end)
        if not self.ctx.is_batch:
            late = keep & (timer <= self.wm)
            self.ctx.metrics.late_rows_dropped += int(late.sum())
            keep &= ~late
        if not keep.all():
            rows, start, end, timer = rows.filter(pa.array(keep)), start[keep], end[keep], timer[keep]
        if not rows.num_rows:
            return
        if self.sorting:
            sorter = self.sorters[input_index]
            if sorter is None:
                w = rows.num_columns
                bound = MANAGED_MEMORY_SIZE.get(self.ctx.config)
                sorter = self.sorters[input_index] = ExternalSort(self.ctx.config, [SortKey(w), SortKey(w + 1)], bound)
            table = pa.Table.from_batches([rows])
            sorter.add(table.append_column("$start", pa.array(start)).append_column("$end", pa.array(end)))
            return
        self.buffers[input_index].add(rows, start, end, timer)

    def on_watermark(self, watermark: int, out: Output) -> None:
        self.wm = watermark
        if not self.ctx.is_batch:
            self._fire(watermark, out)
        out.emit_watermark(watermark)

    def end_input(self, input_index: int, out: Output) -> None:
        self.ended.add(input_index)
        if len(self.ended) < 2:
            return
        if any(s is not None and s.spilled for s in self.sorters):
            out.emit_later(self._spilled_join())
            return
        self._unsort()
        self._fire(MAX_WATERMARK, out)

    def _unsort(self) -> None:
        """BATCH, nothing spilled: the sorted inputs' rows to the buffers, in arrival order
        (from then on rows go to the buffers)."""
        self.sorting = False
        for side, sorter in enumerate(self.sorters):
            if sorter is None:
                continue
            sorter.snapshot()  # spilled: refused with a hint
            table = sorter.take_buffer()
            if table is not None:
                n = table.num_columns - 2
                start, end = table.column(n).to_numpy(), table.column(n + 1).to_numpy()
                self.buffers[side].add(table.select(range(n)), start, end, self._timer(end))
            sorter.close()
            self.sorters[side] = None

    # ------------------------------------------------------------------ BATCH past the bound
    def _sorted(self, side: int) -> Iterator[pa.Table]:
        """One input's rows (and window columns) sorted by (window_start, window_end,
        arrival): the merge of a spilled sort, or the buffer sorted in memory."""
        sorter = self.sorters[side]
        if sorter is not None:
            yield from sorter.sorted_pieces()

    def _spilled_join(self) -> Iterator[pa.RecordBatch]:
        """Both sorted inputs read side by side: each step reads a piece of the side behind
        (the one whose last read window is earlier), then joins the windows before the
        earlier of the two sides' last read windows (complete on both) and forgets them."""
        pieces = (self._sorted(0), self._sorted(1))
        held: list[pa.Table | None] = [None, None]  # sorted rows not joined yet (and their window columns)
        done = [False, False]
        buffer = Output()

        def last(side: int) -> tuple[int, int]:
            t = held[side]
            assert t is not None
            n = t.num_columns
            return t.column(n - 2)[-1].as_py(), t.column(n - 1)[-1].as_py()

        while not all(done):
            open_sides = [i for i in (0, 1) if not done[i]]
            side = min(open_sides, key=lambda i: (held[i] is not None, last(i) if held[i] is not None else (0, 0)))
            piece = next(pieces[side], None)
            if piece is None:
                done[side] = True
            else:
                held[side] = piece if held[side] is None else pa.concat_tables([held[side], piece])
            if any(not done[i] and held[i] is None for i in (0, 1)):
                continue  # a side has not read its first window yet
            frontier = None if all(done) else min(last(i) for i in (0, 1) if not done[i])
            taken = [self._take_before(held, i, frontier) for i in (0, 1)]
            if any(t is not None for t in taken):
                self._join_windows(taken[0], taken[1], buffer)
                yield from buffer.drain()[0]
        for sorter in self.sorters:
            if sorter is not None:
                sorter.close()

    @staticmethod
    def _take_before(
        held: list[pa.Table | None], side: int, frontier: tuple[int, int] | None
    ) -> tuple[pa.Table, np.ndarray, np.ndarray] | None:
        """Remove from `held[side]` the rows whose window is before `frontier` (None: all):
        (data columns, window starts, window ends), or None without such rows."""
        t = held[side]
        if t is None or t.num_rows == 0:
            return None
        n = t.num_columns - 2
        start = t.column(n).to_numpy()
        end = t.column(n + 1).to_numpy()
        if frontier is None:
            cut = t.num_rows
        else:
            fs, fe = frontier
            cut = int(((start < fs) | ((start == fs) & (end < fe))).sum())  # a prefix: the rows are sorted
        if cut == 0:
            return None
        held[side] = t.slice(cut) if cut < t.num_rows else None
        return t.slice(0, cut).select(range(n)).combine_chunks(), start[:cut], end[:cut]

    # ------------------------------------------------------------------ firing
    def _fire(self, watermark: int, out: Output) -> None:
        lb, rb = self.buffers
        lrows, ls, le = lb.split(lb.timer <= watermark)
        rrows, rs, re = rb.split(rb.timer <= watermark)
        left = None if lrows is None else (lrows, ls, le)
        right = None if rrows is None else (rrows, rs, re)
        self._join_windows(left, right, out)

    def _join_windows(
        self,
        left: tuple[pa.Table, np.ndarray, np.ndarray] | None,
        right: tuple[pa.Table, np.ndarray, np.ndarray] | None,
        out: Output,
    ) -> None:
        """Join these rows of whole windows of each side ((rows, window starts, window ends)
        or None) and emit the result."""
        lrows, ls, le = left if left is not None else (None, EMPTY, EMPTY)
        rrows, rs, re = right if right is not None else (None, EMPTY, EMPTY)
        nl = 0 if lrows is None else lrows.num_rows
        nr = 0 if rrows is None else rrows.num_rows
        if nl == 0 and nr == 0:
            return
        if nl and nr:
            assert lrows is not None and rrows is not None
            lk = [pa.array(ls), pa.array(le)] + [lrows.column(k) for k in self.keys[0]]
            rk = [pa.array(rs), pa.array(re)] + [rrows.column(k) for k in self.keys[1]]
            li, ri = key_pairs(lk, rk, nl, nr)
            if self.condition is not None and len(li):
                mask = residual_mask(self.condition, gather(lrows, li), gather(rrows, ri), self.ctx)
                assert mask is not None
                li, ri = li[mask], ri[mask]
        else:
            li, ri = EMPTY, EMPTY
        self._emit(lrows, rrows, nl, nr, li, ri, out)

    def _emit(
        self,
        lrows: pa.Table | None,
        rrows: pa.Table | None,
        nl: int,
        nr: int,
        li: np.ndarray,
        ri: np.ndarray,
        out: Output,
    ) -> None:
        schema = self.node.schema
        ltypes = [f.type.to_arrow() for f in schema[: self.left_width]]
        if self.kind in ("SEMI", "ANTI"):
            hit = np.zeros(nl, dtype=bool)
            hit[li] = True
            sel = np.flatnonzero(hit if self.kind == "SEMI" else ~hit)
            batch = joined_batch(self.node, lrows, None, sel, sel, ltypes, [])
            if batch is not None:
                out.emit(batch)
            return
        rtypes = [f.type.to_arrow() for f in schema[self.left_width :]]
        parts_l = [li]
        parts_r = [ri]
        if self.kind in ("LEFT", "FULL") and nl:
            hit = np.zeros(nl, dtype=bool)
            hit[li] = True
            miss = np.flatnonzero(~hit)
            parts_l.append(miss)
            parts_r.append(np.full(len(miss), -1, dtype=np.int64))
        if self.kind in ("RIGHT", "FULL") and nr:
            hit = np.zeros(nr, dtype=bool)
            hit[ri] = True
            miss = np.flatnonzero(~hit)
            parts_l.append(np.full(len(miss), -1, dtype=np.int64))
            parts_r.append(miss)
        a, b = np.concatenate(parts_l), np.concatenate(parts_r)
        batch = joined_batch(self.node, lrows, rrows, a, b, ltypes, rtypes)
        if batch is not None:
            out.emit(batch)

    # ------------------------------------------------------------------ checkpoints
    def snapshot_state(self, checkpoint_id: int) -> Any:
        # BATCH sorted inputs (a hand-taken savepoint): to the buffers, which hold the rows
        # from then on; refused with a hint once spilled
        self._unsort()
        return state_format.pack({"buffers": self.buffers, "wm": self.wm, "ended": self.ended})

    def restore_state(self, handles: Any) -> None:
        d = state_format.unpack(handles)
        self.buffers, self.wm = d["buffers"], d["wm"]
        self.ended = set(d.get("ended") or ())
        self._unsort()  # the restored buffers hold rows: the rest joins them in memory

    def close(self) -> None:
        """Remove the BATCH sorts' spill directories (also when the job failed)."""
        for sorter in self.sorters:
            if sorter is not None:
                sorter.close()
        super().close()

    def rescale_snapshots(self, old: OldStates, new_range: tuple[int, int], index: int, parallelism: int) -> Any:
        """Each side's buffered rows whose join key (the exchange key of that input, not
        the window columns) is in range, with their window bounds and timers; the
        operator watermark is the minimum over the old subtasks, an input ended when it
        ended in all of them."""
        max_par = operator_max_parallelism(self)
        snaps = [d for d in (load_state(s) for _, s in old) if d is not None]
        buffers = (_Buffer(), _Buffer())
        for side, new in enumerate(buffers):
            keys = exchange_keys(self, side)
            for d in snaps:
                b: _Buffer = d["buffers"][side]
                keep = owned_rows(b.rows, keys, new_range, max_par)
                if keep.any():
                    assert b.rows is not None
                    (batch,) = b.rows.filter(pa.array(keep)).combine_chunks().to_batches()
                    new.add(batch, b.start[keep], b.end[keep], b.timer[keep])
        ended = [set(d.get("ended") or ()) for d in snaps]
        return state_format.pack(
            {
                "buffers": buffers,
                "wm": min((int(d["wm"]) for d in snaps), default=self.wm),
                "ended": set.intersection(*ended) if ended else set(),
            }
        )


def _window_text(w: WindowParams, start: str, end: str) -> str:
    text = format_window(w, "x")
    inner = text[text.index("(") + 1 : -1].replace("time_col=[x], ", "").replace("time_col=[x]", "")
    head = f"win_start=[{start}], win_end=[{end}]"
    return f"{w.kind}({head}{', ' + inner if inner else ''})"


class WindowJoinSpec(OperatorSpec[WindowJoinParams]):
    """A join of two windowed inputs per window (insert-only in and out)."""

    name = "WindowJoin"
    params_type = WindowJoinParams
    operator_class = WindowJoinOperator
    input_distribution = KEYED
    rescalable = True
    spark = SparkCapability(
        True,
        False,
        "Batch: a Spark join on window_start / window_end and the keys (INNER / LEFT / RIGHT / FULL / SEMI / ANTI). "
        "Streaming: Flink joins each window once when the watermark closes it and drops late rows; a Structured "
        "Streaming join emits per micro-batch and pads outer rows only in a later one: not mapped.",
    )

    def input_keys(self, params: WindowJoinParams, input_index: int) -> tuple[int, ...]:
        return params.left_keys if input_index == 0 else params.right_keys

    def changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str:
        return require_insert_only(self.name, inputs)

    def explain(self, node: PlanView) -> list[str]:
        p = self.params(node)
        names = join_names(node)
        nl = p.left_width
        lw, rw = p.left_window, p.right_window
        where_parts = [f"=({names[lk]}, {names[nl + rk]})" for lk, rk in zip(p.left_keys, p.right_keys, strict=True)]
        if p.condition is not None:
            where_parts.append(format_expr(p.condition, names))
        if len(where_parts) == 1:
            where = where_parts[0]
        else:
            where = f"AND({', '.join(where_parts)})" if where_parts else "true"
        return [
            f"leftWindow=[{_window_text(p.window, names[lw[0]], names[lw[1]])}]",
            f"rightWindow=[{_window_text(p.window, names[nl + rw[0]], names[nl + rw[1]])}]",
            f"joinType=[{join_type_name(p.kind)}]",
            f"where=[{where}]",
            f"select=[{', '.join(names[: len(node.fields)])}]",
        ]


WINDOW_JOIN = register_spec(WindowJoinSpec())
