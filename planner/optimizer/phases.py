"""The optimizer's named phases, in order.

Logical phases rewrite the logical plan; the "physical" phase (planner.physical) turns it
into physical nodes and "changelog-mode inference" (planner.changelog) annotates them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from planner.logical import LogicalJoin, LogicalNode, walk
from planner.optimizer.batch_watermarks import remove_watermark_assigners
from planner.optimizer.calc_merge import merge_calcs
from planner.optimizer.filter_pushdown import push_filter_through_project
from planner.optimizer.projection_pushdown import push_projection
from planner.optimizer.remove_identity_project import remove_identity_project
from planner.optimizer.window_rewrite import fuse_window_aggregate
from runtime.config.options import key

Rule = Callable[[LogicalNode], LogicalNode]


# The rules below live in rule modules (planner/rules/), which import their operators'
# modules; they load with the first plan that has a node these rules rewrite (start-up:
# `SELECT 1` needs neither). Same names as the rules, so `streamsql.optimizer.disabled-rules`
# names them as before.
def push_join_conditions(plan: LogicalNode) -> LogicalNode:
    """planner.rules.joins' rule, for a plan with a join."""
    if not any(isinstance(n, LogicalJoin) for n in walk(plan)):
        return plan
    from planner.rules.joins import push_join_conditions as rule

    return rule(plan)


def absorb_rank_filter(plan: LogicalNode) -> LogicalNode:
    """planner.rules.ranking's rule. It rewrites LogicalRank nodes, which exist only once the
    binder has loaded that module (for ROW_NUMBER / ORDER BY / LIMIT)."""
    if "planner.rules.ranking" not in sys.modules:
        return plan
    from planner.rules.ranking import absorb_rank_filter as rule

    return rule(plan)


DISABLED_RULES = (
    key("streamsql.optimizer.disabled-rules")
    .list_type()
    .default_value(())
    .with_description(
        "Logical optimizer rules to skip, by function name, separated by ';' or ',' (e.g. "
        "`push_projection`): for comparing plans and narrowing down an optimizer problem."
    )
)

NON_DETERMINISTIC_UPDATE = (
    key("table.optimizer.non-deterministic-update.strategy")
    .enum_type("TRY_RESOLVE", "IGNORE")
    .default_value("IGNORE")
    .with_description(
        "As in Flink: `TRY_RESOLVE` checks a streaming plan, after optimization, for updates whose "
        "rows a consumer matches by columns that a non-deterministic function computes (NOW(), "
        "RAND(), UUID(), a non-deterministic UDF) and fails the statement with Flink's message and "
        "the related plan (planner/optimizer/non_deterministic_update.py); `IGNORE` (the default) "
        "does not check. Flink's TRY_RESOLVE also materializes a lookup join over updates whose "
        "looked-up columns are needed downstream; streamsql refuses such a plan instead."
    )
)

LOGICAL_PHASES: list[tuple[str, list[Rule]]] = [
    ("subquery/view expansion", [remove_identity_project]),
    ("batch time attributes", [remove_watermark_assigners]),
    ("window rewrite", [fuse_window_aggregate]),
    ("predicate pushdown", [push_join_conditions, push_filter_through_project, push_join_conditions]),
    ("calc merge", [merge_calcs]),
    ("rank", [absorb_rank_filter]),
    ("projection pushdown", [push_projection]),
]

# Names of the phases after the logical ones (implemented outside this package).
PHYSICAL_PHASES = ("physical", "changelog-mode inference")


def disabled_rules(config: dict[str, str]) -> set[str]:
    return set(DISABLED_RULES.get(config))


# Rules that only apply in one runtime mode.
MODE_RULES: dict[str, str] = {"remove_watermark_assigners": "BATCH"}


def optimize_logical(plan: LogicalNode, config: dict[str, str] | None = None, mode: str = "STREAMING") -> LogicalNode:
    """Run every enabled rule of every logical phase, in order."""
    off = disabled_rules(config or {})
    for _phase, rules in LOGICAL_PHASES:
        for rule in rules:
            if MODE_RULES.get(rule.__name__, mode) != mode:
                continue
            if rule.__name__ in off:
                continue
            plan = rule(plan)
    return plan
