"""Helpers shared by the string, temporal and JSON kernels.

Why a separate module: those kernels all face the same two problems. (1) An argument may
be a literal (`pa.Scalar`) or a column (`pa.Array`), and Arrow compute functions take
their "parameters" (a pattern, a width, a format string) only as Python constants.
`grouped_apply` turns a call with non-constant parameters into one vectorized call per
*distinct* parameter combination, then scatters the results back in row order.
(2) Type inference repeats the same checks (is it a string? an integer?), kept here so
error messages read the same everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.functions._common import to_array as to_array  # re-exported for the text kernels
from runtime.functions.registry import ArgValue, FunctionTypeError
from runtime.types import STRING, DataType

# ---------------------------------------------------------------------- type checks


def any_nullable(types: Sequence[DataType]) -> bool:
    return any(t.nullable for t in types)


def string_result(types: Sequence[DataType]) -> DataType:
    """STRING, nullable when any argument is (Flink's default for string functions)."""
    return STRING(any_nullable(types))


def check_arity(name: str, types: Sequence[DataType], lo: int, hi: int | None = None) -> None:
    hi = lo if hi is None else hi
    if not lo <= len(types) <= hi:
        want = str(lo) if lo == hi else f"{lo} to {hi}"
        raise FunctionTypeError(
            f"Invalid number of arguments to function '{name.upper()}'. Was expecting {want} arguments"
        )


def is_stringish(t: DataType) -> bool:
    return t.is_string or t.name == "NULL"


def is_integerish(t: DataType) -> bool:
    return t.is_integer or t.name == "NULL"


def require(name: str, types: Sequence[DataType], checks: Sequence[Callable[[DataType], bool]], form: str) -> None:
    """Raise Calcite's "Cannot apply" error unless each argument passes its check."""
    for t, ok in zip(types, checks, strict=False):
        if not ok(t):
            sig = ", ".join(f"<{_tname(x)}>" for x in types)
            raise FunctionTypeError(
                f"Cannot apply '{name.upper()}' to arguments of type '{name.upper()}({sig})'. Supported form(s): '{form}'"
            )


def infer_string(
    name: str, lo: int, hi: int, checks: Sequence[Callable[[DataType], bool]], form: str
) -> Callable[[list[DataType]], DataType]:
    """The usual string function's inference: arity, argument checks, then `string_result`."""

    def infer(types: list[DataType]) -> DataType:
        check_arity(name, types, lo, hi)
        require(name, types, checks, form)
        return string_result(types)

    return infer


def _tname(t: DataType) -> str:
    s = str(t.with_nullable(True))
    return {"INT": "INTEGER", "STRING": "VARCHAR(2147483647)"}.get(s, s)


# ---------------------------------------------------------------------- value helpers


def is_scalar(v: ArgValue) -> bool:
    return isinstance(v, pa.Scalar)


def const(v: ArgValue) -> Any:
    """The Python value of a literal argument."""
    return v.as_py() if isinstance(v, pa.Scalar) else v


def null_scalar_result(out_type: pa.DataType) -> pa.Scalar:
    return pa.scalar(None, type=out_type)


def grouped_apply(
    args: Sequence[ArgValue],
    params: Sequence[int],
    fn: Callable[[list[ArgValue], list[Any]], ArgValue],
    n: int,
    out_type: pa.DataType,
    null_on_null_param: bool = True,
) -> ArgValue:
    """Evaluate `fn(sub_args, param_values)` once per distinct combination of the
    arguments at positions `params` (which the Arrow kernel needs as constants).

    `sub_args` holds the non-parameter arguments restricted to the group's rows (scalars
    stay scalars); `param_values` the group's parameter values as Python objects. Rows
    whose parameter is NULL give NULL when `null_on_null_param`. Loops over distinct
    parameter values only, never over rows.
    """
    if all(isinstance(args[i], pa.Scalar) for i in params):
        values = [args[i].as_py() for i in params]
        if null_on_null_param and any(v is None for v in values):
            return null_scalar_result(out_type)
        return fn([a for j, a in enumerate(args) if j not in params], values)

    # code each parameter column, combine codes into one group id per row
    codes = np.zeros(n, dtype=np.int64)
    dicts: list[list[Any]] = []
    idx_arrays: list[np.ndarray | None] = []
    null_rows = np.zeros(n, dtype=bool)
    for i in params:
        a = args[i]
        if isinstance(a, pa.Scalar):
            dicts.append([a.as_py()])
            idx_arrays.append(None)
            if a.as_py() is None:
                null_rows[:] = True
            continue
        enc = pc.dictionary_encode(to_array(a, n), null_encoding="encode")
        idx = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        vals = enc.dictionary.to_pylist()
        null_rows |= to_array(a, n).is_null().to_numpy(zero_copy_only=False)
        codes = codes * max(len(vals), 1) + idx
        dicts.append(vals)
        idx_arrays.append(idx)
    uniq, inverse = np.unique(codes, return_inverse=True)
    pieces: list[pa.Array] = []
    positions: list[np.ndarray] = []
    for g in range(len(uniq)):
        rows = np.flatnonzero(inverse == g)
        first = rows[0]
        values = []
        for k in range(len(params)):
            ia = idx_arrays[k]
            values.append(dicts[k][0] if ia is None else dicts[k][int(ia[first])])
        if null_on_null_param and null_rows[first]:
            pieces.append(pa.nulls(len(rows), out_type))
            positions.append(rows)
            continue
        take = pa.array(rows)
        sub = [
            a if isinstance(a, pa.Scalar) else to_array(a, n).take(take) for j, a in enumerate(args) if j not in params
        ]
        res = fn(sub, values)
        res = to_array(res, len(rows)) if isinstance(res, pa.Scalar) else res
        if res.type != out_type:
            res = res.cast(out_type)
        pieces.append(res)
        positions.append(rows)
    return scatter(pieces, positions, n, out_type)


def scatter(pieces: list[pa.Array], positions: list[np.ndarray], n: int, out_type: pa.DataType) -> pa.Array:
    """Reassemble per-group results (`pieces[i]` holds the rows `positions[i]`)."""
    if not pieces:
        return pa.nulls(n, out_type)
    all_pos = np.concatenate(positions)
    vals = pa.concat_arrays([p.cast(out_type) if p.type != out_type else p for p in pieces])
    order = np.argsort(all_pos, kind="stable")
    return vals.take(pa.array(order))


def map_distinct(arr: pa.Array, fn: Callable[[Any], Any], out_type: pa.DataType) -> pa.Array:
    """Apply a Python function to each distinct non-null value of `arr` (used where no
    Arrow kernel exists: JSON parsing, hashing, lenient date parsing). The loop runs over
    distinct values, so repeated values cost nothing extra."""
    enc = pc.dictionary_encode(arr)
    dict_vals = enc.dictionary.to_pylist()
    mapped = pa.array([fn(v) for v in dict_vals], type=out_type)
    return mapped.take(enc.indices)


def map_distinct_any(v: ArgValue, fn: Callable[[Any], Any], out_type: pa.DataType) -> ArgValue:
    """`map_distinct` that keeps a Scalar a Scalar (NULL stays NULL)."""
    if isinstance(v, pa.Scalar):
        x = v.as_py()
        return pa.scalar(None if x is None else fn(x), type=out_type)
    return map_distinct(v, fn, out_type)


def np_valid(a: pa.Array) -> np.ndarray:
    return a.is_valid().to_numpy(zero_copy_only=False)


def np_ints(a: pa.Array, fill: int = 0) -> np.ndarray:
    """Integer values of an array as int64 numpy, nulls as `fill`."""
    if a.null_count:
        a = pc.fill_null(a, pa.scalar(fill, a.type))
    return a.to_numpy(zero_copy_only=False).astype(np.int64)


def with_nulls(values: pa.Array, valid: np.ndarray) -> pa.Array:
    """`values` with rows where `valid` is False set to NULL."""
    if valid.all():
        return values
    return pc.if_else(pa.array(valid), values, pa.scalar(None, values.type))


def join_skip(items: Sequence[ArgValue], sep: ArgValue | str) -> pa.Array:
    """`binary_join_element_wise(..., null_handling="skip")`, working around Arrow 26
    dropping NULL rows (instead of giving '') when only one array is joined."""
    arrays = [i for i in items if not isinstance(i, pa.Scalar)]
    if len(items) == 1 and arrays:
        out = arrays[0].fill_null("")
        if isinstance(sep, str):
            return out
        if isinstance(sep, pa.Scalar):
            return out if sep.is_valid else pa.nulls(len(out), out.type)
        return pc.if_else(sep.is_null(), pa.scalar(None, out.type), out)
    # Arrow 26 also drops the rows where every item is NULL (the output gets shorter):
    # join the other rows only and give '' (or NULL for a NULL separator) to those.
    n = len(arrays[0]) if arrays else (len(sep) if isinstance(sep, pa.Array) else 1)
    all_null = None
    for a in arrays:
        nulls = a.is_null()
        all_null = nulls if all_null is None else pc.and_(all_null, nulls)
    if not arrays or all_null is None or not pc.any(all_null).as_py():
        return pc.binary_join_element_wise(*items, sep, null_handling="skip")
    if any(isinstance(i, pa.Scalar) and i.is_valid for i in items):
        return pc.binary_join_element_wise(*items, sep, null_handling="skip")
    some = pc.invert(all_null)
    kept = [i.filter(some) if isinstance(i, pa.Array) else i for i in items]
    kept_sep = sep.filter(some) if isinstance(sep, pa.Array) else sep
    joined = pc.binary_join_element_wise(*kept, kept_sep, null_handling="skip")
    out = pc.replace_with_mask(pa.nulls(n, joined.type).fill_null(""), some, joined)
    if isinstance(sep, pa.Array):
        out = pc.if_else(sep.is_null(), pa.scalar(None, out.type), out)
    elif isinstance(sep, pa.Scalar) and not sep.is_valid:
        out = pa.nulls(n, out.type)
    return out
