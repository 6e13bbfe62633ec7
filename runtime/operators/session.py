"""Session windows for WindowAggregate (a helper, not an operator).

State per session key (the grouping keys, which include the PARTITION BY keys): the open
sessions `[start, end)` with `end` = last row + gap (arrays `s_key`/`s_start`/`s_end`, plus
a session id `s_id`), and the not yet fired rows themselves (insert-only input), each
tagged with the id of the session it belongs to. Aggregates are computed when a session
fires, over its buffered rows in arrival order; this makes merging sessions trivial (no
accumulator merge) at the cost of keeping the rows of open sessions. When sessions merge,
the merged session keeps the id of one of them and the others are forwarded to it
(`forward`), so buffered rows are never rewritten on a merge.

Exactness with per-row watermarks: Flink decides lateness row by row against the
sessions that exist when the row arrives, and fires sessions between rows as the
watermark passes. Keys are independent, so a batch is processed in *rounds*: in each
round every key still having rows takes its next *chunk*, a run of its rows in arrival
order inside which none of that key's sessions can fire (every row's `__wm` is below
every timer of the key's sessions as of its arrival) and no row is late on its own.
Before its chunk, a key's sessions due at the chunk's first watermark fire; then all
chunks of the round merge in one vectorized interval union. A row late on its own
(`ts + gap - 1 <= __wm`) is a chunk by itself and is dropped unless it touches an open
session of its key (case 052: 05.000 arriving at watermark 21). The number of rounds is
the largest number of chunks of one key in the batch: about one for in-order input.

Fired sessions are emitted once per batch (and on each watermark), sorted by (timer,
start, key slot): the order in which firing row by row would have emitted them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, cast

import numpy as np
import pyarrow as pa

from runtime.aggregates.aggset import AggregateSet
from runtime.checkpoint.format import register_state_type
from runtime.distinct import sorted_distinct_first
from runtime.operators.base import OperatorContext, Output
from runtime.state import KeyedStateBackend

if TYPE_CHECKING:
    from runtime.operators.window_agg import WindowAggregateOperator


class SessionOwner(Protocol):
    """The operator the sessions belong to: its keyed state (one slot per session key),
    the key columns, its context and its window timers (WindowAggregate, and the SESSION
    window table function of session_tvf.py)."""

    state: KeyedStateBackend
    grouping: list[int]
    ctx: OperatorContext

    def timer_of(self, end: np.ndarray) -> np.ndarray: ...


_EMPTY = np.zeros(0, dtype=np.int64)
_MAX = np.iinfo(np.int64).max
_MIN = np.iinfo(np.int64).min


def _seg_starts(seg: np.ndarray) -> np.ndarray:
    """Index of the first element of each element's segment (`seg` sorted, any ints)."""
    n = len(seg)
    first = np.ones(n, dtype=bool)
    first[1:] = seg[1:] != seg[:-1]
    return np.maximum.accumulate(np.where(first, np.arange(n), 0))


def _seg_accumulate(values: np.ndarray, seg: np.ndarray, op: str) -> np.ndarray:
    """Running min or max of `values` restarting at every new value of sorted `seg`.
    Vectorized by offsetting each segment past the range of the others; falls back to a
    loop over segments only when that offset could overflow int64."""
    n = len(values)
    if n == 0:
        return values.copy()
    first = np.ones(n, dtype=bool)
    first[1:] = seg[1:] != seg[:-1]
    seg_no = np.cumsum(first) - 1
    lo, hi = int(values.min()), int(values.max())
    span = hi - lo + 1
    nseg = int(seg_no[-1]) + 1
    if span * (nseg + 1) < 2**62:
        rel = values - lo
        if op == "max":
            return np.maximum.accumulate(rel + seg_no * span) - seg_no * span + lo
        return np.minimum.accumulate(rel + (nseg - seg_no) * span) - (nseg - seg_no) * span + lo
    out = np.empty_like(values)
    bounds = np.flatnonzero(first).tolist() + [n]
    acc = np.maximum.accumulate if op == "max" else np.minimum.accumulate
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):  # loop over segments (rare)
        out[a:b] = acc(values[a:b])
    return out


