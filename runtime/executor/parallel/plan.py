"""Which edges of a JobGraph cross worker processes, and where every node runs.

The planner places `Exchange` nodes (hash on keys, or "single") in front of keyed
operators; in one process they are pass-throughs. With N workers each worker runs one
subtask of every node (slot sharing), so an edge *into* an Exchange becomes a routed
edge: the producer partitions each batch by key group and sends every part to the
worker owning it. Everything else is a forward edge (same worker).

Why a rewrite here and not in the planner: the planner reasons about one process. An
operator that keeps state across batches but is not fed by an Exchange (a global Sort,
Limit, SortLimit, a TemporalSort, ...) would run N times on partial data, so its input
edges are routed "single" (all rows to subtask 0); the result stays correct, merely not
parallel. Sinks that cannot be written by several processes (print: one stdout stream;
memory: rows the caller reads in this process; duckdb: one writer) run in the parent
process, which receives their input from every worker.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from runtime.graph import JobGraph
from runtime.operators.spec import spec_for
from runtime.operators.union import EXCHANGE, FORWARD, ExchangeParams

# Operators without a spec yet (the others declare `parallel`) that may run once per subtask on a part of the data: they keep no state
# across batches that depends on seeing all rows (LocalGroupAggregate pre-aggregates per
# batch, MiniBatchAssigner only buffers, WatermarkAssigner is per split as in Flink).
PARALLEL_SAFE = frozenset(
    {
        "TableSourceScan",
        "WatermarkAssigner",
        "WindowTableFunction",
        "Expand",
        "Correlate",
        "MiniBatchAssigner",
        "LocalGroupAggregate",
        "LookupJoin",
        "ReplicateRows",
    }
)
# Sinks every subtask may write on its own (part files per subtask, or nothing).
PARALLEL_SINKS = frozenset({"filesystem", "blackhole"})
# Pseudo edge id of the query result (worker -> parent).
RESULT_EDGE = -1


@dataclass(frozen=True)
class Edge:
    """A routed edge `src -> dst` (input `idx` of dst). `dist` "hash" (by `keys`) or
    "single" (all rows to subtask 0); `to_parent`: dst runs in the parent process."""

    id: int
    src: int
    dst: int
    idx: int
    dist: str
    keys: tuple[int, ...] = ()
    to_parent: bool = False


@dataclass
class ParallelPlan:
    """The routed edges, the nodes run by the parent, and for every node the routed
    edges its output reaches before crossing a process boundary (a batch consumed at
    the node can only add to those edges' outgoing buffers: back-pressure gating)."""

    edges: list[Edge]
    parent_nodes: set[int]
    downstream: dict[int, frozenset[int]]
    single_fallback: list[str] = field(default_factory=list)
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


def plan_parallel(graph: JobGraph) -> ParallelPlan:
    """Classify every edge of `graph` for a parallel run (see the module docstring)."""
    nodes = {n.id: n for n in graph.nodes}
    parent_nodes = {
        n.id
        for n in graph.nodes
        if n.operator == "Sink" and str(n.params.get("connector", "")).lower() not in PARALLEL_SINKS
    }
    edges: list[Edge] = []
    fallback: list[str] = []

    def add(src: int, dst: int, idx: int, dist: str, keys: tuple[int, ...] = ()) -> None:
        edges.append(Edge(len(edges), src, dst, idx, dist, keys, dst in parent_nodes))

    for n in graph.nodes:
        if not n.inputs:
            continue
        if n.id in parent_nodes:
            for idx, src in enumerate(n.inputs):
                add(src, n.id, idx, "single")
            continue
        if n.is_kind(EXCHANGE):
            ex = ExchangeParams.of(n)
            dist, keys = ex.distribution, ex.keys
            if dist == "hash" and not keys:
                dist = "single"
            if dist in ("hash", "single"):
                add(n.inputs[0], n.id, 0, dist, keys if dist == "hash" else ())
            continue
        spec = spec_for(n.operator)
        if n.operator in PARALLEL_SAFE or (spec is not None and spec.parallel) or n.operator == "Sink":
            continue
        fed = all(nodes[i].is_kind(EXCHANGE) and ExchangeParams.of(nodes[i]).distribution != FORWARD for i in n.inputs)
        if not fed:
            fallback.append(f"{n.operator} (node {n.id})")
            for idx, src in enumerate(n.inputs):
                add(src, n.id, idx, "single")

    plan = ParallelPlan(edges, parent_nodes, {}, fallback)
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


def _single_input(plan: ParallelPlan, src: int, dst: int, idx: int) -> bool:
    e = plan.routed(src, dst, idx)
    return e.dist == "single" if e is not None else src in plan.single_nodes
