"""Reading `upsert-kafka` end to end against the tansu broker: a 2-partition upsert topic with
updates, repeated values, tombstones of known and unknown keys, read through the planner's
ChangelogNormalize (bounded with 'scan.bounded.mode' = 'latest-offset' so the job ends).

The expected answers are computed from the topic's compacted view (the last value per key,
a tombstone removing the key): a direct SELECT must end as that view, a GROUP BY as the
SQL answer over it, and an upsert-kafka sink (at parallelism 2: keyed by its PRIMARY KEY)
must hold it in its own compacted view. In process (TableEnvironment), small data.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from servers.kafka import KafkaBroker

from streamsql import EnvironmentSettings, TableEnvironment

GROUPS = ("a", "b", "c")


def _produce(broker: KafkaBroker, topic: str, records: list[tuple[int, dict[str, Any] | None]]) -> None:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 5})
    for k, v in records:  # keyed: one key's records land in one partition, in order
        p.produce(topic, key=json.dumps({"id": k}).encode(), value=None if v is None else json.dumps(v).encode())
    assert p.flush(30) == 0


def _records(seed: int, n: int = 300) -> list[tuple[int, dict[str, Any] | None]]:
    rnd = random.Random(seed)
    out: list[tuple[int, dict[str, Any] | None]] = []
    for _ in range(n):
        k = rnd.randrange(40)
        if rnd.random() < 0.2:
            out.append((k, None))  # tombstone (of a known key or not)
        else:
            out.append((k, {"id": k, "grp": rnd.choice(GROUPS), "amount": rnd.randrange(5)}))
    return out


def _last_values(records: list[tuple[int, dict[str, Any] | None]]) -> dict[int, dict[str, Any]]:
    view: dict[int, dict[str, Any]] = {}
    for k, v in records:
        if v is None:
            view.pop(k, None)
        else:
            view[k] = v
    return view


def _final(rows: list[Any]) -> Counter[tuple[Any, ...]]:
    """The table a changelog ends as (retractions must match earlier rows)."""
    table: Counter[tuple[Any, ...]] = Counter()
    for r in rows:
        kind = r.get_row_kind().short_string()
        key = tuple(r)
        if kind in ("+I", "+U"):
            table[key] += 1
        else:
            assert table[key] > 0, f"{kind} of a row never emitted: {key}"
            table[key] -= 1
    return +table


def _env(broker: KafkaBroker, topic: str, parallelism: int = 1) -> TableEnvironment:
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("parallelism.default", str(parallelism))
    env.execute_sql(
        f"CREATE TABLE accounts (id INT, grp STRING, amount BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH ("
        f"'connector'='upsert-kafka','topic'='{topic}','properties.bootstrap.servers'='{broker.bootstrap}',"
        "'key.format'='json','value.format'='json','scan.bounded.mode'='latest-offset')"
    )
    return env


@pytest.fixture(scope="module")
def upsert_topic(kafka_broker: KafkaBroker) -> tuple[str, dict[int, dict[str, Any]]]:
    topic = kafka_broker.new_topic("upsert-read", 2)
    records = _records(17)
    _produce(kafka_broker, topic, records)
    return topic, _last_values(records)


def test_select_ends_as_the_last_value_per_key(
    kafka_broker: KafkaBroker, upsert_topic: tuple[str, dict[int, dict[str, Any]]]
) -> None:
    topic, view = upsert_topic
    env = _env(kafka_broker, topic)
    rows = list(env.execute_sql("SELECT id, grp, amount FROM accounts").collect())
    assert {r.get_row_kind().short_string() for r in rows} <= {"+I", "-U", "+U", "-D"}
    assert "-D" in {r.get_row_kind().short_string() for r in rows}  # tombstones of known keys
    assert _final(rows) == Counter((k, v["grp"], v["amount"]) for k, v in view.items())


def test_group_by_equals_the_sql_answer_over_the_last_values(
    kafka_broker: KafkaBroker, upsert_topic: tuple[str, dict[int, dict[str, Any]]]
) -> None:
    topic, view = upsert_topic
    env = _env(kafka_broker, topic)
    rows = list(env.execute_sql("SELECT grp, COUNT(*), SUM(amount) FROM accounts GROUP BY grp").collect())
    want: Counter[tuple[Any, ...]] = Counter()
    for g in GROUPS:
        vals = [v["amount"] for v in view.values() if v["grp"] == g]
        if vals:
            want[(g, len(vals), sum(vals))] = 1
    assert _final(rows) == want


def _compacted(broker: KafkaBroker, topic: str, partitions: int) -> dict[bytes, bytes]:
    """The compacted view of `topic`: last value per key, a tombstone removes the key."""
    view: dict[bytes, bytes] = {}
    for m in broker.read(topic, partitions):  # a key's records are in order (one partition per key)
        if m.value() is None:
            view.pop(m.key(), None)
        else:
            view[m.key()] = m.value()
    return view


def test_upsert_kafka_to_upsert_kafka_at_parallelism_2(
    kafka_broker: KafkaBroker, upsert_topic: tuple[str, dict[int, dict[str, Any]]]
) -> None:
    """Normalized source → GROUP BY → upsert-kafka sink keyed by its PRIMARY KEY."""
    topic, view = upsert_topic
    out = kafka_broker.new_topic("upsert-read-out", 2)
    env = _env(kafka_broker, topic, parallelism=2)
    env.execute_sql(
        f"CREATE TABLE totals (grp STRING, n BIGINT, total BIGINT, PRIMARY KEY (grp) NOT ENFORCED) WITH ("
        f"'connector'='upsert-kafka','topic'='{out}','properties.bootstrap.servers'='{kafka_broker.bootstrap}',"
        "'key.format'='json','value.format'='json')"
    )
    env.execute_sql("INSERT INTO totals SELECT grp, COUNT(*), SUM(amount) FROM accounts GROUP BY grp").wait()
    got = {json.loads(k)["grp"]: json.loads(v) for k, v in _compacted(kafka_broker, out, 2).items()}
    want = {}
    for g in GROUPS:
        vals = [v["amount"] for v in view.values() if v["grp"] == g]
        if vals:
            want[g] = {"grp": g, "n": len(vals), "total": sum(vals)}
    assert got == want


def test_batch_mode_refuses_an_upsert_source(kafka_broker: KafkaBroker) -> None:
    from planner.errors import UnsupportedSqlError

    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    env.execute_sql(
        "CREATE TABLE accounts (id INT, grp STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector'='upsert-kafka',"
        f"'topic'='t','properties.bootstrap.servers'='{kafka_broker.bootstrap}','key.format'='json',"
        "'value.format'='json','scan.bounded.mode'='latest-offset')"
    )
    with pytest.raises(UnsupportedSqlError, match="only possible for INSERT-only table sources"):
        env.execute_sql("SELECT * FROM accounts").collect()


def test_sink_keyed_on_another_column_is_shuffled_at_parallelism_2(
    kafka_broker: KafkaBroker, upsert_topic: tuple[str, dict[int, dict[str, Any]]]
) -> None:
    """The sink's PRIMARY KEY is computed (not the input's distribution): the planner puts a
    hash Exchange on it in front of the sink, and the compacted view is the last values."""
    topic, view = upsert_topic
    out = kafka_broker.new_topic("upsert-read-named", 2)
    env = _env(kafka_broker, topic, parallelism=2)
    env.execute_sql(
        f"CREATE TABLE named (name STRING, amount BIGINT, PRIMARY KEY (name) NOT ENFORCED) WITH ("
        f"'connector'='upsert-kafka','topic'='{out}','properties.bootstrap.servers'='{kafka_broker.bootstrap}',"
        "'key.format'='json','value.format'='json','sink.buffer-flush.max-rows'='7',"
        "'sink.buffer-flush.interval'='1 h')"
    )
    insert = "INSERT INTO named SELECT CONCAT('n', CAST(id AS STRING)), amount FROM accounts"
    assert "Exchange(distribution=[hash[name]])" in env.explain_sql(insert)
    env.execute_sql(insert).wait()
    got = {json.loads(k)["name"]: json.loads(v)["amount"] for k, v in _compacted(kafka_broker, out, 2).items()}
    assert got == {f"n{k}": v["amount"] for k, v in view.items()}


def test_event_time_upsert_source_keeps_per_partition_watermarks(kafka_broker: KafkaBroker) -> None:
    """With a WATERMARK the assigner runs on the scan (per partition, under the keyed
    Exchange, as Flink generates an upsert source's watermarks in the source); the
    normalized changelog still ends as the last values, at parallelism 2."""
    topic = kafka_broker.new_topic("upsert-read-wm", 2)
    base = 1_700_000_000_000
    records: list[tuple[int, dict[str, Any] | None]] = [
        (k, {"id": k, "v": k * 10 + i, "ts": base + 1000 * (k + i)}) for i in range(3) for k in range(6)
    ]
    records += [(2, None), (9, None)]
    _produce(kafka_broker, topic, records)
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("parallelism.default", "2")
    env.execute_sql(
        "CREATE TABLE ev (id INT, v BIGINT, ts_ms BIGINT METADATA FROM 'timestamp' VIRTUAL, ts BIGINT, "
        "rt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rt AS rt - INTERVAL '1' SECOND, PRIMARY KEY (id) NOT ENFORCED) "
        f"WITH ('connector'='upsert-kafka','topic'='{topic}','properties.bootstrap.servers'='{kafka_broker.bootstrap}',"
        "'key.format'='json','value.format'='json','scan.bounded.mode'='latest-offset')"
    )
    sql = "SELECT id, v FROM ev WHERE v >= 0"
    plan = env.explain_sql(sql).split("== Optimized Execution Plan ==")[1]
    assert plan.index("ChangelogNormalize") < plan.index("Exchange") < plan.index("WatermarkAssigner")
    rows = list(env.execute_sql(sql).collect())
    view = _last_values(records)
    assert _final(rows) == Counter((k, v["v"]) for k, v in view.items())


def test_sink_key_that_changes_with_the_row_leaves_no_stale_key(
    kafka_broker: KafkaBroker, upsert_topic: tuple[str, dict[int, dict[str, Any]]]
) -> None:
    """The sink's PRIMARY KEY includes `grp`, which an update may change: the -U of the old
    key has no +U of its own key after it, so it is written as a tombstone (Flink's upsert
    serialization) and the compacted view holds only the current keys."""
    topic, view = upsert_topic
    out = kafka_broker.new_topic("upsert-read-moving", 2)
    env = _env(kafka_broker, topic, parallelism=2)
    env.execute_sql(
        f"CREATE TABLE moving (name STRING, amount BIGINT, PRIMARY KEY (name) NOT ENFORCED) WITH ("
        f"'connector'='upsert-kafka','topic'='{out}','properties.bootstrap.servers'='{kafka_broker.bootstrap}',"
        "'key.format'='json','value.format'='json')"
    )
    env.execute_sql("INSERT INTO moving SELECT CONCAT(grp, '-', CAST(id AS STRING)), amount FROM accounts").wait()
    got = {json.loads(k)["name"]: json.loads(v)["amount"] for k, v in _compacted(kafka_broker, out, 2).items()}
    assert got == {f"{v['grp']}-{k}": v["amount"] for k, v in view.items()}


def test_normalize_state_is_restored_after_sigkill(
    kafka_broker: KafkaBroker, upsert_topic: tuple[str, dict[int, dict[str, Any]]], tmp_path: Path
) -> None:
    """Killed (SIGKILL) right after its first checkpoint completed and resumed with
    `--restore latest`: the ChangelogNormalize's kept rows come back from the checkpoint
    (without them the replayed updates of known keys would be counted as new keys), so the
    upsert sink's compacted view is the SQL answer over the last values."""
    from clitools import run_restoring

    topic, view = upsert_topic
    out = kafka_broker.new_topic("upsert-read-restore", 1)
    job = tmp_path / "job.sql"
    job.write_text(
        "SET 'execution.runtime-mode' = 'streaming';\n"
        "SET 'table.exec.source.batch-rows' = '5';\n"
        "SET 'execution.checkpointing.interval' = '50 ms';\n"
        f"SET 'execution.checkpointing.dir' = 'file://{tmp_path}/chk';\n"
        "CREATE TABLE accounts (id INT, grp STRING, amount BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH ("
        f"'connector'='upsert-kafka','topic'='{topic}','properties.bootstrap.servers'='{kafka_broker.bootstrap}',"
        "'key.format'='json','value.format'='json','scan.bounded.mode'='latest-offset');\n"
        "CREATE TABLE totals (grp STRING, n BIGINT, total BIGINT, PRIMARY KEY (grp) NOT ENFORCED) WITH ("
        f"'connector'='upsert-kafka','topic'='{out}','properties.bootstrap.servers'='{kafka_broker.bootstrap}',"
        "'key.format'='json','value.format'='json');\n"
        "INSERT INTO totals SELECT grp, COUNT(*), SUM(amount) FROM accounts GROUP BY grp;\n"
    )
    assert run_restoring(tmp_path, job, {"STREAMSQL_FAULT_INJECT": "metadata:1"}) == -9
    assert run_restoring(tmp_path, job) == 0
    got = {json.loads(k)["grp"]: json.loads(v) for k, v in _compacted(kafka_broker, out, 1).items()}
    want = {}
    for g in GROUPS:
        vals = [v["amount"] for v in view.values() if v["grp"] == g]
        if vals:
            want[g] = {"grp": g, "n": len(vals), "total": sum(vals)}
    assert got == want
