"""How a MAP value is laid out in Arrow, and the conversions at the edges.

Flink's MAP may hold a NULL key (`MAP[CAST(NULL AS STRING), 1]` is `{NULL=1}`;
MAP_FROM_ARRAYS and MAP[k, v] over a NULL column make one too). Arrow's `map` type cannot:
its keys child must have no nulls, and pyarrow aborts the process (a C++ check) on any
array that breaks this. So streamsql does not use Arrow's `map` type for MAP values.

**The layout.** A MAP<K, V> column is `list<struct<key: K, value: V>>`, both struct fields
nullable: the entries of each map in their insertion order (Flink prints a map in the
order of its LinkedHashMap, which keeps that order), offsets per row, and the list's own
validity for a NULL map. It is exactly the physical layout of Arrow's `map` (a list of
key/value structs), with a nullable key, so:

- list kernels (`list_flatten`, `list_parent_indices`, offsets, take/filter/concat,
  if_else/coalesce) work on MAP columns unchanged;
- `arr.values.field(0)` / `.field(1)` are the keys / values (what MapArray.keys/.items
  were), unsliced as with MapArray;
- state files (Arrow IPC) and the exchanges between workers carry it as any other list;
- a row value from `to_pylist()` is a list of `{"key": k, "value": v}` dicts, and
  `pa.array` accepts either that or a list of `(k, v)` tuples back.

Why not an out-of-band NULL-key side field next to an Arrow `map`: it would still change
every MAP consumer (the column would be a struct), and it would lose the NULL key's place
among the entries, which Flink's printed order shows (`{x=100, NULL=1}`). Why not an Arrow
extension type: many compute kernels (if_else, coalesce, case_when) refuse extension
arrays, so every generic expression path would have to unwrap them.

The DataType says MAP; the Arrow type alone does not tell a MAP from an ARRAY<ROW<key,
value>>, and nothing in the runtime needs it to: every MAP consumer has the DataType.

**The edges.** Where a MAP leaves streamsql for a system with a real map type (Parquet,
Spark, a user's `TableResult.to_arrow()`), `to_external` rebuilds an Arrow `map` and
refuses a NULL key with a clear error (those systems cannot hold one either); where an
Arrow `map` comes in (Parquet, DuckDB, Spark results, user Arrow/pandas data),
`from_arrow_map` casts it to the layout.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from runtime.errors import DataError

KEY = "key"
VALUE = "value"


def map_arrow_type(key: pa.DataType, value: pa.DataType) -> pa.ListType:
    """The Arrow type of a MAP<key, value> column (see the module docstring)."""
    return pa.list_(pa.struct([pa.field(KEY, key), pa.field(VALUE, value)]))


def key_type(t: pa.DataType) -> pa.DataType:
    """The key type of a MAP column's Arrow type (layout or Arrow map)."""
    return t.key_type if pa.types.is_map(t) else t.value_type.field(0).type


def value_type(t: pa.DataType) -> pa.DataType:
    """The value type of a MAP column's Arrow type (layout or Arrow map)."""
    return t.item_type if pa.types.is_map(t) else t.value_type.field(1).type


def without_arrow_maps(t: pa.DataType) -> pa.DataType:
    """`t` with every Arrow `map`, at any depth, replaced by the MAP layout: what a state
    file written before the layout (streamsql kept MAP values as Arrow maps then) is read
    as, so a savepoint taken by an older streamsql restores into today's operators."""
    if pa.types.is_map(t):
        return map_arrow_type(without_arrow_maps(t.key_type), without_arrow_maps(t.item_type))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        item = t.value_field.with_type(without_arrow_maps(t.value_type))
        return pa.list_(item) if pa.types.is_list(t) else pa.large_list(item)
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(without_arrow_maps(f.type)) for f in t])
    return t


def map_array(
    offsets: pa.Array | np.ndarray,
    keys: pa.Array,
    values: pa.Array,
    type: pa.DataType,  # noqa: A002 - pyarrow's parameter name
    mask: pa.Array | None = None,
) -> pa.Array:
    """A MAP column from its entries (keys may be NULL) and int32 offsets per row."""
    kt, vt = key_type(type), value_type(type)
    keys = keys if keys.type == kt else keys.cast(kt)
    values = values if values.type == vt else values.cast(vt)
    entries = pa.StructArray.from_arrays([keys, values], fields=list(type.value_type))
    offs = offsets if isinstance(offsets, pa.Array) else pa.array(np.asarray(offsets, dtype=np.int32))
    return pa.ListArray.from_arrays(offs, entries, type=type, mask=mask)


def map_keys(arr: pa.Array) -> pa.Array:
    """All keys of a MAP column's entries (unsliced, like MapArray.keys)."""
    return arr.values.field(0)


def map_values(arr: pa.Array) -> pa.Array:
    """All values of a MAP column's entries (unsliced, like MapArray.items)."""
    return arr.values.field(1)


