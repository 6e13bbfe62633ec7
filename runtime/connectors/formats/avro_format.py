"""The 'avro' format: a record's payload is one Avro datum (no container file, no schema
registry) of the record schema Flink derives from the table's columns, read and written
with fastavro. Message connectors only (Kafka)."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

from runtime.connectors.base import ConfigOption, SourceContext
from runtime.connectors.formats import (
    FileFormat,
    MessageDecoder,
    MessageEncoder,
    messages_only,
    opt_bool,
    register_format,
)
from runtime.errors import ConnectorError, DataError
from runtime.map_values import has_map, pairs, pairs_form
from runtime.types import DataType, Field

OPTIONS: tuple[ConfigOption[Any], ...] = (
    ConfigOption(
        "avro.encoding",
        type="enum",
        default="binary",
        values=("binary", "json"),
        description="Avro's encoding of each record: 'binary', or 'json' (Avro's JSON encoding, a nullable "
        'field\'s value wrapped as {"type": value}).',
    ),
    ConfigOption(
        "avro.codec",
        description="Flink's compression codec of Avro container files (filesystem connector only); accepted "
        "and unused for Kafka records, which carry one uncompressed datum each.",
    ),
    ConfigOption(
        "avro.timestamp_mapping.legacy",
        type="boolean",
        default="true",
        description="Map both TIMESTAMP and TIMESTAMP_LTZ to Avro's timestamp-millis/-micros (Flink's legacy "
        "mapping); 'false': TIMESTAMP to local-timestamp-millis/-micros, TIMESTAMP_LTZ to timestamp-millis/-micros.",
    ),
)


def avro_type(dtype: DataType, name: str, legacy: bool = True) -> Any:
    """The Avro schema of a column, as Flink's AvroSchemaConverter derives it (a nullable
    type is a union with "null" first; a timestamp of precision 4 to 6 is in microseconds)."""
    n = dtype.name
    if n in ("TINYINT", "SMALLINT", "INT"):
        t: Any = "int"
    elif n == "BIGINT":
        t = "long"
    elif n == "BOOLEAN":
        t = "boolean"
    elif n == "FLOAT":
        t = "float"
    elif n == "DOUBLE":
        t = "double"
    elif dtype.is_string:
        t = "string"
    elif n in ("BINARY", "VARBINARY", "BYTES"):
        t = "bytes"
    elif n == "DATE":
        t = {"type": "int", "logicalType": "date"}
    elif n == "TIME":
        t = {"type": "int", "logicalType": "time-millis"}
    elif n in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        p = 6 if dtype.precision is None else dtype.precision
        if p > 6:
            raise ConnectorError(
                f"Avro does not support {n} type with precision: {p}, it only supports precision less than 6."
            )
        local = n == "TIMESTAMP" and not legacy
        t = {"type": "long", "logicalType": f"{'local-' if local else ''}timestamp-{'millis' if p <= 3 else 'micros'}"}
    elif n == "DECIMAL":
        t = {"type": "bytes", "logicalType": "decimal", "precision": dtype.precision, "scale": dtype.scale}
    elif n == "ARRAY":
        t = {"type": "array", "items": avro_type(dtype.children[0], name, legacy)}
    elif n == "MAP":
        t = {"type": "map", "values": avro_type(dtype.children[1], name, legacy)}
    elif n == "ROW":
        t = {
            "type": "record",
            "name": name,
            "fields": [
                {"name": fn, "type": avro_type(ct, f"{name}_{fn}", legacy)}
                for fn, ct in zip(dtype.field_names, dtype.children, strict=True)
            ],
        }
    else:
        raise ConnectorError(f"The 'avro' format does not support type {dtype}.")
    return ["null", t] if dtype.nullable else t


def avro_schema(fields: tuple[Field, ...], legacy: bool = True) -> dict[str, Any]:
    """The record schema of a table's columns (Flink names it 'record')."""
    return {
        "type": "record",
        "name": "record",
        "namespace": "org.apache.flink.avro.generated",
        "fields": [{"name": f.name, "type": avro_type(f.type, f"record_{f.name}", legacy)} for f in fields],
    }


def _parsed_schema(fields: tuple[Field, ...], options: dict[str, str]) -> tuple[Any, bool]:
    """The table's parsed Avro schema and whether records use Avro's JSON encoding."""
    import fastavro

    encoding = (options.get("avro.encoding") or "binary").lower()
    if encoding not in ("binary", "json"):
        raise ConnectorError(f"Unsupported value '{encoding}' for 'avro.encoding': 'binary' or 'json'.")
    legacy = opt_bool(options, "avro.timestamp_mapping.legacy", True)
    return fastavro.parse_schema(avro_schema(fields, legacy)), encoding == "json"


