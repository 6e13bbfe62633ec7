"""The 'parquet' format's documented options (timestamps: INT96 or INT64 in a unit, UTC or
the local zone) and the 'orc' format (round trips, Hive's table properties)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest

from runtime.connectors.base import SourceContext
from runtime.connectors.formats import get_format
from runtime.connectors.validation import ConnectorOptionError, validate_table_options
from runtime.errors import ConnectorError
from runtime.types import (
    ARRAY,
    BIGINT,
    BOOLEAN,
    DATE,
    DECIMAL,
    DOUBLE,
    INT,
    MAP,
    STRING,
    TIMESTAMP,
    TIMESTAMP_LTZ,
    Field,
    arrow_schema,
)

from .conftest import read_all
from .test_filesystem import _write

STAMPS = (Field("id", INT()), Field("ts", TIMESTAMP(6)), Field("lt", TIMESTAMP_LTZ(3)))
STAMP_ROWS: list[dict[str, Any]] = [
    {
        "id": 1,
        "ts": dt.datetime(2024, 7, 1, 12, 0, 0, 123456),
        "lt": dt.datetime(2024, 7, 1, 10, 0, 0, 500000, tzinfo=dt.UTC),
    },
    {"id": 2, "ts": None, "lt": None},
]


def _write_stamps(path: Path, **options: str) -> Path:
    batch = pa.RecordBatch.from_pylist(STAMP_ROWS, schema=arrow_schema(STAMPS))
    _write({"path": str(path), "format": "parquet", **options}, STAMPS, [batch])
    return next(path.glob("*.parquet"))


def _read_stamps(path: Path, **options: str) -> list[dict]:
    return read_all({"connector": "filesystem", "path": str(path), "format": "parquet", **options}, STAMPS).to_pylist()


def test_timestamps_are_int96_by_default_as_in_hive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    f = _write_stamps(tmp_path / "p")
    schema = pq.ParquetFile(f).schema
    assert schema.column(1).physical_type == "INT96" and schema.column(2).physical_type == "INT96"
    assert _read_stamps(tmp_path / "p") == STAMP_ROWS


@pytest.mark.parametrize(("unit", "arrow_unit"), [("millis", "ms"), ("micros", "us"), ("nanos", "ns")])
def test_int64_timestamps_in_the_chosen_unit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unit: str, arrow_unit: str
) -> None:
    monkeypatch.setenv("TZ", "UTC")
    options = {"parquet.write.int64.timestamp": "true", "parquet.timestamp.time.unit": unit}
    f = _write_stamps(tmp_path / unit, **options)
    file = pq.ParquetFile(f)
    assert file.schema.column(1).physical_type == "INT64"
    assert file.schema_arrow.field("ts").type == pa.timestamp(arrow_unit)
    rows = _read_stamps(tmp_path / unit, **options)
    expected_ts = STAMP_ROWS[0]["ts"].replace(microsecond=123000) if unit == "millis" else STAMP_ROWS[0]["ts"]
    assert rows[0]["ts"] == expected_ts and rows[0]["lt"] == STAMP_ROWS[0]["lt"] and rows[1] == STAMP_ROWS[1]


def test_utc_timezone_false_stores_the_wall_clock_of_the_local_zone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TZ", "Europe/Berlin")  # UTC+2 in July
    options = {"parquet.write.int64.timestamp": "true"}
    local = _write_stamps(tmp_path / "local", **options)
    utc = _write_stamps(tmp_path / "utc", **options, **{"parquet.utc-timezone": "true"})
    stored_local = pq.read_table(local).column("ts")[0].as_py()
    stored_utc = pq.read_table(utc).column("ts")[0].as_py()
    assert stored_utc == STAMP_ROWS[0]["ts"]
    assert stored_local == STAMP_ROWS[0]["ts"] - dt.timedelta(hours=2)
    # each reads its own file back unchanged
    assert _read_stamps(tmp_path / "local", **options) == STAMP_ROWS
    assert _read_stamps(tmp_path / "utc", **options, **{"parquet.utc-timezone": "true"}) == STAMP_ROWS


def test_parquet_options_are_validated() -> None:
    base = {"connector": "filesystem", "path": "/x", "format": "parquet"}
    validate_table_options(
        {
            **base,
            "parquet.utc-timezone": "true",
            "parquet.timestamp.time.unit": "millis",
            "parquet.write.int64.timestamp": "true",
        }
    )
    with pytest.raises(ConnectorOptionError, match="parquet.timestamp.time.unit"):
        validate_table_options({**base, "parquet.timestamp.time.unit": "seconds"})
    with pytest.raises(ConnectorOptionError, match="parquet.block.size"):
        validate_table_options({**base, "parquet.block.size": "1"})


ORC_FIELDS = (
    Field("id", BIGINT()),
    Field("name", STRING()),
    Field("price", DECIMAL(10, 2)),
    Field("ok", BOOLEAN()),
    Field("ts", TIMESTAMP(3)),
    Field("d", DATE()),
    Field("x", DOUBLE()),
    Field("xs", ARRAY(INT())),
    Field("m", MAP(STRING(), INT())),
)


def _orc_rows(n: int) -> list[dict]:
    return [
        {
            "id": i,
            "name": None if i % 3 == 0 else f"n{i}",
            "price": Decimal(i) / 4,
            "ok": i % 2 == 0,
            "ts": dt.datetime(2024, 1, 1) + dt.timedelta(milliseconds=i),
            "d": dt.date(2024, 1, 1) + dt.timedelta(days=i),
            "x": i / 3,
            "xs": [i, None],
            "m": [{"key": "k", "value": i}],
        }
        for i in range(n)
    ]


def test_orc_round_trip_with_hive_properties(tmp_path: Path) -> None:
    rows = _orc_rows(50)
    batch = pa.RecordBatch.from_pylist(rows, schema=arrow_schema(ORC_FIELDS))
    options = {"path": str(tmp_path / "o"), "format": "orc", "orc.compress": "SNAPPY", "orc.bloom.filter.columns": "id"}
    _write(options, ORC_FIELDS, [batch])
    f = next((tmp_path / "o").glob("*.orc"))
    assert orc.ORCFile(str(f)).compression == "SNAPPY"
    assert read_all({"connector": "filesystem", **options}, ORC_FIELDS).to_pylist() == rows
    # a projection reads only the named columns
    projected = read_all({"connector": "filesystem", **options}, ORC_FIELDS, projection=[6, 0]).to_pylist()
    assert projected == [{"x": r["x"], "id": r["id"]} for r in rows]


def test_orc_reader_resumes_from_its_offset(tmp_path: Path) -> None:
    rows = _orc_rows(30)
    batch = pa.RecordBatch.from_pylist(rows, schema=arrow_schema(ORC_FIELDS))
    _write({"path": str(tmp_path / "o"), "format": "orc"}, ORC_FIELDS, [batch])
    f = str(next((tmp_path / "o").glob("*.orc")))
    fmt = get_format("orc")
    reader = fmt.open_reader(f, ORC_FIELDS, None, {}, SourceContext("BATCH"))
    first = reader.read(7)
    assert first is not None and first.num_rows == 7
    resumed = fmt.open_reader(f, ORC_FIELDS, None, {}, SourceContext("BATCH"))
    resumed.seek(reader.offset())
    rest = []
    while (b := resumed.read(10)) is not None:
        rest += b.to_pylist()
    assert rest == rows[7:]


def test_orc_refuses_what_it_cannot_write(tmp_path: Path) -> None:
    base = {"connector": "filesystem", "path": str(tmp_path), "format": "orc"}
    with pytest.raises(ConnectorOptionError, match="orc.compress"):
        validate_table_options({**base, "orc.compress": "LZO"})
    with pytest.raises(ConnectorOptionError, match="orc.unknown"):
        validate_table_options({**base, "orc.unknown": "1"})
    batch = pa.RecordBatch.from_pylist(_orc_rows(1), schema=arrow_schema(ORC_FIELDS))
    with pytest.raises(ConnectorError, match="'orc.bloom.filter.columns' names 'nope'"):
        _write({"path": str(tmp_path / "b"), "format": "orc", "orc.bloom.filter.columns": "nope"}, ORC_FIELDS, [batch])
