"""Flink's ARRAY_* collection functions.

Semantics follow Flink 2.3 as its oracle corpus shows them: a NULL array gives NULL;
element equality treats NULL as equal to NULL (ARRAY_CONTAINS(a, NULL) is TRUE when `a`
holds a NULL, ARRAY_REMOVE(a, NULL) drops them); results that are sets (DISTINCT, UNION,
EXCEPT, INTERSECT) keep the first occurrence order; ARRAY_SORT puts NULLs first when
ascending and last when descending unless told, and NaN before every other double.
An element argument must be implicitly castable to the array's element type
(ARRAY_APPEND(ARRAY[1], 2.5) is a validation error); the result keeps the array's type.

Every kernel works on the flattened elements plus their row index (runtime.functions._lists),
never per row in Python.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.functions._common import common_type, null_mask, to_array
from runtime.functions._lists import codes, first_distinct, flatten, implicit_fits, rebuild, row_keys
from runtime.functions._text_common import grouped_apply
from runtime.functions.cast import cast_value
from runtime.functions.collections import _as_type
from runtime.functions.registry import ArgValue, EvalContext, FunctionTypeError, document, scalar
from runtime.types import BOOLEAN, INT, STRING, DataType


def _invalid(name: str, types: list[DataType]) -> FunctionTypeError:
    shown = ", ".join(str(t) for t in types)
    return FunctionTypeError(f"Invalid input arguments. Invalid function call:\n{name.upper()}({shown})")


def _arity(name: str, types: list[DataType], lo: int, hi: int) -> None:
    if not lo <= len(types) <= hi:
        raise _invalid(name, types)


def _all_null(types: list[DataType]) -> bool:
    return any(t.name == "NULL" for t in types)


def _nulls(n: int, rt: DataType) -> pa.Array:
    return pa.nulls(n, rt.to_arrow())


def _array_of(name: str, types: list[DataType], i: int) -> DataType:
    if types[i].name != "ARRAY":
        raise _invalid(name, types)
    return types[i].children[0]


# ---------------------------------------------------------------------- element + array
def _infer_add_element(name: str):  # noqa: ANN202 - an Infer
    def infer(types: list[DataType]) -> DataType:
        _arity(name, types, 2, 2)
        et = _array_of(name, types, 0)
        if not implicit_fits(types[1], et):
            raise _invalid(name, types)
        if name == "array_prepend" and types[1].name not in ("NULL", et.name):
            raise _invalid(name, types)
        elem = et.with_nullable(et.nullable or types[1].nullable)
        return DataType("ARRAY", types[0].nullable, children=(elem,))

    return infer


def _add_element(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext, front: bool) -> pa.Array:
    n = ctx.num_rows
    arr = to_array(args[0], n)
    values, rows = flatten(arr)
    et = rt.children[0]
    if et.name == "CHAR" and types[1].is_string:
        # the element takes the array's element type: 'bc' appended to ARRAY<CHAR(1)> is 'b'
        extra = cast_value(args[1], types[1], et, ctx)
    else:
        extra = _as_type(args[1], types[1], et, ctx)
    # new element at row r goes before (front) or after the row's own elements
    all_rows = np.concatenate([rows, np.arange(n, dtype=np.int64)])
    combined = pa.concat_arrays([values.cast(et.to_arrow()), extra])
    tie = np.concatenate([np.ones(len(rows)), np.zeros(n) if front else np.full(n, 2.0)])
    order = np.lexsort((np.arange(len(all_rows)), tie, all_rows))
    return rebuild(n, all_rows[order], combined.take(pa.array(order)), null_mask(arr), rt.to_arrow())


@scalar("array_append", _infer_add_element("array_append"))
def _array_append(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    if types[0].name == "NULL":
        return _nulls(ctx.num_rows, rt)
    return _add_element(args, types, rt, ctx, front=False)


@scalar("array_prepend", _infer_add_element("array_prepend"))
def _array_prepend(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    if types[0].name == "NULL":
        return _nulls(ctx.num_rows, rt)
    return _add_element(args, types, rt, ctx, front=True)


def _needle_codes(
    args: list[ArgValue], types: list[DataType], ctx: EvalContext
) -> tuple[pa.Array, pa.Array, np.ndarray, np.ndarray, np.ndarray]:
    """(array column, flat values, row of each value, value codes, needle code per row)."""
    n = ctx.num_rows
    arr = to_array(args[0], n)
    values, rows = flatten(arr)
    et = types[0].children[0]
    target = common_type([et, types[1]]) or et
    vals = values.cast(target.to_arrow()) if values.type != target.to_arrow() else values
    needle = _as_type(args[1], types[1], target, ctx)
    vcode, ncode = codes(vals, needle)
    return arr, values, rows, vcode, ncode


def _infer_contains(types: list[DataType]) -> DataType:
    _arity("array_contains", types, 2, 2)
    et = _array_of("array_contains", types, 0)
    if common_type([et, types[1]]) is None:
        raise _invalid("array_contains", types)
    return BOOLEAN(types[0].nullable)


@scalar("array_contains", _infer_contains)
def _array_contains(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    n = ctx.num_rows
    arr, _, rows, vcode, ncode = _needle_codes(args, types, ctx)
    hit = vcode == ncode[rows]
    found = np.zeros(n, dtype=bool)
    found[rows[hit]] = True
    return pa.array(found, pa.bool_(), mask=null_mask(arr))


def _infer_position(types: list[DataType]) -> DataType:
    _arity("array_position", types, 2, 2)
    et = _array_of("array_position", types, 0)
    if common_type([et, types[1]]) is None:
        raise _invalid("array_position", types)
    return INT(types[0].nullable or types[1].nullable)


@scalar("array_position", _infer_position)
def _array_position(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    n = ctx.num_rows
    arr, _, rows, vcode, ncode = _needle_codes(args, types, ctx)
    starts = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n) if len(rows) else np.zeros(n, dtype=np.int64), out=starts[1:])
    hit = np.flatnonzero(vcode == ncode[rows])
    pos = np.zeros(n, dtype=np.int32)
    # the first hit per row: assign in reverse so the earliest position wins
    hit = hit[::-1]
    pos[rows[hit]] = (hit - starts[rows[hit]] + 1).astype(np.int32)
    return pa.array(pos, pa.int32(), mask=null_mask(arr) | (ncode == -1))


def _infer_remove(types: list[DataType]) -> DataType:
    _arity("array_remove", types, 2, 2)
    et = _array_of("array_remove", types, 0)
    if common_type([et, types[1]]) is None:
        raise _invalid("array_remove", types)
    return types[0]


@scalar("array_remove", _infer_remove)
def _array_remove(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    arr, values, rows, vcode, ncode = _needle_codes(args, types, ctx)
    keep = np.flatnonzero(vcode != ncode[rows])
    return rebuild(ctx.num_rows, rows[keep], values.take(pa.array(keep)), null_mask(arr), rt.to_arrow())


# ---------------------------------------------------------------------- one array
def _infer_same(name: str, lo: int = 1, hi: int = 1):  # noqa: ANN202 - an Infer
    def infer(types: list[DataType]) -> DataType:
        _arity(name, types, lo, hi)
        _array_of(name, types, 0)
        return types[0] if lo == hi else types[0].with_nullable(any(t.nullable for t in types))

    return infer


@scalar("array_distinct", _infer_same("array_distinct"))
def _array_distinct(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    arr = to_array(args[0], ctx.num_rows)
    values, rows = flatten(arr)
    (code,) = codes(values)
    keep = first_distinct(rows, code)
    return rebuild(ctx.num_rows, rows[keep], values.take(pa.array(keep)), null_mask(arr), rt.to_arrow())


@scalar("array_reverse", _infer_same("array_reverse"))
def _array_reverse(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    arr = to_array(args[0], ctx.num_rows)
    values, rows = flatten(arr)
    order = np.lexsort((-np.arange(len(rows)), rows))
    return rebuild(ctx.num_rows, rows[order], values.take(pa.array(order)), null_mask(arr), rt.to_arrow())


def _infer_slice(types: list[DataType]) -> DataType:
    _arity("array_slice", types, 2, 3)
    _array_of("array_slice", types, 0)
    if not all(t.is_integer or t.name == "NULL" for t in types[1:]):
        raise _invalid("array_slice", types)
    return types[0].with_nullable(any(t.nullable for t in types))


@scalar("array_slice", _infer_slice)
def _array_slice(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    """Offsets are 1-based, 0 means the first element, negative ones count from the end;
    out-of-range offsets are clamped and a start after the end gives []."""
    n = ctx.num_rows
    arr = to_array(args[0], n)
    values, rows = flatten(arr)
    lengths = np.bincount(rows, minlength=n) if len(rows) else np.zeros(n, dtype=np.int64)
    start_a = to_array(args[1], n)
    start = pc.fill_null(pc.cast(start_a, pa.int64()), 0).to_numpy(zero_copy_only=False)
    nulls = null_mask(arr) | null_mask(start_a)
    if len(args) > 2:
        end_a = to_array(args[2], n)
        end = pc.fill_null(pc.cast(end_a, pa.int64()), 0).to_numpy(zero_copy_only=False)
        nulls |= null_mask(end_a)
    else:
        end = lengths.copy()
    s = np.where(start == 0, 1, np.where(start < 0, lengths + start + 1, start))
    e = np.where(end == 0, 1, np.where(end < 0, lengths + end + 1, end))
    s = np.maximum(s, 1)
    e = np.minimum(e, lengths)
    starts = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    idx_in_row = np.arange(len(rows)) - starts[rows] + 1
    keep = np.flatnonzero((idx_in_row >= s[rows]) & (idx_in_row <= e[rows]))
    return rebuild(n, rows[keep], values.take(pa.array(keep)), nulls, rt.to_arrow())


def _infer_sort(types: list[DataType]) -> DataType:
    _arity("array_sort", types, 1, 3)
    _array_of("array_sort", types, 0)
    if not all(t.name in ("BOOLEAN", "NULL") for t in types[1:]):
        raise _invalid("array_sort", types)
    return types[0].with_nullable(any(t.nullable for t in types))


@scalar("array_sort", _infer_sort)
def _array_sort(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    n = ctx.num_rows
    arr = to_array(args[0], n)

    def run(sub: list[ArgValue], params: list[Any]) -> ArgValue:
        ascending = params[0] if params else True
        nulls_first = params[1] if len(params) > 1 else ascending
        return _sort(
            to_array(sub[0], len(sub[0]) if not isinstance(sub[0], pa.Scalar) else n), ascending, nulls_first, rt
        )

    if len(args) == 1:
        return _sort(arr, True, True, rt)
    return grouped_apply([arr, *args[1:]], list(range(1, len(args))), run, n, rt.to_arrow())


def _sort(arr: pa.Array, ascending: bool, nulls_first: bool, rt: DataType) -> pa.Array:
    values, rows = flatten(arr)
    is_null = null_mask(values)
    order = "ascending" if ascending else "descending"
    cols: dict[str, Any] = {"r": rows, "nf": np.where(is_null, 0, 1) if nulls_first else np.where(is_null, 1, 0)}
    keys: list[tuple[str, str]] = [("r", "ascending"), ("nf", "ascending")]
    if pa.types.is_floating(values.type):
        # Flink orders NaN before every other double
        cols["nan"] = np.where(pc.fill_null(pc.is_nan(values), False).to_numpy(zero_copy_only=False), 0, 1)
        keys.append(("nan", order))
    cols["v"] = values
    keys.append(("v", order))
    idx = pc.sort_indices(pa.table(cols), sort_keys=keys)
    np_idx = idx.to_numpy(zero_copy_only=False)
    return rebuild(len(arr), rows[np_idx], values.take(idx), null_mask(arr), rt.to_arrow())


def _infer_minmax(name: str):  # noqa: ANN202 - an Infer
    def infer(types: list[DataType]) -> DataType:
        _arity(name, types, 1, 1)
        et = _array_of(name, types, 0)
        if et.name in ("ARRAY", "MAP", "ROW", "MULTISET"):
            raise _invalid(name, types)
        return et.with_nullable(True)

    return infer


def _minmax(args: list[ArgValue], rt: DataType, ctx: EvalContext, op: str) -> pa.Array:
    n = ctx.num_rows
    arr = to_array(args[0], n)
    values, rows = flatten(arr)
    out_t = rt.to_arrow()
    if len(rows) == 0:
        return pa.nulls(n, out_t)
    grouped = pa.table({"r": rows, "v": values}).group_by("r").aggregate([("v", op)])
    r = grouped.column("r").to_numpy()
    pos = np.full(n, -1, dtype=np.int64)
    pos[r] = np.arange(len(r))
    agg = grouped.column(f"v_{op}").combine_chunks()
    return agg.take(pa.array(np.where(pos >= 0, pos, 0), mask=pos < 0)).cast(out_t)


@scalar("array_max", _infer_minmax("array_max"))
def _array_max(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    return _minmax(args, rt, ctx, "max")


@scalar("array_min", _infer_minmax("array_min"))
def _array_min(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    return _minmax(args, rt, ctx, "min")


def _infer_join(types: list[DataType]) -> DataType:
    _arity("array_join", types, 2, 3)
    et = _array_of("array_join", types, 0)
    if not et.is_string or not all(t.is_string or t.name == "NULL" for t in types[1:]):
        raise _invalid("array_join", types)
    return STRING(any(t.nullable for t in types[:2]))


@scalar("array_join", _infer_join, "array_to_string")
def _array_join(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    """NULL elements are skipped, or replaced by the third argument when it is given."""
    n = ctx.num_rows
    arr = to_array(args[0], n)
    values, rows = flatten(arr)
    values = values.cast(pa.string())
    if len(args) > 2:
        repl = to_array(args[2], n).cast(pa.string()).take(pa.array(rows))
        values = pc.if_else(pc.is_null(values), repl, values)
    keep = np.flatnonzero(~null_mask(values))
    lists = rebuild(n, rows[keep], values.take(pa.array(keep)), null_mask(arr), pa.list_(pa.string()))
    delim = args[1]
    if isinstance(delim, pa.Scalar):
        delim = delim.cast(pa.string())
        if not delim.is_valid:
            return pa.nulls(n, pa.string())
        return pc.binary_join(lists, delim.as_py())
    return pc.binary_join(lists, to_array(delim, n).cast(pa.string()))


# ---------------------------------------------------------------------- several arrays
def _infer_arrays(name: str, lo: int, hi: int):  # noqa: ANN202 - an Infer
    def infer(types: list[DataType]) -> DataType:
        _arity(name, types, lo, hi)
        known = [t for t in types if t.name != "NULL"]
        if not known or any(t.name != "ARRAY" for t in known):
            raise _invalid(name, types)
        et = common_type([t.children[0] for t in known])
        if et is None:
            raise _invalid(name, types)
        return DataType("ARRAY", any(t.nullable for t in types), children=(et,))

    return infer


def _flat_as(arg: ArgValue, t: DataType, rt: DataType, n: int) -> tuple[pa.Array, pa.Array, np.ndarray]:
    arr = pa.nulls(n, rt.to_arrow()) if t.name == "NULL" else to_array(arg, n)
    values, rows = flatten(arr)
    target = rt.children[0].to_arrow()
    return arr, (values.cast(target) if values.type != target else values), rows


def _set_op(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext, op: str) -> pa.Array:
    n = ctx.num_rows
    a, va, ra = _flat_as(args[0], types[0], rt, n)
    b, vb, rb = _flat_as(args[1], types[1], rt, n)
    ca, cb = codes(va, vb)
    nulls = null_mask(a) | null_mask(b)
    if op == "union":
        rows = np.concatenate([ra, rb])
        code = np.concatenate([ca, cb])
        vals = pa.concat_arrays([va, vb])
        order = np.argsort(rows, kind="stable")
        rows, code, vals = rows[order], code[order], vals.take(pa.array(order))
        keep = first_distinct(rows, code)
        return rebuild(n, rows[keep], vals.take(pa.array(keep)), nulls, rt.to_arrow())
    inside = np.isin(row_keys(ra, ca), row_keys(rb, cb))
    sel = np.flatnonzero(inside if op == "intersect" else ~inside)
    keep = sel[first_distinct(ra[sel], ca[sel])]
    return rebuild(n, ra[keep], va.take(pa.array(keep)), nulls, rt.to_arrow())


@scalar("array_union", _infer_arrays("array_union", 2, 2))
def _array_union(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    return _set_op(args, types, rt, ctx, "union")


@scalar("array_except", _infer_arrays("array_except", 2, 2))
def _array_except(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    return _set_op(args, types, rt, ctx, "except")


@scalar("array_intersect", _infer_arrays("array_intersect", 2, 2))
def _array_intersect(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    return _set_op(args, types, rt, ctx, "intersect")


@scalar("array_concat", _infer_arrays("array_concat", 1, 1 << 16))
def _array_concat(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    n = ctx.num_rows
    parts = [_flat_as(a, t, rt, n) for a, t in zip(args, types, strict=True)]
    nulls = np.zeros(n, dtype=bool)
    for arr, _, _ in parts:
        nulls |= null_mask(arr)
    rows = np.concatenate([p[2] for p in parts])
    vals = pa.concat_arrays([p[1] for p in parts])
    order = np.argsort(rows, kind="stable")
    return rebuild(n, rows[order], vals.take(pa.array(order)), nulls, rt.to_arrow())


document(
    {
        "array_append": ("ARRAY_APPEND(array, element)", "ARRAY_APPEND(ARRAY[1, 2], 3)"),
        "array_prepend": ("ARRAY_PREPEND(array, element)", "ARRAY_PREPEND(ARRAY[1, 2], 0)"),
        "array_contains": (
            "ARRAY_CONTAINS(array, element)",
            "ARRAY_CONTAINS(ARRAY[1, CAST(NULL AS INT)], CAST(NULL AS INT))",
        ),
        "array_position": ("ARRAY_POSITION(array, element)", "ARRAY_POSITION(ARRAY[5, 6, 5], 5)"),
        "array_remove": ("ARRAY_REMOVE(array, element)", "ARRAY_REMOVE(ARRAY[1, 5, 5, 2], 5)"),
        "array_distinct": ("ARRAY_DISTINCT(array)", "ARRAY_DISTINCT(ARRAY[1, 1, CAST(NULL AS INT), 2])"),
        "array_reverse": ("ARRAY_REVERSE(array)", "ARRAY_REVERSE(ARRAY['a', 'b', 'c'])"),
        "array_slice": ("ARRAY_SLICE(array, start[, end])", "ARRAY_SLICE(ARRAY[1, 2, 3, 4], -3, 3)"),
        "array_sort": (
            "ARRAY_SORT(array[, ascending[, nulls_first]])",
            "ARRAY_SORT(ARRAY[3, CAST(NULL AS INT), 1], FALSE)",
        ),
        "array_max": ("ARRAY_MAX(array)", "ARRAY_MAX(ARRAY[1, CAST(NULL AS INT), 3])"),
        "array_min": ("ARRAY_MIN(array)", "ARRAY_MIN(ARRAY['a', 'B'])"),
        "array_join": (
            "ARRAY_JOIN(array, delimiter[, null_replacement])",
            "ARRAY_JOIN(ARRAY['a', CAST(NULL AS STRING), 'c'], ',', 'N')",
        ),
        "array_union": ("ARRAY_UNION(array1, array2)", "ARRAY_UNION(ARRAY[1, 2, 2], ARRAY[2, 3])"),
        "array_except": ("ARRAY_EXCEPT(array1, array2)", "ARRAY_EXCEPT(ARRAY[1, 2, 2, 3], ARRAY[2])"),
        "array_intersect": ("ARRAY_INTERSECT(array1, array2)", "ARRAY_INTERSECT(ARRAY[1, 2, 2, 3], ARRAY[3, 2])"),
        "array_concat": ("ARRAY_CONCAT(array, ...)", "ARRAY_CONCAT(ARRAY[1], ARRAY[2, 3])"),
    }
)
