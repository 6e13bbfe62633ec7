"""Mini-batch (Flink's `table.exec.mini-batch.enabled` / `.allow-latency` / `.size`): in
STREAMING mode, a plan with a GroupAggregate gets a `MiniBatchAssigner` right after each
watermark assigner (or after each source that has none), which coalesces input batches so
the keyed aggregates fold larger batches and emit fewer intermediate -U/+U pairs.

A physical rule (`plan -> plan`, run by `planner.optimizer.physical_rules`)."""

from __future__ import annotations

from dataclasses import replace

from planner.errors import SqlValidationError
from planner.physical import PhysicalNode
from runtime.config.options import key
from runtime.operators.spec import spec_for
from runtime.operators.watermark import WATERMARK_ASSIGNER

ENABLED = (
    key("table.exec.mini-batch.enabled")
    .boolean_type()
    .default_value(False)
    .with_description(
        "STREAMING: insert a MiniBatchAssigner after each source / watermark assigner of a plan with a "
        "GroupAggregate; it coalesces input batches so keyed aggregates fold more rows per state access "
        "and emit fewer intermediate -U/+U rows. The final table is unchanged."
    )
)
ALLOW_LATENCY = (
    key("table.exec.mini-batch.allow-latency")
    .duration_type()
    .default_value(0)
    .with_description(
        "Longest time rows wait in a mini-batch (must be > 0 when mini-batch is enabled). The buffer is "
        "also flushed before every watermark, checkpoint barrier and at the end of input."
    )
)
SIZE = (
    key("table.exec.mini-batch.size")
    .long_type()
    .default_value(-1)
    .with_description("Most rows buffered in one mini-batch (must be > 0 when mini-batch is enabled).")
)


def mini_batch_enabled(config: dict[str, str]) -> bool:
    return ENABLED.get(config)


def mini_batch_settings(config: dict[str, str]) -> tuple[int, int]:
    """(allow-latency in ms, size in rows); Flink requires both to be positive."""
    latency = ALLOW_LATENCY.get(config)
    size = SIZE.get(config)
    if latency <= 0:
        raise SqlValidationError(f"{ALLOW_LATENCY.key} must be set greater than 0 when {ENABLED.key} is true")
    if size <= 0:
        raise SqlValidationError(f"{SIZE.key} must be set greater than 0 when {ENABLED.key} is true")
    return latency, size


def _wants_mini_batch(plan: PhysicalNode) -> bool:
    """Some operator of `plan` profits from (two-phase aggregation: requires) mini-batches."""
    spec = spec_for(plan.operator)
    wants = spec is not None and spec.wants_mini_batch
    return wants or any(_wants_mini_batch(i) for i in plan.inputs)


def assign_mini_batch(plan: PhysicalNode, config: dict[str, str], mode: str) -> PhysicalNode:
    """Insert MiniBatchAssigners (STREAMING, mini-batch enabled, keyed aggregates present)."""
    if mode != "STREAMING" or not mini_batch_enabled(config) or not _wants_mini_batch(plan):
        return plan
    from runtime.operators.mini_batch import PROC_TIME, MiniBatchAssignerParams  # once the rule applies (start-up)

    latency, size = mini_batch_settings(config)
    memo: dict[tuple[int, bool, bool], PhysicalNode] = {}

    def assigner(child: PhysicalNode, kind: str, hold: bool) -> PhysicalNode:
        return PhysicalNode.of(MiniBatchAssignerParams(latency, size, kind, hold), (child,), child.fields)

    def visit(n: PhysicalNode, under_wm: bool, hold: bool) -> PhysicalNode:
        memo_key = (id(n), under_wm, hold)
        if memo_key in memo:
            return memo[memo_key]
        below_wm = under_wm or n.is_kind(WATERMARK_ASSIGNER)
        # Below an operator with several inputs that carries a rowtime on (UNION ALL, an
        # interval join), rows must not wait while another input's watermark moves on.
        hold_below = hold and not (len(n.inputs) > 1 and any(f.type.time_attr == "ROWTIME" for f in n.fields))
        inputs = tuple(visit(i, below_wm, hold_below) for i in n.inputs)
        new = replace(n, inputs=inputs) if inputs != n.inputs else n
        if n.is_kind(WATERMARK_ASSIGNER):
            new = assigner(new, PROC_TIME, hold)
        elif not n.inputs and not under_wm:  # a source (scan or VALUES) without watermarks
            new = assigner(new, PROC_TIME, hold)
        memo[memo_key] = new
        return new

    return visit(plan, False, True)
