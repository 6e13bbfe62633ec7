"""Errors raised while a job runs. The CLI prints them without a traceback."""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager


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


class UserFunctionError(JobError):
    """A user's Python function (scalar, table, aggregate, table aggregate, pandas, async;
    or its `open`/`close`) raised: the job failed because of the user's code, not
    streamsql's. The message names the function and what it was doing, then the user's
    own traceback lines (streamsql's frames dropped), as PyFlink shows a failing UDF's
    Python traceback. The original exception is `__cause__` in the process that raised it
    (a parallel worker's error reaches the client as text: `cause_type`, `cause_message`).

    Plain attributes (no exception object) so it pickles across worker processes."""

    def __init__(
        self,
        message: str,
        function: str = "",
        cause_type: str = "",
        cause_message: str = "",
        user_traceback: str = "",
    ) -> None:
        super().__init__(message)
        self.function = function
        self.cause_type = cause_type
        self.cause_message = cause_message
        self.user_traceback = user_traceback


# Frames dropped from a user function's traceback: streamsql's own source directories and
# the standard library's machinery between streamsql and the user's code (asyncio runs
# async scalar functions, importlib imports the user's module)
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_STDLIB = os.path.dirname(os.path.abspath(os.__file__))
_DROPPED_DIRS = tuple(os.path.join(_ROOT, d) + os.sep for d in ("runtime", "planner", "streamsql")) + tuple(
    os.path.join(_STDLIB, d) + os.sep for d in ("asyncio", "importlib")
)


def _user_frame(filename: str) -> bool:
    if filename.startswith("<frozen importlib"):
        return False
    return not os.path.abspath(filename).startswith(_DROPPED_DIRS)


def user_traceback(e: BaseException) -> str:
    """`e`'s traceback as Python prints it, with only the user's frames (file:line of their
    code), its chained exceptions included, without the final `Type: message` line (the
    error's headline carries it)."""
    import traceback

    te = traceback.TracebackException.from_exception(e)
    seen: set[int] = set()
    pending = [te]
    while pending:  # filter every exception of the chain (cause, context, group members)
        t = pending.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        t.stack = traceback.StackSummary.from_list([f for f in t.stack if _user_frame(f.filename)])
        pending.extend(x for x in (t.__cause__, t.__context__, *(t.exceptions or ())) if x is not None)
    lines = list(te.format())
    tail = len(list(te.format_exception_only()))
    body = lines[: len(lines) - tail] if tail else lines
    if body and body[-1].startswith("Traceback") and len(body) == 1:
        return ""  # no frame of the user's (a builtin called directly)
    return "".join(body).rstrip("\n")


def user_function_error(function: str, doing: str, e: Exception) -> JobError:
    """The job error for an exception `e` a user's function raised while `doing` ("on a
    row", "on a batch", "in open()", ...): streamsql's own JobErrors (a value of the wrong
    type, a missing retract()) pass unchanged; the caller raises the result `from e`."""
    if isinstance(e, JobError):
        return e
    cause = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
    tb = user_traceback(e)
    message = f"The Python function '{function}' failed {doing}: {cause}" + (f"\n{tb}" if tb else "")
    return UserFunctionError(message, function, type(e).__name__, str(e), tb)


@contextmanager
def user_code(function: str, doing: str) -> Iterator[None]:
    """Run a user's function (a whole batch's calls, never one row's: no per-row cost)
    turning what it raises into a UserFunctionError naming `function` and what it was
    `doing`, with the original exception as `__cause__`. streamsql's own JobErrors raised
    inside pass unchanged."""
    try:
        yield
    except JobError:
        raise
    except Exception as e:  # noqa: BLE001 - the user's code may raise anything
        raise user_function_error(function, doing, e) from e
