"""Distinct integers of a batch (state slots, partition ids, packed keys) without `np.unique`.

Why: on NumPy 2.x `np.unique` of an integer array costs 5-35x a plain sort of it, and
operators call it on every batch for the keys the batch touches. Slots are small
non-negative integers, so a scatter into a flag (or lowest-row) array over their range
finds them in O(n) without sorting; a wide range falls back to a sort. The results are
exactly `np.unique`'s (same values, order and dtype); non-integer input goes to it.
"""

from __future__ import annotations

import numpy as np

# A range this many times the row count (plus a constant) is still scattered, not sorted.
_RANGE_PER_ROW = 4
_MIN_RANGE = 4096


def _scatter_range(values: np.ndarray) -> tuple[int, int] | None:
    """(lo, hi) of integer values whose range is small enough to scatter into, else None."""
    if values.dtype.kind not in "iu" or len(values) == 0:
        return None
    lo, hi = int(values.min()), int(values.max())
    return (lo, hi) if hi - lo < _RANGE_PER_ROW * len(values) + _MIN_RANGE else None


def sorted_distinct(values: np.ndarray) -> np.ndarray:
    """`np.unique(values)`: the distinct values, ascending."""
    if values.dtype.kind not in "iu":
        return np.unique(values)
    span = _scatter_range(values)
    if span is not None:
        lo, hi = span
        seen = np.zeros(hi - lo + 1, dtype=bool)
        seen[values - lo] = True
        return (np.flatnonzero(seen) + lo).astype(values.dtype, copy=False)
    ordered = np.sort(values)
    if len(ordered) == 0:
        return ordered
    keep = np.empty(len(ordered), dtype=bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


def sorted_distinct_inverse(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`np.unique(values, return_inverse=True)` for a 1-d array: the distinct values
    ascending, and each row's index into them. A small range is scattered (the inverse is
    the running count of the values seen below each one), a wide one sorted once."""
    if values.dtype.kind not in "iu" or len(values) == 0:
        uniq, inverse = np.unique(values, return_inverse=True)
        return uniq, inverse.reshape(-1)
    span = _scatter_range(values)
    if span is None:
        uniq, _, inverse = sorted_distinct_first_inverse(values)
        return uniq, inverse
    lo, hi = span
    seen = np.zeros(hi - lo + 1, dtype=bool)
    seen[values - lo] = True
    rank = np.cumsum(seen) - 1
    return (np.flatnonzero(seen) + lo).astype(values.dtype, copy=False), rank[values - lo]


def first_appearance(slots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct values in order of first appearance, and the row of each first appearance.

    While their range is not much larger than the batch, a scatter of the lowest row index
    per value finds the first rows without sorting (a sort-based unique costs several times
    more per row)."""
    n = len(slots)
    if n == 0:
        return slots[:0].astype(np.int64), np.zeros(0, dtype=np.int64)
    span = _scatter_range(slots)
    if span is not None:
        lo, hi = span
        rows = np.arange(n, dtype=np.int64)
        lowest = np.full(hi - lo + 1, n, dtype=np.int64)
        np.minimum.at(lowest, slots - lo, rows)
        first = np.flatnonzero(lowest[slots - lo] == rows)
        return slots[first], first
    order = np.argsort(slots, kind="stable")
    ordered = slots[order]
    starts = np.ones(n, dtype=bool)
    np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
    first = np.sort(order[starts])
    return slots[first], first


def sorted_distinct_first(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`np.unique(values, return_index=True)`: the distinct values ascending, and the row
    of each one's first appearance."""
    if values.dtype.kind not in "iu":
        uniq, first = np.unique(values, return_index=True)
        return uniq, first
    distinct, first = first_appearance(values)
    order = np.argsort(distinct, kind="stable")
    return distinct[order], first[order]


def sorted_distinct_first_inverse(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`np.unique(values, return_index=True, return_inverse=True)` for a 1-d array: the
    distinct values ascending, each one's first row, and each row's index into them (one
    stable argsort, not np.unique's)."""
    if values.dtype.kind not in "iu" or len(values) == 0:
        uniq, first, inverse = np.unique(values, return_index=True, return_inverse=True)
        return uniq, first, inverse.reshape(-1)
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.empty(len(ordered), dtype=bool)
    starts[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
    inverse = np.empty(len(values), dtype=np.int64)
    inverse[order] = np.cumsum(starts) - 1
    return ordered[starts], order[starts], inverse
