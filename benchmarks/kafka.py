"""Kafka throughput against a local tansu broker (the test broker, tests/servers/kafka.py).

    python benchmarks/kafka.py [--rows 200000]

Sink side: datagen → `kafka` sink (3 partitions) with each 'sink.delivery-guarantee'
(exactly-once: checkpoints every 1 s, one transaction per checkpoint) and formats, beside
the rate at which a bare confluent-kafka producer hands over and flushes the same number of
pre-encoded JSON payloads (the client's limit on this machine).

Source side: a 3-partition topic of JSON records (id, k, v, ts) read from the earliest to the
latest offset ('scan.bounded.mode' = 'latest-offset', STREAMING, per-partition watermarks)
→ filter/project → `kafka` sink (at-least-once), and → TUMBLE(1 min) aggregation per key →
blackhole, beside the rate at which a bare confluent-kafka consumer drains the same topic
(consume(num_messages=10000), the payloads touched; the client's limit).

Prints a table of messages/s; compare figures from the same machine only (tansu keeps its
log in memory, so this measures the client and streamsql, not a disk-backed broker).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


@contextmanager
def broker() -> Iterator[Any]:
    """A tansu broker for the benchmark's duration."""
    from servers.kafka import start_tansu

    work = Path(tempfile.mkdtemp(prefix="kafkabench-broker-"))
    gen = start_tansu(work)
    try:
        yield next(gen)
    finally:
        gen.close()
        shutil.rmtree(work, ignore_errors=True)


# ---------------------------------------------------------------------- sink side
SINK_SRC = """
CREATE TABLE gen (k BIGINT, v INT, s STRING) WITH (
  'connector' = 'datagen', 'number-of-rows' = '{rows}', 'rows-per-second' = '1000000000',
  'fields.k.min' = '0', 'fields.k.max' = '9999', 'fields.s.length' = '12'
);
CREATE TABLE out_t (k BIGINT, v INT, s STRING) WITH (
  'connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{bootstrap}',
  {formats}, 'sink.delivery-guarantee' = '{guarantee}', 'sink.transactional-id-prefix' = '{prefix}'
);
"""
SINK_CASES = (
    # (label, formats, delivery guarantee)
    ("json, none", "'format' = 'json'", "none"),
    ("json, at-least-once", "'format' = 'json'", "at-least-once"),
    ("json, exactly-once", "'format' = 'json'", "exactly-once"),
    ("json key + value, at-least-once", "'key.format' = 'json', 'key.fields' = 'k', 'value.format' = 'json'",
     "at-least-once"),
    ("csv, at-least-once", "'format' = 'csv'", "at-least-once"),
)  # fmt: skip


def bare_producer(bootstrap: str, topic: str, payloads: list[bytes]) -> float:
    """Seconds a bare confluent-kafka producer takes to hand over and flush `payloads`."""
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap})
    start = time.perf_counter()
    for v in payloads:
        while True:
            try:
                p.produce(topic, v)
                break
            except BufferError:
                p.poll(0.05)
    p.flush(60)
    return time.perf_counter() - start


def sink_rates(b: Any, rows: int) -> list[tuple[str, float]]:
    """(case, messages/s) of datagen → kafka sink, and of a bare producer (the limit)."""
    from streamsql import TableEnvironment

    out = []
    chk = Path(tempfile.mkdtemp(prefix="kafkabench-chk-"))
    try:
        for i, (label, formats, guarantee) in enumerate((SINK_CASES[0], *SINK_CASES)):
            n = 1000 if i == 0 else rows  # the first run warms up (imports, client start)
            topic = b.new_topic("bench-sink", 3)
            env = TableEnvironment.create(
                {"execution.checkpointing.interval": "1 s", "execution.checkpointing.dir": f"file://{chk}"}
            )
            env.execute_sql(
                SINK_SRC.format(rows=n, topic=topic, bootstrap=b.bootstrap, formats=formats, guarantee=guarantee,
                                prefix=f"bench-{time.time_ns()}")
            )  # fmt: skip
            start = time.perf_counter()
            env.execute_sql("INSERT INTO out_t SELECT * FROM gen").wait()
            if i:
                out.append((f"datagen → kafka sink ({label})", n / (time.perf_counter() - start)))
        payloads = [json.dumps({"k": i % 10000, "v": i, "s": f"{i:012d}"}).encode() for i in range(rows)]
        secs = bare_producer(b.bootstrap, b.new_topic("bench-bare", 3), payloads)
        out.append(("bare confluent-kafka producer, pre-encoded JSON (limit)", rows / secs))
    finally:
        shutil.rmtree(chk, ignore_errors=True)
    return out


