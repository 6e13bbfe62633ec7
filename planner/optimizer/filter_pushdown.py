"""Predicate pushdown: a filter moves below a projection (its condition rewritten over the
projection's input) and adjacent filters merge, so filters sit as close to the source as
the plan allows. Filters never cross a WatermarkAssigner (that would change watermarks)."""

from __future__ import annotations

from planner.exprs import conjunction, is_deterministic, substitute
from planner.logical import LogicalFilter, LogicalNode, LogicalProject, transform_up


def push_filter_through_project(plan: LogicalNode) -> LogicalNode:
    def rule(node: LogicalNode) -> LogicalNode:
        if isinstance(node, LogicalFilter):
            child = node.input
            if isinstance(child, LogicalProject) and all(is_deterministic(e) for e in child.exprs):
                cond = substitute(node.condition, child.exprs)
                pushed = rule(LogicalFilter(fields=child.input.fields, input=child.input, condition=cond))
                return LogicalProject(fields=child.fields, input=pushed, exprs=child.exprs)
            if isinstance(child, LogicalFilter):
                merged = conjunction(child.condition, node.condition)
                assert merged is not None
                return LogicalFilter(fields=node.fields, input=child.input, condition=merged)
        return node

    return transform_up(plan, rule)