def _seg_cumsum(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Inclusive running sum within segments (`starts` from `_seg_starts`)."""
    c = np.cumsum(values)
    return c - c[starts] + values[starts]


@register_state_type
class SessionWindows:
    def __init__(self, op: SessionOwner, gap: int) -> None:
        self.op = op
        self.gap = gap
        self.s_key = _EMPTY
        self.s_start = _EMPTY
        self.s_end = _EMPTY
        self.s_id = _EMPTY
        self.buffers: list[pa.RecordBatch] = []
        self.buf_key: list[np.ndarray] = []
        self.buf_ts: list[np.ndarray] = []
        self.buf_sid: list[np.ndarray] = []
        self.forward = _EMPTY  # session id -> id it was merged into (itself if live)
        self.next_id = 0
        self.ids_valid = True
        # fired but not yet emitted: (key slot, start, end, id, timer)
        self.pending: list[tuple[np.ndarray, ...]] = []

    def __getstate__(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["op"] = None
        return d

    def __setstate__(self, d: dict[str, Any]) -> None:
        self.__dict__.update(d)
        # snapshots may be re-split by key (checkpoint/rescale.py rewrites s_key / buffers
        # / buf_key / buf_ts only): rebuild the session ids from keys and times on first use
        self.ids_valid = False
        self.__dict__.setdefault("pending", [])

    # ------------------------------------------------------------------ ids
    def _new_ids(self, n: int) -> np.ndarray:
        ids = np.arange(self.next_id, self.next_id + n, dtype=np.int64)
        self.next_id += n
        if len(self.forward) < self.next_id:
            grown = np.arange(max(self.next_id, 2 * len(self.forward), 1024), dtype=np.int64)
            grown[: len(self.forward)] = self.forward
            self.forward = grown
        return ids

    def _resolve(self, sid: np.ndarray) -> np.ndarray:
        """Follow merges to the live session id (chains are short: only a row bridging two
        open sessions of a key extends one)."""
        while len(sid):
            nxt = self.forward[sid]
            if (nxt == sid).all():
                break
            sid = nxt
        return sid

    def _rebuild_ids(self) -> None:
        """After a restore: ids 0..m-1 for the open sessions, each buffered row tagged with
        the open session of its key containing it (the last one starting at or before it)."""
        self.ids_valid = True
        self.next_id, self.forward = 0, _EMPTY
        self.s_id = self._new_ids(len(self.s_key))
        bk = np.concatenate(self.buf_key) if self.buf_key else _EMPTY
        bt = np.concatenate(self.buf_ts) if self.buf_ts else _EMPTY
        if len(bk) == 0:  # nothing buffered: the four lists stay empty together (aligned)
            self.buffers, self.buf_key, self.buf_ts, self.buf_sid = [], [], [], []
            return
        m = len(self.s_key)
        allk, allt = np.concatenate([self.s_key, bk]), np.concatenate([self.s_start, bt])
        is_row = np.arange(len(allk)) >= m
        order = np.lexsort((is_row, allt, allk))  # a session before the rows it contains
        # forward fill, in sorted order, of the position of the latest session
        at = np.maximum.accumulate(np.where(~is_row[order], np.arange(len(order)), 0))
        last = order[at]
        sid = np.empty(len(bk), dtype=np.int64)
        sid[order[is_row[order]] - m] = self.s_id[last[is_row[order]]] if m else -1
        if len(self.buffers) > 1:
            self.buffers = pa.Table.from_batches(self.buffers).combine_chunks().to_batches()[:1]
        self.buf_key, self.buf_ts, self.buf_sid = [bk], [bt], [sid]

    # ------------------------------------------------------------------ input
    def process(self, data: pa.RecordBatch, ts: np.ndarray, wms: np.ndarray | None, out: Output) -> None:
        op = self.op
        if not self.ids_valid:
            self._rebuild_ids()
        keys = op.state.lookup([data.column(g) for g in op.grouping], data.num_rows)
        n = data.num_rows
        if wms is None:  # batch mode: no lateness, nothing fires before the end
            self._merge(data, keys, ts, np.arange(n))
            return
        own_timer = op.timer_of(ts + self.gap)
        late_alone = own_timer <= wms
        pending = np.arange(n, dtype=np.int64)
        while len(pending):  # one round per chunk of the key with the most chunks
            order = pending[np.argsort(keys[pending], kind="stable")]
            k = keys[order]
            starts = _seg_starts(k)
            is_head = starts == np.arange(len(order))
            heads = order[is_head]
            # fire each key's sessions that are due at the watermark of its chunk's first row
            cap = max(op.state.capacity, int(k.max()) + 1)
            thr = np.full(cap, _MIN, dtype=np.int64)
            thr[keys[heads]] = wms[heads]
            timers = op.timer_of(self.s_end)
            due = timers <= thr[self.s_key]
            if due.any():
                self._retire(due, timers)
                timers = timers[~due]
            open_min = np.full(cap, _MAX, dtype=np.int64)
            np.minimum.at(open_min, self.s_key, timers)
            # a row joins its key's chunk if every earlier row of the chunk did and none of
            # the key's sessions (open ones, or those the chunk's earlier rows open) is due
            ot = own_timer[order]
            incl = _seg_accumulate(ot, k, "min")
            excl = np.empty_like(incl)
            excl[1:] = incl[:-1]
            limit = np.minimum(np.where(is_head, _MAX, excl), open_min[k])
            bad = ~is_head & ((wms[order] >= limit) | late_alone[order] | late_alone[order[starts]])
            in_chunk = _seg_cumsum(bad.astype(np.int64), starts) == 0
            chunk = np.sort(order[in_chunk])
            lonely = chunk[late_alone[chunk]]
            if len(lonely):  # late on its own: kept only if it extends an open session
                dropped = lonely[~self._touches_open(keys[lonely], ts[lonely])]
                chunk = chunk[~np.isin(chunk, dropped)]
                op.ctx.metrics.late_rows_dropped += len(dropped)
            if len(chunk):
                self._merge(data, keys, ts, chunk)
            pending = np.sort(order[~in_chunk])
        self.fire(int(wms.max()), out, cleanup=False)

    def _touches_open(self, rk: np.ndarray, rt: np.ndarray) -> np.ndarray:
        """Whether each row's own window `[t, t + gap]` touches an open session of its key."""
        if len(self.s_key) == 0:
            return np.zeros(len(rk), dtype=bool)
        order = np.argsort(self.s_key, kind="stable")
        sk = self.s_key[order]
        lo, hi = np.searchsorted(sk, rk, "left"), np.searchsorted(sk, rk, "right")
        cnt = hi - lo
        row = np.repeat(np.arange(len(rk)), cnt)
        idx = order[np.repeat(lo - np.cumsum(cnt) + cnt, cnt) + np.arange(int(cnt.sum()))]
        hit = (self.s_start[idx] <= rt[row] + self.gap) & (self.s_end[idx] >= rt[row])
        out = np.zeros(len(rk), dtype=bool)
        out[row[hit]] = True
        return out

    def _merge(self, data: pa.RecordBatch, keys: np.ndarray, ts: np.ndarray, rows: np.ndarray) -> None:
        """Union the rows' own sessions with the open sessions of their keys (vectorized:
        sort by key and start, a new session begins where the start passes the running end)."""
        rk, rt = keys[rows], ts[rows]
        touched = np.isin(self.s_key, rk)
        n_old = int(touched.sum())
        ck = np.concatenate([self.s_key[touched], rk])
        cs = np.concatenate([self.s_start[touched], rt])
        ce = np.concatenate([self.s_end[touched], rt + self.gap])
        cid = np.concatenate([self.s_id[touched], np.full(len(rows), -1, dtype=np.int64)])
        order = np.lexsort((cs, ck))
        ck, cs, ce, cid = ck[order], cs[order], ce[order], cid[order]
        run_end = _seg_accumulate(ce, ck, "max")
        new = np.ones(len(ck), dtype=bool)
        new[1:] = (ck[1:] != ck[:-1]) | (cs[1:] > run_end[:-1])
        grp = np.cumsum(new) - 1
        bounds = np.flatnonzero(new)
        mk, ms, me = ck[bounds], cs[bounds], np.maximum.reduceat(ce, bounds)
        # a merged session keeps the largest id among its old sessions (fresh id if none)
        gid = np.maximum.reduceat(cid, bounds)
        fresh = gid < 0
        gid[fresh] = self._new_ids(int(fresh.sum()))
        old = cid >= 0
        self.forward[cid[old]] = gid[grp[old]]
        row_sid = np.empty(len(rows), dtype=np.int64)
        is_row = order >= n_old
        row_sid[order[is_row] - n_old] = gid[grp[is_row]]
        keep = ~touched
        self.s_key = np.concatenate([self.s_key[keep], mk])
        self.s_start = np.concatenate([self.s_start[keep], ms])
        self.s_end = np.concatenate([self.s_end[keep], me])
        self.s_id = np.concatenate([self.s_id[keep], gid])
        if len(rows) == data.num_rows:
            self.buffers.append(data)
        else:
            take = pa.array(rows, type=pa.int64())
            self.buffers.append(pa.RecordBatch.from_arrays([c.take(take) for c in data.columns], schema=data.schema))
        self.buf_key.append(rk)
        self.buf_ts.append(rt)
        self.buf_sid.append(row_sid)

    # ------------------------------------------------------------------ firing
    def _retire(self, due: np.ndarray, timers: np.ndarray) -> None:
        """Move the `due` open sessions to the pending (fired, not yet emitted) list."""
        self.pending.append((self.s_key[due], self.s_start[due], self.s_end[due], self.s_id[due], timers[due]))
        keep = ~due
        self.s_key, self.s_start, self.s_end, self.s_id = (
            self.s_key[keep],
            self.s_start[keep],
            self.s_end[keep],
            self.s_id[keep],
        )

    def fire(self, watermark: int, out: Output, cleanup: bool = True) -> None:
        """Emit the sessions whose timer <= watermark (and those retired earlier in the
        batch). `cleanup` forgets keys without open sessions (not while a batch is being
        processed: its rows hold key slots)."""
        if not self.ids_valid:
            self._rebuild_ids()
        if len(self.s_end):
            timers = self.op.timer_of(self.s_end)
            due = timers <= watermark
            if due.any():
                self._retire(due, timers)
        if self.pending:
            self._emit(out)
        if cleanup:
            live = self.op.state.live_slots()
            self.op.state.remove(live[~np.isin(live, self.s_key)])

    def _emit(self, out: Output) -> None:
        taken = self.take_fired()
        if taken is None:
            return
        fired, slots, fs, fe, n = taken
        op = cast("WindowAggregateOperator", self.op)
        aggset = AggregateSet(op.calls, [f.type for f in fired.schema], retract=False)
        aggset.grow(n)
        aggset.fold(slots, np.ones(len(slots), dtype=np.int64), fired)
        present, first = sorted_distinct_first(slots)  # first buffered row of each session
        take = pa.array(first, type=pa.int64())
        key_cols = [fired.column(g).take(take) for g in op.grouping]
        op.emit_windows(key_cols, aggset.results(present), fs[present], fe[present], out)

    def take_fired(self) -> tuple[pa.RecordBatch, np.ndarray, np.ndarray, np.ndarray, int] | None:
        """Remove the pending (fired) sessions and their buffered rows: (the rows, in
        arrival order; each row's session position; the sessions' starts; their ends; the
        number of sessions), sessions ordered as firing row by row emits them (timer,
        start, key slot). None when no fired session holds a row."""
        fk, fs, fe, fid, ft = (np.concatenate(parts) for parts in zip(*self.pending, strict=True))
        self.pending = []
        order = np.lexsort((fk, fs, ft))
        fk, fs, fe, fid = fk[order], fs[order], fe[order], fid[order]
        pos = np.full(self.next_id, -1, dtype=np.int64)  # session id -> output position
        pos[fid] = np.arange(len(fid))
        fired_parts: list[pa.RecordBatch] = []
        fired_slots: list[np.ndarray] = []
        keep_b: list[pa.RecordBatch] = []
        keep_k: list[np.ndarray] = []
        keep_t: list[np.ndarray] = []
        keep_s: list[np.ndarray] = []
        for b, bk, bt, bs in zip(self.buffers, self.buf_key, self.buf_ts, self.buf_sid, strict=True):
            sid = self._resolve(bs)  # loop over buffered batches (few: compacted below)
            slot = pos[sid]
            hit = slot >= 0
            if hit.any():
                mask = pa.array(hit)
                fired_parts.append(b.filter(mask))
                fired_slots.append(slot[hit])
                if not hit.all():
                    rest = ~hit
                    keep_b.append(b.filter(pa.array(rest)))
                    keep_k.append(bk[rest])
                    keep_t.append(bt[rest])
                    keep_s.append(sid[rest])
            else:
                keep_b.append(b)
                keep_k.append(bk)
                keep_t.append(bt)
                keep_s.append(sid)
        if len(keep_b) > 8:  # compact the buffer
            keep_b = [pa.Table.from_batches(keep_b).combine_chunks().to_batches()[0]]
            keep_k, keep_t, keep_s = [np.concatenate(keep_k)], [np.concatenate(keep_t)], [np.concatenate(keep_s)]
        self.buffers, self.buf_key, self.buf_ts, self.buf_sid = keep_b, keep_k, keep_t, keep_s
        self._renumber_if_sparse()
        if not fired_parts:
            return None
        fired = pa.concat_batches(fired_parts) if len(fired_parts) > 1 else fired_parts[0]
        return fired, np.concatenate(fired_slots), fs, fe, len(fid)

    def _renumber_if_sparse(self) -> None:
        """Keep the id space (and `forward`) proportional to the open sessions."""
        if self.next_id < 4 * len(self.s_id) + 65536:
            return
        remap = np.full(self.next_id, -1, dtype=np.int64)
        remap[self.s_id] = np.arange(len(self.s_id))
        self.buf_sid = [remap[self._resolve(s)] for s in self.buf_sid]
        self.next_id, self.forward = 0, _EMPTY
        self.s_id = self._new_ids(len(self.s_key))
