"""The shell driven through prompt-toolkit's pipe input: multi-line input, each statement
kind, errors, history, completion, background jobs and Ctrl-C on an unbounded query."""

from __future__ import annotations

import _thread
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from streamsql.environment import TableEnvironment

TAB = "\t"
CTRL_C = "\x03"
CTRL_R = "\x12"
UP = "\x1b[A"

CLICKS = Path(__file__).resolve().parents[4] / "examples" / "data" / "clicks.csv"
CREATE_CLICKS = (
    "CREATE TABLE clicks (user_name STRING, url STRING, ts TIMESTAMP(3),\r"
    "  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)\r"
    f"WITH ('connector' = 'filesystem', 'path' = '{CLICKS}', 'format' = 'csv');\r"
)


def monitored(path: Path) -> str:
    return (
        f"CREATE TABLE t (k STRING, v INT) WITH ('connector'='filesystem', 'path'='{path}', "
        "'format'='csv', 'source.monitor-interval'='50ms');\r"
    )


def test_multi_line_statement_runs_at_semicolon(shell: Any) -> None:
    d = shell("SELECT 1 AS a,\r  'x' AS b\r;\r")
    out = d.text()
    assert re.search(r"\| \+I \|\s+1 \|\s+x \|", out), out
    assert "Received a total of 1 row" in out
    assert d.code == 0 and out.rstrip().endswith("[INFO] Exiting Flink SQL CLI Client...")


def test_no_semicolon_no_run_and_semicolon_in_string_does_not_submit(shell: Any) -> None:
    # The ';' inside the string does not end the statement; the one after it does.
    d = shell("SELECT 'a;b' AS s\r;\r")
    assert re.search(r"\|\s+a;b \|", d.text()), d.text()
    # Never terminated: nothing runs.
    d = shell("SELECT 42 AS x\r")
    assert "42" not in d.text()


def test_statement_set_submits_at_end(shell: Any, tmp_path: Path) -> None:
    keys = (
        CREATE_CLICKS
        + "CREATE TABLE bh (u STRING) WITH ('connector' = 'blackhole');\r"
        + "EXECUTE STATEMENT SET BEGIN\r"
        + "INSERT INTO bh SELECT user_name FROM clicks;\r"
        + "INSERT INTO bh SELECT url FROM clicks;\r"
        + "END;\r"
    )
    d = shell(keys)
    out = d.text()
    assert out.count("Job ID:") == 1, out
    (job,) = d.env.jobs.values()
    job.join(20)
    assert job.get_job_status() == "FINISHED"


def test_show_describe_explain_set_reset_help(shell: Any) -> None:
    keys = (
        CREATE_CLICKS
        + "CREATE VIEW v AS SELECT user_name FROM clicks;\r"
        + "SHOW TABLES;\rSHOW VIEWS;\rSHOW FUNCTIONS;\rSHOW CATALOGS;\rSHOW DATABASES;\rSHOW JOBS;\r"
        + "DESCRIBE clicks;\r"
        + "EXPLAIN SELECT user_name, COUNT(*) FROM clicks GROUP BY user_name;\r"
        + "SET 'parallelism.default' = '3';\rSET;\r"
        + "RESET 'parallelism.default';\r"
        + "HELP;\r"
    )
    d = shell(keys)
    out = d.text()
    assert re.search(r"\| table name \|\n\+-+\+\n\|\s+clicks \|\n\|\s+v \|", out), out
    assert re.search(r"\| view name \|\n\+-+\+\n\|\s+v \|", out)
    assert re.search(r"\|\s+upper \|", out) and "default_catalog" in out and "default_database" in out
    assert "| job id | job name | status | start time |" not in out and "Empty set" in out  # no jobs yet
    assert "TIMESTAMP(3) *ROWTIME*" in out
    assert "== Optimized Physical Plan ==" in out
    assert re.search(r"\|\s+parallelism.default \|\s+3 \|", out)
    assert d.env.get_config().get("parallelism.default") == "1"  # RESET
    assert "STOP JOB '<id>' [WITH SAVEPOINT]" in out


