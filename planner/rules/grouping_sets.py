"""GROUPING SETS / ROLLUP / CUBE, planned as Flink plans them: an `Expand` node that
replicates each input row once per grouping set (the keys outside the set replaced by
NULL, plus an expand id `$e`), then an ordinary GroupAggregate keyed by the keys and `$e`.

`$e` is Flink's expand id: one bit per group key, the first key the highest bit, set
when the key is *not* in the grouping set (so it equals GROUPING_ID over all keys).
"""

from __future__ import annotations

from dataclasses import field, replace

from planner.logical import LogicalNode
from planner.physical import PhysicalNode, PhysicalPlanner, register_physical
from runtime.expr.ir import Expr
from runtime.frozen import frozen_dataclass
from runtime.operators.expand import ExpandParams, projects_text


@frozen_dataclass
class LogicalExpand(LogicalNode):
    """Each input row becomes one row per entry of `projects` (a list of expressions over
    the input, one per output field)."""

    input: LogicalNode = field(kw_only=True)
    projects: tuple[tuple[Expr, ...], ...] = field(kw_only=True)
    expand_id_index: int = field(kw_only=True)

    @property
    def inputs(self) -> tuple[LogicalNode, ...]:
        return (self.input,)

    def with_inputs(self, inputs: tuple[LogicalNode, ...]) -> LogicalNode:
        return replace(self, input=inputs[0])

    def explain_line(self) -> str:
        return f"LogicalExpand(projects=[{projects_text(self.projects, None, [f.name for f in self.fields])}])"


@register_physical(LogicalExpand)
def _to_physical(planner: PhysicalPlanner, node: LogicalExpand) -> PhysicalNode:
    child = planner.convert(node.input)
    return PhysicalNode.of(ExpandParams(node.projects, node.expand_id_index), (child,), node.fields)


__all__ = ["LogicalExpand"]
