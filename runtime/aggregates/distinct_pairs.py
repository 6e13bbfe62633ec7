"""Counted (key slot, value) pairs for DISTINCT aggregates, packed into sorted uint64 runs.

Why: a DISTINCT aggregate must know, for every row, whether its (key, value) pair is new.
With an integer-like argument (integers, DATE, TIMESTAMP) whose values of one key span
less than 2^32 from a base, a pair fits one uint64, `slot << 32 | (value - base)`, and a
set of them can be kept as a few sorted numpy arrays (*runs*) with a count beside each
key, as a log-structured merge: a batch's pairs are searched in every run
(`np.searchsorted`), the new ones become a new sorted run, and runs of similar size are
merged (binary-counter rule), so each pair is moved O(log n) times in all and nothing is
done per pair in Python. A count that drops to 0 stays as a tombstone until its run is
merged or compacted. This is several times cheaper than a general hash index insert, which
DISTINCT's one-new-pair-per-row inputs (high-cardinality values) are dominated by.

`PackedPairs.fits` says whether a batch can be packed; when one cannot (a value outside the
window, a non-integer type), DistinctAcc moves every pair into its general hash index.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

_SPAN = 1 << 32
# A run longer than this is searched through every _BLOCK-th key first (a fence array that
# stays in cache), then within the block: a binary search over millions of keys misses the
# cache at most of its steps, the fences and one block cost about two misses.
_BLOCK = 8
_FENCED = 1 << 14
_STEPS = np.arange(_BLOCK)


def _fences(keys: np.ndarray) -> np.ndarray | None:
    """Every _BLOCK-th key of a long run (contiguous: searched for every batch)."""
    return np.ascontiguousarray(keys[::_BLOCK]) if len(keys) >= _FENCED else None


def _find(keys: np.ndarray, fences: np.ndarray | None, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which of the sorted needles `q` are in the sorted run `keys`, and their positions there."""
    if len(keys) == 0:
        return np.zeros(len(q), dtype=bool), np.zeros(0, dtype=np.int64)
    if fences is None:
        pos = np.searchsorted(keys, q)
        pos[pos == len(keys)] = 0
        hit = keys[pos] == q
        return hit, pos[hit]
    block = np.searchsorted(fences, q, side="right") - 1
    block[block < 0] = 0
    idx = np.minimum(block[:, None] * _BLOCK + _STEPS, len(keys) - 1)
    eq = keys[idx] == q[:, None]
    hit = eq.any(axis=1)
    return hit, block[hit] * _BLOCK + eq[hit].argmax(axis=1)


