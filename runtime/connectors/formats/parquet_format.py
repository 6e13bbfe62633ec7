"""The 'parquet' format through pyarrow.parquet.

Reading casts each column to the table's Arrow layout (`DataType.to_arrow()`); offsets are
`{"rows": n}` and `seek` skips whole row groups before slicing into the right one.

Timestamps as Flink writes them: TIMESTAMP and TIMESTAMP_LTZ as INT96 (Hive's layout)
unless 'parquet.write.int64.timestamp' is set, then as INT64 in
'parquet.timestamp.time.unit'. With 'parquet.utc-timezone' = 'false' (Flink's default)
the wall-clock value is taken in the local time zone (Flink: the JVM's default zone; here
the `TZ` environment variable or /etc/timezone, UTC when neither is set) when it is turned
into the stored instant, and back when read; 'true' stores the wall clock as UTC.
"""

from __future__ import annotations

import os
import queue
import threading
import weakref
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from runtime.connectors.base import ConfigOption, SourceContext
from runtime.connectors.formats import FileFormat, FileWriter, register_format
from runtime.connectors.formats.columnar import ColumnarFileReader, external_columns
from runtime.errors import ConnectorError, DataError
from runtime.map_values import external_type
from runtime.types import Field

OPTIONS: tuple[ConfigOption[Any], ...] = (
    ConfigOption(
        "parquet.compression",
        default="SNAPPY",
        values=("UNCOMPRESSED", "SNAPPY", "GZIP", "ZSTD", "LZ4", "BROTLI"),
        type="enum",
        description="Compression codec of written Parquet files (ParquetOutputFormat's key, as Flink forwards it).",
    ),
    ConfigOption(
        "parquet.utc-timezone",
        type="boolean",
        default="false",
        description="Convert between stored instants and TIMESTAMP values in UTC ('true', as Hive 3.x) or in the "
        "local time zone ('false', as Hive 0.x-2.x; Flink takes the JVM's zone, streamsql the `TZ` environment "
        "variable or /etc/timezone, else UTC).",
    ),
    ConfigOption(
        "parquet.timestamp.time.unit",
        type="enum",
        default="micros",
        values=("nanos", "micros", "millis"),
        description="Unit of INT64 timestamps written with 'parquet.write.int64.timestamp' (finer digits are "
        "truncated).",
    ),
    ConfigOption(
        "parquet.write.int64.timestamp",
        type="boolean",
        default="false",
        description="Write TIMESTAMP and TIMESTAMP_LTZ as INT64 timestamps in 'parquet.timestamp.time.unit' (what "
        "Spark reads) instead of INT96 (Hive's layout, Flink's default).",
    ),
)

_UNITS = {"nanos": "ns", "micros": "us", "millis": "ms"}


def local_zone() -> str:
    """The zone 'parquet.utc-timezone' = 'false' converts in: `TZ`, else /etc/timezone, else UTC
    (a JVM takes its default zone from the same places)."""
    zone = os.environ.get("TZ", "").lstrip(":")
    if not zone:
        try:
            with open("/etc/timezone", encoding="utf-8") as f:
                zone = f.read().strip()
        except OSError:
            zone = ""
    return zone or "UTC"


def _is_timestamp(t: pa.DataType) -> bool:
    return pa.types.is_timestamp(t)


def to_stored_instant(col: pa.Array, zone: str) -> pa.Array:
    """A timestamp column's wall clock (UTC's for an LTZ column) taken in `zone`: the
    instant a writer in that zone stores. Same type as `col`."""
    if zone == "UTC":
        return col
    naive = col.cast(pa.timestamp(col.type.unit))
    instant = pc.assume_timezone(naive, zone, ambiguous="earliest", nonexistent="earliest")
    return instant.cast(pa.int64()).cast(col.type)


def from_stored_instant(col: pa.Array, zone: str) -> pa.Array:
    """The inverse of `to_stored_instant`: the wall clock, in `zone`, of stored instants."""
    if zone == "UTC":
        return col
    unit = col.type.unit
    as_zone = col.cast(pa.int64()).cast(pa.timestamp(unit, tz=zone))
    return pc.local_timestamp(as_zone).cast(pa.int64()).cast(col.type)


# Rows per batch the reader decodes (the source slices them to `max_rows`).
_BATCH_ROWS = 65536


def _fetch(batches: Iterator[pa.RecordBatch], out: queue.Queue[tuple[str, Any]], stop: threading.Event) -> None:
    """The read-ahead thread: every batch, then ("end", None), or ("error", e), into `out`;
    it quits when `stop` is set (the reader closed or was dropped)."""

    def put(item: tuple[str, Any]) -> bool:
        while not stop.is_set():
            try:
                out.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    try:
        for batch in batches:
            if not put(("batch", batch)):
                return
        put(("end", None))
    except BaseException as e:  # noqa: BLE001 - handed to the reading thread, raised there
        put(("error", e))