def test_errors_show_caret_and_the_session_survives(shell: Any) -> None:
    keys = (
        "CREATE TABLE s (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '2');\r"
        + "SELECT a,\r  nope FROM s;\r"
        + "SELECT FROM WHERE;\r"
        + "SET 'sql-client.execution.result-mode' = 'tabel';\r"
        + "STOP JOB 'nope';\r"
        + "STOP JOB;\r"
        + "SELECT a FROM s;\r"
    )
    d = shell(keys)
    out = d.text()
    assert "Traceback" not in out
    # Line 2, column 3 of the failing statement, with the line and a caret under `nope`.
    assert re.search(r"SqlValidatorException: .*nope.*\nAt line 2, column 3:", out), out
    assert "\n    nope FROM s\n    ^\n" in out
    assert "org.apache.flink.sql.parser.impl.ParseException: " in out
    assert "Invalid value 'tabel' for key 'sql-client.execution.result-mode'" in out
    assert "FlinkJobNotFoundException: Could not find Flink job (nope)" in out
    assert "Expected STOP JOB '<job id>'" in out
    # ... and the table still works afterwards.
    assert "Received a total of 2 rows" in out, out
    assert d.env.get_config().get("sql-client.execution.result-mode") == "tableau"


def test_insert_runs_in_background_show_jobs_and_stop_job(shell: Any, clicks_dir: Path, tmp_path: Path) -> None:
    def during(d: Any, pipe: Any) -> None:
        d.wait_for("Job ID:")
        job_id = re.search(r"Job ID: (\w+)", d.text()).group(1)  # type: ignore[union-attr]
        pipe.send_text("SHOW JOBS;\r")
        d.wait_for("RUNNING")
        pipe.send_text(f"STOP JOB '{job_id}' WITH SAVEPOINT;\r")
        d.wait_for("No savepoint directory")  # none configured: the job keeps running
        assert d.env.jobs[job_id].is_running(), "a failed WITH SAVEPOINT must not stop the job"
        pipe.send_text(f"STOP JOB '{job_id}';\r")
        deadline = time.monotonic() + 300
        while d.env.jobs[job_id].get_job_status() != "CANCELED":
            assert time.monotonic() < deadline, d.text()
            time.sleep(0.02)
        pipe.send_text("SHOW JOBS;\r")
        d.wait_for("CANCELED |")

    keys = (
        monitored(clicks_dir)
        + f"CREATE TABLE sink (k STRING, v INT) WITH ('connector'='filesystem', 'path'='{tmp_path / 'out'}', 'format'='csv');\r"
        + "INSERT INTO sink SELECT k, v FROM t;\r"
    )
    d = shell(keys, during=during)
    out = d.text()
    assert re.search(r"\| \w{32} \| insert-into_default_catalog.default_database.sink \|\s+RUNNING \|", out), out
    assert d.code == 0


def test_ctrl_c_cancels_a_running_unbounded_query_not_the_shell(shell: Any, clicks_dir: Path) -> None:
    def during(d: Any, pipe: Any) -> None:
        # Flink's fixed streaming widths: STRING 30 (the max column width), INT 11.
        d.wait_for("| +I | " + " " * 29 + "b |")
        (clicks_dir / "f2.csv").write_text("a,10\n")
        d.wait_for("| +U | " + " " * 29 + "a | " + " " * 9 + "11 |")
        _thread.interrupt_main()  # what the terminal's SIGINT does
        d.wait_for("[INFO] Query canceled after 4 rows.")
        pipe.send_text("SELECT 7 AS seven;\r")
        d.wait_for("Received a total of 1 row")

    d = shell(monitored(clicks_dir) + "SELECT k, SUM(v) AS s FROM t GROUP BY k;\r", during=during)
    assert re.search(r"\| \+I \|\s+7 \|", d.text())
    assert d.code == 0


