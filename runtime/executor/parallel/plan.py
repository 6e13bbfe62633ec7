"""Which edges of a JobGraph cross worker processes, and where every node runs.

The parallel executor follows the JobGraph: the planner's `Exchange` nodes are the only
source of data distribution. With N workers each worker runs one subtask of every node
(slot sharing); an edge *into* a hash, single or rebalance Exchange becomes a routed edge
(the producer partitions each batch by key group, sends it all to subtask 0, or deals
batches round-robin, and every part goes to the worker owning it; an Exchange carrying a
sink's own parallelism p routes to the first min(p, N) workers only). Everything else is a forward edge (same worker), except
the inputs of nodes that run once in the parent process (`OperatorSpec.runs_in_parent`:
sinks only one process can write: print, memory, duckdb), which arrive from every worker.

Nothing is re-decided here. A kind that may not run on part of the data (its spec is not
`parallel`: it keeps state that must see all rows of a key, or all rows) must be fed by a
hash or single Exchange, and one whose spec requires the SINGLE input distribution by a
single one; a graph where it is not cannot run at parallelism > 1 and is refused
(`DistributionError`, naming the operator), never silently re-routed.
"""

from __future__ import annotations

from dataclasses import field

from runtime.errors import JobError
from runtime.frozen import frozen_dataclass, mutable_dataclass
from runtime.graph import JobGraph, Node
from runtime.operators.spec import SINGLE, spec_for
from runtime.operators.union import EXCHANGE, FORWARD, HASH, REBALANCE, SINGLE_DISTRIBUTION, ExchangeParams

# Pseudo edge id of the query result (worker -> parent).
RESULT_EDGE = -1


@frozen_dataclass
class Edge:
    """A routed edge `src -> dst` (input `idx` of dst). `dist` "hash" (by `keys`) or
    "single" (all rows to subtask 0), as the Exchange says; `to_parent`: dst runs in the
    parent process."""

    id: int
    src: int
    dst: int
    idx: int
    dist: str
    keys: tuple[int, ...] = ()
    to_parent: bool = False
    # The consumer's own parallelism (a sink's 'sink.parallelism', on its Exchange): rows go
    # to the first min(parallelism, workers) subtasks only (runtime.operators.sink
    # `writer_subtasks`); None: to every subtask.
    parallelism: int | None = None

    def targets(self, n: int) -> int:
        """How many of the `n` subtasks receive rows on this edge."""
        return n if self.parallelism is None else max(1, min(self.parallelism, n))


@mutable_dataclass
class ParallelPlan:
    """The routed edges, the nodes run by the parent, and for every node the routed
    edges its output reaches before crossing a process boundary (a batch consumed at
    the node can only add to those edges' outgoing buffers: back-pressure gating)."""

    edges: list[Edge]
    parent_nodes: set[int]
    downstream: dict[int, frozenset[int]]
    # Nodes all of whose input arrives through "single" edges (directly or through
    # forward edges): only subtask 0 sees rows, the others must not emit end-of-input
    # results either (a global aggregate's row for an empty input, in BATCH mode).
    single_nodes: set[int] = field(default_factory=set)

    def routed(self, src: int, dst: int, idx: int) -> Edge | None:
        return self._index.get((src, dst, idx))

    def __post_init__(self) -> None:
        self._index = {(e.src, e.dst, e.idx): e for e in self.edges}

    def inbound(self, dst: int) -> list[Edge]:
        return [e for e in self.edges if e.dst == dst]


class DistributionError(JobError):
    """The JobGraph lacks the Exchange an operator needs to run at parallelism > 1."""


def runs_in_parallel(node: Node) -> bool:
    """Whether `node`'s kind may run once per subtask on whatever part of the data
    reaches it (its spec's `parallel`)."""
    spec = spec_for(node.operator)
    return spec is not None and spec.parallel


