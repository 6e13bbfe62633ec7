"""Vectorized evaluation of expression IR over an Arrow RecordBatch.

`evaluate(expr, batch, ctx)` computes one column for all rows of `batch` (its data columns;
system columns after them are never referenced by an InputRef). Function calls go through
the scalar registry; literal arguments reach kernels as `pa.Scalar` so kernels can treat
constants (patterns, formats, scales) specially.

Conditional forms (`case`, `if`, `and`, `or`, `coalesce`, `ifnull`) are evaluated here, not
by their kernels, because Flink's generated code evaluates a branch only for rows that
reach it: `CASE WHEN v <> 0 THEN 100 / v END` must not raise `/ by zero` for v = 0.
A branch that cannot fail is evaluated over the whole batch (no copy); one that might
fail is evaluated over the selected rows only and scattered back.
"""

from __future__ import annotations

import decimal
from contextvars import ContextVar
from dataclasses import replace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.errors import EvaluationError
from runtime.expr.ir import Call, Expr, InputRef, Literal
from runtime.functions import registry
from runtime.functions.registry import EvalContext
from runtime.types import DataType

__all__ = ["evaluate", "evaluate_many", "literal_to_scalar", "broadcast", "EvalContext"]

# Functions whose kernels never raise on any input: a branch made only of these (and
# columns and literals) is evaluated over the whole batch instead of the selected rows.
_SAFE_FUNCTIONS = frozenset(
    {
        "plus",
        "minus",
        "times",
        "negate",
        "equals",
        "not_equals",
        "less_than",
        "less_than_or_equal",
        "greater_than",
        "greater_than_or_equal",
        "and",
        "or",
        "not",
        "is_null",
        "is_not_null",
        "is_true",
        "is_not_true",
        "is_false",
        "is_not_false",
        "is_distinct_from",
        "is_not_distinct_from",
        "case",
        "if",
        "coalesce",
        "ifnull",
        "nullif",
        "in",
        "try_cast",
        "greatest",
        "least",
        "item",
        "dot",
        "cardinality",
        "array",
        "abs",
        "sign",
        "like",
        "upper",
        "lower",
        "concat",
        "char_length",
    }
)

_CONDITIONAL = frozenset({"case", "if", "and", "or", "coalesce", "ifnull"})


# ---------------------------------------------------------------------- literals
def literal_value_to_py(value: Any, dtype: DataType) -> object:
    """Decode a Literal's JSON-able value (see `runtime.expr.ir.Literal`, whose `value` is
    `Any`: its shape depends on `dtype`) into the Python value Arrow accepts for
    `dtype.to_arrow()`."""
    if value is None:
        return None
    n = dtype.name
    if n == "DECIMAL":
        return decimal.Decimal(str(value))
    if n in ("DOUBLE", "FLOAT"):
        return float(value)
    if n in ("BINARY", "VARBINARY") and isinstance(value, str):
        return bytes.fromhex(value)
    if n == "ARRAY" or n == "MULTISET":
        return [literal_value_to_py(v, dtype.children[0]) for v in value]
    if n == "MAP":
        items = value.items() if isinstance(value, dict) else value
        return [
            (literal_value_to_py(k, dtype.children[0]), literal_value_to_py(v, dtype.children[1])) for k, v in items
        ]
    if n == "ROW":
        vals = value.values() if isinstance(value, dict) else value
        return {
            fn: literal_value_to_py(v, ft) for fn, ft, v in zip(dtype.field_names, dtype.children, vals, strict=True)
        }
    return value


_SCALARS: dict[int, tuple[Literal, pa.Scalar]] = {}


def literal_to_scalar(lit: Literal) -> pa.Scalar:
    """The Arrow scalar of a literal, of type `lit.type.to_arrow()` (cached per literal
    object: plans evaluate the same literals for every batch)."""
    hit = _SCALARS.get(id(lit))
    if hit is not None and hit[0] is lit:
        return hit[1]
    scalar = pa.scalar(literal_value_to_py(lit.value, lit.type), type=lit.type.to_arrow())
    if len(_SCALARS) > 4096:
        _SCALARS.clear()
    _SCALARS[id(lit)] = (lit, scalar)
    return scalar


