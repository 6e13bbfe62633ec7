"""The filesystem connector: directories, monitoring, the sink and round trips."""

from __future__ import annotations

import datetime as dt
import os
import time
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest

from runtime.batch import with_system_columns
from runtime.connectors.base import SourceContext, get_connector
from runtime.connectors.filesystem import parse_duration_ms
from runtime.errors import ConnectorError
from runtime.types import ARRAY, BIGINT, BOOLEAN, DATE, DECIMAL, DOUBLE, INT, STRING, TIMESTAMP, Field, arrow_schema

from .conftest import read_all

SCHEMA = (Field("id", INT()), Field("s", STRING()))


def test_directory_files_in_name_order_skipping_hidden(tmp_path):
    (tmp_path / "b.csv").write_text("2,b\n")
    (tmp_path / "a.csv").write_text("1,a\n")
    (tmp_path / ".hidden.csv").write_text("9,h\n")
    (tmp_path / "_SUCCESS").write_text("8,x\n")
    sub = tmp_path / "c"
    sub.mkdir()
    (sub / "z.csv").write_text("3,c\n")
    table = read_all({"connector": "filesystem", "path": str(tmp_path), "format": "csv"}, SCHEMA)
    assert table.column("id").to_pylist() == [1, 2, 3]


def test_relative_path_resolves_against_cwd(tmp_path, monkeypatch):
    (tmp_path / "t.csv").write_text("1,a\n")
    monkeypatch.chdir(tmp_path)
    assert read_all({"connector": "filesystem", "path": "t.csv", "format": "csv"}, SCHEMA).num_rows == 1


def test_missing_path_is_a_connector_error(tmp_path):
    with pytest.raises(ConnectorError):
        read_all({"connector": "filesystem", "path": str(tmp_path / "nope"), "format": "csv"}, SCHEMA)


def test_unknown_format(tmp_path):
    with pytest.raises(ConnectorError, match="avro"):
        read_all({"connector": "filesystem", "path": str(tmp_path), "format": "avro"}, SCHEMA)


def test_durations():
    assert parse_duration_ms("1 s") == 1000
    assert parse_duration_ms("100ms") == 100
    assert parse_duration_ms("2 min") == 120_000
    assert parse_duration_ms("250") == 250
    with pytest.raises(ConnectorError):
        parse_duration_ms("soon")


def test_monitor_interval_discovers_new_files_in_streaming(tmp_path):
    (tmp_path / "a.csv").write_text("1,a\n")
    factory = get_connector("filesystem")
    opts = {"path": str(tmp_path), "format": "csv", "source.monitor-interval": "10 ms"}
    assert factory.is_bounded(opts) is False
    source = factory.create_source(opts, SCHEMA, None, SourceContext("STREAMING"))
    assert source.bounded is False
    assert [os.path.basename(s) for s in source.splits()] == ["a.csv"]
    assert source.discover_splits() == []
    (tmp_path / "b.csv").write_text("2,b\n")
    (tmp_path / ".b.csv.inprogress").write_text("junk\n")
    time.sleep(0.02)
    new = source.discover_splits()
    assert [os.path.basename(s) for s in new] == ["b.csv"]
    reader = source.create_reader(new[0])
    assert reader.read(10).column("id").to_pylist() == [2]
    time.sleep(0.02)
    assert source.discover_splits() == []
    # BATCH mode ignores the interval: bounded
    assert factory.create_source(opts, SCHEMA, None, SourceContext("BATCH")).bounded is True


def _write(options, schema, batches):
    factory = get_connector("filesystem")
    sink = factory.create_sink(options, schema, SourceContext("BATCH"))
    sink.open()
    for b in batches:
        sink.write(b)
    sink.close()
    return sink


ROUND_SCHEMA = (
    Field("id", BIGINT()),
    Field("name", STRING()),
    Field("price", DECIMAL(10, 2)),
    Field("ok", BOOLEAN()),
    Field("ts", TIMESTAMP(3)),
    Field("d", DATE()),
    Field("x", DOUBLE()),
)


