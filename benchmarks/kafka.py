"""Kafka throughput against a local tansu broker (the test broker, tests/servers/kafka.py).

    python benchmarks/kafka.py [--rows 200000]

Sink side: datagen → `kafka` sink (3 partitions) with each 'sink.delivery-guarantee'
(exactly-once: checkpoints every 1 s, one transaction per checkpoint) and formats, beside
the rate at which a bare confluent-kafka producer hands over and flushes the same number of
pre-encoded JSON payloads (the client's limit on this machine).

Source side (topic → filter/project → topic, topic → window aggregation, beside a bare
confluent-kafka consumer draining the topic): added by the Kafka source's owner.

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


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=200_000, help="messages per case")
    args = p.parse_args()
    with broker() as b:
        rows = sink_rates(b, args.rows)
    print(f"{args.rows:,} messages per case, topic with 3 partitions, tansu (in-memory) on 127.0.0.1")
    print(f"{'case':<72} {'messages/s':>12}")
    for label, rate in rows:
        print(f"{label:<72} {rate:>12,.0f}")


if __name__ == "__main__":
    main()
