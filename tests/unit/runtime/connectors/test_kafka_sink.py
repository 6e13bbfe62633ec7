"""The `kafka` / `upsert-kafka` sinks against the tansu broker: key/value formats, metadata,
partitioners, planning-time checks, upsert tombstones and buffering, and the exactly-once
sink's transactions (commit markers make a replayed commit a no-op; a restore commits the
pending work once and fences the previous producer)."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest
from servers.kafka import KafkaBroker

from runtime.batch import DELETE, INSERT, ROW_KIND, UPDATE_AFTER, UPDATE_BEFORE
from runtime.connectors.base import SUBTASK_INDEX, SourceContext
from runtime.connectors.kafka.sink import TXN_HEADER, TransactionalKafkaSink, create_upsert_sink
from runtime.types import BIGINT, INT, Field
from streamsql import EnvironmentSettings, TableEnvironment


def _read(broker: KafkaBroker, topic: str, partitions: int = 1, committed: bool = False) -> list[Any]:
    """Every record of `topic` (all partitions) as (partition, key, value, timestamp, headers)."""
    return [
        (m.partition(), m.key(), m.value(), m.timestamp()[1], m.headers())
        for m in broker.read(topic, partitions, committed=committed)
    ]


def _env() -> TableEnvironment:
    return TableEnvironment.create(EnvironmentSettings.in_streaming_mode())


def _kafka(broker: KafkaBroker, topic: str, extra: str = "") -> str:
    return f"'connector'='kafka','topic'='{topic}','properties.bootstrap.servers'='{broker.bootstrap}'{extra}"


VALUES = "(VALUES (1, 'a\"b', 1.5), (2, 'c', 2.0), (3, CAST(NULL AS STRING), 3.0)) AS x(k, name, v)"


def test_json_key_value_and_writable_metadata(kafka_broker: KafkaBroker) -> None:
    topic = kafka_broker.new_topic("sink-json", 3)
    env = _env()
    env.execute_sql(
        "CREATE TABLE o (k INT, name STRING, v DOUBLE, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp', "
        "h MAP<STRING, BYTES> METADATA FROM 'headers') WITH ("
        + _kafka(
            kafka_broker,
            topic,
            ",'key.format'='json','key.fields'='k','value.format'='json','value.fields-include'='EXCEPT_KEY'",
        )
        + ")"  # fmt: skip
    )
    env.execute_sql(
        f"INSERT INTO o SELECT k, name, v, TO_TIMESTAMP_LTZ(1700000000000 + k, 3), MAP['a', CAST('x' AS BYTES)] "
        f"FROM {VALUES}"
    ).wait()
    got = sorted(_read(kafka_broker, topic, 3), key=lambda r: r[1])
    assert [(r[1], r[2], r[3], r[4]) for r in got] == [
        (b'{"k":1}', b'{"name":"a\\"b","v":1.5}', 1700000000001, [("a", b"x")]),
        (b'{"k":2}', b'{"name":"c","v":2.0}', 1700000000002, [("a", b"x")]),
        (b'{"k":3}', b'{"name":null,"v":3.0}', 1700000000003, [("a", b"x")]),
    ]
    # 'default' partitioner: Kafka's murmur2 of the key, so equal keys share a partition
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": kafka_broker.bootstrap, "partitioner": "murmur2_random"})
    delivered: list[int] = []
    for r in got:
        p.produce(topic, b"", r[1], on_delivery=lambda err, msg: delivered.append(msg.partition()))
    p.flush(10)
    assert delivered == [r[0] for r in got]


@pytest.mark.parametrize("partitioner", ["fixed", "round-robin"])
def test_partitioners(kafka_broker: KafkaBroker, partitioner: str) -> None:
    topic = kafka_broker.new_topic("sink-part", 3)
    env = _env()
    env.execute_sql(
        "CREATE TABLE o (k INT, name STRING, v DOUBLE) WITH ("
        + _kafka(kafka_broker, topic, f",'format'='csv','sink.partitioner'='{partitioner}'")
        + ")"
    )
    env.execute_sql(f"INSERT INTO o SELECT * FROM {VALUES}").wait()
    got = _read(kafka_broker, topic, 3)
    assert sorted(r[2] for r in got) == [b'1,"a""b",1.5', b"2,c,2.0", b"3,,3.0"]
    parts = sorted(r[0] for r in got)
    assert parts == ([0, 0, 0] if partitioner == "fixed" else [0, 1, 2])
    assert all(r[1] is None for r in got)


def test_updating_result_needs_a_changelog_format(kafka_broker: KafkaBroker) -> None:
    topic = kafka_broker.new_topic("sink-refuse", 1)
    env = _env()
    env.execute_sql("CREATE TABLE o (k INT, c BIGINT) WITH (" + _kafka(kafka_broker, topic, ",'format'='json'") + ")")
    with pytest.raises(Exception, match="doesn't support consuming update changes"):
        env.execute_sql(f"INSERT INTO o SELECT k, COUNT(*) FROM {VALUES} GROUP BY k").wait()


def test_debezium_json_writes_every_change(kafka_broker: KafkaBroker) -> None:
    topic = kafka_broker.new_topic("sink-dbz", 1)
    env = _env()
    env.execute_sql(
        "CREATE TABLE o (g INT, c BIGINT) WITH (" + _kafka(kafka_broker, topic, ",'format'='debezium-json'") + ")"
    )
    # HAVING over an updating count: group 1 appears (count 1) and is deleted at count 2
    env.execute_sql(
        "INSERT INTO o SELECT k, COUNT(*) FROM (VALUES (1), (2), (1)) AS x(k) GROUP BY k HAVING COUNT(*) < 2"
    ).wait()
    events = [json.loads(r[2]) for r in _read(kafka_broker, topic)]
    final: dict[int, int] = {}
    for e in events:  # folding the change events gives the query's answer
        assert set(e) == {"before", "after", "op"} and e["op"] in ("c", "d")
        if e["op"] == "c":
            final[e["after"]["g"]] = e["after"]["c"]
        else:
            assert final.pop(e["before"]["g"]) == e["before"]["c"]
    assert final == {2: 1}


@pytest.mark.parametrize(
    ("fmt", "expected"),
    [
        ("debezium-json", ['{"before":null,"after":{"k":1,"c":1},"op":"c"}',
                           '{"before":{"k":1,"c":1},"after":null,"op":"d"}',
                           '{"before":null,"after":{"k":1,"c":2},"op":"c"}',
                           '{"before":{"k":1,"c":2},"after":null,"op":"d"}']),
        ("canal-json", ['{"data":[{"k":1,"c":1}],"type":"INSERT"}', '{"data":[{"k":1,"c":1}],"type":"DELETE"}',
                        '{"data":[{"k":1,"c":2}],"type":"INSERT"}', '{"data":[{"k":1,"c":2}],"type":"DELETE"}']),
        ("maxwell-json", ['{"data":{"k":1,"c":1},"type":"insert"}', '{"data":{"k":1,"c":1},"type":"delete"}',
                          '{"data":{"k":1,"c":2},"type":"insert"}', '{"data":{"k":1,"c":2},"type":"delete"}']),
    ],
)  # fmt: skip
def test_change_event_encoders(fmt: str, expected: list[str]) -> None:
    """+I/+U are written as insertions, -U/-D as deletions, as Flink's serializers do."""
    from runtime.connectors.formats import get_format

    encoder = get_format(fmt).open_encoder  # type: ignore[misc]
    if encoder is None:
        pytest.skip(f"{fmt} has no encoder yet")
    batch = _batch([(1, 1), (1, 1), (1, 2), (1, 2)], [INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE])
    out = encoder(SCHEMA, {}, _ctx()).encode(batch)
    assert [v.decode() for v in out.to_pylist()] == expected


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (",'format'='json','sink.delivery-guarantee'='exactly-once'", "sink.transactional-id-prefix must be specified"),
        (",'key.format'='json','key.fields'='k','value.format'='json','sink.partitioner'='round-robin'",
         "'round-robin' partitioner only works when option 'key.fields' is not specified"),
        (",'format'='json','sink.partitioner'='com.example.MyPartitioner'", "Could not find and instantiate"),
    ],
)  # fmt: skip
def test_sink_option_checks(kafka_broker: KafkaBroker, extra: str, message: str) -> None:
    env = _env()
    env.execute_sql("CREATE TABLE o (k INT, name STRING, v DOUBLE) WITH (" + _kafka(kafka_broker, "t", extra) + ")")
    with pytest.raises(Exception, match=message):
        env.execute_sql(f"INSERT INTO o SELECT * FROM {VALUES}").wait()


