"""Calc: projections and an optional filter condition (Flink's StreamExecCalc)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from runtime.batch import ROW_KIND, ROW_WATERMARK, data_columns
from runtime.expr.ir import Call, Expr, InputRef, Literal
from runtime.graph import Node
from runtime.operators._common import eval_context, make_batch, system_column
from runtime.operators.base import Operator, OperatorContext, Output, register_operator


def _is_access(expr: Any) -> bool:
    """A column or a (nested) field of one, or a literal: zero-copy over the whole batch and
    never failing, so it may be computed before the filter."""
    if isinstance(expr, (InputRef, Literal)):
        return True
    return (
        isinstance(expr, Call)
        and expr.name.lower() == "dot"
        and len(expr.args) == 2
        and _is_access(expr.args[0])
        and isinstance(expr.args[1], Literal)
    )


def _refs(expr: Any, acc: set[int]) -> set[int]:
    if isinstance(expr, InputRef):
        acc.add(expr.index)
    elif isinstance(expr, Call):
        for a in expr.args:
            _refs(a, acc)
    return acc


@register_operator("Calc")
class CalcOperator(Operator):
    """Filters first (a NULL condition drops the row), then projects the kept rows, so a
    projection never fails on a row the condition removed (Flink's generated code does the
    same). `__op` / `__wm` of the kept rows are carried over.

    Two shortcuts keep the filter from copying data nobody reads (it is a gather of every
    column it keeps): when every projection is a column / field access (which cannot fail)
    the projections are taken first and only their results are filtered; otherwise only the
    columns the projections read are filtered."""

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        self.projections: list[Expr] = list(node.params.get("projections") or [])
        self.condition = node.params.get("condition")
        self.project_first = all(_is_access(p) for p in self.projections)
        used: set[int] = set()
        for p in self.projections:
            _refs(p, used)
        self.used = used

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        from runtime.expr.evaluator import evaluate, evaluate_many

        data = data_columns(batch)
        mask: pa.Array | None = None
        if self.condition is not None:
            cond = evaluate(self.condition, data, eval_context(self.ctx, data.num_rows))
            mask = pc.fill_null(cond, False)
            if pc.all(mask).as_py():
                mask = None
            elif self.project_first:
                if not pc.any(mask).as_py():
                    return
            else:
                batch = self._filter_used(batch, data.num_columns, mask)
                data = data_columns(batch)
                mask = None
        if batch.num_rows == 0:
            return
        arrays = evaluate_many(self.projections, data, eval_context(self.ctx, data.num_rows))
        kinds = system_column(batch, ROW_KIND)
        wms = system_column(batch, ROW_WATERMARK)
        result = make_batch(self.node, arrays, kinds, wms)
        out.emit(result if mask is None else result.filter(mask))

    def _filter_used(self, batch: pa.RecordBatch, width: int, mask: pa.Array) -> pa.RecordBatch:
        """`batch.filter(mask)`, but data columns no projection reads become null
        placeholders instead of being gathered."""
        if len(self.used) >= width:
            return batch.filter(mask)
        kept = pa.RecordBatch.from_arrays(
            [c for i, c in enumerate(batch.columns) if i in self.used or i >= width],
            names=[f.name for i, f in enumerate(batch.schema) if i in self.used or i >= width],
        ).filter(mask)
        cols, j = [], 0
        for i, f in enumerate(batch.schema):
            if i in self.used or i >= width:
                cols.append(kept.column(j))
                j += 1
            else:
                cols.append(pa.nulls(kept.num_rows, f.type))
        return pa.RecordBatch.from_arrays(cols, schema=batch.schema)
