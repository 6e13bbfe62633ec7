"""Checkpoints of parallel jobs (runtime/executor/parallel/barriers.py, checkpoints.py):
stages, barrier alignment (EXACTLY_ONCE: no record after a barrier reaches an operator
before its snapshot), the snapshot layout, savepoints and restoring them."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from runtime.checkpoint import format as state_format
from runtime.checkpoint.metadata import CheckpointMetadata
from runtime.checkpoint.restore import load_checkpoint
from runtime.executor.parallel.barriers import worker_stages
from runtime.executor.parallel.plan import plan_parallel
from streamsql import EnvironmentSettings, TableEnvironment
from streamsql.udf import DataTypes, udf

ROWS = 6000


def _env(tmp: Path, parallelism: int = 2, rate: int = 30_000, conf: dict[str, str] | None = None) -> TableEnvironment:
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    settings = {
        "parallelism.default": str(parallelism),
        "table.exec.source.batch-rows": "50",
        "execution.checkpointing.dir": f"file://{tmp}/chk",
        "state.checkpoints.num-retained": "1000",
        **(conf or {}),
    }
    for k, v in settings.items():
        env.execute_sql(f"SET '{k}' = '{v}'")
    env.execute_sql(
        "CREATE TABLE src (k INT, v BIGINT) WITH ('connector' = 'datagen', "
        f"'number-of-rows' = '{ROWS}', 'rows-per-second' = '{rate}', "
        "'fields.k.min' = '1', 'fields.k.max' = '20', "
        f"'fields.v.kind' = 'sequence', 'fields.v.start' = '1', 'fields.v.end' = '{ROWS}')"
    )
    return env


FILE_ROWS = 8000


def _files_env(tmp: Path, parallelism: int, **conf: str) -> TableEnvironment:
    """A filesystem table of `parallelism` CSV files (one per source subtask)."""
    env = _env(tmp, parallelism, conf=conf)
    data = tmp / "in"
    data.mkdir(parents=True)
    for f in range(parallelism):
        (data / f"p{f}.csv").write_text("".join(f"{(i * 7 + f) % 20},{i}\n" for i in range(FILE_ROWS)))
    env.execute_sql(
        f"CREATE TABLE fs (k INT, v BIGINT) WITH ('connector' = 'filesystem', 'path' = '{data}', 'format' = 'csv')"
    )
    return env


def _state(snap: Any, file: str | None) -> Any:
    return None if file is None else state_format.decode(snap.storage.read(f"{snap.rel}/{file}"))


def _counted(snap: Any, uid: str) -> int:
    """Rows a GroupAggregate's snapshot has counted (its AggregateSet's row counts)."""
    total = 0
    for _, data in snap.subtask_states(uid):
        if data is not None:
            total += int(state_format.unpack(data)["attrs"]["aggset"].row_count.sum())
    return total


def _read(snap: Any, uid: str) -> int | None:
    """Rows the source subtasks (one file each) had emitted at the snapshot; None when no
    subtask was in the middle of its file (nothing to check)."""
    total, mid = 0, False
    for _, st in snap.subtask_states(uid):
        if st.get("split") is not None:
            total += int(st["split_rows"])
            mid = True
        elif not st.get("pending"):
            total += FILE_ROWS  # read to the end
    return total if mid else None


def test_stages_split_at_routed_edges() -> None:
    env = _env(Path("/tmp"))
    graph = env._planner().plan_query(env.parse("SELECT k, COUNT(*) FROM src GROUP BY k")[0]).graph
    plan = plan_parallel(graph)
    order = [n.id for n in graph.nodes if n.id not in plan.parent_nodes]
    stage_of, stages = worker_stages(graph, plan, order)
    assert len(stages) == 2
    src = next(n.id for n in graph.nodes if n.operator == "TableSourceScan")
    agg = next(n.id for n in graph.nodes if n.operator == "GroupAggregate")
    assert stages[stage_of[src]].has_sources and not stages[stage_of[agg]].has_sources
    assert stages[stage_of[agg]].inputs == stages[stage_of[src]].outputs


@pytest.mark.parametrize("parallelism", [2, 3])
def test_exactly_once_alignment_snapshot_counts_only_rows_before_the_barrier(tmp_path: Path, parallelism: int) -> None:
    """Sources keep emitting after their barrier; EXACTLY_ONCE holds those rows back at
    the aggregate until it snapshot, so in every checkpoint the aggregate's count equals
    the rows the sources had read at theirs."""
    env = _files_env(tmp_path, parallelism, **{"execution.checkpointing.interval": "20 ms"})
    rows = list(env.execute_sql("SELECT k, COUNT(*) AS c FROM fs GROUP BY k").collect())
    assert rows
    chks = sorted((tmp_path / "chk").glob("*/chk-*/_metadata"))
    checked = 0
    for meta_file in chks:
        snap = load_checkpoint(str(meta_file.parent))
        meta: CheckpointMetadata = snap.metadata
        assert meta.parallelism == parallelism
        source = next(o for o in meta.operators if o.operator == "TableSourceScan")
        agg = next(o for o in meta.operators if o.operator == "GroupAggregate")
        assert [s.index for s in agg.subtasks] == list(range(parallelism))
        read = _read(snap, source.uid)
        if read is None:
            continue
        assert _counted(snap, agg.uid) == read, f"checkpoint {meta.checkpoint_id}: rows after a barrier counted"
        checked += 1
    assert checked >= 3, f"only {checked} mid-stream checkpoints of {len(chks)}"


def _insert(env: TableEnvironment, db: Path) -> str:
    env.execute_sql(
        "CREATE TABLE agg (k INT, c BIGINT, s BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ("
        f"'connector' = 'duckdb', 'path' = '{db}', 'table-name' = 'agg', 'sink.primary-key' = 'k')"
    )
    return "INSERT INTO agg SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k"


def _wait_for_sink_rows(job: Any, timeout: float = 300) -> None:
    """Wait until the job's sink (run in the parent) received rows: a savepoint from now
    on commits some (a fixed pause only got there on an idle machine: the workers' start
    takes seconds on a loaded one)."""
    deadline = time.monotonic() + timeout
    while True:
        ex = job._executor()
        sinks = [n.id for n in ex.graph.nodes if n.operator == "Sink"] if ex is not None else []
        if sinks and all(ex.metrics[i].rows_in > 0 for i in sinks):
            return
        assert job.is_running(), "the job ended before its sink received a row"
        assert time.monotonic() < deadline, f"the sink received no row within {timeout:.0f} s"
        time.sleep(0.05)


def _table(db: Path) -> list[tuple[Any, ...]]:
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT * FROM agg ORDER BY k").fetchall()
    finally:
        con.close()


def test_stop_with_savepoint_of_parallel_job_then_restore_at_other_parallelism(tmp_path: Path) -> None:
    """stop_with_savepoint on a running parallel job (the JobHandle path of STOP JOB ...
    WITH SAVEPOINT and `streamsql savepoint --stop`), its parent-run DuckDB sink included;
    restored at parallelism 1 and 3 the final table equals an uninterrupted run's."""
    ref = _env(tmp_path / "ref", 1, rate=10**9)
    ref.execute_sql(_insert(ref, tmp_path / "ref.duckdb")).wait()
    expected = _table(tmp_path / "ref.duckdb")
    assert len(expected) == 20

    # throttled to 12 s of stream, so the savepoint comes mid-stream on a loaded machine too
    env = _env(tmp_path, 2, rate=500, conf={"execution.checkpointing.interval": "1 h"})
    result = env.execute_sql(_insert(env, tmp_path / "out.duckdb"))
    assert result.job is not None
    _wait_for_sink_rows(result.job)
    path = result.job.stop_with_savepoint(str(tmp_path / "sp"), timeout=300)
    meta = load_checkpoint(path).metadata
    assert meta.kind == "savepoint" and meta.parallelism == 2
    at_savepoint = _table(tmp_path / "out.duckdb")
    assert 0 < sum(int(r[1]) for r in at_savepoint) < ROWS, "the savepoint should be taken mid-stream"
    for p in (1, 3):
        db = tmp_path / f"r{p}.duckdb"
        shutil.copy(tmp_path / "out.duckdb", db)
        restored = _env(tmp_path / f"r{p}", p, rate=10**9, conf={"execution.savepoint.path": path})
        restored.execute_sql(_insert(restored, db)).wait()
        assert _table(db) == expected


