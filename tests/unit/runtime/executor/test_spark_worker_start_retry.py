"""Spark waits a fixed 10 s for the Python process of a transformWithState query's driver side
to connect back (no setting changes it); on an overloaded machine the query fails that way
before running anything. The Spark executor starts such a query again on its checkpoint
location (Spark's own recovery), a bounded number of times; any other failure is the job's.
Spark-free: the queries are stand-ins with Spark's StreamingQuery methods the executor uses."""

from __future__ import annotations

import queue
import threading
from typing import Any

import pytest

from runtime.executor.spark.executor import _DONE, WORKER_START_RETRIES, WORKER_START_TIMEOUTS, SparkExecutor


class _Query:
    def __init__(self, error: str | None) -> None:
        self.error = error

    def awaitTermination(self, timeout: float) -> bool:  # noqa: N802 - Spark's name
        if self.error:  # as PySpark: a failed query raises its failure here
            raise RuntimeError(self.error)
        return True

    def exception(self) -> str | None:
        return self.error

    def stop(self) -> None:
        pass


class _Writer:
    """Starts queries failing with `errors` in turn, then one that succeeds."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = list(errors)
        self.starts = 0

    def start(self) -> _Query:
        self.starts += 1
        return _Query(self.errors.pop(0) if self.errors else None)


def _await(writer: _Writer) -> list[Any]:
    ex = SparkExecutor.__new__(SparkExecutor)
    ex.stop_event = threading.Event()
    ex.queries, ex.writers = [], []
    ex._start(writer)
    out: queue.Queue[Any] = queue.Queue()
    ex._await(out)
    return [out.get_nowait() for _ in range(out.qsize())]


def test_a_query_whose_python_worker_did_not_connect_back_is_started_again() -> None:
    spark, cause = (f"[STREAM_FAILED] ... terminated with exception: {t}." for t in WORKER_START_TIMEOUTS)
    writer = _Writer([spark, cause])
    assert _await(writer) == [_DONE]
    assert writer.starts == 3


def test_retries_are_bounded_and_other_failures_are_not_retried() -> None:
    timeout = f"java.net.SocketTimeoutException: {WORKER_START_TIMEOUTS[1]}"
    writer = _Writer([timeout] * (WORKER_START_RETRIES + 1))
    first, done = _await(writer)
    assert done is _DONE and WORKER_START_TIMEOUTS[1] in str(first)
    assert writer.starts == WORKER_START_RETRIES + 1
    other = _Writer(["division by zero"])
    first, _ = _await(other)
    assert "division by zero" in str(first) and other.starts == 1


@pytest.mark.parametrize("key", ["spark.python.authenticate.socketTimeout"])
def test_the_session_waits_longer_for_worker_sockets_unless_the_user_says(key: str) -> None:
    from runtime.executor.spark.session import spark_options

    assert spark_options({})[key] == "120s"
    assert spark_options({key: "30s"})[key] == "30s"
