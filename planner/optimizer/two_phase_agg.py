"""Local-global (two-phase) aggregation (Flink's `table.optimizer.agg-phase-strategy`
AUTO / ONE_PHASE / TWO_PHASE; like Flink it needs mini-batch on in STREAMING mode):

    GroupAggregate(k, aggs) <- Exchange(hash[k]) <- input
becomes
    GlobalGroupAggregate(k, aggs) <- Exchange(hash[k]) <- LocalGroupAggregate(k, partials) <- input

The local phase pre-aggregates each (mini-)batch per key into partial accumulators
(signed counts, sums, min/max) before the exchange, so skewed keys ship one row per batch;
the global phase merges partials into the per-key state. Only mergeable calls are split:
COUNT, SUM, $SUM0 and AVG over integer/floating types, and MIN/MAX over an insert-only input,
none DISTINCT. With any other call the aggregate stays one-phase (AUTO and TWO_PHASE alike).

Partial columns per call, in order (`params.partials` describes them for the runtime):
COUNT -> `count$i`; SUM -> `sum$i`, `count$i` (non-null values, for SUM's NULL); AVG -> `sum$i`
(BIGINT over integers, DOUBLE over floats), `count$i`; $SUM0 -> `sum$i`;
MIN/MAX -> `min$i`/`max$i`; then `count1$` (the signed row count: key liveness).
"""

from __future__ import annotations

from planner.optimizer import mini_batch
from planner.optimizer.mini_batch import mini_batch_enabled
from planner.optimizer.util import rewrite_keyed
from planner.physical import PhysicalNode
from runtime.config.options import key
from runtime.operators.spec import spec_for
from runtime.operators.union import EXCHANGE, UNION
from runtime.plan_params import AggCallParams
from runtime.types import BIGINT, DOUBLE, Field

AGG_PHASE_STRATEGY = (
    key("table.optimizer.agg-phase-strategy")
    .enum_type("AUTO", "ONE_PHASE", "TWO_PHASE")
    .default_value("AUTO")
    .with_description(
        "Two-phase (local-global) GroupAggregate: with mini-batch enabled, AUTO and TWO_PHASE split "
        "aggregates whose calls are mergeable (COUNT, SUM and AVG over integer/floating types, MIN/MAX over "
        "insert-only input, none DISTINCT) into LocalGroupAggregate -> Exchange -> GlobalGroupAggregate; "
        "ONE_PHASE never splits. Window aggregates (rowtime TUMBLE / HOP / CUMULATE with COUNT, integer SUM, "
        "MIN / MAX) split into LocalWindowAggregate -> Exchange -> GlobalWindowAggregate with TWO_PHASE, and "
        "with AUTO when mini-batch is enabled (docs/performance.md)."
    )
)


def _insert_only(n: PhysicalNode) -> bool:
    """Conservative (changelog modes are inferred later): only sources that emit inserts
    and operators that forward their inputs' row kinds (row-wise ones, Union)."""
    spec = spec_for(n.operator)
    if spec is None:
        return False
    if not n.inputs:
        return spec.changelog_mode(n, ()) == "I"
    if not (spec.forwards_changelog or n.is_kind(UNION)):
        return False
    return all(_insert_only(i) for i in n.inputs)


def _partials(call: AggCallParams, i: int, in_fields: tuple[Field, ...], insert_only: bool) -> list[Field] | None:
    """The partial columns of call `i`, or None when it cannot be split."""
    name = call.name.lower()
    if call.distinct or call.params.get("udf"):
        return None
    if name == "count":
        return [Field(f"count${i}", BIGINT(False))]
    if name == "sum":
        t = in_fields[call.args[0]].type
        if not (t.is_integer or t.name in ("FLOAT", "DOUBLE")):
            return None
        return [Field(f"sum${i}", call.type.with_nullable(True)), Field(f"count${i}", BIGINT(False))]
    if name == "avg":  # a sum (BIGINT / DOUBLE, as Flink's AVG accumulates) and a count
        t = in_fields[call.args[0]].type
        if not (t.is_integer or t.name in ("FLOAT", "DOUBLE")):
            return None
        total = BIGINT() if t.is_integer else DOUBLE()
        return [Field(f"sum${i}", total), Field(f"count${i}", BIGINT(False))]
    if name == "sum0":  # split-distinct's final COUNT: never NULL, so no count is needed
        t = in_fields[call.args[0]].type
        if not (t.is_integer or t.name in ("FLOAT", "DOUBLE")):
            return None
        return [Field(f"sum${i}", call.type.with_nullable(True))]
    if name in ("min", "max") and insert_only:
        return [Field(f"{name}${i}", call.type.with_nullable(True))]
    return None