class AvroDecoder(MessageDecoder):
    """One Avro datum per payload, read with fastavro's schemaless reader (Avro has no
    columnar decoder: each datum is decoded by fastavro's C code, then the whole poll is
    turned into Arrow columns at once)."""

    def __init__(self, fields: tuple[Field, ...], options: dict[str, str], ctx: SourceContext) -> None:
        self.fields = fields
        self.schema = pa.schema([pa.field(f.name, f.type.to_arrow()) for f in fields])
        self.parsed, self.json = _parsed_schema(fields, options)
        self.skipped_rows = 0

    def _read(self, data: bytes) -> dict[str, Any]:
        from fastavro import json_reader, schemaless_reader

        if self.json:
            return next(iter(json_reader(io.StringIO(data.decode("utf-8")), self.parsed)))  # type: ignore[arg-type,no-any-return]
        return schemaless_reader(io.BytesIO(data), self.parsed, None)  # type: ignore[arg-type,return-value]

    def decode(self, payloads: pa.Array, locate: Callable[[int], str]) -> tuple[pa.RecordBatch, np.ndarray]:
        rows: list[dict[str, Any]] = []
        src: list[int] = []
        for i, data in enumerate(payloads.to_pylist()):
            if data is None:
                continue
            try:
                rows.append(self._read(data))
            except Exception as e:  # noqa: BLE001 - any decoding failure of fastavro
                raise DataError(f"Failed to deserialize Avro record: {e} ({locate(i)})") from None
            src.append(i)
        for f in self.fields:
            if has_map(f.type):  # Avro maps are dicts; the MAP layout takes pairs (runtime/map_values.py)
                for r in rows:
                    r[f.name] = pairs_form(r.get(f.name), f.type)
        return pa.RecordBatch.from_pylist(rows, schema=self.schema), np.asarray(src, np.int64)


class AvroEncoder(MessageEncoder):
    """One Avro datum per row, written with fastavro's schemaless writer (Avro has no
    columnar encoder: the batch is turned into Python rows at once, then each datum is
    encoded by fastavro's C code)."""

    def __init__(self, fields: tuple[Field, ...], options: dict[str, str], ctx: SourceContext) -> None:
        self.names = [f.name for f in fields]
        self.fields = fields
        self.parsed, self.json = _parsed_schema(fields, options)

    def encode(self, batch: pa.RecordBatch) -> pa.Array:
        from fastavro import json_writer, schemaless_writer

        rows = pa.RecordBatch.from_arrays(batch.columns[: len(self.names)], names=self.names).to_pylist()
        for f in self.fields:
            if has_map(f.type):
                for r in rows:
                    r[f.name] = _avro_maps(r[f.name], f.type)
        out = []
        for row in rows:
            if self.json:  # one record of Avro's JSON encoding, without a line separator
                text = io.StringIO()
                json_writer(text, self.parsed, [row])
                # compact, as Avro's Java JsonEncoder (Jackson) writes it
                compact = json.dumps(json.loads(text.getvalue()), separators=(",", ":"), ensure_ascii=False)
                out.append(compact.encode("utf-8"))
                continue
            buf = io.BytesIO()
            schemaless_writer(buf, self.parsed, row)
            out.append(buf.getvalue())
        return pa.array(out, pa.binary())


def _avro_maps(value: Any, dtype: DataType) -> Any:
    """A row value with its MAPs as the dicts fastavro writes (an Avro map has string keys:
    a NULL key cannot be written)."""
    if value is None:
        return None
    if dtype.name == "MAP":
        out = {}
        for k, v in pairs(value):
            if k is None:
                raise DataError("Avro format cannot serialize a MAP with a NULL key (Avro map keys are strings).")
            out[k] = _avro_maps(v, dtype.children[1])
        return out
    if dtype.name in ("ARRAY", "MULTISET"):
        return [_avro_maps(v, dtype.children[0]) for v in value]
    if dtype.name == "ROW":
        return {fn: _avro_maps(value.get(fn), ft) for fn, ft in zip(dtype.field_names, dtype.children, strict=True)}
    return value


register_format(
    FileFormat(
        name="avro",
        extension="avro",
        description="One Avro datum per record (binary or JSON encoding), its schema derived from the table's columns "
        "as Flink derives it.",
        options=OPTIONS,
        open_reader=messages_only("avro"),
        open_decoder=AvroDecoder,
        open_encoder=AvroEncoder,
    )
)

# Flink's Confluent Avro formats read each record's writer schema from a Confluent Schema
# Registry by the id in the record's first bytes, and register the schema they write. No
# schema registry runs from a Python package (the tests start every server they use), so
# this format could not be tested here against a real one: it is refused with the reason.
_REGISTRY_REASON = (
    "it reads and registers Avro schemas in a Confluent Schema Registry ('{name}.url'), which streamsql does "
    "not talk to. Use 'avro' (the schema derived from the table's columns, no registry){alt}."
)
for _name, _alt in (("avro-confluent", ""), ("debezium-avro-confluent", " or 'debezium-json'")):
    register_format(
        FileFormat(
            name=_name,
            extension="avro",
            description=f"Flink's '{_name}' format: refused (needs a Confluent Schema Registry).",
            options=(),
            open_reader=messages_only(_name),
            refused=_REGISTRY_REASON.format(name=_name, alt=_alt),
        )
    )
