"""The examples of Flink 2.3's Kafka pages, run against the session's tansu broker: the
connector pages (flink-connector-kafka's kafka.md and upsert-kafka.md) and the format pages
used with them (json, raw, avro, avro-confluent, debezium, canal, maxwell, ogg). Each test
runs a page's `CREATE TABLE` as written, on records shaped as the page shows them, and checks
the rows Flink gives for them.

Where the tests depart from the pages, and why:
- 'properties.bootstrap.servers' names the test broker and 'topic' a fresh topic (`ddl`);
- the pages' tables are unbounded (Flink's SQL client shows a result that never ends): the
  tests read them with 'scan.bounded.mode' = 'latest-offset' added, so a query ends;
- the pages elide options as `...`: the connector's required ones stand in;
- a page's table without 'scan.startup.mode' starts at the consumer group's committed offsets,
  which a fresh group lacks (Flink then fails: no 'auto.offset.reset'): 'earliest-offset' is added;
- the upsert-kafka page's `pageviews` declares `viewtime TIMESTAMP` (precision 6) as its rowtime,
  which Flink refuses (0 to 3): the test checks that error, then uses TIMESTAMP(3);
- the Maxwell page's sample message has a trailing comma (`"old":{"weight":5.18,}`), which
  Jackson (and so Flink) refuses: the test sends it without.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

import pytest

from streamsql import EnvironmentSettings, TableEnvironment

pytestmark = pytest.mark.usefixtures("kafka_broker")


class Docs:
    """The broker, fresh topics, and a page's DDL made runnable here."""

    def __init__(self, broker: Any) -> None:
        self.broker = broker

    def topic(self, partitions: int = 1) -> str:
        return str(self.broker.new_topic("docs", partitions))

    def send(self, topic: str, records: list[dict[str, Any]]) -> None:
        from confluent_kafka import Producer

        p = Producer({"bootstrap.servers": self.broker.bootstrap, "linger.ms": 5})
        for r in records:
            value, key = r.get("value"), r.get("key")
            value = json.dumps(value).encode() if isinstance(value, dict | list) else value
            value = value.encode() if isinstance(value, str) else value
            key = json.dumps(key).encode() if isinstance(key, dict) else key
            extra = {k: r[k] for k in ("partition", "timestamp") if k in r}
            p.produce(topic, value=value, key=key, **extra)
        assert p.flush(30) == 0

    def ddl(self, text: str, topic: str, bounded: bool = True) -> str:
        """The page's DDL on the test broker and `topic`; read to the topic's end."""
        text = re.sub(
            r"'properties\.bootstrap\.servers' = '[^']*'",
            f"'properties.bootstrap.servers' = '{self.broker.bootstrap}'",
            text,
        )
        text = re.sub(r"'topic' = '[^']*'", f"'topic' = '{topic}'", text)
        if bounded:
            text = text.replace(
                "'connector' = 'kafka',", "'connector' = 'kafka', 'scan.bounded.mode' = 'latest-offset',"
            )
            text = text.replace(
                "'connector' = 'upsert-kafka',", "'connector' = 'upsert-kafka', 'scan.bounded.mode' = 'latest-offset',"
            )
        return text

    def elided(self, text: str) -> str:
        """A DDL whose page writes `...` for the connector's required options."""
        return text.replace("...", f"'topic' = 'x', 'properties.bootstrap.servers' = '{self.broker.bootstrap}',")


@pytest.fixture
def docs(kafka_broker: Any) -> Docs:
    return Docs(kafka_broker)


def streaming() -> TableEnvironment:
    return TableEnvironment.create(EnvironmentSettings.in_streaming_mode())


def batch() -> TableEnvironment:
    return TableEnvironment.create(EnvironmentSettings.in_batch_mode())


def rows(env: TableEnvironment, sql: str) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in env.execute_sql(sql).collect()), key=repr)


def changes(env: TableEnvironment, sql: str) -> list[tuple[str, tuple[Any, ...]]]:
    """(row kind, row) in arrival order."""
    return [(r.get_row_kind().short_string(), tuple(r)) for r in env.execute_sql(sql).collect()]


def final(env: TableEnvironment, sql: str) -> list[tuple[Any, ...]]:
    """The last row per first column of an updating query."""
    table: dict[Any, tuple[Any, ...]] = {}
    for kind, row in changes(env, sql):
        if kind in ("-U", "-D"):
            table.pop(row[0], None)
        else:
            table[row[0]] = row
    return sorted(table.values(), key=repr)


def ms(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp() * 1000)


def ts(text: str) -> datetime:
    return datetime.fromisoformat(text)


