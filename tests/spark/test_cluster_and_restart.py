"""A real standalone Spark cluster (master + one worker on 127.0.0.1), scalar functions on
edge values against the local runner, and a streaming job restarted from its checkpoint."""

from __future__ import annotations

import importlib.util
import itertools
import subprocess
from pathlib import Path
from typing import Any

import pytest
from harness import final_table
from spark_util import run_script

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("pyspark") is None, reason="PySpark is not installed: pip install 'streamsql[spark]'"
)

EDGE_SQL = """
CREATE TABLE t (a INT, b INT, s STRING, d DOUBLE, m DECIMAL(10, 2)) WITH (
  'connector' = 'filesystem', 'path' = 'in.csv', 'format' = 'csv', 'csv.null-literal' = 'NULL');
SELECT a / b, MOD(a, b), -a, a + 2147483647, ABS(a), FLOOR(d), CEIL(d), ROUND(m, 1), ROUND(d, 0),
       UPPER(s), CHAR_LENGTH(s), TRIM(s), SUBSTRING(s FROM 2 FOR 2), s LIKE 'a%', s || 'x',
       COALESCE(s, 'none'), GREATEST(a, b), LEAST(a, b), CAST(a AS STRING), CAST(m AS STRING),
       CAST(a > b AS STRING), a IS DISTINCT FROM b, CASE WHEN a > 0 THEN 'pos' ELSE 'neg' END,
       LN(d), LOG10(d), NULLIF(a, 1), IF(b IS NULL, 0, b), a IN (1, 2, 3), TRY_CAST(s AS INT)
FROM t WHERE b <> 0 OR b IS NULL
"""
EDGE_ROWS = "7,-2, abc ,2.5,1.25\n-7,2,a_c,-2.5,-1.25\n2147483647,1,12,0,0.05\nNULL,NULL,NULL,NULL,NULL\n0,3,x,0.5,99999999.99\n"


def test_scalar_functions_match_local_runner_on_edge_values(spark: Any, tmp_path: Path) -> None:
    (tmp_path / "in.csv").write_text(EDGE_ROWS)
    for mode in ("batch", "streaming"):
        local = run_script(EDGE_SQL, mode, "local", tmp_path)
        on_spark = run_script(EDGE_SQL, mode, "spark", tmp_path)
        assert final_table(on_spark) == final_table(local), mode
        assert len(local) == 5


def test_unsupported_function_is_refused_before_running(spark: Any, tmp_path: Path) -> None:
    from planner.errors import SqlError

    (tmp_path / "in.csv").write_text(EDGE_ROWS)
    sql = EDGE_SQL.split("SELECT")[0] + "SELECT REPEAT(s, 2) FROM t"
    with pytest.raises(SqlError, match="REPEAT is not supported by the Spark runner"):
        run_script(sql, "batch", "spark", tmp_path)


STREAM_SQL = """
CREATE TABLE src (k STRING, v INT) WITH ('connector' = 'filesystem', 'path' = 'in', 'format' = 'csv');
CREATE TABLE snk (k STRING, v2 INT) WITH ('connector' = 'filesystem', 'path' = 'out', 'format' = 'csv');
INSERT INTO snk SELECT UPPER(k), v * 2 FROM src WHERE v > 0;
"""


def _sink_rows(out: Path) -> list[str]:
    return sorted(
        line for f in out.rglob("part-*") if f.is_file() for line in f.read_text().splitlines() if line.strip()
    )


def test_streaming_job_restarted_from_checkpoint_gives_uninterrupted_output(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The job's checkpoint location is its job id's (as a re-run of the script in a new
    process numbers its jobs from 1 again): restarted with its plan it resumes; restarted
    with a changed plan it fails naming what changed, and writes nothing."""
    from runtime.checkpoint.restore import RestoreError
    from streamsql import environment

    def new_process() -> None:
        monkeypatch.setattr(environment, "_job_ids", itertools.count(1))

    conf = {"execution.checkpointing.dir": str(tmp_path / "ckpt")}
    first, second = "a,1\nb,-1\nc,3\n", "d,4\ne,0\nf,6\n"
    # Interrupted: the job stops after the first file; restarted, it resumes from its checkpoint.
    job = tmp_path / "job"
    (job / "in").mkdir(parents=True)
    (job / "in" / "1.csv").write_text(first)
    new_process()
    run_script(STREAM_SQL, "streaming", "spark", job, conf)
    assert len(_sink_rows(job / "out")) == 2
    (job / "in" / "2.csv").write_text(second)
    new_process()
    run_script(STREAM_SQL, "streaming", "spark", job, conf)
    # The source renamed (another table: its offsets do not carry over): refused, nothing written.
    new_process()
    changed = STREAM_SQL.replace("src", "src2")
    with pytest.raises(RestoreError, match=r"operators no longer in the job: TableSourceScan.*\n.*new to the job"):
        run_script(changed, "streaming", "spark", job, conf)
    assert len(_sink_rows(job / "out")) == 4
    # Uninterrupted: both files in one run, fresh checkpoints.
    ref = tmp_path / "ref"
    (ref / "in").mkdir(parents=True)
    (ref / "in" / "1.csv").write_text(first)
    (ref / "in" / "2.csv").write_text(second)
    run_script(STREAM_SQL, "streaming", "spark", ref, {"execution.checkpointing.dir": str(tmp_path / "ckpt2")})
    assert _sink_rows(job / "out") == _sink_rows(ref / "out") == ["A,2", "C,6", "D,8", "F,12"]


@pytest.mark.timeout(900)  # a driver, executor JVMs and Python workers: minutes on a loaded machine
def test_job_on_a_standalone_cluster(spark_cluster: Any, tmp_path: Path) -> None:
    """A separate Python process (its own SparkSession) submits to a real master + worker
    (the session's cluster, tests/servers/spark_cluster.py: starting one costs two JVMs)."""
    (tmp_path / "in.csv").write_text("a,1\nb,2\na,3\n")
    sql = (
        "CREATE TABLE t (k STRING, v INT) WITH ('connector'='filesystem','path'='in.csv','format'='csv');\n"
        "SELECT k, SUM(v) AS s, COUNT(*) AS c FROM t GROUP BY k;\n"
    )
    (tmp_path / "job.sql").write_text(sql)
    cmd = ["python3", "-m", "streamsql.cli", "-f", "job.sql", "--mode", "batch", "--runner", "spark",
           "--master", spark_cluster.master_url, "--format", "jsonl", "-D", "spark.executor.memory=512m"]  # fmt: skip
    out = subprocess.run(cmd, cwd=tmp_path, env=spark_cluster.env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    rows = sorted(out.stdout.splitlines())
    assert rows == ['{"op": "+I", "row": ["a", "4", "2"]}', '{"op": "+I", "row": ["b", "2", "1"]}']
