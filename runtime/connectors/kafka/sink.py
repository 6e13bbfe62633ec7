"""Placeholder of the Kafka sink (owned by the helper building the sink side; it replaces
this file). Contract with runtime/connectors/kafka/__init__.py:

- `SINK_OPTIONS` / `UPSERT_SINK_OPTIONS`: the `sink.*` (and transaction) options of the
  `kafka` / `upsert-kafka` sinks, appended to the factories' declared options;
- `create_sink(options, schema, ctx)` / `create_upsert_sink(options, schema, ctx)`: the
  factories' `create_sink`.

This module is imported when the connectors register: it must not import confluent_kafka
at module level (start-up time).
"""

from __future__ import annotations

from typing import Any

from runtime.connectors.base import ConfigOption, Sink, SourceContext
from runtime.errors import ConnectorError
from runtime.types import Field

SINK_OPTIONS: tuple[ConfigOption[Any], ...] = ()
UPSERT_SINK_OPTIONS: tuple[ConfigOption[Any], ...] = ()


def create_sink(options: dict[str, str], schema: tuple[Field, ...], ctx: SourceContext) -> Sink:
    raise ConnectorError("Writing to the 'kafka' connector is not supported yet.")


def create_upsert_sink(options: dict[str, str], schema: tuple[Field, ...], ctx: SourceContext) -> Sink:
    raise ConnectorError("Writing to the 'upsert-kafka' connector is not supported yet.")