# ---------------------------------------------------------------------- kafka.md
def test_how_to_create_a_kafka_table(docs: Docs) -> None:
    topic = docs.topic()
    docs.send(
        topic,
        [
            {"value": "1,10,pv", "timestamp": ms("2024-01-01 00:00:01")},
            {"value": "2,20,buy", "timestamp": ms("2024-01-01 00:00:02")},
        ],
    )
    env = batch()
    env.execute_sql(
        docs.ddl(
            """CREATE TABLE KafkaTable (
  `user_id` BIGINT,
  `item_id` BIGINT,
  `behavior` STRING,
  `ts` TIMESTAMP_LTZ(3) METADATA FROM 'timestamp'
) WITH (
  'connector' = 'kafka',
  'topic' = 'user_behavior',
  'properties.bootstrap.servers' = 'localhost:9092',
  'properties.group.id' = 'testGroup',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'csv'
)""",
            topic,
        )
    )
    assert rows(env, "SELECT user_id, item_id, behavior, CAST(ts AS STRING) FROM KafkaTable") == [
        (1, 10, "pv", "2024-01-01 00:00:01.000"),
        (2, 20, "buy", "2024-01-01 00:00:02.000"),
    ]


def test_available_metadata_example(docs: Docs) -> None:
    topic = docs.topic(2)
    t0 = ms("2024-01-01 00:00:00")
    docs.send(topic, [{"value": f"{i},{i * 10},pv", "partition": i % 2, "timestamp": t0 + i} for i in range(4)])
    env = batch()
    env.execute_sql(
        docs.ddl(
            """CREATE TABLE KafkaTable (
  `event_time` TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',
  `partition` BIGINT METADATA VIRTUAL,
  `offset` BIGINT METADATA VIRTUAL,
  `user_id` BIGINT,
  `item_id` BIGINT,
  `behavior` STRING
) WITH (
  'connector' = 'kafka',
  'topic' = 'user_behavior',
  'properties.bootstrap.servers' = 'localhost:9092',
  'properties.group.id' = 'testGroup',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'csv'
);""",
            topic,
        ).rstrip(";")
    )
    got = rows(
        env, "SELECT CAST(event_time AS STRING), `partition`, `offset`, user_id, item_id, behavior FROM KafkaTable"
    )
    assert got == [(f"2024-01-01 00:00:00.00{i}", i % 2, i // 2, i, i * 10, "pv") for i in range(4)]


def test_format_metadata_example(docs: Docs) -> None:
    """Kafka's and Debezium's metadata together."""
    topic = docs.topic()
    event = {
        "before": None,
        "after": {"user_id": 1, "item_id": 2, "behavior": "buy"},
        "source": {"ts_ms": ms("2024-01-01 00:00:05"), "db": "shop", "table": "user_behavior"},
        "op": "c",
        "ts_ms": ms("2024-01-01 00:00:06"),
    }
    docs.send(topic, [{"value": event}])
    env = streaming()
    env.execute_sql(
        docs.ddl(
            """CREATE TABLE KafkaTable (
  `event_time` TIMESTAMP_LTZ(3) METADATA FROM 'value.source.timestamp' VIRTUAL,  -- from Debezium format
  `origin_table` STRING METADATA FROM 'value.source.table' VIRTUAL, -- from Debezium format
  `partition_id` BIGINT METADATA FROM 'partition' VIRTUAL,  -- from Kafka connector
  `offset` BIGINT METADATA VIRTUAL,  -- from Kafka connector
  `user_id` BIGINT,
  `item_id` BIGINT,
  `behavior` STRING
) WITH (
  'connector' = 'kafka',
  'topic' = 'user_behavior',
  'properties.bootstrap.servers' = 'localhost:9092',
  'properties.group.id' = 'testGroup',
  'scan.startup.mode' = 'earliest-offset',
  'value.format' = 'debezium-json'
)""",
            topic,
        )
    )
    got = changes(
        env,
        "SELECT CAST(event_time AS STRING), origin_table, partition_id, `offset`, user_id, item_id, behavior FROM KafkaTable",
    )
    assert got == [("+I", ("2024-01-01 00:00:05.000", "user_behavior", 0, 0, 1, 2, "buy"))]


def test_value_format_example_skips_a_bad_record(docs: Docs) -> None:
    topic = docs.topic()
    docs.send(
        topic,
        [
            {"value": {"user_id": 1, "item_id": 2, "behavior": "pv"}, "timestamp": ms("2024-01-01 00:00:00")},
            {"value": "{not json"},
        ],
    )
    env = batch()
    env.execute_sql(
        docs.ddl(
            docs.elided("""CREATE TABLE KafkaTable (
  `ts` TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',
  `user_id` BIGINT,
  `item_id` BIGINT,
  `behavior` STRING
) WITH (
  'connector' = 'kafka',
  ...

  'format' = 'json',
  'json.ignore-parse-errors' = 'true'
)"""),
            topic,
        ).replace("'scan.bounded.mode'", "'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode'")
    )
    assert rows(env, "SELECT CAST(ts AS STRING), user_id, item_id, behavior FROM KafkaTable") == [
        ("2024-01-01 00:00:00.000", 1, 2, "pv")
    ]


def _earliest(text: str) -> str:
    return text.replace("'scan.bounded.mode'", "'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode'")


def test_key_and_value_format_example(docs: Docs) -> None:
    """'value.fields-include' = 'ALL': the key columns are in the value too (and read from it)."""
    topic = docs.topic()
    docs.send(topic, [{"key": {"user_id": 1, "item_id": 2}, "value": {"user_id": 1, "item_id": 2, "behavior": "pv"}}])
    env = batch()
    env.execute_sql(
        _earliest(
            docs.ddl(
                docs.elided("""CREATE TABLE KafkaTable (
  `ts` TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',
  `user_id` BIGINT,
  `item_id` BIGINT,
  `behavior` STRING
) WITH (
  'connector' = 'kafka',
  ...

  'key.format' = 'json',
  'key.json.ignore-parse-errors' = 'true',
  'key.fields' = 'user_id;item_id',

  'value.format' = 'json',
  'value.json.fail-on-missing-field' = 'false',
  'value.fields-include' = 'ALL'
)"""),
                topic,
            )
        )
    )
    assert rows(env, "SELECT user_id, item_id, behavior FROM KafkaTable") == [(1, 2, "pv")]
    # written: the key holds ROW<user_id, item_id>, the value every physical column
    out = docs.topic()
    env.execute_sql(
        docs.ddl(
            docs.elided("""CREATE TABLE KafkaOut (
  `user_id` BIGINT,
  `item_id` BIGINT,
  `behavior` STRING
) WITH (
  'connector' = 'kafka',
  ...
  'key.format' = 'json',
  'key.fields' = 'user_id;item_id',
  'value.format' = 'json',
  'value.fields-include' = 'ALL'
)"""),
            out,
            bounded=False,
        )
    ).wait()
    env.execute_sql("INSERT INTO KafkaOut VALUES (7, 8, 'cart')").wait()
    (record,) = docs.broker.read(out)
    assert json.loads(record.key()) == {"user_id": 7, "item_id": 8}
    assert json.loads(record.value()) == {"user_id": 7, "item_id": 8, "behavior": "cart"}


def test_overlapping_format_fields_example(docs: Docs) -> None:
    topic = docs.topic()
    docs.send(topic, [{"key": {"version": 1, "user_id": 2, "item_id": 3}, "value": {"version": 9, "behavior": "pv"}}])
    env = batch()
    env.execute_sql(
        _earliest(
            docs.ddl(
                docs.elided("""CREATE TABLE KafkaTable (
  `k_version` INT,
  `k_user_id` BIGINT,
  `k_item_id` BIGINT,
  `version` INT,
  `behavior` STRING
) WITH (
  'connector' = 'kafka',
  ...

  'key.format' = 'json',
  'key.fields-prefix' = 'k_',
  'key.fields' = 'k_version;k_user_id;k_item_id',

  'value.format' = 'json',
  'value.fields-include' = 'EXCEPT_KEY'
)"""),
                topic,
            )
        )
    )
    assert rows(env, "SELECT * FROM KafkaTable") == [(1, 2, 3, 9, "pv")]


def test_security_examples(docs: Docs) -> None:
    """SASL/PLAIN's JAAS settings become librdkafka's user name and password; the SASL_SSL
    example's Java truststore fails at planning, saying what librdkafka takes instead."""
    from runtime.connectors.kafka.source import client_config

    plain = """CREATE TABLE KafkaTable (
  `user_id` BIGINT,
  `item_id` BIGINT,
  `behavior` STRING,
  `ts` TIMESTAMP_LTZ(3) METADATA FROM 'timestamp'
) WITH (
  'connector' = 'kafka',
  ...
  'properties.security.protocol' = 'SASL_PLAINTEXT',
  'properties.sasl.mechanism' = 'PLAIN',
  'properties.sasl.jaas.config' = 'org.apache.kafka.common.security.plain.PlainLoginModule required username=\\"username\\" password=\\"password\\";'
, 'format' = 'json')"""
    env = streaming()
    # (the page's `...` elides the startup mode too: without 'properties.group.id' the default
    # 'group-offsets' is refused, as Flink does)
    plain = plain.replace("\n, 'format'", ", 'scan.startup.mode' = 'earliest-offset', 'format'")
    env.execute_sql(docs.elided(plain))
    assert "TableSourceScan" in env.explain_sql("SELECT * FROM KafkaTable")
    conf = client_config(
        {
            "properties.security.protocol": "SASL_PLAINTEXT",
            "properties.sasl.mechanism": "PLAIN",
            "properties.sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required username=\\"username\\" password=\\"password\\";',
        }
    )
    assert conf == {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "PLAIN",
        "sasl.username": "username",
        "sasl.password": "password",
    }
    ssl = """CREATE TABLE KafkaTable2 (
  `user_id` BIGINT
) WITH (
  'connector' = 'kafka',
  ...
  'properties.security.protocol' = 'SASL_SSL',
  /* SSL configurations */
  /* Configure the path of truststore (CA) provided by the server */
  'properties.ssl.truststore.location' = '/path/to/kafka.client.truststore.jks',
  'properties.ssl.truststore.password' = 'test1234',
  /* Configure the path of keystore (private key) if client authentication is required */
  'properties.ssl.keystore.location' = '/path/to/kafka.client.keystore.jks',
  'properties.ssl.keystore.password' = 'test1234',
  /* SASL configurations */
  /* Set SASL mechanism as SCRAM-SHA-256 */
  'properties.sasl.mechanism' = 'SCRAM-SHA-256',
  /* Set JAAS configurations */
  'properties.sasl.jaas.config' = 'org.apache.kafka.common.security.scram.ScramLoginModule required username=\\"username\\" password=\\"password\\";',
  'format' = 'json'
)"""
    env.execute_sql(docs.elided(ssl))
    with pytest.raises(Exception, match=r"properties\.ssl\.truststore\.location.*properties\.ssl\.ca\.location"):
        env.explain_sql("SELECT * FROM KafkaTable2")


# ---------------------------------------------------------------------- upsert-kafka.md
def test_upsert_kafka_full_example(docs: Docs) -> None:
    """pageviews (json) → COUNT(*) / COUNT(DISTINCT) per region → an upsert-kafka table
    with Avro key and value; read back, its last row per region is the result."""
    views, per_region = docs.topic(), docs.topic()
    docs.send(
        views,
        [
            {"value": {"user_id": u, "page_id": p, "viewtime": f"2024-01-01 00:00:0{i}", "user_region": r}}
            for i, (u, p, r) in enumerate([(1, 10, "eu"), (1, 11, "eu"), (2, 10, "eu"), (3, 12, "us")])
        ],
    )
    env = streaming()
    env.execute_sql(
        docs.ddl(
            """CREATE TABLE pageviews_per_region (
  user_region STRING,
  pv BIGINT,
  uv BIGINT,
  PRIMARY KEY (user_region) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = 'pageviews_per_region',
  'properties.bootstrap.servers' = '...',
  'key.format' = 'avro',
  'value.format' = 'avro'
)""",
            per_region,
        )
    )
    pageviews = _earliest(
        docs.ddl(
            """CREATE TABLE pageviews (
  user_id BIGINT,
  page_id BIGINT,
  viewtime TIMESTAMP,
  user_region STRING,
  WATERMARK FOR viewtime AS viewtime - INTERVAL '2' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = 'pageviews',
  'properties.bootstrap.servers' = '...',
  'format' = 'json'
)""",
            views,
        )
    )
    # As written, the page's `pageviews` fails in Flink too: TIMESTAMP is TIMESTAMP(6), and a
    # rowtime attribute takes a precision of 0 to 3. The test goes on with TIMESTAMP(3).
    with pytest.raises(Exception, match=r"precision 'p' is from 0 to 3, but the time field type is TIMESTAMP\(6\)"):
        env.execute_sql(pageviews)
    env.execute_sql(pageviews.replace("viewtime TIMESTAMP,", "viewtime TIMESTAMP(3),"))
    env.execute_sql("""INSERT INTO pageviews_per_region
SELECT
  user_region,
  COUNT(*),
  COUNT(DISTINCT user_id)
FROM pageviews
GROUP BY user_region""").wait()
    assert final(streaming_with(docs, per_region), "SELECT * FROM pageviews_per_region") == [("eu", 3, 2), ("us", 1, 1)]


def streaming_with(docs: Docs, topic: str) -> TableEnvironment:
    env = streaming()
    env.execute_sql(
        docs.ddl(
            """CREATE TABLE pageviews_per_region (
  user_region STRING,
  pv BIGINT,
  uv BIGINT,
  PRIMARY KEY (user_region) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = 'pageviews_per_region',
  'properties.bootstrap.servers' = '...',
  'key.format' = 'avro',
  'value.format' = 'avro'
)""",
            topic,
        )
    )
    return env


def test_upsert_kafka_key_and_value_formats_example(docs: Docs) -> None:
    topic = docs.topic()
    env = streaming()
    env.execute_sql(
        docs.ddl(
            docs.elided("""CREATE TABLE KafkaTable (
  `ts` TIMESTAMP(3) METADATA FROM 'timestamp',
  `user_id` BIGINT,
  `item_id` BIGINT,
  `behavior` STRING,
  PRIMARY KEY (`user_id`) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  ...

  'key.format' = 'json',
  'key.json.ignore-parse-errors' = 'true',

  'value.format' = 'json',
  'value.json.fail-on-missing-field' = 'false',
  'value.fields-include' = 'EXCEPT_KEY'
)"""),
            topic,
        )
    )
    env.execute_sql(
        "INSERT INTO KafkaTable VALUES (TIMESTAMP '2024-01-01 00:00:01', 1, 10, 'pv'), "
        "(TIMESTAMP '2024-01-01 00:00:02', 1, 11, 'buy'), (TIMESTAMP '2024-01-01 00:00:03', 2, 20, 'pv')"
    ).wait()
    records = docs.broker.read(topic)
    assert [json.loads(r.key()) for r in records] == [{"user_id": 1}, {"user_id": 1}, {"user_id": 2}]
    assert json.loads(records[1].value()) == {"item_id": 11, "behavior": "buy"}
    assert records[1].timestamp()[1] == ms("2024-01-01 00:00:02")
    got = final(env, "SELECT user_id, item_id, behavior, CAST(ts AS STRING) FROM KafkaTable")
    assert got == [(1, 11, "buy", "2024-01-01 00:00:02.000"), (2, 20, "pv", "2024-01-01 00:00:03.000")]


# ---------------------------------------------------------------------- formats
def test_json_page_example_and_top_level_arrays(docs: Docs) -> None:
    topic = docs.topic()
    docs.send(
        topic,
        [
            {
                "value": {
                    "user_id": 1,
                    "item_id": 2,
                    "category_id": 3,
                    "behavior": "pv",
                    "ts": "2020-12-30 12:13:14.123",
                }
            },
            {"value": {"user_id": 4, "behavior": "buy"}},  # missing fields are NULL
            {"value": "not json"},  # skipped ('json.ignore-parse-errors')
        ],
    )
    env = batch()
    env.execute_sql(
        _earliest(
            docs.ddl(
                """CREATE TABLE user_behavior (
  user_id BIGINT,
  item_id BIGINT,
  category_id BIGINT,
  behavior STRING,
  ts TIMESTAMP(3)
) WITH (
 'connector' = 'kafka',
 'topic' = 'user_behavior',
 'properties.bootstrap.servers' = 'localhost:9092',
 'properties.group.id' = 'testGroup',
 'format' = 'json',
 'json.fail-on-missing-field' = 'false',
 'json.ignore-parse-errors' = 'true'
)""",
                topic,
            )
        )
    )
    assert rows(env, "SELECT * FROM user_behavior") == [
        (1, 2, 3, "pv", ts("2020-12-30 12:13:14.123")),
        (4, None, None, "buy", None),
    ]
    # "Allow top-level JSON Arrays": one record holding an array gives a row per element
    arrays = docs.topic()
    docs.send(arrays, [{"value": '[{"col1": 123, "col2": "a"}, {"col1": 456, "col2": "b"}]'}])
    env.execute_sql(
        _earliest(
            docs.ddl(
                docs.elided("""CREATE TABLE user_behavior2 (
  col1 BIGINT,
  col2 VARCHAR
) WITH (
 'connector' = 'kafka',
 ...
 'format' = 'json'
)"""),
                arrays,
            )
        )
    )
    assert rows(env, "SELECT * FROM user_behavior2") == [(123, "a"), (456, "b")]


def test_raw_and_avro_pages(docs: Docs) -> None:
    """raw.md: an nginx log line per record, read as one STRING; avro.md: a table written
    and read back with the 'avro' format."""
    logs = docs.topic()
    line = '127.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326'
    docs.send(logs, [{"value": line}])
    env = batch()
    env.execute_sql(
        _earliest(
            docs.ddl(
                """CREATE TABLE nginx_log (
  log STRING
) WITH (
  'connector' = 'kafka',
  'topic' = 'nginx_log',
  'properties.bootstrap.servers' = 'localhost:9092',
  'properties.group.id' = 'testGroup',
  'format' = 'raw'
)""",
                logs,
            )
        )
    )
    assert rows(env, "SELECT * FROM nginx_log") == [(line,)]
    avro = docs.topic()
    ddl = docs.ddl(
        """CREATE TABLE user_behavior (
  user_id BIGINT,
  item_id BIGINT,
  category_id BIGINT,
  behavior STRING,
  ts TIMESTAMP(3)
) WITH (
 'connector' = 'kafka',
 'topic' = 'user_behavior',
 'properties.bootstrap.servers' = 'localhost:9092',
 'properties.group.id' = 'testGroup',
 'format' = 'avro'
)""",
        avro,
    )
    env.execute_sql(_earliest(ddl))
    env.execute_sql("INSERT INTO user_behavior VALUES (1, 2, 3, 'pv', TIMESTAMP '2020-12-30 12:13:14.123')").wait()
    assert rows(env, "SELECT * FROM user_behavior") == [(1, 2, 3, "pv", ts("2020-12-30 12:13:14.123"))]


def test_avro_confluent_is_refused_with_the_reason(docs: Docs) -> None:
    env = streaming()
    env.execute_sql("""CREATE TABLE topic_products (
  id BIGINT,
  name STRING,
  description STRING,
  weight DECIMAL(10, 2)
) WITH (
 'connector' = 'kafka',
 'topic' = 'products_binlog',
 'properties.bootstrap.servers' = 'localhost:9092',
 'properties.group.id' = 'testGroup',
 -- using 'debezium-avro-confluent' as the format to interpret Debezium Avro messages
 'format' = 'debezium-avro-confluent',
 -- the URL to the schema registry for Kafka
 'debezium-avro-confluent.url' = 'http://localhost:8081'
)""")
    with pytest.raises(
        Exception, match="(?s)'debezium-avro-confluent'.*not supported.*Schema Registry.*'debezium-json'"
    ):
        env.explain_sql("SELECT * FROM topic_products")


_PRODUCTS = """CREATE TABLE topic_products (
  -- schema is totally the same to the MySQL "products" table
  id BIGINT,
  name STRING,
  description STRING,
  weight DECIMAL(10, 2)
) WITH (
 'connector' = 'kafka',
 'topic' = 'products_binlog',
 'properties.bootstrap.servers' = 'localhost:9092',
 'properties.group.id' = 'testGroup',
 'format' = '{fmt}'{extra}
)"""
_SCOOTER = {"id": 111, "name": "scooter", "description": "Big 2-wheel scooter"}


def _products(docs: Docs, fmt: str, records: list[dict[str, Any]], extra: str = "") -> TableEnvironment:
    topic = docs.topic()
    docs.send(topic, records)
    env = streaming()
    env.execute_sql(_earliest(docs.ddl(_PRODUCTS.replace("{fmt}", fmt).replace("{extra}", extra), topic)))
    return env


def test_debezium_page(docs: Docs) -> None:
    from decimal import Decimal

    insert = {"before": None, "after": {**_SCOOTER, "weight": 5.18}, "op": "c", "ts_ms": 1589362330000}
    update = {
        "before": {**_SCOOTER, "weight": 5.18},
        "after": {**_SCOOTER, "weight": 5.15},
        "source": {},
        "op": "u",
        "ts_ms": 1589362330904,
        "transaction": None,
    }
    env = _products(docs, "debezium-json", [{"value": insert}, {"value": update}])
    assert changes(env, "SELECT * FROM topic_products") == [
        ("+I", (111, "scooter", "Big 2-wheel scooter", Decimal("5.18"))),
        ("-U", (111, "scooter", "Big 2-wheel scooter", Decimal("5.18"))),
        ("+U", (111, "scooter", "Big 2-wheel scooter", Decimal("5.15"))),
    ]
    assert final(env, "SELECT name, AVG(weight) FROM topic_products GROUP BY name") == [("scooter", Decimal("5.15"))]
    # 'debezium-json.schema-include': the events wrapped in {"schema", "payload"}
    wrapped = [{"value": {"schema": {"type": "struct"}, "payload": e}} for e in (insert, update)]
    env = _products(docs, "debezium-json", wrapped, ",\n 'debezium-json.schema-include' = 'true'")
    assert final(env, "SELECT name, AVG(weight) FROM topic_products GROUP BY name") == [("scooter", Decimal("5.15"))]


def test_debezium_metadata_example(docs: Docs) -> None:
    topic = docs.topic()
    source = {
        "ts_ms": ms("2024-01-01 00:00:01"),
        "db": "inventory",
        "schema": "public",
        "table": "user_behavior",
        "snapshot": False,
    }
    docs.send(
        topic,
        [
            {
                "value": {
                    "before": None,
                    "after": {"user_id": 1, "item_id": 2, "behavior": "pv"},
                    "source": source,
                    "op": "c",
                    "ts_ms": ms("2024-01-01 00:00:02"),
                }
            }
        ],
    )
    env = streaming()
    env.execute_sql(
        docs.ddl(
            """CREATE TABLE KafkaTable (
  origin_ts TIMESTAMP(3) METADATA FROM 'value.ingestion-timestamp' VIRTUAL,
  event_time TIMESTAMP(3) METADATA FROM 'value.source.timestamp' VIRTUAL,
  origin_database STRING METADATA FROM 'value.source.database' VIRTUAL,
  origin_schema STRING METADATA FROM 'value.source.schema' VIRTUAL,
  origin_table STRING METADATA FROM 'value.source.table' VIRTUAL,
  origin_properties MAP<STRING, STRING> METADATA FROM 'value.source.properties' VIRTUAL,
  user_id BIGINT,
  item_id BIGINT,
  behavior STRING
) WITH (
  'connector' = 'kafka',
  'topic' = 'user_behavior',
  'properties.bootstrap.servers' = 'localhost:9092',
  'properties.group.id' = 'testGroup',
  'scan.startup.mode' = 'earliest-offset',
  'value.format' = 'debezium-json'
)""",
            topic,
        )
    )
    ((kind, row),) = changes(env, "SELECT * FROM KafkaTable")
    assert kind == "+I"
    assert row[:5] == (ts("2024-01-01 00:00:02"), ts("2024-01-01 00:00:01"), "inventory", "public", "user_behavior")
    assert dict(row[5]) == {
        "ts_ms": str(source["ts_ms"]),
        "db": "inventory",
        "schema": "public",
        "table": "user_behavior",
        "snapshot": "false",
    }
    assert row[6:] == (1, 2, "pv")


def test_canal_page(docs: Docs) -> None:
    from decimal import Decimal

    message = {
        "data": [{"id": "111", "name": "scooter", "description": "Big 2-wheel scooter", "weight": "5.18"}],
        "database": "inventory",
        "es": 1589373560000,
        "id": 9,
        "isDdl": False,
        "mysqlType": {"id": "INTEGER", "name": "VARCHAR(255)", "description": "VARCHAR(512)", "weight": "FLOAT"},
        "old": [{"weight": "5.15"}],
        "pkNames": ["id"],
        "sql": "",
        "sqlType": {"id": 4, "name": 12, "description": 12, "weight": 7},
        "table": "products",
        "ts": 1589373560798,
        "type": "UPDATE",
    }
    env = _products(docs, "canal-json", [{"value": message}])
    assert changes(env, "SELECT * FROM topic_products") == [
        ("-U", (111, "scooter", "Big 2-wheel scooter", Decimal("5.15"))),
        ("+U", (111, "scooter", "Big 2-wheel scooter", Decimal("5.18"))),
    ]
    topic = docs.topic()
    docs.send(
        topic,
        [
            {
                "value": {
                    **message,
                    "data": [{"user_id": 1, "item_id": 2, "behavior": "pv"}],
                    "old": None,
                    "type": "INSERT",
                }
            }
        ],
    )
    env = streaming()
    env.execute_sql(
        docs.ddl(
            """CREATE TABLE KafkaTable (
  origin_database STRING METADATA FROM 'value.database' VIRTUAL,
  origin_table STRING METADATA FROM 'value.table' VIRTUAL,
  origin_sql_type MAP<STRING, INT> METADATA FROM 'value.sql-type' VIRTUAL,
  origin_pk_names ARRAY<STRING> METADATA FROM 'value.pk-names' VIRTUAL,
  origin_ts TIMESTAMP(3) METADATA FROM 'value.ingestion-timestamp' VIRTUAL,
  user_id BIGINT,
  item_id BIGINT,
  behavior STRING
) WITH (
  'connector' = 'kafka',
  'topic' = 'user_behavior',
  'properties.bootstrap.servers' = 'localhost:9092',
  'properties.group.id' = 'testGroup',
  'scan.startup.mode' = 'earliest-offset',
  'value.format' = 'canal-json'
)""",
            topic,
        )
    )
    ((kind, row),) = changes(env, "SELECT * FROM KafkaTable")
    assert (kind, row[:2]) == ("+I", ("inventory", "products"))
    assert dict(row[2]) == {"id": 4, "name": 12, "description": 12, "weight": 7}
    assert row[3:] == (["id"], datetime(2020, 5, 13, 12, 39, 20, 798000), 1, 2, "pv")


def test_maxwell_page(docs: Docs) -> None:
    from decimal import Decimal

    message = {
        "database": "test",
        "table": "e",
        "type": "insert",
        "ts": 1477053217,
        "xid": 23396,
        "commit": True,
        "position": "master.000006:800911",
        "server_id": 23042,
        "thread_id": 108,
        "primary_key": [1, "2016-10-21 05:33:37.523000"],
        "primary_key_columns": ["id", "c"],
        "data": {**_SCOOTER, "weight": 5.15},
        "old": {"weight": 5.18},
    }
    env = _products(docs, "maxwell-json", [{"value": message}])
    assert changes(env, "SELECT * FROM topic_products") == [
        ("+I", (111, "scooter", "Big 2-wheel scooter", Decimal("5.15")))
    ]
    topic = docs.topic()
    docs.send(topic, [{"value": {**message, "data": {"user_id": 1, "item_id": 2, "behavior": "pv"}}}])
    env = streaming()
    env.execute_sql(
        docs.ddl(
            """CREATE TABLE KafkaTable (
  origin_database STRING METADATA FROM 'value.database' VIRTUAL,
  origin_table STRING METADATA FROM 'value.table' VIRTUAL,
  origin_primary_key_columns ARRAY<STRING> METADATA FROM 'value.primary-key-columns' VIRTUAL,
  origin_ts TIMESTAMP(3) METADATA FROM 'value.ingestion-timestamp' VIRTUAL,
  user_id BIGINT,
  item_id BIGINT,
  behavior STRING
) WITH (
  'connector' = 'kafka',
  'topic' = 'user_behavior',
  'properties.bootstrap.servers' = 'localhost:9092',
  'properties.group.id' = 'testGroup',
  'scan.startup.mode' = 'earliest-offset',
  'value.format' = 'maxwell-json'
)""",
            topic,
        )
    )
    # 'ts' is in seconds
    assert changes(env, "SELECT * FROM KafkaTable") == [
        ("+I", ("test", "e", ["id", "c"], datetime(2016, 10, 21, 12, 33, 37), 1, 2, "pv"))
    ]


def test_ogg_page(docs: Docs) -> None:
    from decimal import Decimal

    update = {
        "before": {**_SCOOTER, "weight": 5.18},
        "after": {**_SCOOTER, "weight": 5.15},
        "op_type": "U",
        "op_ts": "2020-05-13 15:40:06.000000",
        "current_ts": "2020-05-13 15:40:07.000000",
        "primary_keys": ["id"],
        "pos": "00000000000000000000143",
        "table": "PRODUCTS",
    }
    insert = {**update, "before": None, "after": {**_SCOOTER, "weight": 5.18}, "op_type": "I"}
    env = _products(docs, "ogg-json", [{"value": insert}, {"value": update}])
    assert final(env, "SELECT name, AVG(weight) FROM topic_products GROUP BY name") == [("scooter", Decimal("5.15"))]
    topic = docs.topic()
    docs.send(topic, [{"value": {**insert, "after": {"user_id": 1, "item_id": 2, "behavior": "pv"}}}])
    env = streaming()
    env.execute_sql(
        docs.ddl(
            """CREATE TABLE KafkaTable
(
    origin_ts    TIMESTAMP(3) METADATA FROM 'value.op_ts' VIRTUAL,
    event_time   TIMESTAMP(3) METADATA FROM 'value.current_ts' VIRTUAL,
    origin_table STRING METADATA FROM 'value.table' VIRTUAL,
    user_id      BIGINT,
    item_id      BIGINT,
    behavior     STRING
) WITH (
      'connector' = 'kafka',
      'topic' = 'user_behavior',
      'properties.bootstrap.servers' = 'localhost:9092',
      'properties.group.id' = 'testGroup',
      'scan.startup.mode' = 'earliest-offset',
      'value.format' = 'ogg-json'
      )""",
            topic,
        )
    )
    assert changes(env, "SELECT * FROM KafkaTable") == [
        ("+I", (ts("2020-05-13 15:40:06"), ts("2020-05-13 15:40:07"), "PRODUCTS", 1, 2, "pv"))
    ]
