"""`streamsql list` and `streamsql savepoint <job-id> <dir>` against a job running in
another process (streamsql/control.py): a streaming job (throttled datagen → tumbling
window aggregation → partitioned two-phase-commit filesystem sink) is savepointed from a
second process mid-stream, killed with SIGKILL, and restored from that savepoint with
`--restore <path>`; the committed output equals an uninterrupted run's."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from clitools import ROOT, run_cli, wait_for_sink_rows

N = 2400

JOB = """
SET 'execution.checkpointing.interval' = '1 h';
SET 'execution.checkpointing.dir' = 'file://{root}/chk';
SET 'table.exec.source.batch-rows' = '50';
CREATE TABLE gen (id BIGINT, ts AS TO_TIMESTAMP_LTZ(id * 100, 3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'datagen', 'rows-per-second' = '{rate}', 'fields.id.kind' = 'sequence',
        'fields.id.start' = '1', 'fields.id.end' = '{n}');
CREATE TABLE out_t (ws TIMESTAMP(3), c BIGINT, s BIGINT, b INT) PARTITIONED BY (b)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'csv');
INSERT INTO out_t
  SELECT window_start, COUNT(*), SUM(id), CAST(MOD(id, 3) AS INT)
  FROM TABLE(TUMBLE(TABLE gen, DESCRIPTOR(ts), INTERVAL '2' SECOND))
  GROUP BY window_start, window_end, MOD(id, 3);
"""


def _job(root: Path, out: str, rate: int) -> Path:
    path = root / f"{out}.sql"
    path.write_text(JOB.format(root=root, out=root / out, rate=rate, n=N))
    return path


def _committed(out: Path) -> list[str]:
    """Published rows with their partition directory, sorted."""
    rows = []
    for dirpath, _dirs, names in os.walk(out):
        for name in names:
            if name.startswith("part-"):
                rel = os.path.relpath(dirpath, out)
                rows += [f"{rel}|{line}" for line in Path(dirpath, name).read_text().splitlines()]
    return sorted(rows)


def _env(jobs: Path) -> dict[str, str]:
    return {**os.environ, "STREAMSQL_JOBS_DIR": str(jobs)}


def _cli(jobs: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "streamsql.cli", *args, "--jobs-dir", str(jobs)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_savepoint_from_another_process_then_restore_equals_uninterrupted(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs"
    # The reference: the same job, uninterrupted (the rate does not change the result).
    ref = run_cli("-f", str(_job(tmp_path, "ref", 1_000_000)))
    assert ref.returncode == 0, ref.stderr
    expected = _committed(tmp_path / "ref")
    assert len(expected) > 100

    proc = subprocess.Popen(
        # throttled to a minute of stream: still running when the savepoint comes, however loaded the machine
        [sys.executable, "-m", "streamsql.cli", "-f", str(_job(tmp_path, "out", 40))],
        cwd=ROOT,
        env=_env(jobs),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 300
        while not list(jobs.glob("*.json")):
            assert proc.poll() is None, proc.communicate()[1].decode()
            assert time.monotonic() < deadline, "the job never registered"
            time.sleep(0.1)
        listed = _cli(jobs, "list")
        assert listed.returncode == 0 and "Running/Restarting Jobs" in listed.stdout
        assert f"[pid {proc.pid}]" in listed.stdout and "insert-into_default_catalog" in listed.stdout
        job_id = listed.stdout.split(" : ")[1]

        unknown = _cli(jobs, "savepoint", "ffff", str(tmp_path / "sp"))
        assert unknown.returncode == 1
        assert "No running job 'ffff'" in unknown.stderr and job_id in unknown.stderr
        assert "Traceback" not in unknown.stderr

        wait_for_sink_rows(tmp_path / "out", proc)  # into the stream: a window fired and was written
        sp = _cli(jobs, "savepoint", job_id[:8], str(tmp_path / "sp"), "--timeout", "400")
        assert sp.returncode == 0, sp.stderr
        path = sp.stdout.strip().split("Path: ")[1]
        assert Path(path, "_metadata").is_file() and path.startswith(str(tmp_path / "sp"))
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
    at_savepoint = _committed(tmp_path / "out")
    assert 0 < len(at_savepoint) < len(expected), "the savepoint should be taken mid-stream"
    assert _cli(jobs, "list").stdout.strip() == "No running jobs."  # the stale entry is ignored...
    assert not list(jobs.glob("*.json"))  # ...and cleaned up

    restored = run_cli("-f", str(_job(tmp_path, "out", 1_000_000)), "--restore", path)
    assert restored.returncode == 0, restored.stderr
    assert _committed(tmp_path / "out") == expected


def test_stop_with_savepoint_from_another_process(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs"
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamsql.cli", "-f", str(_job(tmp_path, "out", 50))],
        cwd=ROOT,
        env=_env(jobs),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 300
        while not list(jobs.glob("*.json")):
            assert proc.poll() is None, proc.communicate()[1].decode()
            assert time.monotonic() < deadline, "the job never registered"
            time.sleep(0.1)
        stop = _cli(jobs, "savepoint", "1", str(tmp_path / "sp"), "--stop", "--timeout", "400")
        assert stop.returncode == 0, stop.stderr
        assert "Savepoint completed. Path: " in stop.stdout and "stopped" in stop.stdout
        assert proc.wait(300) == 0
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
    assert not list(jobs.glob("*.json"))  # unregistered at the end
