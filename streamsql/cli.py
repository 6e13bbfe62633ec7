"""The `streamsql` command: run SQL files (-f) or strings (-e), or read a script from stdin.

Errors are printed as the Flink SQL client prints them (with line, column and a caret for
bad SQL), never as a Python traceback; set STREAMSQL_DEBUG=1 to see one anyway.
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import sys
import time
from typing import Any, TextIO

from streamsql.start_up import end_process, limit_blas_threads

EXIT_OK = 0
EXIT_SQL_ERROR = 1
EXIT_JOB_ERROR = 1
EXIT_INTERNAL = 2
EXIT_INTERRUPTED = 130


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="streamsql",
        description="Flink SQL in Python, with no JVM. Runs SQL scripts in streaming or batch mode.",
        epilog="Other commands: 'streamsql list' (running jobs), 'streamsql savepoint <job-id> [<dir>] [--stop]', "
        "'streamsql savepoint inspect <dir>', 'streamsql serve' (REST session server).",
    )
    p.add_argument("-f", "--file", action="append", default=[], help="run the statements of a .sql file (repeatable)")
    p.add_argument("-e", "--execute", action="append", default=[], help="run a SQL string (repeatable)")
    p.add_argument("-i", "--init", help="run a .sql file first (e.g. CREATE TABLEs), then the rest")
    p.add_argument("--mode", choices=["streaming", "batch"], help="runtime mode (default: streaming)")
    p.add_argument(
        "--format",
        choices=["tableau", "jsonl"],
        default="tableau",
        help='result format: tableau (like the Flink SQL client) or jsonl ({"op": "+I", "row": [...]} per line)',
    )
    p.add_argument(
        "-D", "--set", dest="options", action="append", default=[], metavar="KEY=VALUE", help="a configuration option"
    )
    p.add_argument("--parallelism", type=int, help="sets parallelism.default (the job's parallelism)")
    p.add_argument(
        "--restore",
        metavar="latest|PATH",
        help="resume the jobs from a checkpoint or savepoint directory, or from the newest complete "
        "checkpoint under 'execution.checkpointing.dir' (latest; none yet: start fresh)",
    )
    p.add_argument(
        "--runner", choices=["local", "spark"], help="where jobs run (execution.target): local (default) or spark"
    )
    p.add_argument("--master", help="Spark master URL for --runner spark (spark.master), e.g. spark://host:7077")
    p.add_argument(
        "--rest-port", type=int, help="serve the REST API and dashboard of the jobs on this port (rest.port)"
    )
    p.add_argument("--host", help="address the REST server binds to (rest.bind-address, default 127.0.0.1)")
    p.add_argument("--token", help="bearer token the REST server requires (rest.token; needed off loopback)")
    p.add_argument("--token-file", help="read the REST server's bearer token from this file (rest.token-file)")
    p.add_argument(
        "--allow-submit",
        action="store_true",
        help="enable the REST server's POST /jobs and savepoint target directories without a token",
    )
    p.add_argument(
        "--stats", action="store_true", help="after each job (or on Ctrl-C) print per-operator statistics to stderr"
    )
    p.add_argument("--version", action="store_true", help="print the version and exit")
    _flink_client_options(p)
    return p


# Flink's SQL client options with no counterpart here: (flags, metavar, why); each is
# accepted so that a Flink command line runs, and a warning says it does nothing.
_NO_EFFECT_OPTIONS: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (("-j", "--jar"), "JAR file", "JAR files need a JVM; connectors and formats are built in"),
    (("-l", "--library"), "JAR directory", "JAR files need a JVM; connectors and formats are built in"),
    (("-pyarch", "--pyArchives"), "arg", "Python functions run in this process, with its interpreter"),
    (("-pyexec", "--pyExecutable"), "arg", "Python functions run in this process, with its interpreter"),
    (("-pyclientexec", "--pyClientExecutable"), "arg", "Python functions run in this process, with its interpreter"),
    (("-pypath", "--pyPythonPath"), "arg", "Python functions run in this process, with its interpreter"),
    (("-pyreq", "--pyRequirements"), "arg", "install the requirements into this Python environment (pip)"),
)


def _flink_client_options(p: argparse.ArgumentParser) -> None:
    """The rest of Flink 2.x's `sql-client.sh` command line (its `--help`): the `embedded`
    mode word, -s, -hist, -u, -pyfs, and the options of _NO_EFFECT_OPTIONS."""
    p.add_argument(
        "mode_word",
        nargs="?",
        choices=["embedded"],
        metavar="embedded",
        help="Flink's mode word (the default and only mode: jobs run in this process)",
    )
    p.add_argument(
        "-s", "--session", metavar="ID", help="Flink's session identifier: accepted (one session per process)"
    )
    p.add_argument("-hist", "--history", metavar="FILE", help="the shell's history file (sql-client.history-file)")
    p.add_argument(
        "-u",
        "--update",
        dest="execute",
        action="append",
        metavar="SQL",
        help="Flink's deprecated -u: run this statement (as -e)",
    )
    p.add_argument(
        "-pyfs",
        "--pyFiles",
        metavar="FILES",
        action="append",
        default=[],
        help="comma-separated .py/.zip/.whl files or directories added to the Python path (for Python functions)",
    )
    for flags, metavar, why in _NO_EFFECT_OPTIONS:
        p.add_argument(*flags, action="append", default=[], metavar=metavar, help=f"accepted, no effect: {why}")


def python_files(specs: list[str]) -> list[str]:
    """-pyfs paths as entries of sys.path, as Flink adds them to the PYTHONPATH: a .py file's
    directory, an archive or directory as it is."""
    entries: list[str] = []
    for spec in specs:
        for item in (s.strip() for s in spec.split(",")):
            if not item:
                continue
            path = os.path.abspath(item.removeprefix("file://"))
            entry = os.path.dirname(path) if path.endswith(".py") else path
            if entry not in entries:
                entries.append(entry)
    return entries


class Runner:
    """Runs scripts in one TableEnvironment and prints results and errors."""

    # The INSERTs of a `BEGIN STATEMENT SET;` given a statement at a time (None: no set open).
    _statement_set: list[Any] | None = None
    # A file ran (-f, a script on stdin): closing says so, as Flink's client does.
    _ran_file = False

    def __init__(self, args: argparse.Namespace, out: TextIO, err: TextIO) -> None:
        from runtime.checkpoint.options import SAVEPOINT_PATH
        from runtime.config.core import PARALLELISM, RUNTIME_MODE, TARGET
        from runtime.executor.spark.options import MASTER
        from streamsql.environment import EnvironmentSettings, TableEnvironment
        from streamsql.rest import options as rest

        conf: dict[str, str] = {}
        for opt in args.options:
            key, _, value = opt.partition("=")
            conf[key.strip()] = value.strip()
        if args.mode:
            conf[RUNTIME_MODE.key] = args.mode
        if args.parallelism:
            conf[PARALLELISM.key] = str(args.parallelism)
        if getattr(args, "restore", None):
            conf[SAVEPOINT_PATH.key] = args.restore
        if args.runner:
            conf[TARGET.key] = args.runner
        for option, value in (
            (rest.PORT, args.rest_port),
            (rest.BIND_ADDRESS, args.host),
            (rest.TOKEN, args.token),
            (rest.TOKEN_FILE, getattr(args, "token_file", None)),
        ):
            if value is not None:
                conf[option.key] = str(value)
        if getattr(args, "allow_submit", False):
            conf[rest.ALLOW_SUBMIT.key] = "true"
        if args.master:
            conf[MASTER.key] = args.master
            conf.setdefault(TARGET.key, "spark")
        if getattr(args, "history", None):
            from streamsql.shell.options import HISTORY_FILE

            conf[HISTORY_FILE.key] = args.history
        for entry in reversed(python_files(getattr(args, "pyFiles", None) or [])):
            if entry not in sys.path:
                sys.path.insert(0, entry)  # -pyfs: where `CREATE FUNCTION ... LANGUAGE PYTHON` finds modules
        for flags, _, why in _NO_EFFECT_OPTIONS:
            if getattr(args, flags[1].lstrip("-"), None):
                err.write(f"[WARN] {flags[0]}/{flags[1]} has no effect in streamsql: {why}.\n")
        settings = EnvironmentSettings.new_instance().with_configuration(conf).build()
        self.env = TableEnvironment.create(settings)
        self.format = args.format
        self.stats = bool(getattr(args, "stats", False))
        self.out = out
        self.err = err
        # Informational lines go to stderr when stdout carries machine-readable rows.
        self.info = err if self.format == "jsonl" else out
        # Jobs submitted without `table.dml-sync`, maybe still running:
        # (result, control handle, paths of the tables the job writes).
        self._submitted: list[tuple[Any, Any, frozenset[tuple[str, ...]]]] = []

    def run_init(self, text: str, path: str) -> int:
        """`-i FILE` as Flink's SQL client runs an initialization file: what its statements
        print is held back (shown only when one fails), then one line says how it went
        (`Successfully initialized from sql script: file:/...`)."""
        import io

        from planner.errors import SqlError
        from streamsql import client_output as co

        uri = "file:" + os.path.abspath(path)
        saved = (self.out, self.err, self.info)
        held = io.StringIO()
        self.out = self.err = self.info = held
        try:
            code = EXIT_OK
            try:
                statements = file_statements(text)
            except SqlError as e:
                statements, code = [], self._sql_error(e, path)
            for sql, line, column in statements:
                # Flink runs an init file through its gateway's configureSession: only
                # statements that set the session up (no query, no INSERT, no CTAS).
                refused = co.init_refusal(sql)
                if refused is not None:
                    code = self._set_error(refused)
                    break
                code = self.run_script("\n" * (line - 1) + " " * (column - 1) + sql + ";", path)
                if code != EXIT_OK:
                    break
        finally:
            self.out, self.err, self.info = saved
        if code != EXIT_OK:
            self.err.write(held.getvalue())
            self.err.write(f"Failed to initialize from sql script: {uri}.\n")
            return code
        self.info.write(f"Successfully initialized from sql script: {uri}\n")
        return EXIT_OK

    def run_file(self, text: str, source: str) -> int:
        """A script file (-f, or a script on stdin) as Flink's client runs one
        (CliClient.executeFile): `[INFO] Executing SQL from file.`, then statement by
        statement (a `BEGIN STATEMENT SET;` ... `END;` block too, as Flink reads it) the
        statement after a `Flink SQL> ` prompt (its later lines after `> `), what it printed
        and a blank line; after the last one a last prompt (where Flink's reads the end of
        the file). A failed statement ends the file, as in Flink: the statements before it
        have run. QUIT / EXIT end it too, HELP prints the commands. `finish` says
        `Shutting down the session...` / `done.` as Flink's client does when it exits."""
        from planner.errors import SqlError
        from streamsql import client_output as co
        from streamsql.shell.statements import HELP_TEXT, ShellCommandError, parse_shell_command

        self.info.write(co.INFO_EXECUTE_FILE)
        self._ran_file = True
        try:
            statements = file_statements(text)
        except SqlError as e:  # an unclosed string or comment: nothing runs
            return self._sql_error(e, source)
        for sql, line, column in statements:
            self.info.write("\n" + co.echo(sql))
            self.info.flush()
            try:
                command = parse_shell_command(sql)
            except ShellCommandError:
                command = None  # a malformed STOP JOB: the planner reports it
            if command is not None and command.kind == "quit":
                self.info.write(co.INFO_QUIT)
                return EXIT_OK
            if command is not None and command.kind == "help":
                self.info.write(HELP_TEXT)
                continue
            # padded so that errors give the statement's line and column in the file
            code = self.run_script("\n" * (line - 1) + " " * (column - 1) + sql + ";", source)
            if code != EXIT_OK:
                return code
        self.info.write("\n" + co.PROMPT + "\n")
        self.info.flush()
        return EXIT_OK

    def run_script(self, text: str, source: str) -> int:
        from planner.errors import SqlError
        from runtime.errors import JobError, file_access_error, is_file_error
        from streamsql import client_output as co
        from streamsql.shell.statements import BEGIN_SET, END_SET

        pending = self._statement_set
        if BEGIN_SET.match(text) or END_SET.match(text) or pending is not None:
            # `BEGIN STATEMENT SET;` ... `END;` handed over a statement at a time
            return self._statement_set_step(text, source, pending)
        try:
            statements = self.env.parse(text)
        except SqlError as e:
            return self._sql_error(e, source)
        for stmt in statements:
            try:
                code = self._run_statement(stmt)
            except SqlError as e:
                return self._sql_error(e, source)
            except JobError as e:
                self.err.write(co.job_error_text(e, co.verbose(self.env)))
                return EXIT_JOB_ERROR
            except KeyboardInterrupt:
                self.err.write("[INFO] Interrupted: the job was stopped.\n")
                return EXIT_INTERRUPTED
            except BrokenPipeError:
                raise  # the reader went away (`| head`): main() exits quietly
            except Exception as e:  # noqa: BLE001 - the guard: never a traceback, always the statement
                if os.environ.get("STREAMSQL_DEBUG"):
                    raise
                if is_file_error(e):  # a file the OS refused, wherever it was opened: name it
                    self.err.write(co.job_error_text(file_access_error(e, "access")))  # type: ignore[arg-type]
                    return EXIT_JOB_ERROR
                return self._internal_error(e, stmt, source)
            if code != EXIT_OK:
                return code
        return EXIT_OK

    def _statement_set_step(self, text: str, source: str, pending: list[Any] | None) -> int:
        """One statement of a statement set given a statement at a time, as Flink's client
        takes them: BEGIN opens the set, each INSERT (or CREATE TABLE ... AS, Flink's gateway
        takes those too) is added, END creates the CTAS tables and submits the INSERTs as
        one job."""
        from planner.errors import SqlError
        from planner.statements import StatementSet
        from streamsql import client_output as co
        from streamsql.shell.statements import BEGIN_SET, END_SET

        if BEGIN_SET.match(text):
            if pending is not None:
                return self._set_error(co.SET_ONLY_INSERTS)
            self._statement_set = []
            self.info.write(co.INFO_EXECUTED)
            return EXIT_OK
        if END_SET.match(text):
            if pending is None:
                return self._set_error(co.SET_END_WITHOUT_BEGIN)
            self._statement_set = None
            if not pending:
                self.info.write(co.INFO_EXECUTED)
                return EXIT_OK
            sql = "\n".join(i.sql + ";" for i in pending)
            try:
                inserts = self.env.statement_set_inserts(pending)
                if not inserts:  # only CTAS IF NOT EXISTS of existing tables
                    self.info.write(co.INFO_EXECUTED)
                    return EXIT_OK
                return self._run_statement(StatementSet(inserts=tuple(inserts), sql=sql))
            except SqlError as e:
                return self._sql_error(e, source)
        assert pending is not None
        try:
            statements = self.env.parse(text)
        except SqlError as e:
            return self._sql_error(e, source)
        for stmt in statements:
            if not self.env.in_statement_set(stmt):
                return self._set_error(co.SET_ONLY_INSERTS)
            pending.append(stmt)
            self.info.write(co.INFO_EXECUTED)
        return EXIT_OK

    def _set_error(self, message: str) -> int:
        self.err.write(f"[ERROR] Could not execute SQL statement. Reason:\n{message}\n")
        return EXIT_SQL_ERROR

    def _internal_error(self, e: Exception, stmt: object, source: str) -> int:
        """An unexpected exception while running a statement: a clean error naming the
        statement (where it starts, its first line), never a traceback."""
        line = getattr(stmt, "line", None)
        text = (getattr(stmt, "sql", "") or "").strip().splitlines()
        head = (text[0][:100] + (" ..." if len(text) > 1 or len(text[0]) > 100 else "")) if text else ""
        where = f" starting at line {line} of {source}" if line is not None else f" of {source}"
        self.err.write(
            f"[ERROR] Could not execute the SQL statement{where}: {head}\n"
            f"Reason: internal error ({type(e).__name__}: {str(e)[:500]})\n"
            "This is a bug in streamsql; rerun with STREAMSQL_DEBUG=1 for details and please report it.\n"
        )
        return EXIT_INTERNAL

    def _run_statement(self, stmt: object) -> int:
        from planner.statements import Query, StatementSet
        from streamsql import client_output as co

        if isinstance(stmt, StatementSet) and stmt.sql.lstrip().upper().startswith("BEGIN"):
            # Flink's client takes `BEGIN STATEMENT SET;` ... `END;` a statement at a time.
            self.info.write(co.INFO_EXECUTED * (1 + len(stmt.inserts)))
        self._await_writers(stmt)
        started = time.monotonic()
        result = self.env.execute_statement(stmt)  # type: ignore[arg-type]
        if isinstance(stmt, Query):
            refusal = co.non_interactive_refusal(self.env)
            if refusal is not None:  # Flink's client refuses a full-screen view in a script
                result.cancel()
                return self._set_error(refusal)
            self._print_result(result, started=started if co.print_time_cost(self.env) else None)
            self._print_stats(result)
        elif co.is_job_statement(stmt):
            job = result.job
            control = self._register(job)
            if not co.dml_sync(self.env):
                # Flink's client submits the job, prints its id and goes on with the next
                # statement; the job runs on (here: in this process, until finish()).
                self.info.write(co.submitted(job.get_job_id() if job else ""))
                self.info.flush()
                self._submitted.append((result, control, self._tables_written(stmt)))
                return EXIT_OK
            if self._wait_job(result, control):
                self.info.write(co.INFO_COMPLETE)
        elif co.has_rows(stmt, result):
            co.print_static(result, self.out)
        else:
            self.info.write(co.INFO_EXECUTED)
        return EXIT_OK

    def _wait_job(self, result: Any, control: Any) -> bool:
        """Wait for one job with the progress bar. Ctrl-C stops the job: False."""
        from streamsql.progress import ProgressBar, source_progress

        job = result.job
        try:
            with ProgressBar(self.err, lambda: source_progress(job._executor() if job else None)):
                result.wait()
        except KeyboardInterrupt:
            result.cancel()
            if job is not None:
                job.wait()
            self.info.write("[INFO] Job stopped.\n")
            return False
        finally:
            if control is not None and job is not None:
                control.unregister(job.job_id)
            self._print_stats(result)
        return True

    def finish(self, code: int = EXIT_OK) -> int:
        """After the scripts: the jobs submitted without `table.dml-sync` run in this
        process (Flink's would run on its cluster after the client exits), so wait for
        them here, in submission order. A failed job makes the exit code EXIT_JOB_ERROR."""
        from runtime.errors import JobError
        from streamsql import client_output as co

        while self._submitted:
            result, control, _ = self._submitted.pop(0)
            try:
                finished = self._wait_job(result, control)
            except JobError as e:
                self.err.write(co.job_error_text(e, co.verbose(self.env)))
                code = code if code != EXIT_OK else EXIT_JOB_ERROR
                continue
            if not finished:  # Ctrl-C: every job of the script stops
                for other, other_control, _ in self._submitted:
                    other.cancel()
                    if other_control is not None and other.job is not None:
                        other_control.unregister(other.job.job_id)
                self._submitted.clear()
        if self._ran_file:
            self.info.write(co.SESSION_CLOSED)
            self.info.flush()
        return code

    def _tables_written(self, stmt: Any) -> frozenset[tuple[str, ...]]:
        """INSERT / DELETE / UPDATE: their table; a statement set: its INSERTs'; CTAS: the new table."""
        inserts = getattr(stmt, "inserts", None) or (stmt,)
        names = [
            getattr(i, "table", None) or (getattr(i, "name", None) if hasattr(i, "as_query") else None) for i in inserts
        ]
        return frozenset(self.env.catalog.qualify(n) for n in names if n)

    def _tables_read(self, stmt: Any) -> set[tuple[str, ...]]:
        """Paths of the tables a statement reads (through views too)."""
        from sqlglot import exp

        from planner.catalog import CatalogView

        catalog = self.env.catalog
        found: set[tuple[str, ...]] = set()
        queries = [getattr(stmt, "query", None), getattr(stmt, "as_query", None)]
        queries += [i.query for i in getattr(stmt, "inserts", None) or ()]
        if getattr(stmt, "table", None) and not hasattr(stmt, "query"):  # DELETE / UPDATE read their table
            found.add(catalog.qualify(stmt.table))
        seen_views: set[tuple[str, ...]] = set()
        while queries:
            query = queries.pop()
            if not isinstance(query, exp.Expression):
                continue
            for t in query.find_all(exp.Table):
                parts = tuple(p for p in (t.catalog, t.db, t.name) if p)
                if not parts:
                    continue
                path = catalog.qualify(parts)
                found.add(path)
                obj = catalog.get_path(path)
                if isinstance(obj, CatalogView) and path not in seen_views:
                    seen_views.add(path)
                    queries.append(obj.query)
        return found

    def _await_writers(self, stmt: Any) -> None:
        """A statement that reads a table a submitted bounded job writes waits for that job
        first, so `INSERT INTO t ...; SELECT * FROM t;` in a script reads the whole result
        (Flink's client would race the still-running job). Jobs writing other tables, and
        unbounded jobs, run on beside it, as in Flink."""
        if not self._submitted:
            return
        reads = self._tables_read(stmt)
        for entry in list(self._submitted):
            result, control, writes = entry
            if writes & reads and (result.job is None or result.job.bounded):
                self._submitted.remove(entry)
                self._wait_job(result, control)

    def _register(self, job: Any) -> Any:
        """A streaming INSERT job becomes reachable from other processes (`streamsql list`,
        `streamsql savepoint <job-id>`: streamsql/control.py). Not for batch jobs, and the
        module is not even imported for them."""
        if job is None or not self.env.is_streaming or self.env.runner != "local":
            return None
        from streamsql.control import register_job

        try:
            return register_job(job, self.env.get_config().to_dict())
        except OSError as e:  # an unwritable jobs directory must not stop the job
            self.err.write(f"[WARN] The job cannot be reached by 'streamsql savepoint': {e}\n")
            return None

    def _print_stats(self, result: object) -> None:
        """--stats: the job's per-operator table (streamsql.stats) on stderr; and always a
        summary line when input rows were skipped as unparsable."""
        from streamsql.stats import format_stats, skipped_summary

        try:
            rows = result.metrics()  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - statistics are best effort
            rows = []
        summary = skipped_summary(rows)
        if summary:
            self.err.write(summary + "\n")
            self.err.flush()
        if not self.stats:
            return
        if rows:
            self.err.write("[INFO] Operator statistics:\n" + format_stats(rows) + "\n")
            self.err.flush()

    def _print_result(self, result: object, force_batch: bool = False, started: float | None = None) -> None:
        """A query's rows (tableau or jsonl); `started`: when it started, for the time after
        the row count (`sql-client.display.print-time-cost`)."""
        from streamsql.printing import TableauPrinter, jsonl_lines
        from streamsql.result import TableResult

        assert isinstance(result, TableResult)
        from streamsql.client_output import max_column_width

        max_width = max_column_width(self.env)
        try:
            if self.format == "jsonl" and not force_batch:
                for line in jsonl_lines(result.batches(), result.fields, result.time_zone):
                    self.out.write(line + "\n")
                self.out.flush()
            else:
                streaming = result.streaming and not force_batch
                TableauPrinter(result.fields, self.out, streaming, max_width, started).print_all(
                    result.batches(), result.time_zone
                )
        except KeyboardInterrupt:
            result.cancel()
            self.info.write("\n[INFO] Query canceled.\n")

    def _sql_error(self, e: object, source: str) -> int:
        from planner.errors import SqlError
        from streamsql.client_output import sql_error_text

        assert isinstance(e, SqlError)
        self.err.write(sql_error_text(e, e.statement_line, source))
        return EXIT_SQL_ERROR


