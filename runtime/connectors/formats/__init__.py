"""File formats of the filesystem connector (csv, json, debezium-json, parquet).

A format turns one file into RecordBatches of a table's projected physical columns
(`FileReader`) and batches into one part file (`FileWriter`). Each format declares its
`WITH` options (Flink's names, e.g. 'csv.field-delimiter') so the filesystem connector can
accept them and the docs list them.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from runtime.connectors.base import ConfigOption, SourceContext
from runtime.errors import ConnectorError
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


ReaderFactory = Callable[[str, tuple[Field, ...], list[int] | None, dict[str, str], SourceContext], FileReader]
WriterFactory = Callable[[str, tuple[Field, ...], dict[str, str], SourceContext], FileWriter]


@dataclass(frozen=True)
class FileFormat:
    name: str
    extension: str
    description: str
    options: tuple[ConfigOption, ...]
    open_reader: ReaderFactory
    open_writer: WriterFactory | None = None
    # A changelog format (debezium-json) produces an `__op` column and rows of all kinds.
    changelog: bool = False


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


def format_names() -> list[str]:
    _ensure_loaded()
    return sorted(_FORMATS)


def all_format_options() -> tuple[ConfigOption, ...]:
    _ensure_loaded()
    return tuple(opt for name in sorted(_FORMATS) for opt in _FORMATS[name].options)


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
