"""The filesystem sink's 'partition-time' commit trigger: a partition commits when the
watermark, read as a wall clock in 'sink.partition-commit.watermark-time-zone', passes the
partition's extracted time plus the delay; with checkpointing, the watermark of the
checkpoint's barrier decides, and the commit comes when the checkpoint completes."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest

from runtime.batch import ROW_KIND
from runtime.connectors.base import SourceContext
from runtime.connectors.filesystem_commit import PartitionTimeTrigger
from runtime.connectors.filesystem_sink import FilesystemSink
from runtime.errors import ConnectorError
from runtime.types import INT, STRING, Field
from streamsql import EnvironmentSettings, TableEnvironment

SCHEMA = (Field("id", INT()), Field("dt", STRING()), Field("hour", STRING()))
OPTS = {
    "format": "csv",
    "$internal.partition-keys": "dt,hour",
    "sink.partition-commit.policy.kind": "success-file",
    "sink.partition-commit.trigger": "partition-time",
    "partition.time-extractor.timestamp-pattern": "$dt $hour:00:00",
    "sink.partition-commit.delay": "1 h",
}


def _batch(rows: list[tuple]) -> pa.RecordBatch:
    arrays = [pa.array(c, f.type.to_arrow()) for c, f in zip(zip(*rows, strict=True), SCHEMA, strict=True)]
    arrays.append(pa.array([0] * len(rows), pa.int8()))
    return pa.RecordBatch.from_arrays(arrays, names=[*(f.name for f in SCHEMA), ROW_KIND])


def _ms(text: str, zone: dt.tzinfo = dt.UTC) -> int:
    return int(dt.datetime.fromisoformat(text).replace(tzinfo=zone).timestamp() * 1000)


def _sink(path: Path, **extra: str) -> FilesystemSink:
    # '1b': every write rolls, so its file is published at once (no checkpointing)
    options = {**OPTS, "path": str(path), "sink.rolling-policy.file-size": "1b", **extra}
    sink = FilesystemSink(options, SCHEMA, SourceContext("STREAMING"))
    sink.open()
    return sink


def test_commits_when_the_watermark_passes_partition_time_plus_delay(tmp_path: Path) -> None:
    sink = _sink(tmp_path)
    sink.write(_batch([(1, "2020-05-20", "12"), (2, "2020-05-20", "13")]))
    success = tmp_path / "dt=2020-05-20/hour=12/_SUCCESS"
    sink.on_watermark(_ms("2020-05-20 12:59:59.999"))
    assert not success.exists()
    sink.on_watermark(_ms("2020-05-20 13:00:00"))  # 12:00 + 1 h
    assert success.is_file() and not (tmp_path / "dt=2020-05-20/hour=13/_SUCCESS").exists()
    sink.close()  # end of input commits the rest
    assert (tmp_path / "dt=2020-05-20/hour=13/_SUCCESS").is_file()


def test_the_watermark_is_read_in_the_watermark_time_zone(tmp_path: Path) -> None:
    sink = _sink(tmp_path, **{"sink.partition-commit.watermark-time-zone": "Asia/Shanghai"})
    sink.write(_batch([(1, "2020-05-20", "12")]))
    sink.on_watermark(_ms("2020-05-20 04:59:59"))  # 12:59:59 in Shanghai
    assert not (tmp_path / "dt=2020-05-20/hour=12/_SUCCESS").exists()
    sink.on_watermark(_ms("2020-05-20 05:00:00"))  # 13:00 in Shanghai
    assert (tmp_path / "dt=2020-05-20/hour=12/_SUCCESS").is_file()


def test_with_checkpoints_the_barriers_watermark_decides(tmp_path: Path) -> None:
    sink = FilesystemSink({**OPTS, "path": str(tmp_path)}, SCHEMA, SourceContext("STREAMING"))
    sink.deferred_commit = True
    sink.open()
    sink.write(_batch([(1, "2020-05-20", "12")]))
    sink.on_watermark(_ms("2020-05-20 12:30:00"))
    c1 = sink.prepare_commit(1)
    sink.on_watermark(_ms("2020-05-20 14:00:00"))  # after the barrier: not this checkpoint's
    sink.commit([c1])
    success = tmp_path / "dt=2020-05-20/hour=12/_SUCCESS"
    assert (tmp_path / "dt=2020-05-20/hour=12").is_dir() and not success.exists()
    sink.commit([sink.prepare_commit(2)])  # the next barrier carries 14:00
    assert success.is_file()


@pytest.mark.parametrize(
    ("options", "values", "expected"),
    [
        ({}, ["2020-05-20 12:30:00", "x"], "2020-05-20 12:30:00"),  # the first value, default format
        ({}, ["2020-5-2", "x"], "2020-05-02 00:00:00"),  # a date alone is midnight
        ({"partition.time-extractor.timestamp-formatter": "yyyyMMdd"}, ["20200520", "x"], "2020-05-20 00:00:00"),
        (
            {
                "partition.time-extractor.timestamp-pattern": "$dt $hour",
                "partition.time-extractor.timestamp-formatter": "yyyyMMdd HH",
            },
            ["20200520", "07"],
            "2020-05-20 07:00:00",
        ),
    ],
)
def test_partition_time_extraction(options: dict[str, str], values: list[str], expected: str) -> None:
    trigger = PartitionTimeTrigger(options, ["dt", "hour"])
    assert trigger.partition_time_ms(values) == _ms(expected)


def test_a_partition_time_that_does_not_parse_names_the_partition() -> None:
    trigger = PartitionTimeTrigger({}, ["dt"])
    with pytest.raises(ConnectorError, match=r"partition \{'dt': 'today'\}.*timestamp-pattern"):
        trigger.partition_time_ms(["today"])


def test_custom_zone_ids_are_offsets() -> None:
    trigger = PartitionTimeTrigger({"sink.partition-commit.watermark-time-zone": "GMT-08:00"}, ["dt"])
    assert trigger.watermark_wall_ms(_ms("2020-05-20 08:00:00")) == _ms("2020-05-20 00:00:00")


def test_flink_docs_full_example_commits_every_partition_at_the_end(tmp_path: Path) -> None:
    """Flink's filesystem page's full example (a csv file with a watermark in place of Kafka)."""
    (tmp_path / "in.csv").write_text("u1,10.5,2020-05-20 12:01:00\nu2,3.0,2020-05-20 13:30:00\n")
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.execute_sql(
        "CREATE TABLE kafka_table (user_id STRING, order_amount DOUBLE, log_ts TIMESTAMP(3), "
        "WATERMARK FOR log_ts AS log_ts - INTERVAL '5' SECOND) "
        f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'in.csv'}', 'format' = 'csv')"
    )
    env.execute_sql(
        "CREATE TABLE fs_table (user_id STRING, order_amount DOUBLE, dt STRING, `hour` STRING) "
        f"PARTITIONED BY (dt, `hour`) WITH ('connector'='filesystem', 'path'='{tmp_path / 'out'}', "
        "'format'='parquet', 'partition.time-extractor.timestamp-pattern'='$dt $hour:00:00', "
        "'sink.partition-commit.delay'='1 h', 'sink.partition-commit.trigger'='partition-time', "
        "'sink.partition-commit.watermark-time-zone'='Asia/Shanghai', "
        "'sink.partition-commit.policy.kind'='success-file')"
    )
    env.execute_sql(
        "INSERT INTO fs_table SELECT user_id, order_amount, DATE_FORMAT(log_ts, 'yyyy-MM-dd'), "
        "DATE_FORMAT(log_ts, 'HH') FROM kafka_table"
    ).wait()
    assert (tmp_path / "out/dt=2020-05-20/hour=12/_SUCCESS").is_file()
    assert (tmp_path / "out/dt=2020-05-20/hour=13/_SUCCESS").is_file()
    batch = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    batch.execute_sql(
        "CREATE TABLE fs_table (user_id STRING, order_amount DOUBLE, dt STRING, `hour` STRING) "
        f"PARTITIONED BY (dt, `hour`) WITH ('connector'='filesystem', 'path'='{tmp_path / 'out'}', "
        "'format'='parquet')"
    )
    rows = list(batch.execute_sql("SELECT * FROM fs_table WHERE dt='2020-05-20' and `hour`='12'").collect())
    assert [tuple(r) for r in rows] == [("u1", 10.5, "2020-05-20", "12")]
