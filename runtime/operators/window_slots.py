"""(window, key) → state slot, cached in front of the keyed state's lookup: a helper of
WindowAggregate, not an operator.

Why: a window aggregate keys its state by (window_start, window_end, grouping keys), and
a streaming batch of ordered input meets the same few windows and, in each, mostly keys
it met in the batches before. Hashing and probing every partial row's three key columns
was a fifth of a TUMBLE job's time. When the grouping is one NULL-free integer column of
a moderate range, each open window gets a direct-address array over that range (slot, or
-1 when not known yet): a row's slot is one gather, and only the rows not cached go to
the state backend's lookup (in row order, so new keys get their slots in the same order
as without the cache).

The cache is exact as long as a cached slot keeps its key, which `KeyedStateBackend.
stable_slots` promises until the operator removes the key: the operator drops a window's
array when it fires that window (all its keys share one timer), and the whole cache on
restore. A window is identified by its end (the spec and the end give the start).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pyarrow as pa

from runtime.state import KeyedStateBackend

# Cached cells over all open windows (8 bytes each), and the widest key range cached.
_MAX_CELLS = 1 << 22
_MAX_SPAN = 1 << 20
# A batch meeting more windows than this (a HOP with many windows per row) skips the cache.
_MAX_WINDOWS = 64
# After this many batches, a cache that answered less than 1/_MIN_HIT_SHARE of the rows
# (every (window, key) new: one row per group) is turned off: it only added work.
_TRIAL_BATCHES = 8
_MIN_HIT_SHARE = 8


class WindowSlotCache:
    """`lookup(state, keys, end)` = `state.lookup(keys, len(end))` for keys
    (window_start, window_end, k) with k a NULL-free integer column; `unit` divides the
    distance between any two window ends (the slice length)."""

    def __init__(self, unit: int) -> None:
        self.unit = unit
        self.enabled = True
        self.lo = 0
        self.span = 0
        self.windows: dict[int, np.ndarray] = {}  # window end -> slot per key (key - lo)
        self.batches = 0
        self.rows = 0
        self.hits = 0

    def lookup(self, state: KeyedStateBackend, keys: Sequence[pa.Array], end: np.ndarray) -> np.ndarray:
        n = len(end)
        if not self.enabled or n == 0 or len(keys) != 3:
            return state.lookup(keys, n)
        key = keys[2]
        if isinstance(key, pa.ChunkedArray):
            key = key.combine_chunks()
        if not pa.types.is_integer(key.type) or pa.types.is_uint64(key.type):
            self.clear(disable=True)
            return state.lookup(keys, n)
        if key.null_count:
            return state.lookup(keys, n)
        kv = key.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
        e0 = int(end.min())
        widx = (end - e0) // self.unit
        count = int(widx.max()) + 1
        if count > _MAX_WINDOWS or not (widx * self.unit + e0 == end).all():
            return state.lookup(keys, n)
        if not self._cover(int(kv.min()), int(kv.max())):
            return state.lookup(keys, n)
        present = np.flatnonzero(np.bincount(widx, minlength=count)) if count > 1 else np.zeros(1, dtype=np.int64)
        ends = [e0 + int(j) * self.unit for j in present.tolist()]
        new = sum(1 for e in ends if e not in self.windows)
        if (len(self.windows) + new) * self.span > _MAX_CELLS:
            return state.lookup(keys, n)
        off = kv - self.lo
        rows_of: list[np.ndarray | None] = (
            [None] if count == 1 else [np.flatnonzero(widx == j) for j in present.tolist()]
        )
        slots = np.empty(n, dtype=np.int64)
        for e, rows in zip(ends, rows_of, strict=True):
            cells = self.windows.get(e)
            if cells is None:
                cells = self.windows[e] = np.full(self.span, -1, dtype=np.int64)
            if rows is None:
                slots[:] = cells[off]
            else:
                slots[rows] = cells[off[rows]]
        miss = np.flatnonzero(slots < 0)
        if len(miss):
            take = pa.array(miss, type=pa.int64())
            slots[miss] = state.lookup([k.take(take) for k in keys], len(miss))
            if count == 1:
                self.windows[ends[0]][off[miss]] = slots[miss]
            else:
                of_miss = widx[miss]
                for j, e in zip(present.tolist(), ends, strict=True):
                    at = miss[of_miss == j]
                    self.windows[e][off[at]] = slots[at]
        self._count(n, n - len(miss))
        return slots

    def _count(self, rows: int, hits: int) -> None:
        """Keep the cache only where it answers a fair share of the lookups."""
        self.batches += 1
        self.rows += rows
        self.hits += hits
        if self.batches == _TRIAL_BATCHES and self.hits * _MIN_HIT_SHARE < self.rows:
            self.clear(disable=True)

    def _cover(self, lo: int, hi: int) -> bool:
        """Make the key range [lo, hi] cached (re-laying out the open windows' arrays), or
        turn the cache off for good when the keys spread wider than `_MAX_SPAN`."""
        if self.span and lo >= self.lo and hi < self.lo + self.span:
            return True
        if self.span:
            lo, hi = min(lo, self.lo), max(hi, self.lo + self.span - 1)
        width = hi - lo + 1
        span = max(2 * width, 1024)
        if width > _MAX_SPAN:
            self.clear(disable=True)
            return False
        new_lo = lo - (span - width) // 2
        for e, old in list(self.windows.items()):
            cells = np.full(span, -1, dtype=np.int64)
            at = self.lo - new_lo
            cells[at : at + self.span] = old
            self.windows[e] = cells
        self.lo, self.span = new_lo, span
        return True

    def fired(self, watermark: int, timer_of: Callable[[np.ndarray], np.ndarray]) -> None:
        """Forget the windows whose timer is at or below `watermark` (they just fired and
        their keys were removed)."""
        if not self.windows:
            return
        ends = np.array(list(self.windows), dtype=np.int64)
        for e in ends[timer_of(ends) <= watermark].tolist():
            del self.windows[e]

    def clear(self, disable: bool = False) -> None:
        self.windows = {}
        self.span = 0
        if disable:
            self.enabled = False
