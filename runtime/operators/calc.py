"""Calc: projections and an optional filter condition (Flink's StreamExecCalc)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from runtime.batch import ROW_KIND, ROW_SPLIT, ROW_WATERMARK, data_columns, row_watermarks
from runtime.expr.evaluator import evaluate, evaluate_many
from runtime.expr.ir import Call, Expr, InputRef, Literal, input_refs
from runtime.frozen import frozen_dataclass
from runtime.graph import Node
from runtime.operators._common import eval_context, make_batch, system_column
from runtime.operators.base import Operator, OperatorContext, Output
from runtime.operators.spec import OperatorParams, OperatorSpec, PlanView, SparkCapability, UpsertKeys, register_spec
from runtime.plan_text import format_expr


@frozen_dataclass
class CalcParams(OperatorParams):
    """Output column i is `projections[i]` over the input row; rows where `condition` is
    not TRUE are dropped first."""

    projections: tuple[Expr, ...]
    condition: Expr | None = None


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


class CalcOperator(Operator):
    """Filters first (a NULL condition drops the row), then projects the kept rows, so a
    projection never fails on a row the condition removed (Flink's generated code does the
    same). `__op` / `__wm` of the kept rows are carried over.

    Two shortcuts keep the filter from copying data nobody reads (it is a gather of every
    column it keeps): when every projection is a column / field access (which cannot fail)
    the projections are taken first and only their results are filtered; otherwise only the
    columns the projections read are filtered."""

    checkpointing = "stateless"

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        params = CalcParams.of(node)
        self.projections: list[Expr] = list(params.projections)
        self.condition = params.condition
        self.project_first = all(_is_access(e) for e in self.projections)
        used: set[int] = set()
        for e in self.projections:
            _refs(e, used)
        self.used = used

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        data = data_columns(batch)
        mask: pa.Array | None = None
        if self.condition is not None:
            cond = evaluate(self.condition, data, eval_context(self.ctx, data.num_rows, row_watermarks(batch)))
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
        arrays = evaluate_many(self.projections, data, eval_context(self.ctx, data.num_rows, row_watermarks(batch)))
        kinds = system_column(batch, ROW_KIND)
        wms = system_column(batch, ROW_WATERMARK)
        result = make_batch(self.node, arrays, kinds, wms)
        split = system_column(batch, ROW_SPLIT)
        if split is not None:  # per-split watermarks downstream (runtime/batch.py)
            result = result.append_column(pa.field(ROW_SPLIT, split.type, False), split)
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


class CalcSpec(OperatorSpec[CalcParams]):
    """Stateless and row-wise: runs wherever its input is, forwards the changelog."""

    name = "Calc"
    params_type = CalcParams
    operator_class = CalcOperator
    forwards_changelog = True
    parallel = True
    rescalable = True
    spark = SparkCapability(True, True, "Projections and filters; scalar functions from the runner's function table.")

    def input_update_before(
        self, node: PlanView, input_index: int, emit_update_before: bool, input_keys: UpsertKeys
    ) -> tuple[bool, ...]:
        """A filter over an upsert changelog (no -U) is right only on upsert-key columns: a +U
        that fails a filter on another column would leave the key's old row in place (Flink:
        FLINK-9528, refined by the upsert-key check)."""
        cond = self.params(node).condition
        if emit_update_before or cond is None:
            return (emit_update_before,)
        refs = input_refs(cond)
        return (False,) if any(refs <= k for k in input_keys or ()) else ()

    def upsert_keys(self, node: PlanView, inputs: Sequence[UpsertKeys]) -> UpsertKeys:
        """The input's keys whose columns all pass through unchanged (also through a sink's NOT
        NULL enforcer), at their output positions."""
        out: set[frozenset[int]] = set()
        at: dict[int, int] = {}
        for i, e in enumerate(self.params(node).projections):
            if isinstance(e, Call) and e.name == "enforce_not_null" and e.args:
                e = e.args[0]
            if isinstance(e, InputRef):
                at.setdefault(e.index, i)
        for key in inputs[0] or ():
            if all(k in at for k in key):
                out.add(frozenset(at[k] for k in key))
        return frozenset(out) if out else None

    def explain(self, node: PlanView) -> list[str]:
        p = self.params(node)
        in_names = [f.name for f in node.inputs[0].fields]
        sel = []
        for f, e in zip(node.fields, p.projections, strict=True):
            text = format_expr(e, in_names)
            sel.append(text if isinstance(e, InputRef) and text == f.name else f"{text} AS {f.name}")
        parts = [f"select=[{', '.join(sel)}]"]
        if p.condition is not None:
            parts.append(f"where=[{format_expr(p.condition, in_names)}]")
        return parts


CALC = register_spec(CalcSpec())
