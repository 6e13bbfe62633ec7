"""`streamsql --parallelism 2 -f job.sql`: the real command, with worker processes."""

from __future__ import annotations

from pathlib import Path

from clitools import run_cli

JOB = """
CREATE TABLE src (k INT, v BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '200000',
  'fields.k.min' = '1', 'fields.k.max' = '5', 'fields.v.kind' = 'sequence',
  'fields.v.start' = '1', 'fields.v.end' = '200000');
CREATE TABLE out_t (k INT, c BIGINT, s BIGINT) WITH ('connector' = 'filesystem', 'path' = '{out}',
  'format' = 'csv');
SET 'execution.runtime-mode' = 'batch';
INSERT INTO out_t SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k;
"""


def test_cli_parallelism_2_writes_the_same_table(tmp_path: Path) -> None:
    job = tmp_path / "job.sql"
    out = tmp_path / "out"
    job.write_text(JOB.format(out=out))
    proc = run_cli("--parallelism", "2", "--stats", "-f", str(job))
    assert proc.returncode == 0, proc.stderr
    rows = [line.split(",") for f in sorted(out.rglob("part-*")) for line in f.read_text().splitlines() if line]
    assert len(rows) == 5  # one row per key: every key aggregated in one worker
    assert sum(int(r[1]) for r in rows) == 200000
    assert sum(int(r[2]) for r in rows) == 200000 * 200001 // 2
    assert "backpressured ms" in proc.stdout + proc.stderr
