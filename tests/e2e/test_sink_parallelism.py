"""'sink.parallelism': the sink runs that many writer subtasks whatever the job's
parallelism (local executor at 1, worker processes at 2): a filesystem sink writes one part
file per writer, every row exactly once."""

from __future__ import annotations

from pathlib import Path

import pytest
from clitools import committed_lines, run_restoring

from streamsql import EnvironmentSettings, TableEnvironment


@pytest.mark.parametrize(("job_parallelism", "sink_parallelism"), [(1, 3), (2, 3), (2, 1)])
def test_filesystem_sink_writes_one_part_file_per_writer(
    tmp_path: Path, job_parallelism: int, sink_parallelism: int
) -> None:
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    env.get_config().set("parallelism.default", str(job_parallelism))
    env.get_config().set("table.exec.source.batch-rows", "500")
    env.execute_sql(
        "CREATE TABLE src (v BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '3000', "
        "'fields.v.kind' = 'sequence', 'fields.v.start' = '1', 'fields.v.end' = '3000')"
    )
    env.execute_sql(
        f"CREATE TABLE out_t (v BIGINT) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'out'}', "
        f"'format' = 'csv', 'sink.parallelism' = '{sink_parallelism}')"
    )
    env.execute_sql("INSERT INTO out_t SELECT v FROM src").wait()
    files = sorted((tmp_path / "out").glob("part-*"))
    # part-<uuid>-<writer>-<n>.csv: one writer subtask per file, numbered 0..p-1
    assert sorted(int(f.name.split("-")[-2]) for f in files) == list(range(sink_parallelism))
    values = sorted(int(line) for f in files for line in f.read_text().split())
    assert values == list(range(1, 3001))


def test_print_sink_numbers_its_writers_as_flink(capsys: pytest.CaptureFixture[str]) -> None:
    """Flink's print sink at a parallelism above 1 prefixes each line with its subtask
    ('<identifier>:<n>> ' with an identifier); the PRIMARY KEY sends a key to one writer."""
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    env.execute_sql(
        "CREATE TABLE p (k INT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'print', "
        "'print-identifier' = 'out', 'sink.parallelism' = '2')"
    )
    env.execute_sql("INSERT INTO p SELECT * FROM (VALUES (1), (2), (3), (4), (5), (6), (1))").wait()
    lines = capsys.readouterr().out.splitlines()
    assert sorted(line.split("> ")[1] for line in lines) == sorted(f"+I[{k}]" for k in (1, 2, 3, 4, 5, 6, 1))
    writers = {line.split("> ")[1]: line.split(">")[0] for line in lines}
    assert set(writers.values()) == {"out:1", "out:2"}
    assert len({line.split(">")[0] for line in lines if line.endswith("+I[1]")}) == 1  # one writer per key


@pytest.mark.parametrize(("identifier", "expected"), [("out", {"out:1", "out:2"}), ("", {"1", "2"})])
def test_print_sink_at_job_parallelism_names_its_subtask(
    capsys: pytest.CaptureFixture[str], identifier: str, expected: set[str]
) -> None:
    """Without 'sink.parallelism' the print sink has the job's parallelism: at 2 every line
    names the subtask that wrote it ('out:1> ', or '1> ' without an identifier), as Flink's
    PrintSinkOutputWriter does; it runs once in the parent process, which tells the workers'
    rows apart."""
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    env.get_config().set("parallelism.default", "2")
    with_id = f", 'print-identifier' = '{identifier}'" if identifier else ""
    env.execute_sql(f"CREATE TABLE p (k INT, n BIGINT) WITH ('connector' = 'print'{with_id})")
    rows = ", ".join(f"({k})" for k in range(12))
    env.execute_sql(f"INSERT INTO p SELECT k, COUNT(*) FROM (VALUES {rows}) AS t(k) GROUP BY k").wait()
    lines = capsys.readouterr().out.splitlines()
    assert sorted(line.split("> ")[1] for line in lines) == sorted(f"+I[{k}, 1]" for k in range(12))
    assert {line.split(">")[0] for line in lines} == expected  # both subtasks' rows, each named


RESTORE_JOB = """
SET 'table.exec.source.batch-rows' = '50';
SET 'execution.checkpointing.interval' = '50 ms';
SET 'execution.checkpointing.dir' = 'file://{root}/chk';
CREATE TABLE src (v BIGINT) WITH ('connector' = 'datagen', 'fields.v.kind' = 'sequence',
  'fields.v.start' = '1', 'fields.v.end' = '3000', 'rows-per-second' = '6000');
CREATE TABLE out_t (v BIGINT) WITH ('connector' = 'filesystem', 'path' = '{root}/out', 'format' = 'csv',
  'sink.parallelism' = '3');
INSERT INTO out_t SELECT v FROM src;
"""


@pytest.mark.parametrize("point", ["metadata:2", "commit:2"])
def test_writers_commit_exactly_once_after_a_restore(tmp_path: Path, point: str) -> None:
    """Killed between a checkpoint's completion and its commits (or after the first commit),
    the job restored from it commits every writer's pending part files once: the
    several-writer checkpoint format round-trips. The source is throttled to ~0.5 s so that
    the job completes several checkpoints (50 ms apart) however fast the machine is."""
    job = tmp_path / "job.sql"
    job.write_text(RESTORE_JOB.format(root=tmp_path))
    assert run_restoring(tmp_path, job, {"STREAMSQL_FAULT_INJECT": point}) == -9
    assert run_restoring(tmp_path, job) == 0
    assert sorted(int(v) for v in committed_lines(tmp_path / "out")) == list(range(1, 3001))
    assert {int(f.name.split("-")[-2]) for f in (tmp_path / "out").glob("part-*")} == {0, 1, 2}
