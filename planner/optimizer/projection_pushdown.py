"""Projection pushdown: every node keeps only the columns someone above reads, down to
the TableSourceScan, whose `projection` then names the physical columns the connector
must produce. Each logical node prunes itself (`LogicalNode.prune_columns`, planner/logical.py
for the core nodes, the node's `planner.rules` module for the others); the default keeps
every column of the node."""

from __future__ import annotations

from planner.logical import LogicalNode, Mapping


def push_projection(plan: LogicalNode) -> LogicalNode:
    new, _ = _prune(plan, set(range(len(plan.fields))))
    return new


def _prune(node: LogicalNode, required: set[int]) -> tuple[LogicalNode, Mapping]:
    return node.prune_columns(required, _prune)
