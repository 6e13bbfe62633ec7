"""The 'blackhole' connector: a sink that swallows every row (for benchmarks); it only
counts what it received."""

from __future__ import annotations

import pyarrow as pa

from runtime.connectors.base import UPSERT_SINK, ConfigOption, ConnectorFactory, Sink, SourceContext, register_connector
from runtime.types import Field

OPTIONS: tuple[ConfigOption, ...] = ()


class BlackholeSink(Sink):
    def __init__(self, options: dict[str, str], schema: tuple[Field, ...], ctx: SourceContext) -> None:
        self.rows_written = 0
        self.batches_written = 0

    def write(self, batch: pa.RecordBatch) -> None:
        self.rows_written += batch.num_rows
        self.batches_written += 1


FACTORY = register_connector(
    ConnectorFactory(
        name="blackhole",
        description="Discards every row; useful to measure a query without the cost of writing results.",
        options=OPTIONS,
        create_sink=BlackholeSink,
        sink_changelog_mode=lambda options, primary_key: UPSERT_SINK,  # as Flink's: every kind but -U
    )
)
