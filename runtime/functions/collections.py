"""Collection functions: ITEM (arr[i], map[k]), CARDINALITY, ELEMENT, and the ARRAY[...] /
MAP[...] value constructors.

Array indexes are 1-based; an index out of range or NULL gives NULL (not an error), as in
Flink. Lookups are vectorized over the flattened child arrays: each row's element is
located by its list offset, so there is no per-row Python.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.errors import EvaluationError
from runtime.functions._common import calcite_name, common_type, null_mask, to_array, to_numpy
from runtime.functions.comparison import coerce
from runtime.functions.registry import ArgValue, EvalContext, FunctionTypeError, document, scalar
from runtime.functions.variant import infer_variant_item, variant_item
from runtime.map_values import map_array, map_keys, map_values
from runtime.types import INT, DataType


def _list_parts(arr: pa.Array) -> tuple[pa.Array, np.ndarray, np.ndarray]:
    """(flattened values, start offset per row into them, length per row) of a list."""
    raw = arr.offsets.to_numpy(zero_copy_only=False).astype(np.int64)
    values = arr.values
    return values, raw[:-1], np.diff(raw)


# ---------------------------------------------------------------------- ITEM
def _infer_item(types: list[DataType]) -> DataType:
    if len(types) != 2:
        raise FunctionTypeError("ITEM takes a collection and an index")
    c, k = types
    if c.name == "VARIANT":
        return infer_variant_item(types)
    if c.name == "ARRAY":
        if not (k.is_integer or k.name == "NULL"):
            raise FunctionTypeError(
                f"Cannot apply 'ITEM' to arguments of type 'ITEM(<{calcite_name(c)}>, <{calcite_name(k)}>)'"
            )
        return c.children[0].with_nullable(True)
    if c.name == "MAP":
        return c.children[1].with_nullable(True)
    if c.name == "ROW" and k.is_string:
        raise FunctionTypeError("ROW field access by name must be resolved by the binder")
    raise FunctionTypeError(
        f"Cannot apply 'ITEM' to arguments of type 'ITEM(<{calcite_name(c)}>, <{calcite_name(k)}>)'"
    )


@scalar("item", _infer_item)
def _item(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    n = ctx.num_rows
    target = rt.to_arrow()
    if types[0].name == "NULL" or types[1].name == "NULL":
        return pa.nulls(n, target)
    if types[0].name == "VARIANT":
        return variant_item(args, types, ctx)
    coll = to_array(args[0], n)
    if types[0].name == "ARRAY":
        return _array_item(coll, to_array(args[1], n), target)
    return _map_item(coll, args[1], types[0], types[1], target, ctx)


def _array_item(coll: pa.Array, idx: pa.Array, target: pa.DataType) -> pa.Array:
    values, starts, lengths = _list_parts(coll)
    i = to_numpy(pc.cast(idx, pa.int64()), 0).astype(np.int64)
    ok = (i >= 1) & (i <= lengths) & ~null_mask(coll) & ~null_mask(idx)
    pos = np.where(ok, starts + i - 1, -1)
    return values.take(pa.array(pos, mask=~ok))


def _map_item(
    coll: pa.Array, key: ArgValue, mt: DataType, kt: DataType, target: pa.DataType, ctx: EvalContext
) -> pa.Array:
    n = len(coll)
    raw = coll.offsets.to_numpy(zero_copy_only=False).astype(np.int64)
    keys, items = map_keys(coll), map_values(coll)
    key_type = mt.children[0]
    k = coerce(key, kt, key_type, ctx) if kt.name != key_type.name else key
    if len(keys) == 0:
        return pa.nulls(n, target)
    # row of each entry, then compare each entry's key with its row's lookup key
    lengths = np.diff(raw)
    row_of_entry = np.repeat(np.arange(n), lengths)
    entry_index = np.arange(raw[0], raw[-1]) if n else np.arange(0)
    if isinstance(k, pa.Scalar):
        eq = pc.equal(keys.slice(raw[0], raw[-1] - raw[0]), k)
    else:
        want = to_array(k, n).take(pa.array(row_of_entry))
        eq = pc.equal(keys.slice(raw[0], raw[-1] - raw[0]), want)
    hit = pc.fill_null(eq, False).to_numpy(zero_copy_only=False)
    pos = np.full(n, -1, dtype=np.int64)
    # last matching entry wins (a MAP constructor keeps the last duplicate)
    pos[row_of_entry[hit]] = entry_index[hit]
    ok = (pos >= 0) & ~null_mask(coll)
    return items.take(pa.array(np.where(ok, pos, 0), mask=~ok))


# ---------------------------------------------------------------------- CARDINALITY / ELEMENT
def _infer_cardinality(types: list[DataType]) -> DataType:
    if len(types) != 1 or types[0].name not in ("ARRAY", "MAP", "MULTISET", "NULL"):
        shown = ", ".join(f"<{calcite_name(t)}>" for t in types)
        raise FunctionTypeError(
            f"Cannot apply 'CARDINALITY' to arguments of type 'CARDINALITY({shown})'. "
            "Supported form(s): 'CARDINALITY(<MULTISET>)'\n'CARDINALITY(<ARRAY>)'\n'CARDINALITY(<MAP>)'"
        )
    return INT(types[0].nullable)


@scalar("cardinality", _infer_cardinality)
def _cardinality(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    coll = to_array(args[0], ctx.num_rows)
    if types[0].name == "NULL":
        return pa.nulls(ctx.num_rows, pa.int32())
    raw = coll.offsets.to_numpy(zero_copy_only=False).astype(np.int64)
    return pa.array(np.diff(raw).astype(np.int32), pa.int32(), mask=null_mask(coll))


def _infer_element(types: list[DataType]) -> DataType:
    if len(types) != 1 or types[0].name != "ARRAY":
        raise FunctionTypeError("ELEMENT expects an ARRAY argument")
    return types[0].children[0].with_nullable(True)


@scalar("element", _infer_element)
def _element(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    coll = to_array(args[0], ctx.num_rows)
    values, starts, lengths = _list_parts(coll)
    valid = ~null_mask(coll)
    if ((lengths > 1) & valid).any():
        raise EvaluationError("Array has more than one element.")
    ok = (lengths == 1) & valid
    return values.take(pa.array(np.where(ok, starts, 0), mask=~ok))


# ---------------------------------------------------------------------- constructors
def _infer_array(types: list[DataType]) -> DataType:
    if not types:
        raise FunctionTypeError("Require at least 1 argument for ARRAY")
    t = common_type(types)
    if t is None:
        raise FunctionTypeError("Parameters must be of the same type: " + ", ".join(calcite_name(x) for x in types))
    if t.name == "NULL":
        raise FunctionTypeError("Cannot create an ARRAY of only NULL values")
    return DataType("ARRAY", False, children=(t,))


def _interleave(vals: list[pa.Array], n: int) -> pa.Array:
    """Row-major interleave of k equally long arrays: v0[0], v1[0], ..., v0[1], ..."""
    k = len(vals)
    combined = pa.concat_arrays(vals)
    order = (np.arange(k)[None, :] * n + np.arange(n)[:, None]).reshape(-1)
    return combined.take(pa.array(order))


def _as_type(v: ArgValue, t: DataType, target: DataType, ctx: EvalContext) -> pa.Array:
    n = ctx.num_rows
    if t.name == "NULL":
        return pa.nulls(n, target.to_arrow())
    out = to_array(coerce(v, t, target, ctx), n)
    if out.type != target.to_arrow():
        out = out.cast(target.to_arrow())
    return out


@scalar("array", _infer_array)
def _array(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    n = ctx.num_rows
    et = rt.children[0]
    vals = [_as_type(a, t, et, ctx) for a, t in zip(args, types, strict=True)]
    k = len(vals)
    offsets = pa.array(np.arange(0, n * k + 1, k, dtype=np.int32))
    return pa.ListArray.from_arrays(offsets, _interleave(vals, n), type=rt.to_arrow())


def _infer_map(types: list[DataType]) -> DataType:
    if not types or len(types) % 2:
        raise FunctionTypeError("MAP requires an even number of arguments (key, value pairs)")
    kt = common_type(list(types[0::2]))
    vt = common_type(list(types[1::2]))
    if kt is None or vt is None:
        raise FunctionTypeError("MAP keys (and values) must have a common type")
    return DataType("MAP", False, children=(kt, vt))


@scalar("map", _infer_map)
def _map(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    n = ctx.num_rows
    kt, vt = rt.children
    keys = [_as_type(a, t, kt, ctx) for a, t in zip(args[0::2], types[0::2], strict=True)]
    vals = [_as_type(a, t, vt, ctx) for a, t in zip(args[1::2], types[1::2], strict=True)]
    k = len(keys)
    # A repeated key keeps its first position and its last value (Java's map put), per row;
    # a NULL key is a key too (Flink's {NULL=1}; runtime/map_values.py), equal to NULL.
    keep = np.ones((n, k), dtype=bool)
    for j in range(1, k):
        for i in range(j):
            same = _same_key(keys[i], keys[j]) & keep[:, i]
            if same.any():
                vals[i] = pc.if_else(pa.array(same), vals[j], vals[i])
                keep[:, j] &= ~same
    flat_keys, flat_vals = _interleave(keys, n), _interleave(vals, n)
    if keep.all():
        offsets = pa.array(np.arange(0, n * k + 1, k, dtype=np.int32))
    else:
        mask = pa.array(keep.reshape(-1))
        flat_keys, flat_vals = flat_keys.filter(mask), flat_vals.filter(mask)
        offsets = pa.array(np.concatenate([[0], np.cumsum(keep.sum(axis=1))]).astype(np.int32))
    return map_array(offsets, flat_keys, flat_vals, rt.to_arrow())


def _same_key(a: pa.Array, b: pa.Array) -> np.ndarray:
    """Per row: the two keys are equal, or both NULL (one NULL key per map, as in Java)."""
    eq = to_numpy(pc.fill_null(pc.equal(a, b), False), False).astype(bool)
    if a.null_count and b.null_count:
        eq |= to_numpy(pc.and_(a.is_null(), b.is_null()), False).astype(bool)
    return eq


# ---------------------------------------------------------------------- ROW field access
def _infer_field(types: list[DataType]) -> DataType:
    """`dot(row, 'name')`: the binder checks the name and passes the field's type as the
    call's type; this only validates the shape."""
    if len(types) != 2 or types[0].name not in ("ROW", "STRUCTURED") or not types[1].is_string:
        raise FunctionTypeError("field access needs a ROW value and a field name")
    return types[0].children[0]


