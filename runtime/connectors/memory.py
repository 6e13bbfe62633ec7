"""The 'memory' connector: Arrow data held in this process, registered by id.

Why it exists: the embedded Table API (`from_elements`, `from_pandas`, `from_arrow`) turns
Python data into tables that go through the same planner and runtime as any SQL table, so
the data must be reachable from a connector. The Python side registers a pyarrow Table with
`register_table` and creates a temporary table with `'connector' = 'memory'` and
`'table-id'` = the returned id. As a sink, the connector appends every batch it receives
(data columns plus `__op`) to the list `sink_batches(table-id)`.

The data lives until `unregister` (dropping the temporary table does not free it, since a
running job may still read it).
"""

from __future__ import annotations

import itertools
import threading
from typing import Any

import pyarrow as pa

from runtime.connectors.base import (
    ConfigOption,
    ConnectorFactory,
    Sink,
    Source,
    SourceContext,
    SplitReader,
    register_connector,
)
from runtime.errors import ConnectorError
from runtime.types import Field, arrow_schema

OPTIONS: tuple[ConfigOption, ...] = (
    ConfigOption(
        "table-id",
        required=True,
        description="Id of the Arrow data registered in this process (set by the Python Table API's "
        "from_elements / from_pandas / from_arrow; for a sink, the id its rows are collected under).",
    ),
)

_lock = threading.Lock()
_ids = itertools.count(1)
_TABLES: dict[str, pa.Table] = {}
_SINKS: dict[str, list[pa.RecordBatch]] = {}


def register_table(table: pa.Table) -> str:
    """Keep `table` in this process; returns the id to put in the 'table-id' option."""
    with _lock:
        tid = f"mem-{next(_ids)}"
        _TABLES[tid] = table
    return tid


def unregister(table_id: str) -> None:
    with _lock:
        _TABLES.pop(table_id, None)
        _SINKS.pop(table_id, None)


def sink_batches(table_id: str) -> list[pa.RecordBatch]:
    """Batches a memory sink received so far (a copy of the list)."""
    with _lock:
        return list(_SINKS.get(table_id, ()))


class MemoryReader(SplitReader):
    def __init__(self, table: pa.Table) -> None:
        self.table = table
        self.pos = 0

    def read(self, max_rows: int) -> pa.RecordBatch | None:
        if self.pos >= self.table.num_rows:
            return None
        part = self.table.slice(self.pos, max(1, max_rows)).combine_chunks()
        self.pos += part.num_rows
        batches = part.to_batches()
        if not batches:
            return pa.RecordBatch.from_pylist([], schema=self.table.schema)
        return batches[0]

    def offset(self) -> Any:
        return {"rows": self.pos}

    def seek(self, offset: Any) -> None:
        self.pos = int(offset["rows"]) if isinstance(offset, dict) else int(offset or 0)


class MemorySource(Source):
    def __init__(self, options: dict[str, str], schema: tuple[Field, ...], projection: list[int] | None) -> None:
        tid = options.get("table-id", "")
        with _lock:
            data = _TABLES.get(tid)
        if data is None:
            raise ConnectorError(f"No in-memory data registered under table-id '{tid}'.")
        indices = list(range(len(schema))) if projection is None else list(projection)
        self.produced_schema = tuple(schema[i] for i in indices)
        target = arrow_schema(self.produced_schema)
        cols = [data.column(i) for i in indices]
        # Arrow's cast checks the declared types once per table, not per batch.
        self.data = pa.Table.from_arrays(cols, names=target.names).cast(
            pa.schema([pa.field(f.name, f.type) for f in target])
        )

    def splits(self) -> list[str]:
        return ["0"]

    def create_reader(self, split_id: str) -> SplitReader:
        return MemoryReader(self.data)

    def total_rows(self) -> int | None:
        return self.data.num_rows


class MemorySink(Sink):
    def __init__(self, options: dict[str, str]) -> None:
        self.table_id = options.get("table-id", "")

    def write(self, batch: pa.RecordBatch) -> None:
        with _lock:
            _SINKS.setdefault(self.table_id, []).append(batch)


def _create_source(
    options: dict[str, str], schema: tuple[Field, ...], projection: list[int] | None, ctx: SourceContext
) -> Source:
    return MemorySource(options, schema, projection)


def _create_sink(options: dict[str, str], schema: tuple[Field, ...], ctx: SourceContext) -> Sink:
    return MemorySink(options)


FACTORY = register_connector(
    ConnectorFactory(
        name="memory",
        description="Arrow data held in the Python process: the tables of the Table API's from_elements, "
        "from_pandas and from_arrow (bounded), and a sink collecting rows in memory (for tests).",
        options=OPTIONS,
        create_source=_create_source,
        create_sink=_create_sink,
    )
)