def _merge(k1: np.ndarray, c1: np.ndarray, k2: np.ndarray, c2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two sorted runs with no key in common as one: each key of `k2` lands after the keys of
    `k1` below it and the keys of `k2` before it (one search, two scatters, no sort)."""
    at = np.searchsorted(k1, k2) + np.arange(len(k2))
    rest = np.ones(len(k1) + len(k2), dtype=bool)
    rest[at] = False
    keys = np.empty(len(rest), dtype=k1.dtype)
    counts = np.empty(len(rest), dtype=c1.dtype)
    keys[at], keys[rest] = k2, k1
    counts[at], counts[rest] = c2, c1
    return keys, counts


def integer_values(a: pa.Array) -> np.ndarray | None:
    """The values of a NULL-free integer / DATE / TIMESTAMP array as int64 (None: another type)."""
    t = a.type
    if pa.types.is_integer(t):
        if pa.types.is_uint64(t):
            return None
        return a.cast(pa.int64()).to_numpy(zero_copy_only=False)
    if pa.types.is_date32(t):
        return a.view(pa.int32()).to_numpy(zero_copy_only=False).astype(np.int64)
    if pa.types.is_timestamp(t) or pa.types.is_date64(t):
        return a.view(pa.int64()).to_numpy(zero_copy_only=False)
    return None


def values_array(values: np.ndarray, t: pa.DataType) -> pa.Array:
    """`integer_values`' inverse: int64 values as an Arrow array of type `t`."""
    if pa.types.is_integer(t):
        return pa.array(values, pa.int64()).cast(t)
    if pa.types.is_date32(t):
        return pa.array(values.astype(np.int32), pa.int32()).view(t)
    return pa.array(values, pa.int64()).view(t)


class PackedPairs:
    """A multiset of (slot, value) pairs with counts, as sorted uint64 runs (module docstring)."""

    def __init__(self) -> None:
        self.base: int | None = None  # values are stored as value - base
        self.keys: list[np.ndarray] = []  # sorted uint64 runs
        self.counts: list[np.ndarray] = []  # int64, beside each run's keys (0: tombstone)
        self.fences: list[np.ndarray | None] = []  # `_fences` of each run

    def fits(self, slots: np.ndarray, values: np.ndarray) -> bool:
        """Whether these pairs can be packed (fixing the base on first use)."""
        if len(values) == 0:
            return True
        lo, hi = int(values.min()), int(values.max())
        if self.base is None:
            self.base = max(lo - (1 << 31), -(1 << 63)) if hi - lo < (1 << 31) else lo
        return lo >= self.base and hi - self.base < _SPAN and int(slots.max()) < (1 << 31)

    def _pack(self, slots: np.ndarray, values: np.ndarray) -> np.ndarray:
        assert self.base is not None
        return (slots.astype(np.uint64) << np.uint64(32)) | (values - self.base).astype(np.uint64)

    def add(self, slots: np.ndarray, values: np.ndarray, delta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Add `delta` to the counts of these distinct pairs; their old and new counts."""
        q = self._pack(slots, values)
        order = np.argsort(q)  # sorted needles: searchsorted walks each run forward (cache-friendly)
        q, delta = q[order], delta[order]
        old = np.zeros(len(q), dtype=np.int64)
        found = np.zeros(len(q), dtype=bool)
        where = []
        for keys, fences, counts in zip(self.keys, self.fences, self.counts, strict=True):  # O(log n) runs
            hit, pos = _find(keys, fences, q)
            old[hit] = counts[pos]
            found |= hit
            where.append((hit, pos))
        new = old + delta
        for (hit, pos), counts in zip(where, self.counts, strict=True):
            counts[pos] = np.maximum(new[hit], 0)
        fresh = ~found & (new > 0)
        if fresh.any():
            self._push(q[fresh], new[fresh])
        back = np.empty_like(order)
        back[order] = np.arange(len(order))
        return old[back], new[back]

    def _push(self, keys: np.ndarray, counts: np.ndarray) -> None:
        self.keys.append(keys)
        self.counts.append(counts)
        self.fences.append(_fences(keys))
        while len(self.keys) >= 2 and len(self.keys[-2]) <= 2 * len(self.keys[-1]):
            k2, c2 = self.keys.pop(), self.counts.pop()
            k1, c1 = self.keys.pop(), self.counts.pop()
            del self.fences[-2:]
            keys, counts = _merge(k1, c1, k2, c2)
            live = counts > 0
            keys, counts = keys[live], counts[live]
            self.keys.append(keys)
            self.counts.append(counts)
            self.fences.append(_fences(keys))

    def drop_slots(self, slots: np.ndarray) -> None:
        """Forget every pair of these key slots (their windows fired / keys were removed)."""
        gone = np.unique(np.asarray(slots, dtype=np.uint64))
        for i, (keys, counts) in enumerate(zip(self.keys, self.counts, strict=True)):
            hit = np.isin(keys >> np.uint64(32), gone)
            if hit.any():
                counts[hit] = 0
                if (counts == 0).sum() * 2 > len(counts):  # mostly tombstones: compact the run
                    live = counts > 0
                    self.keys[i], self.counts[i] = keys[live], counts[live]
                    self.fences[i] = _fences(self.keys[i])

    def items(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every live pair: slots, values (int64) and counts."""
        if not self.keys or self.base is None:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, empty
        keys = np.concatenate(self.keys)
        counts = np.concatenate(self.counts)
        live = counts > 0
        keys, counts = keys[live], counts[live]
        slots = (keys >> np.uint64(32)).astype(np.int64)
        values = (keys & np.uint64(_SPAN - 1)).astype(np.int64) + self.base
        return slots, values, counts
