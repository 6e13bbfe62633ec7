"""Drop projections that pass their input through unchanged (same columns, same names):
what view/subquery expansion leaves behind."""

from __future__ import annotations

from planner.exprs import is_identity
from planner.logical import LogicalNode, LogicalProject, transform_up


def remove_identity_project(plan: LogicalNode) -> LogicalNode:
    def rule(node: LogicalNode) -> LogicalNode:
        if isinstance(node, LogicalProject) and is_identity(node.exprs, len(node.input.fields)):
            if [f.name for f in node.fields] == [f.name for f in node.input.fields]:
                return node.input
        return node

    return transform_up(plan, rule)
