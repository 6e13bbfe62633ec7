"""What the SQL client prints, text for text as the Flink SQL client prints it; shared by
`streamsql -f/-e` (cli.py) and the interactive shell (shell/session.py).

- A statement without rows: `[INFO] Execute statement succeeded.`
- SHOW / DESCRIBE / EXPLAIN / SET results: a tableau table sized to its content, never cut.
- INSERT / STATEMENT SET / CTAS: the job id (`[INFO] Submitting SQL update statement ...`),
  or with `table.dml-sync` = true `[INFO] Complete execution of the SQL update statement.`
- Errors: `[ERROR] Could not execute SQL statement. Reason:` then Flink's exception class
  and message (the line a user can search Flink's answers for), then streamsql's own
  detail: where the statement is, the line with a caret, and a hint.
"""

from __future__ import annotations

import os
import re
from typing import Any, TextIO

from runtime.config.options import key
from streamsql.shell.options import RESULT_MODE

INFO_EXECUTED = "[INFO] Execute statement succeeded.\n"
INFO_SUBMITTING = "[INFO] Submitting SQL update statement to the cluster...\n"
INFO_SUBMITTED = "[INFO] SQL update statement has been successfully submitted to the cluster:\n"
INFO_COMPLETE = "[INFO] Complete execution of the SQL update statement.\n"
INFO_EXECUTE_FILE = "[INFO] Executing SQL from file.\n"
INFO_QUIT = "[INFO] Exiting Flink SQL CLI Client...\n"  # QUIT; / EXIT; in a script
# What Flink's client prints when it closes its session (at exit, after a script too).
SESSION_CLOSED = "Shutting down the session...\ndone.\n"
PROMPT = "Flink SQL> "
CONTINUATION_PROMPT = "> "  # jline's prompt for a statement's second and later lines
ERROR_HEAD = "[ERROR] Could not execute SQL statement. Reason:\n"
# `BEGIN STATEMENT SET; ... END;` given a statement at a time: Flink 2.x's client answers
# BEGIN, each INSERT and an empty END with INFO_EXECUTED (its SQL gateway runs them) and
# refuses the rest with its gateway's SqlExecutionException.
_GATEWAY_ERROR = "org.apache.flink.table.gateway.service.utils.SqlExecutionException: "
SET_ONLY_INSERTS = (
    _GATEWAY_ERROR + "Only 'INSERT/CREATE TABLE AS' statement is allowed in Statement Set or use 'END' "
    "statement to submit Statement Set."
)
SET_END_WITHOUT_BEGIN = (
    _GATEWAY_ERROR + "No Statement Set to submit. 'END' statement should be used after 'BEGIN STATEMENT SET'."
)

# Flink's exception class for each streamsql error class, when the raiser named none.
_DEFAULT_CLASS = {
    "SqlParseError": "org.apache.flink.sql.parser.impl.ParseException",
    "SqlValidationError": "org.apache.flink.table.api.ValidationException",
    "UnsupportedSqlError": "org.apache.flink.table.api.TableException",
}


def is_job_statement(stmt: Any) -> bool:
    """INSERT, STATEMENT SET, CREATE TABLE AS, DELETE, UPDATE, EXECUTE PLAN and COMPILE AND
    EXECUTE PLAN: statements that submit a job."""
    from planner.statements import CreateTable, InsertInto, StatementSet
    from planner.statements_dml import CompilePlan, Delete, ExecutePlan, Update

    return (
        isinstance(stmt, (InsertInto, StatementSet, Delete, Update, ExecutePlan))
        or (isinstance(stmt, CreateTable) and stmt.as_query is not None)
        or (isinstance(stmt, CompilePlan) and stmt.execute)
    )


def has_rows(stmt: Any, result: Any) -> bool:
    """Whether a non-query, non-job statement answered with rows to print as a table."""
    from streamsql.result import ResultKind

    return bool(result.kind == ResultKind.SUCCESS_WITH_CONTENT)


DML_SYNC = (
    key("table.dml-sync")
    .boolean_type()
    .default_value(False)
    .with_description(
        "When true, the SQL client waits for an INSERT job to finish and prints "
        "'[INFO] Complete execution of the SQL update statement.' instead of the job id."
    )
)

CLIENT_MAX_COLUMN_WIDTH = (
    key("sql-client.display.max-column-width")
    .int_type()
    .default_value(30)
    .with_check(lambda v: v >= 1, "an integer >= 1")
    .with_fallback_keys("table.display.max-column-width")
    .with_description(
        "Widest column of the SQL client's tableau results before a string is cut "
        "(falls back to table.display.max-column-width)."
    )
)


PRINT_TIME_COST = (
    key("sql-client.display.print-time-cost")
    .boolean_type()
    .default_value(True)
    .with_description(
        "A query result's last line says how long the query took, as Flink's client prints it: "
        "`3 rows in set (0.05 seconds)`, `Received a total of 5 rows (1.20 seconds)`."
    )
)

VERBOSE = (
    key("sql-client.verbose")
    .boolean_type()
    .default_value(False)
    .with_description(
        "Errors show the full Python traceback after the message (what STREAMSQL_DEBUG=1 shows for a failed "
        "job), as Flink's client then prints the exception stack; otherwise only the reason."
    )
)


def dml_sync(env: Any) -> bool:
    return bool(DML_SYNC.get(env.get_config()))


def max_column_width(env: Any) -> int:
    return int(CLIENT_MAX_COLUMN_WIDTH.get(env.get_config()))


