"""HASH_CODE(x): a deterministic 31-bit hash of any value (INT, NULL for NULL). Flink uses
its internal HASH_CODE to bucket rows for split-distinct aggregation
(`MOD(HASH_CODE(x), 1024)`, planner/optimizer/split_distinct.py); only determinism and a
good spread matter there, so this is the key hash of keyed state and exchanges
(runtime/state/keygroups.py, vectorized over the Arrow values) rather than Java's hashCode.
Not pandas': streamsql's own code never imports pandas (runtime/pandas_interop.py refuses
it), so a split-distinct job failed unless the program had imported pandas itself."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from runtime.functions.registry import ArgValue, EvalContext, FunctionTypeError, document, scalar
from runtime.state.keygroups import column_hash
from runtime.types import INT, DataType


def _infer(types: list[DataType]) -> DataType:
    if len(types) != 1:
        raise FunctionTypeError("HASH_CODE takes one argument")
    return INT(types[0].nullable)


@scalar("hash_code", _infer)
def _hash_code(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    x = args[0]
    arr = pa.array([x.as_py()] * ctx.num_rows, x.type) if isinstance(x, pa.Scalar) else x
    hashed = (column_hash(arr) & np.uint64(0x7FFFFFFF)).astype(np.int32)
    mask = arr.is_null().to_numpy(zero_copy_only=False) if arr.null_count else None
    return pa.array(hashed, pa.int32(), mask=mask)


# docs/functions.md: signature and one example per function of this module
document(
    {
        "hash_code": ("HASH_CODE(v)", "HASH_CODE('abc')"),
    }
)
