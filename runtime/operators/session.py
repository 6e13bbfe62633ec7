"""Session windows for WindowAggregate (a helper, not an operator).

State per session key (the grouping keys, which include the PARTITION BY keys): a list
of open sessions `[start, end)` with `end` = last row + gap, and the not yet fired rows
themselves (insert-only input). Aggregates are computed when a session fires, over its
buffered rows in arrival order; this makes merging sessions trivial (no accumulator
merge) at the cost of keeping the rows of open sessions.

Exactness with per-row watermarks: Flink decides lateness row by row against the
sessions that exist when the row arrives, and fires sessions between rows as the
watermark passes. A batch is therefore cut into chunks inside which nothing can fire
(every row's `__wm` is below every timer of the sessions that exist when it arrives) and
no row is late on its own; such a chunk merges as one vectorized interval union. A row
that is late on its own (`ts + gap - 1 <= __wm`) forms a chunk by itself and is dropped
when the session it merges into is late too (case 052: 05.000 arriving at watermark 21).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from runtime.aggregates.aggset import AggregateSet
from runtime.operators.base import Output

if TYPE_CHECKING:
    from runtime.operators.window_agg import WindowAggregateOperator


class SessionWindows:
    def __init__(self, op: WindowAggregateOperator, gap: int) -> None:
        self.op = op
        self.gap = gap
        self.s_key = np.zeros(0, dtype=np.int64)
        self.s_start = np.zeros(0, dtype=np.int64)
        self.s_end = np.zeros(0, dtype=np.int64)
        self.buffers: list[pa.RecordBatch] = []
        self.buf_key: list[np.ndarray] = []
        self.buf_ts: list[np.ndarray] = []

    def __getstate__(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["op"] = None
        return d

    # ------------------------------------------------------------------ input
    def process(self, data: pa.RecordBatch, ts: np.ndarray, wms: np.ndarray | None, out: Output) -> None:
        op = self.op
        keys = op.state.lookup([data.column(g) for g in op.grouping], data.num_rows)
        n = data.num_rows
        if wms is None:  # batch mode: no lateness, nothing fires before the end
            self._merge(data, keys, ts, np.arange(n))
            return
        own_timer = op.timer_of(ts + self.gap)
        late_alone = own_timer <= wms
        i = 0
        while i < n:
            self.fire(int(wms[i]), out, cleanup=False)
            if late_alone[i]:
                self._merge(data, keys, ts, np.array([i]), wm=int(wms[i]))
                i += 1
                continue
            t_open = int(op.timer_of(self.s_end).min()) if len(self.s_end) else np.iinfo(np.int64).max
            limit = np.minimum(np.minimum.accumulate(own_timer[i:]), t_open)
            # row k (> i) may join the chunk only if nothing can fire before it
            bad = np.flatnonzero((wms[i + 1 :] >= limit[:-1]) | late_alone[i + 1 :])
            j = i + 1 + int(bad[0]) if len(bad) else n
            self._merge(data, keys, ts, np.arange(i, j))
            i = j

    def _merge(
        self, data: pa.RecordBatch, keys: np.ndarray, ts: np.ndarray, rows: np.ndarray, wm: int | None = None
    ) -> None:
        """Union the rows' own sessions with the open sessions of their keys. With `wm`
        (a single row late on its own) the row is dropped if the merged session is late."""
        rk, rt = keys[rows], ts[rows]
        touched = np.isin(self.s_key, rk)
        import pandas as pd  # deferred: pandas is only needed once sessions fire

        cand = pd.DataFrame(
            {
                "k": np.concatenate([self.s_key[touched], rk]),
                "s": np.concatenate([self.s_start[touched], rt]),
                "e": np.concatenate([self.s_end[touched], rt + self.gap]),
            }
        ).sort_values(["k", "s"], kind="stable")
        prev_end = cand.groupby("k", sort=False)["e"].cummax().groupby(cand["k"], sort=False).shift(1)
        new_group = prev_end.isna() | (cand["s"] > prev_end)
        cand["g"] = new_group.cumsum()
        merged = cand.groupby("g", sort=True).agg(k=("k", "first"), s=("s", "min"), e=("e", "max"))
        mk, ms, me = (merged[c].to_numpy(np.int64) for c in ("k", "s", "e"))
        if wm is not None:
            # the single row's merged session: the one containing its start
            hit = (mk == rk[0]) & (ms <= rt[0]) & (me >= rt[0] + self.gap)
            if int(self.op.timer_of(me[hit]).max()) <= wm:
                self.op.ctx.metrics.late_rows_dropped += 1
                return
        self.s_key = np.concatenate([self.s_key[~touched], mk])
        self.s_start = np.concatenate([self.s_start[~touched], ms])
        self.s_end = np.concatenate([self.s_end[~touched], me])
        take = pa.array(rows, type=pa.int64())
        self.buffers.append(pa.RecordBatch.from_arrays([c.take(take) for c in data.columns], schema=data.schema))
        self.buf_key.append(rk)
        self.buf_ts.append(rt)

    # ------------------------------------------------------------------ firing
    def fire(self, watermark: int, out: Output, cleanup: bool = True) -> None:
        """Emit the sessions whose timer <= watermark. `cleanup` forgets keys without open
        sessions (not while a batch is being processed: its rows hold key slots)."""
        if len(self.s_end) == 0:
            return
        timers = self.op.timer_of(self.s_end)
        due = timers <= watermark
        if not due.any():
            return
        order = np.lexsort((self.s_start[due], timers[due]))
        fk, fs, fe = self.s_key[due][order], self.s_start[due][order], self.s_end[due][order]
        self.s_key, self.s_start, self.s_end = self.s_key[~due], self.s_start[~due], self.s_end[~due]
        rows = pa.Table.from_batches(self.buffers).combine_chunks() if self.buffers else None
        bk = np.concatenate(self.buf_key) if self.buf_key else np.zeros(0, dtype=np.int64)
        bt = np.concatenate(self.buf_ts) if self.buf_ts else np.zeros(0, dtype=np.int64)
        # session index of every buffered row (-1: still open): interval join by key
        sid = np.full(len(bk), -1, dtype=np.int64)
        import pandas as pd

        sess = pd.DataFrame({"k": fk, "s": fs, "e": fe, "i": np.arange(len(fk))})
        buf = pd.DataFrame({"k": bk, "t": bt, "r": np.arange(len(bk))})
        j = buf.merge(sess, on="k")
        j = j[(j["t"] >= j["s"]) & (j["t"] + self.gap <= j["e"])]
        sid[j["r"].to_numpy()] = j["i"].to_numpy()
        fired = sid >= 0
        assert rows is not None
        frows = rows.filter(pa.array(fired)).to_batches()
        fired_batch = pa.concat_batches(frows) if frows else pa.RecordBatch.from_pylist([], schema=rows.schema)
        aggset = AggregateSet(self.op.calls, [f.type for f in rows.schema], retract=False)
        slots = sid[fired]
        aggset.grow(len(fk))
        aggset.fold(slots, np.ones(len(slots), dtype=np.int64), fired_batch)
        _, first = np.unique(slots, return_index=True)  # first buffered row of each session
        present = np.unique(slots)
        take = pa.array(first, type=pa.int64())
        key_cols = [fired_batch.column(g).take(take) for g in self.op.grouping]
        self.op.emit_windows(key_cols, aggset.results(present), fs[present], fe[present], out)
        rest = ~fired
        left = rows.filter(pa.array(rest)).to_batches()
        self.buffers = [pa.concat_batches(left)] if left else []
        self.buf_key = [bk[rest]]
        self.buf_ts = [bt[rest]]
        if cleanup:
            live = self.op.state.live_slots()
            self.op.state.remove(live[~np.isin(live, self.s_key)])
