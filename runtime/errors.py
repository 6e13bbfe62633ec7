"""Errors raised while a job runs. The CLI prints them without a traceback."""

from __future__ import annotations

import errno
import os
import re


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


class FileAccessError(ConnectorError):
    """The operating system refused a file a job reads or writes (permission denied, not a
    directory, disk full, ...): names the file and what the job was doing with it."""

    def __init__(self, doing: str, path: str, reason: str) -> None:
        super().__init__(f"Cannot {doing} '{path}': {reason}.")
        self.path = path
        self.reason = reason


# errors of a file, not of a pipe or socket (a closed stdout must still end quietly)
_FILE_ERRNOS = frozenset(
    {errno.EACCES, errno.EPERM, errno.ENOENT, errno.EISDIR, errno.ENOTDIR, errno.ENOSPC, errno.EROFS, errno.EDQUOT}
)


def is_file_error(e: BaseException) -> bool:
    """Whether `e` is the operating system refusing a file (what `file_access_error` reports)."""
    return isinstance(e, OSError) and not isinstance(e, ConnectionError) and e.errno in _FILE_ERRNOS


_QUOTED_PATH = re.compile(r"'([^']+)'")


def file_access_error(e: OSError, doing: str, path: str | None = None) -> FileAccessError:
    """`e` as a FileAccessError. The file is the one the OS named (Python's `filename`; a
    pyarrow error names it in its text), else `path`; the reason is the OS's words for the
    error number ("Permission denied")."""
    named = e.filename if isinstance(e.filename, str) else None
    if named is None:
        m = _QUOTED_PATH.search(str(e))
        named = m.group(1) if m else None
    reason = os.strerror(e.errno) if e.errno else (e.strerror or str(e) or type(e).__name__)
    return FileAccessError(doing, named or path or "?", reason)
