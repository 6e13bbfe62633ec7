"""What `streamsql -f` prints, as Flink 2.x's SQL client prints a script it runs
(CliClient.executeFile, non-interactive): `[INFO] Executing SQL from file.`, each statement
after a `Flink SQL> ` prompt (its later lines after `> `), what it printed, a blank line;
a last prompt after the last statement, and `Shutting down the session...` / `done.` when
the client closes. Errors go to stderr (streamsql's rule), the rest to stdout.

Also the `sql-client.*` display options a script sets: the query time after the row count
(`sql-client.display.print-time-cost`, true by default as in Flink) and the traceback of a
failed job (`sql-client.verbose`).
"""

from __future__ import annotations

import io
import re

from streamsql.cli import EXIT_OK, EXIT_SQL_ERROR, Runner, build_parser


def _runner(*argv: str) -> tuple[Runner, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    return Runner(build_parser().parse_args(list(argv)), out, err), out, err


SCRIPT = """-- a comment line
SET 'sql-client.display.print-time-cost' = 'false';
CREATE TABLE t (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '3');
SELECT 1 AS x,
  'a' AS y;
"""


def test_a_file_is_echoed_statement_by_statement_after_flinks_prompt() -> None:
    runner, out, err = _runner()
    assert runner.run_file(SCRIPT, "job.sql") == EXIT_OK
    assert runner.finish() == EXIT_OK
    assert out.getvalue() == (
        "[INFO] Executing SQL from file.\n"
        "\n"
        "Flink SQL> SET 'sql-client.display.print-time-cost' = 'false';\n"
        "[INFO] Execute statement succeeded.\n"
        "\n"
        "Flink SQL> CREATE TABLE t (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '3');\n"
        "[INFO] Execute statement succeeded.\n"
        "\n"
        "Flink SQL> SELECT 1 AS x,\n"
        ">   'a' AS y;\n"
        "+----+-------------+--------------------------------+\n"
        "| op |           x |                              y |\n"
        "+----+-------------+--------------------------------+\n"
        "| +I |           1 |                              a |\n"
        "+----+-------------+--------------------------------+\n"
        "Received a total of 1 row\n"
        "\n"
        "Flink SQL> \n"
        "Shutting down the session...\n"
        "done.\n"
    )
    assert err.getvalue() == ""


def test_a_failing_statement_ends_the_file() -> None:
    """As Flink's client (exit on failure in non-interactive mode): the statement is echoed,
    the error goes to stderr, the statements after it do not run, no last prompt."""
    runner, out, err = _runner()
    code = runner.run_file("SELECT * FROM nope;\nSELECT 2;\n", "job.sql")
    assert code == EXIT_SQL_ERROR
    runner.finish(code)
    assert out.getvalue() == (
        "[INFO] Executing SQL from file.\n\nFlink SQL> SELECT * FROM nope;\nShutting down the session...\ndone.\n"
    )
    assert err.getvalue().startswith("[ERROR] Could not execute SQL statement. Reason:\n")


def test_e_strings_are_not_echoed() -> None:
    """-e is streamsql's (Flink 2.x's client has none): its statements print their answers only."""
    runner, out, _ = _runner()
    assert runner.run_script("SET 'a.b' = 'c';", "-e #1") == EXIT_OK
    runner.finish()
    assert out.getvalue() == "[INFO] Execute statement succeeded.\n"


def test_query_time_after_the_row_count_by_default() -> None:
    runner, out, _ = _runner("--mode", "batch")
    runner.run_script("SELECT 1 AS x; SELECT 1 AS x WHERE FALSE;", "-e #1")
    lines = out.getvalue().splitlines()
    assert re.fullmatch(r"1 row in set \(\d+\.\d\d seconds\)", lines[-2]), lines
    assert re.fullmatch(r"Empty set \(\d+\.\d\d seconds\)", lines[-1]), lines
    runner, out, _ = _runner("-D", "sql-client.display.print-time-cost=false")
    runner.run_script("SELECT 1 AS x;", "-e #1")
    assert out.getvalue().splitlines()[-1] == "Received a total of 1 row"


def test_verbose_adds_the_traceback_of_a_failed_job() -> None:
    query = "SELECT CAST(s AS INT) FROM (VALUES ('x')) AS t(s);"
    runner, _, err = _runner("--mode", "batch")
    runner.run_script(query, "-e #1")
    assert "Traceback" not in err.getvalue() and err.getvalue().startswith("[ERROR]")
    runner, _, err = _runner("--mode", "batch", "-D", "sql-client.verbose=true")
    runner.run_script(query, "-e #1")
    assert "Traceback (most recent call last)" in err.getvalue(), err.getvalue()


def test_statements_before_a_bad_one_have_run() -> None:
    """Flink's client reads a file a statement at a time: a statement it cannot parse
    fails when it is reached, after the ones before it ran."""
    runner, out, err = _runner()
    code = runner.run_file("SET 'a.b' = 'c';\nSELEC 1;\nSET 'd.e' = 'f';\n", "job.sql")
    assert code == EXIT_SQL_ERROR
    assert runner.env.get_config().get("a.b") == "c"
    assert runner.env.get_config().get("d.e") is None
    assert "Flink SQL> SELEC 1;\n" in out.getvalue()
    assert "line 2 of job.sql" in err.getvalue(), err.getvalue()


def test_a_statement_set_block_runs_a_statement_at_a_time(tmp_path: object) -> None:
    runner, out, _ = _runner("--mode", "batch", "-D", "table.dml-sync=true")
    script = (
        f"CREATE TABLE a (x INT) WITH ('connector' = 'filesystem', 'path' = '{tmp_path}/a', 'format' = 'csv');\n"
        "BEGIN STATEMENT SET;\n"
        "INSERT INTO a VALUES (1);\n"
        "INSERT INTO a\n  VALUES (2);\n"
        "END;\n"
    )
    assert runner.run_file(script, "job.sql") == EXIT_OK
    text = out.getvalue()
    assert (
        "Flink SQL> BEGIN STATEMENT SET;\n[INFO] Execute statement succeeded.\n\n"
        "Flink SQL> INSERT INTO a VALUES (1);\n[INFO] Execute statement succeeded.\n\n"
        "Flink SQL> INSERT INTO a\n>   VALUES (2);\n[INFO] Execute statement succeeded.\n\n"
        "Flink SQL> END;\n[INFO] Complete execution of the SQL update statement.\n"
    ) in text, text


def test_a_statement_set_block_takes_create_table_as(tmp_path: object) -> None:
    """Flink's gateway takes CREATE TABLE ... AS in `BEGIN STATEMENT SET;`: END creates the
    table, then runs its INSERT with the others as one job; REPLACE TABLE ... AS is refused."""
    runner, out, err = _runner("--mode", "batch", "-D", "table.dml-sync=true")
    script = (
        f"CREATE TABLE a (x INT) WITH ('connector' = 'filesystem', 'path' = '{tmp_path}/a', 'format' = 'csv');\n"
        "BEGIN STATEMENT SET;\n"
        f"CREATE TABLE c WITH ('connector' = 'filesystem', 'path' = '{tmp_path}/c', 'format' = 'csv') "
        "AS SELECT x * 10 AS y FROM (VALUES (1), (2)) AS v(x);\n"
        "INSERT INTO a VALUES (7);\n"
        "END;\n"
        "SET 'sql-client.display.print-time-cost' = 'false';\n"
        "SELECT * FROM c;\n"
        "BEGIN STATEMENT SET;\n"
        f"REPLACE TABLE c WITH ('connector' = 'filesystem', 'path' = '{tmp_path}/c', 'format' = 'csv') AS SELECT 1;\n"
    )
    assert runner.run_file(script, "job.sql") == EXIT_SQL_ERROR
    text = out.getvalue()
    assert "AS v(x);\n[INFO] Execute statement succeeded.\n\n" in text, text
    assert "Flink SQL> END;\n[INFO] Complete execution of the SQL update statement.\n" in text, text
    assert "| 10 |\n| 20 |\n" in text, text
    assert (tmp_path / "a").is_dir()  # type: ignore[operator]
    assert "Only 'INSERT/CREATE TABLE AS' statement is allowed in Statement Set" in err.getvalue()


def test_quit_ends_the_file() -> None:
    runner, out, _ = _runner()
    assert runner.run_file("SET 'a.b' = 'c';\nQUIT;\nSET 'd.e' = 'f';\n", "job.sql") == EXIT_OK
    assert out.getvalue().endswith("Flink SQL> QUIT;\n[INFO] Exiting Flink SQL CLI Client...\n")
    assert runner.env.get_config().get("d.e") is None


def test_a_scripts_query_needs_the_tableau_result_mode() -> None:
    """Flink's client refuses a query in a script whose result mode is a full-screen view."""
    runner, out, err = _runner()
    code = runner.run_file("SET 'sql-client.execution.result-mode' = 'table';\nSELECT 1;\n", "job.sql")
    assert code == EXIT_SQL_ERROR
    assert err.getvalue() == (
        "[ERROR] Could not execute SQL statement. Reason:\n"
        "org.apache.flink.table.client.gateway.SqlExecutionException: In non-interactive mode, it only supports "
        "to use TABLEAU as value of sql-client.execution.result-mode when execute query. Please add "
        "'SET sql-client.execution.result-mode=TABLEAU;' in the sql file.\n"
    )
