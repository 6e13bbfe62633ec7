"""GROUPING SETS / ROLLUP / CUBE, planned as Flink plans them: an `Expand` node that
replicates each input row once per grouping set (the keys outside the set replaced by
NULL, plus an expand id `$e`), then an ordinary GroupAggregate keyed by the keys and `$e`.

`$e` is Flink's expand id: one bit per group key, the first key the highest bit, set
when the key is *not* in the grouping set (so it equals GROUPING_ID over all keys).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from planner.changelog import register_changelog
from planner.explain import format_expr, register_physical_line
from planner.logical import LogicalNode
from planner.physical import PhysicalNode, PhysicalPlanner, register_physical
from runtime.expr.ir import Expr, InputRef, Literal


@dataclass(frozen=True)
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
        return f"LogicalExpand(projects=[{_projects_text(self.projects, None, [f.name for f in self.fields])}])"


def _projects_text(projects: tuple[tuple[Expr, ...], ...] | list, in_names: list[str] | None, out: list[str]) -> str:
    parts = []
    for proj in projects:
        items = []
        for e, name in zip(proj, out, strict=True):
            if isinstance(e, InputRef) and in_names is not None and in_names[e.index] == name:
                items.append(name)
            elif isinstance(e, Literal) and e.value is None:
                items.append(f"null AS {name}")
            elif isinstance(e, Literal):
                items.append(f"{e.value} AS {name}")
            else:
                items.append(f"{format_expr(e, in_names)} AS {name}")
        parts.append("{" + ", ".join(items) + "}")
    return ", ".join(parts)


@register_physical(LogicalExpand)
def _to_physical(planner: PhysicalPlanner, node: LogicalExpand) -> PhysicalNode:
    child = planner.convert(node.input)
    return PhysicalNode(
        "Expand",
        (child,),
        node.fields,
        {"projects": [list(p) for p in node.projects], "expand_id_index": node.expand_id_index},
    )


@register_changelog("Expand")
def _changelog(node: PhysicalNode, in_modes: list[str]) -> str:
    return in_modes[0]


@register_physical_line("Expand")
def _line(node: PhysicalNode) -> list[str]:
    in_names = [f.name for f in node.inputs[0].fields]
    out = [f.name for f in node.fields]
    return [f"projects=[{_projects_text(node.params['projects'], in_names, out)}]"]


__all__ = ["LogicalExpand"]
