"""TableResult.get_job_client(): job id, status, cancel, savepoints (Table API jobs)."""

from __future__ import annotations

import time
from pathlib import Path

from streamsql import EnvironmentSettings, TableEnvironment
from streamsql.common import JobStatus
from streamsql.expressions import col

DDL = """
CREATE TABLE src (k INT, v BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '500',
  'fields.k.min' = '1', 'fields.k.max' = '3');
CREATE TABLE snk (k INT, s BIGINT) WITH ('connector' = 'blackhole');
"""


def _env(tmp_path: Path) -> TableEnvironment:
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("execution.checkpointing.dir", str(tmp_path / "chk"))
    for stmt in DDL.strip().split(";"):
        if stmt.strip():
            env.execute_sql(stmt)
    return env


def _wait(pred, timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.05)


def test_job_client_status_savepoint_and_stop(tmp_path: Path) -> None:
    env = _env(tmp_path)
    table = env.from_path("src").group_by(col("k")).select(col("k"), col("v").sum.alias("s"))
    result = table.execute_insert("snk")
    client = result.get_job_client()
    assert client is not None
    assert str(client.get_job_id()) and client.get_job_status().result() == JobStatus.RUNNING
    sp = client.trigger_savepoint(str(tmp_path / "sp1")).result()
    assert Path(sp, "_metadata").is_file()
    assert client.get_job_status().result() == JobStatus.RUNNING
    final = client.stop_with_savepoint(False, str(tmp_path / "sp2")).result()
    assert Path(final, "_metadata").is_file() and final != sp
    _wait(lambda: not client.is_running())
    assert client.get_job_status().result() in (JobStatus.CANCELED, JobStatus.FINISHED)
    assert client.get_job_status().result().is_globally_terminal_state()


def test_job_client_cancel(tmp_path: Path) -> None:
    env = _env(tmp_path)
    result = env.from_path("src").execute_insert("snk")
    client = result.get_job_client()
    assert client is not None and client.get_job_status().result() == JobStatus.RUNNING
    client.cancel().result()
    _wait(lambda: not client.is_running())
    assert client.get_job_status().result() == JobStatus.CANCELED
    other = env.execute_sql("INSERT INTO snk SELECT k, v FROM src").job
    assert other is not None and other.get_job_id() != client.get_job_id()
    other.cancel()
    other.join(10)


def test_bounded_query_result_has_no_savepoint_after_finishing(tmp_path: Path) -> None:
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.execute_sql("CREATE TABLE b (x BIGINT) WITH ('connector' = 'blackhole')")
    client = env.from_elements([(1,), (2,)], ["x"]).execute_insert("b").get_job_client()
    assert client is not None
    result = client.get_job_execution_result().result()
    assert result.get_job_id() == client.get_job_id() and result.get_net_runtime() >= 0
    assert client.get_job_status().result() == JobStatus.FINISHED
    try:
        client.stop_with_savepoint(False, str(tmp_path / "sp")).result()
    except RuntimeError as e:
        assert "not running" in str(e)
    else:
        raise AssertionError("a finished job cannot take a savepoint")
