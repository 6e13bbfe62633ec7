"""Connector contract: sources split into partitions that each know how to resume
(bytewax-style), sinks that take batches, and factories that declare their options so
the docs are generated from the code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from runtime.config.options import ConfigOption as ConfigOption  # connectors declare WITH options with it
from runtime.errors import ConnectorError
from runtime.plugins import import_submodules
from runtime.types import Field


@dataclass
class SourceContext:
    mode: str  # runtime.graph.STREAMING | BATCH
    time_zone: str = "UTC"
    config: dict[str, str] = field(default_factory=dict)


class SplitReader:
    """Reads one split. `read` returns the next batch (data columns of the scan's
    produced schema), an empty batch when an unbounded split has nothing right now, or
    None when the split is finished."""

    def read(self, max_rows: int) -> pa.RecordBatch | None:
        raise NotImplementedError

    def offset(self) -> Any:
        """A JSON-able position from which `seek` resumes exactly after the last row read."""
        return None

    def seek(self, offset: Any) -> None:
        """Resume from an `offset()` value."""

    def close(self) -> None:
        pass


class Source:
    """A table's scan. `produced_schema` is the schema of the batches its readers return
    (the scan's projected physical columns)."""

    produced_schema: tuple[Field, ...]

    @property
    def bounded(self) -> bool:
        return True

    def splits(self) -> list[str]:
        """Split ids known now (e.g. files). Unbounded sources may find more later."""
        raise NotImplementedError

    def discover_splits(self) -> list[str]:
        """New split ids that appeared since the last call (monitoring); [] by default."""
        return []

    def create_reader(self, split_id: str) -> SplitReader:
        raise NotImplementedError

    def total_rows(self) -> int | None:
        """Rows this source will produce, when known (progress bars)."""
        return None


class Sink:
    """Takes batches (data columns, plus `__op` when the input is a changelog)."""

    def open(self) -> None:
        pass

    def write(self, batch: pa.RecordBatch) -> None:
        raise NotImplementedError

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class ConnectorFactory:
    """How `'connector' = name` builds sources and sinks.

    `create_source(options, schema, projection, ctx)`: `schema` is the table's full
    physical schema, `projection` the indices (into it) to produce, or None for all.
    `create_sink(options, schema, ctx)`.
    """

    name: str
    description: str
    options: tuple[ConfigOption, ...]
    create_source: Callable[[dict[str, str], tuple[Field, ...], list[int] | None, SourceContext], Source] | None = None
    create_sink: Callable[[dict[str, str], tuple[Field, ...], SourceContext], Sink] | None = None
    # Whether the source is bounded given these options (the planner asks before running).
    is_bounded: Callable[[dict[str, str]], bool] = lambda options: True
    # Other factories (formats) whose options also apply, e.g. 'csv.*' for filesystem.
    formats: tuple[str, ...] = ()
    # Option prefixes passed through unchecked (e.g. 'properties.' for a Kafka client).
    prefixes: tuple[str, ...] = ()


_CONNECTORS: dict[str, ConnectorFactory] = {}


def register_connector(factory: ConnectorFactory) -> ConnectorFactory:
    _CONNECTORS[factory.name] = factory
    return factory


def get_connector(name: str) -> ConnectorFactory:
    _ensure_loaded()
    try:
        return _CONNECTORS[name]
    except KeyError:
        known = ", ".join(sorted(_CONNECTORS))
        raise ConnectorError(f"Could not find any factory for identifier '{name}'. Available: {known}") from None


def connector_names() -> list[str]:
    _ensure_loaded()
    return sorted(_CONNECTORS)


def _ensure_loaded() -> None:
    """Import the connector modules (they register themselves on import)."""
    import_submodules("runtime.connectors", skip=("base",))