def file_statements(text: str) -> list[tuple[str, int, int]]:
    """A script's statements (text without the `;`, line, column) as Flink's client reads a
    file: one at a time, also inside a `BEGIN STATEMENT SET;` ... `END;` block (which
    `split_script` keeps whole, as the shell's input box does)."""
    from planner.parse import split_script
    from streamsql.shell.statements import BEGIN_SET

    out: list[tuple[str, int, int]] = []
    for sql, line, column in split_script(text):
        head = re.match(r"\s*BEGIN\s+STATEMENT\s+SET\s*;", sql, re.IGNORECASE)
        if head is None or BEGIN_SET.match(sql):
            out.append((sql, line, column))
            continue
        out.append(("BEGIN STATEMENT SET", line, column))
        rest = sql[head.end() :]
        before = sql[: head.end()]
        rest_line = line + before.count("\n")
        rest_column = (column + len(before) if "\n" not in before else len(before) - before.rindex("\n")) + 0
        for inner, inner_line, inner_column in split_script(rest + ";"):
            first = inner_line == 1
            out.append((inner, rest_line + inner_line - 1, (rest_column + inner_column - 1) if first else inner_column))
    return out


def _read(path: str) -> str:
    """A script's text; OSError naming the file for a missing/unreadable/non-UTF-8 one."""
    if os.path.isdir(path):
        raise IsADirectoryError(21, "Is a directory (give a .sql file)", path)
    with open(path, encoding="utf-8") as fh:
        try:
            return fh.read()
        except UnicodeDecodeError as e:
            raise OSError(
                0,
                f"not UTF-8 text (byte 0x{e.object[e.start]:02x} at offset {e.start}); save the script as UTF-8",
                path,
            ) from None