def _upsert_table(broker: KafkaBroker, topic: str, extra: str = "") -> str:
    return (
        "CREATE TABLE u (k INT, c BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector'='upsert-kafka',"
        f"'topic'='{topic}','properties.bootstrap.servers'='{broker.bootstrap}','key.format'='json',"
        f"'value.format'='json'{extra})"
    )


def test_upsert_kafka_writes_upserts_and_tombstones(kafka_broker: KafkaBroker) -> None:
    topic = kafka_broker.new_topic("sink-upsert", 2)
    env = _env()
    env.execute_sql(_upsert_table(kafka_broker, topic))
    env.execute_sql(
        "INSERT INTO u SELECT k, COUNT(*) FROM (VALUES (1), (2), (1)) AS x(k) GROUP BY k HAVING COUNT(*) < 2"
    ).wait()
    compacted = {r[1]: r[2] for r in _read(kafka_broker, topic, 2)}  # one partition per key: order kept
    assert {k: v for k, v in compacted.items() if v is not None} == {b'{"k":2}': b'{"k":2,"c":1}'}
    # every kind: +I/+U upsert, -U dropped, -D a tombstone
    topic2 = kafka_broker.new_topic("sink-upsert-kinds", 1)
    opts = {"topic": topic2, "properties.bootstrap.servers": kafka_broker.bootstrap, "key.format": "json",
            "value.format": "json", "$internal.primary-key": "k"}  # fmt: skip
    sink = create_upsert_sink(opts, SCHEMA, _ctx())
    sink.open()
    sink.write(_batch([(1, 1), (2, 1), (1, 1), (1, 2), (2, 1)], [INSERT, INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE]))
    sink.close()
    assert [(r[1], r[2]) for r in _read(kafka_broker, topic2)] == [
        (b'{"k":1}', b'{"k":1,"c":1}'),
        (b'{"k":2}', b'{"k":2,"c":1}'),
        (b'{"k":1}', b'{"k":1,"c":2}'),
        (b'{"k":2}', None),
    ]
    # a -U without a later +I/+U of its key (the row left the result under it): a tombstone
    topic3 = kafka_broker.new_topic("sink-upsert-moved", 1)
    sink = create_upsert_sink({**opts, "topic": topic3}, SCHEMA, _ctx())
    sink.open()
    sink.write(
        _batch(
            [(1, 2), (3, 2), (4, 1), (4, 1), (4, 3)], [UPDATE_BEFORE, UPDATE_AFTER, INSERT, UPDATE_BEFORE, UPDATE_AFTER]
        )
    )
    sink.close()
    assert [(r[1], r[2]) for r in _read(kafka_broker, topic3)] == [
        (b'{"k":1}', None),
        (b'{"k":3}', b'{"k":3,"c":2}'),
        (b'{"k":4}', b'{"k":4,"c":1}'),
        (b'{"k":4}', b'{"k":4,"c":3}'),
    ]
    with pytest.raises(Exception, match="must be set to be greater than zero together"):
        env.execute_sql(_upsert_table(kafka_broker, topic, ",'sink.buffer-flush.max-rows'='10'").replace("u (", "u2 ("))
        env.execute_sql("INSERT INTO u2 SELECT 1, CAST(1 AS BIGINT)").wait()


