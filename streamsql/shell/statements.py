"""Shell commands the SQL parser does not know: HELP, QUIT/EXIT and STOP JOB.

They are recognized on a statement's text before it goes to the planner, so the planner
stays a pure Flink SQL parser and the shell owns its own commands (as the Flink SQL client
does). `is_submittable` decides when Enter runs the input instead of starting a new line.
"""

from __future__ import annotations

import re

from runtime.frozen import frozen_dataclass

_QUIT = re.compile(r"^\s*(QUIT|EXIT)\s*;?\s*$", re.IGNORECASE)
_HELP = re.compile(r"^\s*HELP\s*;?\s*$", re.IGNORECASE)
_STOP = re.compile(
    r"^\s*STOP\s+JOB\s+'(?P<id>(?:[^']|'')*)'(?P<rest>(?:\s+WITH\s+(?:SAVEPOINT|DRAIN))*)\s*;?\s*$",
    re.IGNORECASE,
)
_STOP_START = re.compile(r"^\s*STOP\b", re.IGNORECASE)
# `BEGIN STATEMENT SET;` and `END;` typed on their own: the shell buffers the INSERTs in
# between, as Flink's SQL client does.
BEGIN_SET = re.compile(r"^\s*BEGIN\s+STATEMENT\s+SET\s*;?\s*$", re.IGNORECASE)
END_SET = re.compile(r"^\s*END\s*;?\s*$", re.IGNORECASE)


@frozen_dataclass
class ShellCommand:
    """A parsed shell command: kind is "quit", "help" or "stop"."""

    kind: str
    job_id: str | None = None
    with_savepoint: bool = False
    with_drain: bool = False


class ShellCommandError(ValueError):
    """A malformed shell command (e.g. `STOP JOB` without a quoted id)."""


def parse_shell_command(sql: str) -> ShellCommand | None:
    """The shell command `sql` spells, or None when it is SQL for the planner."""
    if _QUIT.match(sql):
        return ShellCommand("quit")
    if _HELP.match(sql):
        return ShellCommand("help")
    m = _STOP.match(sql)
    if m:
        rest = m.group("rest").upper()
        return ShellCommand(
            "stop",
            job_id=m.group("id").replace("''", "'"),
            with_savepoint="SAVEPOINT" in rest,
            with_drain="DRAIN" in rest,
        )
    if _STOP_START.match(sql):
        raise ShellCommandError("Expected STOP JOB '<job id>' [WITH SAVEPOINT] [WITH DRAIN]")
    return None


def is_submittable(text: str) -> bool:
    """Whether Enter should run `text`: every statement ends with `;` (outside strings,
    comments and STATEMENT SET blocks), or it is a bare QUIT / EXIT / HELP."""
    from planner.parse import is_complete

    if _QUIT.match(text) or _HELP.match(text):
        return True
    if BEGIN_SET.match(text) or END_SET.match(text):
        return text.rstrip().endswith(";")
    return is_complete(text)


HELP_TEXT = """\
Statements end with ';' (Enter inside an unfinished statement starts a new line;
a STATEMENT SET block ends at 'END;'). Tab completes keywords, functions, tables,
columns (t.<Tab> lists t's columns) and SET keys and values.

  SELECT ... / WITH ... / VALUES ...   run a query (see sql-client.execution.result-mode)
  INSERT INTO t SELECT ...             submit a job in the background, print its id
  EXECUTE STATEMENT SET BEGIN ... END; submit several INSERTs as one job
  BEGIN STATEMENT SET; ... END;        the same, typed one statement at a time
  CREATE [TEMPORARY] TABLE | VIEW      define tables and views; DROP TABLE | VIEW
  CREATE | DROP | USE | ALTER CATALOG | DATABASE, ALTER TABLE | VIEW
  SHOW TABLES | VIEWS | FUNCTIONS | JOBS | CATALOGS | DATABASES | COLUMNS FROM t
  SHOW CREATE TABLE | VIEW | CATALOG     the DDL of an object (docs/catalogs.md)
  DESCRIBE t                           columns, types, keys and watermark of t
  EXPLAIN [CHANGELOG_MODE] ...         the optimized plan of a query or INSERT
  SET;                                 list the configuration
  SET 'key' = 'value';                 set an option, e.g.
                                         SET 'sql-client.execution.result-mode' = 'table';
  RESET ['key'];                       reset one option, or all
  STOP JOB '<id>' [WITH SAVEPOINT];    stop a job listed by SHOW JOBS
  HELP;                                this text
  QUIT; / EXIT; / Ctrl-D               leave the shell

Keys: Ctrl-C cancels the running query (or clears the input); Up/Down walk the history,
Ctrl-R searches it; Alt-Enter always inserts a newline.
Result modes: tableau prints rows as they come; changelog and table open a full-screen
view (table: the materialized result updated live; q leaves it, PgUp/PgDn scroll).
"""
