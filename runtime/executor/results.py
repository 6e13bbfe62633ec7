"""Result collection: the query's result batches as the caller of `run()` gets them.

A result batch holds the result node's data columns, named as its schema, plus an int8
`__op` row-kind column (`__wm` and other system columns stripped). `ResultCollector` is
the in-process transport of the local executor: every edge stays inside the task and
result batches wait here until `run()` yields them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from runtime.batch import ROW_KIND, data_width
from runtime.executor.task import Transport
from runtime.graph import JobGraph

_INSERT = pa.scalar(0, pa.int8())  # the row kind +I


def result_batch(graph: JobGraph, batch: pa.RecordBatch) -> pa.RecordBatch:
    """`batch` of the result node as the caller sees it (module docstring)."""
    node = graph.node(graph.result_node)  # type: ignore[arg-type]
    n = data_width(batch)
    cols: list[Any] = list(batch.columns[:n])
    names = [f.name for f in node.schema][:n]
    names += [f"f{i}" for i in range(len(names), n)]
    k = batch.schema.get_field_index(ROW_KIND)
    # (pa.repeat, not pa.array of a NumPy array: that imports numpy.ma, ~10 ms of start-up)
    cols.append(batch.column(k) if k >= 0 else pa.repeat(_INSERT, batch.num_rows))
    names.append(ROW_KIND)
    return pa.RecordBatch.from_arrays(cols, names=names)


class ResultCollector(Transport):
    """The in-process transport: all edges inside the task; result batches kept in
    order until taken."""

    def __init__(self, graph: JobGraph) -> None:
        self.graph = graph
        self.pending: deque[pa.RecordBatch] = deque()

    def result(self, batch: pa.RecordBatch) -> None:
        self.pending.append(result_batch(self.graph, batch))

    def take(self) -> Iterator[pa.RecordBatch]:
        """Yield the collected batches (including any collected while yielding)."""
        while self.pending:
            yield self.pending.popleft()

    def drain(self) -> list[pa.RecordBatch]:
        """Everything collected so far, removed from the collector."""
        out = list(self.pending)
        self.pending.clear()
        return out

    def clear(self) -> None:
        self.pending.clear()
