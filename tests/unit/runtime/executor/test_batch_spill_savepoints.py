"""Savepoints of BATCH jobs whose operators spill (runtime/spill.py): never a silent loss.

A savepoint taken by hand in the middle of a BATCH job's input, after the join, the group
aggregation, the window aggregation or a sort wrote state to disk, is refused with an
error naming the operator and a hint (the job runs on to its end, its result whole); with
periodic checkpoints configured the operators keep their state in memory, so a savepoint
carries it and the restored job's result is the uninterrupted one."""

from __future__ import annotations

import dataclasses
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from runtime.batch import data_width
from runtime.executor.local import LocalExecutor
from streamsql import EnvironmentSettings, TableEnvironment
from streamsql.udf import DataTypes, udf

ROWS = 3000
DEADLINE_S = 300.0

QUERIES = {
    "join": "SELECT l.id, r.id * 2 AS r FROM src l JOIN src r ON l.id = r.id",
    "group": "SELECT id % 400 AS k, COUNT(*) AS c, SUM(id) AS s FROM src GROUP BY id % 400",
    "window": (
        "SELECT window_start, k, COUNT(*) AS c FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '1' SECOND)) "
        "GROUP BY window_start, window_end, k"
    ),
    "sort": "SELECT id, k FROM src ORDER BY k, id DESC",
}


def _env(tmp: Path, **conf: str) -> TableEnvironment:
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    settings = {
        "table.exec.source.batch-rows": "100",
        "taskmanager.memory.managed.size": "16 kb",
        "io.tmp.dirs": str(tmp / "spill"),
        **conf,
    }
    for k, v in settings.items():
        env.get_config().set(k, v)
    env.execute_sql(
        "CREATE TABLE src (id BIGINT, k AS id % 7, ts AS TO_TIMESTAMP_LTZ(id * 10, 3)) WITH ("
        "'connector' = 'datagen', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', "
        f"'fields.id.end' = '{ROWS}')"
    )
    return env


class SavepointAt(LocalExecutor):
    """Asks for a savepoint (STOP WITH SAVEPOINT, as from another thread) after the 20th
    source batch of the job: both inputs of the self-join are open there."""

    calls = 0
    future: Future[str] | None = None
    directory = ""

    def _checkpoint_work(self) -> None:
        self.calls += 1
        if self.calls == 20:
            self.future = self.trigger_savepoint(self.directory, stop=True)
        super()._checkpoint_work()


def _graph(env: TableEnvironment, query: str, **conf: str) -> Any:
    (stmt,) = env.parse(query)
    g = env._planner().plan_query(stmt).graph  # noqa: SLF001 - the test drives the executor itself
    return dataclasses.replace(g, config={**(g.config or {}), **conf})


def _rows(batches: list[pa.RecordBatch]) -> list[tuple[Any, ...]]:
    if not batches:
        return []
    t = pa.Table.from_batches(batches)
    t = t.select(list(range(data_width(batches[0]))))
    return sorted(tuple(r.values()) for r in t.to_pylist())


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_savepoint_after_a_spill_is_refused_and_the_job_runs_on(tmp_path: Path, name: str) -> None:
    env = _env(tmp_path)
    expected = _rows(env.execute_sql(QUERIES[name]).to_arrow().to_batches())
    job = SavepointAt(_graph(env, QUERIES[name]))
    job.directory = str(tmp_path / "sp")
    got = _rows(list(job.run()))
    assert job.future is not None
    err = job.future.exception(timeout=60)
    assert err is not None, f"{name}: the savepoint should be refused, it was taken at {job.future.result()}"
    assert "cannot be snapshotted" in str(err) and "hint: " in str(err)
    assert got == expected


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_with_periodic_checkpoints_a_batch_savepoint_restores_whole(tmp_path: Path, name: str) -> None:
    env = _env(tmp_path)
    expected = _rows(env.execute_sql(QUERIES[name]).to_arrow().to_batches())
    periodic = {"execution.checkpointing.interval": "1 h", "execution.checkpointing.dir": str(tmp_path / "cp")}
    job = SavepointAt(_graph(env, QUERIES[name], **periodic))
    job.directory = str(tmp_path / "sp")
    before = list(job.run())
    assert job.future is not None
    path = job.future.result(timeout=60)
    rest = LocalExecutor(_graph(env, QUERIES[name], **{"execution.savepoint.path": path}))
    assert _rows(before + list(rest.run())) == expected


GATE: list[Path] = []


@udf(result_type=DataTypes.BIGINT())
def gate(v: int) -> int:
    """Holds its worker at v = 1200 (saying so: GATE[1]) until the test opens the gate
    (GATE[0] exists)."""
    if v == 1200 and GATE:
        GATE[1].write_text("reached")
        deadline = time.monotonic() + DEADLINE_S
        while not GATE[0].exists() and time.monotonic() < deadline:
            time.sleep(0.01)
    return v


def test_parallel_worker_declines_a_savepoint_after_a_spill(tmp_path: Path) -> None:
    """At parallelism 2 the spilled aggregation declines a stop-with-savepoint in its
    worker: the savepoint fails with the reason, the parent's ABORT un-freezes the stages,
    and the job runs on to the uninterrupted result."""
    query = "SELECT g % 1000 AS k, COUNT(*) AS c, SUM(g) AS s FROM (SELECT gate(id) AS g FROM src) GROUP BY g % 1000"
    env = _env(tmp_path, **{"parallelism.default": "2", "taskmanager.memory.managed.size": "1 kb"})
    env.create_temporary_function("gate", gate)
    GATE[:] = [tmp_path / "open", tmp_path / "reached"]
    result = env.execute_sql(query)
    rows: list[Any] = []
    reader = threading.Thread(target=lambda: rows.extend(tuple(r) for r in result.collect()), daemon=True)
    reader.start()
    deadline = time.monotonic() + DEADLINE_S
    while result._executor() is None:  # noqa: SLF001 - the running query's executor
        assert time.monotonic() < deadline
        time.sleep(0.01)
    executor = result._executor()  # noqa: SLF001
    while not GATE[1].exists():  # the aggregation has most of its input, and spilled
        assert time.monotonic() < deadline and reader.is_alive()
        time.sleep(0.01)
    # a stop: the workers freeze at the barrier; the refusal (ABORT) lets them run on
    future = executor.trigger_savepoint(str(tmp_path / "sp"), stop=True)
    while executor.cp.inflight is None and not future.done():  # the workers got the trigger
        assert time.monotonic() < deadline
        time.sleep(0.01)
    GATE[0].write_text("open")
    err = future.exception(timeout=DEADLINE_S)
    assert err is not None and "cannot be snapshotted" in str(err) and "hint: " in str(err)
    reader.join(DEADLINE_S)
    ids = {k: range(k or 1000, ROWS + 1, 1000) for k in range(1000)}
    assert sorted(rows) == sorted((k, len(r), sum(r)) for k, r in ids.items())
