"""The 'avro' format: a record's payload is one Avro datum (no container file, no schema
registry) of the record schema Flink derives from the table's columns, read and written
with fastavro. Message connectors only (Kafka)."""

from __future__ import annotations

from typing import Any

from runtime.connectors.base import ConfigOption
from runtime.connectors.formats import FileFormat, messages_only, register_format

OPTIONS: tuple[ConfigOption[Any], ...] = (
    ConfigOption(
        "avro.encoding",
        type="enum",
        default="binary",
        values=("binary", "json"),
        description="Serialization of the Avro data: Avro's binary encoding (only 'binary' is supported).",
    ),
    ConfigOption(
        "avro.timestamp_mapping.legacy",
        type="boolean",
        default="true",
        description="Map both TIMESTAMP and TIMESTAMP_LTZ to Avro's timestamp-millis (Flink's legacy mapping).",
    ),
)

register_format(
    FileFormat(
        name="avro",
        extension="avro",
        description="One Avro datum per record (binary encoding, the schema derived from the table's columns).",
        options=OPTIONS,
        open_reader=messages_only("avro"),
    )
)