def _round_batch() -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist(
        [
            {
                "id": 1,
                "name": 'a, "quoted"',
                "price": Decimal("1.50"),
                "ok": True,
                "ts": dt.datetime(2024, 1, 1, 10, 0, 1, 500000),
                "d": dt.date(2024, 2, 29),
                "x": 1e10,
            },
            {
                "id": 2,
                "name": "multi\nline ü",
                "price": Decimal("-0.05"),
                "ok": False,
                "ts": dt.datetime(1969, 12, 31, 23, 59, 59),
                "d": dt.date(1970, 1, 1),
                "x": 0.1,
            },
            {"id": 3, "name": None, "price": None, "ok": None, "ts": None, "d": None, "x": None},
        ],
        schema=arrow_schema(ROUND_SCHEMA),
    )


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet"])
def test_sink_round_trip(tmp_path, fmt):
    out = tmp_path / "out"
    extra = {"csv.null-literal": ""} if fmt == "csv" else {}
    sink = _write({"path": str(out), "format": fmt, **extra}, ROUND_SCHEMA, [_round_batch()])
    files = sorted(os.listdir(out))
    assert (
        len(files) == 1
        and files[0].startswith("part-")
        and files[0].endswith("-0-0." + ("json" if fmt == "json" else fmt))
    )
    assert sink.rows_written == 3
    back = read_all({"connector": "filesystem", "path": str(out), "format": fmt, **extra}, ROUND_SCHEMA)
    expected = _round_batch().to_pylist()
    if fmt == "csv":
        expected[2]["name"] = None  # '' and NULL are both written empty
    assert back.to_pylist() == expected


def test_csv_sink_text(tmp_path):
    out = tmp_path / "out"
    _write({"path": str(out), "format": "csv"}, ROUND_SCHEMA, [_round_batch()])
    text = (out / os.listdir(out)[0]).read_text()
    # Jackson's CsvGenerator quotes a string holding a character at or below ',' (the space)
    assert text.splitlines()[0] == '1,"a, ""quoted""",1.50,true,"2024-01-01 10:00:01.5",2024-02-29,1.0E10'
    assert text.endswith(",,,,,,\n")


def test_json_sink_text(tmp_path):
    out = tmp_path / "out"
    _write({"path": str(out), "format": "json"}, ROUND_SCHEMA, [_round_batch()])
    lines = (out / os.listdir(out)[0]).read_text().splitlines()
    assert (
        lines[0]
        == '{"id":1,"name":"a, \\"quoted\\"","price":1.50,"ok":true,"ts":"2024-01-01 10:00:01.5","d":"2024-02-29","x":1.0E10}'
    )
    assert lines[2] == '{"id":3,"name":null,"price":null,"ok":null,"ts":null,"d":null,"x":null}'


def test_json_sink_nested_round_trip(tmp_path):
    schema = (Field("id", INT()), Field("xs", ARRAY(INT())))
    batch = pa.RecordBatch.from_pylist(
        [{"id": 1, "xs": [1, None, 3]}, {"id": 2, "xs": None}], schema=arrow_schema(schema)
    )
    out = tmp_path / "o"
    _write({"path": str(out), "format": "json"}, schema, [batch])
    assert (
        read_all({"connector": "filesystem", "path": str(out), "format": "json"}, schema).to_pylist()
        == batch.to_pylist()
    )


