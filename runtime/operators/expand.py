"""Expand: replicate each row once per projection list (GROUPING SETS / ROLLUP / CUBE;
Flink's StreamExecExpand / BatchExecExpand)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from runtime.batch import ROW_KIND, ROW_WATERMARK, data_columns
from runtime.graph import Node
from runtime.operators._common import eval_context, make_batch, system_column
from runtime.operators.base import Operator, OperatorContext, Output, register_operator


@register_operator("Expand")
class ExpandOperator(Operator):
    """Evaluates every projection list over the whole batch (vectorized), then interleaves
    the results row-major (row 0 set 0, row 0 set 1, ..., row 1 set 0, ...) as Flink emits
    them, so order-sensitive aggregates (LISTAGG, FIRST_VALUE) see arrival order. Row kinds
    and `__wm` are replicated with their row: a retraction expands into retractions."""

    checkpointing = "stateless"

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        self.projects: list[list] = [list(p) for p in node.params.get("projects") or []]

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        from runtime.expr.evaluator import evaluate_many

        data = data_columns(batch)
        n = data.num_rows
        if n == 0 or not self.projects:
            return
        k = len(self.projects)
        ectx = eval_context(self.ctx, n)
        per_set = [evaluate_many(p, data, ectx) for p in self.projects]
        types = [f.type.to_arrow() for f in self.node.schema]
        # position of (row r, set s) in the concatenation is s * n + r; emit row-major
        order = pa.array((np.arange(k, dtype=np.int64)[None, :] * n + np.arange(n, dtype=np.int64)[:, None]).ravel())
        cols = []
        for j, t in enumerate(types):
            parts = [_as_type(arrs[j], t, n) for arrs in per_set]
            cols.append(pa.concat_arrays(parts).take(order))
        kinds = system_column(batch, ROW_KIND)
        wms = system_column(batch, ROW_WATERMARK)
        rep_kinds = None if kinds is None else np.repeat(kinds.to_numpy(zero_copy_only=False), k)
        rep_wms = None if wms is None else np.repeat(wms.to_numpy(zero_copy_only=False), k)
        out.emit(make_batch(self.node, cols, rep_kinds, rep_wms))


def _as_type(a: pa.Array | pa.ChunkedArray, t: pa.DataType, n: int) -> pa.Array:
    if isinstance(a, pa.ChunkedArray):
        a = a.combine_chunks()
    if a.type == t:
        return a
    if pa.types.is_null(a.type):
        return pa.nulls(n, type=t)
    return a.cast(t)
