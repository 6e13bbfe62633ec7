"""The built-in changelog process table functions (TO_CHANGELOG, FROM_CHANGELOG): one
logical node, Calcite's `LogicalTableFunctionScan` over the table argument, planned as one
`ProcessTableFunction` operator (runtime/operators/process_table_function.py) where the
input is (row semantics: no Exchange)."""

from __future__ import annotations

from dataclasses import field, replace

from planner.logical import LogicalNode
from planner.physical import PhysicalNode, PhysicalPlanner, register_physical
from runtime.frozen import frozen_dataclass
from runtime.operators.process_table_function import ProcessTableFunctionParams, invocation_text
from runtime.plan_text import type_name


@frozen_dataclass
class LogicalChangelogFunction(LogicalNode):
    """`function(TABLE input, ...)`: `params` are the runtime's (op column, mapping and the
    arguments' EXPLAIN text); `fields` the function's output row."""

    input: LogicalNode = field(kw_only=True)
    params: ProcessTableFunctionParams = field(kw_only=True)

    @property
    def inputs(self) -> tuple[LogicalNode, ...]:
        return (self.input,)

    def with_inputs(self, inputs: tuple[LogicalNode, ...]) -> LogicalNode:
        return replace(self, input=inputs[0])

    def explain_line(self) -> str:
        row_type = ", ".join(f"{type_name(f.type)} {f.name}" for f in self.fields)
        inv = invocation_text(self.params.function, self.params.arguments)
        return f"LogicalTableFunctionScan(invocation=[{inv}], rowType=[RecordType({row_type})])"


@register_physical(LogicalChangelogFunction)
def _to_physical(planner: PhysicalPlanner, node: LogicalChangelogFunction) -> PhysicalNode:
    child = planner.convert(node.input)
    return PhysicalNode.of(node.params, (child,), node.fields)


__all__ = ["LogicalChangelogFunction"]