def _ctx(subtask: int = 0) -> SourceContext:
    return SourceContext("STREAMING", config={SUBTASK_INDEX: str(subtask)})


SCHEMA = (Field("k", INT()), Field("c", BIGINT()))


def _batch(rows: list[tuple[int, int]], kinds: list[int]) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [pa.array([r[0] for r in rows], pa.int32()), pa.array([r[1] for r in rows], pa.int64()),
         pa.array(kinds, pa.int8())],
        names=["k", "c", ROW_KIND],
    )  # fmt: skip


def test_upsert_buffer_keeps_the_last_record_per_key(kafka_broker: KafkaBroker) -> None:
    topic = kafka_broker.new_topic("sink-buf", 1)
    opts = {"topic": topic, "properties.bootstrap.servers": kafka_broker.bootstrap, "key.format": "json",
            "value.format": "json", "$internal.primary-key": "k", "sink.buffer-flush.max-rows": "100",
            "sink.buffer-flush.interval": "1 h"}  # fmt: skip
    sink = create_upsert_sink(opts, SCHEMA, _ctx())
    sink.open()
    sink.write(_batch([(1, 1), (2, 1), (1, 1), (1, 2), (2, 1)], [INSERT, INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE]))
    assert _read(kafka_broker, topic) == []  # buffered
    sink.flush()
    sink.close()
    assert [(r[1], r[2]) for r in _read(kafka_broker, topic)] == [
        (b'{"k":1}', b'{"k":1,"c":2}'),
        (b'{"k":2}', None),
    ]