def broadcast(value: pa.Scalar, num_rows: int) -> pa.Array:
    """An array of `num_rows` copies of a scalar."""
    return pa.repeat(value, num_rows)


# ---------------------------------------------------------------------- evaluation
def evaluate(expr: Expr, batch: pa.RecordBatch, ctx: EvalContext | None = None) -> pa.Array:
    """The value of `expr` for every row of `batch`, as an array of `expr.type.to_arrow()`."""
    if ctx is None or ctx.num_rows != batch.num_rows:
        ctx = EvalContext(batch.num_rows) if ctx is None else replace(ctx, num_rows=batch.num_rows, watermarks=None)
    v = _eval(expr, batch, ctx)
    if isinstance(v, pa.Scalar):
        v = broadcast(v, batch.num_rows)
    return v


# Common subexpressions: per list of expressions (Calc passes the same list every batch),
# the deterministic calls occurring more than once, each mapped to one representative's
# id. While `evaluate_many` runs, `_MEMO` holds that map and the results computed so far,
# keyed by (representative id, id(batch)); the batch is kept in the value so its id cannot
# be reused meanwhile. A query repeating an expression (q21: LOWER(channel) in four CASE
# branches) computes it once per batch, and nothing is hashed per batch.
_Memo = tuple[dict[int, int], dict[tuple[int, int], tuple[pa.RecordBatch, pa.Array | pa.Scalar]]]
_MEMO: ContextVar[_Memo | None] = ContextVar("streamsql_eval_memo", default=None)
_SHARED: dict[int, tuple[object, dict[int, int]]] = {}


def _shared_calls(exprs: list[Expr] | tuple[Expr, ...]) -> dict[int, int]:
    hit = _SHARED.get(id(exprs))
    if hit is not None and hit[0] is exprs:
        return hit[1]
    first: dict[Call, Call] = {}
    groups: dict[int, int] = {}
    stack: list[Expr] = list(exprs)
    while stack:  # walk of the expression trees, once per list
        e = stack.pop()
        if not isinstance(e, Call):
            continue
        stack.extend(e.args)
        fn = registry.lookup(e.name.lower()) if e.name.lower() not in _CONDITIONAL else None
        if fn is None or not fn.deterministic or not e.args:
            continue
        try:
            rep = first.get(e)
        except TypeError:  # an unhashable literal value (e.g. a list)
            continue
        if rep is None:
            first[e] = e
        else:  # a second occurrence (an equal call, or the same object again)
            groups[id(rep)] = id(rep)
            groups[id(e)] = id(rep)
    if len(_SHARED) > 256:
        _SHARED.clear()
    _SHARED[id(exprs)] = (exprs, groups)
    return groups


def evaluate_many(
    exprs: list[Expr] | tuple[Expr, ...], batch: pa.RecordBatch, ctx: EvalContext | None = None
) -> list[pa.Array]:
    """`evaluate` for several expressions over the same batch (common subexpressions
    evaluated once)."""
    groups = _shared_calls(exprs) if len(exprs) else {}
    if not groups or _MEMO.get() is not None:
        return [evaluate(e, batch, ctx) for e in exprs]
    token = _MEMO.set((groups, {}))
    try:
        return [evaluate(e, batch, ctx) for e in exprs]
    finally:
        _MEMO.reset(token)


