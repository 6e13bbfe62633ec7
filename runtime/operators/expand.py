"""Expand: replicate each row once per projection list (GROUPING SETS / ROLLUP / CUBE;
Flink's StreamExecExpand / BatchExecExpand)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from runtime.batch import ROW_KIND, ROW_WATERMARK, data_columns
from runtime.expr.evaluator import evaluate_many
from runtime.expr.ir import Expr, InputRef, Literal
from runtime.frozen import frozen_dataclass
from runtime.graph import Node
from runtime.operators._common import eval_context, make_batch, system_column
from runtime.operators.base import Operator, OperatorContext, Output
from runtime.operators.spec import OperatorParams, OperatorSpec, PlanView, SparkCapability, register_spec
from runtime.plan_text import format_expr


@frozen_dataclass
class ExpandParams(OperatorParams):
    """One projection list per output copy of each row (one Expr per output column);
    `expand_id_index` is the output column holding Flink's expand id (`$e`)."""

    projects: tuple[tuple[Expr, ...], ...]
    expand_id_index: int


class ExpandOperator(Operator):
    """Evaluates every projection list over the whole batch (vectorized), then interleaves
    the results row-major (row 0 set 0, row 0 set 1, ..., row 1 set 0, ...) as Flink emits
    them, so order-sensitive aggregates (LISTAGG, FIRST_VALUE) see arrival order. Row kinds
    and `__wm` are replicated with their row: a retraction expands into retractions."""

    checkpointing = "stateless"

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        self.projects: list[list[Expr]] = [list(p) for p in ExpandParams.of(node).projects]

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
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


def projects_text(projects: Sequence[Sequence[Expr]], in_names: list[str] | None, out: list[str]) -> str:
    """`{a, null AS b, 1 AS $e}, ...` as EXPLAIN shows the projection lists."""
    parts = []
    for proj in projects:
        items = []
        for e, name in zip(proj, out, strict=True):
            if isinstance(e, InputRef) and in_names is not None and in_names[e.index] == name:
                items.append(name)
            elif isinstance(e, Literal) and e.value is None:
                items.append(f"null AS {name}")
            elif isinstance(e, Literal):
                items.append(f"{e.value} AS {name}")
            else:
                items.append(f"{format_expr(e, in_names)} AS {name}")
        parts.append("{" + ", ".join(items) + "}")
    return ", ".join(parts)


class ExpandSpec(OperatorSpec[ExpandParams]):
    """Row-wise and stateless; forwards row kinds (a retraction expands into retractions)."""

    name = "Expand"
    forwards_update_before = True  # row-wise: each row keeps its kind
    params_type = ExpandParams
    operator_class = ExpandOperator
    parallel = True
    rescalable = True
    spark = SparkCapability(True, True, "GROUPING SETS / ROLLUP / CUBE: one projection per set, `unionByName`.")

    def batch_changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str | None:
        return inputs[0].changelog_mode

    def explain(self, node: PlanView) -> list[str]:
        in_names = [f.name for f in node.inputs[0].fields]
        out = [f.name for f in node.fields]
        return [f"projects=[{projects_text(self.params(node).projects, in_names, out)}]"]


EXPAND = register_spec(ExpandSpec())
