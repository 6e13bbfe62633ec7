"""HASH_CODE(x): a deterministic 31-bit hash of any value (INT, NULL for NULL). Flink uses
its internal HASH_CODE to bucket rows for split-distinct aggregation
(`MOD(HASH_CODE(x), 1024)`, planner/optimizer/split_distinct.py); only determinism and a
good spread matter there, so this is pandas' vectorized hash of the Arrow values rather
than Java's hashCode."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from runtime.functions.registry import ArgValue, EvalContext, FunctionTypeError, document, scalar
from runtime.types import INT, DataType


def _infer(types: list[DataType]) -> DataType:
    if len(types) != 1:
        raise FunctionTypeError("HASH_CODE takes one argument")
    return INT(types[0].nullable)


@scalar("hash_code", _infer)
def _hash_code(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    from pandas.util import hash_array

    x = args[0]
    arr = pa.array([x.as_py()] * ctx.num_rows, x.type) if isinstance(x, pa.Scalar) else x
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if not (pa.types.is_integer(arr.type) or pa.types.is_floating(arr.type) or pa.types.is_temporal(arr.type)):
        arr_text = arr if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type) else arr.cast(pa.string())
        values = arr_text.fill_null("").to_numpy(zero_copy_only=False)
    else:
        values = arr.to_numpy(zero_copy_only=False)
    hashed = (hash_array(values) & np.uint64(0x7FFFFFFF)).astype(np.int32)
    mask = arr.is_null().to_numpy(zero_copy_only=False) if arr.null_count else None
    return pa.array(hashed, pa.int32(), mask=mask)


# docs/functions.md: signature and one example per function of this module
document(
    {
        "hash_code": ("HASH_CODE(v)", "HASH_CODE('abc')"),
    }
)
