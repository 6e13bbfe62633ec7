"""The `kafka` source against the real broker: startup and bounded modes, topic lists and
patterns, the option checks Flink makes."""

from __future__ import annotations

import re

import pytest

from planner.errors import SqlValidationError
from runtime.errors import ConnectorError, JobError

from .conftest import Kafka, read_source, rows

COLS = "id INT, name STRING"


def _fill(kafka: Kafka, partitions: int = 3, n: int = 30, t0: int = 1_700_000_000_000, prefix: str = "src") -> str:
    topic = kafka.topic(partitions, prefix)
    kafka.send(
        topic,
        ({"value": {"id": i, "name": f"n{i}"}, "partition": i % partitions, "timestamp": t0 + i} for i in range(n)),
    )
    return topic


def _ids(kafka: Kafka, topic: str, **options: str) -> list[int]:
    env = kafka.env()
    kafka.table(env, "k", COLS, topic, **options)
    return sorted(r[0] for r in rows(env, "SELECT id FROM k"))


def test_earliest_to_latest_reads_every_record_of_every_partition(kafka: Kafka) -> None:
    topic = _fill(kafka)
    assert _ids(kafka, topic) == list(range(30))


def test_latest_offset_startup_reads_nothing_that_was_there(kafka: Kafka) -> None:
    topic = _fill(kafka)
    assert _ids(kafka, topic, **{"scan.startup.mode": "latest-offset"}) == []


def test_specific_offsets_start_and_stop(kafka: Kafka) -> None:
    topic = _fill(kafka, partitions=1, n=20)
    got = _ids(
        kafka,
        topic,
        **{
            "scan.startup.mode": "specific-offsets",
            "scan.startup.specific-offsets": "partition:0,offset:5",
            "scan.bounded.mode": "specific-offsets",
            "scan.bounded.specific-offsets": "partition:0,offset:12",
        },
    )
    assert got == list(range(5, 12))


def test_timestamp_bounded_mode_stops_before_the_first_record_at_that_time(kafka: Kafka) -> None:
    topic = kafka.topic(1)
    t0 = 1_700_000_000_000
    for i in range(10):  # one produce call per record: tansu answers time look-ups per record batch
        kafka.send(topic, [{"value": {"id": i, "name": "x"}, "timestamp": t0 + 1000 * i}])
    got = _ids(kafka, topic, **{"scan.bounded.mode": "timestamp", "scan.bounded.timestamp-millis": str(t0 + 4000)})
    assert got == [0, 1, 2, 3]
    got = _ids(kafka, topic, **{"scan.startup.mode": "timestamp", "scan.startup.timestamp-millis": str(t0 + 7000)})
    assert got == [7, 8, 9]


def test_group_offsets_start_where_the_group_committed(kafka: Kafka) -> None:
    from confluent_kafka import Consumer, TopicPartition

    topic = _fill(kafka, partitions=2, n=20)
    group = f"g-{topic}"
    c = Consumer({"bootstrap.servers": kafka.bootstrap, "group.id": group})
    c.commit(offsets=[TopicPartition(topic, 0, 4), TopicPartition(topic, 1, 8)], asynchronous=False)
    c.close()
    got = _ids(kafka, topic, **{"scan.startup.mode": "group-offsets", "properties.group.id": group})
    # partition 0 holds the even ids (offset k = id 2k), partition 1 the odd ones
    assert got == sorted([2 * k for k in range(4, 10)] + [2 * k + 1 for k in range(8, 10)])


def test_group_offsets_without_committed_offsets_follow_auto_offset_reset(kafka: Kafka) -> None:
    topic = _fill(kafka, partitions=1, n=5)
    opts = {"scan.startup.mode": "group-offsets", "properties.group.id": f"fresh-{topic}"}
    with pytest.raises(JobError, match="no committed offset"):
        _ids(kafka, topic, **opts)
    assert _ids(kafka, topic, **opts, **{"properties.auto.offset.reset": "earliest"}) == list(range(5))


def test_topic_list_and_topic_pattern(kafka: Kafka) -> None:
    a, b = _fill(kafka, 1, 3, prefix="pattern"), _fill(kafka, 2, 4, prefix="pattern")
    _fill(kafka, 1, 5, prefix="other")
    assert _ids(kafka, f"{a};{b}") == [0, 0, 1, 1, 2, 2, 3]
    env = kafka.env()
    kafka.table(env, "k", COLS, None, **{"topic-pattern": r"pattern-\d+-\d+"})  # type: ignore[arg-type]
    assert sorted(r[0] for r in rows(env, "SELECT id FROM k")) == [0, 0, 1, 1, 2, 2, 3]