def test_table_result_mode_live_view_and_ctrl_c(shell: Any, clicks_dir: Path) -> None:
    seen: dict[str, Any] = {}

    def during(d: Any, pipe: Any) -> None:
        # f1's two rows are in the view before f2 is written (read together, `a` would
        # never be updated): waited for, as the update after it
        deadline = time.monotonic() + 300
        while (view := getattr(d.shell, "last_view", None)) is None or len(view.model) < 2:
            assert time.monotonic() < deadline, d.text()
            time.sleep(0.02)
        (clicks_dir / "f2.csv").write_text("a,10\nc,3\n")
        while view.model.changes < 5:
            assert time.monotonic() < deadline, d.text()
            time.sleep(0.02)
        seen["rows"] = view.model.rows()
        seen["status"] = view.status()
        pipe.send_text(CTRL_C)  # a key in the full-screen view: leaves it, cancels the query
        d.wait_for("[INFO] Result view closed")

    keys = (
        monitored(clicks_dir) + "SET 'sql-client.execution.result-mode' = 'table';\r"
        "SELECT k, SUM(v) AS s FROM t GROUP BY k;\r"
    )
    d = shell(keys, during=during)
    # The update of `a` stays in place: a materialized table, not a changelog.
    assert seen["rows"] == [("a", "11"), ("b", "2"), ("c", "3")]
    assert seen["status"].startswith(" 3 rows | 5 changes | watermark: none | running")
    assert "[INFO] Result view closed: 3 rows, 5 changes (query canceled)." in d.text()


def test_changelog_result_mode_shows_watermark_and_finishes(shell: Any) -> None:
    seen: dict[str, Any] = {}

    def during(d: Any, pipe: Any) -> None:
        deadline = time.monotonic() + 300
        while True:
            # The pump marks itself finished while the view drains it, before the view applies
            # the drained batches to its model: wait for both (rows come from the TUMBLE).
            view = getattr(d.shell, "last_view", None)
            if view is not None and view.pump is not None and view.pump.finished and view.model.rows():
                break
            assert time.monotonic() < deadline, d.text()
            time.sleep(0.02)
        seen["status"] = d.shell.last_view.status()
        seen["rows"] = d.shell.last_view.model.rows()
        pipe.send_text("q")
        d.wait_for("[INFO] Result view closed")

    keys = (
        CREATE_CLICKS + "SET 'sql-client.execution.result-mode' = 'changelog';\r"
        "SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' HOUR))\r"
        "GROUP BY window_start, window_end;\r"
    )
    d = shell(keys, during=during)
    assert seen["rows"] and all(r[0] == "+I" for r in seen["rows"])
    assert "watermark: end of input | finished" in seen["status"]
    assert "(query finished)." in d.text()


def test_history_is_persistent_and_searchable(shell: Any, tmp_path: Path) -> None:
    history = tmp_path / "hist"
    d = shell("SELECT 11 AS first_one;\rSELECT 22\r  AS second_one;\r", history=history)
    text = history.read_text()
    assert "+SELECT 11 AS first_one;" in text and "+SELECT 22\n+  AS second_one;" in text
    # A new session: Up recalls the last statement, Ctrl-R finds an older one.
    d = shell(UP + "\r", history=history)
    assert "second_one" in d.text() and "first_one" not in d.text()

    def search(d: Any, pipe: Any) -> None:
        # The reverse search runs asynchronously in prompt-toolkit: each key waits for the
        # state the previous one leads to (the search text typed, then the match taken).
        prompt = d.shell.prompt
        pipe.send_text(CTRL_R + "first")
        _until(lambda: prompt.app.layout.is_searching and prompt.search_buffer.text == "first", d)
        pipe.send_text("\r")
        _until(lambda: not prompt.app.layout.is_searching and "first_one" in prompt.default_buffer.text, d)
        pipe.send_text("\r")
        d.wait_for("Received a total of 1 row")

    d = shell("", during=search, history=history)
    assert "first_one" in d.text() and "second_one" not in d.text()


