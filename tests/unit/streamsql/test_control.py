"""The per-process control server (`streamsql savepoint <job>` reaches a job through it)."""

from __future__ import annotations

from pathlib import Path

from streamsql import EnvironmentSettings, TableEnvironment
from streamsql.control import find_job, register_job, unregister_job


def _running_job(name: str) -> object:
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.execute_sql(f"CREATE TABLE {name}_src (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '1')")
    env.execute_sql(f"CREATE TABLE {name}_out (id BIGINT) WITH ('connector' = 'blackhole')")
    job = env.execute_sql(f"INSERT INTO {name}_out SELECT id FROM {name}_src").job
    assert job is not None
    return job


def test_each_job_is_listed_in_its_own_configured_directory(tmp_path: Path) -> None:
    """The server is one per process, but the jobs directory is per job: the first
    registration's directory used to take every later job, so a job registered with another
    `streamsql.jobs.dir` could not be found there."""
    first, second = _running_job("a"), _running_job("b")
    dirs = (tmp_path / "one", tmp_path / "two")
    try:
        for job, d in zip((first, second), dirs, strict=True):
            register_job(job, {"streamsql.jobs.dir": str(d)})
        for job, d in zip((first, second), dirs, strict=True):
            assert find_job(d, job.get_job_id()).job_id == job.get_job_id()  # type: ignore[attr-defined]
            assert len(list(d.glob("*.json"))) == 1
    finally:
        for job in (first, second):
            unregister_job(job.get_job_id())  # type: ignore[attr-defined]
            job.cancel()  # type: ignore[attr-defined]
