"""Errors raised while a job runs. The CLI prints them without a traceback."""

from __future__ import annotations


class JobError(Exception):
    """A job failed at run time (bad data, arithmetic error, connector failure)."""


class DataError(JobError):
    """A bad input row: names the file (or source) and the line, like Flink's format errors."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None) -> None:
        where = ""
        if path is not None:
            where = f" (file {path}" + (f", line {line}" if line is not None else "") + ")"
        super().__init__(message + where)
        self.path = path
        self.line = line


class EvaluationError(JobError):
    """An expression could not be evaluated for some row (division by zero, bad CAST)."""


class ConnectorError(JobError):
    """A connector was misconfigured or failed (unknown option, missing path, ...)."""


class ConfigError(JobError, ValueError):
    """A configuration key or `WITH` option has a value its declaration does not accept.

    Names the key and what is accepted. A JobError so the CLI and shell print it without a
    traceback wherever it is found (SET, planning, or a job reading its config); a
    ValueError for callers that validate user input generally."""

    def __init__(self, key: str, value: str, accepted: str) -> None:
        super().__init__(f"Invalid value '{value}' for key '{key}': {accepted}.")
        self.key = key
        self.value = value
        self.accepted = accepted