class _Clock:
    """A monotonic clock the test moves (the sink's buffer interval, without sleeping)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


def test_upsert_buffer_is_sent_by_the_idle_timer_when_the_interval_elapsed(
    kafka_broker: KafkaBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """'sink.buffer-flush.interval': with no new input, the executor's idle timer (the Sink
    operator's `on_timer`) sends the buffer once the interval passed, not before."""
    from runtime.graph import STREAMING, Node
    from runtime.operators.base import OperatorContext, Output, create_operator
    from runtime.operators.sink import SINK, SinkParams

    clock = _Clock()
    monkeypatch.setattr("runtime.connectors.kafka.sink.time", clock)
    topic = kafka_broker.new_topic("sink-buf-timer", 1)
    opts = {"topic": topic, "properties.bootstrap.servers": kafka_broker.bootstrap, "key.format": "json",
            "value.format": "json", "sink.buffer-flush.max-rows": "100", "sink.buffer-flush.interval": "2 s"}  # fmt: skip
    node = Node(1, SINK.name, (0,), SCHEMA, SinkParams("u", "upsert-kafka", opts, SCHEMA, ("k",)))
    op = create_operator(node, OperatorContext(mode=STREAMING, config={}))
    op.open()
    op.process_batch(_batch([(1, 1), (1, 2), (2, 5)], [INSERT, UPDATE_AFTER, INSERT]), 0, Output())
    clock.now += 1.9
    op.on_timer(Output())
    assert _read(kafka_broker, topic) == []  # the interval has not passed: still buffered
    clock.now += 0.2
    op.on_timer(Output())
    sink = op.sink  # type: ignore[attr-defined]
    assert sink.producer.flush(10) == 0  # delivered (not a flush of the buffer: that is empty now)
    assert sink._buffered == 0
    assert [(r[1], r[2]) for r in _read(kafka_broker, topic)] == [
        (b'{"k":1}', b'{"k":1,"c":2}'),
        (b'{"k":2}', b'{"k":2,"c":5}'),
    ]
    op.close()


def _eos(broker: KafkaBroker, topic: str, prefix: str, subtask: int = 0) -> TransactionalKafkaSink:
    opts = {"topic": topic, "properties.bootstrap.servers": broker.bootstrap, "format": "json",
            "sink.delivery-guarantee": "exactly-once", "sink.transactional-id-prefix": prefix}  # fmt: skip
    sink = TransactionalKafkaSink(opts, SCHEMA, _ctx(subtask), upsert=False)
    sink.deferred_commit = True
    sink.open()
    return sink


def _values(records: list[Any]) -> list[bytes]:
    return [r[2] for r in records]


