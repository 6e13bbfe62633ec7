"""Restoring the window family with windows open at another parallelism gives exactly the
output of a run that never stopped (docs/parallel.md, "Checkpoints, savepoints and
restoring with another parallelism").

One job holds every case, each an event-time query into its own filesystem sink (two-phase
commit: what a savepoint covers is published, nothing after it), over datagen sequences
whose key, value and rowtime are computed from the sequence number, so every run reads the
same rows:

1. an uninterrupted run at parallelism 1 gives each sink's expected output;
2. a run at parallelism 1 takes a savepoint after its 6th source batch and stops there
   (windows, sessions, partial matches and buffered rows are open in it);
3. that savepoint is restored at parallelism 2, throttled, and stopped with a savepoint
   once the workers read rows (1 -> 2; a savepoint written by 2 workers);
4. that one is restored at parallelism 1 and, from a copy of the output, at 3 and run to
   the end (2 -> 1, 2 -> 3).

Each sink's published lines then equal the uninterrupted run's. The window operators
keep their state under (window, key) or per buffered row; where a restored entry goes is
decided by the key group of the columns the hash exchange routes by, so a window fires
once, in the subtask its key's later rows reach (with the key group of the stored
columns, windows would fire twice or lose rows).
"""

from __future__ import annotations

import dataclasses
import shutil
import threading
import time
from pathlib import Path

import pytest
from clitools import committed_lines

from runtime.checkpoint.restore import load_checkpoint
from runtime.executor.local import LocalExecutor
from runtime.executor.parallel.executor import ParallelExecutor, job_parallelism
from runtime.graph import JobGraph
from streamsql.environment import TableEnvironment
from tests.unit.runtime.checkpoint.test_operator_snapshots import _SavepointAt

BASE = 1_700_000_000_000

W = "TABLE(TUMBLE(TABLE g, DESCRIPTOR(ts), INTERVAL '2' SECOND))"
CASES: dict[str, tuple[str, set[str]]] = {
    "tumble": (
        f"SELECT k, window_start, COUNT(*), SUM(v), MAX(v) FROM {W} GROUP BY k, window_start, window_end",
        {"WindowAggregate", "GlobalWindowAggregate"},
    ),
    "hop": (
        "SELECT k, window_start, window_end, COUNT(*), SUM(v) FROM TABLE(HOP(TABLE g, DESCRIPTOR(ts), "
        "INTERVAL '1' SECOND, INTERVAL '3' SECOND)) GROUP BY k, window_start, window_end",
        {"WindowAggregate", "GlobalWindowAggregate"},
    ),
    "cumulate": (
        "SELECT k, window_start, window_end, COUNT(*), MIN(v) FROM TABLE(CUMULATE(TABLE g, DESCRIPTOR(ts), "
        "INTERVAL '1' SECOND, INTERVAL '4' SECOND)) GROUP BY k, window_start, window_end",
        {"WindowAggregate", "GlobalWindowAggregate"},
    ),
    "session": (
        "SELECT k, window_start, window_end, COUNT(*), SUM(v) FROM TABLE(SESSION(TABLE g PARTITION BY k, "
        "DESCRIPTOR(ts), INTERVAL '250' MILLISECOND)) GROUP BY k, window_start, window_end",
        {"WindowAggregate"},
    ),
    "session_tvf": (
        "SELECT k, id, window_start, window_end FROM TABLE(SESSION(TABLE g PARTITION BY k, DESCRIPTOR(ts), "
        "INTERVAL '250' MILLISECOND))",
        {"SessionWindowTableFunction"},
    ),
    "window_topn": (
        "SELECT * FROM (SELECT window_start, k, v, id, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, k "
        f"ORDER BY v DESC, id) AS rn FROM {W}) WHERE rn <= 2",
        {"WindowRank"},
    ),
    "window_dedup": (
        "SELECT * FROM (SELECT window_start, k, v, id, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, k "
        f"ORDER BY ts DESC) AS rn FROM {W}) WHERE rn = 1",
        {"WindowDeduplicate", "WindowRank"},
    ),
    "window_agg_topn": (
        "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY c DESC, k) AS rn "
        f"FROM (SELECT k, window_start, window_end, COUNT(*) AS c FROM {W} GROUP BY k, window_start, window_end)) "
        "WHERE rn <= 3",
        {"WindowAggregate", "WindowRank"},
    ),
    "window_join": (
        "SELECT L.k, L.id, R.id, L.window_start FROM (SELECT * FROM TABLE(TUMBLE(TABLE g, DESCRIPTOR(ts), "
        "INTERVAL '2' SECOND))) L LEFT JOIN (SELECT * FROM TABLE(TUMBLE(TABLE h, DESCRIPTOR(ts), INTERVAL '2' SECOND))) R "
        "ON L.k = R.k AND L.window_start = R.window_start AND L.window_end = R.window_end",
        {"WindowJoin"},
    ),
    "temporal_join": (
        "SELECT g.id, g.k, r.rate, r.ts_ms FROM g LEFT JOIN r FOR SYSTEM_TIME AS OF g.ts ON g.k = r.k",
        {"TemporalJoin"},
    ),
    "over": (
        "SELECT k, id, SUM(v) OVER w, MAX(v) OVER w FROM g "
        "WINDOW w AS (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '1' SECOND PRECEDING AND CURRENT ROW)",
        {"OverAggregate"},
    ),
    "match_recognize": (
        "SELECT * FROM g MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts MEASURES A.id AS a_id, LAST(B.v) AS bottom, "
        "C.id AS c_id ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW PATTERN (A B+ C) "
        "DEFINE B AS v < PREV(v), C AS v > PREV(v))",
        {"Match"},
    ),
}


