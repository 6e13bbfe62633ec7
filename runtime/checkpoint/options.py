"""Checkpointing, savepoint, restart-strategy and checkpoint-storage (S3) options.

Read through `CheckpointConfig.from_config` (runtime/checkpoint/config.py) and the storage.
"""

from __future__ import annotations

from runtime.config.options import key

CHECKPOINTING_INTERVAL = (
    key("execution.checkpointing.interval")
    .duration_type()
    .no_default_value()
    .with_description(
        "Take a checkpoint this often (e.g. '10 s'); unset or 0: no periodic checkpoints. "
        "Needs execution.checkpointing.dir."
    )
)

CHECKPOINTING_DIR = (
    key("execution.checkpointing.dir")
    .string_type()
    .no_default_value()
    .with_deprecated_keys("state.checkpoints.dir")
    .with_description(
        "Where checkpoints go (<dir>/<job id>/chk-<n>/): a path, file:// or s3:// URI. The Spark runner keeps "
        "each streaming query's checkpoint location under `<dir>/spark/<job fingerprint>/`, so a restarted "
        "job resumes."
    )
)

CHECKPOINTING_MODE = (
    key("execution.checkpointing.mode")
    .enum_type("EXACTLY_ONCE", "AT_LEAST_ONCE")
    .default_value("EXACTLY_ONCE")
    .with_description(
        "EXACTLY_ONCE or AT_LEAST_ONCE (in one process barriers are aligned by construction: both behave the same)."
    )
)

CHECKPOINTING_TIMEOUT = (
    key("execution.checkpointing.timeout")
    .duration_type()
    .default_value(600_000)
    .with_description("A checkpoint not complete after this long fails.")
)

CHECKPOINTING_MIN_PAUSE = (
    key("execution.checkpointing.min-pause")
    .duration_type()
    .default_value(0)
    .with_description("Least time between a checkpoint's completion and the next.")
)

MAX_CONCURRENT_CHECKPOINTS = (
    key("execution.checkpointing.max-concurrent-checkpoints")
    .int_type()
    .default_value(1)
    .with_check(lambda v: v >= 1, "an integer >= 1")
    .with_description("Checkpoints uploading at the same time.")
)

INCREMENTAL = (
    key("execution.checkpointing.incremental")
    .boolean_type()
    .default_value(False)
    .with_description(
        "rocksdb: a checkpoint uploads only the SST files no retained checkpoint holds yet (hashmap ignores it)."
    )
)

TOLERABLE_FAILED_CHECKPOINTS = (
    key("execution.checkpointing.tolerable-failed-checkpoints")
    .int_type()
    .default_value(0)
    .with_check(lambda v: v >= 0, "an integer >= 0")
    .with_description("Failed checkpoints tolerated before the job fails.")
)

NUM_RETAINED = (
    key("state.checkpoints.num-retained")
    .int_type()
    .default_value(1)
    .with_check(lambda v: v >= 1, "an integer >= 1")
    .with_description("Complete checkpoints kept per job (older ones are deleted).")
)

SAVEPOINT_DIR = (
    key("execution.checkpointing.savepoint-dir")
    .string_type()
    .no_default_value()
    .with_deprecated_keys("state.savepoints.dir")
    .with_description("Default directory for savepoints.")
)

SAVEPOINT_PATH = (
    key("execution.savepoint.path")
    .string_type()
    .no_default_value()
    .with_description(
        "Start jobs from this checkpoint or savepoint directory, or 'latest' (newest complete checkpoint of the "
        "job under execution.checkpointing.dir; none yet: start fresh). `streamsql --restore` sets it."
    )
)

IGNORE_UNCLAIMED_STATE = (
    key("execution.savepoint.ignore-unclaimed-state")
    .boolean_type()
    .default_value(False)
    .with_description(
        "Restore even when the snapshot holds state of operators the (changed) job no longer has; "
        "otherwise the restore is refused with a report naming them."
    )
)

JOB_ID = (
    key("$internal.pipeline.job-id")
    .string_type()
    .no_default_value()
    .with_fallback_keys("pipeline.name")
    .with_description(
        "Internal: the job id checkpoints are kept under (<dir>/<job id>/); set by the CLI from the script, "
        "else pipeline.name, else `job`."
    )
)

# Flink's spellings: `off`/`disable` mean none; `fixeddelay`/`exponentialdelay` the hyphenated names.
RESTART_STRATEGY_ALIASES = {
    "off": "none",
    "disable": "none",
    "fixeddelay": "fixed-delay",
    "exponentialdelay": "exponential-delay",
}

RESTART_STRATEGY = (
    key("restart-strategy.type")
    .enum_type("none", "fixed-delay", "exponential-delay", *RESTART_STRATEGY_ALIASES)
    .default_value("none")
    .with_deprecated_keys("restart-strategy")
    .with_description("Restart after a failure inside the process, from the latest complete checkpoint.")
)

FIXED_DELAY_ATTEMPTS = (
    key("restart-strategy.fixed-delay.attempts")
    .int_type()
    .default_value(1)
    .with_check(lambda v: v >= 0, "an integer >= 0")
    .with_description("Restarts before the job fails (fixed-delay).")
)

FIXED_DELAY_DELAY = (
    key("restart-strategy.fixed-delay.delay")
    .duration_type()
    .default_value(1000)
    .with_description("Wait before a restart (fixed-delay).")
)

EXPONENTIAL_INITIAL_BACKOFF = (
    key("restart-strategy.exponential-delay.initial-backoff")
    .duration_type()
    .default_value(1000)
    .with_description("First wait (exponential-delay).")
)

EXPONENTIAL_MAX_BACKOFF = (
    key("restart-strategy.exponential-delay.max-backoff")
    .duration_type()
    .default_value(60_000)
    .with_description("Longest wait (exponential-delay).")
)

EXPONENTIAL_MULTIPLIER = (
    key("restart-strategy.exponential-delay.backoff-multiplier")
    .float_type()
    .default_value(2.0)
    .with_check(lambda v: v >= 1.0, "a number >= 1.0")
    .with_description("Growth of the wait (exponential-delay).")
)

EXPONENTIAL_ATTEMPTS = (
    key("restart-strategy.exponential-delay.attempts-before-reset-backoff")
    .int_type()
    .default_value(10)
    .with_check(lambda v: v >= 0, "an integer >= 0")
    .with_description("Restarts before the job fails (exponential-delay).")
)

S3_ENDPOINT = (
    key("s3.endpoint")
    .string_type()
    .no_default_value()
    .with_description(
        "S3 endpoint for s3:// checkpoint storage (e.g. http://127.0.0.1:8333); unset: $AWS_ENDPOINT_URL, else AWS."
    )
)

S3_ACCESS_KEY = (
    key("s3.access-key").string_type().no_default_value().with_description("S3 access key for checkpoint storage.")
)

S3_SECRET_KEY = (
    key("s3.secret-key").string_type().no_default_value().with_description("S3 secret key for checkpoint storage.")
)

S3_REGION = (
    key("s3.region")
    .string_type()
    .no_default_value()
    .with_description("S3 region for checkpoint storage (unset: $AWS_REGION, else us-east-1).")
)