def split_two_phase_aggregates(plan: PhysicalNode, config: dict[str, str], mode: str) -> PhysicalNode:
    """Split every splittable streaming GroupAggregate into Local/Global phases."""
    strategy = AGG_PHASE_STRATEGY.get(config)
    if mode != "STREAMING" or strategy == "ONE_PHASE" or not mini_batch_enabled(config):
        return plan
    from runtime.operators.group_agg import GROUP_AGGREGATE  # once the rule applies (start-up)

    return rewrite_keyed(plan, GROUP_AGGREGATE.name, _split)


def local_global_advice(plans: list[PhysicalNode], config: dict[str, str], mode: str) -> tuple[set[int], str | None]:
    """EXPLAIN PLAN_ADVICE's advice on aggregation phases (Flink's GroupAggregationAnalyzer):
    the ids of the one-phase streaming GroupAggregates this rule could split, and the
    configuration that would let it (None: no such aggregate). Only what this rule splits
    counts, so an aggregate streamsql keeps one-phase (AVG, DISTINCT, ...) gets no advice."""
    if mode != "STREAMING":
        return set(), None
    from runtime.operators.group_agg import GROUP_AGGREGATE

    found: set[int] = set()
    seen: set[int] = set()

    def visit(n: PhysicalNode) -> None:
        if id(n) in seen:
            return
        seen.add(id(n))
        if n.operator == GROUP_AGGREGATE.name and n.inputs and n.inputs[0].is_kind(EXCHANGE):
            if _split(n) is not None:
                found.add(id(n))
        for i in n.inputs:
            visit(i)

    for plan in plans:
        visit(plan)
    if not found:
        return found, None
    tuning = []
    if AGG_PHASE_STRATEGY.get(config) == "ONE_PHASE":
        tuning.append(f"'{AGG_PHASE_STRATEGY.key}' to 'AUTO'")
    if not mini_batch_enabled(config):
        tuning.append(f"'{mini_batch.ENABLED.key}' to 'true'")
    if mini_batch.ALLOW_LATENCY.get(config) <= 0:
        tuning.append(f"'{mini_batch.ALLOW_LATENCY.key}' to a positive long value")
    if mini_batch.SIZE.get(config) <= 0:
        tuning.append(f"'{mini_batch.SIZE.key}' to a positive long value")
    return found, f"You might want to enable local-global two-phase optimization by configuring ({', '.join(tuning)})."


def _split(agg: PhysicalNode) -> PhysicalNode | None:
    from runtime.operators.group_agg import GroupAggregateParams
    from runtime.operators.two_phase_agg import GlobalGroupAggregateParams, LocalGroupAggregateParams

    ex = agg.inputs[0]
    child = ex.inputs[0]
    p = GroupAggregateParams.of(agg)
    grouping = p.grouping
    calls = p.aggs
    if not calls:
        return None
    insert_only = _insert_only(child)
    partial_fields: list[Field] = []
    layout: list[tuple[int, ...]] = []
    for i, c in enumerate(calls):
        fields = _partials(c, i, child.fields, insert_only)
        if fields is None:
            return None
        start = len(grouping) + len(partial_fields)
        layout.append(tuple(range(start, start + len(fields))))
        partial_fields += fields
    key_fields = [child.fields[g] for g in grouping]
    count1 = Field("count1$", BIGINT(False))
    local_fields = tuple(key_fields + partial_fields + [count1])
    lparams = LocalGroupAggregateParams(grouping, calls, tuple(layout), len(local_fields) - 1)
    split = {"split": agg.info["split"]} if "split" in agg.info else {}  # split distinct's phase
    local = PhysicalNode.of(lparams, (child,), local_fields, info={"source_fields": child.fields, **split})
    keys = tuple(range(len(grouping)))
    # The global phase holds the state: a STATE_TTL hint goes with it.
    gparams = GlobalGroupAggregateParams(keys, calls, p.state_ttl_ms, tuple(layout), len(local_fields) - 1)
    return PhysicalNode.distributed(gparams, (local,), agg.fields, info={"source_fields": child.fields, **agg.info})
