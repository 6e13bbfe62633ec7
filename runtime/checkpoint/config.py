"""Checkpointing configuration read from the job's config (Flink's key names)."""

from __future__ import annotations

import re
from dataclasses import dataclass

_UNITS_MS = {
    "": 1, "ms": 1, "milli": 1, "millis": 1, "millisecond": 1, "milliseconds": 1,
    "s": 1000, "sec": 1000, "secs": 1000, "second": 1000, "seconds": 1000,
    "min": 60_000, "m": 60_000, "minute": 60_000, "minutes": 60_000,
    "h": 3_600_000, "hour": 3_600_000, "hours": 3_600_000,
    "d": 86_400_000, "day": 86_400_000, "days": 86_400_000,
}  # fmt: skip


def duration_ms(text: str | None, key: str, default: int | None = None) -> int | None:
    """Flink duration text ('1 s', '100ms', '2 min', a plain number = ms)."""
    if text is None or str(text).strip() == "":
        return default
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", str(text))
    if not m or m.group(2).lower() not in _UNITS_MS:
        raise ValueError(f"Could not parse value '{text}' for key '{key}': expected a duration such as '1 s'.")
    return int(float(m.group(1)) * _UNITS_MS[m.group(2).lower()])


def _bool(text: str | None, default: bool = False) -> bool:
    return default if text is None or text == "" else str(text).strip().lower() == "true"


@dataclass
class CheckpointConfig:
    """What `execution.checkpointing.*`, `state.checkpoints.*`, `execution.savepoint.*` and
    `restart-strategy.*` ask for."""

    interval_ms: int | None = None
    mode: str = "EXACTLY_ONCE"
    timeout_ms: int = 600_000
    min_pause_ms: int = 0
    max_concurrent: int = 1
    num_retained: int = 1
    directory: str | None = None
    savepoint_dir: str | None = None
    restore_path: str | None = None
    ignore_unclaimed_state: bool = False
    tolerable_failures: int = 0
    job_id: str = "job"
    restart_strategy: str = "none"
    restart_attempts: int = 1
    restart_delay_ms: int = 1000
    restart_max_delay_ms: int = 60_000
    restart_multiplier: float = 2.0

    @property
    def enabled(self) -> bool:
        """Periodic checkpoints are on (an interval and a directory are set)."""
        return bool(self.interval_ms) and self.directory is not None

    @staticmethod
    def from_config(cfg: dict[str, str]) -> CheckpointConfig:
        g = cfg.get
        interval = duration_ms(g("execution.checkpointing.interval"), "execution.checkpointing.interval")
        directory = g("execution.checkpointing.dir") or g("state.checkpoints.dir") or None
        strategy = (g("restart-strategy.type") or g("restart-strategy") or "none").strip().lower()
        strategy = {"fixeddelay": "fixed-delay", "exponentialdelay": "exponential-delay", "off": "none"}.get(
            strategy.replace("-", ""), strategy
        )
        if strategy not in ("none", "fixed-delay", "exponential-delay"):
            raise ValueError(
                f"Unsupported 'restart-strategy.type' = '{strategy}': use none, fixed-delay or exponential-delay."
            )
        if strategy == "fixed-delay":
            attempts = int(g("restart-strategy.fixed-delay.attempts") or 1)
            delay = duration_ms(g("restart-strategy.fixed-delay.delay"), "restart-strategy.fixed-delay.delay", 1000)
        else:
            attempts = int(g("restart-strategy.exponential-delay.attempts-before-reset-backoff") or 10)
            delay = duration_ms(
                g("restart-strategy.exponential-delay.initial-backoff"),
                "restart-strategy.exponential-delay.initial-backoff",
                1000,
            )
        mode = (g("execution.checkpointing.mode") or "EXACTLY_ONCE").strip().upper().replace("-", "_")
        if mode not in ("EXACTLY_ONCE", "AT_LEAST_ONCE"):
            raise ValueError(f"Unsupported 'execution.checkpointing.mode' = '{mode}'.")
        return CheckpointConfig(
            interval_ms=interval or None,
            mode=mode,
            timeout_ms=duration_ms(g("execution.checkpointing.timeout"), "execution.checkpointing.timeout", 600_000)
            or 600_000,
            min_pause_ms=duration_ms(g("execution.checkpointing.min-pause"), "execution.checkpointing.min-pause", 0)
            or 0,
            max_concurrent=max(1, int(g("execution.checkpointing.max-concurrent-checkpoints") or 1)),
            num_retained=max(1, int(g("state.checkpoints.num-retained") or 1)),
            directory=directory,
            savepoint_dir=g("execution.checkpointing.savepoint-dir") or g("state.savepoints.dir") or None,
            restore_path=g("execution.savepoint.path") or None,
            ignore_unclaimed_state=_bool(g("execution.savepoint.ignore-unclaimed-state")),
            tolerable_failures=int(g("execution.checkpointing.tolerable-failed-checkpoints") or 0),
            job_id=g("$internal.pipeline.job-id") or g("pipeline.name") or "job",
            restart_strategy=strategy,
            restart_attempts=attempts,
            restart_delay_ms=delay or 0,
            restart_max_delay_ms=duration_ms(
                g("restart-strategy.exponential-delay.max-backoff"),
                "restart-strategy.exponential-delay.max-backoff",
                60_000,
            )
            or 60_000,
            restart_multiplier=float(g("restart-strategy.exponential-delay.backoff-multiplier") or 2.0),
        )
