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

from dataclasses import replace
from typing import Any

from planner.changelog import _producer, is_insert_only, register_changelog
from planner.errors import UnsupportedSqlError
from planner.explain import format_agg, format_window, register_physical_line
from planner.optimizer.mini_batch import mini_batch_enabled
from planner.optimizer.two_phase_agg import AGG_PHASE_STRATEGY
from planner.optimizer.util import rewrite_keyed
from planner.physical import PhysicalNode
from runtime.config.core import TARGET
from runtime.operators.union import ExchangeParams
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
    return rewrite_keyed(plan, "WindowAggregate", _split)


def _partial_fields(call: dict[str, Any], i: int) -> list[Field]:
    name = str(call["name"]).lower()
    if name == "count":
        return [Field(f"count${i}", BIGINT(False))]
    if name == "sum":
        return [Field(f"sum${i}", BIGINT(True)), Field(f"count${i}", BIGINT(False))]
    if name == "sum0":
        return [Field(f"sum${i}", BIGINT(True))]
    t: DataType = call["type"]
    return [Field(f"{name}${i}", t.with_nullable(True))]


def _split(agg: PhysicalNode) -> PhysicalNode | None:
    from runtime.operators.window_slicing import can_slice

    ex = agg.inputs[0]
    child = ex.inputs[0]
    p = agg.params
    spec: dict[str, Any] = p["window"]
    grouping: list[int] = list(p["grouping"])
    calls: list[dict[str, Any]] = list(p["aggs"])
    time_field = child.fields[int(p["time_index"])]
    if time_field.type.time_attr == "PROCTIME" or spec.get("partition_keys"):
        return None
    if list(ExchangeParams.of(ex).keys) != grouping:
        return None
    if not can_slice(spec, calls, [f.type.to_arrow() for f in child.fields], grouping):
        return None
    key_fields = [child.fields[g] for g in grouping]
    partial_fields: list[Field] = []
    layout: list[list[int]] = []
    for i, c in enumerate(calls):
        fields = _partial_fields(c, i)
        start = len(grouping) + len(partial_fields)
        layout.append(list(range(start, start + len(fields))))
        partial_fields += fields
    local_fields = tuple(
        key_fields + partial_fields + [Field("count1$", BIGINT(False)), Field("$slice_end", BIGINT(False))]
    )
    count1, slice_end = len(local_fields) - 2, len(local_fields) - 1
    shared = {"window": spec, "aggs": calls, "partials": layout, "count1": count1, "slice_end": slice_end}
    local = PhysicalNode(
        "LocalWindowAggregate",
        (child,),
        local_fields,
        {**shared, "time_index": p["time_index"], "grouping": grouping},
        info={"source_fields": child.fields},
    )
    keys = list(range(len(grouping)))
    new_ex = PhysicalNode.of(replace(ExchangeParams.of(ex), keys=tuple(keys)), (local,), local_fields)
    gparams = {
        **shared,
        "grouping": keys,
        "time_index": slice_end,
        "window_props": list(p.get("window_props") or []),
        "ltz": time_field.type.name == "TIMESTAMP_LTZ",
    }
    return PhysicalNode(
        "GlobalWindowAggregate", (new_ex,), agg.fields, gparams, info={"source_fields": child.fields, **agg.info}
    )


# ---------------------------------------------------------------------- EXPLAIN
_PROP_FN = {"window_start": "start", "window_end": "end", "window_time": "rowtime"}


@register_physical_line("LocalWindowAggregate")
def _local_line(n: PhysicalNode) -> list[str]:
    p = n.params
    names = [f.name for f in n.info["source_fields"]]
    keys = [names[g] for g in p["grouping"]]
    out = [f.name for f in n.fields]
    aggs = [format_agg(c, names, None) for c in p["aggs"]]
    partial = [f"{a} AS ({', '.join(out[j] for j in lay)})" for a, lay in zip(aggs, p["partials"], strict=True)]
    parts = [f"groupBy=[{', '.join(keys)}]"] if keys else []
    parts.append(f"window=[{format_window(p['window'], names[p['time_index']])}]")
    select = keys + partial + ["COUNT(*) AS count1$", "slice_end('w$) AS $slice_end"]
    return parts + [f"select=[{', '.join(select)}]"]


@register_physical_line("GlobalWindowAggregate")
def _global_line(n: PhysicalNode) -> list[str]:
    p = n.params
    in_names = [f.name for f in n.inputs[0].fields]
    keys = [in_names[g] for g in p["grouping"]]
    agg_fields = n.fields[len(keys) : len(keys) + len(p["aggs"])]
    merged = [
        f"{c['name'].upper()}({', '.join(in_names[j] for j in lay)}) AS {f.name}"
        for c, lay, f in zip(p["aggs"], p["partials"], agg_fields, strict=True)
    ]
    props = [
        f"{_PROP_FN[w]}('w$) AS {f.name}"
        for w, f in zip(p["window_props"], n.fields[len(keys) + len(merged) :], strict=True)
    ]
    window = format_window(p["window"], in_names[p["slice_end"]]).replace("time_col=[", "slice_end=[", 1)
    parts = [f"groupBy=[{', '.join(keys)}]"] if keys else []
    return parts + [f"window=[{window}]", f"select=[{', '.join(keys + merged + props)}]"]


# ---------------------------------------------------------------------- changelog modes
@register_changelog("LocalWindowAggregate")
def _local_changelog(n: PhysicalNode, in_modes: list[str]) -> str:
    if not is_insert_only(in_modes[0]):
        raise UnsupportedSqlError(
            f"WindowAggregate doesn't support consuming update and delete changes which is produced by node "
            f"{_producer(n.inputs[0])}: a window aggregation needs an insert-only input "
            f"(its input's changelog mode is [{in_modes[0]}])"
        )
    return "I"


@register_changelog("GlobalWindowAggregate")
def _global_changelog(n: PhysicalNode, in_modes: list[str]) -> str:
    return "I"
