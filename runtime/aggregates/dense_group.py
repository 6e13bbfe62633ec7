"""Hash aggregation without a hash table, for small-range integer group keys.

Why: window aggregation in BATCH mode groups by (slice start, grouping keys) over and over
(each batch's partial rows, then their merges). When every group key is an integer column
whose values (divided by a known step, e.g. the slice length for slice starts) span a
small range, a group's *cell* `((k0 - lo0) / step0) * width1 + (k1 - lo1) ...` is a direct
address: the groups are found with one scatter of the lowest row index per cell
(`np.minimum.at`), and sums / minima / maxima are scatter-reductions over a group id per
row. No hashing, no sort; where a batch's groups are about as many as its rows (many
windows of few rows) this is several times cheaper than Arrow's hash aggregation.

`group_by` gives what `table.group_by(keys).aggregate(aggs)` gives for the aggregates it
knows (integer SUM, MIN, MAX; NULL where a group has no non-NULL value), with the groups in
order of first appearance, as Arrow orders them; it returns None (the caller uses Arrow)
when a key is not a NULL-free integer-like column, an aggregate is another kind or type,
or the cells would outnumber the rows by too much.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypeAlias

import numpy as np
import pyarrow as pa

# The cells may outnumber the rows this many times (plus a constant) before Arrow is cheaper.
_CELLS_PER_ROW = 4
_MIN_CELLS = 1 << 16


Column: TypeAlias = pa.Array | pa.ChunkedArray | np.ndarray


def _int_values(col: Column) -> np.ndarray | None:
    """A NULL-free integer / timestamp column as int64 (None: another type or NULLs)."""
    if isinstance(col, np.ndarray):
        return col.astype(np.int64, copy=False) if col.dtype.kind in "iu" and col.dtype != np.uint64 else None
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    t = col.type
    if col.null_count or not (pa.types.is_integer(t) or pa.types.is_timestamp(t)) or pa.types.is_uint64(t):
        return None
    if pa.types.is_timestamp(t):
        col = col.view(pa.int64())
    return col.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)


def _reduce(x: pa.Array | np.ndarray, how: str, group: np.ndarray, groups: int) -> pa.Array | None:
    """One aggregate per group (None: not an integer SUM / MIN / MAX)."""
    if isinstance(x, np.ndarray):
        x = pa.array(x)
    t = x.type
    if not pa.types.is_integer(t) or how not in ("sum", "min", "max"):
        return None
    out_type = (pa.uint64() if pa.types.is_unsigned_integer(t) else pa.int64()) if how == "sum" else t
    vals = x.to_numpy(zero_copy_only=False) if not x.null_count else x.fill_null(0).to_numpy(zero_copy_only=False)
    vals = vals.astype(out_type.to_pandas_dtype(), copy=False)
    g = group
    if x.null_count:
        valid = x.is_valid().to_numpy(zero_copy_only=False)
        g, vals = group[valid], vals[valid]
        present = np.bincount(g, minlength=groups) > 0
    else:
        present = None
    if how == "sum":
        acc = np.zeros(groups, dtype=vals.dtype)
        np.add.at(acc, g, vals)
    elif how == "min":
        acc = np.full(groups, np.iinfo(vals.dtype).max, dtype=vals.dtype)
        np.minimum.at(acc, g, vals)
    else:
        acc = np.full(groups, np.iinfo(vals.dtype).min, dtype=vals.dtype)
        np.maximum.at(acc, g, vals)
    mask = None if present is None or present.all() else ~present
    return pa.array(acc, type=out_type, mask=mask)


def group_by(
    table: pa.Table | Mapping[str, Column],
    keys: Sequence[str],
    aggs: Sequence[tuple[str, str]],
    steps: Sequence[int] | None = None,
) -> pa.Table | None:
    """`table.group_by(keys).aggregate(aggs)` by direct addressing (module docstring), or None.
    `table` may also be a mapping of names to columns (a numpy integer array is a NULL-free
    integer column: no round trip through Arrow for keys computed in numpy).
    `steps[i]`: key i's values are multiples of it apart (its cells are value // step)."""
    column: Callable[[str], Column] = table.column if isinstance(table, pa.Table) else table.__getitem__
    n = table.num_rows if isinstance(table, pa.Table) else len(column(keys[0])) if keys else 0
    if n == 0 or not keys:
        return None
    limit = _CELLS_PER_ROW * n + _MIN_CELLS
    cell: np.ndarray | None = None
    cells = 1
    for i, name in enumerate(keys):
        v = _int_values(column(name))
        if v is None:
            return None
        step = 1 if steps is None else int(steps[i])
        lo = int(v.min())
        off = (v - lo) // step if step != 1 else v - lo
        width = int(off.max()) + 1
        cells *= width
        if cells > limit:
            return None
        cell = off if cell is None else cell * width + off
    assert cell is not None
    rows = np.arange(n, dtype=np.int64)
    lowest = np.full(cells, n, dtype=np.int64)
    np.minimum.at(lowest, cell, rows)
    reps = np.flatnonzero(lowest[cell] == rows)  # one row per group, in order of first appearance
    gid = np.empty(cells, dtype=np.int64)
    gid[cell[reps]] = np.arange(len(reps), dtype=np.int64)
    group = gid[cell]
    out: dict[str, pa.Array] = {}
    for col, how in aggs:
        x = column(col)
        reduced = _reduce(x.combine_chunks() if isinstance(x, pa.ChunkedArray) else x, how, group, len(reps))
        if reduced is None:
            return None
        out[f"{col}_{how}"] = reduced
    take = pa.array(reps, type=pa.int64())
    for name in keys:
        key = column(name)
        out[name] = pa.array(key[reps]) if isinstance(key, np.ndarray) else key.take(take)
    return pa.table(out)
