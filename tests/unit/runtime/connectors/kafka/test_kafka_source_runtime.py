"""The `kafka` source in running jobs: offsets in checkpoints (restore, commit to the
consumer group), partitions split over parallel subtasks, per-partition watermarks."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pyarrow as pa

from runtime.batch import ROW_SPLIT, ROW_WATERMARK
from runtime.graph import Node
from runtime.operators.base import OperatorContext, Output
from runtime.operators.watermark import WatermarkAssignerOperator, WatermarkAssignerParams

from .conftest import Kafka, read_source, rows


def _records(n: int, partitions: int, start: int = 0) -> list[dict[str, Any]]:
    return [{"value": {"id": i}, "partition": i % partitions} for i in range(start, start + n)]


def test_reader_offsets_resume_exactly_after_the_rows_handed_out(kafka: Kafka) -> None:
    topic = kafka.topic(3)
    kafka.send(topic, _records(300, 3))
    source = read_source(kafka, topic, {})
    first = source.create_group_reader(source.splits())
    seen: list[int] = []
    for _ in range(4):
        b = first.read(40)
        assert b is not None
        seen += b.column(0).to_pylist()
    offsets = first.offset()
    first.close()
    assert sum(st["offset"] for st in offsets.values()) == len(seen)
    second = read_source(kafka, topic, {}).create_group_reader(sorted(offsets))
    second.seek(offsets)
    while (b := second.read(1000)) is not None:
        seen += b.column(0).to_pylist()
    second.close()
    assert sorted(seen) == list(range(300))


def test_parallelism_two_splits_the_partitions(kafka: Kafka) -> None:
    topic = kafka.topic(3)
    kafka.send(topic, _records(600, 3))
    for batch in (False, True):
        env = kafka.env(batch=batch, **{"parallelism.default": "2"})
        kafka.table(env, "k", "id INT, p INT METADATA FROM 'partition' VIRTUAL", topic)
        got = rows(env, "SELECT p, COUNT(*), SUM(id), COUNT(DISTINCT id) FROM k GROUP BY p")
        assert got == [(p, 200, sum(range(p, 600, 3)), 200) for p in range(3)]


def _window_rows(kafka: Kafka, topic: str, batch: bool, **conf: str) -> list[tuple[Any, ...]]:
    env = kafka.env(batch=batch, **conf)
    kafka.table(env, "k", "id INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND", topic)
    return rows(
        env,
        "SELECT window_start, COUNT(*), SUM(id) FROM TABLE(TUMBLE(TABLE k, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
        "GROUP BY window_start, window_end",
    )


def test_per_partition_watermarks_do_not_make_a_slower_partition_late(kafka: Kafka) -> None:
    """Partition 0 is an hour ahead of partition 1. One watermark for the whole source
    would make partition 1's rows late (dropped) once partition 0's rows were read; one per
    partition (their minimum) keeps them, so streaming gives the batch result."""
    topic = kafka.topic(2)
    recs = []
    for i in range(400):
        sec = 3600 + i if i % 2 == 0 else i
        ts = f"2024-01-01 {sec // 3600:02d}:{sec // 60 % 60:02d}:{sec % 60:02d}"
        recs.append({"value": {"id": i, "ts": ts}, "partition": i % 2})
    kafka.send(topic, recs)
    expected = _window_rows(kafka, topic, batch=True)
    assert len(expected) == 80  # 40 ten-second windows per partition
    assert _window_rows(kafka, topic, batch=False) == expected
    assert _window_rows(kafka, topic, batch=False, **{"parallelism.default": "2"}) == expected


def test_an_idle_partition_stops_holding_the_watermark_back(kafka: Kafka) -> None:
    """Unbounded source, partition 1 empty: with 'scan.watermark.idle-timeout' the windows
    of partition 0 fire (without it the empty partition holds the watermark at MIN, as in
    Flink: see test_watermark_assigner_holds_back_for_a_split_without_rows)."""
    topic = kafka.topic(2)
    kafka.send(topic, [{"value": {"id": i, "ts": f"2024-01-01 00:00:{i:02d}"}, "partition": 0} for i in range(25)])
    env = kafka.env(batch=False)
    kafka.table(
        env,
        "k",
        "id INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts",
        topic,
        **{"scan.bounded.mode": "unbounded", "scan.watermark.idle-timeout": "200 ms"},
    )
    result = env.execute_sql(
        "SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE k, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
        "GROUP BY window_start, window_end"
    )
    got: list[tuple[Any, ...]] = []
    with result.collect() as it:  # (pytest-timeout ends it if the windows never fire)
        for r in it:
            got.append(tuple(r))
            if len(got) == 2:
                break
    assert [c for _, c in got] == [10, 10]


def _assigner(idle_ms: int | None) -> WatermarkAssignerOperator:
    from runtime.expr.ir import InputRef
    from runtime.types import TIMESTAMP, Field

    field = Field("ts", TIMESTAMP(3))
    node = Node(
        id=1,
        operator="WatermarkAssigner",
        inputs=(),
        schema=(field,),
        params=WatermarkAssignerParams(0, InputRef(0, field.type), idle_ms),
    )
    return WatermarkAssignerOperator(node, OperatorContext(mode="STREAMING", config={}))


def _split_batch(ts_ms: list[int], split: int, names: list[str]) -> pa.RecordBatch:
    ts = pa.array(ts_ms, pa.int64()).cast(pa.timestamp("ms"))
    tag = pa.DictionaryArray.from_arrays(pa.array([split] * len(ts_ms), pa.int32()), pa.array(names))
    return pa.RecordBatch.from_arrays([ts, tag], names=["ts", ROW_SPLIT])


def test_watermark_assigner_holds_back_for_a_split_without_rows() -> None:
    op = _assigner(None)
    out = Output()
    op.process_batch(_split_batch([1000, 5000], 0, ["t:0", "t:1"]), 0, out)
    batches, wms = out.drain()
    assert wms == []  # split t:1 has produced nothing: the minimum stays at MIN
    assert ROW_SPLIT not in batches[0].schema.names
    op.process_batch(_split_batch([3000], 1, ["t:0", "t:1"]), 0, out)
    batches, wms = out.drain()
    assert wms == [3000]
    assert batches[0].column(ROW_WATERMARK).to_pylist() == [-(2**63)]  # before the row: still MIN
    op.process_batch(_split_batch([9000, 4000], 1, ["t:0", "t:1"]), 0, out)
    batches, wms = out.drain()
    assert wms == [5000]  # min(t:0 at 5000, t:1 at 9000)
    assert batches[0].column(ROW_WATERMARK).to_pylist() == [3000, 5000]


def test_watermark_assigner_leaves_idle_splits_out(monkeypatch: Any) -> None:
    clock = [100.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    op = _assigner(500)
    out = Output()
    op.process_batch(_split_batch([1000, 5000], 0, ["t:0", "t:1"]), 0, out)
    assert out.drain()[1] == []
    clock[0] += 0.6  # both silent for 600 ms; t:1 (no row) counts as idle first
    op.on_timer(out)
    assert out.drain()[1] == [5000]


def test_watermark_assigner_with_every_split_idle_keeps_the_last_active_ones(monkeypatch: Any) -> None:
    clock = [100.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    op = _assigner(500)
    out = Output()
    names = ["t:0", "t:1", "t:2"]
    op.process_batch(_split_batch([9000], 0, names), 0, out)
    op.process_batch(_split_batch([4000], 1, names), 0, out)
    clock[0] += 0.1
    op.process_batch(_split_batch([7000], 2, names), 0, out)
    assert out.drain()[1] == [4000]
    clock[0] += 1.0  # all idle: t:2 was active last
    op.on_timer(out)
    assert out.drain()[1] == [7000]


def test_offsets_are_restored_from_a_savepoint_and_committed_to_the_group(kafka: Kafka, tmp_path: Path) -> None:
    """A job stopped with a savepoint resumes from the partitions' offsets it recorded
    (not from the startup mode), here at another parallelism (the split states re-split
    by partition): the rows before and after count exactly once; the offsets of the
    completed checkpoint are committed to the consumer group."""
    import duckdb
    from confluent_kafka import Consumer, TopicPartition

    topic = kafka.topic(3)
    group = f"g-{topic}"
    kafka.send(topic, _records(300, 3))
    db = tmp_path / "out.duckdb"

    def job(bounded: str, **conf: str) -> Any:
        env = kafka.env(
            batch=False,
            **{"execution.checkpointing.dir": f"file://{tmp_path}/chk", "table.exec.source.batch-rows": "20"},
            **conf,
        )
        kafka.table(
            env,
            "k",
            "id INT",
            topic,
            **{"scan.bounded.mode": bounded, "properties.group.id": group},
        )
        env.execute_sql(
            "CREATE TABLE agg (r INT, c BIGINT, s BIGINT, PRIMARY KEY (r) NOT ENFORCED) WITH ("
            f"'connector' = 'duckdb', 'path' = '{db}', 'table-name' = 'agg', 'sink.primary-key' = 'r')"
        )
        return env.execute_sql("INSERT INTO agg SELECT id % 5, COUNT(*), SUM(id) FROM k GROUP BY id % 5")

    def counted() -> int:
        if not db.exists():
            return 0
        try:
            con = duckdb.connect(str(db), read_only=True)
        except duckdb.Error:
            return 0
        try:
            return int(con.execute("SELECT COALESCE(SUM(c), 0) FROM agg").fetchone()[0])  # type: ignore[index]
        except duckdb.Error:
            return 0
        finally:
            con.close()

    def committed_offsets(c: Any) -> int:
        return sum(max(tp.offset, 0) for tp in c.committed([TopicPartition(topic, p) for p in range(3)], timeout=30))

    first = job("unbounded", **{"execution.checkpointing.interval": "100 ms"})
    c = Consumer({"bootstrap.servers": kafka.bootstrap, "group.id": group})
    # The running job holds the DuckDB file (one writer), so progress shows in the group's
    # committed offsets: they reach 300 once a checkpoint after the last record completed.
    deadline = time.monotonic() + 240  # only a job that never checkpoints fails here
    while committed_offsets(c) < 300:
        assert time.monotonic() < deadline, f"the group's offsets stayed at {committed_offsets(c)} of 300"
        time.sleep(0.2)
    assert first.job is not None
    savepoint = first.job.stop_with_savepoint(str(tmp_path / "sp"), timeout=300)
    assert counted() == 300
    assert committed_offsets(c) == 300
    c.close()

    kafka.send(topic, _records(200, 3, start=300))
    # restored at parallelism 2: the partitions' offsets are re-split over the subtasks
    job("latest-offset", **{"execution.savepoint.path": savepoint, "parallelism.default": "2"}).wait()
    con = duckdb.connect(str(db), read_only=True)
    total = con.execute("SELECT SUM(c), SUM(s) FROM agg").fetchone()
    con.close()
    assert total == (500, sum(range(500)))


def test_topic_pattern_discovers_new_topics_and_reads_them_from_the_earliest_offset(kafka: Kafka) -> None:
    """'scan.topic-partition-discovery.interval': a topic matching the pattern that appears
    while the job runs is read from its earliest offset (even with 'latest-offset' startup)."""
    first = kafka.topic(1, "disc")
    kafka.send(first, [{"value": {"id": -1}}])  # before the start: skipped (latest-offset)
    env = kafka.env(batch=False)
    kafka.table(
        env,
        "k",
        "id INT",
        None,  # type: ignore[arg-type]
        **{
            "topic-pattern": r"disc-\d+-\d+",
            "scan.startup.mode": "latest-offset",
            "scan.bounded.mode": "unbounded",
            "scan.topic-partition-discovery.interval": "3 s",  # the new topic has its records when found
        },
    )
    result = env.execute_sql("SELECT id FROM k")

    # The new topic must appear after the job's first discovery (a topic found then starts
    # at its latest offset, as the startup mode says), however long the job takes to start:
    # records -2 go to the first topic until one comes out (a record sent before the job
    # took its start offsets is skipped), and only then the topic is made.
    import threading

    started = threading.Event()

    def markers() -> None:
        while not started.wait(0.3):
            kafka.send(first, [{"value": {"id": -2}}])

    threading.Thread(target=markers, daemon=True).start()
    got: list[int] = []
    with result.collect() as it:  # (pytest-timeout ends it if the topic is never found)
        for r in it:
            if r[0] == -2:
                if not started.is_set():
                    started.set()
                    kafka.send(kafka.topic(2, "disc"), [{"value": {"id": i}, "partition": i % 2} for i in range(3)])
                continue
            got.append(r[0])
            if len(got) == 3:
                break
    started.set()
    assert sorted(got) == [0, 1, 2]
