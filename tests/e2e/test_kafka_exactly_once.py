"""Kafka end to end against the tansu broker, through the CLI: a 3-partition JSON topic with
an event-time watermark → a TUMBLE window aggregation → (a) a `kafka` sink with
'sink.delivery-guarantee' = 'exactly-once' and (b) an `upsert-kafka` sink, plus an updating
GROUP BY into a second `upsert-kafka` sink. The source is bounded ('scan.bounded.mode' =
'latest-offset'), so the streaming job ends and its output must equal the BATCH run's over
the same messages.

Then the same job is killed with SIGKILL at random moments (during processing, right after
a snapshot, after the state upload but before `_metadata`, after the checkpoint completed
but before the sinks committed, inside a sink's Kafka transaction, and at random wall-clock
moments) and restarted with `--restore latest`, at parallelism 1 and 2: the exactly-once
sink's committed records must be exactly the uninterrupted run's rows (none lost, none
duplicated), and the upsert topics' compacted views must equal it.

The broker's limit (issue 17): tansu hides an *open* transaction's records from a
`read_committed` consumer but shows an *aborted* one's. So the check cannot rely on
`read_committed`: every record of the exactly-once sink carries the header `streamsql-txn`
= `<transactional id>:<checkpoint id>:<attempt>`, and the check keeps, per transactional id
and checkpoint id, only the records of the last attempt: the sink writes a checkpoint's
records only after that checkpoint completed (they wait in the checkpoint), retries a
commit only when its commit marker (a consumer-group offset committed in the same
transaction, which tansu does discard on abort) says it did not commit, and never writes
that checkpoint again once it did. So earlier attempts are exactly the aborted ones. The
upsert sinks are checked through their compacted view (last value per key, a tombstone
removes the key), which is what a reader of a compacted topic sees.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from clitools import run_restoring
from servers.kafka import KafkaBroker

KILLS = 10
POINTS = ("batch", "snapshot", "transaction", "batch", "upload", "metadata", "commit", "wall")
MESSAGES = 4000

JOB = """
SET 'execution.runtime-mode' = '{mode}';
SET 'table.exec.source.batch-rows' = '40';
SET 'execution.checkpointing.interval' = '{interval}';
SET 'execution.checkpointing.dir' = 'file://{root}/chk';
CREATE TABLE src (k INT, v BIGINT, ts_ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ts_ms, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector'='kafka','topic'='{source}','properties.bootstrap.servers'='{bootstrap}',
        'scan.startup.mode'='earliest-offset','scan.bounded.mode'='latest-offset','format'='json');
CREATE TABLE win_eos (k INT, ws TIMESTAMP(3), c BIGINT, s BIGINT)
  WITH ('connector'='kafka','topic'='{win_eos}','properties.bootstrap.servers'='{bootstrap}',
        'format'='json','sink.delivery-guarantee'='exactly-once',
        'sink.transactional-id-prefix'='{prefix}');
CREATE TABLE win_up (k INT, ws TIMESTAMP(3), c BIGINT, s BIGINT, PRIMARY KEY (k, ws) NOT ENFORCED)
  WITH ('connector'='upsert-kafka','topic'='{win_up}','properties.bootstrap.servers'='{bootstrap}',
        'key.format'='json','value.format'='json');
CREATE TABLE tot_up (k INT, c BIGINT, s BIGINT, PRIMARY KEY (k) NOT ENFORCED)
  WITH ('connector'='upsert-kafka','topic'='{tot_up}','properties.bootstrap.servers'='{bootstrap}',
        'key.format'='json','value.format'='json');
EXECUTE STATEMENT SET BEGIN
INSERT INTO win_eos SELECT k, window_start, COUNT(*), SUM(v)
  FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '2' SECOND)) GROUP BY k, window_start, window_end;
INSERT INTO win_up SELECT k, window_start, COUNT(*), SUM(v)
  FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '2' SECOND)) GROUP BY k, window_start, window_end;
