"""The Parquet reader decodes one batch ahead in a thread (runtime/connectors/formats/
parquet_format.py): the rows, their order, offsets and seeks are those of a plain read,
errors reach the caller, and closing (or dropping) a reader ends its thread."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from runtime.connectors.base import SourceContext
from runtime.connectors.formats.parquet_format import ParquetFileReader, _ReadAhead
from runtime.graph import BATCH
from runtime.types import BIGINT, Field

ROWS = 200_000


def _file(tmp_path: Path) -> Path:
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"x": np.arange(ROWS, dtype=np.int64)}), path, row_group_size=70_000)
    return path


def _reader(path: Path) -> ParquetFileReader:
    return ParquetFileReader(str(path), (Field("x", BIGINT()),), None, {}, SourceContext(mode=BATCH))


def _read_all(reader: ParquetFileReader, max_rows: int) -> list[int]:
    out: list[int] = []
    while (batch := reader.read(max_rows)) is not None:
        out += batch.column(0).to_pylist()
    return out


def _ahead_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "parquet-read-ahead"]


def test_rows_offsets_and_seek_are_a_plain_reads(tmp_path: Path) -> None:
    path = _file(tmp_path)
    reader = _reader(path)
    assert _read_all(reader, 50_000) == list(range(ROWS))
    assert reader.offset() == {"rows": ROWS}
    reader.close()
    reader = _reader(path)
    head = reader.read(30_000)
    assert head is not None and reader.offset() == {"rows": 30_000}
    reader.seek({"rows": 150_001})  # inside the third row group, while a batch waits decoded
    assert _read_all(reader, 65_536) == list(range(150_001, ROWS))
    reader.close()
    assert not _ahead_threads()


def test_closing_or_dropping_a_reader_mid_file_ends_its_thread(tmp_path: Path) -> None:
    path = _file(tmp_path)
    reader = _reader(path)
    assert reader.read(10) is not None
    reader.close()
    assert not _ahead_threads()
    reader = _reader(path)
    assert reader.read(10) is not None
    del reader
    gc.collect()
    for t in _ahead_threads():
        t.join(timeout=30)
    assert not _ahead_threads()


def test_an_error_reading_reaches_the_caller() -> None:
    def batches() -> Iterator[pa.RecordBatch]:
        yield pa.record_batch([pa.array([1])], names=["x"])
        raise OSError("disk gone")

    ahead = _ReadAhead(batches())
    first = ahead.next()
    assert first is not None and first.num_rows == 1
    with pytest.raises(OSError, match="disk gone"):
        ahead.next()
    assert ahead.next() is None
    ahead.close()
