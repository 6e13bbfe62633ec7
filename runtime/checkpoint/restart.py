"""Restart strategies for failures inside the process (`restart-strategy.type`).

`none` (the default here: a deterministic SQL error would fail again and again; Flink
defaults to exponential-delay once checkpointing is on), `fixed-delay` (`attempts`,
`delay`) and `exponential-delay` (`initial-backoff`, `max-backoff`,
`backoff-multiplier`, at most `attempts-before-reset-backoff` attempts). A restart
rebuilds every operator and restores the latest complete checkpoint of this run (or the
snapshot the job started from); sources rewind and sinks abort what was not committed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import TypeVar

from runtime.checkpoint.config import CheckpointConfig
from runtime.checkpoint.restore import LoadedSnapshot, RestoreError, load_checkpoint, resolve_restore_path
from runtime.operators.base import CheckpointingNotSupportedError

T = TypeVar("T")


class RestartBackoff:
    def __init__(self, cfg: CheckpointConfig) -> None:
        self.cfg = cfg
        self.attempts = 0

    def next_delay(self) -> float | None:
        """Seconds to wait before the next attempt, or None: give up (fail the job)."""
        cfg = self.cfg
        if cfg.restart_strategy == "none" or self.attempts >= cfg.restart_attempts:
            return None
        self.attempts += 1
        if cfg.restart_strategy == "fixed-delay":
            return cfg.restart_delay_ms / 1000
        delay = cfg.restart_delay_ms * cfg.restart_multiplier ** (self.attempts - 1)
        return min(delay, cfg.restart_max_delay_ms) / 1000


def run_with_restarts(
    attempt: Callable[[LoadedSnapshot | None], Iterator[T]],
    cfg: CheckpointConfig,
    config: dict[str, str],
    stopped: Callable[[], bool],
    latest: Callable[[], str | None],
    on_restart: Callable[[], None],
) -> Iterator[T]:
    """Run `attempt` from the configured restore point (`execution.savepoint.path`), and
    after a failure again from the latest complete checkpoint (`latest()`), as the restart
    strategy allows. Shared by the local and the parallel executor so both recover alike;
    errors that would only fail again (no checkpointing support, a snapshot that does not
    map, the caller closing the generator) are never retried."""
    restore = resolve_restore_path(cfg.restore_path, cfg.directory, cfg.job_id, config)
    backoff = RestartBackoff(cfg)
    while True:
        try:
            yield from attempt(restore)
            return
        except (CheckpointingNotSupportedError, RestoreError, GeneratorExit, KeyboardInterrupt):
            raise
        except Exception:
            delay = backoff.next_delay()
            if delay is None or stopped():
                raise
            on_restart()
            time.sleep(delay)
            location = latest()
            if location is not None:
                restore = load_checkpoint(location, config)
