"""The real `streamsql` shell in a real terminal: tmux runs it, `tmux send-keys` types,
`tmux capture-pane -p` reads the screen. Installs tmux when missing (as root); skips with
the reason only when that is impossible."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from clitools import ROOT


def _ensure_tmux() -> str | None:
    """Why tmux is unavailable, or None when it is there (installed now if need be)."""
    if shutil.which("tmux"):
        return None
    if hasattr(os, "geteuid") and os.geteuid() != 0:
        return "tmux is not installed and the tests do not run as root to apt-get install it"
    try:
        subprocess.run(["apt-get", "install", "-y", "-q", "tmux"], capture_output=True, timeout=300, check=False)
        if not shutil.which("tmux"):
            subprocess.run(["apt-get", "update", "-q"], capture_output=True, timeout=300, check=False)
            subprocess.run(["apt-get", "install", "-y", "-q", "tmux"], capture_output=True, timeout=300, check=False)
    except (OSError, subprocess.SubprocessError) as e:
        return f"could not install tmux: {e}"
    return None if shutil.which("tmux") else "apt-get install tmux failed"


class Tmux:
    def __init__(self, name: str) -> None:
        self.name = name

    def send(self, text: str, enter: bool = True) -> None:
        """Type `text` literally. tmux treats an argument ending in ';' as a command
        separator, so each ';' is sent as its key code."""
        for i, part in enumerate(text.split(";")):
            if i:
                subprocess.run(["tmux", "send-keys", "-t", self.name, "-H", "3b"], check=True)
            if part:
                subprocess.run(["tmux", "send-keys", "-t", self.name, "-l", part], check=True)
        if enter:
            self.key("Enter")

    def key(self, *keys: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, *keys], check=True)

    def screen(self) -> str:
        return subprocess.run(
            ["tmux", "capture-pane", "-p", "-t", self.name], capture_output=True, text=True, check=True
        ).stdout

    def wait_for(self, pattern: str, timeout: float = 300.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if re.search(pattern, screen):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{pattern!r} never showed on the screen:\n{screen}")
            time.sleep(0.1)


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    reason = _ensure_tmux()
    if reason:
        pytest.skip(reason)
    name = f"streamsql-test-{uuid.uuid4().hex[:8]}"
    home = tmp_path / "home"
    home.mkdir()
    # The environment goes in the command: a running tmux server would not pass ours on.
    # The pane stays after the shell exits, so the test can read how it ended.
    cmd = (
        f"env HOME={shlex.quote(str(home))} PYTHONPATH={shlex.quote(str(ROOT))} TERM=xterm-256color "
        f"{shlex.quote(sys.executable)} -m streamsql.cli; echo SHELL-EXITED-$?; sleep 300"
    )
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", name, "-x", "110", "-y", "32", "-c", str(tmp_path), cmd], check=True
    )
    try:
        yield Tmux(name)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True, check=False)


def test_shell_session_in_a_terminal(tmux: Tmux, tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "f1.csv").write_text("a,1\nb,2\n")
    tmux.wait_for(r"streamsql>")
    screen = tmux.wait_for(r"STREAMING .* runner: local .* parallelism: 1 .* jobs running: 0")

    tmux.send(
        "CREATE TABLE t (k STRING, v INT) WITH ('connector'='filesystem', 'path'='in', 'format'='csv', "
        "'source.monitor-interval'='100ms');"
    )
    tmux.wait_for(r"Execute statement succeeded")
    # Multi-line: Enter before the ';' continues the statement.
    tmux.send("SELECT k, SUM(v) AS s")
    tmux.wait_for(r"\n\s+->")
    tmux.send("FROM t GROUP BY k;")
    tmux.wait_for(r"\| \+I \|\s+b \|\s+2 \|")
    (tmp_path / "in" / "f2.csv").write_text("a,10\n")
    tmux.wait_for(r"\| \+U \|\s+a \|\s+11 \|")
    # Ctrl-C cancels the unbounded query, and the shell is still there.
    tmux.key("C-c")
    tmux.wait_for(r"Query canceled after 4 rows\.\nstreamsql>")

    # Tab completion of a table name and a column.
    tmux.send("DESCRIBE ", enter=False)
    tmux.key("Tab")
    tmux.wait_for(r"streamsql> DESCRIBE t")
    tmux.send(";")
    tmux.wait_for(r"\|\s+k \|\s+STRING \|")

    # An error: message with a caret, no traceback.
    tmux.send("SELECT nope FROM t;")
    screen = tmux.wait_for(r"Column 'nope' not found")
    assert re.search(r"SELECT nope FROM t\n\s+\^", screen), screen
    assert "Traceback" not in screen

    # Full-screen live table: the materialized result with a status line.
    tmux.send("SET 'sql-client.execution.result-mode' = 'table';")
    tmux.send("SELECT k, SUM(v) AS s FROM t GROUP BY k;")
    screen = tmux.wait_for(r"2 rows \| \d changes \| watermark: none \| running")
    assert re.search(r"a \|\s+11", screen) and re.search(r"b \|\s+2", screen), screen
    (tmp_path / "in" / "f3.csv").write_text("c,3\n")
    tmux.wait_for(r"3 rows \| \d changes")
    tmux.key("q")
    tmux.wait_for(r"Result view closed: 3 rows, \d changes \(query canceled\)")

    tmux.send("QUIT;")
    tmux.wait_for(r"SHELL-EXITED-0")
    assert "#" in (tmp_path / "home" / ".streamsql_history").read_text()
