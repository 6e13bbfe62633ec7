"""STOP WITH SAVEPOINT and what a collecting caller gets (runtime/executor/local.py,
runtime/executor/parallel/): nothing after the savepoint's barrier reaches the caller, so
the rows collected before the stop plus the rows of a run restored from the savepoint are
exactly an uninterrupted run's, at parallelism 1 and 2; with drain the windows fire before
the savepoint (Flink's `--drain`), and a run restored from it goes on with the later rows
(the window the sources were in fires again with the rest of its rows, as in Flink)."""

from __future__ import annotations

import io
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from runtime.checkpoint.restore import load_checkpoint
from streamsql import EnvironmentSettings, TableEnvironment
from streamsql.row import RowKind

ROWS = 6_000
DEADLINE_S = 300.0


def _env(tmp: Path, parallelism: int, rate: int, restore: str | None = None) -> TableEnvironment:
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    settings = {
        "parallelism.default": str(parallelism),
        "table.exec.source.batch-rows": "20",
        "execution.checkpointing.savepoint-dir": f"file://{tmp}/sp",
    }
    if restore is not None:
        settings["execution.savepoint.path"] = restore
    for k, v in settings.items():
        env.get_config().set(k, v)
    # ts: 10 ms of event time per row, so 1-second windows close every 100 rows
    env.execute_sql(
        "CREATE TABLE src (id BIGINT, ts AS TO_TIMESTAMP_LTZ(id * 10, 3), "
        "WATERMARK FOR ts AS ts) WITH ('connector' = 'datagen', "
        f"'rows-per-second' = '{rate}', 'fields.id.kind' = 'sequence', "
        f"'fields.id.start' = '1', 'fields.id.end' = '{ROWS}')"
    )
    return env


def _collect_then_stop(
    env: TableEnvironment, query: str, tmp: Path, drain: bool = False, after: int = 50
) -> tuple[list[Any], str]:
    """Collect rows of `query` until `after` arrived, stop it with a savepoint (the executor's
    request, as STOP JOB ... WITH SAVEPOINT and the job client's make it), collect what
    the job still hands over until it ends; (rows, savepoint path)."""
    result = env.execute_sql(query)
    it = result.collect()
    rows: list[Any] = []
    future = None
    deadline = time.monotonic() + DEADLINE_S
    for row in it:
        rows.append(row)
        if future is None and len(rows) >= after:
            executor = result._executor()  # noqa: SLF001 - the running query's executor
            assert executor is not None
            future = executor.trigger_savepoint(str(tmp / "sp"), stop=True, **({"drain": True} if drain else {}))
        assert time.monotonic() < deadline, "the job did not stop in time"
    assert future is not None, "the job ended before the stop was requested"
    return rows, str(future.result(timeout=DEADLINE_S))


@pytest.mark.parametrize("parallelism", [1, 2])
def test_collected_rows_after_stop_with_savepoint_and_restore_equal_an_uninterrupted_run(
    tmp_path: Path, parallelism: int
) -> None:
    query = "SELECT id, id * 2 AS d FROM src"
    before, path = _collect_then_stop(_env(tmp_path, parallelism, rate=500), query, tmp_path)
    assert load_checkpoint(path).metadata.kind == "savepoint"
    assert len(before) < ROWS, "the stop should come mid-stream"
    after = list(_env(tmp_path, parallelism, rate=10**9, restore=path).execute_sql(query).collect())
    got = Counter(tuple(r) for r in before + after)
    assert got == Counter((i, 2 * i) for i in range(1, ROWS + 1))


@pytest.mark.parametrize("parallelism", [1, 2])
def test_stop_with_savepoint_of_an_aggregate_restores_to_the_final_table(tmp_path: Path, parallelism: int) -> None:
    """A changelog result: the changes collected before the stop and after the restore,
    applied in order, give the uninterrupted run's final table."""
    query = "SELECT id % 7 AS k, COUNT(*) AS c, SUM(id) AS s FROM src GROUP BY id % 7"
    before, path = _collect_then_stop(_env(tmp_path, parallelism, rate=500), query, tmp_path)
    after = list(_env(tmp_path, parallelism, rate=10**9, restore=path).execute_sql(query).collect())
    table: Counter[tuple[Any, ...]] = Counter()
    for row in before + after:
        kind = row.get_row_kind()
        table[tuple(row)] += 1 if kind in (RowKind.INSERT, RowKind.UPDATE_AFTER) else -1
    final = {r for r, n in table.items() if n}
    assert all(n in (0, 1) for n in table.values()), "a change was applied twice"
    ids = {k: range(k or 7, ROWS + 1, 7) for k in range(7)}
    assert final == {(k, len(r), sum(r)) for k, r in ids.items()}


WINDOWS = (
    "SELECT window_start, COUNT(*) AS c FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '1' SECOND)) "
    "GROUP BY window_start, window_end"
)


def _full_count(start: Any) -> int:
    """Rows of the window starting at `start`: ts = id * 10 ms, ids 1..ROWS."""
    first = max(1, int(start.timestamp() * 100))
    return len(range(first, min(first + (100 if first > 1 else 99), ROWS + 1)))


@pytest.mark.parametrize("parallelism", [1, 2])
def test_stop_with_savepoint_keeps_open_windows_for_the_restored_run(tmp_path: Path, parallelism: int) -> None:
    before, path = _collect_then_stop(_env(tmp_path, parallelism, rate=500), WINDOWS, tmp_path, after=2)
    before = [tuple(r) for r in before]
    assert all(c == _full_count(w) for w, c in before), "only complete windows fire without drain"
    after = [tuple(r) for r in _env(tmp_path, parallelism, rate=10**9, restore=path).execute_sql(WINDOWS).collect()]
    assert (
        sorted(before + after) == sorted((w, _full_count(w)) for w in {r[0] for r in before + after})
        and sum(c for _, c in before + after) == ROWS
    )


