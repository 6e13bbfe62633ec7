"""Fault injection: a job with a window aggregation, an interval join, a group
aggregation, a regular join with an updating side and a Top-N over it writes to a two-phase-commit filesystem sink and to the DuckDB upsert sink; the
process is killed with SIGKILL at random points (during processing, right after a
snapshot, after the state upload but before `_metadata`, after the checkpoint completed
but before the sinks committed, between the two sinks' commits, and at random wall-clock
moments), restarted each time with `--restore latest`, and the committed output must equal
an uninterrupted run's exactly (no row lost, none duplicated), with both state backends.

Kill points per backend: KILLS (10; 20 in all), to keep the test near a minute. No
wall-clock bound: each run ends at its fault point, the loop after KILLS runs, and however
slow a loaded machine is, only a hung run fails the test (pytest-timeout).
"""

from __future__ import annotations

import os
import random
from collections import Counter
from pathlib import Path

import pytest
from clitools import committed_lines, duckdb_rows, run_restoring

KILLS = 10
POINTS = ("batch", "batch", "snapshot", "upload", "metadata", "commit", "wall")

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
CREATE TABLE top_out (k INT, rn BIGINT, v BIGINT, mw BIGINT, PRIMARY KEY (k, rn) NOT ENFORCED)
  WITH ('connector'='duckdb','path'='{root}/{out}/top.duckdb','table-name'='top','sink.primary-key'='k,rn');
EXECUTE STATEMENT SET BEGIN
INSERT INTO fs_out
  SELECT x.k, x.window_start, x.c, x.s, b.w FROM
   (SELECT k, window_start, window_end, window_time, COUNT(*) AS c, SUM(v) AS s
      FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(ts), INTERVAL '2' SECOND))
      GROUP BY k, window_start, window_end, window_time) x
   JOIN b ON x.k = b.k AND b.ts BETWEEN x.window_time - INTERVAL '1' SECOND AND x.window_time;
INSERT INTO db_out SELECT k, COUNT(*), SUM(v) FROM a GROUP BY k;
INSERT INTO top_out SELECT k, rn, v, mw FROM (
  SELECT k, v, mw, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v + mw DESC, v DESC) AS rn FROM
   (SELECT a.k, a.v, g.mw FROM a JOIN (SELECT k, MAX(w) AS mw FROM b GROUP BY k) g ON a.k = g.k))
  WHERE rn <= 3;
END;
"""


def _inputs(root: Path) -> None:
    (root / "in_a").mkdir(parents=True)
    (root / "in_b").mkdir()
    rng = random.Random(7)
    with open(root / "in_a" / "a.csv", "w") as f:
        for i in range(4000):
            f.write(f"{rng.randrange(11)},{rng.randrange(1000)},{1_700_000_000_000 + i * 20}\n")
    with open(root / "in_b" / "b.csv", "w") as f:
        for i in range(2000):
            f.write(f"{rng.randrange(11)},{rng.randrange(100)},{1_700_000_000_000 + i * 40 + 10}\n")


def _committed(out: Path) -> tuple[list[str], list[tuple[object, ...]]]:
    table = duckdb_rows(out / "out.duckdb", "SELECT * FROM agg ORDER BY k")
    table += duckdb_rows(out / "top.duckdb", "SELECT * FROM top ORDER BY k, rn")
    return committed_lines(out / "fs"), table


@pytest.mark.timeout(1200)  # a dozen job runs: no wall-clock bound decides the result, only a hang fails it
@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
def test_sigkill_and_restore_latest_is_exactly_once(tmp_path: Path, backend: str) -> None:
    _inputs(tmp_path)
    ref_job = tmp_path / "ref.sql"
    ref_job.write_text(JOB.format(root=tmp_path, backend=backend, out="ref", interval="0"))
    assert run_restoring(tmp_path, ref_job) == 0
    expected = _committed(tmp_path / "ref")
    assert len(expected[0]) > 100 and len(expected[1]) == 11 + 33  # agg rows + Top-3 of the join per key

    job = tmp_path / "job.sql"
    job.write_text(JOB.format(root=tmp_path, backend=backend, out="run", interval="100 ms"))
    rng = random.Random(f"faults-{backend}")
    kills = 0
    for i in range(KILLS):
        point = POINTS[i % len(POINTS)]
        if point == "wall":
            code = run_restoring(tmp_path, job, kill_after=rng.uniform(0.8, 1.6))
        else:
            # Few batches per run, so every restart makes bounded progress and all the kill
            # points land before the job's 100 input batches are done, however fast it runs.
            n = rng.randint(2, 8) if point == "batch" else rng.randint(1, 3)
            code = run_restoring(tmp_path, job, {"STREAMSQL_FAULT_INJECT": f"{point}:{n}"})
        if code == 0:  # the job finished before the fault point: the output is complete
            break
        kills += 1
        # Whatever is committed so far is part of the final output: never a duplicate.
        rows, _ = _committed(tmp_path / "run")
        assert not Counter(rows) - Counter(expected[0]), "a committed row is duplicated or wrong"
    if code != 0:
        assert run_restoring(tmp_path, job) == 0
    assert kills >= KILLS // 2, f"only {kills} kills hit the job"
    assert _committed(tmp_path / "run") == expected
    # nothing uncommitted is left behind in the sink directory
    assert not [n for n in os.listdir(tmp_path / "run" / "fs") if n.startswith(".")]
