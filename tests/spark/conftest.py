"""Spark tests: one SparkSession for the whole test session (starting one takes seconds).

Skipped, with the reason, only when PySpark is not importable (it comes with the `test` and
`spark` extras; Java 17+ must be installed).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "conformance"))
sys.path.insert(0, str(Path(__file__).parent))

SPARK_CONF = {
    "spark.master": "local[2]",
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.driver.memory": "1g",
}


@pytest.fixture(scope="session")
def spark() -> Any:
    pytest.importorskip("pyspark", reason="PySpark is not installed: pip install 'streamsql[spark]'")
    from runtime.executor.spark.session import get_session

    session = get_session(SPARK_CONF)
    yield session
    session.stop()
