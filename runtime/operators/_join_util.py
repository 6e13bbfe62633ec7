"""Vectorized building blocks of the time-bounded joins (IntervalJoin, WindowJoin,
TemporalJoin, LookupJoin); not an operator (the loader skips `_` modules).

A join step always works the same way: find the candidate (left row, right row) index
pairs with an Arrow hash join on the equi-keys (NULL keys never match, as in SQL), narrow
them with vectorized numpy tests (time ranges), evaluate the residual condition over the
gathered pairs, then gather the output columns (NULL-padding the outer side where needed).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.batch import INSERT, data_columns, row_kinds
from runtime.errors import JobError
from runtime.expr.evaluator import evaluate
from runtime.expr.ir import Expr
from runtime.graph import Node
from runtime.operators._common import eval_context, make_batch
from runtime.operators.base import OperatorContext
from runtime.operators.spec import PlanRefusedError, PlanView

EMPTY = np.zeros(0, dtype=np.int64)


def instant_ms(array: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """(ms as int64, validity) of a time column: the same scale watermarks use (wall-clock
    ms for TIMESTAMP, epoch ms for TIMESTAMP_LTZ)."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    n = len(array)
    valid = pc.is_valid(array).to_numpy(zero_copy_only=False) if array.null_count else np.ones(n, dtype=bool)
    if pa.types.is_timestamp(array.type):
        array = array.cast(pa.timestamp(array.type.unit)).cast(pa.timestamp("ms"), safe=False)
    ms = array.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    return ms.astype(np.int64, copy=False), valid


def insert_only(batch: pa.RecordBatch, operator: str) -> pa.RecordBatch:
    """The batch's data columns; refuses update/delete rows (the operator is append-only)."""
    if (row_kinds(batch) != INSERT).any():
        raise JobError(f"{operator} doesn't support consuming update and delete changes")
    return data_columns(batch)


