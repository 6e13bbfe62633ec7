"""Local and global phases of a two-phase window aggregation (TUMBLE / HOP / CUMULATE;
planner/optimizer/two_phase_window_agg.py builds them and documents the partial layout).

LocalWindowAggregate: per input (mini-)batch, one row per (slice, key) with partial
accumulators, computed with one Arrow hash aggregation (`window_slicing.SlicedFold`, the
same pre-aggregation the one-phase WindowAggregate does inside itself), plus `$slice_end`.
It keeps nothing between batches, so it is "stateless" for checkpoints: there is no
buffer to flush before a barrier or a watermark. Lateness stays exact: a row that is late
for some of its windows (judged with its own `__wm`, as the one-phase operator does) keeps
a partial row of its own carrying that `__wm`; rows late for none of their windows are
merged and their partial row carries the minimum watermark (never late).

GlobalWindowAggregate: the WindowAggregate operator over partial rows: each partial row
is assigned to the windows of its slice, late (row, window) pairs are dropped against the
row's `__wm`, the rest merged into the per-(window, key) state (a MergedAggregateSet),
and windows fire on watermarks exactly as in WindowAggregate. Same checkpoint state
("generic", `state_merge` for rescaling) as WindowAggregate.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np
import pyarrow as pa

from runtime.batch import data_columns, row_watermarks
from runtime.frozen import frozen_dataclass
from runtime.graph import Node
from runtime.operators._common import make_batch
from runtime.operators.base import Operator, OperatorContext, Output
from runtime.operators.spec import (
    OperatorParams,
    OperatorSpec,
    PlanView,
    SparkCapability,
    insert_only_input,
    register_spec,
)
from runtime.operators.window_agg import (
    WINDOW_AGGREGATE,
    WindowAggregateOperator,
    WindowAggregateParams,
    WindowAggregateSpec,
    explain_window_aggregate,
)
from runtime.operators.window_assign import assign_windows, wall_to_instant, window_input
from runtime.operators.window_slicing import SlicedFold
from runtime.plan_params import AggCallParams, WindowParams
from runtime.plan_text import format_agg, format_window
from runtime.types import Field


@frozen_dataclass
class LocalWindowAggregateParams(OperatorParams):
    """The local phase: per (slice of `window`, `grouping` keys) the partial accumulators of
    `aggs` in output columns `partials[i]`, the row count in `count1`, the slice end in
    `slice_end`; `time_index` is the input's time column."""

    window: WindowParams
    time_index: int
    grouping: tuple[int, ...]
    aggs: tuple[AggCallParams, ...]
    partials: tuple[tuple[int, ...], ...]
    count1: int
    slice_end: int


@frozen_dataclass
class GlobalWindowAggregateParams(WindowAggregateParams):
    """The global phase: a WindowAggregate over partial rows (`time_index` = `slice_end`,
    the partial rows' slice end column; `partials` / `count1` as in the local phase;
    `ltz`: the time attribute is TIMESTAMP_LTZ)."""

    partials: tuple[tuple[int, ...], ...] = ()
    count1: int = 0
    slice_end: int = 0
    ltz: bool = False


class LocalWindowAggregateOperator(Operator):
    """Pre-aggregates each batch per (slice, key) into partial rows (module docstring)."""

    checkpointing = "stateless"  # nothing is kept between batches

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        p = LocalWindowAggregateParams.of(node)
        self.spec: WindowParams = p.window
        self.time_index = p.time_index
        self.grouping: list[int] = list(p.grouping)
        self.calls: list[AggCallParams] = list(p.aggs)
        self.sliced = SlicedFold(self.spec, self.calls, self.grouping)

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        taken = window_input(batch, self.time_index, self.ctx.time_zone, self.ctx.is_batch, WINDOW_AGGREGATE.name)
        if taken is None or taken[0].num_rows == 0:
            return
        data, ts, wms, ltz = taken
        sl = self.sliced
        late_some = None
        starts = sl.slice_start(ts)
        if wms is not None:
            first_end = sl.first_end(starts) - 1
            timer = wall_to_instant(first_end, self.ctx.time_zone) if ltz else first_end
            late_some = timer <= wms
        partials, slice_start, pwm = sl.partials(data, ts, wms, late_some, slice_start=starts)
        cols = [*partials.columns, pa.array(slice_start + sl.unit, type=pa.int64())]
        out.emit(make_batch(self.node, cols, None, None if wms is None else pwm))


