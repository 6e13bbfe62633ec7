"""The `kafka` source's formats (value and key), metadata columns and bad records."""

from __future__ import annotations

import io
import json
import struct
from datetime import UTC, datetime

import pytest

from runtime.errors import DataError
from streamsql import TableEnvironment

from .conftest import Kafka, read_source, rows


def test_csv_raw_and_avro_values(kafka: Kafka) -> None:
    topic = kafka.topic(1)
    kafka.send(topic, [{"value": b"1,alice,2.5"}, {"value": b'2,"b,ob",'}])
    env = kafka.env()
    kafka.table(env, "c", "id INT, name STRING, score DOUBLE", topic, format="csv", **{"csv.null-literal": ""})
    assert rows(env, "SELECT * FROM c") == [(1, "alice", 2.5), (2, "b,ob", None)]

    raw = kafka.topic(1)
    kafka.send(raw, [{"value": struct.pack(">q", 42)}, {"value": struct.pack(">q", -7)}])
    kafka.table(env, "r", "v BIGINT", raw, format="raw")
    assert rows(env, "SELECT v FROM r") == [(-7,), (42,)]

    import fastavro

    from runtime.connectors.formats.avro_format import avro_schema
    from runtime.types import INT, STRING, TIMESTAMP, Field

    schema = fastavro.parse_schema(
        avro_schema((Field("id", INT()), Field("name", STRING()), Field("ts", TIMESTAMP(3))))
    )
    payloads = []
    for i in range(3):
        buf = io.BytesIO()
        ts = datetime(2024, 1, 1, 0, 0, i, tzinfo=UTC)
        fastavro.schemaless_writer(buf, schema, {"id": i, "name": None if i == 1 else f"n{i}", "ts": ts})
        payloads.append({"value": buf.getvalue()})
    avro = kafka.topic(1)
    kafka.send(avro, payloads)
    kafka.table(env, "a", "id INT, name STRING, ts TIMESTAMP(3)", avro, format="avro")
    assert rows(env, "SELECT id, name, CAST(ts AS STRING) FROM a") == [
        (0, "n0", "2024-01-01 00:00:00.000"),
        (1, None, "2024-01-01 00:00:01.000"),
        (2, "n2", "2024-01-01 00:00:02.000"),
    ]


def test_key_fields_prefix_and_except_key(kafka: Kafka) -> None:
    topic = kafka.topic(2)
    kafka.send(
        topic,
        [{"key": {"id": i}, "value": {"name": f"n{i}", "id": 100 + i}, "partition": i % 2} for i in range(4)],
    )
    env = kafka.env()
    kafka.table(
        env,
        "k",
        "k_id INT, name STRING",
        topic,
        **{"key.format": "json", "key.fields": "k_id", "key.fields-prefix": "k_", "value.fields-include": "EXCEPT_KEY"},
    )
    assert rows(env, "SELECT k_id, name FROM k") == [(0, "n0"), (1, "n1"), (2, "n2"), (3, "n3")]
    # ALL: the value holds the key columns too and wins (Flink's projection order)
    kafka.table(env, "a", "id INT, name STRING", topic, **{"key.format": "json", "key.fields": "id"})
    assert rows(env, "SELECT id FROM a") == [(100,), (101,), (102,), (103,)]