def test_in_progress_file_is_hidden_until_close(tmp_path):
    out = tmp_path / "out"
    factory = get_connector("filesystem")
    sink = factory.create_sink({"path": str(out), "format": "csv"}, SCHEMA, SourceContext("STREAMING"))
    sink.open()
    sink.write(pa.RecordBatch.from_pylist([{"id": 1, "s": "a"}], schema=arrow_schema(SCHEMA)))
    names = os.listdir(out)
    assert len(names) == 1 and names[0].startswith(".")
    assert read_all({"connector": "filesystem", "path": str(out), "format": "csv"}, SCHEMA).num_rows == 0
    sink.flush()  # a checkpoint finishes the part file
    sink.write(pa.RecordBatch.from_pylist([{"id": 2, "s": "b"}], schema=arrow_schema(SCHEMA)))
    sink.close()
    visible = sorted(n for n in os.listdir(out) if not n.startswith("."))
    assert len(visible) == 2 and visible[0].endswith("-0-0.csv") and visible[1].endswith("-0-1.csv")
    assert read_all({"connector": "filesystem", "path": str(out), "format": "csv"}, SCHEMA).column(
        "id"
    ).to_pylist() == [1, 2]


def test_rolling_by_size(tmp_path):
    out = tmp_path / "out"
    batch = pa.RecordBatch.from_pylist([{"id": i, "s": "x" * 10} for i in range(10)], schema=arrow_schema(SCHEMA))
    _write({"path": str(out), "format": "csv", "sink.rolling-policy.file-size": "50b"}, SCHEMA, [batch, batch, batch])
    assert len(os.listdir(out)) == 3


def test_sink_rejects_changelog_rows(tmp_path):
    factory = get_connector("filesystem")
    sink = factory.create_sink({"path": str(tmp_path / "o"), "format": "csv"}, SCHEMA, SourceContext("STREAMING"))
    sink.open()
    data = pa.RecordBatch.from_pylist([{"id": 1, "s": "a"}, {"id": 1, "s": "a"}], schema=arrow_schema(SCHEMA))
    sink.write(with_system_columns(data, kinds=[0, 0]))  # inserts with __op are fine
    with pytest.raises(ConnectorError, match="update and delete"):
        sink.write(with_system_columns(data, kinds=[0, 1]))


def test_parquet_seek(tmp_path):
    import pyarrow.parquet as pq

    path = tmp_path / "t.parquet"
    pq.write_table(
        pa.table({"id": pa.array(range(1000), pa.int64()), "s": [str(i) for i in range(1000)]}),
        path,
        row_group_size=100,
    )
    factory = get_connector("filesystem")
    source = factory.create_source({"path": str(path), "format": "parquet"}, SCHEMA, [0], SourceContext("BATCH"))
    assert source.total_rows() == 1000
    reader = source.create_reader(source.splits()[0])
    reader.read(250)
    off = reader.offset()
    fresh = source.create_reader(source.splits()[0])
    fresh.seek(off)
    got = []
    while (b := fresh.read(128)) is not None:
        assert b.schema.field(0).type == pa.int32()  # cast to the table's INT
        got.extend(b.column(0).to_pylist())
    assert got == list(range(250, 1000))


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_empty_files_and_crlf(tmp_path, fmt):
    (tmp_path / "a_empty").write_text("")
    text = "1,a\r\n2,b\r\n" if fmt == "csv" else '{"id": 1, "s": "a"}\r\n{"id": 2, "s": "b"}\r\n'
    (tmp_path / "b_data").write_bytes(text.encode())
    table = read_all({"connector": "filesystem", "path": str(tmp_path), "format": fmt}, SCHEMA)
    assert table.to_pylist() == [{"id": 1, "s": "a"}, {"id": 2, "s": "b"}]


def test_an_unreadable_directory_is_an_error_not_an_empty_table(tmp_path: Path) -> None:
    """os.walk hides listing errors; the source must not read them as 'no files' (the
    test runs as any user, so the permission error is simulated)."""
    from unittest import mock

    from runtime.connectors.filesystem import list_files
    from runtime.errors import ConnectorError

    (tmp_path / "sub").mkdir()
    assert list_files(str(tmp_path / "missing")) == []  # may appear later (monitoring)
    denied = PermissionError(13, "Permission denied", str(tmp_path / "sub"))
    with mock.patch("os.scandir", side_effect=denied), pytest.raises(ConnectorError, match="Permission denied"):
        list_files(str(tmp_path / "sub"))