MARKER: list[Path] = []


@udf(result_type=DataTypes.BIGINT())
def fail_once(v: int) -> int:
    """Fails the first time it sees v = 5000 (in whichever worker), then never again."""
    if v == 5000 and MARKER and not MARKER[0].exists():
        MARKER[0].write_text("failed")
        raise ValueError("injected failure")
    return v


def test_worker_failure_restarts_all_workers_from_the_latest_checkpoint(tmp_path: Path) -> None:
    """`restart-strategy.type`: a worker's failure restarts every worker from the latest
    complete checkpoint; the DuckDB sink's committed table has every row exactly once."""
    MARKER[:] = [tmp_path / "failed-once"]
    conf = {
        "execution.checkpointing.interval": "20 ms",
        "restart-strategy.type": "fixed-delay",
        "restart-strategy.fixed-delay.attempts": "2",
        "restart-strategy.fixed-delay.delay": "0 ms",
    }
    env = _files_env(tmp_path, 2, **conf)
    env.create_temporary_function("fail_once", fail_once)
    env.execute_sql(
        "CREATE TABLE agg (k INT, c BIGINT, s BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ("
        f"'connector' = 'duckdb', 'path' = '{tmp_path / 'out.duckdb'}', 'table-name' = 'agg', 'sink.primary-key' = 'k')"
    )
    result = env.execute_sql("INSERT INTO agg SELECT k, COUNT(*), SUM(fail_once(v)) FROM fs GROUP BY k")
    result.wait()
    assert MARKER[0].exists()
    assert result.job is not None
    ex = result.job._executor()  # noqa: SLF001 - the job's executor, for its restart count
    assert ex is not None and ex.restarts == 1 and ex.restored_from is not None
    rows = _table(tmp_path / "out.duckdb")
    assert sum(int(r[1]) for r in rows) == 2 * FILE_ROWS
    assert sum(int(r[2]) for r in rows) == 2 * sum(range(FILE_ROWS))


