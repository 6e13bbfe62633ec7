"""Free loopback ports and readiness waits shared by the server fixtures."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def accepts(port: int) -> bool:
    """Whether something accepts TCP connections on 127.0.0.1:port."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def wait_until(ready: Callable[[], bool], *, timeout: float, what: str, alive: Callable[[], str | None]) -> None:
    """Poll ``ready`` until true; fail early with ``alive()``'s message when the server died."""
    deadline = time.monotonic() + timeout
    while not ready():
        died = alive()
        if died is not None:
            raise RuntimeError(f"{what} exited before it was ready: {died}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} was not ready within {timeout:.0f} s")
        time.sleep(0.1)
