"""The `streamsql` command end to end, as a user runs it (a real subprocess)."""

from __future__ import annotations

import json
from pathlib import Path

from clitools import run_cli


def test_select_expression() -> None:
    p = run_cli("-e", "SELECT 1 + 1 AS two", "--format", "jsonl")
    assert p.returncode == 0, p.stderr
    assert [json.loads(line) for line in p.stdout.splitlines()] == [{"op": "+I", "row": ["2"]}]


def test_tableau_output_has_op_column_in_streaming() -> None:
    p = run_cli("-e", "SELECT 'a' AS k, 2 AS v")
    assert p.returncode == 0, p.stderr
    assert "| op |" in p.stdout and "| +I |" in p.stdout
    assert "Received a total of 1 row" in p.stdout


def test_example_job_same_final_table_in_both_modes() -> None:
    stream = run_cli("-f", "examples/clicks_per_minute.sql", "--format", "jsonl")
    batch = run_cli("-f", "examples/clicks_per_minute.sql", "--format", "jsonl", "--mode", "batch")
    assert stream.returncode == 0, stream.stderr
    assert batch.returncode == 0, batch.stderr
    s_rows = sorted(json.loads(line)["row"] for line in stream.stdout.splitlines())
    b_rows = sorted(json.loads(line)["row"] for line in batch.stdout.splitlines())
    assert len(b_rows) > 5
    # streaming drops late rows (the example has a few out-of-order clicks within the
    # 5 s watermark delay, so nothing is late): both modes agree
    assert s_rows == b_rows


def test_sql_error_has_position_and_caret_and_no_traceback(tmp_path: Path) -> None:
    script = tmp_path / "bad.sql"
    script.write_text(
        "CREATE TABLE t (k STRING, v INT) WITH ('connector' = 'datagen');\n\nSELECT k,\n       amount\nFROM t;\n"
    )
    p = run_cli("-f", str(script))
    assert p.returncode != 0
    assert "Traceback" not in p.stderr
    assert "line 2, column 8" in p.stderr
    assert "amount" in p.stderr and "^" in p.stderr


def test_runtime_error_names_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "d.csv").write_text("a,1\nb,\n")
    script = tmp_path / "job.sql"
    script.write_text(
        "CREATE TABLE p (k STRING, v INT) WITH ('connector'='filesystem','path'='d.csv','format'='csv');\n"
        "SELECT k, v FROM p;\n"
    )
    p = run_cli("-f", str(script), cwd=tmp_path)
    assert p.returncode != 0
    assert "Traceback" not in p.stderr
    assert "d.csv" in p.stderr and "line 2" in p.stderr


def test_script_from_stdin() -> None:
    p = run_cli("--format", "jsonl", stdin="SELECT 40 + 2 AS answer;")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout.splitlines()[0])["row"] == ["42"]


def test_script_file_problems_are_clean_errors_naming_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "latin1.sql"
    bad.write_bytes(b"SELECT 'caf\xe9';\n")
    for path, words in ((bad, "not UTF-8"), (tmp_path, "Is a directory"), (tmp_path / "nope.sql", "No such file")):
        p = run_cli("-f", str(path))
        assert p.returncode != 0
        assert str(path) in p.stderr and words in p.stderr and "Traceback" not in p.stderr, p.stderr


def test_rows_skipped_by_ignore_parse_errors_are_counted_and_summarized(tmp_path: Path) -> None:
    # rows with too many fields are skipped (a bad field alone becomes NULL, and so do the
    # missing fields of a short row, as in Flink)
    (tmp_path / "in.csv").write_text("1,10\n2,20,99\n3,30\n4,5,6\n")
    script = tmp_path / "job.sql"
    script.write_text(
        f"CREATE TABLE t (k INT, v INT) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'in.csv'}', "
        "'format' = 'csv', 'csv.ignore-parse-errors' = 'true');\n"
        "SELECT k, v FROM t;\n"
    )
    p = run_cli("--mode", "batch", "--stats", "-f", str(script))
    assert p.returncode == 0, p.stderr
    assert "2 input row(s) could not be parsed and were skipped" in p.stderr, p.stderr
    assert "skipped rows" in p.stderr  # the --stats column


def test_a_spilled_batch_join_prints_every_row_and_leaves_no_spill_files(tmp_path: Path) -> None:
    # the command ends without the interpreter's teardown (streamsql/start_up.py end_process):
    # its output must still be complete (more than a pipe's buffer) and the join's spill
    # directory gone
    spill = tmp_path / "spill"
    script = tmp_path / "job.sql"
    script.write_text(
        "SET 'execution.runtime-mode' = 'batch';\n"
        "SET 'taskmanager.memory.managed.size' = '16kb';\n"
        "SET 'table.exec.source.batch-rows' = '256';\n"
        f"SET 'io.tmp.dirs' = '{spill}';\n"
        "CREATE TABLE a (k BIGINT) WITH ('connector'='datagen','number-of-rows'='6000',\n"
        "  'fields.k.kind'='sequence','fields.k.start'='1','fields.k.end'='6000');\n"
        "CREATE TABLE b (k BIGINT) WITH ('connector'='datagen','number-of-rows'='6000',\n"
        "  'fields.k.kind'='sequence','fields.k.start'='1','fields.k.end'='6000');\n"
        "SELECT a.k, b.k * 2 AS twice FROM a JOIN b ON a.k = b.k;\n"
    )
    p = run_cli("-f", str(script), "--format", "jsonl")
    assert p.returncode == 0, p.stderr
    rows = [json.loads(line)["row"] for line in p.stdout.splitlines() if line.startswith("{")]
    assert sorted(int(k) for k, _ in rows) == list(range(1, 6001))
    assert spill.is_dir()  # the join did spill there
    assert list(spill.iterdir()) == []