class _ReadAhead:
    """Decodes the next batch of a pyarrow batch iterator in a background thread while the
    task works on the current one, as Flink's source reader fetches in a thread of its
    own: decompressing and decoding (Arrow C++, the GIL released) overlaps the operators'
    work. At most one batch waits decoded. The batches and their order are the
    iterator's; an error reading is raised by `next` in the caller's thread. The thread
    holds no reference to this object, so a reader dropped without `close` stops it too."""

    def __init__(self, batches: Iterator[pa.RecordBatch]) -> None:
        self._batches: Iterator[pa.RecordBatch] | None = batches
        self._queue: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=1)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._done = False
        weakref.finalize(self, self._stop.set)

    def next(self) -> pa.RecordBatch | None:
        if self._done:
            return None
        if self._thread is None:
            self._thread = threading.Thread(
                target=_fetch, args=(self._batches, self._queue, self._stop), name="parquet-read-ahead", daemon=True
            )
            self._batches = None
            self._thread.start()
        kind, value = self._queue.get()
        if kind == "batch":
            return value
        self._done = True
        # the thread has handed over its last item: wait until it is gone, so nothing of
        # this reader runs (or frees objects) after the split's end
        self._thread.join()
        if kind == "error":
            raise value
        return None

    def close(self) -> None:
        self._stop.set()
        try:  # a thread waiting to hand over a batch gets it taken, and sees the stop
            self._queue.get_nowait()
        except queue.Empty:
            pass
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self._done = True


class ParquetFileReader(ColumnarFileReader):
    format_name = "Parquet"

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
            # pre_buffer off: pyarrow's pre-buffer cache keeps every row group read until the
            # reader closes (apache/arrow#39808), so memory grew with the file's compressed size
            # (a 50M-row file: +390 MB); reading a row group at a time is as fast locally.
            self._file = pq.ParquetFile(path, pre_buffer=False)
        except (pa.ArrowInvalid, OSError) as e:
            raise DataError(f"Cannot read Parquet file: {e}", path) from None
        names = set(self._file.schema_arrow.names)
        self._columns = [f.name for f in self.fields if f.name in names]
        utc = options.get("parquet.utc-timezone", "false").strip().lower() == "true"
        self._zone = "UTC" if utc else local_zone()
        self._iter: Any = None
        self._ahead: _ReadAhead | None = None
        self._start(0)

    def _start(self, row_group: int) -> None:
        self.close()
        groups = list(range(row_group, self._file.num_row_groups))
        self._iter = (
            self._file.iter_batches(batch_size=_BATCH_ROWS, row_groups=groups, columns=self._columns)
            if groups
            else iter(())
        )
        rows = sum(self._file.metadata.row_group(g).num_rows for g in groups)
        # a file of more than one batch is decoded one batch ahead, in a thread
        self._ahead = _ReadAhead(self._iter) if rows > _BATCH_ROWS else None

    def _next(self) -> pa.RecordBatch | None:
        return self._ahead.next() if self._ahead is not None else next(self._iter, None)

    def _stored(self, column: pa.Array) -> pa.Array:
        return from_stored_instant(column, self._zone) if _is_timestamp(column.type) else column

    def seek(self, offset: Any) -> None:
        target = int(offset["rows"]) if isinstance(offset, dict) else int(offset)
        meta = self._file.metadata
        group, before = 0, 0
        while group < meta.num_row_groups and before + meta.row_group(group).num_rows <= target:
            before += meta.row_group(group).num_rows
            group += 1
        self._start(group)
        self._pending = None
        skip = target - before
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

    def close(self) -> None:
        if self._ahead is not None:
            self._ahead.close()
            self._ahead = None


class ParquetFileWriter(FileWriter):
    def __init__(self, path: str, fields: tuple[Field, ...], options: dict[str, str], ctx: SourceContext) -> None:
        # MAP columns are written as Parquet MAPs (runtime/map_values.py)
        self.fields = fields
        self.schema = pa.schema([pa.field(f.name, external_type(f.type), f.type.nullable) for f in fields])
        codec = options.get("parquet.compression", "SNAPPY").upper()
        if codec not in OPTIONS[0].values:
            raise ConnectorError(f"Unsupported 'parquet.compression' codec '{codec}'.")
        self._path = path
        utc = options.get("parquet.utc-timezone", "false").strip().lower() == "true"
        self._zone = "UTC" if utc else local_zone()
        int64 = options.get("parquet.write.int64.timestamp", "false").strip().lower() == "true"
        unit = options.get("parquet.timestamp.time.unit", "micros").strip().lower()
        if unit not in _UNITS:
            raise ConnectorError(
                f"Invalid value for option 'parquet.timestamp.time.unit': '{unit}' (one of nanos, micros, millis)."
            )
        stamps: dict[str, Any] = (
            {"coerce_timestamps": _UNITS[unit], "allow_truncated_timestamps": True}
            if int64
            else {"use_deprecated_int96_timestamps": True}
        )
        self._nanos = int64 and unit == "nanos"
        if self._nanos:  # nanosecond INT64 timestamps need the 2.6 format and a nanosecond schema
            stamps = {"version": "2.6"}
            self.schema = pa.schema(
                [f.with_type(pa.timestamp("ns", tz=f.type.tz)) if _is_timestamp(f.type) else f for f in self.schema]
            )
        self._writer = pq.ParquetWriter(
            path, self.schema, compression="NONE" if codec == "UNCOMPRESSED" else codec, **stamps
        )
        self.bytes_written = 0

    def write(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows == 0:
            return
        cols = external_columns(batch, self.fields, f"Parquet file {self._path}")
        cols = [to_stored_instant(c, self._zone) if _is_timestamp(c.type) else c for c in cols]
        if self._nanos:
            cols = [c.cast(pa.timestamp("ns", tz=c.type.tz)) if _is_timestamp(c.type) else c for c in cols]
        data = pa.RecordBatch.from_arrays(cols, schema=self.schema)
        self._writer.write_batch(data)
        self.bytes_written += data.nbytes

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None


register_format(
    FileFormat(
        name="parquet",
        extension="parquet",
        description="Apache Parquet columnar files.",
        options=OPTIONS,
        open_reader=ParquetFileReader,
        open_writer=ParquetFileWriter,
    )
)
