"""Sorting and ranking helpers shared by the Rank, SortLimit, Sort, WindowRank and
TemporalSort operators (not an operator itself).

Ordering follows Flink: each key has its own direction and null placement (ASC defaults
to NULLS FIRST, DESC to NULLS LAST; the planner passes the resolved `nulls_first`), and
ties keep arrival order (a stable sort with the arrival sequence as the last key).
Arrow's `sort_indices` has one global null placement, so every key becomes two sort
columns: a null indicator (0/1, placing NULLs first or last) and the value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.frozen import frozen_dataclass


@frozen_dataclass
class SortKey:
    """One ORDER BY key over the operator's input: column, direction, null placement (the
    binder resolves Flink's default: ASC NULLS FIRST, DESC NULLS LAST). Part of the typed
    params of the ranking and sorting operators (and the planner's logical sort nodes)."""

    index: int
    descending: bool = False
    nulls_first: bool = True

    def remap(self, m: Mapping[int, int]) -> SortKey:
        """The key after input column i moved to m[i]."""
        return replace(self, index=m[self.index])


def format_order(keys: Sequence[SortKey], names: Sequence[str]) -> str:
    """Flink's `orderBy=[v DESC, k ASC]` (null placement shown when not the default)."""
    parts = []
    for k in keys:
        text = f"{names[k.index]} {'DESC' if k.descending else 'ASC'}"
        if k.nulls_first == k.descending:  # default: ASC nulls first, DESC nulls last
            text += " NULLS FIRST" if k.nulls_first else " NULLS LAST"
        parts.append(text)
    return ", ".join(parts)


def _plain(col: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    return col


def sort_order(
    columns: list[pa.Array],
    order: Sequence[SortKey],
    part: np.ndarray | None = None,
    seq: np.ndarray | None = None,
) -> np.ndarray:
    """Indices sorting the rows by (part, order keys..., seq); `columns` are the data
    columns the keys' `index` refer to. Stable: equal rows keep their input order."""
    n = len(columns[0]) if columns else (len(part) if part is not None else 0)
    arrays: list[pa.Array] = []
    keys: list[tuple[str, str]] = []
    if part is not None:
        arrays.append(pa.array(part, type=pa.int64()))
        keys.append((f"c{len(arrays) - 1}", "ascending"))
    for k in order:
        col = _plain(columns[k.index])
        desc = k.descending
        nulls_first = k.nulls_first
        if col.null_count:
            isnull = pc.is_null(col).to_numpy(zero_copy_only=False)
            ind = np.where(isnull, 0, 1) if nulls_first else np.where(isnull, 1, 0)
            arrays.append(pa.array(ind.astype(np.int8)))
            keys.append((f"c{len(arrays) - 1}", "ascending"))
        if pa.types.is_null(col.type):
            continue
        arrays.append(col)
        keys.append((f"c{len(arrays) - 1}", "descending" if desc else "ascending"))
    if seq is not None:
        arrays.append(pa.array(seq, type=pa.int64()))
        keys.append((f"c{len(arrays) - 1}", "ascending"))
    if not arrays or n == 0:
        return np.arange(n, dtype=np.int64)
    table = pa.table(arrays, names=[f"c{i}" for i in range(len(arrays))])
    idx = pc.sort_indices(table, sort_keys=keys)
    return idx.to_numpy(zero_copy_only=False).astype(np.int64)


def _same_adjacent(col: pa.Array) -> np.ndarray:
    """For a sorted column: row i equals row i-1 (NULL equals NULL, NaN equals NaN, as
    Java's Double.compare has it); row 0 is False."""
    n = len(col)
    out = np.zeros(n, dtype=bool)
    if n < 2:
        return out
    a, b = col.slice(1), col.slice(0, n - 1)
    if pa.types.is_null(col.type):
        out[1:] = True
        return out
    try:
        eq = pc.fill_null(pc.equal(a, b), False)
        both = pc.and_(pc.is_null(a), pc.is_null(b))
        if pa.types.is_floating(col.type):
            both = pc.or_(both, pc.fill_null(pc.and_(pc.is_nan(a), pc.is_nan(b)), False))
        out[1:] = pc.or_(eq, both).to_numpy(zero_copy_only=False).astype(bool)
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid):
        la, lb = a.to_pylist(), b.to_pylist()
        out[1:] = np.array([x == y for x, y in zip(la, lb, strict=True)], dtype=bool)
    return out


def rank_numbers(
    columns: list[pa.Array],
    order: Sequence[SortKey],
    rank_type: str,
    part: np.ndarray | None = None,
    seq: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(sorted row indices, rank of each row in that sorted order), per partition.

    ROW_NUMBER counts rows; RANK gives ties the rank of their first row (gaps after);
    DENSE_RANK numbers distinct order keys."""
    idx = sort_order(columns, order, part, seq)
    n = len(idx)
    if n == 0:
        return idx, np.zeros(0, dtype=np.int64)
    pos = np.arange(n, dtype=np.int64)
    if part is not None:
        ps = part[idx]
        new_part = np.ones(n, dtype=bool)
        new_part[1:] = ps[1:] != ps[:-1]
    else:
        new_part = np.zeros(n, dtype=bool)
        new_part[0] = True
    part_start = np.maximum.accumulate(np.where(new_part, pos, 0))
    if rank_type == "ROW_NUMBER":
        return idx, pos - part_start + 1
    take = pa.array(idx, type=pa.int64())
    same = np.ones(n, dtype=bool)
    for k in order:
        same &= _same_adjacent(_plain(columns[k.index]).take(take))
    new_key = new_part | ~same
    if rank_type == "RANK":
        key_start = np.maximum.accumulate(np.where(new_key, pos, 0))
        return idx, key_start - part_start + 1
    dense = np.cumsum(new_key).astype(np.int64)
    out: np.ndarray = dense - dense[part_start] + 1
    return idx, out


def take_rows(batch: pa.RecordBatch | pa.Table, rows: np.ndarray) -> list[pa.Array]:
    """The data columns of `batch` at `rows` (as plain arrays)."""
    take = pa.array(rows, type=pa.int64())
    return [_plain(c).take(take) for c in batch.columns]


def grow(arr: np.ndarray, n: int, fill: int | bool) -> np.ndarray:
    """`arr` with room for `n` slots (doubling; new slots hold `fill`)."""
    if len(arr) >= n:
        return arr
    out = np.full(max(n, 2 * len(arr), 16), fill, dtype=arr.dtype)
    out[: len(arr)] = arr
    return out


def put_kept_rows(
    store: pa.Table | None, row_of: np.ndarray, has_row: np.ndarray, slots: np.ndarray, rows: pa.Table
) -> pa.Table:
    """The row store with `rows` appended as the kept rows of `slots` (`row_of[slot]` is the
    row's index in the store); compacted to the live rows (`has_row`) once the store holds
    more than twice as many. Shared by the operators that keep one row per key
    (Deduplicate, ChangelogNormalize)."""
    base = 0 if store is None else store.num_rows
    store = rows if store is None else pa.concat_tables([store, rows])
    row_of[slots] = np.arange(base, base + len(slots), dtype=np.int64)
    live = np.flatnonzero(has_row)
    if store.num_rows > 2 * len(live) + 1024:
        keep = row_of[live]
        store = store.take(pa.array(keep, pa.int64())).combine_chunks()
        row_of[live] = np.arange(len(live), dtype=np.int64)
    return store