def test_exactly_once_commits_each_checkpoint_once(kafka_broker: KafkaBroker) -> None:
    topic = kafka_broker.new_topic("sink-eos", 1)
    sink = _eos(kafka_broker, topic, "eos-a")
    sink.write(_batch([(1, 10), (2, 20)], [INSERT, INSERT]))
    c1 = sink.prepare_commit(1)
    sink.write(_batch([(3, 30)], [INSERT]))
    c2 = sink.prepare_commit(2)
    state = sink.snapshot_state()
    assert _read(kafka_broker, topic) == []  # nothing before the checkpoint completes
    sink.commit([c1])
    sink.commit([c1])  # replayed: the commit marker says it is done
    assert _values(_read(kafka_broker, topic)) == [b'{"k":1,"c":10}', b'{"k":2,"c":20}']
    headers = {dict(r[4])[TXN_HEADER].decode().rsplit(":", 1)[0] for r in _read(kafka_broker, topic)}
    assert headers == {"eos-a-0:1"}
    # the process dies before checkpoint 2 is committed; the restored sink commits it once,
    # also when the restore itself is replayed
    sink.abort()
    for _ in range(2):
        restored = _eos(kafka_broker, topic, "eos-a")
        restored.restore_state(state, [c1, c2])
        restored.abort()
    assert _values(_read(kafka_broker, topic, committed=True)) == [
        b'{"k":1,"c":10}', b'{"k":2,"c":20}', b'{"k":3,"c":30}'
    ]  # fmt: skip
    # a new job (no restore) with the same prefix starts its checkpoint ids at 1 again: its
    # commit markers continue above the old ones, so nothing of it is taken as committed
    fresh = _eos(kafka_broker, topic, "eos-a")
    fresh.write(_batch([(4, 40)], [INSERT]))
    fresh.commit([fresh.prepare_commit(1)])
    fresh.abort()
    assert _values(_read(kafka_broker, topic, committed=True))[-1] == b'{"k":4,"c":40}'


def test_exactly_once_fences_the_previous_producer(kafka_broker: KafkaBroker) -> None:
    topic = kafka_broker.new_topic("sink-fence", 1)
    old = _eos(kafka_broker, topic, "eos-f")
    old.write(_batch([(1, 1)], [INSERT]))
    committable = old.prepare_commit(1)
    old.producer.begin_transaction()  # a transaction left open by a process that died
    old.producer.produce(topic, b"zombie")
    old.producer.flush(10)
    new = _eos(kafka_broker, topic, "eos-f")  # init_transactions fences it and aborts its transaction
    from confluent_kafka import KafkaException

    with pytest.raises(KafkaException):
        old.producer.commit_transaction(2)
    new.restore_state(None, [committable])
    # tansu shows the aborted record to read_committed readers; the committed ones carry the header
    values = [r[2] for r in _read(kafka_broker, topic, committed=True) if r[4] and dict(r[4]).get(TXN_HEADER)]
    assert values == [b'{"k":1,"c":1}']


def test_exactly_once_without_checkpoints_commits_at_the_end(kafka_broker: KafkaBroker) -> None:
    topic = kafka_broker.new_topic("sink-eos-end", 1)
    env = _env()
    env.execute_sql(
        "CREATE TABLE o (k INT, name STRING, v DOUBLE) WITH ("
        + _kafka(
            kafka_broker,
            topic,
            ",'format'='json','sink.delivery-guarantee'='exactly-once','sink.transactional-id-prefix'='eos-end'",
        )
        + ")"  # fmt: skip
    )
    env.execute_sql(f"INSERT INTO o SELECT * FROM {VALUES}").wait()
    assert len(_read(kafka_broker, topic, committed=True)) == 3


def test_exactly_once_rescaled_restore_commits_other_subtasks_work_once(kafka_broker: KafkaBroker) -> None:
    """Restored at a lower parallelism, subtask 0 gets subtask 1's pending transactions: it
    fences subtask 1's transactional id and commits them once (subtask 1's commit marker)."""
    topic = kafka_broker.new_topic("sink-rescale", 1)
    gone = _eos(kafka_broker, topic, "eos-r", subtask=1)
    gone.write(_batch([(7, 70)], [INSERT]))
    pending = gone.prepare_commit(1)
    gone.abort()
    for _ in range(2):
        sink = _eos(kafka_broker, topic, "eos-r", subtask=0)
        sink.restore_state(None, [pending])
        sink.abort()
    records = _read(kafka_broker, topic, committed=True)
    assert _values(records) == [b'{"k":7,"c":70}']
    assert dict(records[0][4])[TXN_HEADER].decode().startswith("eos-r-1:1:")