def runs_in_parent(node: Node) -> bool:
    """Whether `node` runs once, in the parent process (its spec's `runs_in_parent`)."""
    spec = spec_for(node.operator)
    return spec is not None and spec.runs_in_parent(spec.params(node))


def plan_parallel(graph: JobGraph) -> ParallelPlan:
    """Classify every edge of `graph` for a parallel run (see the module docstring)."""
    nodes = {n.id: n for n in graph.nodes}
    parent_nodes = {n.id for n in graph.nodes if runs_in_parent(n)}
    edges: list[Edge] = []

    def add(
        src: int, dst: int, idx: int, dist: str, keys: tuple[int, ...] = (), parallelism: int | None = None
    ) -> None:
        edges.append(Edge(len(edges), src, dst, idx, dist, keys, dst in parent_nodes, parallelism))

    def distributed(nid: int) -> bool:
        n = nodes[nid]
        return n.is_kind(EXCHANGE) and ExchangeParams.of(n).distribution != FORWARD

    def single(nid: int) -> bool:
        n = nodes[nid]
        if not n.is_kind(EXCHANGE):
            return False
        ex = ExchangeParams.of(n)
        return ex.distribution == SINGLE_DISTRIBUTION or (ex.distribution == HASH and not ex.keys)

    for n in graph.nodes:
        if not n.inputs:
            continue
        if n.id in parent_nodes:
            for idx, src in enumerate(n.inputs):
                add(src, n.id, idx, SINGLE_DISTRIBUTION)
            continue
        if n.is_kind(EXCHANGE):
            ex = ExchangeParams.of(n)
            dist, keys = ex.distribution, ex.keys
            if dist == HASH and not keys:
                dist = SINGLE_DISTRIBUTION
            if dist in (HASH, SINGLE_DISTRIBUTION, REBALANCE):
                add(n.inputs[0], n.id, 0, dist, keys if dist == HASH else (), ex.parallelism)
            continue
        if not runs_in_parallel(n) and not all(distributed(i) for i in n.inputs):
            raise DistributionError(_refusal(n, "hash or single Exchange"))
        spec = spec_for(n.operator)
        if spec is not None and spec.input_distribution == SINGLE and not all(single(i) for i in n.inputs):
            raise DistributionError(_refusal(n, "single Exchange"))

    plan = ParallelPlan(edges, parent_nodes, {})
    consumers: dict[int, list[tuple[int, int]]] = {}
    for n in graph.nodes:
        for idx, src in enumerate(n.inputs):
            consumers.setdefault(src, []).append((n.id, idx))
    memo: dict[int, frozenset[int]] = {}

    def reach(nid: int) -> frozenset[int]:
        if nid in memo:
            return memo[nid]
        out: set[int] = {RESULT_EDGE} if nid == graph.result_node else set()
        for cid, idx in consumers.get(nid, []):
            e = plan.routed(nid, cid, idx)
            out |= {e.id} if e is not None else reach(cid)
        memo[nid] = frozenset(out)
        return memo[nid]

    plan.downstream = {n.id: reach(n.id) for n in graph.nodes}
    for n in sorted(graph.nodes, key=lambda x: x.id):  # ids are inputs-first (planner.lower)
        if n.inputs and all(_single_input(plan, src, n.id, idx) for idx, src in enumerate(n.inputs)):
            plan.single_nodes.add(n.id)
    return plan


def _refusal(n: Node, needed: str) -> str:
    label = n.label or n.operator
    return (
        f"operator {n.operator} (node {n.id}, {label}) needs all rows of a key (or all rows) in one subtask, "
        f"but the job graph has no {needed} in front of it: it cannot run with 'parallelism.default' > 1. "
        "Plan the query again (the planner places the Exchanges) or run it with parallelism 1."
    )


def _single_input(plan: ParallelPlan, src: int, dst: int, idx: int) -> bool:
    e = plan.routed(src, dst, idx)
    return e.dist == SINGLE_DISTRIBUTION if e is not None else src in plan.single_nodes
