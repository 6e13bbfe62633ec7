"""Mini-batch (Flink's `table.exec.mini-batch.enabled` / `.allow-latency` / `.size`): in
STREAMING mode, a plan with a GroupAggregate gets a `MiniBatchAssigner` right after each
watermark assigner (or after each source that has none), which coalesces input batches so
the keyed aggregates fold larger batches and emit fewer intermediate -U/+U pairs.

A physical rule (`plan -> plan`, run by `planner.optimizer.physical_rules`)."""

from __future__ import annotations

from dataclasses import replace

from planner.changelog import register_changelog
from planner.errors import SqlValidationError
from planner.explain import register_physical_line
from planner.physical import PhysicalNode
from runtime.config.options import key

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
    .int_type()
    .default_value(-1)
    .with_description("Most rows buffered in one mini-batch (must be > 0 when mini-batch is enabled).")
)

# Operators that profit from (and, for two-phase aggregation, require) mini-batches.
_KEYED = ("GroupAggregate", "GlobalGroupAggregate", "LocalGroupAggregate", "LocalWindowAggregate")
_LEAVES = ("TableSourceScan", "Values")


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


def _has(plan: PhysicalNode, ops: tuple[str, ...]) -> bool:
    return plan.operator in ops or any(_has(i, ops) for i in plan.inputs)


def assign_mini_batch(plan: PhysicalNode, config: dict[str, str], mode: str) -> PhysicalNode:
    """Insert MiniBatchAssigners (STREAMING, mini-batch enabled, keyed aggregates present)."""
    if mode != "STREAMING" or not mini_batch_enabled(config) or not _has(plan, _KEYED):
        return plan
    latency, size = mini_batch_settings(config)
    memo: dict[int, PhysicalNode] = {}

    def assigner(child: PhysicalNode, kind: str) -> PhysicalNode:
        params = {"allow_latency_ms": latency, "size": size, "mode": kind}
        return PhysicalNode("MiniBatchAssigner", (child,), child.fields, params)

    def visit(n: PhysicalNode, under_wm: bool) -> PhysicalNode:
        key = id(n) * 2 + int(under_wm)
        if key in memo:
            return memo[key]
        below_wm = under_wm or n.operator == "WatermarkAssigner"
        inputs = tuple(visit(i, below_wm) for i in n.inputs)
        new = replace(n, inputs=inputs) if inputs != n.inputs else n
        if n.operator == "WatermarkAssigner":
            new = assigner(new, "ProcTime")
        elif n.operator in _LEAVES and not under_wm:
            new = assigner(new, "ProcTime")
        memo[key] = new
        return new

    return visit(plan, False)


@register_physical_line("MiniBatchAssigner")
def _line(n: PhysicalNode) -> list[str]:
    return [f"interval=[{n.params['allow_latency_ms']}ms]", f"mode=[{n.params['mode']}]"]


@register_changelog("MiniBatchAssigner")
def _changelog(n: PhysicalNode, in_modes: list[str]) -> str:
    return in_modes[0]
