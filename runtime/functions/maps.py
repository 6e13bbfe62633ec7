"""Flink's MAP_* collection functions: MAP_KEYS, MAP_VALUES, MAP_ENTRIES, MAP_FROM_ARRAYS,
MAP_UNION.

MAP_UNION lists the last map's entries first, then the earlier maps' entries whose key it
does not have (what Flink 2.3 prints); a NULL map makes the result NULL. MAP_FROM_ARRAYS
fails the job when the two arrays of a row differ in length, as Flink does.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from runtime.errors import EvaluationError
from runtime.functions._common import common_type, null_mask, to_array
from runtime.functions._lists import codes, first_distinct, flatten
from runtime.functions.registry import ArgValue, EvalContext, FunctionTypeError, document, scalar
from runtime.map_values import key_type, map_array, value_type
from runtime.types import DataType


def _invalid(name: str, types: list[DataType]) -> FunctionTypeError:
    shown = ", ".join(str(t) for t in types)
    return FunctionTypeError(f"Invalid input arguments. Invalid function call:\n{name.upper()}({shown})")


def _map_type(name: str, types: list[DataType]) -> DataType:
    if len(types) != 1 or types[0].name != "MAP":
        raise _invalid(name, types)
    return types[0]


def _offsets(rows: np.ndarray, n: int) -> pa.Array:
    counts = np.bincount(rows, minlength=n) if len(rows) else np.zeros(n, dtype=np.int64)
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    return pa.array(offsets)


def _build_map(
    n: int, rows: np.ndarray, keys: pa.Array, items: pa.Array, nulls: np.ndarray, t: pa.DataType
) -> pa.Array:
    mask = pa.array(nulls) if nulls.any() else None
    # a NULL key is a key like any other ({NULL=1}), runtime/map_values.py
    return map_array(_offsets(rows, n), keys, items, t, mask=mask)


def _infer_keys(types: list[DataType]) -> DataType:
    t = _map_type("map_keys", types)
    return DataType("ARRAY", t.nullable, children=(t.children[0],))


@scalar("map_keys", _infer_keys)
def _map_keys(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    return _entries_part(args, rt, ctx, "key")


def _infer_values(types: list[DataType]) -> DataType:
    t = _map_type("map_values", types)
    return DataType("ARRAY", t.nullable, children=(t.children[1],))


@scalar("map_values", _infer_values)
def _map_values(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    return _entries_part(args, rt, ctx, "value")


def _entries_part(args: list[ArgValue], rt: DataType, ctx: EvalContext, field: str | None) -> pa.Array:
    n = ctx.num_rows
    m = to_array(args[0], n)
    entries, rows = flatten(m)
    if field is None:
        values = entries.cast(rt.children[0].to_arrow())
    else:
        values = entries.field(field)
    mask = pa.array(null_mask(m)) if m.null_count else None
    values = values.cast(rt.children[0].to_arrow())
    return pa.ListArray.from_arrays(_offsets(rows, n), values, type=rt.to_arrow(), mask=mask)


def _infer_entries(types: list[DataType]) -> DataType:
    t = _map_type("map_entries", types)
    k, v = t.children
    entry = DataType("ROW", False, children=(k, v), field_names=("key", "value"))
    return DataType("ARRAY", t.nullable, children=(entry,))


@scalar("map_entries", _infer_entries)
def _map_entries(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    return _entries_part(args, rt, ctx, None)


def _infer_from_arrays(types: list[DataType]) -> DataType:
    if len(types) != 2 or any(t.name != "ARRAY" for t in types):
        raise _invalid("map_from_arrays", types)
    return DataType("MAP", any(t.nullable for t in types), children=(types[0].children[0], types[1].children[0]))


@scalar("map_from_arrays", _infer_from_arrays)
def _map_from_arrays(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    n = ctx.num_rows
    ka, va = to_array(args[0], n), to_array(args[1], n)
    keys, krows = flatten(ka)
    items, vrows = flatten(va)
    nulls = null_mask(ka) | null_mask(va)
    kc = np.bincount(krows, minlength=n) if len(krows) else np.zeros(n, dtype=np.int64)
    vc = np.bincount(vrows, minlength=n) if len(vrows) else np.zeros(n, dtype=np.int64)
    if np.any((kc != vc) & ~nulls):
        raise EvaluationError(
            "Invalid function MAP_FROM_ARRAYS call: the key array and the value array have different lengths"
        )
    # rows where only one side is NULL contribute no entries
    keep = np.flatnonzero(~nulls[krows]) if len(krows) else np.zeros(0, dtype=np.int64)
    keepv = np.flatnonzero(~nulls[vrows]) if len(vrows) else np.zeros(0, dtype=np.int64)
    keys, krows = keys.take(pa.array(keep)), krows[keep]
    items = items.take(pa.array(keepv))
    # a repeated key keeps its last value, at its first position
    (kcode,) = codes(keys)
    first = first_distinct(krows, kcode)
    last = _last_per_key(krows, kcode)
    return _build_map(n, krows[first], keys.take(pa.array(first)), items.take(pa.array(last)), nulls, rt.to_arrow())


def _last_per_key(rows: np.ndarray, code: np.ndarray) -> np.ndarray:
    """For each (row, key) in first-occurrence order, the position of its last occurrence."""
    keys = rows * (np.int64(1) << 32) + (code + 1)
    uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    last = np.zeros(len(uniq), dtype=np.int64)
    last[inverse] = np.arange(len(keys))  # later positions overwrite earlier ones
    return last[np.argsort(first)]


def _infer_union(types: list[DataType]) -> DataType:
    if not types or any(t.name not in ("MAP", "NULL") for t in types):
        raise _invalid("map_union", types)
    known = [t for t in types if t.name == "MAP"]
    if not known:
        raise _invalid("map_union", types)
    k = common_type([t.children[0] for t in known])
    v = common_type([t.children[1] for t in known])
    if k is None or v is None:
        raise _invalid("map_union", types)
    return DataType("MAP", any(t.nullable for t in types), children=(k, v))


@scalar("map_union", _infer_union)
def _map_union(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    n = ctx.num_rows
    t = rt.to_arrow()
    nulls = np.zeros(n, dtype=bool)
    keys_l, items_l, rows_l = [], [], []
    for a, at in reversed(list(zip(args, types, strict=True))):
        if at.name == "NULL":
            return pa.nulls(n, t)
        m = to_array(a, n)
        nulls |= null_mask(m)
        entries, rows = flatten(m)
        keys_l.append(entries.field(0).cast(key_type(t)))
        items_l.append(entries.field(1).cast(value_type(t)))
        rows_l.append(rows)
    rows = np.concatenate(rows_l)
    order = np.argsort(rows, kind="stable")
    rows = rows[order]
    keys = pa.concat_arrays(keys_l).take(pa.array(order))
    items = pa.concat_arrays(items_l).take(pa.array(order))
    (kcode,) = codes(keys)
    keep = first_distinct(rows, kcode)
    keep = keep[~nulls[rows[keep]]]
    return _build_map(n, rows[keep], keys.take(pa.array(keep)), items.take(pa.array(keep)), nulls, t)


document(
    {
        "map_keys": ("MAP_KEYS(map)", "MAP_KEYS(MAP['a', 1, 'b', 2])"),
        "map_values": ("MAP_VALUES(map)", "MAP_VALUES(MAP['a', 1, 'b', 2])"),
        "map_entries": ("MAP_ENTRIES(map)", "MAP_ENTRIES(MAP['a', 1])"),
        "map_from_arrays": ("MAP_FROM_ARRAYS(keys, values)", "MAP_FROM_ARRAYS(ARRAY['a', 'b'], ARRAY[1, 2])"),
        "map_union": ("MAP_UNION(map, ...)", "MAP_UNION(MAP['a', 1, 'b', 2], MAP['b', 3])"),
    }
)
