"""Correlate: `CROSS JOIN UNNEST(...)`, `[LEFT] JOIN LATERAL TABLE(f(...))` (Flink's
StreamExecCorrelate). Each left row is joined with the rows a function of that row
produces: UNNEST of an ARRAY / MAP / MULTISET (optionally WITH ORDINALITY) or a Python
table function (UDTF). Output = left columns, then the function's columns.

`function` (JobGraph params, plain data):
- `{"kind": "unnest", "expr": Expr, "ordinality": bool, "element": "scalar"|"row"|"map"}`
- `{"kind": "udtf", "udf": <reference JSON string>, "name": str, "args": [Expr]}`
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from planner.changelog import register_changelog
from planner.explain import format_expr, register_physical_line
from planner.logical import LogicalNode
from planner.physical import PhysicalNode, PhysicalPlanner, register_physical
from runtime.types import Field


def invocation(function: dict[str, Any], names: list[str]) -> str:
    """`$UNNEST_ROWS$1($cor0.tags)` / `split($cor0.line)` as Flink prints invocations."""
    if function["kind"] == "unnest":
        return f"$UNNEST_ROWS$1({format_expr(function['expr'], names)})"
    args = ", ".join(format_expr(a, names) for a in function["args"])
    return f"{function['name']}({args})"


@dataclass(frozen=True, eq=False)
class LogicalCorrelate(LogicalNode):
    input: LogicalNode
    function: dict[str, Any]
    join_type: str = "INNER"  # INNER | LEFT

    @property
    def inputs(self) -> tuple[LogicalNode, ...]:
        return (self.input,)

    def with_inputs(self, inputs: tuple[LogicalNode, ...]) -> LogicalNode:
        return replace(self, input=inputs[0])

    def explain_line(self) -> str:
        inv = invocation(self.function, [f"$cor0.${i}" for i in range(len(self.input.fields))])
        parts = [f"invocation=[{inv}]", f"joinType=[{self.join_type.lower()}]"]
        if self.function.get("ordinality"):
            parts.append("withOrdinality=[true]")
        return f"LogicalCorrelate({', '.join(parts)})"


@register_physical(LogicalCorrelate)
def _to_physical(planner: PhysicalPlanner, node: LogicalCorrelate) -> PhysicalNode:
    child = planner.convert(node.input)
    return PhysicalNode("Correlate", (child,), node.fields, {"function": node.function, "join_type": node.join_type})


@register_changelog("Correlate")
def _changelog(node: PhysicalNode, in_modes: list[str]) -> str:
    return in_modes[0]


def _row_type(fields: tuple[Field, ...]) -> str:
    return ", ".join(f"{f.type.with_nullable(True).as_time_attr(None)} {f.name}" for f in fields)


@register_physical_line("Correlate")
def _line(node: PhysicalNode) -> list[str]:
    in_names = [f.name for f in node.inputs[0].fields]
    inv = invocation(node.params["function"], [f"$cor0.{n}" for n in in_names])
    return [
        f"invocation=[{inv}]",
        f"correlate=[table({inv})]",
        f"select=[{','.join(f.name for f in node.fields)}]",
        f"rowType=[RecordType({_row_type(node.fields)})]",
        f"joinType=[{node.params['join_type']}]",
    ]
