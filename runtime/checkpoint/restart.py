"""Restart strategies for failures inside the process (`restart-strategy.type`).

`none` (the default here: a deterministic SQL error would fail again and again; Flink
defaults to exponential-delay once checkpointing is on), `fixed-delay` (`attempts`,
`delay`) and `exponential-delay` (`initial-backoff`, `max-backoff`,
`backoff-multiplier`, at most `attempts-before-reset-backoff` attempts). A restart
rebuilds every operator and restores the latest complete checkpoint of this run (or the
snapshot the job started from); sources rewind and sinks abort what was not committed.
"""

from __future__ import annotations

from runtime.checkpoint.config import CheckpointConfig


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
