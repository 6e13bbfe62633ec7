"""Helpers of the Kafka connector tests: producing records to the session's tansu broker
and running SQL over a `kafka` table."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import pytest

from streamsql import EnvironmentSettings, TableEnvironment


class Kafka:
    """The broker plus helpers: `topic(partitions)`, `send(topic, records)`, `env()`."""

    def __init__(self, broker: Any) -> None:
        self.broker = broker
        self.bootstrap = broker.bootstrap

    def topic(self, partitions: int = 1, prefix: str = "src") -> str:
        return str(self.broker.new_topic(prefix, partitions))

    def send(self, topic: str, records: Iterable[dict[str, Any]]) -> None:
        """Each record: value (dict → JSON, bytes/str as is, None = tombstone), and
        optionally key, partition, timestamp (ms), headers."""
        from confluent_kafka import Producer

        p = Producer({"bootstrap.servers": self.bootstrap, "linger.ms": 5})
        for r in records:
            value = r.get("value")
            if isinstance(value, dict):
                value = json.dumps(value).encode()
            elif isinstance(value, str):
                value = value.encode()
            key = r.get("key")
            if isinstance(key, dict):
                key = json.dumps(key).encode()
            elif isinstance(key, str):
                key = key.encode()
            kwargs: dict[str, Any] = {"value": value, "key": key}
            for k in ("partition", "timestamp", "headers"):
                if r.get(k) is not None:
                    kwargs[k] = r[k]
            p.produce(topic, **kwargs)
        assert p.flush(30) == 0

    def env(self, batch: bool = True, **conf: str) -> TableEnvironment:
        env = TableEnvironment.create(
            EnvironmentSettings.in_batch_mode() if batch else EnvironmentSettings.in_streaming_mode()
        )
        for k, v in conf.items():
            env.get_config().set(k, v)
        return env

    def table(self, env: TableEnvironment, name: str, columns: str, topic: str, **options: str) -> None:
        opts = {
            "connector": "kafka",
            "topic": topic,
            "properties.bootstrap.servers": self.bootstrap,
            "scan.startup.mode": "earliest-offset",
            "scan.bounded.mode": "latest-offset",
            "format": "json",
        }
        opts.update({k.replace("_", "."): v for k, v in options.items()})
        opts = {k: v for k, v in opts.items() if v is not None}
        with_ = ", ".join(f"'{k}' = '{v}'" for k, v in opts.items())
        env.execute_sql(f"CREATE TABLE {name} ({columns}) WITH ({with_})")


def read_source(
    kafka: Kafka, topic: str, options: dict[str, str], columns: tuple[Any, ...] | None = None, upsert: bool = False
) -> Any:
    """A KafkaSource over `topic` (JSON values, earliest to latest offsets) for reader-level tests."""
    from runtime.connectors.base import SourceContext
    from runtime.connectors.kafka.source import KafkaSource
    from runtime.types import INT, Field

    opts = {
        "connector": "kafka",
        "topic": topic,
        "properties.bootstrap.servers": kafka.bootstrap,
        "scan.startup.mode": "earliest-offset",
        "scan.bounded.mode": "latest-offset",
        "format": "json",
        **options,
    }
    schema = columns or (Field("id", INT()),)
    if upsert:
        del opts["format"], opts["scan.startup.mode"]
    return KafkaSource(opts, schema, None, SourceContext("STREAMING"), upsert=upsert)


def rows(env: TableEnvironment, sql: str) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in env.execute_sql(sql).collect()), key=repr)


@pytest.fixture
def kafka(kafka_broker: Any) -> Kafka:
    return Kafka(kafka_broker)