class GlobalWindowAggregateOperator(WindowAggregateOperator):
    """Merges LocalWindowAggregate's partial rows into window state and fires windows as
    WindowAggregate does (module docstring)."""

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        p = GlobalWindowAggregateParams.of(node)
        self.slice_end = p.slice_end
        self.ltz = p.ltz
        self.sliced = SlicedFold(self.spec, self.calls, self.grouping)
        self.slicing_checked = True

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        data = data_columns(batch)
        if data.num_rows == 0:
            return
        assert self.sliced is not None
        slice_end = data.column(self.slice_end).to_numpy(zero_copy_only=False).astype(np.int64)
        partials = pa.RecordBatch.from_arrays(
            data.columns[: self.slice_end], schema=pa.schema(list(data.schema)[: self.slice_end])
        )
        wms = None if self.ctx.is_batch else row_watermarks(batch)
        rows, start, end = assign_windows(self.spec, slice_end - self.sliced.unit)
        self.fold_windows(partials, self.grouping, rows, start, end, wms)


class LocalWindowAggregateSpec(OperatorSpec[LocalWindowAggregateParams]):
    """Stateless pre-aggregation per batch: runs on every subtask before the Exchange."""

    name = "LocalWindowAggregate"
    params_type = LocalWindowAggregateParams
    operator_class = LocalWindowAggregateOperator
    parallel = True
    rescalable = True
    wants_mini_batch = True

    def changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str:
        insert_only_input(node, inputs, "a window aggregation needs an insert-only input", WINDOW_AGGREGATE.name)
        return "I"

    def explain(self, node: PlanView) -> list[str]:
        p = self.params(node)
        source: tuple[Field, ...] = node.info["source_fields"]
        names = [f.name for f in source]
        keys = [names[g] for g in p.grouping]
        out = [f.name for f in node.fields]
        aggs = [format_agg(c, names, None) for c in p.aggs]
        partial = [f"{a} AS ({', '.join(out[j] for j in lay)})" for a, lay in zip(aggs, p.partials, strict=True)]
        parts = [f"groupBy=[{', '.join(keys)}]"] if keys else []
        parts.append(f"window=[{format_window(p.window, names[p.time_index])}]")
        select = keys + partial + ["COUNT(*) AS count1$", "slice_end('w$) AS $slice_end"]
        return [*parts, f"select=[{', '.join(select)}]"]


class GlobalWindowAggregateSpec(WindowAggregateSpec):
    """WindowAggregate over the local phase's partial rows (keyed by the local keys)."""

    name = "GlobalWindowAggregate"
    params_type = GlobalWindowAggregateParams
    operator_class = GlobalWindowAggregateOperator
    spark: ClassVar[SparkCapability | None] = None

    def changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str:
        return "I"

    def explain(self, node: PlanView) -> list[str]:
        p = GlobalWindowAggregateParams.of(node)
        in_names = [f.name for f in node.inputs[0].fields]
        agg_fields = node.fields[len(p.grouping) : len(p.grouping) + len(p.aggs)]
        merged = [
            f"{c.name.upper()}({', '.join(in_names[j] for j in lay)}) AS {f.name}"
            for c, lay, f in zip(p.aggs, p.partials, agg_fields, strict=True)
        ]
        window = format_window(p.window, in_names[p.slice_end]).replace("time_col=[", "slice_end=[", 1)
        return explain_window_aggregate(node, p.grouping, merged, window, p.window_props)


LOCAL_WINDOW_AGGREGATE = register_spec(LocalWindowAggregateSpec())
GLOBAL_WINDOW_AGGREGATE = register_spec(GlobalWindowAggregateSpec())