def main(argv: list[str] | None = None) -> int:
    """The `streamsql` command; returns its exit status (`run` is the process's entry point)."""
    # Start-up allocates a few hundred thousand long-lived objects (modules, classes,
    # functions); the cyclic GC would scan them ~160 times while they load and find nothing
    # to free (~10% of `streamsql -e "SELECT 1"`). It is off until the session exists, then
    # `_start_up_done` freezes what start-up built and turns it back on.
    gc.disable()
    limit_blas_threads()
    try:
        return _dispatch(argv)
    finally:
        _start_up_done()


def _start_up_done() -> None:
    """Turn the GC back on (idempotent), with the objects start-up allocated moved to the
    permanent generation (`gc.freeze`): they live as long as the process, and later
    collections (a long streaming job's) need not scan them again."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def _dispatch(argv: list[str] | None) -> int:
    from runtime.pandas_interop import keep_pyarrow_from_pandas

    keep_pyarrow_from_pandas()  # the CLI never hands pyarrow pandas objects: skip its ~0.25 s import
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["savepoint"]:
        from streamsql.savepoint_cli import savepoint_main

        return savepoint_main(argv[1:], sys.stdout, sys.stderr)
    if argv[:1] == ["list"]:
        from streamsql.savepoint_cli import list_main

        return list_main(argv[1:], sys.stdout, sys.stderr)
    if argv[:1] == ["serve"]:
        from streamsql.rest.serve_cli import serve_main

        _start_up_done()  # a long-running server
        return serve_main(argv[1:], sys.stderr)
    args = build_parser().parse_args(argv)
    if args.version:
        from importlib.metadata import version

        print(f"streamsql {version('streamsql')}")
        return EXIT_OK
    try:
        return _main(args)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # stdout's reader is gone (`streamsql ... | head`): stop quietly, as `cat` does;
        # stdout is pointed at /dev/null so the interpreter's final flush cannot fail again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except Exception as e:  # noqa: BLE001 - the last line of defence against tracebacks
        if os.environ.get("STREAMSQL_DEBUG"):
            raise
        sys.stderr.write(
            f"[ERROR] Internal error: {type(e).__name__}: {e}\n"
            "This is a bug in streamsql; rerun with STREAMSQL_DEBUG=1 for details and please report it.\n"
        )
        return EXIT_INTERNAL


def _main(args: argparse.Namespace) -> int:
    from runtime.errors import ConfigError
    from streamsql.rest.options import PORT

    try:
        runner = Runner(args, sys.stdout, sys.stderr)
    except ConfigError as e:  # a bad -D / --option value
        sys.stderr.write(f"[ERROR] {e}\n")
        return EXIT_SQL_ERROR
    _start_up_done()
    if PORT.is_set(runner.env.get_config()):
        from streamsql.rest.server import RestConfigError, server_options

        try:  # refused before any statement runs (the server starts with the first job)
            server_options(runner.env.get_config())
        except RestConfigError as e:
            sys.stderr.write(f"[ERROR] Could not start the REST server: {e}\n")
            return EXIT_SQL_ERROR
    scripts: list[tuple[str, str]] = []
    try:
        init = _read(args.init) if args.init else None
        for path in args.file:
            scripts.append((_read(path), path))
    except OSError as e:
        sys.stderr.write(f"[ERROR] Could not read {e.filename}: {e.strerror}\n")
        return EXIT_SQL_ERROR
    for i, text in enumerate(args.execute):
        scripts.append((text, f"-e #{i + 1}"))
    if init is not None:
        code = runner.run_init(init, args.init)
        if code != EXIT_OK:
            return runner.finish(code)
    if not args.file and not args.execute:
        if sys.stdin.isatty():
            from streamsql.shell import run_shell

            return run_shell(runner)
        scripts.append((sys.stdin.read(), "<stdin>"))
    for text, source in scripts:
        # a file or stdin runs as Flink's client runs a file (statements echoed); -e as given
        code = runner.run_script(text, source) if source.startswith("-e #") else runner.run_file(text, source)
        if code != EXIT_OK:
            return runner.finish(code)
    return runner.finish()


def run() -> None:
    """The process's entry point (the `streamsql` console script, `python -m streamsql.cli`):
    `main`, then the process ends (`end_process`: without the interpreter's teardown).
    Tests and embedding programs call `main`, which returns the exit status instead."""
    end_process(main())


if __name__ == "__main__":
    run()
