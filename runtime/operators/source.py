"""TableSourceScan: reads a table through its connector's Source, split by split."""

from __future__ import annotations

from collections import deque

import pyarrow as pa

from runtime.batch import ROW_KIND
from runtime.connectors.base import Source, SourceContext, SplitReader, get_connector
from runtime.errors import ConnectorError
from runtime.graph import Node
from runtime.operators._common import make_batch
from runtime.operators.base import Operator, OperatorContext, Output, register_operator


@register_operator("TableSourceScan")
class TableSourceScanOperator(Operator):
    """A source operator: the executor calls `poll(max_rows)` until it returns None.

    Splits are read one after the other in the order the source lists them (like one
    Flink source subtask), so the output order is deterministic. An unbounded source
    returns empty batches when it has nothing right now and is asked for new splits
    (`discover_splits`) on every poll that finds all known splits drained.
    """

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        self.source: Source | None = None
        self._pending: deque[str] = deque()
        self._reader: SplitReader | None = None
        self.bounded = True

    def open(self) -> None:
        p = self.node.params
        factory = get_connector(p["connector"])
        if factory.create_source is None:
            raise ConnectorError(f"Connector '{p['connector']}' can only be used as a sink")
        sctx = SourceContext(mode=self.ctx.mode, time_zone=self.ctx.time_zone, config=dict(self.ctx.config))
        source = factory.create_source(
            dict(p.get("options") or {}), tuple(p["physical_schema"]), p.get("projection"), sctx
        )
        self.source = source
        self.bounded = bool(source.bounded)
        self._pending.extend(source.splits())

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        raise AssertionError("TableSourceScan has no input")

    def poll(self, max_rows: int) -> pa.RecordBatch | None:
        assert self.source is not None
        while True:
            if self._reader is None:
                if not self._pending and not self.bounded:
                    self._pending.extend(self.source.discover_splits())
                if not self._pending:
                    return None if self.bounded else self._empty()
                self._reader = self.source.create_reader(self._pending.popleft())
            batch = self._reader.read(max_rows)
            if batch is None:
                self._reader.close()
                self._reader = None
                continue
            if batch.num_rows == 0 and not self.bounded:
                return self._empty()
            if batch.num_rows == 0:
                continue
            # A changelog format (e.g. debezium-json) adds the `__op` row kinds: keep them.
            kind_idx = batch.schema.get_field_index(ROW_KIND)
            kinds = batch.column(kind_idx) if kind_idx >= 0 else None
            return make_batch(self.node, list(batch.columns[: len(self.node.schema)]), kinds=kinds)

    def _empty(self) -> pa.RecordBatch:
        return make_batch(self.node, [pa.array([], type=f.type.to_arrow()) for f in self.node.schema])

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None
