"""The 'orc' format through pyarrow.orc (Flink's flink-orc: Hive's ORC type mapping).

Reading decodes one stripe at a time and casts each column to the table's Arrow layout;
offsets are `{"rows": n}` and `seek` skips whole stripes before slicing into the right one.
Writing takes Hive's table properties that Flink forwards to the ORC writer ('orc.compress'
and the like, declared below); a property pyarrow's ORC writer has no equivalent for is not
declared, so the table is refused naming it rather than silently ignoring it.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from runtime.connectors.base import ConfigOption, SourceContext, parse_size
from runtime.connectors.formats import FileFormat, FileWriter, register_format
from runtime.connectors.formats.columnar import ColumnarFileReader, external_columns
from runtime.errors import ConnectorError, DataError
from runtime.map_values import external_type
from runtime.types import Field

# ORC's codecs as Hive names them; LZO is ORC's too but pyarrow cannot write it.
_CODECS = {"NONE": "uncompressed", "ZLIB": "zlib", "SNAPPY": "snappy", "LZ4": "lz4", "ZSTD": "zstd"}

OPTIONS: tuple[ConfigOption[Any], ...] = (
    ConfigOption(
        "orc.compress",
        type="enum",
        default="ZLIB",
        values=tuple(_CODECS),
        description="Compression codec of written ORC files (Hive's table property; LZO is not supported).",
    ),
    ConfigOption(
        "orc.compress.size",
        type="int",
        default="262144",
        description="Size in bytes of each compression chunk.",
    ),
    ConfigOption(
        "orc.stripe.size",
        default="64MB",
        description="Size of a stripe (the unit a reader decodes at once); bytes, or with a unit ('64MB').",
    ),
    ConfigOption(
        "orc.row.index.stride",
        type="int",
        default="10000",
        description="Rows between entries of the row index.",
    ),
    ConfigOption(
        "orc.bloom.filter.columns",
        description="Comma-separated columns to write Bloom filters for.",
    ),
    ConfigOption(
        "orc.bloom.filter.fpp",
        default="0.05",
        description="False-positive probability of the Bloom filters (between 0 and 1).",
    ),
)


def _orc() -> Any:
    """pyarrow.orc, imported when an ORC file is opened (not every pyarrow build has it)."""
    try:
        import pyarrow.orc as orc
    except ImportError as e:  # pragma: no cover - pyarrow built without ORC
        raise ConnectorError(f"The 'orc' format needs pyarrow built with ORC support: {e}") from None
    return orc


class OrcFileReader(ColumnarFileReader):
    format_name = "ORC"

    def __init__(
        self,
        path: str,
        fields: tuple[Field, ...],
        projection: list[int] | None,
        options: dict[str, str],
        ctx: SourceContext,
    ) -> None:
        super().__init__(path, fields, projection)
        try:
            self._file = _orc().ORCFile(path)
            names = set(self._file.schema.names)
        except (pa.ArrowInvalid, OSError) as e:
            raise DataError(f"Cannot read ORC file: {e}", path) from None
        self._columns = [f.name for f in self.fields if f.name in names]
        self._stripe = 0

    def _next(self) -> pa.RecordBatch | None:
        if self._stripe >= self._file.nstripes:
            return None
        try:
            batch = self._file.read_stripe(self._stripe, columns=self._columns)
        except (pa.ArrowInvalid, OSError) as e:
            raise DataError(f"Cannot read ORC stripe {self._stripe}: {e}", self.path) from None
        self._stripe += 1
        return batch

    def seek(self, offset: Any) -> None:
        target = int(offset["rows"]) if isinstance(offset, dict) else int(offset)
        self._stripe, self._pending, skip = 0, None, target
        while skip > 0:
            batch = self._next()
            if batch is None:
                break
            if batch.num_rows > skip:
                self._pending = batch.slice(skip)
                skip = 0
            else:
                skip -= batch.num_rows
        self._rows = target


class OrcFileWriter(FileWriter):
    def __init__(self, path: str, fields: tuple[Field, ...], options: dict[str, str], ctx: SourceContext) -> None:
        self.fields = fields
        self.schema = pa.schema([pa.field(f.name, external_type(f.type), f.type.nullable) for f in fields])
        codec = options.get("orc.compress", "ZLIB").strip().upper()
        if codec not in _CODECS:
            raise ConnectorError(
                f"Unsupported 'orc.compress' codec '{codec}': streamsql writes ORC with {', '.join(_CODECS)}."
            )
        bloom = [c.strip() for c in (options.get("orc.bloom.filter.columns") or "").split(",") if c.strip()]
        names = [f.name for f in fields]
        unknown = [c for c in bloom if c not in names]
        if unknown:
            raise ConnectorError(f"'orc.bloom.filter.columns' names '{unknown[0]}', which is not a column of the file.")
        self._path = path
        self._writer = _orc().ORCWriter(
            path,
            compression=_CODECS[codec],
            compression_block_size=int(options.get("orc.compress.size", "262144")),
            stripe_size=parse_size(options.get("orc.stripe.size", "64MB"), "orc.stripe.size"),
            row_index_stride=int(options.get("orc.row.index.stride", "10000")),
            bloom_filter_columns=[names.index(c) for c in bloom] or None,
            bloom_filter_fpp=float(options.get("orc.bloom.filter.fpp", "0.05")),
        )
        self.bytes_written = 0

    def write(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows == 0:
            return
        cols = external_columns(batch, self.fields, f"ORC file {self._path}")
        data = pa.Table.from_batches([pa.RecordBatch.from_arrays(cols, schema=self.schema)])
        self._writer.write(data)
        self.bytes_written += data.nbytes

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None


register_format(
    FileFormat(
        name="orc",
        extension="orc",
        description="Apache ORC columnar files (Hive's type mapping).",
        options=OPTIONS,
        open_reader=OrcFileReader,
        open_writer=OrcFileWriter,
    )
)
