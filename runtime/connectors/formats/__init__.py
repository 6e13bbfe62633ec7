"""Formats: of the filesystem connector's files (csv, json, debezium-json, parquet) and of
message connectors' records (Kafka: json, csv, raw, avro, debezium/canal/maxwell-json).

A format turns one file into RecordBatches of a table's projected physical columns
(`FileReader`) and batches into one part file (`FileWriter`); a message format turns the
payloads of many records into one batch at once (`MessageDecoder`). Each format declares its
`WITH` options (Flink's names, e.g. 'csv.field-delimiter') so the filesystem connector can
accept them and the docs list them.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

from runtime.connectors.base import ConfigOption, MetadataColumn, SourceContext
from runtime.errors import ConnectorError
from runtime.frozen import frozen_dataclass
from runtime.plugins import import_submodules
from runtime.types import Field


class FileReader:
    """Reads one file. `read` returns up to `max_rows` rows, or None at the end.

    `offset()` is JSON-able and `seek(offset)` resumes exactly after the last row read.
    `skipped_rows` counts input rows dropped because of 'ignore-parse-errors'."""

    skipped_rows: int = 0

    def read(self, max_rows: int) -> pa.RecordBatch | None:
        raise NotImplementedError

    def offset(self) -> Any:
        raise NotImplementedError

    def seek(self, offset: Any) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass


class FileWriter:
    """Writes batches (data columns only) into one file; `bytes_written` drives rolling."""

    bytes_written: int = 0

    def write(self, batch: pa.RecordBatch) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass


class MessageDecoder:
    """Decodes record payloads (one serialized row, or change event, per record).

    `decode(payloads, locate)` turns a whole poll's payloads (a binary array; NULL for a
    record without one) into one batch of the format's fields, plus `__op` for a changelog
    format, and for each row the index of the payload it came from (a change event may give
    two rows or none; a skipped bad payload none). A bad payload raises a DataError whose
    message names `locate(i)` (e.g. "topic 't', partition 0, offset 42") unless the
    format's 'ignore-parse-errors' is set: then it is skipped and counted in
    `skipped_rows`."""

    skipped_rows: int = 0

    def decode(self, payloads: pa.Array, locate: Callable[[int], str]) -> tuple[pa.RecordBatch, np.ndarray]:
        raise NotImplementedError

    def event_metadata(self, payloads: pa.Array, keys: list[str]) -> list[pa.Array]:
        """The format's metadata `keys` (declared in `FileFormat.metadata`) of each payload:
        one array per key, one value per payload (NULL where a payload lacks it). The
        connector spreads them to the rows with `decode`'s payload indices, so a change
        event's two rows carry the same metadata."""
        raise ConnectorError(f"This format offers no metadata: {', '.join(keys)}.")


class MessageEncoder:
    """Encodes rows into record payloads (message connectors' sinks).

    `encode(batch)` turns a batch of the format's fields (plus `__op` for a changelog
    format) into one payload per row (a binary array), at once with Arrow kernels where
    the format allows."""

    def encode(self, batch: pa.RecordBatch) -> pa.Array:
        raise NotImplementedError


ReaderFactory = Callable[[str, tuple[Field, ...], list[int] | None, dict[str, str], SourceContext], FileReader]
WriterFactory = Callable[[str, tuple[Field, ...], dict[str, str], SourceContext], FileWriter]
# (fields, the format's options without the connector's prefix, context) -> decoder
DecoderFactory = Callable[[tuple[Field, ...], dict[str, str], SourceContext], MessageDecoder]
# (fields, the format's options without the connector's prefix, context) -> encoder
EncoderFactory = Callable[[tuple[Field, ...], dict[str, str], SourceContext], MessageEncoder]