@pytest.mark.parametrize(
    ("fmt", "columns", "rows"),
    [
        ("avro", "k INT, name STRING, v DOUBLE, ts TIMESTAMP(3)",
         "(1, 'a', CAST(1.5 AS DOUBLE), TIMESTAMP '2024-01-02 03:04:05.678'), (2, CAST(NULL AS STRING), CAST(2.0 AS DOUBLE), TIMESTAMP '2024-01-02 00:00:00')"),
        ("raw", "s STRING", "('x'), ('héllo'), (CAST(NULL AS STRING))"),
        ("raw", "n BIGINT", "(CAST(1 AS BIGINT)), (CAST(-300 AS BIGINT)), (CAST(NULL AS BIGINT))"),
        ("csv", "k INT, name STRING", "(1, 'a,b'), (2, 'c\"d')"),
    ],
)  # fmt: skip
def test_written_records_read_back(kafka_broker: KafkaBroker, fmt: str, columns: str, rows: str) -> None:
    """What the sink writes in a format, the Kafka source of the same table reads back."""
    topic = kafka_broker.new_topic(f"sink-rt-{fmt}", 1)
    env = _env()
    env.execute_sql(f"CREATE TABLE o ({columns}) WITH (" + _kafka(kafka_broker, topic, f",'format'='{fmt}'") + ")")
    env.execute_sql(f"INSERT INTO o SELECT * FROM (VALUES {rows})").wait()
    expected = sorted(map(str, map(tuple, env.execute_sql(f"SELECT * FROM (VALUES {rows})").collect())))
    batch = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    batch.execute_sql(
        f"CREATE TABLE i ({columns}) WITH ("
        + _kafka(
            kafka_broker,
            topic,
            f",'format'='{fmt}','scan.startup.mode'='earliest-offset','scan.bounded.mode'='latest-offset'",
        )
        + ")"  # fmt: skip
    )
    assert sorted(map(str, map(tuple, batch.execute_sql("SELECT * FROM i").collect()))) == expected


def test_upsert_kafka_takes_flinks_delivery_guarantee_options(kafka_broker: KafkaBroker) -> None:
    """Flink's upsert-kafka accepts 'sink.delivery-guarantee', 'sink.transactional-id-prefix'
    and 'sink.transaction-naming-strategy': exactly-once upserts are committed at the end."""
    topic = kafka_broker.new_topic("sink-upsert-eos", 1)
    env = _env()
    env.execute_sql(
        _upsert_table(
            kafka_broker,
            topic,
            ",'sink.delivery-guarantee'='exactly-once','sink.transactional-id-prefix'='up-eos',"
            "'sink.transaction-naming-strategy'='POOLING'",
        )
    )
    env.execute_sql("INSERT INTO u SELECT k, COUNT(*) FROM (VALUES (1), (2), (1)) AS x(k) GROUP BY k").wait()
    records = _read(kafka_broker, topic, committed=True)
    assert all(dict(r[4] or []).get(TXN_HEADER) for r in records)  # written in the sink's transactions
    assert {r[1]: r[2] for r in records} == {b'{"k":1}': b'{"k":1,"c":2}', b'{"k":2}': b'{"k":2,"c":1}'}
    with pytest.raises(Exception, match="sink.transaction-naming-strategy"):
        env.execute_sql(
            _upsert_table(kafka_broker, topic, ",'sink.transaction-naming-strategy'='RANDOM'").replace("u (", "u3 (")
        )
        env.execute_sql("INSERT INTO u3 VALUES (1, 1)").wait()


def test_the_producer_is_idempotent_unless_the_table_says_otherwise() -> None:
    # Flink's producer is idempotent (the Kafka client's default since 3.0): a request the
    # client retries cannot land after a later one, so an upsert key's tombstone and its next
    # value keep their order in the partition (out of order, the compacted view loses the key)
    from runtime.connectors.kafka.sink import KafkaSink

    opts = {"topic": "t", "properties.bootstrap.servers": "127.0.0.1:9", "format": "json"}
    assert KafkaSink(opts, SCHEMA, _ctx(), upsert=False)._config()["enable.idempotence"] is True
    own = {**opts, "properties.enable.idempotence": "false"}
    assert KafkaSink(own, SCHEMA, _ctx(), upsert=False)._config()["enable.idempotence"] == "false"
