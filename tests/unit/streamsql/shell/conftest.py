"""Drive the shell through prompt-toolkit's pipe input (no terminal needed)."""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from streamsql.environment import TableEnvironment


class Driven:
    """A shell running in a thread-safe harness: `out` is what the shell printed."""

    def __init__(self, env: TableEnvironment, history: Path) -> None:
        self.env = env
        self.history = history
        self.out = io.StringIO()
        self.code: int | None = None
        self.shell: Any = None

    def text(self) -> str:
        return self.out.getvalue()

    def wait_for(self, needle: str, timeout: float = 300.0) -> None:
        deadline = time.monotonic() + timeout
        while needle not in self.text():
            if time.monotonic() > deadline:
                raise AssertionError(f"{needle!r} never appeared in:\n{self.text()}")
            time.sleep(0.02)


@pytest.fixture
def shell(tmp_path: Path) -> Callable[..., Driven]:
    """`shell(keys, during=None, env=None)`: run a shell on `keys` (sent up front), with
    `during(driven, pipe)` in a thread for interaction that must wait for output; the
    shell leaves at the end of the input (Ctrl-D semantics)."""

    def run(
        keys: str,
        during: Callable[[Driven, Any], None] | None = None,
        env: TableEnvironment | None = None,
        history: Path | None = None,
    ) -> Driven:
        from streamsql.shell.app import Shell

        d = Driven(env or TableEnvironment.create({}), history or tmp_path / "history")
        with create_pipe_input() as pipe:
            d.shell = Shell(d.env, out=d.out, input=pipe, output=DummyOutput(), history_file=str(d.history))
            pipe.send_text(keys)
            errors: list[BaseException] = []
            if during is not None:

                def body() -> None:
                    try:
                        during(d, pipe)
                    except BaseException as e:  # noqa: BLE001 - reported below
                        errors.append(e)
                    finally:
                        pipe.close()

                t = threading.Thread(target=body, daemon=True)
                t.start()
            else:
                pipe.close()
            d.code = d.shell.run()
            if during is not None:
                t.join(30)
            if errors:
                raise errors[0]
        return d

    return run


@pytest.fixture
def clicks_dir(tmp_path: Path) -> Iterator[Path]:
    d = tmp_path / "in"
    d.mkdir()
    (d / "f1.csv").write_text("a,1\nb,2\n")
    yield d
