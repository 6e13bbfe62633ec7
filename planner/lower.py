"""Lowering: physical plan(s) → `runtime.graph.JobGraph`. Nodes are numbered inputs-first
(a node shared by several consumers is emitted once); params are passed through as the
physical planner built them (the docs' table), labels are the EXPLAIN line of each node."""

from __future__ import annotations

from planner.explain import physical_line
from planner.physical import PhysicalNode
from runtime.config.core import PARALLELISM
from runtime.graph import JobGraph, Node


def lower(
    roots: list[PhysicalNode],
    mode: str,
    config: dict[str, str],
    result_root: PhysicalNode | None = None,
    name: str = "job",
) -> JobGraph:
    """The JobGraph running every root (sinks or a query's result)."""
    ids: dict[int, int] = {}
    nodes: list[Node] = []
    parallelism = PARALLELISM.get(config)

    def visit(n: PhysicalNode) -> int:
        if id(n) in ids:
            return ids[id(n)]
        inputs = tuple(visit(i) for i in n.inputs)
        nid = len(nodes)
        nodes.append(
            Node(
                id=nid,
                operator=n.operator,
                inputs=inputs,
                schema=tuple(n.fields),
                params=dict(n.params) if isinstance(n.params, dict) else n.params,
                changelog_mode=n.changelog_mode,
                parallelism=parallelism,
                label=physical_line(n),
            )
        )
        ids[id(n)] = nid
        return nid

    for r in roots:
        visit(r)
    result = ids[id(result_root)] if result_root is not None else None
    return JobGraph(nodes=tuple(nodes), mode=mode, config=dict(config), result_node=result, name=name)