def _align(a: pa.Array, b: pa.Array) -> tuple[pa.Array, pa.Array]:
    """Give two key columns one Arrow type so the hash join can compare them."""
    if a.type == b.type:
        return a, b
    for x, y in ((a, b), (b, a)):
        try:
            y2 = y.cast(x.type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            continue
        return (x, y2) if x is a else (y2, x)
    return a.cast(pa.string()), b.cast(pa.string())


def key_pairs(
    left_keys: list[pa.Array], right_keys: list[pa.Array], n_left: int, n_right: int
) -> tuple[np.ndarray, np.ndarray]:
    """(left index, right index) of every pair whose keys are equal (and not NULL), sorted
    by left index then right index (so the output order is deterministic)."""
    if n_left == 0 or n_right == 0:
        return EMPTY, EMPTY
    if not left_keys:
        li = np.repeat(np.arange(n_left, dtype=np.int64), n_right)
        ri = np.tile(np.arange(n_right, dtype=np.int64), n_left)
        return li, ri
    lcols: dict[str, Any] = {}
    rcols: dict[str, Any] = {}
    for i, (a, b) in enumerate(zip(left_keys, right_keys, strict=True)):
        a = a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a
        b = b.combine_chunks() if isinstance(b, pa.ChunkedArray) else b
        if pa.types.is_dictionary(a.type):
            a = a.dictionary_decode()
        if pa.types.is_dictionary(b.type):
            b = b.dictionary_decode()
        a, b = _align(a, b)
        lcols[f"k{i}"] = a
        rcols[f"k{i}"] = b
    lcols["__l"] = pa.array(np.arange(n_left, dtype=np.int64))
    rcols["__r"] = pa.array(np.arange(n_right, dtype=np.int64))
    names = [f"k{i}" for i in range(len(left_keys))]
    joined = pa.table(lcols).join(pa.table(rcols), keys=names, join_type="inner", use_threads=False)
    li = joined.column("__l").to_numpy().astype(np.int64, copy=False)
    ri = joined.column("__r").to_numpy().astype(np.int64, copy=False)
    order = np.lexsort((ri, li))
    return li[order], ri[order]


def gather(table: pa.Table | pa.RecordBatch, idx: np.ndarray) -> list[pa.Array]:
    """`table`'s columns at rows `idx`."""
    take = pa.array(idx, type=pa.int64())
    out = []
    for c in table.columns:
        col = c.take(take)
        out.append(col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col)
    return out


def residual_mask(
    condition: Expr | None,
    left_cols: list[pa.Array],
    right_cols: list[pa.Array],
    ctx: OperatorContext,
) -> np.ndarray | None:
    """Where the residual condition holds (NULL = false) over the gathered pairs; None when
    there is no condition."""
    if condition is None:
        return None
    cols = left_cols + right_cols
    n = len(cols[0]) if cols else 0
    if n == 0:
        return np.zeros(0, dtype=bool)
    batch = pa.RecordBatch.from_arrays(cols, names=[f"c{i}" for i in range(len(cols))])
    res = evaluate(condition, batch, eval_context(ctx, n))
    if isinstance(res, pa.ChunkedArray):
        res = res.combine_chunks()
    return res.fill_null(False).to_numpy(zero_copy_only=False).astype(bool)


def null_columns(types: list[pa.DataType], n: int) -> list[pa.Array]:
    return [pa.nulls(n, type=t) for t in types]


def joined_batch(
    node: Node,
    left: pa.Table | pa.RecordBatch | None,
    right: pa.Table | pa.RecordBatch | None,
    li: np.ndarray,
    ri: np.ndarray,
    left_types: list[pa.DataType],
    right_types: list[pa.DataType],
    kinds: np.ndarray | None = None,
) -> pa.RecordBatch | None:
    """Output rows for pairs (li, ri); an index of -1 (or a None side) NULL-pads that side.
    `kinds` (row kinds) default to +I."""
    n = len(li)
    if n == 0:
        return None
    cols: list[pa.Array] = []
    for side, idx, types in ((left, li, left_types), (right, ri, right_types)):
        if side is None or (idx < 0).all():
            cols += null_columns(types, n)
        elif (idx < 0).any():
            mask = pa.array(idx < 0)
            safe = np.where(idx < 0, 0, idx)
            for c in gather(side, safe):
                cols.append(pc.if_else(mask, pa.nulls(n, type=c.type), c))
        else:
            cols += gather(side, idx)
    if kinds is None:
        kinds = np.zeros(n, dtype=np.int8)
    return make_batch(node, cols, kinds)


def concat(a: pa.Table | None, b: pa.RecordBatch | pa.Table) -> pa.Table:
    """Append rows to a state table (schemas unified by column position)."""
    tb = b if isinstance(b, pa.Table) else pa.Table.from_batches([b])
    if a is None or a.num_rows == 0:
        return tb
    if tb.schema != a.schema:
        tb = pa.Table.from_arrays([c.cast(t) for c, t in zip(tb.columns, a.schema.types, strict=True)], schema=a.schema)
    return pa.concat_tables([a, tb]).combine_chunks()


# ---------------------------------------------------------------------- EXPLAIN
# Flink's joinType names, by the params' join kind.
JOIN_TYPE_NAMES = {
    "INNER": "InnerJoin",
    "LEFT": "LeftOuterJoin",
    "RIGHT": "RightOuterJoin",
    "FULL": "FullOuterJoin",
    "SEMI": "LeftSemiJoin",
    "ANTI": "LeftAntiJoin",
}


def join_type_name(kind: str) -> str:
    return JOIN_TYPE_NAMES.get(kind, kind)


def unique_names(names: list[str]) -> list[str]:
    """Calcite's names of a concatenated row: a repeated `k` becomes `k0`, `k1`, ..."""
    out: list[str] = []
    seen: set[str] = set()
    for n in names:
        cand = n
        i = 0
        while cand in seen:
            cand = f"{n}{i}"
            i += 1
        seen.add(cand)
        out.append(cand)
    return out


def join_names(node: PlanView) -> list[str]:
    """The names of a two-input join node's concatenated row (a spec's PlanView)."""
    return unique_names([f.name for f in node.inputs[0].fields] + [f.name for f in node.inputs[1].fields])


def require_insert_only(operator: str, inputs: Sequence[PlanView]) -> str:
    """The changelog mode of a join that consumes and emits insert-only rows (IntervalJoin,
    WindowJoin): "I", or PlanRefusedError for an updating input."""
    for i in inputs:
        if i.changelog_mode != "I":
            raise PlanRefusedError(
                f"{operator} doesn't support consuming update and delete changes "
                f"(input changelog mode [{i.changelog_mode}])"
            )
    return "I"
