"""Vectorized building blocks for the ARRAY_* / MAP_* kernels.

A list column is handled as its flattened values plus the row each value belongs to
(`flatten`); a kernel selects or reorders flat positions with numpy and `rebuild` turns
the result back into a list column. Equality of elements (for DISTINCT, CONTAINS, EXCEPT,
...) goes through `codes`: one integer per value from a dictionary encoding, NULL as -1,
so "is this element in that array" becomes integer set membership over (row, code) keys.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.functions._common import null_mask, to_array
from runtime.functions.registry import ArgValue
from runtime.types import DataType

_INT_RANK = {"TINYINT": 0, "SMALLINT": 1, "INT": 2, "BIGINT": 3}


def list_arg(v: ArgValue, n: int) -> pa.Array:
    """A list (or map) argument as an array of n rows."""
    return to_array(v, n)


def flatten(arr: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """(flattened element values, row index of each) of a list array; NULL lists have none.
    A MAP column is a list of {key, value} structs (runtime/map_values.py), so its elements
    are its entries."""
    if pa.types.is_map(arr.type):  # an Arrow map from outside: the same entries
        arr = arr.cast(pa.list_(arr.type.value_type))
    values = pc.list_flatten(arr)
    rows = pc.list_parent_indices(arr).to_numpy(zero_copy_only=False).astype(np.int64)
    return values, rows


def rebuild(n: int, rows: np.ndarray, values: pa.Array, null_rows: np.ndarray, list_type: pa.DataType) -> pa.Array:
    """A list column of n rows whose row r holds the `values` at positions where `rows == r`
    (`rows` must be non-decreasing); rows in `null_rows` are NULL (and hold no values)."""
    if len(rows) and null_rows.any():
        keep = np.flatnonzero(~null_rows[rows])
        rows, values = rows[keep], values.take(pa.array(keep))
    counts = np.bincount(rows, minlength=n) if len(rows) else np.zeros(n, dtype=np.int64)
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    elem = list_type.value_type
    if values.type != elem:
        values = values.cast(elem)
    mask = pa.array(null_rows) if null_rows.any() else None
    return pa.ListArray.from_arrays(pa.array(offsets), values, type=list_type, mask=mask)


def _normalize_floats(values: pa.Array) -> pa.Array:
    if pa.types.is_floating(values.type):
        # -0.0 + 0.0 == 0.0: one code for both zeros, as Java's Double.equals of boxed
        # values after Flink's normalization compares them.
        return pc.add(values, pa.scalar(0.0, values.type))
    return values


def codes(*arrays: pa.Array) -> list[np.ndarray]:
    """Equality codes for the values of several arrays of one type, encoded together so
    equal values get equal codes across them; NULL is -1."""
    lens = [len(a) for a in arrays]
    both = pa.concat_arrays([_normalize_floats(a) for a in arrays]) if arrays else pa.array([])
    if pa.types.is_nested(both.type):
        # dictionary encoding does not take nested types: encode their printed form
        both = pa.array([None if v is None else repr(v) for v in both.to_pylist()], pa.string())
    enc = pc.dictionary_encode(both)
    idx = pc.fill_null(enc.indices, -1).to_numpy(zero_copy_only=False).astype(np.int64)
    out = []
    start = 0
    for k in lens:
        out.append(idx[start : start + k])
        start += k
    return out


def row_keys(rows: np.ndarray, code: np.ndarray) -> np.ndarray:
    """One int64 key per (row, code) pair."""
    return rows * (np.int64(1) << 32) + (code + 1)


def first_distinct(rows: np.ndarray, code: np.ndarray) -> np.ndarray:
    """Flat positions of the first occurrence of each (row, value), in position order."""
    _, first = np.unique(row_keys(rows, code), return_index=True)
    return np.sort(first)


def implicit_fits(src: DataType, dst: DataType) -> bool:
    """Whether a value of `src` may be used where `dst` is expected without an explicit
    CAST (Flink's LogicalTypeCasts implicit rules, for function arguments)."""
    if src.name == "NULL" or src.name == dst.name:
        return True
    if src.name in _INT_RANK and dst.name in _INT_RANK:
        return _INT_RANK[src.name] <= _INT_RANK[dst.name]
    if src.name in _INT_RANK and dst.name in ("DECIMAL", "FLOAT", "DOUBLE"):
        return True
    if src.name in ("DECIMAL", "FLOAT") and dst.name == "DOUBLE":
        return True
    if src.name == "DECIMAL" and dst.name == "FLOAT":
        return True
    if src.name == "CHAR" and dst.name == "VARCHAR":
        return True
    if src.name == "BINARY" and dst.name == "VARBINARY":
        return True
    if src.name == "DATE" and dst.name in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        return True
    if {src.name, dst.name} == {"TIMESTAMP", "TIMESTAMP_LTZ"}:
        return True
    return False


def mask_of(arr: pa.Array) -> np.ndarray:
    return null_mask(arr)