def _eval(expr: Expr, batch: pa.RecordBatch, ctx: EvalContext) -> pa.Array | pa.Scalar:
    """Like `evaluate` but a literal (or a call returning a constant) stays a Scalar."""
    if isinstance(expr, InputRef):
        col = batch.column(expr.index)
        if isinstance(col, pa.ChunkedArray):
            col = col.combine_chunks()
        return col
    if isinstance(expr, Literal):
        return literal_to_scalar(expr)
    if not isinstance(expr, Call):
        raise TypeError(f"not an expression: {expr!r}")
    name = expr.name.lower()
    if name in _CONDITIONAL:
        return _eval_conditional(name, expr, batch, ctx)
    fn = registry.lookup(name)
    if fn is None:
        raise EvaluationError(f"unknown function: {expr.name}")
    memo = _MEMO.get()
    key: tuple[int, int] | None = None
    if memo is not None and id(expr) in memo[0]:
        key = (memo[0][id(expr)], id(batch))
        hit = memo[1].get(key)
        if hit is not None and hit[0] is batch:
            return hit[1]
    args = [_eval(a, batch, ctx) for a in expr.args]
    arg_types = [a.type for a in expr.args]
    call_ctx = ctx if fn.deterministic or ctx.state is None else replace(ctx, call_key=id(expr))
    out = _conform(fn.kernel(args, arg_types, expr.type, call_ctx), expr.type)
    if memo is not None and key is not None:
        memo[1][key] = (batch, out)
    return out


def _conform(v: pa.Array | pa.Scalar, dtype: DataType) -> pa.Array | pa.Scalar:
    """Make a kernel's output carry exactly the Arrow type of its declared result type."""
    target = dtype.to_arrow()
    if isinstance(v, pa.ChunkedArray):
        v = v.combine_chunks()
    if v.type != target:
        v = v.cast(target, safe=False)
    return v


def _full(v: pa.Array | pa.Scalar, n: int) -> pa.Array:
    if isinstance(v, pa.Scalar):
        return broadcast(v, n)
    return v


def _can_fail(expr: Expr) -> bool:
    if isinstance(expr, Call):
        if expr.name.lower() not in _SAFE_FUNCTIONS:
            return True
        return any(_can_fail(a) for a in expr.args)
    return False


def _eval_where(expr: Expr, batch: pa.RecordBatch, ctx: EvalContext, mask: np.ndarray) -> pa.Array:
    """`expr` over the rows where `mask` is set (values elsewhere are unspecified: null or
    computed). Only evaluates the selected rows when the expression might raise."""
    n = batch.num_rows
    if isinstance(expr, (InputRef, Literal)) or not _can_fail(expr) or mask.all():
        return _full(_eval(expr, batch, ctx), n)
    target = expr.type.to_arrow()
    idx = np.flatnonzero(mask)
    if len(idx) == 0:
        return pa.nulls(n, target)
    sub = _take_referenced(expr, batch, idx)
    wms = None if ctx.watermarks is None else ctx.watermarks[idx]
    vals = _full(_eval(expr, sub, replace(ctx, num_rows=len(idx), watermarks=wms)), len(idx))
    # scatter back: position of each row inside `vals`, null where not selected
    pos = np.full(n, -1, dtype=np.int64)
    pos[idx] = np.arange(len(idx))
    pos_arr = pa.array(pos, mask=pos < 0)
    return vals.take(pos_arr)


def _input_refs(expr: Expr, acc: set[int]) -> set[int]:
    if isinstance(expr, InputRef):
        acc.add(expr.index)
    elif isinstance(expr, Call):
        for a in expr.args:
            _input_refs(a, acc)
    return acc


def _take_referenced(expr: Expr, batch: pa.RecordBatch, idx: np.ndarray) -> pa.RecordBatch:
    """The rows `idx` of `batch`, copying only the columns `expr` reads (the others become
    all-null placeholders of the same type, so column positions stay valid): a CASE branch
    over one column of a wide batch must not gather the whole batch."""
    used = _input_refs(expr, set())
    take = pa.array(idx)
    cols = [
        c.take(take) if i in used else pa.nulls(len(idx), c.type)  # type: ignore[arg-type]
        for i, c in enumerate(batch.columns)
    ]
    return pa.RecordBatch.from_arrays(cols, schema=batch.schema)