def _until(ready: Callable[[], bool], d: Any, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, f"the shell never reached the state: {d.text()}"
        time.sleep(0.01)


def typed(*steps: tuple[str, Callable[[Any], bool]]) -> Any:
    """Send each step's keys, then wait until the prompt's input buffer passes the step's
    check: prompt-toolkit completes on Tab asynchronously, so the next keys must not
    arrive before the completion did (no fixed pauses: the test waits for the state)."""

    def during(d: Any, pipe: Any) -> None:
        for keys, ready in steps:
            pipe.send_text(keys)
            deadline = time.monotonic() + 300
            while not ready(d.shell.prompt.default_buffer):
                if time.monotonic() > deadline:
                    raise AssertionError(f"the shell never reached the state after {keys!r}: {d.text()}")
                time.sleep(0.01)

    return during


def test_tab_completes_table_column_and_set_key(shell: Any) -> None:
    def text_ends(pattern: str) -> Callable[[Any], bool]:
        return lambda buf: re.search(pattern, buf.text) is not None

    def listed(buf: Any) -> bool:  # two candidates: the menu lists them, nothing is inserted
        return buf.complete_state is not None and buf.text.endswith("c.u")

    env = TableEnvironment.create({"execution.runtime-mode": "batch"})
    during = typed(
        (CREATE_CLICKS, lambda buf: "clicks" in env.list_tables()),
        ("SELECT COUNT(*) AS n FROM cli" + TAB, text_ends(r"FROM clicks\s*$")),
        (";\r", lambda buf: True),
        ("SELECT c.user_name AS who FROM clicks c WHERE c.user_na" + TAB, text_ends(r"WHERE c\.user_name\s*$")),
        (" = 'dave' AND c.u" + TAB, listed),
        ("rl LIKE '%';\r", lambda buf: True),
        ("SET 'sql-client.execution.res" + TAB, text_ends(r"result-mode")),
        ("table';\r", lambda buf: env.get_config().get("sql-client.execution.result-mode") == "table"),
    )
    d = shell("", during=during, env=env)
    out = d.text()
    assert re.search(r"\|  n \|\n\+-+\+\n\| 60 \|", out), out
    assert "|  who |" in out and "12 rows in set" in out, out
    assert d.env.get_config().get("sql-client.execution.result-mode") == "table"


def test_ctrl_c_at_the_prompt_clears_the_input(shell: Any) -> None:
    d = shell("SELECT 1 AS dropped" + CTRL_C + "SELECT 2 AS kept;\r")
    assert "kept" in d.text() and "dropped" not in d.text()


def test_toolbar_shows_mode_runner_parallelism_and_jobs(shell: Any) -> None:
    env = TableEnvironment.create({"execution.runtime-mode": "batch", "parallelism.default": "4"})
    d = shell("", env=env)
    from prompt_toolkit.formatted_text import to_plain_text

    text = to_plain_text(d.shell.toolbar())
    assert "BATCH" in text and "runner: local" in text and "parallelism: 4" in text and "jobs running: 0" in text


def test_statement_set_typed_one_statement_at_a_time(shell: Any, tmp_path: Path) -> None:
    keys = (
        f"CREATE TABLE a (x INT) WITH ('connector'='filesystem', 'path'='{tmp_path / 'a'}', 'format'='csv');\r"
        + "SET 'table.dml-sync' = 'true';\r"
        + "BEGIN STATEMENT SET;\r"
        + "INSERT INTO a VALUES (1);\r"
        + "SELECT 1;\r"
        + "INSERT INTO a VALUES (2), (3);\r"
        + f"CREATE TABLE c WITH ('connector'='filesystem', 'path'='{tmp_path / 'c'}', 'format'='csv') AS SELECT 41 AS m;\r"
        + "END;\r"
        + "END;\r"
        + "SELECT COUNT(*) AS n FROM a;\r"
        + "SELECT m + 1 AS m FROM c;\r"
    )
    d = shell(keys, env=TableEnvironment.create({"execution.runtime-mode": "batch"}))
    out = d.text()
    # Flink 2.x's client (its SQL gateway) answers BEGIN and each INSERT with "Execute statement succeeded."
    assert out.count("[INFO] Execute statement succeeded.\n") >= 6, out
    assert "Only 'INSERT/CREATE TABLE AS' statement is allowed in Statement Set" in out
    assert "[INFO] Complete execution of the SQL update statement.\n" in out
    assert "No Statement Set to submit" in out
    assert re.search(r"\|\s+n \|\n\+-+\+\n\|\s+3 \|", out), out
    assert re.search(r"\|\s+m \|\n\+-+\+\n\|\s+42 \|", out), out  # the CTAS of the set ran too