def test_metadata_columns(kafka: Kafka) -> None:
    topic = kafka.topic(2)
    t0 = 1_700_000_000_000
    kafka.send(
        topic,
        [
            {"value": {"id": i}, "partition": i % 2, "timestamp": t0 + i, "headers": [("h", f"v{i}".encode())]}
            for i in range(4)
        ],
    )
    env = kafka.env()
    kafka.table(
        env,
        "m",
        "id INT, t STRING METADATA FROM 'topic' VIRTUAL, `partition` INT METADATA VIRTUAL, "
        "`offset` BIGINT METADATA VIRTUAL, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp', "
        "tt STRING METADATA FROM 'timestamp-type' VIRTUAL, headers MAP<STRING, BYTES> METADATA, "
        "ms AS UNIX_TIMESTAMP(CAST(ts AS STRING)) ",
        topic,
    )
    got = rows(env, "SELECT id, t, `partition`, `offset`, CAST(ts AS STRING), tt, headers['h'] FROM m")
    assert got == [
        (i, topic, i % 2, i // 2, f"2023-11-14 22:13:20.00{i}", "CreateTime", f"v{i}".encode()) for i in range(4)
    ]


def test_unknown_metadata_key_is_refused_with_the_keys_offered(kafka: Kafka) -> None:
    env = kafka.env()
    kafka.table(env, "m", "id INT, x STRING METADATA FROM 'nope'", "t")
    with pytest.raises(Exception, match="(?s)Invalid metadata key 'nope' in column 'x'.*leader-epoch"):
        env.execute_sql("SELECT * FROM m").collect()


def _bad_topic(kafka: Kafka) -> str:
    topic = kafka.topic(2)
    kafka.send(
        topic,
        [
            {"value": {"id": 1}, "partition": 0},
            {"value": {"id": 2}, "partition": 1},
            {"value": b"{not json", "partition": 1},
            {"value": {"id": 3}, "partition": 1},
        ],
    )
    return topic


def test_a_bad_record_fails_naming_topic_partition_and_offset(kafka: Kafka) -> None:
    topic = _bad_topic(kafka)
    env = kafka.env()
    kafka.table(env, "b", "id INT", topic)
    with pytest.raises(DataError, match=f"topic '{topic}', partition 1, offset 1"):
        rows(env, "SELECT * FROM b")


def test_ignore_parse_errors_skips_and_counts(kafka: Kafka) -> None:
    topic = _bad_topic(kafka)
    env = kafka.env()
    kafka.table(env, "b", "id INT", topic, **{"json.ignore-parse-errors": "true"})
    assert rows(env, "SELECT * FROM b") == [(1,), (2,), (3,)]
    # the count the source operator reports as the `skipped_rows` metric
    source = read_source(kafka, topic, {"json.ignore-parse-errors": "true"})
    reader = source.create_group_reader(source.splits())
    while reader.read(100) is not None:
        pass
    assert reader.skipped_rows == 1
    reader.close()


def _debezium_events() -> tuple[list[dict[str, object]], dict[int, tuple[str, int]]]:
    """Change events of a table (id, category, amount) and its final state."""
    state: dict[int, tuple[str, int]] = {}
    events: list[dict[str, object]] = []
    import random

    rnd = random.Random(7)
    for step in range(400):
        i = rnd.randrange(40)
        after = {"id": i, "category": rnd.choice("abcd"), "amount": rnd.randrange(100)}
        if i in state and rnd.random() < 0.25:
            before = {"id": i, "category": state[i][0], "amount": state[i][1]}
            events.append({"before": before, "after": None, "op": "d"})
            del state[i]
        elif i in state:
            before = {"id": i, "category": state[i][0], "amount": state[i][1]}
            events.append({"before": before, "after": after, "op": "u"})
            state[i] = (str(after["category"]), int(after["amount"]))  # type: ignore[call-overload]
        else:
            events.append({"before": None, "after": after, "op": "c" if step % 3 else "r"})
            state[i] = (str(after["category"]), int(after["amount"]))  # type: ignore[call-overload]
    return events, state


@pytest.mark.parametrize("partitions", [1, 3])
def test_debezium_changelog_feeds_a_group_by_equal_to_sql_over_the_final_state(kafka: Kafka, partitions: int) -> None:
    """Done-when item of issue 17: a debezium-json changelog topic → GROUP BY; the result
    equals the SQL answer over the final state of the table. Events of one id go to one
    partition (keyed by id), as Debezium writes them."""
    events, state = _debezium_events()
    topic = kafka.topic(partitions)
    kafka.send(
        topic,
        [{"key": json.dumps({"id": e_id(e)}), "value": e, "partition": e_id(e) % partitions} for e in events],
    )
    query = "SELECT category, COUNT(*) AS n, SUM(amount) AS total FROM {} GROUP BY category"
    expected_env = TableEnvironment.create()
    values = ", ".join(f"({i}, '{c}', {a})" for i, (c, a) in sorted(state.items()))
    expected = rows(expected_env, query.format(f"(VALUES {values}) AS t(id, category, amount)"))
    for batch in (False, True):
        env = kafka.env(batch=batch)
        kafka.table(env, "cdc", "id INT, category STRING, amount INT", topic, format="debezium-json")
        got = [r for r in _final(env, query.format("cdc"))]
        assert got == expected, f"batch={batch}"


def e_id(event: dict[str, object]) -> int:
    image = event["after"] or event["before"]
    assert isinstance(image, dict)
    return int(image["id"])


def _final(env: TableEnvironment, sql: str) -> list[tuple[object, ...]]:
    """The final table of a (possibly updating) query: its changelog applied."""
    result = env.execute_sql(sql)
    table: dict[object, tuple[object, ...]] = {}
    for r in result.collect():
        kind = str(r.get_row_kind()) if hasattr(r, "get_row_kind") else "+I"
        key = r[0]
        if kind in ("-U", "-D", "RowKind.UPDATE_BEFORE", "RowKind.DELETE"):
            table.pop(key, None)
        else:
            table[key] = tuple(r)
    return sorted(table.values(), key=repr)


def test_canal_and_maxwell_changelogs(kafka: Kafka) -> None:
    canal = kafka.topic(1)
    kafka.send(
        canal,
        [
            {"value": {"data": [{"id": "1", "v": "10"}, {"id": "2", "v": "20"}], "type": "INSERT", "database": "d"}},
            {"value": {"data": [{"id": "1", "v": "11"}], "old": [{"v": "10"}], "type": "UPDATE", "database": "d"}},
            {"value": {"data": [{"id": "2", "v": "20"}], "type": "DELETE", "database": "d"}},
            {"value": {"type": "CREATE", "isDdl": True, "sql": "create table x", "database": "d"}},
        ],
    )
    maxwell = kafka.topic(1)
    kafka.send(
        maxwell,
        [
            {"value": {"database": "d", "table": "t", "type": "insert", "data": {"id": 1, "v": 10}}},
            {"value": {"database": "d", "table": "t", "type": "insert", "data": {"id": 2, "v": 20}}},
            {"value": {"database": "d", "table": "t", "type": "update", "data": {"id": 1, "v": 11}, "old": {"v": 10}}},
            {"value": {"database": "d", "table": "t", "type": "delete", "data": {"id": 2, "v": 20}}},
        ],
    )
    for topic, fmt in ((canal, "canal-json"), (maxwell, "maxwell-json")):
        env = kafka.env(batch=False)
        kafka.table(env, "c", "id INT, v INT", topic, format=fmt)
        changes = [(str(r.get_row_kind()), tuple(r)) for r in env.execute_sql("SELECT * FROM c").collect()]
        kinds = [k.split(".")[-1] if "." in k else k for k, _ in changes]
        assert [row for _, row in changes] == [(1, 10), (2, 20), (1, 10), (1, 11), (2, 20)], fmt
        assert len(kinds) == 5


def test_timestamp_metadata_into_a_timestamp_column_is_the_session_wall_clock(kafka: Kafka) -> None:
    """'timestamp' is TIMESTAMP_LTZ(3); a TIMESTAMP(3) column holds it cast in the session
    time zone (Flink's cast), as does a format's TIMESTAMP_LTZ metadata."""
    topic = kafka.topic(1)
    t0 = 1_700_000_000_000  # 2023-11-14 22:13:20 UTC
    event = {"before": None, "after": {"id": 1}, "op": "c", "ts_ms": t0}
    kafka.send(topic, [{"value": event, "timestamp": t0}])
    env = kafka.env(batch=False, **{"table.local-time-zone": "Asia/Shanghai"})
    kafka.table(
        env,
        "m",
        "id INT, ts TIMESTAMP(3) METADATA FROM 'timestamp', ing TIMESTAMP(3) METADATA FROM "
        "'value.ingestion-timestamp' VIRTUAL, ltz TIMESTAMP_LTZ(3) METADATA FROM 'timestamp'",
        topic,
        format="debezium-json",
    )
    got = [
        tuple(r)
        for r in env.execute_sql(
            "SELECT id, CAST(ts AS STRING), CAST(ing AS STRING), CAST(ltz AS STRING) FROM m"
        ).collect()
    ]
    assert got == [(1, "2023-11-15 06:13:20.000", "2023-11-15 06:13:20.000", "2023-11-15 06:13:20.000")]
