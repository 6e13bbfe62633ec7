"""Checkpointing configuration read from the job's config (Flink's key names)."""

from __future__ import annotations

from runtime.checkpoint import options as opts
from runtime.frozen import mutable_dataclass


@mutable_dataclass
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
        strategy = opts.RESTART_STRATEGY.get(cfg)
        strategy = opts.RESTART_STRATEGY_ALIASES.get(strategy, strategy)
        if strategy == "fixed-delay":
            attempts = opts.FIXED_DELAY_ATTEMPTS.get(cfg)
            delay = opts.FIXED_DELAY_DELAY.get(cfg)
        else:
            attempts = opts.EXPONENTIAL_ATTEMPTS.get(cfg)
            delay = opts.EXPONENTIAL_INITIAL_BACKOFF.get(cfg)
        return CheckpointConfig(
            interval_ms=opts.CHECKPOINTING_INTERVAL.get(cfg) or None,
            mode=opts.CHECKPOINTING_MODE.get(cfg),
            timeout_ms=opts.CHECKPOINTING_TIMEOUT.get(cfg) or 600_000,
            min_pause_ms=opts.CHECKPOINTING_MIN_PAUSE.get(cfg),
            max_concurrent=opts.MAX_CONCURRENT_CHECKPOINTS.get(cfg),
            num_retained=opts.NUM_RETAINED.get(cfg),
            directory=opts.CHECKPOINTING_DIR.get(cfg),
            savepoint_dir=opts.SAVEPOINT_DIR.get(cfg),
            restore_path=opts.SAVEPOINT_PATH.get(cfg),
            ignore_unclaimed_state=opts.IGNORE_UNCLAIMED_STATE.get(cfg),
            tolerable_failures=opts.TOLERABLE_FAILED_CHECKPOINTS.get(cfg),
            job_id=opts.JOB_ID.get(cfg) or "job",
            restart_strategy=strategy,
            restart_attempts=attempts,
            restart_delay_ms=delay,
            restart_max_delay_ms=opts.EXPONENTIAL_MAX_BACKOFF.get(cfg),
            restart_multiplier=opts.EXPONENTIAL_MULTIPLIER.get(cfg),
        )