def _bool_parts(v: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(is_true, is_null) numpy masks of a boolean array."""
    isnull = v.is_null().to_numpy(zero_copy_only=False)
    true = pc.fill_null(v, False).to_numpy(zero_copy_only=False).astype(bool)
    return true, isnull


def _eval_conditional(name: str, expr: Call, batch: pa.RecordBatch, ctx: EvalContext) -> pa.Array | pa.Scalar:
    n = batch.num_rows
    args = expr.args
    target = expr.type.to_arrow()
    if name in ("and", "or"):
        return _eval_and_or(name == "and", args, batch, ctx)
    if name in ("coalesce", "ifnull"):
        pending = np.ones(n, dtype=bool)
        result: pa.Array | None = None
        for a in args:
            v = _eval_where(a, batch, ctx, pending)
            v = _conform(v, expr.type)
            if result is None:
                result = v
            else:
                result = pc.if_else(pa.array(pending), v, result)
            pending = pending & v.is_null().to_numpy(zero_copy_only=False)
            if not pending.any():
                break
        assert result is not None
        return result
    # case / if: (c1, v1, c2, v2, ..., else)
    pairs = list(args)
    if name == "if":
        pairs = [args[0], args[1], args[2]]
    if len(pairs) % 2 == 0:
        pairs.append(Literal(None, expr.type))
    pending = np.ones(n, dtype=bool)
    conds: list[np.ndarray] = []
    values: list[pa.Array] = []
    for i in range(0, len(pairs) - 1, 2):
        if not pending.any():
            break
        c = _full(_eval_where(pairs[i], batch, ctx, pending), n)
        true, _ = _bool_parts(c)
        hit = true & pending
        conds.append(hit)
        values.append(
            _conform(_eval_where(pairs[i + 1], batch, ctx, hit), expr.type) if hit.any() else pa.nulls(n, target)
        )
        pending = pending & ~hit
    if pending.any():
        conds.append(pending)
        values.append(_conform(_eval_where(pairs[-1], batch, ctx, pending), expr.type))
    if not conds:
        return pa.nulls(n, target)
    return _select(conds, values, n, target)


def _select(conds: list[np.ndarray], values: list[pa.Array], n: int, target: pa.DataType) -> pa.Array:
    """Row i takes values[k][i] for the first k with conds[k][i] (null if none)."""
    if len(values) == 1:
        v = values[0]
        if conds[0].all():
            return v
        return pc.if_else(pa.array(conds[0]), v, pa.nulls(n, target))
    # choice index per row, then one take over the concatenation (works for nested types)
    choice = np.full(n, -1, dtype=np.int64)
    for k in range(len(conds) - 1, -1, -1):
        choice[conds[k]] = k
    pos = np.where(choice >= 0, choice * n + np.arange(n), -1)
    combined = pa.concat_arrays([v.cast(target) if v.type != target else v for v in values])
    return combined.take(pa.array(pos, mask=pos < 0))


def _eval_and_or(is_and: bool, args: tuple[Expr, ...], batch: pa.RecordBatch, ctx: EvalContext) -> pa.Array:
    """Three-valued AND/OR; an operand is evaluated only where the result is still open
    (AND: not yet FALSE; OR: not yet TRUE), as Flink's generated code does."""
    n = batch.num_rows
    decided = np.zeros(n, dtype=bool)  # FALSE found (AND) / TRUE found (OR)
    any_null = np.zeros(n, dtype=bool)
    for a in args:
        open_rows = ~decided
        if not open_rows.any():
            break
        v = _full(_eval_where(a, batch, ctx, open_rows), n)
        true, isnull = _bool_parts(v)
        if is_and:
            hit = ~true & ~isnull & open_rows
        else:
            hit = true & open_rows
        decided |= hit
        any_null |= isnull & open_rows
    if is_and:
        values = ~decided  # TRUE unless a FALSE was seen
    else:
        values = decided
    nulls = ~decided & any_null
    return pa.array(values, type=pa.bool_(), mask=nulls)
