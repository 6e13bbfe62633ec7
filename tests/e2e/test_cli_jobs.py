"""CLI jobs end to end: INSERT INTO and statement sets, inspection statements, and
unbounded jobs over a monitored directory that stop cleanly on Ctrl-C."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from clitools import ROOT, run_cli

CLICKS = ROOT / "examples" / "data" / "clicks.csv"
SOURCE = f"""
CREATE TABLE clicks (
  user_name STRING, url STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = '{CLICKS}', 'format' = 'csv');
"""


def test_insert_into_filesystem_then_read_back(tmp_path: Path) -> None:
    script = tmp_path / "job.sql"
    script.write_text(
        SOURCE
        + """
CREATE TABLE per_user (user_name STRING, n BIGINT) WITH ('connector' = 'filesystem', 'path' = 'out', 'format' = 'json');
INSERT INTO per_user SELECT user_name, COUNT(*) FROM clicks GROUP BY user_name;
SELECT user_name, n FROM per_user;
"""
    )
    p = run_cli("-f", str(script), "--mode", "batch", "--format", "jsonl", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "Job ID:" in p.stderr
    rows = sorted(json.loads(line)["row"] for line in p.stdout.splitlines())
    assert rows == [["alice", "19"], ["bob", "16"], ["carol", "13"], ["dave", "12"]]
    assert [f.name for f in (tmp_path / "out").iterdir()][0].startswith("part-")


def test_statement_set_with_print_sink(tmp_path: Path) -> None:
    script = tmp_path / "job.sql"
    script.write_text(
        SOURCE
        + """
CREATE TABLE shout (user_name STRING, n BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'w');
CREATE TABLE quiet (user_name STRING) WITH ('connector' = 'blackhole');
EXECUTE STATEMENT SET BEGIN
  INSERT INTO shout SELECT user_name, COUNT(*) FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' MINUTE))
    GROUP BY window_start, window_end, user_name;
  INSERT INTO quiet SELECT user_name FROM clicks;
END;
"""
    )
    p = run_cli("-f", str(script), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    printed = sorted(line for line in p.stdout.splitlines() if line.startswith("w> "))
    assert printed == ["w> +I[alice, 19]", "w> +I[bob, 16]", "w> +I[carol, 13]", "w> +I[dave, 12]"]


def test_describe_show_explain() -> None:
    p = run_cli(
        "-e",
        SOURCE
        + "DESCRIBE clicks; SHOW TABLES; EXPLAIN CHANGELOG_MODE SELECT user_name, COUNT(*) FROM clicks GROUP BY user_name;",
    )
    assert p.returncode == 0, p.stderr
    assert "TIMESTAMP(3) *ROWTIME*" in p.stdout and "`ts` - INTERVAL '5' SECOND" in p.stdout
    assert "|     clicks |" in p.stdout  # the SQL client right-aligns every cell
    assert "== Optimized Physical Plan ==" in p.stdout
    # as Flink's EXPLAIN of a query: the aggregate's updates without -U
    assert "GroupAggregate(groupBy=[user_name]" in p.stdout and "changelogMode=[I,UA]" in p.stdout


def _start(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "streamsql.cli", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _read_lines(proc: subprocess.Popen[str], n: int) -> list[str]:
    """The next `n` lines the job prints (fewer when it ends first). A read blocks until
    the line comes, however long a loaded machine takes; pytest-timeout ends a hang."""
    assert proc.stdout is not None
    lines: list[str] = []
    while len(lines) < n:
        line = proc.stdout.readline()
        if not line:  # EOF: the job ended
            break
        lines.append(line.strip())
    return lines


def test_monitored_directory_streams_new_files_until_ctrl_c(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "f1.csv").write_text("a,1\nb,2\n")
    script = tmp_path / "job.sql"
    script.write_text(
        "CREATE TABLE t (k STRING, v INT) WITH ('connector'='filesystem', 'path'='in', 'format'='csv',"
        " 'source.monitor-interval'='100ms');\n"
        "SELECT k, SUM(v) AS s FROM t GROUP BY k;\n"
    )
    proc = _start(["-f", str(script), "--format", "jsonl"], tmp_path)
    try:
        first = [json.loads(x) for x in _read_lines(proc, 2)]
        assert first == [{"op": "+I", "row": ["a", "1"]}, {"op": "+I", "row": ["b", "2"]}]
        (tmp_path / "in" / "f2.csv").write_text("a,10\nc,3\n")
        more = [json.loads(x) for x in _read_lines(proc, 3)]
        assert more == [
            {"op": "-U", "row": ["a", "1"]},
            {"op": "+U", "row": ["a", "11"]},
            {"op": "+I", "row": ["c", "3"]},
        ]
        assert proc.poll() is None, "an unbounded query keeps running"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0
    assert "Query canceled" in err and "Traceback" not in err


def test_unbounded_insert_job_stops_cleanly_on_ctrl_c(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "f1.csv").write_text("a,1\n")
    script = tmp_path / "job.sql"
    script.write_text(
        "CREATE TABLE t (k STRING, v INT) WITH ('connector'='filesystem', 'path'='in', 'format'='csv',"
        " 'source.monitor-interval'='100ms');\n"
        "CREATE TABLE s (k STRING, v INT) WITH ('connector'='print');\n"
        "INSERT INTO s SELECT k, v FROM t;\n"
    )
    proc = _start(["-f", str(script)], tmp_path)
    try:
        lines: list[str] = []
        while "+I[a, 1]" not in lines:  # (pytest-timeout ends a job that never prints it)
            line = _read_lines(proc, 1)
            assert line, f"the job ended before it printed +I[a, 1]: {lines}"
            lines += line
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "Traceback" not in err