# ---------------------------------------------------------------------- source side
SOURCE_TABLE = """
CREATE TABLE src (id BIGINT, k INT, v DOUBLE, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH (
  'connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{bootstrap}',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'json'
);
"""
SOURCE_CASES = (
    (
        "kafka → filter/project → kafka sink (json, at-least-once)",
        "CREATE TABLE out_t (id BIGINT, k INT, v2 DOUBLE) WITH ('connector' = 'kafka', 'topic' = '{out}', "
        "'properties.bootstrap.servers' = '{bootstrap}', 'format' = 'json', "
        "'sink.delivery-guarantee' = 'at-least-once')",
        "INSERT INTO out_t SELECT id, k, v * 2 FROM src WHERE k % 2 = 0",
    ),
    (
        "kafka → TUMBLE(1 min) COUNT/SUM per key → blackhole",
        "CREATE TABLE out_t (k INT, ws TIMESTAMP(3), c BIGINT, s DOUBLE) WITH ('connector' = 'blackhole')",
        "INSERT INTO out_t SELECT k, window_start, COUNT(*), SUM(v) FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), "
        "INTERVAL '1' MINUTE)) GROUP BY k, window_start, window_end",
    ),
)


def fill_topic(b: Any, rows: int) -> str:
    from confluent_kafka import Producer

    topic = b.new_topic("bench-src", 3)
    p = Producer({"bootstrap.servers": b.bootstrap, "linger.ms": 20})
    for i in range(rows):
        sec = i // 100
        ts = f"2024-01-01 {sec // 3600 % 24:02d}:{sec // 60 % 60:02d}:{sec % 60:02d}.{i % 1000:03d}"
        value = json.dumps({"id": i, "k": i % 100, "v": i * 0.5, "ts": ts}).encode()
        while True:
            try:
                p.produce(topic, value, partition=i % 3)
                break
            except BufferError:
                p.poll(0.05)
    p.flush(120)
    return topic


def bare_consumer(bootstrap: str, topic: str, rows: int) -> float:
    """Seconds a bare confluent-kafka consumer takes to drain `rows` records of `topic`."""
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-{time.time_ns()}", "enable.auto.commit": False})
    c.assign([TopicPartition(topic, p, 0) for p in range(3)])
    start = time.perf_counter()
    seen = 0
    size = 0
    while seen < rows:
        for m in c.consume(num_messages=10000, timeout=1.0):
            if m.error() is None:
                seen += 1
                size += len(m.value())
    secs = time.perf_counter() - start
    c.close()
    return secs


def source_rates(b: Any, rows: int) -> list[tuple[str, float]]:
    """(case, messages/s) of the source cases, and of a bare consumer (the limit)."""
    from streamsql import EnvironmentSettings, TableEnvironment

    topic = fill_topic(b, rows)
    out = []
    for i, (label, sink, insert) in enumerate((SOURCE_CASES[0], *SOURCE_CASES)):
        env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
        env.execute_sql(SOURCE_TABLE.format(topic=topic, bootstrap=b.bootstrap))
        env.execute_sql(sink.format(out=b.new_topic("bench-out", 3), bootstrap=b.bootstrap))
        start = time.perf_counter()
        env.execute_sql(insert).wait()
        if i:  # the first run warms up (imports, client start)
            out.append((label, rows / (time.perf_counter() - start)))
    out.append(
        ("bare confluent-kafka consumer draining the topic (limit)", rows / bare_consumer(b.bootstrap, topic, rows))
    )
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=200_000, help="messages per case")
    p.add_argument("--side", choices=("both", "sink", "source"), default="both")
    args = p.parse_args()
    with broker() as b:
        rows = sink_rates(b, args.rows) if args.side in ("both", "sink") else []
        rows += source_rates(b, args.rows) if args.side in ("both", "source") else []
    print(f"{args.rows:,} messages per case, topic with 3 partitions, tansu (in-memory) on 127.0.0.1")
    print(f"{'case':<72} {'messages/s':>12}")
    for label, rate in rows:
        print(f"{label:<72} {rate:>12,.0f}")


if __name__ == "__main__":
    main()
