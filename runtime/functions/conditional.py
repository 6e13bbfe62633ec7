"""Conditional functions: CASE, IF, COALESCE, IFNULL, NULLIF, GREATEST, LEAST.

CASE/IF/COALESCE/IFNULL are evaluated lazily by the evaluator (a branch only sees the
rows that reach it); the kernels below are the eager equivalents used when all argument
values are already computed. Type inference follows Calcite's least-restrictive rule.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.functions._common import calcite_name, common_type, null_mask, to_array
from runtime.functions.comparison import _compare, coerce
from runtime.functions.registry import ArgValue, EvalContext, FunctionTypeError, document, scalar
from runtime.sink_constraints import not_null_violation
from runtime.types import DataType


def _common_or_fail(what: str, types: list[DataType]) -> DataType:
    t = common_type(types)
    if t is None:
        names = ", ".join(calcite_name(x) for x in types)
        raise FunctionTypeError(f"Illegal mixing of types in {what}: {names}")
    return t


def _cast_all(args: list[ArgValue], types: list[DataType], target: DataType, ctx: EvalContext) -> list[pa.Array]:
    out = []
    for v, t in zip(args, types, strict=True):
        if t.name == "NULL":
            out.append(pa.nulls(ctx.num_rows, target.to_arrow()))
        else:
            out.append(to_array(coerce(v, t, target, ctx), ctx.num_rows))
    return out


# ---------------------------------------------------------------------- CASE / IF
def _infer_case(types: list[DataType]) -> DataType:
    if len(types) < 2:
        raise FunctionTypeError("CASE needs at least one WHEN ... THEN")
    conds = types[0:-1:2] if len(types) % 2 == 1 else types[0::2]
    values = list(types[1::2])
    if len(types) % 2 == 1:
        values.append(types[-1])
    for c in conds:
        if c.name not in ("BOOLEAN", "NULL"):
            raise FunctionTypeError(f"Expected a boolean type in a CASE condition, got {calcite_name(c)}")
    t = _common_or_fail("CASE", values)
    if len(types) % 2 == 0:
        t = t.with_nullable(True)
    return t


def _case_eager(
    conds: list[ArgValue], values: list[ArgValue], vtypes: list[DataType], rt: DataType, ctx: EvalContext
) -> pa.Array:
    n = ctx.num_rows
    vals = _cast_all(values, vtypes, rt, ctx)
    result = vals[-1] if len(vals) > len(conds) else pa.nulls(n, rt.to_arrow())
    for c, v in zip(reversed(conds), reversed(vals[: len(conds)]), strict=True):
        cond = pc.fill_null(to_array(c, n) if c.type != pa.null() else pa.nulls(n, pa.bool_()), False)
        result = pc.if_else(cond, v, result)
    return result


@scalar("case", _infer_case)
def _case(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    k = len(args) // 2
    conds = list(args[0 : 2 * k : 2])
    values = list(args[1 : 2 * k : 2]) + ([args[-1]] if len(args) % 2 == 1 else [])
    vtypes = list(types[1 : 2 * k : 2]) + ([types[-1]] if len(args) % 2 == 1 else [])
    return _case_eager(conds, values, vtypes, rt, ctx)


def _infer_if(types: list[DataType]) -> DataType:
    if len(types) != 3:
        raise FunctionTypeError("IF requires 3 arguments: IF(condition, true_value, false_value)")
    if types[0].name not in ("BOOLEAN", "NULL"):
        raise FunctionTypeError(f"IF condition must be BOOLEAN, got {calcite_name(types[0])}")
    return _common_or_fail("IF", types[1:])


@scalar("if", _infer_if)
def _if(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    return _case_eager([args[0]], [args[1], args[2]], [types[1], types[2]], rt, ctx)


# ---------------------------------------------------------------------- COALESCE / IFNULL
def _infer_coalesce(types: list[DataType]) -> DataType:
    if not types:
        raise FunctionTypeError("COALESCE requires at least one argument")
    t = _common_or_fail("COALESCE", types)
    return t.with_nullable(all(x.nullable for x in types))


@scalar("coalesce", _infer_coalesce)
def _coalesce(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    vals = _cast_all(args, types, rt.with_nullable(True), ctx)
    return pc.coalesce(*vals) if len(vals) > 1 else vals[0]


def _infer_ifnull(types: list[DataType]) -> DataType:
    if len(types) != 2:
        raise FunctionTypeError("IFNULL requires 2 arguments")
    t = _common_or_fail("IFNULL", types)
    return t.with_nullable(types[0].nullable and types[1].nullable)


scalar("ifnull", _infer_ifnull)(_coalesce)


# ---------------------------------------------------------------------- NULLIF
def _infer_nullif(types: list[DataType]) -> DataType:
    if len(types) != 2:
        raise FunctionTypeError("NULLIF requires 2 arguments")
    _common_or_fail("NULLIF", types)
    return types[0].with_nullable(True)


@scalar("nullif", _infer_nullif)
def _nullif(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    n = ctx.num_rows
    a = to_array(args[0], n)
    if types[1].name == "NULL" or types[0].name == "NULL":
        return a
    eq = pc.fill_null(to_array(_compare("equals", a, args[1], types[0], types[1], ctx), n), False)
    return pc.if_else(eq, pa.nulls(n, a.type), a)


# ---------------------------------------------------------------------- GREATEST / LEAST
def _infer_extreme(name: str):
    def infer(types: list[DataType]) -> DataType:
        if not types:
            raise FunctionTypeError(f"{name} requires at least one argument")
        if any(t.name == "NULL" for t in types):
            raise FunctionTypeError(
                f"Unsupported casting from NULL to {calcite_name(next(t for t in types if t.name != 'NULL'))}"
                if any(t.name != "NULL" for t in types)
                else f"{name} of NULL"
            )
        return _common_or_fail(name, types)

    return infer


def _extreme(is_max: bool):
    def kernel(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
        n = ctx.num_rows
        vals = _cast_all(args, types, rt, ctx)
        nulls = np.zeros(n, dtype=bool)
        for v in vals:
            nulls |= null_mask(v)
        fn = pc.max_element_wise if is_max else pc.min_element_wise
        try:
            res = fn(*vals, skip_nulls=True)
        except (pa.ArrowNotImplementedError, pa.ArrowTypeError):
            rows = [
                (max if is_max else min)(vs) if None not in vs else None
                for vs in zip(*(v.to_pylist() for v in vals), strict=True)
            ]
            return pa.array(rows, rt.to_arrow())
        if nulls.any():
            res = pc.if_else(pa.array(nulls), pa.nulls(n, res.type), res)
        return res

    return kernel


scalar("greatest", _infer_extreme("GREATEST"))(_extreme(True))
scalar("least", _infer_extreme("LEAST"))(_extreme(False))


# ---------------------------------------------------------------------- sink NOT NULL check
def _infer_enforce_not_null(types: list[DataType]) -> DataType:
    if len(types) != 2:
        raise FunctionTypeError("ENFORCE_NOT_NULL takes a value and the column name")
    return types[0].not_null()


@scalar("enforce_not_null", _infer_enforce_not_null)
def _enforce_not_null(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    """The planner's not-null enforcer (ERROR) for a nullable value written into a NOT NULL
    sink column: the value unchanged, or the job fails naming the column
    (runtime.sink_constraints)."""
    v, column = args
    if (isinstance(v, pa.Scalar) and not v.is_valid) or (isinstance(v, pa.Array) and v.null_count):
        raise not_null_violation(str(column.as_py() if isinstance(column, pa.Scalar) else column[0].as_py()))
    return v


# docs/functions.md: signature and one example per function of this module
document(
    {
        "case": ("CASE [value] WHEN ... THEN ... [ELSE ...] END", "CASE WHEN 1 > 2 THEN 'a' ELSE 'b' END"),
        "coalesce": ("COALESCE(v, ...)", "COALESCE(CAST(NULL AS INT), 2)"),
        "enforce_not_null": ("(internal: the sink's NOT NULL check)", ""),
        "greatest": ("GREATEST(v, ...)", "GREATEST(1, 5, 3)"),
        "if": ("IF(condition, then, else)", "IF(1 < 2, 'yes', 'no')"),
        "ifnull": ("IFNULL(v, default)", "IFNULL(CAST(NULL AS STRING), 'x')"),
        "least": ("LEAST(v, ...)", "LEAST(1, 5, 3)"),
        "nullif": ("NULLIF(a, b)", "NULLIF(1, 1)"),
    }
)
