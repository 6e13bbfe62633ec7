"""Helpers shared by the operator modules (not an operator: the loader skips `_` modules)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from runtime.batch import ROW_KIND, ROW_WATERMARK
from runtime.config.core import QUERY_START_KEY, STATEMENT_START_MS
from runtime.functions.registry import EvalContext
from runtime.graph import Node
from runtime.operators.base import OperatorContext
from runtime.state.ttl import now_ms as processing_time_ms


def eval_context(ctx: OperatorContext, num_rows: int, watermarks: np.ndarray | None = None) -> EvalContext:
    """The expression context for a batch: session time zone, the statement start
    (config `table.exec.statement-start-ms` when the caller fixed it, else now: the
    processing-time clock PROCTIME() and state TTL read, `runtime.state.ttl.now_ms`) and,
    where the operator passes them, the rows' watermarks (the batch's `__wm`)."""
    now = STATEMENT_START_MS.get(ctx.config)
    now_ms = now if now is not None else processing_time_ms()
    query_now_ms = None
    if ctx.is_batch:
        start = (ctx.config or {}).get(QUERY_START_KEY)
        query_now_ms = now if now is not None else int(start) if start is not None else None
    return EvalContext(
        num_rows=num_rows,
        time_zone=ctx.time_zone,
        now_ms=now_ms,
        query_now_ms=query_now_ms,
        config=ctx.config or {},
        watermarks=watermarks,
        state=ctx.function_state,
    )


def emits_update_before(node: Node) -> bool:
    """Whether the operator emits -U before its +U: the node's changelog mode has UB, or it
    has no updates at all (BATCH, an insert-only node; nothing to leave out). The planner
    leaves UB out of the mode where every consumer does without -U (planner/changelog.py
    `require_update_before`); the operators that can (`OperatorSpec.drops_update_before`)
    then emit their +U alone, as Flink's operators with generateUpdateBefore false."""
    kinds = (node.changelog_mode or "I").split(",")
    return "UB" in kinds or "UA" not in kinds


def conform(array: pa.Array | pa.ChunkedArray, target: pa.DataType) -> pa.Array:
    """`array` as `target` when the layouts differ (e.g. a CHAR literal column typed
    by the node as VARCHAR); left as is when the cast is not possible."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if array.type == target:
        return array
    try:
        return array.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return array


def make_batch(
    node: Node,
    arrays: list[pa.Array],
    kinds: np.ndarray | pa.Array | None = None,
    watermarks: np.ndarray | pa.Array | None = None,
) -> pa.RecordBatch:
    """A batch with the node's output column names and Arrow types, plus system columns."""
    fields: list[pa.Field] = []
    cols: list[pa.Array] = []
    for i, a in enumerate(arrays):
        if i < len(node.schema):
            f = node.schema[i]
            a = conform(a, f.type.to_arrow())
            fields.append(pa.field(f.name, a.type))
        else:
            fields.append(pa.field(f"f{i}", a.type))
        cols.append(a)
    if kinds is not None:
        cols.append(kinds if isinstance(kinds, pa.Array) else pa.array(kinds, type=pa.int8()))
        fields.append(pa.field(ROW_KIND, pa.int8(), False))
    if watermarks is not None:
        cols.append(watermarks if isinstance(watermarks, pa.Array) else pa.array(watermarks, type=pa.int64()))
        fields.append(pa.field(ROW_WATERMARK, pa.int64(), False))
    return pa.RecordBatch.from_arrays(cols, schema=pa.schema(fields))


def system_column(batch: pa.RecordBatch, name: str) -> pa.Array | None:
    idx = batch.schema.get_field_index(name)
    return batch.column(idx) if idx >= 0 else None


def empty_batch(node: Node) -> pa.RecordBatch:
    return make_batch(node, [pa.array([], type=f.type.to_arrow()) for f in node.schema])
