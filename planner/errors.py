"""The one error family for bad SQL: every parse or validation error carries the line and
column of the offending text and renders it with a caret, so a user never sees a traceback.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class SqlError(Exception):
    """A statement is wrong. `line`/`column` are 1-based and relative to `sql` (the failing
    statement's text); `render()` shows the line with a caret under the column."""

    kind = "SQL error"

    def __init__(
        self,
        message: str,
        sql: str | None = None,
        line: int | None = None,
        column: int | None = None,
        hint: str | None = None,
        statement_line: int | None = None,
        flink_class: str | None = None,
    ) -> None:
        super().__init__(message)
        # The class of the exception Flink raises for the same mistake (the SQL client's
        # first error line names it); None: the default of this error's kind.
        self.flink_class = flink_class
        self.message = message
        self.sql = sql
        self.line = line
        self.column = column
        self.hint = hint
        # 1-based line of the script at which the failing statement starts (line/column
        # above are relative to the statement, as Flink reports them).
        self.statement_line = statement_line

    def with_source(self, sql: str, line_offset: int = 0) -> SqlError:
        """Attach the statement text (when the raiser only knew positions)."""
        if self.sql is None:
            self.sql = sql
        if line_offset and self.line is not None:
            self.line += line_offset
        return self

    def __str__(self) -> str:
        return self.render()

    def render(self) -> str:
        where = ""
        if self.line is not None:
            where = f" at line {self.line}, column {self.column or 1}"
        out = [f"{self.kind}{where}: {self.message}"]
        if self.sql is not None and self.line is not None:
            lines = self.sql.splitlines()
            if 1 <= self.line <= len(lines):
                text = lines[self.line - 1]
                out.append("  " + text)
                out.append("  " + " " * max((self.column or 1) - 1, 0) + "^")
        if self.hint:
            out.append(self.hint)
        return "\n".join(out)


class SqlParseError(SqlError):
    kind = "SQL parse failed"


class SqlValidationError(SqlError):
    kind = "SQL validation failed"


class UnsupportedSqlError(SqlError):
    """Valid Flink SQL that streamsql does not run (yet), or not in this mode."""

    kind = "Unsupported"


def did_you_mean(name: str, candidates: Iterable[str]) -> str | None:
    """'Did you mean ...?' for an unknown table or column name, or None."""
    cands = list(candidates)
    lowered = {c.lower(): c for c in cands}
    if name.lower() in lowered:
        return f"Did you mean '{lowered[name.lower()]}'?"
    match = difflib.get_close_matches(name, cands, n=1, cutoff=0.5)
    if match:
        return f"Did you mean '{match[0]}'?"
    return None
