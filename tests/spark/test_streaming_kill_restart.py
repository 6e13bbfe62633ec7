"""A STREAMING job with a regular join and a Top-N over an aggregate (three of streamsql's own
operators inside Structured Streaming, runtime/executor/spark/stateful.py) on a real standalone
Spark master and worker: the driver is killed with SIGKILL in the middle of a micro-batch and
restarted on its checkpoint; the changelog it printed over all its runs gives the final table
of an uninterrupted run. The uninterrupted run is the local runner's over the same files: the
differential tests (test_differential.py) hold Spark's uninterrupted runs equal to it, and a
third Spark run here would add half a minute to the suite."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from harness import final_table
from spark_util import run_script

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("pyspark") is None, reason="PySpark is not installed: pip install 'streamsql[spark]'"
)

SQL = """
CREATE TABLE persons (id INT, name STRING) WITH ('connector' = 'filesystem', 'path' = 'persons', 'format' = 'csv');
CREATE TABLE bids (person INT, price INT) WITH ('connector' = 'filesystem', 'path' = 'bids', 'format' = 'csv');
SELECT name, total FROM (
  SELECT name, total, ROW_NUMBER() OVER (ORDER BY total DESC) AS rn FROM (
    SELECT p.name, SUM(b.price) AS total FROM bids b JOIN persons p ON b.person = p.id GROUP BY p.name))
WHERE rn <= 3;
"""
PERSONS = 12


def _bids(rows: int, salt: int) -> str:
    # Person i bids i * 1000 + salt: totals differ, so the Top-3 has no ties.
    return "".join(f"{i % PERSONS},{(i % PERSONS) * 1000 + salt}\n" for i in range(rows))


def _cli(job: Path, master: str, env: dict[str, str], ckpt: Path) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-m", "streamsql.cli", "-f", "job.sql", "--mode", "streaming", "--runner", "spark",
           "--master", master, "--format", "jsonl", "-D", f"execution.checkpointing.dir={ckpt}",
           "-D", "spark.executor.memory=512m", "-D", "spark.sql.shuffle.partitions=2"]  # fmt: skip
    return subprocess.Popen(
        cmd, cwd=job, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )


def _finish(p: subprocess.Popen[str]) -> list[dict[str, Any]]:
    out, err = p.communicate(timeout=400)
    assert p.returncode == 0, err[-3000:]
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def _batches(ckpt: Path, kind: str) -> set[int]:
    return {int(f.name) for f in ckpt.glob(f"spark/*/result/{kind}/*") if f.name.isdigit()}


def _job(tmp: Path, name: str) -> Path:
    job = tmp / name
    (job / "persons").mkdir(parents=True)
    (job / "bids").mkdir()
    (job / "persons" / "p.csv").write_text("".join(f"{i},p{i}\n" for i in range(PERSONS)))
    (job / "bids" / "1.csv").write_text(_bids(600, 1))
    (job / "job.sql").write_text(SQL)
    return job


@pytest.mark.timeout(600)  # three Spark driver runs: minutes on a loaded machine
def test_killed_mid_batch_and_restarted_gives_the_uninterrupted_result(spark_cluster: Any, tmp_path: Path) -> None:
    master, env = spark_cluster.master_url, spark_cluster.env
    # A micro-batch that takes seconds, so the kill (within 50 ms of its offsets file) lands
    # inside it: the first file's 600 rows already take seconds (the processors' Python
    # workers, state store commits); 20x that keeps it well inside.
    second = _bids(12_000, 2)

    # Uninterrupted: both files, one run (the local runner).
    ref = _job(tmp_path, "ref")
    (ref / "bids" / "2.csv").write_text(second)
    uninterrupted = final_table(run_script(SQL, "streaming", "local", ref))
    assert len(uninterrupted) == 3

    # Interrupted: the first file; then the second, killed mid-batch; then restarted.
    job = _job(tmp_path, "job")
    ckpt = tmp_path / "ckpt"
    rows = _finish(_cli(job, master, env, ckpt))
    done = _batches(ckpt, "commits")
    (job / "bids" / "2.csv").write_text(second)
    p = _cli(job, master, env, ckpt)
    deadline = time.monotonic() + 300
    while not (_batches(ckpt, "offsets") - done):  # the new micro-batch has started
        assert p.poll() is None and time.monotonic() < deadline, "the job ended before its second batch started"
        time.sleep(0.05)
    os.killpg(p.pid, signal.SIGKILL)
    out, _ = p.communicate(timeout=60)
    killed = _batches(ckpt, "offsets") - _batches(ckpt, "commits")
    assert killed, "the batch was committed before the kill: not mid-batch"
    rows += [json.loads(line) for line in out.splitlines() if line.strip()]
    rows += _finish(_cli(job, master, env, ckpt))

    assert final_table(rows) == uninterrupted
