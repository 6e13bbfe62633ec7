"""Flink's filesystem and jdbc options that this session added: the source's path filter,
the sink's time-based rolling, the legacy lookup-cache names, and the jdbc checks that run
before any connection."""

from __future__ import annotations

import time
from pathlib import Path

import pyarrow as pa
import pytest

from runtime.connectors.base import SourceContext, TableDescription, get_connector
from runtime.connectors.jdbc import check_table
from runtime.connectors.lookup import LookupCache
from runtime.connectors.validation import ConnectorOptionError, validate_table_options
from runtime.errors import ConnectorError
from runtime.types import INT, STRING, Field, arrow_schema

from .conftest import read_all

FIELDS = (Field("id", INT()), Field("s", STRING()))


def test_path_regex_pattern_keeps_the_files_whose_absolute_path_matches(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("1,a\n")
    (tmp_path / "b.txt").write_text("2,b\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.csv").write_text("3,c\n")
    options = {"connector": "filesystem", "path": str(tmp_path), "format": "csv"}
    assert read_all(options, FIELDS).column("id").to_pylist() == [1, 2, 3]
    only_csv = {**options, "source.path.regex-pattern": f"{tmp_path}/.*\\.csv"}
    assert read_all(only_csv, FIELDS).column("id").to_pylist() == [1, 3]
    top_level = {**options, "source.path.regex-pattern": f"{tmp_path}/[^/]*"}
    assert read_all(top_level, FIELDS).column("id").to_pylist() == [1, 2]
    with pytest.raises(ConnectorError, match="'source.path.regex-pattern'"):
        read_all({**options, "source.path.regex-pattern": "("}, FIELDS)


def _sink(path: Path, **options: str):
    create = get_connector("filesystem").create_sink
    assert create is not None
    sink = create({"path": str(path), "format": "csv", **options}, FIELDS, SourceContext("STREAMING"))
    sink.open()
    return sink


def _published(path: Path) -> list[str]:
    return sorted(p.name for p in path.iterdir() if not p.name.startswith("."))


def test_inactivity_interval_rolls_an_idle_part_file_on_the_timer(tmp_path: Path) -> None:
    batch = pa.RecordBatch.from_pylist([{"id": 1, "s": "a"}], schema=arrow_schema(FIELDS))
    idle = _sink(tmp_path / "idle", **{"sink.rolling-policy.inactivity-interval": "1 ms"})
    idle.check_ms = 0  # check at every timer call
    idle.write(batch)
    assert _published(tmp_path / "idle") == []
    time.sleep(0.01)
    idle.on_timer()  # no rows for longer than the inactivity interval: the file is rolled
    assert len(_published(tmp_path / "idle")) == 1
    busy = _sink(tmp_path / "busy")  # defaults: 30 min inactivity, 1 min check interval
    busy.write(batch)
    busy.on_timer()
    assert _published(tmp_path / "busy") == []
    busy.close()
    assert len(_published(tmp_path / "busy")) == 1


def test_check_interval_spaces_the_checks(tmp_path: Path) -> None:
    batch = pa.RecordBatch.from_pylist([{"id": 1, "s": "a"}], schema=arrow_schema(FIELDS))
    sink = _sink(
        tmp_path / "c",
        **{"sink.rolling-policy.inactivity-interval": "1 ms", "sink.rolling-policy.check-interval": "1 h"},
    )
    sink.write(batch)
    time.sleep(0.01)
    sink.on_timer()  # the last check was less than an hour ago
    assert _published(tmp_path / "c") == []


def test_accepted_filesystem_options_validate() -> None:
    validate_table_options(
        {
            "connector": "filesystem",
            "path": "/x",
            "format": "csv",
            "source.report-statistics": "NONE",
            "sink.shuffle-by-partition.enable": "true",
            "auto-compaction": "false",
            "sink.partition-commit.watermark-time-zone": "Asia/Shanghai",
            "partition.time-extractor.timestamp-pattern": "$dt $hour:00:00",
        }
    )
    with pytest.raises(ConnectorOptionError, match="sink.partition-commit.trigger"):
        validate_table_options(
            {"connector": "filesystem", "path": "/x", "format": "csv", "sink.partition-commit.trigger": "later"}
        )


def test_legacy_lookup_cache_options_enable_the_cache_as_in_flink() -> None:
    now = [0.0]
    cache = LookupCache({"lookup.cache.max-rows": "1", "lookup.cache.ttl": "10 s"}, lambda: now[0])
    assert cache.enabled and cache.max_rows == 1 and cache.expire_write == 10_000
    rows = pa.table({"k": ["a"]})
    cache.put(("a",), rows)
    assert cache.get(("a",)) is rows
    cache.put(("b",), rows)  # one key at most: 'a' is evicted
    assert cache.get(("a",)) is None
    now[0] = 11.0
    assert cache.get(("b",)) is None  # expired after the ttl
    assert not LookupCache({"lookup.cache.ttl": "10 s"}).enabled  # max-rows unset (-1): no cache
    assert not LookupCache({"lookup.cache.max-rows": "5", "lookup.cache.ttl": "0 s"}).enabled
    missing = LookupCache({"lookup.cache.max-rows": "5", "lookup.cache.caching-missing-key": "false"})
    missing.put(("x",), pa.table({"k": pa.array([], pa.string())}))
    assert missing.entries == {}


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("compatible-mode", "mysql", "'compatible-mode' = 'mysql' is not supported"),
        ("sink.max-retries", "-1", "'sink.max-retries' option shouldn't be negative, but is -1"),
        ("lookup.max-retries", "-2", "'lookup.max-retries' option shouldn't be negative"),
        ("connection.max-retry-timeout", "500 ms", "shouldn't be smaller than 1 second"),
    ],
)
def test_jdbc_option_checks_fail_before_connecting(option: str, value: str, message: str) -> None:
    options = {"url": "jdbc:postgresql://127.0.0.1:1/none", "table-name": "t", option: value}
    with pytest.raises(ConnectorError, match=message):
        check_table(TableDescription("t", options, FIELDS))


