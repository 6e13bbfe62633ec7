"""Calc: projections and an optional filter condition (Flink's StreamExecCalc)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from runtime.batch import ROW_KIND, ROW_WATERMARK, data_columns
from runtime.graph import Node
from runtime.operators._common import eval_context, make_batch, system_column
from runtime.operators.base import Operator, OperatorContext, Output, register_operator


@register_operator("Calc")
class CalcOperator(Operator):
    """Filters first (a NULL condition drops the row), then projects the kept rows, so a
    projection never fails on a row the condition removed (Flink's generated code does the
    same). `__op` / `__wm` of the kept rows are carried over."""

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        self.projections = list(node.params.get("projections") or [])
        self.condition = node.params.get("condition")

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        from runtime.expr.evaluator import evaluate, evaluate_many

        data = data_columns(batch)
        if self.condition is not None:
            cond = evaluate(self.condition, data, eval_context(self.ctx, data.num_rows))
            mask = pc.fill_null(cond, False)
            if not pc.all(mask).as_py():
                batch = batch.filter(mask)
                data = data_columns(batch)
        if batch.num_rows == 0:
            return
        arrays = evaluate_many(self.projections, data, eval_context(self.ctx, data.num_rows))
        kinds = system_column(batch, ROW_KIND)
        wms = system_column(batch, ROW_WATERMARK)
        out.emit(make_batch(self.node, arrays, kinds, wms))
