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

Before the runs, while the argument's values span a small range and the key slots times
that span stay under `DensePairs.MAX_CELLS`, the counts live in one flat array indexed by
`slot * span + (value - base)` (`DensePairs`): a batch is then a gather, a scatter-add and
a second gather over its rows, with no sort, search or hash aggregation at all (COUNT
DISTINCT of a small-domain column per key, the common case). It hands its pairs to the
runs when a value, a key slot or a count leaves its range.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from runtime.distinct import sorted_distinct

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


class DensePairs:
    """Counts of (slot, value) pairs in one int32 array indexed by `slot * span + value - base`
    (module docstring): for values of a small range, any number of rows per batch."""

    MAX_CELLS = 1 << 25  # 128 MB of int32 counts at most
    _MAX_COUNT = 1 << 30  # a count past this moves the pairs to the int64 runs

    def __init__(self, base: int, span: int) -> None:
        self.base = base
        self.span = span
        self.counts = np.zeros(0, dtype=np.int32)

    @classmethod
    def plan(cls, slots: np.ndarray, values: np.ndarray) -> DensePairs | None:
        """A dense store for pairs like these (the first batch's), with room around their
        value range; None when the range is too wide for it."""
        if len(values) == 0:
            return None
        lo, hi = int(values.min()), int(values.max())
        width = hi - lo + 1
        span = width + width // 8 + 2
        if (int(slots.max()) + 1) * span > cls.MAX_CELLS // 2:  # leave room for more keys
            return None
        return cls(lo - width // 16 - 1, span)

    def fits(self, slots: np.ndarray, values: np.ndarray) -> bool:
        """Whether these pairs have cells (growing the array to their slots if allowed)."""
        if len(values) == 0:
            return True
        if int(values.min()) < self.base or int(values.max()) >= self.base + self.span:
            return False
        cells = (int(slots.max()) + 1) * self.span
        if cells > self.MAX_CELLS:
            return False
        if cells > len(self.counts):
            grown = np.zeros(min(max(cells, 2 * len(self.counts)), self.MAX_CELLS), dtype=np.int32)
            grown[: len(self.counts)] = self.counts
            self.counts = grown
        return True

    def cells(self, slots: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Each pair's cell (`fits` said yes)."""
        return slots.astype(np.int64) * self.span + (values - self.base)

    def add_rows(self, cells: np.ndarray, delta: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """Add each row's `delta` to its cell's count; the rows whose pair became present
        (+1) or absent (-1), one row per such pair, and those signs. A count that would
        drop below 0 stays 0 (as the other stores do); None (nothing changed) when a count
        would pass `_MAX_COUNT`: the caller moves to the runs."""
        old = self.counts[cells]
        np.add.at(self.counts, cells, delta.astype(np.int32))
        new = self.counts[cells]
        if len(new) and int(new.max()) > self._MAX_COUNT:
            np.add.at(self.counts, cells, -delta.astype(np.int32))
            return None
        if len(new) and int(new.min()) < 0:
            neg = new < 0
            self.counts[cells[neg]] = 0
            new = np.maximum(new, 0)
        changed = np.flatnonzero((old > 0) != (new > 0))
        if len(changed) == 0:
            return changed, np.zeros(0, dtype=np.int64)
        # One row per changed pair: every row of a pair writes a distinct marker into the
        # pair's cell; the marker that stayed names that pair's representative row.
        c = cells[changed]
        saved = self.counts[c]
        marks = -1 - np.arange(len(c), dtype=np.int32)
        self.counts[c] = marks
        rep = self.counts[c] == marks
        self.counts[c] = saved
        rows = changed[rep]
        return rows, np.where(new[rows] > 0, 1, -1).astype(np.int64)

    def drop_slots(self, slots: np.ndarray) -> None:
        """Forget every pair of these key slots."""
        s = np.asarray(slots, dtype=np.int64)
        s = s[s * self.span < len(self.counts)]
        if len(s):
            self.counts[(s[:, None] * self.span + np.arange(self.span)).ravel()] = 0

    def items(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every live pair: slots, values (int64) and counts."""
        cells = np.flatnonzero(self.counts > 0)
        slots, offsets = np.divmod(cells, self.span)
        return slots.astype(np.int64), offsets.astype(np.int64) + self.base, self.counts[cells].astype(np.int64)


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
        gone = sorted_distinct(np.asarray(slots, dtype=np.uint64))
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
