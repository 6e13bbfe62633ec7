"""A windowed Spark streaming job killed with SIGKILL in the middle of its first micro-batch
and restarted from the same checkpoint location commits exactly the output of an
uninterrupted run (TUMBLE aggregation, streamsql's WindowAggregate inside Structured Streaming,
into the exactly-once filesystem sink), its state in Spark's RocksDB state store.

"Committed" output is what Spark's file sink log (`_spark_metadata`) lists: a killed run may
leave part files of an uncommitted batch behind, and readers of the sink ignore them."""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from spark_util import run_script

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("pyspark") is None, reason="PySpark is not installed: pip install 'streamsql[spark]'"
)

JOB = """
CREATE TABLE src (k STRING, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = 'in', 'format' = 'csv');
CREATE TABLE snk (k STRING, ws TIMESTAMP(3), we TIMESTAMP(3), n BIGINT, s INT)
  WITH ('connector' = 'filesystem', 'path' = 'out', 'format' = 'csv');
INSERT INTO snk
SELECT k, window_start, window_end, COUNT(*), SUM(v)
FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY k, window_start, window_end;
"""


def _inputs(job: Path) -> None:
    (job / "in").mkdir(parents=True)  # one file: the runner refuses inputs whose file order makes rows late
    rows = [f"k{i % 3},{i},2024-01-01 00:{i // 60:02d}:{i % 60:02d}.000" for i in range(180)]
    (job / "in" / "0.csv").write_text("\n".join(rows) + "\n")
    (job / "job.sql").write_text(JOB)


def _cmd(ckpt: Path, extra: dict[str, str]) -> list[str]:
    conf = {
        "execution.checkpointing.dir": str(ckpt),
        "spark.master": "local[2]",
        "spark.sql.shuffle.partitions": "2",
        **extra,
    }
    sets = [x for k, v in conf.items() for x in ("-D", f"{k}={v}")]
    return ["python3", "-m", "streamsql.cli", "-f", "job.sql", "--mode", "streaming", "--runner", "spark", *sets]


def _fields(lines: list[str]) -> list[tuple[str, ...]]:
    """CSV lines as their fields, sorted. The values are compared, not the quoting: the
    local runner quotes as Flink's CSV writer (Jackson's loose rule: a value with a space
    is quoted), Spark's writer only values holding the delimiter or a quote
    (docs/spark.md)."""
    return sorted(tuple(row) for row in csv.reader(lines))


def committed_rows(out: Path) -> list[tuple[str, ...]]:
    """Rows of the part files the sink's log lists as committed (action 'add')."""
    files: set[str] = set()
    for log in (out / "_spark_metadata").iterdir():
        if log.name.startswith(".") or log.name.endswith(".crc"):
            continue
        for line in log.read_text().splitlines()[1:]:
            entry = json.loads(line)
            if entry.get("action") == "add":
                files.add(entry["path"])
    rows = []
    for p in files:
        local = Path(p[5:] if p.startswith("file:") else p)
        rows += [ln for ln in local.read_text().splitlines() if ln.strip()]
    return _fields(rows)


def _uninterrupted(ref: Path) -> list[tuple[str, ...]]:
    """The local runner's committed output of the job (published part files)."""
    run_script(JOB, "streaming", "local", ref)
    return _fields(
        [ln for f in (ref / "out").iterdir() if not f.name.startswith((".", "_")) for ln in f.read_text().splitlines()]
    )


def _run(job: Path, ckpt: Path, extra: dict[str, str]) -> None:
    out = subprocess.run(_cmd(ckpt, extra), cwd=job, capture_output=True, text=True, timeout=420)
    assert out.returncode == 0, out.stderr[-3000:]


def _kill_mid_batch(job: Path, ckpt: Path, extra: dict[str, str]) -> bool:
    """Start the job, SIGKILL its process group (the Python driver and its JVM) once the
    first micro-batch is planned (offsets/0 written) and before it commits; True when the
    kill did land before the commit."""
    proc = subprocess.Popen(
        _cmd(ckpt, extra),
        cwd=job,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: the JVM child dies with it
    )
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            if list(ckpt.glob("spark/*/sink-*/offsets/0")):
                break
            time.sleep(0.02)
        committed = bool(list(ckpt.glob("spark/*/sink-*/commits/0")))
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    return not committed and proc.returncode == -signal.SIGKILL


@pytest.mark.timeout(600)  # two Spark driver runs: minutes on a loaded machine
def test_windowed_job_killed_and_restarted_commits_the_uninterrupted_output(tmp_path: Path) -> None:
    extra: dict[str, str] = {}
    ref, job = tmp_path / "ref", tmp_path / "job"
    _inputs(ref)
    _inputs(job)
    expected = _uninterrupted(ref)
    assert len(expected) == 3 * 6 * 3  # 3 keys x 18 windows, all fired at the end of the input

    killed_mid_batch = _kill_mid_batch(job, tmp_path / "ckpt", extra)
    if not killed_mid_batch:
        pytest.skip("the first micro-batch committed before the kill landed (machine too fast to interrupt)")
    assert committed_rows(job / "out") != expected if (job / "out" / "_spark_metadata").exists() else True
    _run(job, tmp_path / "ckpt", extra)
    assert committed_rows(job / "out") == expected
    assert list((tmp_path / "ckpt").glob("spark/*/sink-*/state/**/*.zip")), "RocksDB state files expected"
