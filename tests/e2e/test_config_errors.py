"""Configuration and WITH-option errors through the `streamsql` command: Flink's messages,
the position of the offending option, a "Did you mean", no traceback."""

from __future__ import annotations

from pathlib import Path

from clitools import run_cli


def test_unknown_with_option_fails_as_flink_with_position_and_did_you_mean(tmp_path: Path) -> None:
    script = tmp_path / "bad_option.sql"
    script.write_text(
        "SELECT 1;\n"
        "CREATE TABLE p (k STRING) WITH (\n"
        "  'connector' = 'filesystem',\n"
        "  'path' = 'd.csv',\n"
        "  'format' = 'csv',\n"
        "  'csv.ignore-parse-errorz' = 'true'\n"
        ");\n"
        "SELECT k FROM p;\n"
    )
    p = run_cli("-f", str(script), cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    assert "Traceback" not in p.stderr and "Internal error" not in p.stderr
    assert "Unsupported options found for 'filesystem'." in p.stderr
    assert "Unsupported options:\n\ncsv.ignore-parse-errorz\n\nSupported options:\n\n" in p.stderr
    assert "of the statement starting at line 2 of" in p.stderr
    assert "At line 5, column 3" in p.stderr  # of the CREATE TABLE statement
    assert "Did you mean 'csv.ignore-parse-errors'?" in p.stderr


def test_unknown_connector_did_you_mean(tmp_path: Path) -> None:
    p = run_cli("-e", "CREATE TABLE p (k STRING) WITH ('connector' = 'fiesystem'); SELECT k FROM p;", cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    assert "Could not find any factory for identifier 'fiesystem'" in p.stderr
    assert "Did you mean 'filesystem'?" in p.stderr
    assert "column 47" in p.stderr


def test_bad_configuration_value_names_the_key(tmp_path: Path) -> None:
    p = run_cli("-e", "SET 'parallelism.default' = 'abc';", cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    assert "Invalid value 'abc' for key 'parallelism.default': expected an integer" in p.stderr
    assert "Traceback" not in p.stderr
    p = run_cli("-D", "execution.checkpointing.interval=often", "-e", "SELECT 1", cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    assert "Invalid value 'often' for key 'execution.checkpointing.interval'" in p.stderr
