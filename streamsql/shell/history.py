"""Persistent statement history (`sql-client.history-file`, default `~/.streamsql_history`).

prompt-toolkit's FileHistory keeps multi-line statements as one entry, loads the file at
start and appends each submitted statement, so Up/Down and Ctrl-R (reverse search) reach
statements of earlier sessions. When the file cannot be used (read-only home, a directory
in the way) the shell keeps an in-memory history and says so once, instead of failing.
"""

from __future__ import annotations

import os
from typing import Any, TextIO

from streamsql.shell.options import HISTORY_FILE


def history_path(config: Any) -> str:
    """The history file of a session's configuration, `~` expanded."""
    raw = HISTORY_FILE.get(config)
    return os.path.expanduser(os.path.expandvars(raw))


def open_history(path: str, warn: TextIO | None = None) -> Any:
    """A FileHistory on `path` (its directory created), or an InMemoryHistory when the
    file is not usable."""
    from prompt_toolkit.history import FileHistory, InMemoryHistory

    try:
        directory = os.path.dirname(path)
        if directory:
            os.makedirs(directory, exist_ok=True)
        with open(path, "a", encoding="utf-8"):
            pass
        return FileHistory(path)
    except OSError as e:
        if warn is not None:
            warn.write(f"[WARNING] History file {path} is not usable ({e.strerror}); history is kept in memory.\n")
        return InMemoryHistory()
