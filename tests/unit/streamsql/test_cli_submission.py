"""`streamsql -f` submits INSERT jobs as Flink's client does (table.dml-sync = false): it
prints the job id and goes on, so the INSERTs of one script run side by side; a statement
reading a table a running job writes waits for it; the script's end waits for the rest."""

from __future__ import annotations

import io
from pathlib import Path

from streamsql.cli import EXIT_OK, Runner, build_parser


def _runner() -> tuple[Runner, io.StringIO]:
    out = io.StringIO()
    return Runner(build_parser().parse_args([]), out, out), out


def test_unbounded_inserts_of_one_script_run_side_by_side() -> None:
    runner, out = _runner()
    script = (
        "CREATE TABLE gen (x BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '50');\n"
        "CREATE TABLE a (x BIGINT) WITH ('connector' = 'blackhole');\n"
        "CREATE TABLE b (x BIGINT) WITH ('connector' = 'blackhole');\n"
        "INSERT INTO a SELECT x FROM gen;\n"
        "INSERT INTO b SELECT x FROM gen;\n"
    )
    assert runner.run_script(script, "job.sql") == EXIT_OK
    jobs = [result.job for result, _, _ in runner._submitted]
    try:
        assert len(jobs) == 2 and all(j is not None and j.is_running() for j in jobs)
        assert out.getvalue().count("Job ID: ") == 2
        assert "Complete execution" not in out.getvalue()
    finally:
        for result, _, _ in runner._submitted:
            result.cancel()
    assert runner.finish() == EXIT_OK
    assert not any(j.is_running() for j in jobs if j is not None)


def test_a_statement_reading_a_sink_waits_for_its_job(tmp_path: Path) -> None:
    runner, out = _runner()
    script = (
        f"CREATE TABLE t (k STRING, v INT) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 't'}', "
        "'format' = 'csv');\n"
        "CREATE VIEW v AS SELECT k, v FROM t;\n"
        "SET 'execution.runtime-mode' = 'batch';\n"
        "INSERT INTO t VALUES ('a', 1), ('b', 2), ('c', 3);\n"
        "SELECT COUNT(*) AS n, SUM(v) AS s FROM v;\n"
    )
    assert runner.run_script(script, "job.sql") == EXIT_OK
    text = out.getvalue()
    assert "Job ID: " in text
    assert "| 3 | 6 |" in text
    assert not runner._submitted  # the SELECT waited for the INSERT
    assert runner.finish() == EXIT_OK


def test_dml_sync_waits_for_each_insert() -> None:
    runner, out = _runner()
    script = (
        "SET 'table.dml-sync' = 'true';\n"
        "CREATE TABLE s (x INT) WITH ('connector' = 'blackhole');\n"
        "INSERT INTO s VALUES (1), (2);\n"
    )
    assert runner.run_script(script, "job.sql") == EXIT_OK
    assert "[INFO] Complete execution of the SQL update statement." in out.getvalue()
    assert "Job ID" not in out.getvalue() and not runner._submitted


def test_a_failed_submitted_job_makes_the_exit_code_an_error(tmp_path: Path) -> None:
    runner, out = _runner()
    script = (
        "CREATE TABLE src (x INT) WITH ('connector' = 'datagen', 'number-of-rows' = '3');\n"
        "CREATE TABLE s (x INT NOT NULL) WITH ('connector' = 'blackhole');\n"
        "INSERT INTO s SELECT CAST(NULL AS INT) FROM src;\n"
    )
    assert runner.run_script(script, "job.sql") == EXIT_OK
    assert runner.finish() == 1
    assert "[ERROR]" in out.getvalue()


def test_a_query_over_a_ctas_table_waits_for_it(tmp_path: Path) -> None:
    runner, out = _runner()
    script = (
        "SET 'execution.runtime-mode' = 'batch';\n"
        f"CREATE TABLE t WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 't'}', 'format' = 'csv') "
        "AS SELECT * FROM (VALUES (1), (2), (3)) AS v(x);\n"
        "SELECT SUM(x) AS s FROM t;\n"
    )
    assert runner.run_script(script, "job.sql") == EXIT_OK
    assert "| 6 |" in out.getvalue() and not runner._submitted


def test_a_reader_of_an_unbounded_jobs_sink_runs_beside_it(tmp_path: Path) -> None:
    """As in Flink: the job never ends, so the statement after it does not wait for it."""
    runner, out = _runner()
    (tmp_path / "t").mkdir()
    script = (
        "CREATE TABLE gen (x BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '20');\n"
        f"CREATE TABLE t (x BIGINT) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 't'}', "
        "'format' = 'csv');\n"
        "INSERT INTO t SELECT x FROM gen;\n"
        "SHOW JOBS;\n"
        "SET 'execution.runtime-mode' = 'batch';\n"
        "SELECT COUNT(*) AS n FROM t;\n"  # waiting for the job here would never end
    )
    try:
        assert runner.run_script(script, "job.sql") == EXIT_OK
        (result, _, _), *_ = runner._submitted
        assert result.job is not None and not result.job.bounded and result.job.is_running()
        assert "RUNNING" in out.getvalue()
    finally:
        for result, _, _ in runner._submitted:
            result.cancel()
        runner.finish()
