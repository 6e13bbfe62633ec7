"""Free loopback ports and readiness waits shared by the server fixtures.

A port is found free, closed, then handed to a server that binds it a moment later; in
between, another process (a client's outgoing connection takes a port from the same range,
or another test session's server) can take it. The server then exits before it is ready,
or worse, a readiness check reaches the other process. So a server start is retried on new
ports when the server exited before it answered (``retry_start``), and the readiness checks
also ask that our process is still running once the port answers."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

# Generous: they only decide a failure when a server never comes up, and a server starts
# many times slower on a loaded CI machine (2 cores, the other tests' jobs running).
READY_TIMEOUT_S = 180.0
START_ATTEMPTS = 3


class ServerExitedError(RuntimeError):
    """The server process ended before it answered (often: its port was taken meanwhile)."""


def die_with_parent(sig: int) -> Callable[[], None] | None:
    """A Popen `preexec_fn` that has the server sent `sig` when the process that started it
    (the pytest worker) dies: a run killed by a timeout or a CI runner then leaves no broker
    or database behind (its fixtures' teardown never ran). Linux's prctl; None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)

    def preexec() -> None:
        libc.prctl(1, sig)  # PR_SET_PDEATHSIG (after setuid: Popen's `user` does not clear it)

    return preexec


def spawn(
    cmd: list[str], log_path: Path, stop_signal: int, **popen: object
) -> tuple[subprocess.Popen[bytes], Callable[[], str | None]]:
    """Start a server in its own session (so its whole process group can be killed), its
    output in `log_path`, sent `stop_signal` when the pytest worker dies. Returns the
    process and its `alive` check for ``wait_until``: None while it runs, else its exit
    code and the log's tail."""
    with open(log_path, "wb") as log:  # the child has its own copy of the descriptor
        proc = subprocess.Popen(  # type: ignore[call-overload]
            cmd,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=die_with_parent(stop_signal),
            **popen,
        )

    def exited() -> str | None:
        if proc.poll() is None:
            return None
        return f"exit {proc.returncode}: {log_path.read_text(errors='replace')[-2000:]}"

    return proc, exited


def kill_group(proc: subprocess.Popen[bytes], wait_s: float = 10) -> None:
    """SIGKILL a server's process group (a start that failed, or a server whose data is
    thrown away) and reap it."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(wait_s)


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def accepts(port: int) -> bool:
    """Whether something accepts TCP connections on 127.0.0.1:port."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            return True
    except OSError:
        return False


def listens(pid: int, port: int) -> bool:
    """Whether process `pid`, or a process of its group (a launcher's JVM child), holds the
    listening socket of `port`: a readiness check must not take another process that took
    the port meanwhile for our server. True where /proc cannot tell (not Linux)."""
    tables = [t for t in (Path("/proc/net/tcp"), Path("/proc/net/tcp6")) if t.exists()]
    if not tables:
        return True
    inodes = set()
    for table in tables:
        for line in table.read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                inodes.add(f"socket:[{fields[9]}]")
    if not inodes:
        return False
    try:
        group = os.getpgid(pid)
    except OSError:  # it ended
        return False
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if os.getpgid(int(proc.name)) != group:
                continue
            fds = list((proc / "fd").iterdir())
        except OSError:  # ended meanwhile
            continue
        if inodes.intersection(_link(fd) for fd in fds):
            return True
    return False


def _link(fd: Path) -> str:
    try:
        return os.readlink(fd)
    except OSError:  # closed meanwhile
        return ""


def wait_until(
    ready: Callable[[], bool], *, timeout: float = READY_TIMEOUT_S, what: str, alive: Callable[[], str | None]
) -> None:
    """Poll ``ready`` until true and the server is still running then; raise
    ``ServerExitedError`` with ``alive()``'s message when the server died."""
    deadline = time.monotonic() + timeout
    while True:
        if ready():
            died = alive()
            if died is None:
                return
        else:
            died = alive()
        if died is not None:
            raise ServerExitedError(f"{what} exited before it was ready: {died}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} was not ready within {timeout:.0f} s")
        time.sleep(0.1)


def retry_start(start: Callable[[], T], attempts: int = START_ATTEMPTS) -> T:
    """``start()`` again (it picks new ports) when the server exited before it was ready."""
    for attempt in range(attempts):
        try:
            return start()
        except ServerExitedError:
            if attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")