# The jobs: every case with the default plan, and the window aggregations again planned
# in two phases (LocalWindowAggregate -> exchange -> GlobalWindowAggregate).
JOBS: dict[str, tuple[dict[str, str], tuple[str, ...]]] = {
    "one_phase": ({}, tuple(CASES)),
    "two_phase": (
        {"table.optimizer.agg-phase-strategy": "TWO_PHASE"},
        ("tumble", "hop", "cumulate", "window_agg_topn"),
    ),
}


def _env(tmp: Path, rate: int, conf: dict[str, str]) -> TableEnvironment:
    """Tables g (600 rows, 37 ms apart) and h (300 rows, 71 ms apart) from datagen
    sequences, `rate` rows per second each, and the versioned table r from a file; checkpointing on, so the filesystem sinks
    publish only what a checkpoint or savepoint covers (two-phase commit)."""
    env = TableEnvironment.create(
        {
            "table.exec.source.batch-rows": "25",
            "execution.checkpointing.interval": "1 h",
            "execution.checkpointing.dir": f"file://{tmp}/chk",
            **conf,
        }
    )
    versions = tmp / "versions"  # r: 120 versions of 7 keys, every 190 ms (in rowtime order)
    if not versions.exists():
        versions.mkdir()
        (versions / "r.csv").write_text("".join(f"{i * 3 % 7},{i},{BASE + i * 190}\n" for i in range(120)))
    env.execute_sql(
        "CREATE TABLE r (k INT, rate INT, ts_ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ts_ms, 3), PRIMARY KEY (k) NOT ENFORCED, "
        "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) "
        f"WITH ('connector' = 'filesystem', 'path' = '{versions}', 'format' = 'csv')"
    )
    for name, n, step, mul in (("g", 600, 37, 13), ("h", 300, 71, 5)):
        env.execute_sql(
            f"CREATE TABLE {name} (id BIGINT, k AS CAST(MOD(id * {mul}, 7) AS INT), v AS CAST(MOD(id * 31, 50) AS INT), "
            f"ts AS TO_TIMESTAMP_LTZ({BASE} + id * {step}, 3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) "
            f"WITH ('connector' = 'datagen', 'rows-per-second' = '{rate}', 'fields.id.kind' = 'sequence', "
            f"'fields.id.start' = '1', 'fields.id.end' = '{n}')"
        )
    return env


def _job(tmp: Path, job: str, out: Path, rate: int = 10**9, **conf: str) -> JobGraph:
    """One job of `INSERT INTO <case> <the case's query>` for every case of `job`, each
    into a CSV filesystem table at `out/<case>`."""
    job_conf, cases = JOBS[job]
    env = _env(tmp, rate, job_conf)
    inserts = []
    for case in cases:
        sql = CASES[case][0]
        schema = env.sql_query(sql).get_schema()
        columns = ", ".join(
            f"`{n}` {str(t).replace(' *ROWTIME*', '')}"
            for n, t in zip(schema.get_field_names(), schema.get_field_data_types(), strict=True)
        )
        env.execute_sql(
            f"CREATE TABLE {case} ({columns}) "
            f"WITH ('connector' = 'filesystem', 'path' = '{out / case}', 'format' = 'csv')"
        )
        inserts += env.parse(f"INSERT INTO {case} {sql}")
    graph = env._planner().plan_inserts(inserts)  # noqa: SLF001 - the test drives the executors itself
    return dataclasses.replace(graph, config={**(graph.config or {}), **conf})


