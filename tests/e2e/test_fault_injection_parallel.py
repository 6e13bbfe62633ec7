"""Fault injection at parallelism 2: a job with a window aggregation, an interval join and a
group aggregation writes to the two-phase-commit filesystem sink (run in both workers) and
to the DuckDB upsert sink (run in the parent, fed by both workers). The job is killed with
SIGKILL at random points - during processing in a worker (the fault takes the whole job
down), right after a worker's snapshot, after the state upload but before `_metadata`,
after the checkpoint completed but before the sinks committed, after a sink committed,
and at random wall-clock moments - and restarted each time with
`--restore latest --parallelism 2`; the committed output must equal an uninterrupted
parallelism-1 run's exactly (no row lost, none duplicated).

The runs alternate between the two state backends (a checkpoint has one format for both,
so each run restores the previous run's state into the other backend), and the last run,
which finishes, uses `rocksdb`: that covers rocksdb at parallelism 2 without more runs. Its
workers must dispose of their RocksDB databases after a fault and at the end (they hung
in `close` when the job process had opened RocksDB before forking: runtime/state/rocksdb.py).

The input has no late rows (event time increases in every file), so the result does not
depend on how the two workers' watermarks interleave.
"""

from __future__ import annotations

import os
import random
from collections import Counter
from pathlib import Path

import pytest
from clitools import committed_lines, duckdb_rows, run_restoring

KILLS = 6
POINTS = ("batch", "snapshot", "upload", "metadata", "commit", "wall")
ARGS = ("--parallelism", "2")

JOB = """
SET 'table.exec.source.batch-rows' = '40';
SET 'execution.checkpointing.interval' = '{interval}';
SET 'execution.checkpointing.dir' = 'file://{root}/chk';
SET 'state.backend.type' = '{backend}';
SET 'state.backend.rocksdb.localdir' = '{root}/rocks';
CREATE TABLE a (k INT, v BIGINT, ts_ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ts_ms, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector'='filesystem','path'='{root}/in_a','format'='csv');
CREATE TABLE b (k INT, w BIGINT, ts_ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ts_ms, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector'='filesystem','path'='{root}/in_b','format'='csv');
CREATE TABLE fs_out (k INT, ws TIMESTAMP(3), c BIGINT, s BIGINT, w BIGINT)
  WITH ('connector'='filesystem','path'='{root}/{out}/fs','format'='csv');
CREATE TABLE db_out (k INT, c BIGINT, s BIGINT, PRIMARY KEY (k) NOT ENFORCED)
  WITH ('connector'='duckdb','path'='{root}/{out}/out.duckdb','table-name'='agg','sink.primary-key'='k');
EXECUTE STATEMENT SET BEGIN
INSERT INTO fs_out
  SELECT x.k, x.window_start, x.c, x.s, b.w FROM
   (SELECT k, window_start, window_end, window_time, COUNT(*) AS c, SUM(v) AS s
      FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(ts), INTERVAL '2' SECOND))
      GROUP BY k, window_start, window_end, window_time) x
   JOIN b ON x.k = b.k AND b.ts BETWEEN x.window_time - INTERVAL '1' SECOND AND x.window_time;
INSERT INTO db_out SELECT k, COUNT(*), SUM(v) FROM a GROUP BY k;
END;
"""


def _inputs(root: Path) -> None:
    """Two files per table (one per worker), each in event-time order and the second one
    later than the first: no row is late, at parallelism 1 (files read one after the
    other) or 2 (read side by side; an operator's watermark is the minimum of both)."""
    (root / "in_a").mkdir(parents=True)
    (root / "in_b").mkdir()
    rng = random.Random(7)
    for part in range(2):
        with open(root / "in_a" / f"a{part}.csv", "w") as f:
            for i in range(part * 1500, (part + 1) * 1500):
                f.write(f"{rng.randrange(11)},{rng.randrange(1000)},{1_700_000_000_000 + i * 20}\n")
        with open(root / "in_b" / f"b{part}.csv", "w") as f:
            for i in range(part * 750, (part + 1) * 750):
                f.write(f"{rng.randrange(11)},{rng.randrange(100)},{1_700_000_000_000 + i * 40 + 10}\n")


def _databases(root: Path) -> set[str]:
    """The RocksDB working databases left under the jobs' local dir."""
    rocks = root / "rocks"
    return set(os.listdir(rocks)) if rocks.exists() else set()


def _committed(out: Path) -> tuple[list[str], list[tuple[object, ...]]]:
    return committed_lines(out / "fs"), duckdb_rows(out / "out.duckdb", "SELECT * FROM agg ORDER BY k")


@pytest.mark.timeout(1200)  # a dozen job runs: no wall-clock bound decides the result, only a hang fails it
def test_sigkill_and_restore_latest_at_parallelism_2_is_exactly_once(tmp_path: Path) -> None:
    _inputs(tmp_path)
    ref_job = tmp_path / "ref.sql"
    ref_job.write_text(JOB.format(root=tmp_path, out="ref", interval="0", backend="hashmap"))
    assert run_restoring(tmp_path, ref_job) == 0  # parallelism 1, no checkpoints
    expected = _committed(tmp_path / "ref")
    assert len(expected[0]) > 100 and len(expected[1]) == 11

    jobs = []
    for backend in ("hashmap", "rocksdb"):
        jobs.append(tmp_path / f"job-{backend}.sql")
        jobs[-1].write_text(JOB.format(root=tmp_path, out="run", interval="100 ms", backend=backend))
    rng = random.Random("parallel-faults")
    kills = 0
    code = -9
    for i in range(KILLS):
        job = jobs[i % 2] if i < KILLS - 1 else jobs[1]  # the last run (if it finishes): rocksdb
        left = _databases(tmp_path)  # a killed run leaves its databases, a finished one none
        point = POINTS[i % len(POINTS)]
        if point == "wall":
            code = run_restoring(tmp_path, job, kill_after=rng.uniform(2.0, 3.0), args=ARGS)
        else:
            n = rng.randint(2, 6) if point == "batch" else rng.randint(1, 3)
            env = {"STREAMSQL_FAULT_INJECT": f"{point}:{n}"}
            code = run_restoring(tmp_path, job, env, args=ARGS)
        if code == 0:  # the job finished before the fault point: the output is complete
            break
        kills += 1
        rows, _ = _committed(tmp_path / "run")
        assert not Counter(rows) - Counter(expected[0]), "a committed row is duplicated or wrong"
    if code != 0:
        left = _databases(tmp_path)
        assert run_restoring(tmp_path, jobs[1], args=ARGS) == 0
    assert kills >= KILLS // 2, f"only {kills} kills hit the job"
    assert _committed(tmp_path / "run") == expected
    metas = sorted((tmp_path / "chk").glob("*/chk-*/_metadata"))
    assert metas and '"parallelism": 2' in metas[-1].read_text()
    assert not [n for n in os.listdir(tmp_path / "run" / "fs") if n.startswith(".")]
    assert _databases(tmp_path) == left, "the finished run left RocksDB working databases behind"
