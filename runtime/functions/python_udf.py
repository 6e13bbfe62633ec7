"""`python_udf(reference, args...)`: calls a Python scalar UDF (runtime.udf_registry).

The first argument is the function's JobGraph reference (a string literal the binder
puts there, see planner.binder.udf_calls); the result type is the call's type.
- func_type "pandas": the function gets each argument as a pandas Series (the whole
  batch; a ROW argument as a DataFrame, one column per field) and returns a Series /
  array / list of the batch's length (a DataFrame for a ROW result). Vectorized.
- func_type "arrow": the same with pyarrow arrays.
- func_type "general": called once per row with Python values (NULL = None). Convenient
  but slow (a Python call per row); prefer pandas/arrow for large inputs.
"""

from __future__ import annotations

import inspect
from typing import Any

import pyarrow as pa

from runtime.errors import JobError, user_code
from runtime.functions.async_options import async_options
from runtime.functions.registry import ArgValue, EvalContext, FunctionTypeError, document, scalar
from runtime.map_values import has_map, pairs_form
from runtime.pandas_interop import arrow_input, is_data_frame, pandas_argument, struct_from_frame
from runtime.row import arrow_value, has_row, python_values
from runtime.types import DataType
from runtime.udf_options import ARROW_BATCH_SIZE
from runtime.udf_registry import resolve


def _infer(types: list[DataType]) -> DataType:
    raise FunctionTypeError("python_udf calls are typed by the binder")


def _to_array(v: ArgValue, n: int) -> pa.Array:
    if isinstance(v, pa.Scalar):
        return pa.repeat(v, n)
    return v.combine_chunks() if isinstance(v, pa.ChunkedArray) else v


def _result(values: Any, result_type: DataType, n: int, name: str) -> pa.Array:
    target = result_type.to_arrow()
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if is_data_frame(values) and pa.types.is_struct(target):
        try:
            values = struct_from_frame(values, target)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError) as e:
            raise JobError(f"Python function {name} returned a DataFrame that is not {result_type}: {e}") from None
    if isinstance(values, pa.Array):
        arr = values if values.type == target else values.cast(target)
    else:
        if has_row(result_type):
            values = [arrow_value(v) for v in values]
        if has_map(result_type):  # a dict (or pairs) per MAP value: runtime/map_values.py
            values = [pairs_form(v, result_type) for v in values]
        try:
            arr = pa.array(arrow_input(values), type=target, from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError) as e:
            raise JobError(f"Python function {name} returned values that are not {result_type}: {e}") from None
    if len(arr) != n:
        raise JobError(f"Python function {name} returned {len(arr)} values for {n} rows")
    return arr


@scalar("python_udf", _infer, deterministic=False)
def python_udf(args: list[ArgValue], types: list[DataType], result_type: DataType, ctx: EvalContext) -> ArgValue:
    ref = args[0]
    spec = resolve(str(ref.as_py() if isinstance(ref, pa.Scalar) else ref[0].as_py()))
    name = spec.name or "udf"
    fn = spec.call_target()
    n = ctx.num_rows
    cols = [_to_array(a, n) for a in args[1:]]
    # the user's calls run inside `user_code` (once per batch): what they raise fails the job
    # naming the function, with the user's traceback (runtime/errors.py)
    if spec.func_type == "pandas":
        # slices of at most python.fn-execution.arrow.batch.size rows, as PyFlink's Arrow batches
        size = ARROW_BATCH_SIZE.get(ctx.config)
        parts = []
        for start in range(0, n, size) if n else [0]:
            length = min(size, n - start)
            series = [pandas_argument(c.slice(start, length)) for c in cols]  # a ROW as a DataFrame
            with user_code(name, "on a batch"):
                values = fn(*series) if series else fn()
            parts.append(_result(values, result_type, length, name))
        return parts[0] if len(parts) == 1 else pa.concat_arrays(parts)
    if spec.func_type == "arrow":
        with user_code(name, "on a batch"):
            values = fn(*cols)
        return _result(values, result_type, n, name)
    py = [python_values(c, t) for c, t in zip(cols, types[1:], strict=True)]
    rows = list(zip(*py, strict=True)) if py else [()] * n
    if inspect.iscoroutinefunction(fn):  # an AsyncScalarFunction's eval
        from runtime.functions.async_udf import run_async  # asyncio loads with the first async function

        with user_code(name, "on a row"):
            values = run_async(fn, rows, async_options(ctx.config), name)
        return _result(values, result_type, n, name)
    with user_code(name, "on a row"):
        values = [fn(*row) for row in rows]
    return _result(values, result_type, n, name)


# docs/functions.md: signature and one example per function of this module
document(
    {
        "python_udf": ("(internal: a Python scalar UDF call)", ""),
    }
)