def non_interactive_refusal(env: Any) -> str | None:
    """Flink's error for a query in a script (-f, -e: no terminal view) when
    `sql-client.execution.result-mode` is table or changelog (full-screen views), else None."""
    if RESULT_MODE.get(env.get_config()) == "tableau":
        return None
    return (
        "org.apache.flink.table.client.gateway.SqlExecutionException: In non-interactive mode, it only "
        f"supports to use TABLEAU as value of {RESULT_MODE.key} when execute query. Please add "
        f"'SET {RESULT_MODE.key}=TABLEAU;' in the sql file."
    )


def print_time_cost(env: Any) -> bool:
    return bool(PRINT_TIME_COST.get(env.get_config()))


def verbose(env: Any) -> bool:
    return bool(VERBOSE.get(env.get_config()))


def print_static(result: Any, out: TextIO) -> None:
    """A SHOW / DESCRIBE / EXPLAIN / SET result: sized to its content, never cut."""
    from streamsql.printing import TableauPrinter

    TableauPrinter(result.fields, out, streaming=False, max_width=None).print_all(result.batches(), result.time_zone)


def echo(sql: str) -> str:
    """A script's statement as Flink's client shows it running a file (-f): after its prompt,
    the later lines after `> `, ended by the `;` that closed it."""
    lines = sql.strip().splitlines() or [""]
    return PROMPT + "\n".join([lines[0], *(CONTINUATION_PROMPT + line for line in lines[1:])]) + ";\n"


# The statements Flink's SQL gateway runs to configure a session (an init file, -i): its
# OperationExecutor.configureSession accepts SET, RESET and create / drop / use / alter
# operations (not CREATE TABLE ... AS, which is a job), LOAD / UNLOAD MODULE and ADD JAR.
_INIT_STATEMENT = re.compile(r"\s*(SET|RESET|CREATE|DROP|USE|ALTER|LOAD|UNLOAD|ADD)\b", re.IGNORECASE)
# CREATE [OR REPLACE] TABLE ... AS <query>: a job, not a session set-up.
_INIT_TABLE_AS = re.compile(
    r"\s*CREATE\s+(OR\s+REPLACE\s+)?(TEMPORARY\s+)?TABLE\b.*\bAS\s*\(*\s*(SELECT|WITH|VALUES)\b",
    re.IGNORECASE | re.DOTALL,
)
_INIT_REFUSAL = (
    "java.lang.UnsupportedOperationException: Unsupported statement for configuring session:{sql};\n"
    "The configureSession API only supports to execute statement of type CREATE TABLE, DROP TABLE, "
    "ALTER TABLE, CREATE DATABASE, DROP DATABASE, ALTER DATABASE, CREATE FUNCTION, DROP FUNCTION, "
    "ALTER FUNCTION, CREATE CATALOG, DROP CATALOG, USE CATALOG, USE [CATALOG.]DATABASE, CREATE VIEW, "
    "DROP VIEW, LOAD MODULE, UNLOAD MODULE, USE MODULE, ADD JAR."
)


def init_refusal(sql: str) -> str | None:
    """Flink's error for a statement an init file (-i) may not hold, or None when it may:
    "Notice it's not allowed to add query or insert into the init file" (its --help)."""
    if _INIT_STATEMENT.match(sql) and not _INIT_TABLE_AS.match(sql):
        return None
    return _INIT_REFUSAL.format(sql=sql.strip())


def submitted(job_id: str) -> str:
    return INFO_SUBMITTING + INFO_SUBMITTED + f"Job ID: {job_id}\n"


def flink_class(e: Any) -> str:
    explicit = getattr(e, "flink_class", None)
    if explicit:
        return str(explicit)
    for cls in type(e).__mro__:
        if cls.__name__ in _DEFAULT_CLASS:
            return _DEFAULT_CLASS[cls.__name__]
    return "org.apache.flink.table.api.TableException"


def sql_error_text(e: Any, statement_line: int | None = None, source: str | None = None) -> str:
    """The full error block for a planner.errors.SqlError."""
    head = f"{ERROR_HEAD}{flink_class(e)}: {e.message}\n"
    detail: list[str] = []
    of = ""
    if statement_line not in (None, 1):
        of = f" of the statement starting at line {statement_line}" + (f" of {source}" if source else "")
    lines = e.sql.splitlines() if e.sql is not None else []
    if e.line is not None and (e.line, e.column or 1) != (1, 1) and 1 <= e.line <= len(lines):
        # A position inside the statement: show it with a caret.
        detail.append(f"At line {e.line}, column {e.column or 1}{of}:")
        detail.append("  " + lines[e.line - 1])
        detail.append("  " + " " * max((e.column or 1) - 1, 0) + "^")
    elif of:  # the statement as a whole: say which one
        detail.append(f"In the statement starting at line {statement_line}" + (f" of {source}." if source else "."))
    if e.hint:
        detail.append(e.hint)
    return head + "".join(d + "\n" for d in detail)


def job_error_text(e: BaseException, verbose: bool = False) -> str:
    """A job that failed while running (runtime.errors.JobError and kin). With
    `sql-client.verbose` (`verbose`) or STREAMSQL_DEBUG set, the full traceback follows (a
    failing Python function's error shows only the user's frames otherwise)."""
    text = f"{ERROR_HEAD}{type(e).__name__}: {e}\n"
    if (verbose or os.environ.get("STREAMSQL_DEBUG")) and e.__traceback__ is not None:
        import traceback

        text += "".join(traceback.format_exception(e))
    return text
