"""Two-phase (local-global) window aggregation, Flink's `TwoStageOptimizedWindowAggregateRule`
under `table.optimizer.agg-phase-strategy`:

    WindowAggregate(k, aggs) <- Exchange(hash[k]) <- input
becomes
    GlobalWindowAggregate(k, aggs) <- Exchange(hash[k]) <- LocalWindowAggregate(k, partials) <- input

The local phase pre-aggregates each (mini-)batch per (slice, key) into partial
accumulators before the exchange (runtime/operators/window_slicing.py: the slice is the
window for TUMBLE, the slide for HOP, the step for CUMULATE) and emits them with the
slice's end, `$slice_end`; the global phase assigns each partial row to the windows of
its slice and merges it into the per-(window, key) state, firing windows on watermarks
exactly as WindowAggregate does (runtime/operators/window_two_phase.py).

When it applies (STREAMING only):
- the strategy is TWO_PHASE, or AUTO with mini-batch enabled (`table.exec.mini-batch.enabled`).
  Flink's rule fires under AUTO whatever the mini-batch setting; here AUTO keeps the
  one-phase operator without mini-batch, because the one-phase WindowAggregate already
  pre-aggregates per (slice, key) inside each batch and a second operator only pays off
  once batches are coalesced or the job is parallel. ONE_PHASE never splits;
- the window is a rowtime TUMBLE / HOP / CUMULATE whose windows are unions of slices
  (Flink: processing-time windows and SESSION windows stay one-phase);
- every call can be merged exactly: COUNT, SUM / $SUM0 of integers, MIN / MAX, none
  DISTINCT, no UDAF (the set `window_slicing.can_slice` accepts: floating-point SUM and
  AVG would merge partial sums in another order than the one-phase fold and could differ
  in the last bits);
- not for `execution.target = spark` (the Spark runner plans WindowAggregate itself).

Partial columns, in order (`params.partials` gives each call's columns): the grouping keys;
per call COUNT -> `count$i`, SUM -> `sum$i`, `count$i`, $SUM0 -> `sum$i`, MIN/MAX ->
`min$i`/`max$i`; then `count1$` and `$slice_end` (BIGINT, wall-clock ms). Each partial row
carries the `__wm` the runtime needs to judge lateness per (row, window) exactly as the
one-phase operator does.
"""

from __future__ import annotations

from planner.optimizer.mini_batch import mini_batch_enabled
from planner.optimizer.two_phase_agg import AGG_PHASE_STRATEGY
from planner.optimizer.util import rewrite_keyed
from planner.physical import PhysicalNode
from runtime.config.core import TARGET
from runtime.operators.union import ExchangeParams
from runtime.plan_params import AggCallParams
from runtime.types import BIGINT, DataType, Field


def applies(config: dict[str, str], mode: str) -> bool:
    """Whether the configuration asks for two-phase window aggregation (module docstring)."""
    strategy = AGG_PHASE_STRATEGY.get(config)
    if mode != "STREAMING" or strategy == "ONE_PHASE":
        return False
    if TARGET.get(config) == "spark":
        return False
    return strategy == "TWO_PHASE" or mini_batch_enabled(config)


def split_two_phase_window_aggregates(plan: PhysicalNode, config: dict[str, str], mode: str) -> PhysicalNode:
    """Split every eligible streaming WindowAggregate into Local/Global phases."""
    if not applies(config, mode):
        return plan
    from runtime.operators.window_agg import WINDOW_AGGREGATE  # once the rule applies (start-up)

    return rewrite_keyed(plan, WINDOW_AGGREGATE.name, _split)


def _partial_fields(call: AggCallParams, i: int) -> list[Field]:
    name = call.name.lower()
    if name == "count":
        return [Field(f"count${i}", BIGINT(False))]
    if name == "sum":
        return [Field(f"sum${i}", BIGINT(True)), Field(f"count${i}", BIGINT(False))]
    if name == "sum0":
        return [Field(f"sum${i}", BIGINT(True))]
    t: DataType = call.type
    return [Field(f"{name}${i}", t.with_nullable(True))]


def _split(agg: PhysicalNode) -> PhysicalNode | None:
    from runtime.operators.window_agg import WindowAggregateParams
    from runtime.operators.window_slicing import can_slice
    from runtime.operators.window_two_phase import GlobalWindowAggregateParams, LocalWindowAggregateParams

    ex = agg.inputs[0]
    child = ex.inputs[0]
    p = WindowAggregateParams.of(agg)
    spec = p.window
    grouping = p.grouping
    calls = p.aggs
    time_field = child.fields[p.time_index]
    if time_field.type.time_attr == "PROCTIME" or spec.partition_keys:
        return None
    if ExchangeParams.of(ex).keys != grouping:
        return None
    if not can_slice(spec, calls, [f.type.to_arrow() for f in child.fields], grouping):
        return None
    key_fields = [child.fields[g] for g in grouping]
    partial_fields: list[Field] = []
    layout: list[tuple[int, ...]] = []
    for i, c in enumerate(calls):
        fields = _partial_fields(c, i)
        start = len(grouping) + len(partial_fields)
        layout.append(tuple(range(start, start + len(fields))))
        partial_fields += fields
    local_fields = tuple(
        key_fields + partial_fields + [Field("count1$", BIGINT(False)), Field("$slice_end", BIGINT(False))]
    )
    count1, slice_end = len(local_fields) - 2, len(local_fields) - 1
    lparams = LocalWindowAggregateParams(spec, p.time_index, grouping, calls, tuple(layout), count1, slice_end)
    local = PhysicalNode.of(lparams, (child,), local_fields, info={"source_fields": child.fields})
    keys = tuple(range(len(grouping)))
    gparams = GlobalWindowAggregateParams(
        window=spec,
        time_index=slice_end,
        grouping=keys,
        aggs=calls,
        window_props=p.window_props,
        partials=tuple(layout),
        count1=count1,
        slice_end=slice_end,
        ltz=time_field.type.name == "TIMESTAMP_LTZ",
    )
    return PhysicalNode.distributed(gparams, (local,), agg.fields, info={"source_fields": child.fields, **agg.info})
