"""Options every layer reads: the runtime mode, parallelism, the job's name, time zone and
source batching (Flink keeps their counterparts in flink-core's `CoreOptions`,
`PipelineOptions`, `ExecutionOptions` and the table module's `TableConfigOptions` /
`ExecutionConfigOptions`). Keys owned by one part live with that part instead
(checkpointing in runtime/checkpoint/options.py, mini-batch in
planner/optimizer/mini_batch.py, ...)."""

from __future__ import annotations

import re

from runtime.config.options import ConfigSource, key
from runtime.errors import ConfigError

RUNTIME_MODE = (
    key("execution.runtime-mode")
    .enum_type("streaming", "batch")
    .default_value("streaming")
    .with_description(
        "STREAMING runs sources as unbounded streams with watermarks and changelog results; "
        "BATCH runs bounded sources and emits final results only."
    )
)

TARGET = (
    key("execution.target")
    .enum_type("local", "spark")
    .default_value("local")
    .with_description(
        "Where jobs run: `local` (embedded) or `spark` (Apache Spark through PySpark; docs/spark.md). "
        "Every `spark.*` option is passed to the SparkSession."
    )
)

PARALLELISM = (
    key("parallelism.default")
    .int_type()
    .default_value(1)
    .with_check(lambda v: v >= 1, "an integer >= 1")
    .with_description("Parallelism of the job's operators.")
)

DEFAULT_PARALLELISM = (
    key("table.exec.resource.default-parallelism")
    .int_type()
    .default_value(-1)
    .with_check(lambda v: v == -1 or v >= 1, "-1 or an integer >= 1")
    .with_description(
        "Parallelism of a Table/SQL job's operators; overrides parallelism.default when set (-1: use "
        "parallelism.default), as in Flink."
    )
)


def job_parallelism(conf: ConfigSource | None) -> int:
    """The parallelism a SQL job runs at: `table.exec.resource.default-parallelism` when set
    (not -1), else `parallelism.default` (Flink's ExecNodeConfig reads them in this order)."""
    table_level = int(DEFAULT_PARALLELISM.get(conf))
    return table_level if table_level > 0 else int(PARALLELISM.get(conf))


MAX_PARALLELISM = (
    key("pipeline.max-parallelism")
    .int_type()
    .default_value(128)
    .with_check(lambda v: 1 <= v <= 32768, "an integer between 1 and 32768")
    .with_description("Number of key groups keyed state is hashed into.")
)

PIPELINE_NAME = (
    key("pipeline.name")
    .string_type()
    .no_default_value()
    .with_description(
        "The job's name: the Spark application name, and the job id checkpoints are kept under when the "
        "caller gave none (unset: `streamsql` / `job`)."
    )
)

AUTO_WATERMARK_INTERVAL = (
    key("pipeline.auto-watermark-interval")
    .duration_type()
    .default_value(200)
    .with_description(
        "How often a WATERMARK definition emits its watermark, as in Flink. After each row the watermark "
        "assigner emits the current watermark when it exceeds the last emitted one by more than this "
        "interval (0: whenever it advances, i.e. a watermark after every record); while the inputs are "
        "idle it also emits the current watermark every interval of wall clock. A row is late for a "
        "window only against a watermark emitted before it, so with the default a row sharing a window's "
        "last millisecond with the row before it is kept, unless an emission fell exactly there (Flink "
        "behaves the same). Results do not depend on batch size or machine speed for a bounded input."
    )
)

LOCAL_TIME_ZONE = (
    key("table.local-time-zone")
    .string_type()
    .default_value("UTC")
    .with_description(
        "Session time zone for TIMESTAMP_LTZ values and time functions: a zone name "
        "('America/Los_Angeles') or an offset ('GMT-08:00', 'GMT+8'); as in Flink, forms Java reads "
        "two ways ('UTC+8', '+08:00', 'PST') are refused by the next query. UTC unless set, so a script gives the same "
        "result on every machine; Flink's default, 'default', is the machine's zone (the JVM's), and "
        "'default' set here means the machine's zone too."
    )
)


def session_time_zone(conf: ConfigSource | None) -> str:
    """`table.local-time-zone` as a zone name Arrow and zoneinfo read: 'default' (Flink's
    default value) is the machine's zone; anything else is checked as Flink checks it
    (`time_zone_name`)."""
    zone = str(LOCAL_TIME_ZONE.get(conf))
    return system_time_zone() if zone.strip().lower() == "default" else time_zone_name(zone)


# Java's custom zone ids that Flink accepts: `GMT+8`, `GMT-08:00`, `GMT+0830`.
_GMT_OFFSET = re.compile(r"GMT([+-])(\d{1,2})(?::?(\d{2}))?")

INVALID_TIME_ZONE = (
    "Invalid time zone. The value should be a Time Zone Database (TZDB) ID such as "
    "'America/Los_Angeles' to include daylight saving time. Fixed offsets are supported using "
    "'GMT-03:00' or 'GMT+03:00'. Or use 'UTC' without time zone and daylight saving time"
)