@scalar("dot", _infer_field)
def _dot(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    """`row.field`: NULL when the row is NULL (the field of a NULL row)."""
    name = args[1].as_py() if isinstance(args[1], pa.Scalar) else None
    if name is None:
        raise FunctionTypeError("the field name of a ROW access must be a literal")
    row = to_array(args[0], ctx.num_rows)
    if isinstance(row, pa.ChunkedArray):
        row = row.combine_chunks()
    # struct_field combines the struct's validity into the child's (a NULL struct gives a
    # NULL field), without copying the values.
    return pc.struct_field(row, [name])


# ---------------------------------------------------------------------- ROW constructor
def _infer_row(types: list[DataType]) -> DataType:
    """`ROW(a, b)`: fields named as Calcite names them (EXPR$0, EXPR$1, ...); never NULL."""
    if not types:
        raise FunctionTypeError("ROW needs at least one field")
    fields = [(f"EXPR${i}", t.as_time_attr(None)) for i, t in enumerate(types)]
    return DataType("ROW", False, children=tuple(t for _, t in fields), field_names=tuple(n for n, _ in fields))


@scalar("row", _infer_row)
def _row(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    cols = [to_array(a, ctx.num_rows) for a in args]
    cols = [c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c for c in cols]
    return pa.StructArray.from_arrays(cols, names=list(rt.field_names))


# docs/functions.md: signature and one example per function of this module
document(
    {
        "array": ("ARRAY[v, ...]", "ARRAY[1, 2, 3]"),
        "cardinality": ("CARDINALITY(array | map)", "CARDINALITY(ARRAY[1, 2])"),
        "dot": ("row.field", ""),
        "element": ("ELEMENT(array)", "ELEMENT(ARRAY[7])"),
        "item": ("array[index], map[key]", "ARRAY[10, 20][2]"),
        "map": ("MAP[k, v, ...]", "MAP['a', 1, 'b', 2]"),
        "row": ("ROW(v, ...), (v, ...)", "ROW(1, 'a')"),
    }
)