def from_arrow_map(arr: pa.Array | pa.ChunkedArray, type: pa.DataType) -> pa.Array:  # noqa: A002
    """An Arrow `map` column (from Parquet, DuckDB, Spark, user data) in the MAP layout."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks else pa.array([], type=arr.type)
    if arr.type == type:
        return arr
    if pa.types.is_null(arr.type):
        return pa.nulls(len(arr), type)
    return arr.cast(type)


def pairs(value: Any) -> list[tuple[Any, Any]]:
    """A MAP row value in any Python form (layout dicts, (k, v) tuples, a dict) as pairs."""
    if isinstance(value, dict):
        return list(value.items())
    return [(e[KEY], e[VALUE]) if isinstance(e, dict) else (e[0], e[1]) for e in value]


def pairs_form(value: Any, dtype: Any) -> Any:
    """A row value of `dtype` (from `to_pylist()`) with every MAP, at any depth, as a list of
    (key, value) tuples (the form Arrow's map type gives), for row-wise consumers written for
    pairs (JSON/Avro writers, Python UDF arguments, collect())."""
    if value is None:
        return None
    name = dtype.name
    if name == "MAP":
        kt, vt = dtype.children
        return [(pairs_form(k, kt), pairs_form(v, vt)) for k, v in pairs(value)]
    if name in ("ARRAY", "MULTISET"):
        return [pairs_form(v, dtype.children[0]) for v in value]
    if name in ("ROW", "STRUCTURED") and isinstance(value, dict):
        return {fn: pairs_form(value.get(fn), ft) for fn, ft in zip(dtype.field_names, dtype.children, strict=True)}
    return value


def has_map(dtype: Any) -> bool:
    """Whether a type holds a MAP at any depth."""
    return dtype.name == "MAP" or any(has_map(c) for c in dtype.children)


def to_external(arr: pa.Array | pa.ChunkedArray, dtype: Any, where: str) -> pa.Array:
    """A column of `dtype` with every MAP, at any depth, as an Arrow `map` (for Parquet,
    Spark, `TableResult.to_arrow()`); a NULL key fails naming `where`."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks else pa.array([], type=arr.type)
    if not has_map(dtype) or pa.types.is_null(arr.type):
        return arr
    name = dtype.name
    mask = arr.is_null() if arr.null_count else None
    if name in ("MAP", "ARRAY", "MULTISET"):
        raw = arr.offsets.to_numpy(zero_copy_only=False)
        lo, hi = (int(raw[0]), int(raw[-1])) if len(raw) else (0, 0)
        offsets = pa.array((raw - lo).astype(np.int32))
        if name != "MAP":
            inner = to_external(arr.values.slice(lo, hi - lo), dtype.children[0], where)
            return pa.ListArray.from_arrays(offsets, inner, mask=mask)
        keys = to_external(arr.values.field(0).slice(lo, hi - lo), dtype.children[0], where)
        if keys.null_count:
            raise DataError(f"{where}: a MAP with a NULL key cannot be written there (its map type has no NULL keys)")
        values = to_external(arr.values.field(1).slice(lo, hi - lo), dtype.children[1], where)
        return pa.MapArray.from_arrays(offsets, keys, values, type=pa.map_(keys.type, values.type), mask=mask)
    if name in ("ROW", "STRUCTURED"):
        children = [to_external(c, t, where) for c, t in zip(arr.flatten(), dtype.children, strict=True)]
        return pa.StructArray.from_arrays(children, names=list(dtype.field_names), mask=mask)
    return arr


def external_type(dtype: Any) -> pa.DataType:
    """The Arrow type `to_external` gives a column of `dtype`."""
    return to_external(pa.array([], type=dtype.to_arrow()), dtype, "").type


def as_arrow_map(arr: pa.Array, where: str) -> pa.Array:
    """A MAP layout column as an Arrow `map` when only Arrow types are at hand (its key and
    value types kept); a NULL key fails naming `where`."""
    if pa.types.is_map(arr.type) or not pa.types.is_list(arr.type):
        return arr
    raw = arr.offsets.to_numpy(zero_copy_only=False)
    lo, hi = (int(raw[0]), int(raw[-1])) if len(raw) else (0, 0)
    keys = arr.values.field(0).slice(lo, hi - lo)
    if keys.null_count:
        raise DataError(f"{where}: a MAP with a NULL key cannot be written there (its map type has no NULL keys)")
    values = arr.values.field(1).slice(lo, hi - lo)
    mask = arr.is_null() if arr.null_count else None
    offsets = pa.array((raw - lo).astype(np.int32))
    return pa.MapArray.from_arrays(offsets, keys, values, type=pa.map_(keys.type, values.type), mask=mask)


def python_column(values: list[Any], dtype: Any) -> list[Any]:
    """Python values of `dtype` (a function's results) ready for `pa.array(..., type)`: MAPs
    given as dicts become (key, value) pairs, the form the MAP layout takes."""
    return [pairs_form(v, dtype) for v in values] if has_map(dtype) else values
