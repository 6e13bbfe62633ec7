"""The 'raw' format: a record's payload is the value of the table's single column
(STRING / BYTES as is; numbers as fixed-width big- or little-endian bytes), as Flink's
raw format. Message connectors only (Kafka)."""

from __future__ import annotations

import codecs
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.connectors.base import ConfigOption, SourceContext
from runtime.connectors.formats import FileFormat, MessageDecoder, MessageEncoder, messages_only, register_format
from runtime.errors import ConnectorError, DataError
from runtime.types import Field

OPTIONS: tuple[ConfigOption[Any], ...] = (
    ConfigOption(
        "raw.charset",
        default="UTF-8",
        description="Charset of a STRING column's bytes (any charset Python's codecs know by its Java name: "
        "'ISO-8859-1', 'UTF-16BE', ...; UTF-8 is converted by Arrow at once, others value by value).",
    ),
    ConfigOption(
        "raw.endianness",
        type="enum",
        default="big-endian",
        values=("big-endian", "little-endian"),
        description="Byte order of numeric columns.",
    ),
)

# Flink type -> numpy dtype of its fixed-width encoding.
_NUMERIC = {
    "TINYINT": "i1",
    "SMALLINT": "i2",
    "INT": "i4",
    "BIGINT": "i8",
    "FLOAT": "f4",
    "DOUBLE": "f8",
    "BOOLEAN": "u1",
}


class RawDecoder(MessageDecoder):
    def __init__(self, fields: tuple[Field, ...], options: dict[str, str], ctx: SourceContext) -> None:
        if len(fields) != 1:
            raise ConnectorError(
                f"The 'raw' format only supports single physical column. However the defined schema contains "
                f"multiple physical columns: [{', '.join(f.name for f in fields)}]"
            )
        self.field = fields[0]
        charset = options.get("raw.charset") or "UTF-8"
        try:
            self.codec = codecs.lookup(charset).name  # Java's names ('ISO-8859-1', 'UTF-16BE') are Python's too
        except LookupError:
            raise ConnectorError(f"Unsupported 'raw.charset' charset: {charset}.") from None
        # UTF-8 is read and written by Arrow at once; another charset value by value (Python's codecs)
        self.utf8 = self.codec == "utf-8"
        self.little = (options.get("raw.endianness") or "big-endian").lower() == "little-endian"
        name = self.field.type.name
        if not (self.field.type.is_string or name in ("BINARY", "VARBINARY", "BYTES") or name in _NUMERIC):
            raise ConnectorError(
                f"The 'raw' format does not support type {self.field.type} (column '{self.field.name}')."
            )
        self.schema = pa.schema([pa.field(self.field.name, self.field.type.to_arrow())])

    def decode(self, payloads: pa.Array, locate: Callable[[int], str]) -> tuple[pa.RecordBatch, np.ndarray]:
        t = self.field.type
        target = t.to_arrow()
        if t.is_string and not self.utf8:
            values = payloads.to_pylist()
            try:
                col = pa.array([None if v is None else v.decode(self.codec) for v in values], pa.string())
            except UnicodeDecodeError:
                bad = next(i for i, v in enumerate(values) if v is not None and not _decodes(v, self.codec))
                raise DataError(f"Failed to deserialize raw payload of {locate(bad)}: not {self.codec} text.") from None
        elif t.is_string:
            try:
                col = payloads.cast(pa.string())
            except pa.ArrowInvalid:
                bad = next(i for i, v in enumerate(payloads.to_pylist()) if v is not None and not _utf8(v))
                raise DataError(f"Failed to deserialize raw payload of {locate(bad)}: not UTF-8 text.") from None
        elif t.name in _NUMERIC:
            col = self._numbers(payloads, _NUMERIC[t.name], locate)
        else:
            col = payloads.cast(pa.binary())
        col = col.cast(target) if col.type != target else col
        return pa.RecordBatch.from_arrays([col], schema=self.schema), np.arange(len(payloads), dtype=np.int64)

    def _numbers(self, payloads: pa.Array, code: str, locate: Callable[[int], str]) -> pa.Array:
        width = int(code[1])
        lengths = pc.fill_null(pc.binary_length(payloads), width).to_numpy(zero_copy_only=False)
        wrong = np.flatnonzero(lengths != width)
        if len(wrong):
            raise DataError(
                f"Failed to deserialize raw payload of {locate(int(wrong[0]))}: expected {width} bytes, "
                f"got {int(lengths[wrong[0]])}."
            )
        valid = payloads.is_valid().to_numpy(zero_copy_only=False)
        filled = pc.fill_null(payloads.cast(pa.binary()), b"\0" * width)
        dtype = np.dtype(("<" if self.little else ">") + code)
        if len(filled):
            # every payload is exactly `width` bytes: the data buffer is the values back to back
            offsets = np.frombuffer(filled.buffers()[1], np.int32, len(filled) + 1, filled.offset * 4)
            raw = np.frombuffer(filled.buffers()[2], np.uint8)[offsets[0] : offsets[-1]]
            values = raw.view(dtype).astype(dtype.newbyteorder("="))
        else:
            values = np.zeros(0, dtype.newbyteorder("="))
        if code == "u1":
            values = values.astype(bool)
        return pa.array(values, mask=~valid)


def _decodes(b: bytes, codec: str) -> bool:
    try:
        b.decode(codec)
        return True
    except UnicodeDecodeError:
        return False


def _utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


class RawEncoder(MessageEncoder):
    """The single column's value as the payload: STRING as UTF-8, BYTES as is, numbers as
    fixed-width bytes in the chosen byte order (numpy, no row loop); NULL → a NULL payload."""

    def __init__(self, fields: tuple[Field, ...], options: dict[str, str], ctx: SourceContext) -> None:
        self.check = RawDecoder(fields, options, ctx)  # the same checks of the column and options

    def encode(self, batch: pa.RecordBatch) -> pa.Array:
        col = batch.column(0)
        dtype = self.check.field.type
        if dtype.is_string and not self.check.utf8:
            codec = self.check.codec
            return pa.array([None if v is None else v.encode(codec) for v in col.to_pylist()], pa.binary())
        if dtype.is_string or dtype.name in ("BINARY", "VARBINARY", "BYTES"):
            return col.cast(pa.binary())
        code = _NUMERIC[dtype.name]
        values = np.asarray(pc.fill_null(col, False if dtype.name == "BOOLEAN" else 0).to_numpy(zero_copy_only=False))
        data = values.astype(("<" if self.check.little else ">") + code).tobytes()
        width = np.dtype(code).itemsize
        fixed = pa.FixedSizeBinaryArray.from_buffers(pa.binary(width), len(col), [None, pa.py_buffer(data)])
        return pc.if_else(col.is_null(), pa.scalar(None, pa.binary()), fixed.cast(pa.binary()))


register_format(
    FileFormat(
        name="raw",
        extension="raw",
        description="A record's payload is the single column's value (UTF-8 text, bytes, or a fixed-width number).",
        options=OPTIONS,
        open_reader=messages_only("raw"),
        open_decoder=RawDecoder,
        open_encoder=RawEncoder,
    )
)
