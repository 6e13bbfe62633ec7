"""Correlate: `CROSS JOIN UNNEST(...)`, `[LEFT] JOIN LATERAL TABLE(f(...))` (Flink's
StreamExecCorrelate). Each left row is joined with the rows a function of that row
produces: UNNEST of an ARRAY / MAP / MULTISET (optionally WITH ORDINALITY) or a Python
table function (UDTF). Output = left columns, then the function's columns.

`function`: a `runtime.operators.correlate.CorrelateFunction` (UNNEST or a UDTF).
"""

from __future__ import annotations

from dataclasses import replace

from planner.logical import LogicalNode
from planner.physical import PhysicalNode, PhysicalPlanner, register_physical
from runtime.frozen import frozen_dataclass
from runtime.operators.correlate import CorrelateFunction, CorrelateParams, invocation


@frozen_dataclass(eq=False)
class LogicalCorrelate(LogicalNode):
    input: LogicalNode
    function: CorrelateFunction
    join_type: str = "INNER"  # INNER | LEFT

    @property
    def inputs(self) -> tuple[LogicalNode, ...]:
        return (self.input,)

    def with_inputs(self, inputs: tuple[LogicalNode, ...]) -> LogicalNode:
        return replace(self, input=inputs[0])

    def explain_line(self) -> str:
        inv = invocation(self.function, [f"$cor0.${i}" for i in range(len(self.input.fields))])
        parts = [f"invocation=[{inv}]", f"joinType=[{self.join_type.lower()}]"]
        if self.function.ordinality:
            parts.append("withOrdinality=[true]")
        return f"LogicalCorrelate({', '.join(parts)})"


@register_physical(LogicalCorrelate)
def _to_physical(planner: PhysicalPlanner, node: LogicalCorrelate) -> PhysicalNode:
    child = planner.convert(node.input)
    return PhysicalNode.of(CorrelateParams(node.function, node.join_type), (child,), node.fields)