def test_batch_mode_refuses_an_unbounded_table(kafka: Kafka) -> None:
    env = kafka.env()
    kafka.table(env, "k", COLS, "whatever", **{"scan.bounded.mode": "unbounded"})
    with pytest.raises(ConnectorError, match="Querying an unbounded table '.*k' in batch mode is not allowed"):
        list(env.execute_sql("SELECT * FROM k").collect())


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"topic-pattern": "x.*"}, "Option 'topic' and 'topic-pattern' shouldn't be set together."),
        ({"scan.startup.mode": "timestamp"}, "'scan.startup.timestamp-millis' is required in 'timestamp' startup"),
        (
            {"scan.startup.mode": "specific-offsets", "scan.startup.specific-offsets": "p0:1"},
            "should follow the format 'partition:0,offset:42;partition:1,offset:300'",
        ),
        ({"key.fields": "id"}, "'key.fields' requires 'key.format'"),
        ({"key.format": "json", "key.fields": "nope"}, "Could not find the field 'nope' in the table schema"),
        (
            {"key.format": "json", "key.fields": "id", "key.fields-prefix": "k_"},
            "A key prefix is not allowed when option 'value.fields-include' is set to 'ALL'",
        ),
        ({"value.format": "json"}, "Option 'format' and 'value.format' shouldn't be set together."),
        ({"scan.startup.mode": "sometime"}, "Invalid value for option 'scan.startup.mode'"),
        # Flink's KafkaSourceBuilder without 'properties.group.id': the default startup mode
        # is 'group-offsets', which reads the group's committed offsets
        ({"scan.startup.mode": None}, "Property group.id is required when using committed offset for offsets"),
        ({"scan.bounded.mode": "group-offsets"}, "Property group.id is required when using committed offset"),
        (
            {"properties.commit.offsets.on.checkpoint": "true", "scan.startup.mode": None},
            "Property group.id is required when offset commit is enabled",
        ),
        ({"properties.enable.auto.commit": "true"}, "Property group.id is required when offset commit is enabled"),
    ],
)
def test_option_checks(kafka: Kafka, options: dict[str, str], message: str) -> None:
    env = kafka.env()
    kafka.table(env, "k", COLS, "t", **options)
    with pytest.raises(SqlValidationError, match=re.escape(message)):
        env.execute_sql("SELECT * FROM k").collect()


def test_without_a_group_id_nothing_is_committed(kafka: Kafka) -> None:
    """Without 'properties.group.id' Flink turns 'commit.offsets.on.checkpoint' off; the
    consumer's generated group ('KafkaSource-<n>', as Flink names its client) never gets an
    offset. With a group id the same commit reaches the group."""
    from confluent_kafka import Consumer, TopicPartition

    topic = _fill(kafka, partitions=1, n=5)

    def read_and_commit(options: dict[str, str]) -> str:
        source = read_source(kafka, topic, options)
        reader = source.create_group_reader(source.splits())
        while reader.read(100) is not None:
            pass
        reader.commit({s: {"offset": 5, "stop": None} for s in source.splits()})
        reader.close()
        return str(reader.group_id)

    def committed(group: str) -> int:
        c = Consumer({"bootstrap.servers": kafka.bootstrap, "group.id": group})
        try:
            return int(c.committed([TopicPartition(topic, 0)], timeout=30)[0].offset)
        finally:
            c.close()

    generated = read_and_commit({})
    assert re.fullmatch(r"KafkaSource-\d+", generated)
    assert committed(generated) < 0  # no offset committed
    group = f"given-{topic}"
    assert read_and_commit({"properties.group.id": group}) == group
    assert committed(group) == 5


def test_missing_topic_names_it(kafka: Kafka) -> None:
    with pytest.raises(ConnectorError, match="'no-such-topic-x' of table source do not exist"):
        _ids(kafka, "no-such-topic-x")


def test_upsert_kafka_source_needs_a_primary_key(kafka: Kafka) -> None:
    env = kafka.env(batch=False)
    common = f"'topic' = 't', 'properties.bootstrap.servers' = '{kafka.bootstrap}', 'key.format' = 'json', 'value.format' = 'json'"
    env.execute_sql(f"CREATE TABLE nopk (id INT, v STRING) WITH ('connector' = 'upsert-kafka', {common})")
    with pytest.raises(SqlValidationError, match="'upsert-kafka' tables require to define a PRIMARY KEY constraint"):
        env.execute_sql("SELECT * FROM nopk").collect()


def test_upsert_reader_turns_tombstones_into_deletes_keyed_from_the_record_key(kafka: Kafka) -> None:
    """The upsert decoding the ChangelogNormalize consumes: a value is +I, a tombstone
    a -D carrying the key columns from the record key."""
    from runtime.batch import ROW_KIND
    from runtime.types import INT, STRING, Field

    topic = kafka.topic(1)
    kafka.send(topic, [{"key": {"id": 1}, "value": {"v": "a"}}, {"key": {"id": 1}, "value": None}])
    source = read_source(
        kafka,
        topic,
        {
            "$internal.primary-key": "id",
            "key.format": "json",
            "value.format": "json",
            "value.fields-include": "EXCEPT_KEY",
        },
        (Field("id", INT(False)), Field("v", STRING())),
        upsert=True,
    )
    reader = source.create_group_reader(source.splits())
    got = []
    while (b := reader.read(100)) is not None:
        got += list(zip(b.column(0).to_pylist(), b.column(1).to_pylist(), b.column(ROW_KIND).to_pylist(), strict=True))
    reader.close()
    assert got == [(1, "a", 0), (1, None, 3)]
