"""`streamsql -i FILE` runs an initialization file as Flink's SQL client does: what its
statements print is held back, one line says it worked (`Successfully initialized from
sql script: file:/...`), and on a failure the held output and the error come first."""

from __future__ import annotations

import io
import os
from pathlib import Path

from streamsql.cli import EXIT_OK, Runner, build_parser


def _runner() -> tuple[Runner, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    return Runner(build_parser().parse_args([]), out, err), out, err


def test_init_file_output_is_one_line_and_its_session_state_stays(tmp_path: Path) -> None:
    init = tmp_path / "init.sql"
    init.write_text("SET 'table.local-time-zone' = 'Asia/Shanghai';\nCREATE TEMPORARY VIEW v AS SELECT 1 AS x;\n")
    runner, out, err = _runner()
    assert runner.run_init(init.read_text(), str(init)) == EXIT_OK
    assert out.getvalue() == f"Successfully initialized from sql script: file:{os.path.abspath(init)}\n"
    assert err.getvalue() == ""
    assert runner.run_script("SELECT x FROM v;", "-e #1") == EXIT_OK  # the view outlives the init file
    assert "| +I |" in out.getvalue()


def test_a_failing_init_file_shows_its_error_then_the_failure_line(tmp_path: Path) -> None:
    init = tmp_path / "init.sql"
    init.write_text("CREATE TEMPORARY VIEW v AS SELECT 1 AS x;\nCREATE TEMPORARY VIEW w AS SELECT nope FROM nowhere;\n")
    runner, out, err = _runner()
    assert runner.run_init(init.read_text(), str(init)) != EXIT_OK
    text = err.getvalue()
    assert "[INFO] Execute statement succeeded." in text  # the held output, shown on failure
    assert "Object 'nowhere' not found" in text
    assert text.endswith(f"Failed to initialize from sql script: file:{os.path.abspath(init)}.\n")
    assert "Successfully" not in out.getvalue() + text


def test_an_init_file_may_not_hold_a_query_or_an_insert(tmp_path: Path) -> None:
    """Flink runs an init file through its gateway's configureSession, which refuses
    anything that does not set the session up ("Notice it's not allowed to add query or
    insert into the init file")."""
    init = tmp_path / "init.sql"
    for statement in ("SELECT 1", "INSERT INTO t VALUES (1)", "CREATE TABLE c AS SELECT 1 AS x"):
        init.write_text(f"SET 'a.b' = 'c';\n{statement};\nSET 'd.e' = 'f';\n")
        runner, out, err = _runner()
        assert runner.run_init(init.read_text(), str(init)) != EXIT_OK
        text = err.getvalue()
        assert (
            "java.lang.UnsupportedOperationException: Unsupported statement for configuring session:"
            f"{statement};\nThe configureSession API only supports"
        ) in text, text
        assert runner.env.get_config().get("d.e") is None  # nothing after it ran
