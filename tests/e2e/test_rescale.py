"""Savepoint -> restore with parallelism 1 -> 2 -> 1 gives the uninterrupted result (the
issue's "Done when"), through the CLI: a throttled streaming job (datagen -> filter into
the two-phase-commit filesystem sink, which runs in every worker, and a group aggregation
into the DuckDB upsert sink, which runs in the parent process) is
stopped with a savepoint from another process (`streamsql savepoint <job-id> <dir>
--stop`) at parallelism 1, restored at parallelism 2 (`--restore <path> --parallelism 2`),
stopped with a savepoint again and restored at parallelism 1 to the end. The committed
output equals an uninterrupted run's. A TUMBLE window aggregation (state keyed by
(window, key), key groups by the key the exchange routes by) has open windows at every
savepoint: each window must fire exactly once after the restores."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from clitools import ROOT, committed_lines, duckdb_rows, in_progress_files, run_cli, wait_for_sink_rows

N = 3000

JOB = """
SET 'execution.checkpointing.interval' = '1 h';
SET 'execution.checkpointing.dir' = 'file://{root}/chk';
SET 'table.exec.source.batch-rows' = '50';
CREATE TABLE gen (id BIGINT, ts AS TO_TIMESTAMP_LTZ(id * 100, 3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'datagen', 'rows-per-second' = '{rate}', 'fields.id.kind' = 'sequence',
        'fields.id.start' = '1', 'fields.id.end' = '{n}');
CREATE TABLE sel (id BIGINT, k INT)
  WITH ('connector' = 'filesystem', 'path' = '{out}/fs', 'format' = 'csv');
CREATE TABLE win (k INT, ws TIMESTAMP(3), c BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '{out}/win', 'format' = 'csv');
CREATE TABLE agg (k INT, c BIGINT, s BIGINT, PRIMARY KEY (k) NOT ENFORCED)
  WITH ('connector' = 'duckdb', 'path' = '{out}/agg.duckdb', 'table-name' = 'agg', 'sink.primary-key' = 'k');
EXECUTE STATEMENT SET BEGIN
INSERT INTO sel SELECT id, CAST(MOD(id, 7) AS INT) FROM gen WHERE MOD(id, 3) = 0;
INSERT INTO agg SELECT CAST(MOD(id, 5) AS INT), COUNT(*), SUM(id) FROM gen GROUP BY MOD(id, 5);
INSERT INTO win SELECT CAST(MOD(id, 5) AS INT), window_start, COUNT(*)
  FROM TABLE(TUMBLE(TABLE gen, DESCRIPTOR(ts), INTERVAL '20' SECOND))
  GROUP BY MOD(id, 5), window_start, window_end;
END;
"""


def _job(root: Path, out: str, rate: int) -> Path:
    path = root / f"{out}-{rate}.sql"
    path.write_text(JOB.format(root=root, out=root / out, rate=rate, n=N))
    return path


def _committed(out: Path) -> tuple[list[str], list[tuple[object, ...]], list[str]]:
    win = committed_lines(out / "win") if (out / "win").exists() else []
    return committed_lines(out / "fs"), duckdb_rows(out / "agg.duckdb", "SELECT * FROM agg ORDER BY k"), win


def _stop_with_savepoint(root: Path, job: Path, sp: str, *args: str) -> str:
    """Run `job` (with `args`) in another process, let it get into the stream, stop it with
    `streamsql savepoint <job-id> <dir> --stop`; returns the savepoint's path."""
    jobs = root / f"jobs-{sp}"
    out = root / "out"
    before = in_progress_files(out / "fs")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamsql.cli", "-f", str(job), *args],
        cwd=ROOT,
        env={**os.environ, "STREAMSQL_JOBS_DIR": str(jobs)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 300
        while not list(jobs.glob("*.json")):
            assert proc.poll() is None, proc.communicate()[1].decode()
            assert time.monotonic() < deadline, "the job never registered"
            time.sleep(0.1)
        wait_for_sink_rows(out / "fs", proc, before)  # into the stream: this run wrote rows
        jobs_dir = ("--jobs-dir", str(jobs))
        stop = subprocess.run(
            [
                sys.executable,
                "-m",
                "streamsql.cli",
                "savepoint",
                "1",
                str(root / sp),
                "--stop",
                "--timeout",
                "400",
                *jobs_dir,
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if stop.returncode != 0:
            proc.kill()
            raise AssertionError(f"{stop.stderr}\njob: {proc.communicate()[1].decode()}")
        assert proc.wait(300) == 0, proc.communicate()[1].decode()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=60)
    return stop.stdout.strip().split("Path: ")[1].split()[0]


@pytest.mark.timeout(1200)  # many job runs: no wall-clock bound decides the result, only a hang fails it
def test_savepoint_restore_with_parallelism_1_2_1_equals_uninterrupted(tmp_path: Path) -> None:
    ref = run_cli("-f", str(_job(tmp_path, "ref", 1_000_000)))
    assert ref.returncode == 0, ref.stderr
    expected = _committed(tmp_path / "ref")
    assert len(expected[0]) == N // 3 and len(expected[1]) == 5
    assert len(expected[2]) == len({(i % 5, i * 100 // 20_000) for i in range(1, N + 1)})  # (key, window)

    # Throttled to a minute of stream: each stop waits for this run's first rows, not for a
    # fixed time, and must still find the stream unfinished on a loaded machine.
    slow = _job(tmp_path, "out", 50)
    sp1 = _stop_with_savepoint(tmp_path, slow, "sp1")
    first = _committed(tmp_path / "out")[0]
    assert 0 < len(first) < len(expected[0]), "the first savepoint should be taken mid-stream"
    assert json.loads(Path(sp1, "_metadata").read_text())["parallelism"] == 1

    sp2 = _stop_with_savepoint(tmp_path, slow, "sp2", "--restore", sp1, "--parallelism", "2")
    second = _committed(tmp_path / "out")[0]
    assert len(first) < len(second) < len(expected[0]), "the second savepoint should be taken mid-stream"
    meta = json.loads(Path(sp2, "_metadata").read_text())
    assert meta["parallelism"] == 2
    assert any(len(o["subtasks"]) == 2 for o in meta["operators"])

    fast = _job(tmp_path, "out", 1_000_000)
    done = run_cli("-f", str(fast), "--restore", sp2, "--parallelism", "1")
    assert done.returncode == 0, done.stderr
    assert _committed(tmp_path / "out") == expected
    for sink in ("fs", "win"):
        assert not [n for n in os.listdir(tmp_path / "out" / sink) if n.startswith(".")]
