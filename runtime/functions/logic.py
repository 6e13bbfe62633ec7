"""Boolean logic: AND, OR (n-ary, three-valued), NOT, IS [NOT] NULL / TRUE / FALSE.

The evaluator evaluates `and`/`or` itself (short-circuit per row, as Flink's generated
code does); the kernels here serve callers that already hold all operand values.
"""

from __future__ import annotations

import functools

import pyarrow as pa
import pyarrow.compute as pc

from runtime.functions._common import calcite_name, to_array
from runtime.functions.registry import ArgValue, EvalContext, FunctionTypeError, document, scalar
from runtime.types import BOOLEAN, DataType


def _require_boolean(op: str, types: list[DataType]) -> None:
    for t in types:
        if t.name not in ("BOOLEAN", "NULL"):
            sig = (
                f" {op} ".join(f"<{calcite_name(x)}>" for x in types)
                if len(types) > 1
                else f"{op} <{calcite_name(types[0])}>"
            )
            form = f"<BOOLEAN> {op} <BOOLEAN>" if len(types) > 1 else f"{op} <BOOLEAN>"
            raise FunctionTypeError(f"Cannot apply '{op}' to arguments of type '{sig}'. Supported form(s): '{form}'")


def _infer_nary(op: str):
    def infer(types: list[DataType]) -> DataType:
        _require_boolean(op, types)
        return BOOLEAN(any(t.nullable for t in types))

    return infer


def _bool(v: ArgValue, t: DataType, n: int) -> pa.Array:
    if t.name == "NULL" or v.type == pa.null():
        return pa.nulls(n, pa.bool_())
    return to_array(v, n)


@scalar("and", _infer_nary("AND"))
def _and(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    vals = [_bool(a, t, ctx.num_rows) for a, t in zip(args, types, strict=True)]
    return functools.reduce(pc.and_kleene, vals)


@scalar("or", _infer_nary("OR"))
def _or(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    vals = [_bool(a, t, ctx.num_rows) for a, t in zip(args, types, strict=True)]
    return functools.reduce(pc.or_kleene, vals)


@scalar("not", _infer_nary("NOT"))
def _not(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    return pc.invert(_bool(args[0], types[0], ctx.num_rows))


def _infer_is_null(types: list[DataType]) -> DataType:
    if len(types) != 1:
        raise FunctionTypeError("IS NULL takes one argument")
    return BOOLEAN(False)


@scalar("is_null", _infer_is_null, "is_unknown")
def _is_null(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    return to_array(args[0], ctx.num_rows).is_null()


@scalar("is_not_null", _infer_is_null)
def _is_not_null(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    return to_array(args[0], ctx.num_rows).is_valid()


def _infer_is_bool(op: str):
    def infer(types: list[DataType]) -> DataType:
        _require_boolean(op, types)
        return BOOLEAN(False)

    return infer


def _is_kernel(value: bool, negate: bool):
    def kernel(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
        v = _bool(args[0], types[0], ctx.num_rows)
        hit = pc.fill_null(pc.equal(v, pa.scalar(value)), False)
        return pc.invert(hit) if negate else hit

    return kernel


scalar("is_true", _infer_is_bool("IS TRUE"))(_is_kernel(True, False))
scalar("is_not_true", _infer_is_bool("IS NOT TRUE"))(_is_kernel(True, True))
scalar("is_false", _infer_is_bool("IS FALSE"))(_is_kernel(False, False))
scalar("is_not_false", _infer_is_bool("IS NOT FALSE"))(_is_kernel(False, True))


# docs/functions.md: signature and one example per function of this module
document(
    {
        "and": ("a AND b", "TRUE AND CAST(NULL AS BOOLEAN)"),
        "or": ("a OR b", "TRUE OR CAST(NULL AS BOOLEAN)"),
        "not": ("NOT a", "NOT FALSE"),
        "is_false": ("a IS FALSE", "CAST(NULL AS BOOLEAN) IS FALSE"),
        "is_not_false": ("a IS NOT FALSE", "CAST(NULL AS BOOLEAN) IS NOT FALSE"),
        "is_true": ("a IS TRUE", "TRUE IS TRUE"),
        "is_not_true": ("a IS NOT TRUE", "FALSE IS NOT TRUE"),
        "is_null": ("a IS NULL, a IS UNKNOWN", "CAST(NULL AS INT) IS NULL"),
        "is_not_null": ("a IS NOT NULL", "1 IS NOT NULL"),
    }
)