def _published(out: Path, job: str) -> dict[str, list[str]]:
    """Every sink's published lines, sorted."""
    return {case: committed_lines(out / case) for case in JOBS[job][1]}


def _restore(graph: JobGraph, savepoint: str, parallelism: int) -> JobGraph:
    conf = {"execution.savepoint.path": savepoint, "parallelism.default": str(parallelism)}
    return dataclasses.replace(graph, config={**(graph.config or {}), **conf})


def _run_to_end(graph: JobGraph) -> None:
    executor = ParallelExecutor(graph) if job_parallelism(graph) > 1 else LocalExecutor(graph)
    for _ in executor.run():
        pass


def _savepoint_at_batch(graph: JobGraph, directory: Path) -> str:
    """Run `graph` at parallelism 1 to a savepoint after its 6th source batch, and stop."""
    first = _SavepointAt(graph, 6, str(directory))
    list(first.run())
    assert first.location is not None
    return first.location


def _stop_with_savepoint(graph: JobGraph, directory: Path) -> str:
    """Run `graph` (parallel, throttled), wait until every source subtask that has rows
    emitted some (a condition, not a fixed time), stop it with a savepoint."""
    executor = ParallelExecutor(graph)
    failed: list[BaseException] = []

    def run() -> None:
        try:
            for _ in executor.run():
                pass
        except BaseException as e:  # noqa: BLE001 - reported by the test thread
            failed.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    sources = [n.id for n in graph.nodes if n.operator == "TableSourceScan"]
    deadline = time.monotonic() + 300
    while not all(executor.metrics[i].rows_out > 0 for i in sources):
        assert not failed, failed
        assert thread.is_alive(), "the restored job ended before its sources emitted a row"
        assert time.monotonic() < deadline, "the restored job's sources emitted no row"
        time.sleep(0.02)
    future = executor.trigger_savepoint(str(directory), stop=True)
    while not future.done():  # a failing job fails the test at once, not at a timeout
        assert not failed, failed
        assert time.monotonic() < deadline + 300, "the savepoint did not complete"
        time.sleep(0.05)
    location = future.result()
    thread.join(timeout=300)
    assert not failed, failed
    return location


@pytest.mark.timeout(600)  # several job runs; only a hang fails on time
@pytest.mark.parametrize("job", sorted(JOBS))
def test_restore_with_open_windows_at_another_parallelism_equals_uninterrupted(tmp_path: Path, job: str) -> None:
    ref = _job(tmp_path, job, tmp_path / "ref")
    planned = {n.operator for n in ref.nodes}
    for case in JOBS[job][1]:
        assert CASES[case][1] & planned, f"{case}: the plan lacks the operator the case is about"
    assert (job == "two_phase") == ("GlobalWindowAggregate" in planned)
    _run_to_end(ref)
    expected = _published(tmp_path / "ref", job)
    assert all(expected.values())
    total = sum(len(v) for v in expected.values())

    # 1 -> 2: a savepoint at a fixed batch; restored at 2, throttled (~15 s of stream left),
    # stopped with a savepoint once it runs
    b = _job(tmp_path, job, tmp_path / "b")
    sp1 = _savepoint_at_batch(b, tmp_path / "sp1")
    assert sum(len(v) for v in _published(tmp_path / "b", job).values()) < total, "savepoint 1 should be mid-stream"
    sp2 = _stop_with_savepoint(_restore(_job(tmp_path, job, tmp_path / "b", rate=30), sp1, 2), tmp_path / "sp2")
    assert load_checkpoint(sp2).metadata.parallelism == 2
    assert sum(len(v) for v in _published(tmp_path / "b", job).values()) < total, "savepoint 2 should be mid-stream"
    shutil.copytree(tmp_path / "b", tmp_path / "c")

    # 2 -> 1 and 2 -> 3
    _run_to_end(_restore(b, sp2, 1))
    got = _published(tmp_path / "b", job)
    assert [c for c in expected if got[c] != expected[c]] == [], "1 -> 2 -> 1: these sinks differ"
    _run_to_end(_restore(_job(tmp_path, job, tmp_path / "c"), sp2, 3))
    got = _published(tmp_path / "c", job)
    assert [c for c in expected if got[c] != expected[c]] == [], "1 -> 2 -> 3: these sinks differ"
