"""Key groups: which subtask owns a key, computed over whole Arrow columns.

One function decides a row's key group everywhere: the hash exchange that routes rows
to subtasks and the state backends that record each key's group (so a snapshot can be
re-split when the parallelism changes) both call `key_groups_of_rows`. It must
therefore be stable across processes and runs (no Python `hash`, which is salted) and
give equal keys equal groups whatever the physical Arrow type of an edge: all integer
widths hash as int64, string and large_string (and binary) as their bytes.

Ranges follow Flink (`KeyGroupRangeAssignment`): key group `g` belongs to subtask
`g * parallelism // max_parallelism`, so subtask `i` owns one contiguous range and a
new parallelism re-splits state by ranges.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np
import pyarrow as pa

_NULL_HASH = np.uint64(0x9E3779B97F4A7C15)
_STRING_PRIME = np.uint64(0x100000001B3)
_COMBINE = np.uint64(31)


def _mix(h: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer: spreads every input bit over the whole word."""
    with np.errstate(over="ignore"):
        h = h.astype(np.uint64, copy=True)
        h ^= h >> np.uint64(30)
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(27)
        h *= np.uint64(0x94D049BB133111EB)
        h ^= h >> np.uint64(31)
    return h


def _binary_hash(arr: pa.Array) -> np.ndarray:
    """Polynomial hash of each value's bytes, vectorized over the data buffer."""
    arr = arr.cast(pa.large_binary())
    n = len(arr)
    bufs = arr.buffers()
    offsets = np.frombuffer(bufs[1], dtype=np.int64)[arr.offset : arr.offset + n + 1]
    lengths = np.diff(offsets)
    base = int(offsets[0])
    total = int(offsets[-1]) - base
    out = np.zeros(n, dtype=np.uint64)
    if total:
        data = np.frombuffer(bufs[2], dtype=np.uint8)[base : base + total].astype(np.uint64)
        owner = np.repeat(np.arange(n), lengths)
        pos = np.arange(total, dtype=np.int64) - (offsets[:-1] - base)[owner]
        with np.errstate(over="ignore"):
            powers = np.cumprod(np.full(int(lengths.max()), _STRING_PRIME, dtype=np.uint64))
            contrib = (data + np.uint64(1)) * powers[pos]
            nonempty = np.flatnonzero(lengths > 0)
            out[nonempty] = np.add.reduceat(contrib, (offsets[:-1] - base)[nonempty])
    with np.errstate(over="ignore"):
        return out + lengths.astype(np.uint64)


def _as_int64(col: pa.Array) -> pa.Array:
    """Temporal values as their int64 storage (date32/time32 go through int32)."""
    try:
        return col.cast(pa.int64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return col.cast(pa.int32()).cast(pa.int64())


def _column_hash(col: pa.Array) -> np.ndarray:
    """64-bit hash per value (nulls get a constant of their own)."""
    t = col.type
    n = len(col)
    if pa.types.is_null(t):
        return np.full(n, _NULL_HASH, dtype=np.uint64)
    if pa.types.is_dictionary(t):
        col = col.cast(t.value_type)
        t = col.type
    if pa.types.is_boolean(t) or pa.types.is_integer(t):
        h = col.cast(pa.int64()).fill_null(0).to_numpy().view(np.uint64)
    elif pa.types.is_temporal(t):
        h = _as_int64(col).fill_null(0).to_numpy().view(np.uint64)
    elif pa.types.is_floating(t):
        f = col.cast(pa.float64()).fill_null(0.0).to_numpy(zero_copy_only=False).copy()
        f[f == 0.0] = 0.0  # -0.0 equals 0.0
        f[np.isnan(f)] = np.nan  # one NaN bit pattern
        h = f.view(np.uint64)
    elif pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t):
        h = _binary_hash(col)
    elif pa.types.is_fixed_size_binary(t) or pa.types.is_decimal(t):
        width = t.byte_width
        raw = np.frombuffer(col.buffers()[1], dtype=np.uint8)[col.offset * width : (col.offset + n) * width]
        words = raw.reshape(n, width)
        h = np.zeros(n, dtype=np.uint64)
        with np.errstate(over="ignore"):
            for j in range(width):  # loop over the bytes of the type's width, not rows
                h = h * _STRING_PRIME + words[:, j].astype(np.uint64)
    else:  # nested values: rare as keys; a stable text form per row
        h = np.array([zlib.crc32(repr(v).encode("utf-8")) for v in col.to_pylist()], dtype=np.uint64)
    h = _mix(np.asarray(h, dtype=np.uint64))
    if col.null_count:
        h[col.is_null().to_numpy(zero_copy_only=False)] = _NULL_HASH
    return h


def column_hash(col: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The per-value hash `hash_rows` combines (uint64, element-wise: hashing a column's
    dictionary and gathering by its codes gives the same values as hashing the column)."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    return _column_hash(col)


def combine_column_hashes(hashes: Sequence[np.ndarray], num_rows: int) -> np.ndarray:
    """Fold per-column hashes (`column_hash`) into `hash_rows`' row hash."""
    h = np.zeros(num_rows, dtype=np.uint64)
    for ch in hashes:
        with np.errstate(over="ignore"):
            h = h * _COMBINE + ch
    return _mix(h)


def hash_rows(columns: Sequence[pa.Array | pa.ChunkedArray], num_rows: int) -> np.ndarray:
    """Stable 64-bit hash of every row's composite key (no columns: all equal)."""
    return combine_column_hashes([column_hash(col) for col in columns], num_rows)


def key_groups_of_rows(
    columns: Sequence[pa.Array | pa.ChunkedArray], num_rows: int, max_parallelism: int
) -> np.ndarray:
    """Key group (0 .. max_parallelism-1) of every row's composite key, as int32. The
    empty key (a global aggregate, fed by a "single" exchange to subtask 0) is group 0."""
    if not columns:
        return np.zeros(num_rows, dtype=np.int32)
    return (hash_rows(columns, num_rows) % np.uint64(max_parallelism)).astype(np.int32)


def subtask_of_key_groups(groups: np.ndarray, parallelism: int, max_parallelism: int) -> np.ndarray:
    """The subtask owning each key group (Flink's `computeOperatorIndexForKeyGroup`)."""
    return (np.asarray(groups, dtype=np.int64) * parallelism // max_parallelism).astype(np.int32)


def key_group_range(subtask: int, parallelism: int, max_parallelism: int) -> tuple[int, int]:
    """The inclusive key-group range subtask `subtask` owns (Flink's
    `computeKeyGroupRangeForOperatorIndex`)."""
    start = (subtask * max_parallelism + parallelism - 1) // parallelism
    end = ((subtask + 1) * max_parallelism - 1) // parallelism
    return start, end
