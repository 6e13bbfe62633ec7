"""BATCH mode has no watermarks: drop WatermarkAssigners before projection pushdown, so a
rowtime column nobody reads is not scanned."""

from __future__ import annotations

from planner.logical import LogicalNode, LogicalWatermarkAssigner, transform_up


def remove_watermark_assigners(plan: LogicalNode) -> LogicalNode:
    def rule(node: LogicalNode) -> LogicalNode:
        return node.input if isinstance(node, LogicalWatermarkAssigner) else node

    return transform_up(plan, rule)
