"""Flink 2.x's `sql-client.sh` command line (its `--help`: embedded, -D, -f, -h, -hist, -i,
-j, -l, -py*, -s, -u) is accepted by `streamsql`: each option does what it does in Flink
where it can apply here, and otherwise the run goes on with a warning saying why it does
nothing (JAR files need a JVM)."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from streamsql.cli import Runner, build_parser


def _runner(*argv: str) -> tuple[Runner, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    return Runner(build_parser().parse_args(list(argv)), out, err), out, err


def test_a_flink_command_line_parses() -> None:
    args = build_parser().parse_args(
        ["embedded", "-s", "default", "-Dparallelism.default=1", "-i", "init.sql", "-f", "job.sql", "-u", "SELECT 1"]
    )
    assert args.file == ["job.sql"] and args.init == "init.sql" and args.execute == ["SELECT 1"]
    assert args.options == ["parallelism.default=1"]


def test_gateway_mode_is_refused() -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["gateway", "-e", "SELECT 1"])


def test_jar_options_warn_that_they_do_nothing() -> None:
    _, _, err = _runner("-j", "/opt/flink-connector-kafka.jar", "-l", "/opt/lib")
    assert "[WARN] -j/--jar has no effect in streamsql: JAR files need a JVM" in err.getvalue()
    assert "[WARN] -l/--library has no effect" in err.getvalue()


def test_history_option_sets_the_shells_history_file(tmp_path: Path) -> None:
    runner, _, _ = _runner("-hist", str(tmp_path / "h"))
    assert runner.env.get_config().get("sql-client.history-file") == str(tmp_path / "h")


def test_python_files_are_importable_by_python_functions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_udfs.py").write_text(
        "from streamsql.udf import udf\n\n@udf(result_type='INT')\ndef plus_one(x):\n    return x + 1\n"
    )
    monkeypatch.setattr(sys, "path", list(sys.path))
    runner, out, err = _runner("--mode", "batch", "-pyfs", str(tmp_path / "my_udfs.py"))
    code = runner.run_script(
        "CREATE TEMPORARY FUNCTION plus_one AS 'my_udfs.plus_one' LANGUAGE PYTHON; SELECT plus_one(41) AS v;", "-e"
    )
    assert code == 0, err.getvalue()
    assert "| 42 |" in out.getvalue(), out.getvalue()
    sys.modules.pop("my_udfs", None)
