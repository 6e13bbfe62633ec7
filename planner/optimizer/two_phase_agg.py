"""Local-global (two-phase) aggregation (Flink's `table.optimizer.agg-phase-strategy`
AUTO / ONE_PHASE / TWO_PHASE; like Flink it needs mini-batch on in STREAMING mode):

    GroupAggregate(k, aggs) <- Exchange(hash[k]) <- input
becomes
    GlobalGroupAggregate(k, aggs) <- Exchange(hash[k]) <- LocalGroupAggregate(k, partials) <- input

The local phase pre-aggregates each (mini-)batch per key into partial accumulators
(signed counts, sums, min/max) before the exchange, so skewed keys ship one row per batch;
the global phase merges partials into the per-key state. Only mergeable calls are split:
COUNT, SUM and $SUM0 over integer/floating types, and MIN/MAX over an insert-only input, none
DISTINCT. With any other call the aggregate stays one-phase (AUTO and TWO_PHASE alike).

Partial columns per call, in order (`params.partials` describes them for the runtime):
COUNT -> `count$i`; SUM -> `sum$i`, `count$i` (non-null values, for SUM's NULL); $SUM0 -> `sum$i`;
MIN/MAX -> `min$i`/`max$i`; then `count1$` (the signed row count: key liveness).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from planner.changelog import register_changelog
from planner.explain import format_agg, register_physical_line
from planner.optimizer.mini_batch import mini_batch_enabled
from planner.optimizer.util import rewrite_keyed
from planner.physical import PhysicalNode, scan_changelog_mode
from runtime.config.options import key
from runtime.operators.union import ExchangeParams
from runtime.types import BIGINT, Field

AGG_PHASE_STRATEGY = (
    key("table.optimizer.agg-phase-strategy")
    .enum_type("AUTO", "ONE_PHASE", "TWO_PHASE")
    .default_value("AUTO")
    .with_description(
        "Two-phase (local-global) GroupAggregate: with mini-batch enabled, AUTO and TWO_PHASE split "
        "aggregates whose calls are mergeable (COUNT, SUM over integer/floating types, MIN/MAX over "
        "insert-only input, none DISTINCT) into LocalGroupAggregate -> Exchange -> GlobalGroupAggregate; "
        "ONE_PHASE never splits. Window aggregates (rowtime TUMBLE / HOP / CUMULATE with COUNT, integer SUM, "
        "MIN / MAX) split into LocalWindowAggregate -> Exchange -> GlobalWindowAggregate with TWO_PHASE, and "
        "with AUTO when mini-batch is enabled (docs/performance.md)."
    )
)
_ROW_WISE = ("Calc", "Exchange", "WatermarkAssigner", "TableSourceScan", "Values", "MiniBatchAssigner", "Union")


def _insert_only(n: PhysicalNode) -> bool:
    """Conservative (changelog modes are inferred later): only row-wise operators over
    non-CDC sources."""
    if n.operator not in _ROW_WISE:
        return False
    if n.operator == "TableSourceScan":
        return scan_changelog_mode(n.params.get("connector", ""), n.params.get("options") or {}) == "I"
    return all(_insert_only(i) for i in n.inputs)


def _partials(call: dict[str, Any], i: int, in_fields: tuple[Field, ...], insert_only: bool) -> list[Field] | None:
    """The partial columns of call `i`, or None when it cannot be split."""
    name = call["name"].lower()
    if call.get("distinct") or (call.get("params") or {}).get("udf"):
        return None
    if name == "count":
        return [Field(f"count${i}", BIGINT(False))]
    if name == "sum":
        t = in_fields[call["args"][0]].type
        if not (t.is_integer or t.name in ("FLOAT", "DOUBLE")):
            return None
        return [Field(f"sum${i}", call["type"].with_nullable(True)), Field(f"count${i}", BIGINT(False))]
    if name == "sum0":  # split-distinct's final COUNT: never NULL, so no count is needed
        t = in_fields[call["args"][0]].type
        if not (t.is_integer or t.name in ("FLOAT", "DOUBLE")):
            return None
        return [Field(f"sum${i}", call["type"].with_nullable(True))]
    if name in ("min", "max") and insert_only:
        return [Field(f"{name}${i}", call["type"].with_nullable(True))]
    return None


def split_two_phase_aggregates(plan: PhysicalNode, config: dict[str, str], mode: str) -> PhysicalNode:
    """Split every splittable streaming GroupAggregate into Local/Global phases."""
    strategy = AGG_PHASE_STRATEGY.get(config)
    if mode != "STREAMING" or strategy == "ONE_PHASE" or not mini_batch_enabled(config):
        return plan
    return rewrite_keyed(plan, "GroupAggregate", _split)


def _split(agg: PhysicalNode) -> PhysicalNode | None:
    ex = agg.inputs[0]
    child = ex.inputs[0]
    grouping: list[int] = list(agg.params["grouping"])
    calls: list[dict[str, Any]] = list(agg.params["aggs"])
    if not calls:
        return None
    insert_only = _insert_only(child)
    partial_fields: list[Field] = []
    layout: list[list[int]] = []
    for i, c in enumerate(calls):
        fields = _partials(c, i, child.fields, insert_only)
        if fields is None:
            return None
        layout.append(
            list(range(len(grouping) + len(partial_fields), len(grouping) + len(partial_fields) + len(fields)))
        )
        partial_fields += fields
    key_fields = [child.fields[g] for g in grouping]
    count1 = Field("count1$", BIGINT(False))
    local_fields = tuple(key_fields + partial_fields + [count1])
    params = {"grouping": grouping, "aggs": calls, "partials": layout, "count1": len(local_fields) - 1}
    local = PhysicalNode("LocalGroupAggregate", (child,), local_fields, params, info={"source_fields": child.fields})
    keys = list(range(len(grouping)))
    new_ex = PhysicalNode.of(replace(ExchangeParams.of(ex), keys=tuple(keys)), (local,), local_fields)
    gparams = {"grouping": keys, "aggs": calls, "partials": layout, "count1": len(local_fields) - 1}
    if "state_ttl_ms" in agg.params:  # STATE_TTL hint: the global phase holds the state
        gparams["state_ttl_ms"] = agg.params["state_ttl_ms"]
    return PhysicalNode(
        "GlobalGroupAggregate", (new_ex,), agg.fields, gparams, info={"source_fields": child.fields, **agg.info}
    )


def _select(n: PhysicalNode) -> list[str]:
    src: tuple[Field, ...] = n.info["source_fields"]
    names = [f.name for f in src]
    p = n.params
    if n.operator == "LocalGroupAggregate":
        keys = [names[g] for g in p["grouping"]]
        aggs = [format_agg(c, names, None) for c in p["aggs"]]
        out = [f.name for f in n.fields]
        parts = [f"groupBy=[{', '.join(keys)}]"] if keys else []
        partial = [f"{a} AS ({', '.join(out[j] for j in lay)})" for a, lay in zip(aggs, p["partials"], strict=True)]
        return parts + [f"select=[{', '.join(keys + partial + ['COUNT(*) AS count1$'])}]"]
    in_names = [f.name for f in n.inputs[0].fields]
    keys = [in_names[g] for g in p["grouping"]]
    merged = [
        f"{c['name'].upper()}({', '.join(in_names[j] for j in lay)}) AS {f.name}"
        for c, lay, f in zip(p["aggs"], p["partials"], n.fields[len(keys) :], strict=True)
    ]
    parts = [f"groupBy=[{', '.join(keys)}]"] if keys else []
    return parts + ["partialFinalType=[NONE]", f"select=[{', '.join(keys + merged)}]"]


@register_physical_line("LocalGroupAggregate")
def _local_line(n: PhysicalNode) -> list[str]:
    return _select(n)


@register_physical_line("GlobalGroupAggregate")
def _global_line(n: PhysicalNode) -> list[str]:
    return _select(n)


@register_changelog("LocalGroupAggregate")
def _local_changelog(n: PhysicalNode, in_modes: list[str]) -> str:
    return "I"


@register_changelog("GlobalGroupAggregate")
def _global_changelog(n: PhysicalNode, in_modes: list[str]) -> str:
    local = n.inputs[0].inputs[0]
    return "I,UB,UA" if _insert_only(local.inputs[0]) else "I,UB,UA,D"