INSERT INTO tot_up SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k;
END;
"""


def _fill_source(broker: KafkaBroker) -> str:
    """MESSAGES JSON records over 3 partitions, each partition in event-time order (no late
    rows, whatever order the partitions are read in: the source's watermark is the minimum
    of the partitions')."""
    from confluent_kafka import Producer

    topic = broker.new_topic("eos-src", 3)
    rng = random.Random(17)
    p = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(MESSAGES):
        row = {"k": rng.randrange(7), "v": rng.randrange(1000), "ts_ms": 1_700_000_000_000 + i * 20}
        p.produce(topic, json.dumps(row).encode(), partition=i % 3)
    assert p.flush(30) == 0
    return topic


def _records(broker: KafkaBroker, topic: str) -> list[Any]:
    """Every record of `topic` (3 partitions), aborted ones included: (key, value, headers)."""
    return [(m.key(), m.value(), m.headers()) for m in broker.read(topic, 3)]


def _committed_rows(records: list[Any]) -> Counter[str]:
    """The exactly-once sink's rows of committed transactions: per (transactional id,
    checkpoint id) the last attempt's records (see the module docstring)."""
    by_txn: dict[tuple[str, str], dict[int, list[str]]] = {}
    for _, value, headers in records:
        txn = dict(headers or ()).get("streamsql-txn")
        assert txn is not None, "a record of the exactly-once sink without its transaction header"
        tid, cid, attempt = txn.decode().rsplit(":", 2)
        by_txn.setdefault((tid, cid), {}).setdefault(int(attempt), []).append(value.decode())
    rows: Counter[str] = Counter()
    for attempts in by_txn.values():
        rows.update(attempts[max(attempts)])
    return rows


def _compacted(records: list[Any]) -> dict[bytes, bytes]:
    view: dict[bytes, bytes] = {}
    for key, value, _ in records:  # a key's records are in order (one partition per key)
        if value is None:
            view.pop(key, None)
        else:
            view[key] = value
    return view


def _outputs(
    broker: KafkaBroker, topics: dict[str, str]
) -> tuple[Counter[str], dict[bytes, bytes], dict[bytes, bytes]]:
    return (
        _committed_rows(_records(broker, topics["win_eos"])),
        _compacted(_records(broker, topics["win_up"])),
        _compacted(_records(broker, topics["tot_up"])),
    )


def _job(
    root: Path, broker: KafkaBroker, source: str, name: str, mode: str, interval: str
) -> tuple[Path, dict[str, str]]:
    topics = {t: broker.new_topic(f"{name}-{t}", 3) for t in ("win_eos", "win_up", "tot_up")}
    job = root / f"{name}.sql"
    job.write_text(
        JOB.format(
            mode=mode, interval=interval, root=root / name, source=source, bootstrap=broker.bootstrap,
            prefix=f"{name}-{time.time_ns()}", **topics,
        )
    )  # fmt: skip
    return job, topics


@pytest.fixture(scope="module")
def reference(kafka_broker: KafkaBroker, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The source topic and the BATCH run's output over it."""
    root = tmp_path_factory.mktemp("kafka-ref")
    source = _fill_source(kafka_broker)
    job, topics = _job(root, kafka_broker, source, "batch", "batch", "0")
    assert run_restoring(root, job) == 0
    eos, win, tot = _outputs(kafka_broker, topics)
    assert sum(eos.values()) == len(win) > 50 and len(tot) == 7
    assert Counter(v.decode() for v in win.values()) == eos
    return {"source": source, "expected": (eos, win, tot)}


def test_streaming_run_equals_the_batch_run(
    kafka_broker: KafkaBroker, reference: dict[str, Any], tmp_path: Path
) -> None:
    job, topics = _job(tmp_path, kafka_broker, reference["source"], "stream", "streaming", "200 ms")
    assert run_restoring(tmp_path, job) == 0
    assert _outputs(kafka_broker, topics) == reference["expected"]


@pytest.mark.timeout(1200)  # a dozen job runs: no wall-clock bound decides the result, only a hang fails it
@pytest.mark.parametrize("parallelism", [1, 2])
def test_sigkill_and_restore_latest_is_exactly_once(
    kafka_broker: KafkaBroker, reference: dict[str, Any], tmp_path: Path, parallelism: int
) -> None:
    args = ("--parallelism", str(parallelism))
    job, topics = _job(tmp_path, kafka_broker, reference["source"], f"faults{parallelism}", "streaming", "100 ms")
    rng = random.Random(f"kafka-faults-{parallelism}")
    kills, code = 0, 0
    for i in range(KILLS):
        point = POINTS[i % len(POINTS)]
        if point == "wall":
            code = run_restoring(tmp_path, job, kill_after=rng.uniform(0.8, 1.6), args=args)
        else:
            # Few batches per run, so every restart makes bounded progress and the kill
            # points land before the job's 100 input batches are done.
            n = rng.randint(2, 8) if point == "batch" else rng.randint(1, 3)
            code = run_restoring(tmp_path, job, {"STREAMSQL_FAULT_INJECT": f"{point}:{n}"}, args=args)
        if code == 0:  # the job finished before the fault point: the output is complete
            break
        kills += 1
        # Whatever is committed so far is part of the final output: never a duplicate.
        eos = _committed_rows(_records(kafka_broker, topics["win_eos"]))
        assert not eos - reference["expected"][0], "a committed row is duplicated or wrong"
    if code != 0:
        assert run_restoring(tmp_path, job, args=args) == 0
    assert kills >= KILLS // 2, f"only {kills} kills hit the job"
    assert _outputs(kafka_broker, topics) == reference["expected"]
    # one producer (transactional id) per sink subtask
    tids = {dict(h)["streamsql-txn"].decode().split(":")[0] for _, _, h in _records(kafka_broker, topics["win_eos"])}
    assert len(tids) == parallelism
