"""Partitioned filesystem tables (`PARTITIONED BY`): Flink's `k=v/` layout without the
partition columns in the files, NULL → `__DEFAULT_PARTITION__`, the two-phase commit per
partition (publish at checkpoint completion, restore publishes / aborts), success files,
and the source reading the partition columns back."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pytest

from runtime.batch import ROW_KIND
from runtime.connectors.base import SourceContext
from runtime.connectors.filesystem_partitions import (
    escape_path_name,
    partition_dirs,
    split_by_partition,
    unescape_path_name,
)
from runtime.connectors.filesystem_sink import FilesystemSink
from runtime.errors import ConnectorError
from runtime.types import INT, STRING, Field
from streamsql import TableEnvironment

SCHEMA = (Field("id", INT()), Field("name", STRING()), Field("dt", STRING()), Field("hr", INT()))
OPTS = {"format": "json", "$internal.partition-keys": "dt,hr"}


def _batch(rows: list[tuple]) -> pa.RecordBatch:
    cols = list(zip(*rows, strict=True))
    arrays = [pa.array(c, f.type.to_arrow()) for c, f in zip(cols, SCHEMA, strict=True)]
    arrays.append(pa.array([0] * len(rows), pa.int8()))
    return pa.RecordBatch.from_arrays(arrays, names=[*(f.name for f in SCHEMA), ROW_KIND])


def _visible(root: Path) -> dict[str, list[dict]]:
    """partition dir -> rows of its published part files."""
    out: dict[str, list[dict]] = {}
    for dirpath, _dirs, names in os.walk(root):
        for n in sorted(names):
            if n.startswith("part-"):
                rel = os.path.relpath(dirpath, root)
                out.setdefault(rel, []).extend(json.loads(x) for x in Path(dirpath, n).read_text().splitlines())
    return out


def _hidden(root: Path) -> list[str]:
    return [n for _d, _s, names in os.walk(root) for n in names if n.startswith(".")]


def test_layout_and_partition_columns_left_out_of_the_files(tmp_path: Path) -> None:
    sink = FilesystemSink({**OPTS, "path": str(tmp_path)}, SCHEMA, SourceContext("STREAMING"))
    sink.open()
    sink.write(_batch([(1, "a", "2024-01-01", 10), (2, "b", "2024-01-01", 11), (3, "c", "2024-01-01", 10)]))
    sink.write(_batch([(4, "d", None, 10), (5, "e", "  ", None)]))
    sink.close()
    assert _visible(tmp_path) == {
        "dt=2024-01-01/hr=10": [{"id": 1, "name": "a"}, {"id": 3, "name": "c"}],
        "dt=2024-01-01/hr=11": [{"id": 2, "name": "b"}],
        "dt=__DEFAULT_PARTITION__/hr=10": [{"id": 4, "name": "d"}],
        "dt=__DEFAULT_PARTITION__/hr=__DEFAULT_PARTITION__": [{"id": 5, "name": "e"}],
    }
    names = [n for _d, _s, ns in os.walk(tmp_path) for n in ns]
    assert all(n.startswith(f"part-{sink.uuid}-0-") and n.endswith(".json") for n in names)
    assert _hidden(tmp_path) == []


def test_escaping_round_trips() -> None:
    assert escape_path_name("a/b:c=d%") == "a%2Fb%3Ac%3Dd%25"
    assert unescape_path_name("a%2Fb%3Ac%3Dd%25") == "a/b:c=d%"
    assert escape_path_name("2024-01-01") == "2024-01-01"
    batch = pa.record_batch([pa.array(["a/b", "x", "a/b", None, "50%"]), pa.array([1, 2, 3, 4, 5])], ["dt", "v"])
    fields = (Field("dt", STRING()), Field("v", INT()))
    dirs = partition_dirs(batch, [0], fields, "__DEFAULT_PARTITION__", "UTC")
    assert dirs.to_pylist() == ["dt=a%2Fb", "dt=x", "dt=a%2Fb", "dt=__DEFAULT_PARTITION__", "dt=50%25"]
    split = [(d, rows.column(1).to_pylist()) for d, rows in split_by_partition(batch, dirs)]
    assert split == [("dt=a%2Fb", [1, 3]), ("dt=x", [2]), ("dt=__DEFAULT_PARTITION__", [4]), ("dt=50%25", [5])]


def test_two_phase_commit_per_partition_and_restore(tmp_path: Path) -> None:
    ctx = SourceContext("STREAMING")
    sink = FilesystemSink({**OPTS, "path": str(tmp_path)}, SCHEMA, ctx)
    sink.deferred_commit = True
    sink.open()
    sink.write(_batch([(1, "a", "d1", 1), (2, "b", "d2", 1)]))
    committable = sink.prepare_commit(1)
    assert len(committable) == 2 and _visible(tmp_path) == {}  # pending, hidden
    state = sink.snapshot_state()
    sink.write(_batch([(3, "c", "d1", 1), (4, "d", "d3", 2)]))  # after the barrier: never committed
    sink.prepare_commit(2)
    sink.write(_batch([(5, "e", "d1", 1)]))  # in progress when the process dies
    # The process dies here; a new sink restores checkpoint 1.
    restored = FilesystemSink({**OPTS, "path": str(tmp_path)}, SCHEMA, ctx)
    restored.deferred_commit = True
    restored.open()
    restored.restore_state(state, [committable])
    assert _visible(tmp_path) == {"dt=d1/hr=1": [{"id": 1, "name": "a"}], "dt=d2/hr=1": [{"id": 2, "name": "b"}]}
    assert _hidden(tmp_path) == []  # checkpoint 2's pending files and the in-progress file are gone
    restored.write(_batch([(3, "c", "d1", 1)]))
    restored.commit([restored.prepare_commit(2)])
    assert [r["id"] for r in _visible(tmp_path)["dt=d1/hr=1"]] == [1, 3]


def test_success_file_policy(tmp_path: Path) -> None:
    opts = {**OPTS, "path": str(tmp_path), "sink.partition-commit.policy.kind": "success-file"}
    sink = FilesystemSink(opts, SCHEMA, SourceContext("STREAMING"))
    sink.deferred_commit = True
    sink.open()
    sink.write(_batch([(1, "a", "d1", 1)]))
    c1 = sink.prepare_commit(1)
    assert not (tmp_path / "dt=d1/hr=1/_SUCCESS").exists()
    sink.commit([c1])
    assert (tmp_path / "dt=d1/hr=1/_SUCCESS").is_file()
    delayed = FilesystemSink(
        {**opts, "path": str(tmp_path / "delayed"), "sink.partition-commit.delay": "1 h"},
        SCHEMA,
        SourceContext("STREAMING"),
    )
    delayed.deferred_commit = True
    delayed.open()
    delayed.write(_batch([(1, "a", "d1", 1)]))
    delayed.commit([delayed.prepare_commit(1)])
    assert not (tmp_path / "delayed/dt=d1/hr=1/_SUCCESS").exists()
    delayed.flush()  # end of input commits every written partition
    assert (tmp_path / "delayed/dt=d1/hr=1/_SUCCESS").is_file()


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("sink.partition-commit.policy.kind", "metastore", "needs a metastore"),
        ("sink.partition-commit.policy.kind", "custom", "Java class 'sink.partition-commit.policy.class'"),
        ("sink.partition-commit.policy.kind", "hive", "not supported"),
        ("sink.partition-commit.trigger", "later", "one of process-time, partition-time"),
        ("sink.partition-commit.watermark-time-zone", "Mars/Base", "full time zone name"),
        ("partition.time-extractor.kind", "custom", "Java class"),
    ],
)
def test_unsupported_partition_commit_options_are_refused(tmp_path: Path, key: str, value: str, message: str) -> None:
    with pytest.raises(ConnectorError, match=message):
        FilesystemSink({**OPTS, "path": str(tmp_path), key: value}, SCHEMA, SourceContext("STREAMING"))


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet", "orc"])
def test_sql_round_trip_through_a_partitioned_table(tmp_path: Path, fmt: str) -> None:
    out = tmp_path / "out"
    env = TableEnvironment.create({"execution.runtime-mode": "batch"})
    env.execute_sql(
        f"""CREATE TABLE t (id INT, name STRING, dt STRING, hr INT) PARTITIONED BY (dt, hr)
        WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = '{fmt}')"""
    )
    env.execute_sql(
        "INSERT INTO t VALUES (1, 'a', '2024-01-01', 10), (2, 'b', '2024-01-01', 11), "
        "(3, 'c', '2024-01-02', 10), (4, 'd', CAST(NULL AS STRING), 10)"
    ).wait()
    assert sorted(os.listdir(out)) == ["dt=2024-01-01", "dt=2024-01-02", "dt=__DEFAULT_PARTITION__"]
    rows = sorted(tuple(r) for r in env.execute_sql("SELECT id, name, dt, hr FROM t").collect())
    assert rows == [
        (1, "a", "2024-01-01", 10),
        (2, "b", "2024-01-01", 11),
        (3, "c", "2024-01-02", 10),
        (4, "d", None, 10),
    ]
    # Projections: partition columns only, and partition columns before data columns.
    assert sorted(tuple(r) for r in env.execute_sql("SELECT hr, dt FROM t WHERE dt = '2024-01-01'").collect()) == [
        (10, "2024-01-01"),
        (11, "2024-01-01"),
    ]
    assert sorted(r[0] for r in env.execute_sql("SELECT hr + id FROM t").collect()) == [11, 13, 13, 14]
