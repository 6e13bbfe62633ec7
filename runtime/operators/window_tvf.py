"""WindowTableFunction: TUMBLE / HOP / CUMULATE as a table (no aggregation)."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from runtime.batch import ROW_KIND, ROW_WATERMARK, data_columns
from runtime.errors import JobError
from runtime.frozen import frozen_dataclass
from runtime.graph import Node
from runtime.operators._common import make_batch, system_column
from runtime.operators.base import Operator, OperatorContext, Output
from runtime.operators.spec import OperatorParams, OperatorSpec, PlanView, SparkCapability, register_spec
from runtime.operators.window_assign import assign_windows, is_ltz, rowtime_ms, window_prop_arrays
from runtime.plan_params import WindowParams
from runtime.plan_text import format_window

_PROPS = ["window_start", "window_end", "window_time"]


@frozen_dataclass
class WindowTableFunctionParams(OperatorParams):
    """Window `window` over the time column `time_index`."""

    window: WindowParams
    time_index: int


class WindowTableFunctionOperator(Operator):
    """Appends window_start, window_end, window_time to every row (one output row per
    window for HOP / CUMULATE). Rows are never dropped as late here (case 059): lateness is
    decided by the operator that consumes the windows. Rows with a NULL time are dropped."""

    checkpointing = "stateless"

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        params = WindowTableFunctionParams.of(node)
        self.spec = params.window
        if self.spec.kind.upper() == "SESSION":
            raise JobError("SESSION windows run as SessionWindowTableFunction (session_tvf.py), not here")
        self.time_index = params.time_index
        self.prop_types = [f.type.to_arrow() for f in node.schema[-3:]]

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        data = data_columns(batch)
        tcol = data.column(self.time_index)
        ts, valid = rowtime_ms(tcol, self.ctx.time_zone)
        if not valid.all():
            keep = pa.array(valid)
            batch, data, ts = batch.filter(keep), data.filter(keep), ts[valid]
        rows, start, end = assign_windows(self.spec, ts)
        take = pa.array(rows, type=pa.int64())
        cols = [c.take(take) for c in data.columns]
        cols += window_prop_arrays(start, end, _PROPS, self.prop_types, self.ctx.time_zone, is_ltz(tcol))
        kinds = system_column(batch, ROW_KIND)
        wms = system_column(batch, ROW_WATERMARK)
        out.emit(
            make_batch(
                self.node,
                cols,
                None if kinds is None else kinds.take(take),
                None if wms is None else wms.take(take),
            )
        )


class WindowTableFunctionSpec(OperatorSpec[WindowTableFunctionParams]):
    """Stateless and row-wise (never drops late rows): runs wherever its input is."""

    name = "WindowTableFunction"
    forwards_update_before = True  # row-wise: each row keeps its kind
    params_type = WindowTableFunctionParams
    operator_class = WindowTableFunctionOperator
    parallel = True
    rescalable = True
    spark = SparkCapability(
        True,
        True,
        "Window columns per row (TUMBLE / HOP / CUMULATE), stateless: rows are never dropped as late here "
        "(the consumer of the windows decides), rows with a NULL time are dropped, as in the local runner.",
    )

    def changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str:
        return "I"

    def explain(self, node: PlanView) -> list[str]:
        p = self.params(node)
        in_names = [f.name for f in node.inputs[0].fields]
        return [f"window=[{format_window(p.window, in_names[p.time_index])}]"]


WINDOW_TABLE_FUNCTION = register_spec(WindowTableFunctionSpec())
