"""Lowering: physical plan(s) → `runtime.graph.JobGraph`. Nodes are numbered inputs-first
(a node shared by several consumers is emitted once); params are passed through as the
physical planner built them (the docs' table), labels are the EXPLAIN line of each node."""

from __future__ import annotations

from planner.errors import UnsupportedSqlError
from planner.explain import physical_line
from planner.physical import PhysicalNode
from runtime.config.core import job_parallelism
from runtime.connectors.base import get_connector
from runtime.graph import JobGraph, Node
from runtime.operators.sink import SinkParams
from runtime.operators.source import TableSourceScanParams


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
    parallelism = job_parallelism(config)

    def visit(n: PhysicalNode) -> int:
        if id(n) in ids:
            return ids[id(n)]
        inputs = tuple(visit(i) for i in n.inputs)
        if isinstance(n.params, SinkParams) and n.params.upsert_materialize and n.inputs[0].changelog_mode != "I":
            inputs = (visit(_materializer(n)),)
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
    _check_exclusive_readers(nodes)
    result = ids[id(result_root)] if result_root is not None else None
    return JobGraph(nodes=tuple(nodes), mode=mode, config=dict(config), result_node=result, name=name)


def _materializer(sink: PhysicalNode) -> PhysicalNode:
    """The SinkMaterializer between a Sink planned with `upsert_materialize` and its input:
    Flink builds it inside the sink's transformation (EXPLAIN shows only the Sink's
    `upsertMaterialize=[true]`); here it is a node of its own, keyed on the PRIMARY KEY."""
    from runtime.operators.sink_materializer import SinkMaterializerParams

    p = SinkParams.of(sink)
    child = sink.inputs[0]
    names = [f.name for f in p.schema]
    params = SinkMaterializerParams(tuple(names.index(k) for k in p.primary_key), p.upsert_key)
    node = PhysicalNode.of(params, (child,), child.fields)
    return node.with_mode("I,UA,D", (child,))


def _check_exclusive_readers(nodes: list[Node]) -> None:
    """Refuse two scans of a resource that has one reader (a postgres-cdc replication slot):
    each would consume part of its changes. Flink would reuse one source for both scans;
    streamsql plans a source per scan, so the user declares a table per reader."""
    readers: dict[str, str] = {}
    for n in nodes:
        if not isinstance(n.params, TableSourceScanParams):
            continue
        p = n.params
        declared = get_connector(p.connector).exclusive_resource
        resource = declared(dict(p.options)) if declared is not None else None
        if resource is None:
            continue
        if resource in readers:
            tables = f"'{p.table}'" if readers[resource] == p.table else f"'{readers[resource]}' and '{p.table}'"
            raise UnsupportedSqlError(
                f"The job scans {tables} twice through the same {resource}, which has one reader: "
                "declare another table over the same data with its own 'slot.name' for the second scan."
            )
        readers[resource] = p.table
