"""Comparisons: =, <>, <, <=, >, >=, IS [NOT] DISTINCT FROM, IN.

Both sides are first brought to their common type (INT vs DECIMAL compares as DECIMAL,
DECIMALs of different scales align, DATE vs TIMESTAMP compares as TIMESTAMP, TIMESTAMP_LTZ
vs TIMESTAMP converts the instant to the session zone). Types that Flink does not compare
(INT = BOOLEAN, STRING = INT) are rejected at bind time with Calcite's message.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.functions._common import cannot_apply, common_numeric, common_type, comparable, null_mask, to_array
from runtime.functions.cast import ltz_to_timestamp, timestamp_to_ltz
from runtime.functions.registry import ArgValue, EvalContext, FunctionTypeError, document, scalar
from runtime.types import BOOLEAN, DataType

_OPS = {
    "equals": ("=", pc.equal),
    "not_equals": ("<>", pc.not_equal),
    "less_than": ("<", pc.less),
    "less_than_or_equal": ("<=", pc.less_equal),
    "greater_than": (">", pc.greater),
    "greater_than_or_equal": (">=", pc.greater_equal),
}
_ORDERED = {"less_than", "less_than_or_equal", "greater_than", "greater_than_or_equal"}


# ---------------------------------------------------------------------- coercion
def comparison_type(a: DataType, b: DataType) -> DataType | None:
    """The type both sides are converted to before comparing (None: NULL involved)."""
    if a.name == "NULL" or b.name == "NULL":
        return None
    if a.is_numeric and b.is_numeric:
        return common_numeric(a, b)
    return common_type([a, b])


def coerce(v: ArgValue, t: DataType, target: DataType, ctx: EvalContext) -> ArgValue:
    """Convert a value of type `t` to the comparison type `target` (Arrow casts, plus the
    time-zone shift for TIMESTAMP_LTZ → TIMESTAMP)."""
    arrow_target = target.to_arrow()
    if v.type == arrow_target:
        return v
    if t.name == "TIMESTAMP_LTZ" and target.name == "TIMESTAMP":
        return ltz_to_timestamp(v, ctx.time_zone, arrow_target)
    if t.name == "DATE" and target.name in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        v = pc.cast(v, pa.timestamp("ms"))
        if target.name == "TIMESTAMP_LTZ":
            return timestamp_to_ltz(v, ctx.time_zone, arrow_target)
    if pa.types.is_decimal(arrow_target) or pa.types.is_integer(arrow_target):
        return pc.cast(v, arrow_target)
    return pc.cast(v, arrow_target, safe=False)


def _check(op: str, types: list[DataType]) -> None:
    sym = _OPS[op][0] if op in _OPS else op
    a, b = types
    if not comparable(a, b) or (op in _ORDERED and a.name in ("MAP", "ARRAY", "ROW", "MULTISET")):
        form = "<COMPARABLE_TYPE> " + sym + " <COMPARABLE_TYPE>"
        if op in ("is_distinct_from", "is_not_distinct_from"):
            sym = "IS DISTINCT FROM" if op == "is_distinct_from" else "IS NOT DISTINCT FROM"
            form = f"<COMPARABLE_TYPE> {sym} <COMPARABLE_TYPE>"
        raise cannot_apply(sym, types, form)


def _compare(op: str, a: ArgValue, b: ArgValue, ta: DataType, tb: DataType, ctx: EvalContext) -> ArgValue:
    """Three-valued comparison of two values (nulls propagate)."""
    ct = comparison_type(ta, tb)
    if ct is None:
        return pa.nulls(ctx.num_rows, pa.bool_())
    a, b = coerce(a, ta, ct, ctx), coerce(b, tb, ct, ctx)
    if ct.name in ("ARRAY", "MAP", "ROW", "MULTISET"):
        return _nested_compare(op, a, b, ctx)
    return _OPS[op][1](a, b)


def _nested_compare(op: str, a: ArgValue, b: ArgValue, ctx: EvalContext) -> pa.Array:
    """Equality of nested values: Arrow has no kernel, so compare Python values row by row
    (rare: only `arr = ARRAY[...]` style predicates)."""
    n = ctx.num_rows
    xs, ys = to_array(a, n).to_pylist(), to_array(b, n).to_pylist()
    out: list[bool | None] = []
    for x, y in zip(xs, ys, strict=True):
        if x is None or y is None:
            out.append(None)
        else:
            out.append((x == y) if op == "equals" else (x != y))
    return pa.array(out, pa.bool_())


def _infer_cmp(op: str):
    def infer(types: list[DataType]) -> DataType:
        if len(types) != 2:
            raise FunctionTypeError(f"Invalid number of arguments to operator '{_OPS[op][0]}'")
        _check(op, types)
        return BOOLEAN(any(t.nullable for t in types))

    return infer


def _cmp_kernel(op: str):
    def kernel(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
        return _compare(op, args[0], args[1], types[0], types[1], ctx)

    return kernel


for _name in _OPS:
    scalar(_name, _infer_cmp(_name))(_cmp_kernel(_name))


# ---------------------------------------------------------------------- distinct
def _infer_distinct(op: str):
    def infer(types: list[DataType]) -> DataType:
        _check(op, types)
        return BOOLEAN(False)

    return infer


def distinct_from(a: ArgValue, b: ArgValue, ta: DataType, tb: DataType, ctx: EvalContext) -> pa.Array:
    """IS DISTINCT FROM: never NULL; two NULLs are not distinct."""
    n = ctx.num_rows
    aa, bb = to_array(a, n), to_array(b, n)
    na, nb = null_mask(aa), null_mask(bb)
    if ta.name == "NULL" or tb.name == "NULL":
        return pa.array(na != nb, pa.bool_())
    ne = to_array(_compare("not_equals", aa, bb, ta, tb, ctx), n)
    ne_np = pc.fill_null(ne, False).to_numpy(zero_copy_only=False)
    res = np.where(na | nb, na != nb, ne_np)
    return pa.array(res, pa.bool_())


@scalar("is_distinct_from", _infer_distinct("is_distinct_from"))
def _is_distinct_from(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    return distinct_from(args[0], args[1], types[0], types[1], ctx)


@scalar("is_not_distinct_from", _infer_distinct("is_not_distinct_from"))
def _is_not_distinct_from(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    return pc.invert(distinct_from(args[0], args[1], types[0], types[1], ctx))


# ---------------------------------------------------------------------- IN
def _infer_in(types: list[DataType]) -> DataType:
    if len(types) < 2:
        raise FunctionTypeError("IN requires at least one value in the list")
    x = types[0]
    for t in types[1:]:
        if not comparable(x, t):
            raise FunctionTypeError(
                f"Values passed to IN operator must have compatible types: cannot compare <{x}> with <{t}>"
            )
    return BOOLEAN(any(t.nullable for t in types))


@scalar("in", _infer_in)
def _in(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
    """x IN (a, b, ...): TRUE if some element equals x; else NULL if x or some element is
    NULL; else FALSE (so `v NOT IN (1, NULL)` is never TRUE)."""
    n = ctx.num_rows
    x, tx = args[0], types[0]
    items, item_types = args[1:], types[1:]
    known = [t for t in (tx, *item_types) if t.name != "NULL"]
    if tx.name == "NULL" or not known:
        return pa.nulls(n, pa.bool_())
    target = comparison_type(known[0], known[0])
    for t in known[1:]:
        target = comparison_type(target, t) if target is not None else t
    assert target is not None
    if all(isinstance(v, pa.Scalar) for v in items):
        # constant list: one hash lookup per row
        has_null = any((not v.is_valid) or t.name == "NULL" for v, t in zip(items, item_types, strict=True))
        values = [
            coerce(v, t, target, ctx) for v, t in zip(items, item_types, strict=True) if v.is_valid and t.name != "NULL"
        ]
        xs = to_array(coerce(x, tx, target, ctx), n)
        if values and target.name not in ("ARRAY", "MAP", "ROW", "MULTISET"):
            value_set = pa.array([v.as_py() for v in values], target.to_arrow())
            found = pc.is_in(xs, value_set=value_set, skip_nulls=True)
        else:
            found = pa.array(np.zeros(n, dtype=bool))
        found_np = pc.fill_null(found, False).to_numpy(zero_copy_only=False)
        isnull = null_mask(xs) | ((~found_np) & has_null)
        return pa.array(found_np, pa.bool_(), mask=isnull)
    result = None
    for v, t in zip(items, item_types, strict=True):
        eq = _compare("equals", x, v, tx, t, ctx)
        eq = to_array(eq, n)
        result = eq if result is None else pc.or_kleene(result, eq)
    return result


# docs/functions.md: signature and one example per function of this module
document(
    {
        "equals": ("a = b", "1 = 1.0"),
        "not_equals": ("a <> b", "'a' <> 'b'"),
        "less_than": ("a < b", "1 < 2"),
        "less_than_or_equal": ("a <= b", "2 <= 2"),
        "greater_than": ("a > b", "DATE '2024-01-02' > DATE '2024-01-01'"),
        "greater_than_or_equal": ("a >= b", "1 >= 2"),
        "in": ("v [NOT] IN (a, b, ...)", "4 IN (1, 2, CAST(NULL AS INT))"),
        "is_distinct_from": ("a IS DISTINCT FROM b", "1 IS DISTINCT FROM CAST(NULL AS INT)"),
        "is_not_distinct_from": (
            "a IS NOT DISTINCT FROM b",
            "CAST(NULL AS INT) IS NOT DISTINCT FROM CAST(NULL AS INT)",
        ),
    }
)
