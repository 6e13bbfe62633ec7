"""The optimizer's physical phase (`to_physical`): logical → physical conversion, then the
physical rewrite rules (before changelog-mode inference). Each rule is a plain function
`(plan, config, mode) -> plan` in its own module, switchable by its own Flink key and
by `streamsql.optimizer.disabled-rules` (its function name)."""

from __future__ import annotations

from collections.abc import Callable

from planner.logical import LogicalNode
from planner.optimizer.mini_batch import assign_mini_batch
from planner.optimizer.phases import disabled_rules
from planner.optimizer.split_distinct import split_distinct_aggregates
from planner.optimizer.two_phase_agg import split_two_phase_aggregates
from planner.optimizer.two_phase_window_agg import split_two_phase_window_aggregates
from planner.physical import PhysicalNode, PhysicalPlanner, check_distribution

PhysicalRule = Callable[[PhysicalNode, dict[str, str], str], PhysicalNode]

PHYSICAL_RULES: list[PhysicalRule] = [
    split_distinct_aggregates,
    split_two_phase_aggregates,
    split_two_phase_window_aggregates,
    assign_mini_batch,
]


def optimize_physical(plan: PhysicalNode, config: dict[str, str], mode: str) -> PhysicalNode:
    """Run every enabled physical rule, in order."""
    off = disabled_rules(config)
    for rule in PHYSICAL_RULES:
        if rule.__name__ not in off:
            plan = rule(plan, config, mode)
    return plan


def to_physical(plan: LogicalNode, mode: str, config: dict[str, str] | None = None) -> PhysicalNode:
    """The optimizer's "physical" phase: conversion, then the physical rewrite rules
    (two-phase aggregation, split distinct, mini-batch); every node is then checked to be
    fed through the Exchange its spec requires."""
    physical = optimize_physical(PhysicalPlanner(mode, config or {}).convert(plan), config or {}, mode)
    check_distribution(physical)
    return physical