@frozen_dataclass
class FileFormat:
    """A file format ('csv', 'json', 'parquet', ...): its options and how to read and write it."""

    name: str
    extension: str
    description: str
    options: tuple[ConfigOption, ...]
    open_reader: ReaderFactory
    open_writer: WriterFactory | None = None
    # A changelog format (debezium-json) produces an `__op` column and rows of all kinds.
    changelog: bool = False
    # Decodes record payloads (message connectors); None: a file-only format.
    open_decoder: DecoderFactory | None = None
    # Encodes rows into record payloads (message connectors' sinks); None: cannot be written there.
    open_encoder: EncoderFactory | None = None
    # Read-only metadata of a payload (Debezium's 'source.table', ...): a message connector
    # offers them as '<prefix><key>' (Kafka: 'value.source.table'); the decoder's
    # `event_metadata` reads them.
    metadata: tuple[MetadataColumn, ...] = ()
    # Checks of option combinations at planning time (given the format's options with the
    # connector's prefix removed); raises ConnectorError with Flink's message.
    validate: Callable[[dict[str, str]], None] | None = None
    # Why a format Flink has cannot work here (e.g. it needs a schema registry): naming it
    # fails planning with this reason instead of "unknown format".
    refused: str | None = None


def format_options_view(options: dict[str, str], prefix: str) -> dict[str, str]:
    """A connector's options as a format reads them: with `prefix` ('value.', 'key.')
    removed from the keys that carry it (Kafka's 'value.json.ignore-parse-errors' is the
    value format's 'json.ignore-parse-errors')."""
    if not prefix:
        return dict(options)
    return {k[len(prefix) :]: v for k, v in options.items() if k.startswith(prefix)}


def messages_only(name: str) -> ReaderFactory:
    """The `open_reader` of a format that only decodes messages (raw, avro, canal-json...)."""

    def refuse(
        path: str, fields: tuple[Field, ...], projection: list[int] | None, options: dict[str, str], ctx: SourceContext
    ) -> FileReader:
        raise ConnectorError(f"Format '{name}' reads message payloads only (e.g. the 'kafka' connector), not files.")

    return refuse


_FORMATS: dict[str, FileFormat] = {}


def register_format(fmt: FileFormat) -> FileFormat:
    _FORMATS[fmt.name] = fmt
    return fmt


def get_format(name: str) -> FileFormat:
    _ensure_loaded()
    try:
        return _FORMATS[name]
    except KeyError:
        known = ", ".join(sorted(_FORMATS))
        raise ConnectorError(
            f"Could not find any format factory for identifier '{name}' in the classpath. Available: {known}"
        ) from None


def format_changelog_mode(name: str) -> str:
    """The row kinds a format carries, as a connector declares them (its scan's and its
    sink's changelog mode): every kind for a changelog format (debezium-json, canal-json,
    ...: its records say what they are), inserts only for any other (or an unknown) name."""
    _ensure_loaded()
    fmt = _FORMATS.get(name)
    return "I,UB,UA,D" if fmt is not None and fmt.changelog else "I"


def format_names() -> list[str]:
    _ensure_loaded()
    return sorted(_FORMATS)


def all_format_options(names: tuple[str, ...] | None = None) -> tuple[ConfigOption, ...]:
    """The options of the formats `names` (all formats when None), in name order."""
    _ensure_loaded()
    return tuple(opt for name in sorted(_FORMATS) if names is None or name in names for opt in _FORMATS[name].options)


def _ensure_loaded() -> None:
    """Import the format modules (they register themselves on import); the helpers are not formats."""
    import_submodules("runtime.connectors.formats", skip=("convert", "text"))


# ---------------------------------------------------------------------- option helpers
def opt_bool(options: dict[str, str], key: str, default: bool = False) -> bool:
    value = options.get(key)
    if value is None:
        return default
    v = value.strip().lower()
    if v not in ("true", "false"):
        raise ConnectorError(f"Invalid value for option '{key}': expected 'true' or 'false' but was '{value}'")
    return v == "true"


def opt_char(options: dict[str, str], key: str, default: str | None) -> str | None:
    """A single-character option; Java escapes such as '\\t' are unescaped as Flink does."""
    value = options.get(key)
    if value is None:
        return default
    if len(value) > 1 and "\\" in value:
        try:
            value = codecs.decode(value, "unicode_escape")
        except UnicodeDecodeError:
            pass
    if len(value) != 1:
        raise ConnectorError(f"Option '{key}' must be a single character, but was: '{options.get(key)}'")
    return value