def test_at_least_once_does_not_hold_channels_back_and_completes(tmp_path: Path) -> None:
    """AT_LEAST_ONCE: barriers are not aligned (rows after a barrier may be in the
    snapshot: the count may run ahead of the sources' offsets, never behind), and the
    job's result is complete."""
    conf = {"execution.checkpointing.interval": "20 ms", "execution.checkpointing.mode": "AT_LEAST_ONCE"}
    env = _files_env(tmp_path, 2, **conf)
    rows = list(env.execute_sql("SELECT k, COUNT(*) AS c FROM fs GROUP BY k").collect())
    finals: dict[Any, int] = {}
    for r in rows:
        if str(r.get_row_kind()) in ("+I", "+U") or str(r.get_row_kind()).endswith(("INSERT", "UPDATE_AFTER")):
            finals[r[0]] = int(r[1])
    assert sum(finals.values()) == 2 * FILE_ROWS
    chks = sorted((tmp_path / "chk").glob("*/chk-*/_metadata"))
    assert chks
    for meta_file in chks:
        snap = load_checkpoint(str(meta_file.parent))
        source = next(o for o in snap.metadata.operators if o.operator == "TableSourceScan")
        agg = next(o for o in snap.metadata.operators if o.operator == "GroupAggregate")
        read = _read(snap, source.uid)
        if read is not None:
            assert _counted(snap, agg.uid) >= read
