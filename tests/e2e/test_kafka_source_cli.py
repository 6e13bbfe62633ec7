"""The README's Kafka example through the CLI against the tansu broker: a 3-partition
topic of JSON click events (each partition in event-time order, the partitions
interleaved differently) → WATERMARK → TUMBLE window aggregation. The streaming run (one
watermark per partition) gives the batch run's final table ('scan.bounded.mode' =
'latest-offset' in both)."""

from __future__ import annotations

import json
import re

import pytest
from clitools import ROOT, run_cli
from servers.kafka import KafkaBroker


def _readme_kafka_sql() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sql\n(.*?)```", text, flags=re.S)
    (sql,) = [b for b in blocks if "'connector' = 'kafka'" in b]
    return sql


def _fill(broker: KafkaBroker) -> str:
    from confluent_kafka import Producer

    topic = broker.new_topic("clicks", 3)
    p = Producer({"bootstrap.servers": broker.bootstrap})
    lines = (ROOT / "examples" / "data" / "clicks.csv").read_text().splitlines()
    for i, line in enumerate(lines):
        user, url, ts = line.split(",")
        p.produce(topic, json.dumps({"user_name": user, "url": url, "ts": ts}).encode(), partition=i % 3)
        if i % 7 == 0:
            p.flush()  # several record batches per partition
    p.flush()
    return topic


def _final(stdout: str) -> list[tuple[object, ...]]:
    rows = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    table: dict[str, tuple[object, ...]] = {}
    for r in rows:
        key = json.dumps(r["row"][:3])
        if r["op"] in ("-U", "-D"):
            table.pop(key, None)
        else:
            table[key] = tuple(r["row"])
    return sorted(table.values(), key=repr)


@pytest.mark.parametrize("parallelism", ["1", "2"])
def test_readme_kafka_example_streaming_equals_batch(kafka_broker: KafkaBroker, tmp_path, parallelism: str) -> None:  # type: ignore[no-untyped-def]
    topic = _fill(kafka_broker)
    sql = (
        _readme_kafka_sql()
        .replace("'clicks', 'properties", f"'{topic}', 'properties")
        .replace("localhost:9092", kafka_broker.bootstrap)
    )
    job = tmp_path / "clicks_kafka.sql"
    job.write_text(f"SET 'parallelism.default' = '{parallelism}';\n" + sql)
    out = {}
    for mode in ("streaming", "batch"):
        p = run_cli("-f", str(job), "--format", "jsonl", "--mode", mode)
        assert p.returncode == 0, p.stderr
        out[mode] = _final(p.stdout)
    assert out["batch"], "the batch run produced no windows"
    assert out["streaming"] == out["batch"]
    assert sum(int(r[3]) for r in out["batch"]) == 60  # every click counted once  # type: ignore[call-overload]
