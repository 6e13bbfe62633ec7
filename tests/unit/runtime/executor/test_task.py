"""The task runner (runtime/executor/task.py) over different transports: the same runner
pushes inside the task and hands edges that leave it (and the result) to its transport;
the parent of a parallel job runs its sinks as a task fed from outside."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from runtime.checkpoint.uid import operator_uids
from runtime.executor.results import ResultCollector
from runtime.executor.task import TaskRunner, Transport
from runtime.graph import JobGraph
from runtime.operators.union import EXCHANGE
from streamsql import EnvironmentSettings, TableEnvironment

SQL = "SELECT k, COUNT(*) AS c FROM src GROUP BY k"


def _graph() -> JobGraph:
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    env.execute_sql(
        "CREATE TABLE src (k INT, v BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '1000', "
        "'fields.k.min' = '1', 'fields.k.max' = '5')"
    )
    return env._planner().plan_query(env.parse(SQL)[0]).graph  # noqa: SLF001


class _Recording(Transport):
    """Routes the edges into Exchanges elsewhere and records what crosses them."""

    def __init__(self, graph: JobGraph) -> None:
        self.graph = graph
        self.sent: list[tuple[Any, int]] = []
        self.ended: list[Any] = []
        self.results: list[pa.RecordBatch] = []

    def edge(self, src: int, dst: int, idx: int) -> Any | None:
        return (src, dst, idx) if self.graph.node(dst).is_kind(EXCHANGE) else None

    def send(self, edge: Any, batches: list[pa.RecordBatch], watermarks: list[int]) -> None:
        self.sent += [(edge, b.num_rows) for b in batches]

    def end(self, edge: Any) -> None:
        self.ended.append(edge)

    def result(self, batch: pa.RecordBatch) -> None:
        self.results.append(batch)


def _run(task: TaskRunner) -> None:
    task.build()
    task.open()
    active = task.sources()
    try:
        while active:
            for sid in list(active):
                task.poll_source(sid, active, 256)
    finally:
        task.close(failed=False)


def test_in_process_transport_runs_the_whole_graph() -> None:
    graph = _graph()
    results = ResultCollector(graph)
    task = TaskRunner(graph, results, operator_uids(graph))
    _run(task)
    rows = pa.Table.from_batches(results.drain()).to_pylist()
    assert sum(r["c"] for r in rows) == 1000 and sorted(r["k"] for r in rows) == [1, 2, 3, 4, 5]
    assert all(task.metrics[n.id].rows_in > 0 for n in graph.nodes if n.inputs)


def test_routed_edges_leave_the_task_through_the_transport() -> None:
    graph = _graph()
    transport = _Recording(graph)
    task = TaskRunner(graph, transport, operator_uids(graph))
    _run(task)
    (exchange,) = [n for n in graph.nodes if n.is_kind(EXCHANGE)]
    edge = (exchange.inputs[0], exchange.id, 0)
    assert {e for e, _ in transport.sent} == {edge} and sum(n for _, n in transport.sent) == 1000
    assert transport.ended == [edge]  # the producer's end of input, once
    assert task.metrics[exchange.id].rows_in == 0 and not transport.results  # nothing pushed past it here


def test_a_task_of_some_nodes_is_fed_from_outside() -> None:
    """As the parent's sinks: a task of the nodes behind the Exchange, fed with `push`
    and `end_input`, emits the same result as the whole graph."""
    graph = _graph()
    (exchange,) = [n for n in graph.nodes if n.is_kind(EXCHANGE)]
    behind = {n.id for n in graph.nodes if n.id >= exchange.id}
    results = ResultCollector(graph)
    task = TaskRunner(graph, results, operator_uids(graph), runs_here=behind)
    task.build()
    task.open()
    ks = pa.array([1, 2, 2, 3] * 250, pa.int32())
    task.push(exchange.id, 0, [pa.RecordBatch.from_arrays([ks, pa.array(range(1000), pa.int64())], ["k", "v"])], [])
    task.end_input(exchange.id, 0)
    task.close(failed=False)
    rows = {r["k"]: r["c"] for r in pa.Table.from_batches(results.drain()).to_pylist()}
    assert rows == {1: 250, 2: 500, 3: 250}