@pytest.mark.parametrize("parallelism", [1, 2])
def test_stop_with_savepoint_and_drain_fires_the_open_windows_first(tmp_path: Path, parallelism: int) -> None:
    """Flink's `--drain`: MAX_WATERMARK before the savepoint, so the windows still open
    fire (with the rows read so far) and reach the caller before the job stops."""
    before, path = _collect_then_stop(_env(tmp_path, parallelism, rate=500), WINDOWS, tmp_path, drain=True, after=2)
    assert load_checkpoint(path).metadata.kind == "savepoint"
    partial = [(w, c) for w, c in map(tuple, before) if c < _full_count(w)]
    assert partial, "the drain should fire the window the sources were in"
    # The restored run derives its watermarks from the sources again (Flink's window
    # operator ignores a restored MAX_WATERMARK, its other operators start from none): the
    # later rows are not late; the drained window fires again with the rest of its rows.
    after = [tuple(r) for r in _env(tmp_path, parallelism, rate=10**9, restore=path).execute_sql(WINDOWS).collect()]
    assert sum(c for _, c in after) == ROWS - sum(c for _, c in map(tuple, before)), "rows dropped as late"
    drained = {w for w, _ in partial}
    assert all(c == _full_count(w) for w, c in after if w not in drained)
    per_window = Counter[Any]()
    for w, c in [*map(tuple, before), *after]:
        per_window[w] += c
    assert all(c == _full_count(w) for w, c in per_window.items())


def test_stop_job_with_savepoint_with_drain_statement(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The SQL statement's WITH DRAIN reaches the executor: the print sink shows the window
    the sources were in (partial) before the job stops."""
    env = _env(tmp_path, 1, rate=500)
    env.execute_sql("CREATE TABLE out_w (w TIMESTAMP(3), c BIGINT) WITH ('connector' = 'print')")
    job = env.execute_sql(
        "INSERT INTO out_w SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), "
        "INTERVAL '1' SECOND)) GROUP BY window_start, window_end"
    ).job
    assert job is not None
    printed = ""
    deadline = time.monotonic() + DEADLINE_S
    while printed.count("+I") < 2:  # two windows closed: the job is mid-stream
        assert time.monotonic() < deadline and job.is_running()
        time.sleep(0.02)
        printed += capsys.readouterr().out
    (path,) = [r[0] for r in env.execute_sql(f"STOP JOB '{job.get_job_id()}' WITH SAVEPOINT WITH DRAIN").collect()]
    assert load_checkpoint(path).metadata.kind == "savepoint"
    job.join(DEADLINE_S)
    printed += capsys.readouterr().out
    counts = [int(line.rsplit(",", 1)[1].strip(" ]")) for line in printed.splitlines() if line.startswith("+I")]
    assert counts[-1] < 100, f"the drain should fire the open window: {printed[-300:]}"


def test_savepoint_command_stop_with_drain(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`streamsql savepoint <job> --stop --drain` (through the job's control server)."""
    from streamsql.control import find_job, register_job, unregister_job
    from streamsql.savepoint_cli import savepoint_main

    env = _env(tmp_path, 1, rate=500)
    env.execute_sql("CREATE TABLE out_w (w TIMESTAMP(3), c BIGINT) WITH ('connector' = 'print')")
    job = env.execute_sql(
        "INSERT INTO out_w SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), "
        "INTERVAL '1' SECOND)) GROUP BY window_start, window_end"
    ).job
    assert job is not None
    jobs = tmp_path / "jobs"
    register_job(job, {"streamsql.jobs.dir": str(jobs)})
    try:
        assert find_job(jobs, job.get_job_id()).job_id == job.get_job_id()
        printed = ""
        deadline = time.monotonic() + DEADLINE_S
        while printed.count("+I") < 2:
            assert time.monotonic() < deadline and job.is_running()
            time.sleep(0.02)
            printed += capsys.readouterr().out
        out, err = io.StringIO(), io.StringIO()
        args = [job.get_job_id(), str(tmp_path / "sp"), "--stop", "--drain", "--jobs-dir", str(jobs)]
        assert savepoint_main(args, out, err) == 0, err.getvalue()
        job.join(DEADLINE_S)
    finally:
        unregister_job(job.get_job_id())
    printed += capsys.readouterr().out
    assert "Savepoint completed" in out.getvalue()
    counts = [int(line.rsplit(",", 1)[1].strip(" ]")) for line in printed.splitlines() if line.startswith("+I")]
    assert counts[-1] < 100, f"the drain should fire the open window: {printed[-300:]}"


@pytest.mark.parametrize("parallelism", [1, 2])
def test_a_stop_whose_savepoint_fails_leaves_the_job_running(tmp_path: Path, parallelism: int) -> None:
    """The savepoint's target cannot be written: the request fails with the file's error
    and the job runs on (the stages frozen at the barrier resume), as in Flink."""
    (tmp_path / "a-file").write_text("not a directory")
    result = _env(tmp_path, parallelism, rate=500).execute_sql("SELECT id FROM src")
    future = None
    after_failure = 0
    deadline = time.monotonic() + DEADLINE_S
    with result.collect() as rows:
        for n, _ in enumerate(rows):
            if n == 50:
                executor = result._executor()  # noqa: SLF001 - the running query's executor
                future = executor.trigger_savepoint(str(tmp_path / "a-file" / "sp"), stop=True)
            if future is not None and future.done():
                after_failure += 1
                if after_failure == 100:
                    break
            assert time.monotonic() < deadline, "the job did not go on after the failed savepoint"
    assert future is not None and after_failure == 100
    err = future.exception()
    assert err is not None and "a-file" in str(err)
