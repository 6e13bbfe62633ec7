"""What the shell does with submitted text: split it, run each statement, print results.

Independent of the prompt (the prompt-toolkit application in `app.py` feeds it text), so
the statement handling is testable on its own. Rules it keeps: a bad statement prints the
error with line, column and caret and never a traceback; the session (tables, options,
background jobs) survives any error and any Ctrl-C; `INSERT INTO` runs in the background.
"""

from __future__ import annotations

import os
import time
import traceback
from collections.abc import Callable
from typing import Any, TextIO

from streamsql import client_output as co
from streamsql.client_output import max_column_width, sql_error_text
from streamsql.shell.options import RESULT_MODE
from streamsql.shell.statements import (
    BEGIN_SET,
    END_SET,
    HELP_TEXT,
    ShellCommand,
    ShellCommandError,
    parse_shell_command,
)

ViewFn = Callable[[Any, str, int], Any]


class ShellSession:
    """Runs statements in a TableEnvironment and prints to `out`.

    `view(result, mode, max_width)` shows a query full-screen (table/changelog result
    modes); the app passes `table_view.run_result_view` bound to its terminal.
    """

    def __init__(self, env: Any, out: TextIO, view: ViewFn | None = None) -> None:
        self.env = env
        self.out = out
        self.view = view
        self._reported: set[str] = set()  # failed background jobs already announced
        # INSERTs typed between `BEGIN STATEMENT SET;` and `END;` (None: no set is open).
        self._statement_set: list[Any] | None = None

    # ------------------------------------------------------------------ entry
    def execute(self, text: str) -> bool:
        """Run every statement of `text`. Returns False when the user asked to quit."""
        from planner.errors import SqlError
        from planner.parse import split_script

        if BEGIN_SET.match(text) or END_SET.match(text) or self._statement_set is not None:
            return self._statement_set_step(text)
        try:
            chunks = split_script(text)
        except SqlError as e:
            self._sql_error(e, text)
            return True
        for sql, line, column in chunks:
            try:
                if not self._run_one(sql, line, column):
                    return False
            except KeyboardInterrupt:
                self._write("\n[INFO] Interrupted.\n")
                return True
        return True

    def _statement_set_step(self, text: str) -> bool:
        """One statement of a statement set typed a statement at a time (Flink's client)."""
        from planner.errors import SqlError
        from planner.parse import parse_statement
        from planner.statements import StatementSet

        if BEGIN_SET.match(text):
            if self._statement_set is not None:
                self._write(co.ERROR_HEAD + co.SET_ONLY_INSERTS + "\n")
                return True
            self._statement_set = []
            self._write(co.INFO_EXECUTED)
            return True
        if END_SET.match(text):
            if self._statement_set is None:
                self._write(co.ERROR_HEAD + co.SET_END_WITHOUT_BEGIN + "\n")
                return True
            inserts, self._statement_set = self._statement_set, None
            if not inserts:
                self._write(co.INFO_EXECUTED)
                return True
            sql = "\n".join(i.sql + ";" for i in inserts)
            try:
                planned = self.env.statement_set_inserts(inserts)  # creates the CTAS tables
                if planned:
                    self._statement(StatementSet(inserts=tuple(planned), sql=sql))
                else:
                    self._write(co.INFO_EXECUTED)
            except SqlError as e:
                self._sql_error(e, sql)
            return True
        sql = text.strip().rstrip(";").strip()
        if parse_shell_command(sql) is not None and sql.upper().startswith(("QUIT", "EXIT")):
            return self.execute_command(sql)
        try:
            stmt = parse_statement(sql)
        except SqlError as e:
            self._sql_error(e, sql)
            return True
        if not self.env.in_statement_set(stmt):
            self._write(co.ERROR_HEAD + co.SET_ONLY_INSERTS + "\n")
            return True
        assert self._statement_set is not None
        self._statement_set.append(stmt)
        self._write(co.INFO_EXECUTED)
        return True

    def execute_command(self, sql: str) -> bool:
        cmd = parse_shell_command(sql)
        return self._command(cmd) if cmd is not None else True

    def _run_one(self, sql: str, line: int, column: int) -> bool:
        from planner.errors import SqlError
        from planner.parse import parse_statement

        try:
            cmd = parse_shell_command(sql)
            if cmd is not None and cmd.kind != "stop":  # STOP JOB is SQL: Flink's answers
                return self._command(cmd)
            stmt = parse_statement(sql, line=line, column=column)
            self._statement(stmt)
        except KeyboardInterrupt:
            raise
        except ShellCommandError as e:
            self._error(str(e))
        except SqlError as e:
            self._sql_error(e, sql)
        except Exception as e:  # noqa: BLE001 - the shell must survive anything
            self._error(f"{type(e).__name__}: {e}")
            if os.environ.get("STREAMSQL_DEBUG") or co.verbose(self.env):  # sql-client.verbose
                self._write(traceback.format_exc())
        return True

    # ------------------------------------------------------------------ shell commands
    def _command(self, cmd: ShellCommand) -> bool:
        if cmd.kind == "quit":
            self._write(co.INFO_QUIT)
            return False
        self._write(HELP_TEXT)  # "help"; STOP JOB runs as a SQL statement (StopJob)
        return True

    # ------------------------------------------------------------------ SQL statements
    def _statement(self, stmt: Any) -> None:
        from planner.statements import Query

        started = time.monotonic()
        result = self.env.execute_statement(stmt)
        if isinstance(stmt, Query):
            self._query(result, started)
        elif co.is_job_statement(stmt):
            job = result.job
            if co.dml_sync(self.env):
                result.wait()
                self._write(co.INFO_COMPLETE)
            else:
                self._write(co.submitted(job.get_job_id() if job else ""))
        elif co.has_rows(stmt, result):
            # Inspection results are never cut: a job id must stay copyable for STOP JOB.
            self._print_table(result, streaming=False, max_width=None)
        else:
            self._write(co.INFO_EXECUTED)

    def result_mode(self) -> str:
        return RESULT_MODE.get(self.env.get_config())

    def max_width(self) -> int:
        return max_column_width(self.env)

    def _query(self, result: Any, started: float | None = None) -> None:
        mode = self.result_mode()
        if mode != "tableau" and self.view is not None:
            view = self.view(result, mode, self.max_width())
            pump = view.pump
            if pump is not None and pump.error is not None:
                raise pump.error
            how = "finished" if pump is not None and pump.finished and not pump.canceled else "canceled"
            self._write(
                f"[INFO] Result view closed: {len(view.model)} rows, {view.model.changes} changes (query {how}).\n"
            )
            return
        timed = started if co.print_time_cost(self.env) else None
        self._print_table(result, streaming=result.streaming, started=timed)

    def _print_table(
        self, result: Any, streaming: bool, max_width: int | None | bool = False, started: float | None = None
    ) -> None:
        """`max_width`: False for the session's width, None for never cutting. `started`: when
        the query started, to print its time after the row count."""
        from streamsql.printing import TableauPrinter
        from streamsql.shell.pump import BatchPump

        width = self.max_width() if max_width is False else max_width
        printer = TableauPrinter(result.fields, self.out, streaming, width, started)  # type: ignore[arg-type]
        pump = BatchPump(result)
        try:
            printer.print_all(pump, result.time_zone)
        except KeyboardInterrupt:
            pump.cancel()
            self._write(f"\n[INFO] Query canceled after {printer.count} row{'s' if printer.count != 1 else ''}.\n")
        finally:
            if pump.alive:
                pump.cancel()

    # ------------------------------------------------------------------ jobs
    def running_jobs(self) -> int:
        return sum(1 for j in self.env.jobs.values() if j.is_running())

    def report_jobs(self) -> None:
        """Announce background jobs that failed since the last prompt."""
        for jid, job in list(self.env.jobs.items()):
            if job.status == "FAILED" and jid not in self._reported:
                self._reported.add(jid)
                err = job.error
                self._error(f"Job '{jid}' ({job.name}) failed: {type(err).__name__}: {err}")

    # ------------------------------------------------------------------ output
    def _write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()

    def _error(self, message: str) -> None:
        self._write(f"[ERROR] Could not execute SQL statement. Reason:\n{message}\n")

    def _sql_error(self, e: Any, text: str) -> None:
        self._write(sql_error_text(e, e.statement_line, "the input"))
