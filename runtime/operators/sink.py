"""Sink: writes its input to a connector's Sink (INSERT INTO)."""

from __future__ import annotations

import pyarrow as pa

from runtime.batch import ROW_KIND, data_width
from runtime.connectors.base import Sink, SourceContext, get_connector
from runtime.errors import ConnectorError
from runtime.graph import Node
from runtime.operators._common import system_column
from runtime.operators.base import Operator, OperatorContext, Output, register_operator


@register_operator("Sink")
class SinkOperator(Operator):
    """Creates the connector sink at open, writes data columns (named as the sink table's
    columns) plus `__op` when the input carries it, flushes at end of input and closes at
    close (also when the job is stopped or fails)."""

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        self.sink: Sink | None = None
        self.fields = tuple(node.params.get("schema") or node.schema)

    def open(self) -> None:
        p = self.node.params
        factory = get_connector(p["connector"])
        if factory.create_sink is None:
            raise ConnectorError(f"Connector '{p['connector']}' can only be used as a source")
        sctx = SourceContext(mode=self.ctx.mode, time_zone=self.ctx.time_zone, config=dict(self.ctx.config))
        sink = factory.create_sink(dict(p.get("options") or {}), self.fields, sctx)
        self.sink = sink
        sink.open()

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        assert self.sink is not None
        n = data_width(batch)
        cols = list(batch.columns[:n])
        names = [f.name for f in self.fields][:n] + [f"f{i}" for i in range(len(self.fields), n)]
        kinds = system_column(batch, ROW_KIND)
        if kinds is not None:
            cols.append(kinds)
            names.append(ROW_KIND)
        self.sink.write(pa.RecordBatch.from_arrays(cols, names=names))
        self.ctx.metrics.rows_out += batch.num_rows

    def end_input(self, input_index: int, out: Output) -> None:
        if self.sink is not None:
            self.sink.flush()

    def close(self) -> None:
        if self.sink is not None:
            sink, self.sink = self.sink, None
            sink.close()