def _rows(start: int, n: int) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist(
        [{"id": i, "s": f"v {i}"} for i in range(start, start + n)], schema=arrow_schema(FIELDS)
    )


@pytest.mark.parametrize("fmt", ["csv", "parquet", "orc"])
def test_auto_compaction_merges_a_checkpoints_files(tmp_path: Path, fmt: str) -> None:
    create = get_connector("filesystem").create_sink
    assert create is not None
    options = {
        "path": str(tmp_path),
        "format": fmt,
        "auto-compaction": "true",
        "sink.rolling-policy.file-size": "1b",  # a part file per write
        "compaction.file-size": "1MB",  # unset, it would be the rolling size: no merging
    }
    sink = create(options, FIELDS, SourceContext("STREAMING"))
    sink.deferred_commit = True  # checkpointing
    sink.open()
    for start in (0, 3, 6):
        sink.write(_rows(start, 3))
    c1 = sink.prepare_commit(1)
    assert len(c1) == 3 and _published(tmp_path) == []
    sink.commit([c1])
    assert _published(tmp_path) == [f"compacted-{Path(c1[0][1]).name}"]  # one file, named after the first
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # the inputs are gone
    sink.commit([c1])  # a restore commits again: nothing changes
    sink.write(_rows(9, 1))
    sink.commit([sink.prepare_commit(2)])  # each checkpoint's files are merged on their own
    assert len(_published(tmp_path)) == 2
    read = read_all({"connector": "filesystem", "path": str(tmp_path), "format": fmt}, FIELDS)
    assert sorted(read.column("id").to_pylist()) == list(range(10))


def test_compaction_file_size_bounds_the_bins_and_batch_compacts_at_the_end(tmp_path: Path) -> None:
    sink = _sink(
        tmp_path, **{"auto-compaction": "true", "sink.rolling-policy.file-size": "1b", "compaction.file-size": "20b"}
    )
    for start in range(0, 12, 2):  # six files of two rows ('0,v 0\n1,v 1\n': 12 bytes)
        sink.write(_rows(start, 2))
    assert _published(tmp_path) == []  # without checkpoints: at the end of input
    sink.close()
    names = _published(tmp_path)
    assert len(names) == 3 and all(n.startswith("compacted-part-") for n in names)
    assert read_all({"connector": "filesystem", "path": str(tmp_path), "format": "csv"}, FIELDS).num_rows == 12