def time_zone_name(zone: str) -> str:
    """A session zone as Flink accepts it (`TableConfigUtils.validateTimeZone`: a zone both
    `java.util.TimeZone` and `java.time.ZoneId` read alike), named for Arrow: a TZDB id
    ('Asia/Shanghai', 'UTC', 'GMT') as is, a `GMT+h[h][[:]mm]` offset as `Etc/GMT-h` (whole
    hours: zoneinfo reads it too) or `+hh:mm`. Anything else (`UTC+8`, `+08:00`, `PST`, an
    unknown name) is refused with Flink's message."""
    m = _GMT_OFFSET.fullmatch(zone)
    if m is not None:
        sign, hours, minutes = m.group(1), int(m.group(2)), int(m.group(3) or 0)
        if hours > 23 or minutes > 59:
            raise ConfigError(LOCAL_TIME_ZONE.key, zone, INVALID_TIME_ZONE)
        if hours == 0 and minutes == 0:
            return "UTC"
        if minutes == 0:  # the Etc zones' signs are POSIX's, the other way round
            return f"Etc/GMT{'-' if sign == '+' else '+'}{hours}"
        return f"{sign}{hours:02d}:{minutes:02d}"
    if zone in ("UTC", "GMT") or _is_tzdb_zone(zone):
        return zone
    raise ConfigError(LOCAL_TIME_ZONE.key, zone, INVALID_TIME_ZONE)


# Java's `ZoneId.SHORT_IDS`: java.util.TimeZone reads them as other zones than ZoneId does,
# so Flink refuses them.
_JAVA_SHORT_IDS = frozenset(
    "ACT AET AGT ART AST BET BST CAT CNT CST CTT EAT ECT IET IST JST MIT NET NST PLT PNT PRT PST SST VST "
    "EST MST HST".split()
)


def _is_tzdb_zone(zone: str) -> bool:
    """A name in the time zone database that Flink accepts (not one of Java's short ids)."""
    import zoneinfo

    if zone in _JAVA_SHORT_IDS:
        return False
    try:
        zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return False
    return True


def system_time_zone() -> str:
    """The machine's IANA zone name: $TZ, else what /etc/localtime links to, else UTC."""
    import os

    tz = os.environ.get("TZ", "").lstrip(":")
    if tz:
        return tz
    target = os.path.realpath("/etc/localtime")
    marker = "zoneinfo" + os.sep
    return target.split(marker, 1)[1] if marker in target else "UTC"


SOURCE_IDLE_TIMEOUT = (
    key("table.exec.source.idle-timeout")
    .duration_type()
    .default_value(0)
    .with_description(
        "A source split that produced no row for this long is marked idle and no longer holds back the "
        "watermark (0: never idle). A table's `scan.watermark.idle-timeout` overrides it."
    )
)

SOURCE_CDC_EVENTS_DUPLICATE = (
    key("table.exec.source.cdc-events-duplicate")
    .boolean_type()
    .default_value(False)
    .with_description(
        "STREAMING: a CDC source with a PRIMARY KEY may deliver a change more than once (at-least-once "
        "delivery): read it through a ChangelogNormalize keyed by the PRIMARY KEY that keeps the last row per "
        "key and turns the changes into a proper changelog (duplicate updates and deletes of absent keys are "
        "dropped), as Flink does. Upsert sources (upsert-kafka) are always normalized."
    )
)

SINK_KEYED_SHUFFLE = (
    key("table.exec.sink.keyed-shuffle")
    .enum_type("AUTO", "NONE", "FORCE")
    .default_value("AUTO")
    .with_description(
        "A hash shuffle on a sink's PRIMARY KEY so that all changes of one key reach the sink subtask that "
        "writes it, in order (parallelism > 1). `AUTO`: for an update stream not already distributed on the "
        "key columns; `FORCE`: also for an insert-only input; `NONE`: never. Flink's `AUTO` looks at the "
        "sink's and its input's parallelism; streamsql runs both at the job's parallelism and looks at the "
        "input's distribution instead."
    )
)

SOURCE_BATCH_ROWS = (
    key("table.exec.source.batch-rows")
    .int_type()
    .default_value(65536)
    .with_check(lambda v: v >= 1, "an integer >= 1")
    .with_description(
        "Most rows a source puts in one Arrow batch. Results do not depend on it; larger batches "
        "amortize per-batch work, smaller "
        "ones show streaming updates in finer steps."
    )
)


def source_batch_rows(conf: ConfigSource | None, batch_mode: bool) -> int:
    """`table.exec.source.batch-rows` (65536 by default in both modes: a 65,536-row batch
    costs a few milliseconds, and the per-batch work of the operators — hash aggregation,
    state look-ups, watermarks, emission — is paid 8x less often than at 8192 rows; a
    streaming window job over 10M rows took 8.2 s CPU at 8192 rows, 3.5 s at 65536).
    `batch_mode` is kept for callers; both modes share the default now."""
    return int(SOURCE_BATCH_ROWS.get(conf))


# Not an option: the job's start (epoch ms), which the TableEnvironment records in a BATCH
# job's configuration so that every operator and worker process evaluates CURRENT_TIMESTAMP
# & co to the same instant, as Flink evaluates them once as the query starts.
QUERY_START_KEY = "$internal.query-start-ms"

STATEMENT_START_MS = (
    key("table.exec.statement-start-ms")
    .int_type()
    .no_default_value()
    .with_description(
        "Fixes the instant (epoch ms) CURRENT_TIMESTAMP and friends return, for reproducible runs; "
        "unset, they return the time the statement started."
    )
)
