"""Configuration keys (Flink's names), their defaults and documentation.

`TableConfig` is the session's key/value map; the planner and runtime read plain strings
from the JobGraph's config. The KEYS table is the single source for `docs/configuration.md`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class ConfigKey:
    key: str
    default: str | None
    description: str
    values: tuple[str, ...] = ()


KEYS: tuple[ConfigKey, ...] = (
    ConfigKey(
        "execution.runtime-mode",
        "streaming",
        "STREAMING runs sources as unbounded streams with watermarks and changelog results; "
        "BATCH runs bounded sources and emits final results only.",
        ("streaming", "batch"),
    ),
    ConfigKey("table.local-time-zone", "UTC", "Session time zone for TIMESTAMP_LTZ values and time functions."),
    ConfigKey(
        "pipeline.auto-watermark-interval",
        "0",
        "Periodic watermark interval. streamsql emits watermarks in input order (as Flink with 0), "
        "so results do not depend on timing.",
    ),
    ConfigKey("pipeline.max-parallelism", "128", "Number of key groups keyed state is hashed into."),
    ConfigKey("parallelism.default", "1", "Parallelism of the job's operators."),
    ConfigKey(
        "taskmanager.network.credits",
        "4",
        "Parallel jobs: batches a worker may send per exchange edge and receiver before it is acknowledged.",
    ),
    ConfigKey(
        "table.exec.source.idle-timeout",
        "0 ms",
        "A source split that produced no row for this long is marked idle and no longer holds back the watermark.",
    ),
    ConfigKey(
        "table.exec.state.ttl",
        "0 ms",
        "STREAMING: state of a key not written for this long is dropped (processing time; a returning key "
        "starts from scratch, e.g. COUNT restarts at 1). Applies to GroupAggregate, regular Join (per row), "
        "Deduplicate and Rank; window operators ignore it. 0 = never. A /*+ STATE_TTL(...) */ hint "
        "overrides it per join side / aggregate (docs/state_ttl.md).",
    ),
    ConfigKey(
        "sql-client.execution.result-mode",
        "tableau",
        "How the CLI shows query results: tableau prints rows as they come (with the op column "
        "in streaming mode); changelog and table open a full-screen view in the interactive shell "
        "(changelog: every change with its op; table: the materialized result, updated live).",
        ("tableau", "changelog", "table"),
    ),
    ConfigKey(
        "sql-client.history-file",
        "~/.streamsql_history",
        "File the interactive shell keeps its statement history in (read at start, appended on "
        "each statement; Up/Down and Ctrl-R search it).",
    ),
    ConfigKey(
        "table.display.max-column-width", "30", "Widest column the tableau output prints before cutting a value."
    ),
    ConfigKey(
        "execution.target",
        "local",
        "Where jobs run: `local` (embedded) or `spark` (Apache Spark through PySpark; docs/spark.md). "
        "Every `spark.*` option is passed to the SparkSession.",
        ("local", "spark"),
    ),
    ConfigKey(
        "spark.master",
        "local[*]",
        "Spark master URL for `execution.target` = `spark` (`local[*]`, `spark://host:7077`, ...).",
    ),
    ConfigKey(
        "execution.checkpointing.dir",
        None,
        "Checkpoint directory; the Spark runner keeps each streaming query's checkpoint location under "
        "`<dir>/spark/<job fingerprint>/`, so a restarted job resumes.",
    ),
    ConfigKey(
        "state.backend.type",
        "hashmap",
        "Keyed state backend: hashmap (in memory) or rocksdb (the key index on local disk, laid out by key "
        "group). With the Spark runner, `rocksdb` selects Spark's RocksDB state store provider.",
        ("hashmap", "rocksdb"),
    ),
    ConfigKey(
        "state.backend.rocksdb.localdir", None, "Directory for rocksdb working databases (default: the temp dir)."
    ),
    ConfigKey(
        "execution.checkpointing.interval",
        None,
        "Take a checkpoint this often (e.g. '10 s'); unset: no periodic checkpoints. Needs execution.checkpointing.dir.",
    ),
    ConfigKey(
        "execution.checkpointing.dir",
        None,
        "Where checkpoints go (<dir>/<job id>/chk-<n>/): a path, file:// or s3:// URI (alias state.checkpoints.dir).",
    ),
    ConfigKey(
        "execution.checkpointing.mode",
        "EXACTLY_ONCE",
        "EXACTLY_ONCE or AT_LEAST_ONCE (in one process barriers are aligned by construction: both behave the same).",
        ("EXACTLY_ONCE", "AT_LEAST_ONCE"),
    ),
    ConfigKey("execution.checkpointing.timeout", "10 min", "A checkpoint not complete after this long fails."),
    ConfigKey(
        "execution.checkpointing.min-pause", "0 ms", "Least time between a checkpoint's completion and the next."
    ),
    ConfigKey("execution.checkpointing.max-concurrent-checkpoints", "1", "Checkpoints uploading at the same time."),
    ConfigKey(
        "execution.checkpointing.incremental",
        "false",
        "rocksdb: a checkpoint uploads only the SST files no retained checkpoint holds yet (hashmap ignores it).",
    ),
    ConfigKey(
        "execution.checkpointing.tolerable-failed-checkpoints",
        "0",
        "Failed checkpoints tolerated before the job fails.",
    ),
    ConfigKey("state.checkpoints.num-retained", "1", "Complete checkpoints kept per job (older ones are deleted)."),
    ConfigKey(
        "execution.checkpointing.savepoint-dir", None, "Default directory for savepoints (alias state.savepoints.dir)."
    ),
    ConfigKey(
        "execution.savepoint.path",
        None,
        "Start jobs from this checkpoint or savepoint directory, or 'latest' (newest complete checkpoint of the "
        "job under execution.checkpointing.dir; none yet: start fresh). `streamsql --restore` sets it.",
    ),
    ConfigKey(
        "execution.savepoint.ignore-unclaimed-state",
        "false",
        "Restore even when the snapshot holds state of operators the (changed) job no longer has; "
        "otherwise the restore is refused with a report naming them.",
    ),
    ConfigKey(
        "restart-strategy.type",
        "none",
        "Restart after a failure inside the process, from the latest complete checkpoint.",
        ("none", "fixed-delay", "exponential-delay"),
    ),
    ConfigKey("restart-strategy.fixed-delay.attempts", "1", "Restarts before the job fails (fixed-delay)."),
    ConfigKey("restart-strategy.fixed-delay.delay", "1 s", "Wait before a restart (fixed-delay)."),
    ConfigKey("restart-strategy.exponential-delay.initial-backoff", "1 s", "First wait (exponential-delay)."),
    ConfigKey("restart-strategy.exponential-delay.max-backoff", "1 min", "Longest wait (exponential-delay)."),
    ConfigKey(
        "restart-strategy.exponential-delay.backoff-multiplier", "2.0", "Growth of the wait (exponential-delay)."
    ),
    ConfigKey(
        "restart-strategy.exponential-delay.attempts-before-reset-backoff",
        "10",
        "Restarts before the job fails (exponential-delay).",
    ),
    ConfigKey(
        "rest.port",
        None,
        "Serve the REST API, /metrics and the web dashboard of this session's jobs on this port "
        "(docs/rest.md); unset: no server. `streamsql --rest-port` sets it.",
    ),
    ConfigKey("rest.bind-address", "127.0.0.1", "Address the REST server binds to; not loopback: needs rest.token."),
    ConfigKey(
        "rest.token",
        None,
        "Bearer token the REST server requires (`Authorization: Bearer <token>` only); prefer "
        "rest.token-file or $STREAMSQL_REST_TOKEN over the command line.",
    ),
    ConfigKey("rest.token-file", None, "File whose first line is the REST server's bearer token."),
    ConfigKey(
        "rest.allow-submit",
        "false",
        "Enable POST /jobs (runs SQL) and savepoint target directories on a REST server without a token.",
    ),
    ConfigKey("rest.max-body-bytes", "1048576", "Largest REST request body accepted (413 beyond)."),
    ConfigKey(
        "streamsql.jobs.dir",
        None,
        "Where `streamsql -f` registers its running streaming jobs for `streamsql list` / `streamsql savepoint "
        "<job-id>` (unset: $STREAMSQL_JOBS_DIR, else $XDG_RUNTIME_DIR/streamsql, else ~/.streamsql/jobs).",
    ),
    ConfigKey("s3.endpoint", None, "S3 endpoint for s3:// checkpoint storage (e.g. http://127.0.0.1:8333)."),
    ConfigKey("s3.access-key", None, "S3 access key for checkpoint storage."),
    ConfigKey("s3.secret-key", None, "S3 secret key for checkpoint storage."),
    ConfigKey(
        "table.exec.source.batch-rows",
        "8192",
        "Most rows a source puts in one Arrow batch. Results do not depend on it; larger batches "
        "amortize per-batch work, smaller ones show streaming updates in finer steps.",
    ),
    ConfigKey(
        "table.exec.sink.not-null-enforcer",
        "ERROR",
        "A NULL written into a column declared NOT NULL (of an INSERT's sink, or of a query's result "
        "type): ERROR fails the job naming the column; DROP drops the row silently.",
        ("ERROR", "DROP"),
    ),
    ConfigKey(
        "table.exec.sink.type-length-enforcer",
        "IGNORE",
        "A CHAR/VARCHAR/BINARY/VARBINARY value whose length differs from its sink column's: IGNORE "
        "writes it as is; TRIM_PAD cuts it to the declared length and pads CHAR/BINARY up to it.",
        ("IGNORE", "TRIM_PAD"),
    ),
    ConfigKey(
        "table.exec.mini-batch.enabled",
        "false",
        "STREAMING: insert a MiniBatchAssigner after each source / watermark assigner of a plan with a "
        "GroupAggregate; it coalesces input batches so keyed aggregates fold more rows per state access "
        "and emit fewer intermediate -U/+U rows. The final table is unchanged.",
        ("true", "false"),
    ),
    ConfigKey(
        "table.exec.mini-batch.allow-latency",
        "0 ms",
        "Longest time rows wait in a mini-batch (must be > 0 when mini-batch is enabled). The buffer is "
        "also flushed before every watermark, checkpoint barrier and at the end of input.",
    ),
    ConfigKey(
        "table.exec.mini-batch.size",
        "-1",
        "Most rows buffered in one mini-batch (must be > 0 when mini-batch is enabled).",
    ),
    ConfigKey(
        "table.optimizer.agg-phase-strategy",
        "AUTO",
        "Two-phase (local-global) GroupAggregate: with mini-batch enabled, AUTO and TWO_PHASE split "
        "aggregates whose calls are mergeable (COUNT, SUM over integer/floating types, MIN/MAX over "
        "insert-only input, none DISTINCT) into LocalGroupAggregate -> Exchange -> GlobalGroupAggregate; "
        "ONE_PHASE never splits. Window aggregates (rowtime TUMBLE / HOP / CUMULATE with COUNT, integer SUM, "
        "MIN / MAX) split into LocalWindowAggregate -> Exchange -> GlobalWindowAggregate with TWO_PHASE, and "
        "with AUTO when mini-batch is enabled (docs/performance.md).",
        ("AUTO", "ONE_PHASE", "TWO_PHASE"),
    ),
    ConfigKey(
        "table.optimizer.distinct-agg.split.enabled",
        "false",
        "STREAMING: split a GroupAggregate with COUNT/SUM(DISTINCT x) into a partial aggregate per "
        "(key, MOD(HASH_CODE(x), bucket-num)) and a final one that adds the partials up, spreading a "
        "hot key's distinct state; several distinct columns use an Expand. The final table is unchanged.",
        ("true", "false"),
    ),
    ConfigKey(
        "table.optimizer.distinct-agg.split.bucket-num",
        "1024",
        "Number of buckets split-distinct aggregation spreads each key's distinct values over.",
    ),
    ConfigKey(
        "table.exec.statement-start-ms",
        None,
        "Fixes the instant (epoch ms) CURRENT_TIMESTAMP and friends return, for reproducible runs; "
        "unset, they return the time the statement started.",
    ),
)

_DEFAULTS = {k.key: k.default for k in KEYS if k.default is not None}


def normalize(key: str, value: str) -> str:
    """Flink accepts enum values in any case; keep one spelling internally."""
    if key in ("execution.runtime-mode", "execution.target"):
        return value.strip().lower()
    return value


class TableConfig:
    """The session's configuration (PyFlink's TableConfig shape: get/set)."""

    def __init__(self, initial: dict[str, str] | None = None) -> None:
        self._values: dict[str, str] = {}
        for k, v in (initial or {}).items():
            self.set(k, v)

    def set(self, key: str, value: str) -> TableConfig:
        self._values[key] = normalize(key, str(value))
        return self

    def get(self, key: str, default: str | None = None) -> str | None:
        if key in self._values:
            return self._values[key]
        return _DEFAULTS.get(key, default)

    def reset(self, key: str | None = None) -> None:
        if key is None:
            self._values.clear()
        else:
            self._values.pop(key, None)

    def to_dict(self) -> dict[str, str]:
        """Effective values: defaults overlaid with what the session set."""
        out = dict(_DEFAULTS)
        out.update(self._values)
        return out

    def explicit(self) -> dict[str, str]:
        return dict(self._values)

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(sorted(self.to_dict().items()))

    # PyFlink's TableConfig helpers
    def get_local_timezone(self) -> str:
        return self.get("table.local-time-zone") or "UTC"

    def set_local_timezone(self, tz: str) -> None:
        self.set("table.local-time-zone", tz)
