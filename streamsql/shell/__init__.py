"""The interactive SQL shell (`streamsql` on a terminal). See docs/shell.md.

This module stays import-light: prompt-toolkit is imported only when the shell opens, so
`streamsql -e ...` and `-f` start as fast as before.
"""

from __future__ import annotations

from typing import Any


def run_shell(runner: Any) -> int:
    """Open the interactive shell over `runner.env` (a streamsql.cli.Runner)."""
    from streamsql.shell.app import run

    return run(runner)
