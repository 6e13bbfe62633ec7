"""The 'filesystem' connector: files in csv, json, parquet or orc format, or a changelog JSON
format's change events (debezium-json, canal-json, maxwell-json, ogg-json; one per line).

Source: `path` is a file or a directory (relative paths resolve against the current
working directory). A directory is read file by file in name order, recursively,
skipping hidden ('.') and '_'-prefixed entries as Flink's default file filter does. One
split = one file; its offset is the format reader's offset. With
'source.monitor-interval' in STREAMING mode the source is unbounded and keeps
discovering files that appear later.

A `PARTITIONED BY` table is read from Hive-style `k=v/` directories: the partition
columns come from the directory names (runtime/connectors/filesystem_partitions.py).

Sink: part files in `path` (or its partition directories), exactly-once with
checkpoints: runtime/connectors/filesystem_sink.py. With a changelog format the sink takes
every row kind and writes each row as the format's change event (as Flink's file sink does
with a format whose changelog mode is not insert-only); any other format takes inserts only.
"""

from __future__ import annotations

import os
import re
import time
from typing import Any

import pyarrow as pa

from runtime.connectors.base import (
    SINK_PARALLELISM,
    ConfigOption,
    ConnectorFactory,
    Sink,
    Source,
    SourceContext,
    SplitReader,
    parse_duration_ms,
    register_connector,
)
from runtime.connectors.filesystem_overwrite import list_partitions, prepare_overwrite
from runtime.connectors.filesystem_partitions import (
    DEFAULT_PARTITION_NAME,
    PartitionedSplitReader,
    partition_keys,
    partition_values,
    split_schema,
)
from runtime.connectors.filesystem_paths import list_files, resolve_path
from runtime.connectors.filesystem_sink import FilesystemSink
from runtime.connectors.formats import FileReader, all_format_options, format_changelog_mode, get_format
from runtime.connectors.lookup import LOOKUP_OPTIONS, LookupSource, semi_join
from runtime.errors import ConnectorError, file_access_error
from runtime.graph import STREAMING
from runtime.types import Field

FORMATS = ("csv", "json", "debezium-json", "canal-json", "maxwell-json", "ogg-json", "parquet", "orc")

OPTIONS: tuple[ConfigOption[Any], ...] = (
    ConfigOption(
        "path",
        required=True,
        description="File or directory to read; directory to write part files into. Relative paths resolve against the working directory.",
    ),
    ConfigOption(
        "format",
        required=True,
        type="enum",
        values=FORMATS,
        description="Format of the files.",
    ),
    ConfigOption(
        "source.monitor-interval",
        type="duration",
        description="In STREAMING mode, how often to look for new files in the directory; the source is then unbounded. Unset: read the files present at start and finish.",
    ),
    ConfigOption(
        "source.path.regex-pattern",
        description="Read only the files whose absolute path matches this regular expression entirely (e.g. "
        "'/dir/.*\\.csv' with 'path' = '/dir'); hidden and '_'-prefixed files are never read.",
    ),
    ConfigOption(
        "source.report-statistics",
        type="enum",
        default="ALL",
        values=("NONE", "ALL"),
        description="Which file statistics the source reports to the optimizer. Accepted for compatibility: "
        "streamsql's planner does not use file statistics, so both values plan alike.",
    ),
    ConfigOption(
        "sink.rolling-policy.file-size",
        default="128MB",
        description="Start a new part file once the current one has reached this size.",
    ),
    ConfigOption(
        "sink.rolling-policy.rollover-interval",
        type="duration",
        default="30 min",
        description="Start a new part file once the current one has been open this long (checked when rows "
        "arrive and every 'sink.rolling-policy.check-interval').",
    ),
    ConfigOption(
        "sink.rolling-policy.inactivity-interval",
        type="duration",
        default="30 min",
        description="Start a new part file once the current one has received no rows for this long (checked "
        "every 'sink.rolling-policy.check-interval').",
    ),
    ConfigOption(
        "sink.rolling-policy.check-interval",
        type="duration",
        default="1 min",
        description="How often the time-based rolling policies are checked while no rows arrive.",
    ),
    ConfigOption(
        "sink.shuffle-by-partition.enable",
        type="boolean",
        default="false",
        description="Flink: shuffle rows by their dynamic partition values before the sink, so fewer writers "
        "write each partition. Accepted; it changes only how many part files a partition gets, not the rows "
        "written, and streamsql does not add that shuffle.",
    ),
    ConfigOption(
        "auto-compaction",
        type="boolean",
        default="false",
        description="Merge the part files of each checkpoint (of the whole input without checkpointing) into "
        "files of about 'compaction.file-size', per partition, before they become visible: a bin of several "
        "files becomes `compacted-<first part file's name>`, a single file is renamed so. Only the files of "
        "one checkpoint are merged together; text formats are concatenated, parquet and orc rewritten.",
    ),
    ConfigOption(
        "compaction.file-size",
        description="Target size of compacted files: files are packed, in name order, until a bin reaches it. "
        "Unset: 'sink.rolling-policy.file-size'.",
    ),
    ConfigOption(
        "compaction.parallelism",
        type="int",
        description="Flink: the parallelism of the compaction operator in BATCH mode. Accepted; each sink "
        "subtask compacts the files it wrote, so the result is the same.",
    ),
    ConfigOption(
        "partition.default-name",
        default="__DEFAULT_PARTITION__",
        description="Directory name of the partition of a NULL or blank partition value (PARTITIONED BY tables); read back as NULL.",
    ),
    ConfigOption(
        "partition.time-extractor.kind",
        default="default",
        description="How the 'partition-time' commit trigger extracts a partition's time: 'default' (from "
        "'partition.time-extractor.timestamp-pattern') or 'custom' (a Java class, refused).",
    ),
    ConfigOption(
        "partition.time-extractor.class",
        description="The Java PartitionTimeExtractor class of the 'custom' extractor: refused (streamsql runs no "
        "Java classes).",
    ),
    ConfigOption(
        "partition.time-extractor.timestamp-formatter",
        description="Java DateTimeFormatter pattern that parses the extracted partition time, e.g. 'yyyyMMdd' "
        "(a date-only text is midnight). Unset: 'yyyy-[M]M-[d]d[ [H]H:[m]m:[s]s]'.",
    ),
    ConfigOption(
        "partition.time-extractor.timestamp-pattern",
        description="How partition values form the partition's time for the 'partition-time' trigger: each "
        "'$key' is replaced by the partition's value, e.g. '$dt $hour:00:00' or '$year-$month-$day'. Unset: "
        "the first partition value.",
    ),
    ConfigOption(
        "sink.partition-commit.policy.kind",
        description="How a written partition is committed: 'success-file' (an empty success file in the partition directory). 'metastore' (needs a Hive metastore) and 'custom' (a Java class) are refused.",
    ),
    ConfigOption(
        "sink.partition-commit.policy.class",
        description="The Java PartitionCommitPolicy class of the 'custom' policy: refused (streamsql runs no "
        "Java classes).",
    ),
    ConfigOption(
        "sink.partition-commit.policy.class.parameters",
        description="Constructor parameters of the 'custom' policy class, separated by ';' (refused with it).",
    ),
    ConfigOption(
        "sink.partition-commit.trigger",
        type="enum",
        default="process-time",
        values=("process-time", "partition-time"),
        description="When a partition is committed (every written partition at the end of input): 'process-time' "
        "once its files are published and the delay has passed since the sink first wrote to it; "
        "'partition-time' once its files are published and the watermark (of the last completed checkpoint "
        "when checkpointing) has passed the time extracted from the partition values plus the delay.",
    ),
    ConfigOption(
        "sink.partition-commit.watermark-time-zone",
        default="UTC",
        description="Time zone in which the 'partition-time' trigger reads the watermark as a wall clock to "
        "compare with partition times: 'UTC' for a watermark on a TIMESTAMP column, the session time zone "
        "(e.g. 'Asia/Shanghai', or 'GMT-08:00') for one on a TIMESTAMP_LTZ column.",
    ),
    ConfigOption(
        "sink.partition-commit.delay",
        type="duration",
        default="0 s",
        description="The partition is not committed before this delay.",
    ),
    ConfigOption(
        "sink.partition-commit.success-file.name",
        default="_SUCCESS",
        description="Name of the success file of the 'success-file' policy.",
    ),
)


def is_bounded(options: dict[str, str]) -> bool:
    """Bounded unless 'source.monitor-interval' is set (then unbounded in STREAMING mode)."""
    return not options.get("source.monitor-interval")


def changelog_mode(options: dict[str, str]) -> str:
    """The scan's changelog mode: 'I' or, for a changelog format (debezium-json, ...), 'I,UB,UA,D'."""
    name = options.get("format", "")
    return format_changelog_mode(name) if name in FORMATS else "I"


def sink_changelog_mode(options: dict[str, str], primary_key: tuple[str, ...]) -> str:
    """The changes the sink writes: every kind with a changelog format (each row becomes the
    format's change event: Flink's file sink takes the format's changelog mode), inserts
    only otherwise (an updating query is refused when the job is planned, as Flink does)."""
    return changelog_mode(options)


class FileSplitReader(SplitReader):
    """One file, read by its format's reader. `skipped_rows` counts rows dropped by
    'ignore-parse-errors'. An OS error reading it (permission denied, ...) is a
    FileAccessError naming the file."""

    def __init__(self, reader: FileReader, path: str = "") -> None:
        self._reader = reader
        self._path = path

    @property
    def skipped_rows(self) -> int:
        return self._reader.skipped_rows

    def read(self, max_rows: int) -> pa.RecordBatch | None:
        try:
            return self._reader.read(max_rows)
        except OSError as e:
            raise file_access_error(e, "read source file", self._path) from None

    def offset(self) -> Any:
        return self._reader.offset()

    def seek(self, offset: Any) -> None:
        if offset is not None:
            try:
                self._reader.seek(offset)
            except OSError as e:
                raise file_access_error(e, "read source file", self._path) from None

    def close(self) -> None:
        self._reader.close()


def _path_pattern(options: dict[str, str]) -> re.Pattern[str] | None:
    """'source.path.regex-pattern' compiled (None when unset); a bad expression names the option."""
    text = options.get("source.path.regex-pattern")
    if text is None:
        return None
    try:
        return re.compile(text)
    except re.error as e:
        raise ConnectorError(f"Invalid value for option 'source.path.regex-pattern': '{text}' ({e}).") from None


class FilesystemSource(Source):
    def __init__(
        self, options: dict[str, str], schema: tuple[Field, ...], projection: list[int] | None, ctx: SourceContext
    ) -> None:
        self.options = options
        self.schema = tuple(schema)
        self.projection = projection
        self.ctx = ctx
        self.root = resolve_path(options.get("path"))
        name = options.get("format", "")
        if name not in FORMATS:  # a message-only format (raw, avro, ...) is no file format
            raise ConnectorError(
                f"Could not find any format factory for identifier '{name}' in the classpath. "
                f"Available: {', '.join(sorted(FORMATS))}"
            )
        self.format = get_format(name)
        fields = [self.schema[i] for i in (range(len(self.schema)) if projection is None else projection)]
        self.produced_schema = tuple(fields)
        interval = options.get("source.monitor-interval")
        self.monitor_interval_ms = parse_duration_ms(interval, "source.monitor-interval") if interval else None
        self._known: set[str] = set()
        self._last_scan = 0.0
        self.partition_keys = partition_keys(options)
        self.default_partition = options.get("partition.default-name") or DEFAULT_PARTITION_NAME
        self.path_pattern = _path_pattern(options)
        if not os.path.exists(self.root) and self.monitor_interval_ms is None:
            raise ConnectorError(f"File or directory '{options.get('path')}' (resolved to {self.root}) does not exist.")

    @property
    def bounded(self) -> bool:
        return self.monitor_interval_ms is None or self.ctx.mode != STREAMING

    def _scan(self) -> list[str]:
        files = list_files(self.root) if os.path.exists(self.root) else []
        if self.path_pattern is not None:
            files = [f for f in files if self.path_pattern.fullmatch(os.path.abspath(f))]
        return files

    def splits(self) -> list[str]:
        files = self._scan()
        self._known.update(files)
        self._last_scan = time.monotonic()
        return files

    def discover_splits(self) -> list[str]:
        if self.bounded:
            return []
        now = time.monotonic()
        if self.monitor_interval_ms and (now - self._last_scan) * 1000 < self.monitor_interval_ms:
            return []
        self._last_scan = now
        new = [f for f in self._scan() if f not in self._known]
        self._known.update(new)
        return new

    def create_reader(self, split_id: str) -> SplitReader:
        if not os.path.isfile(split_id):
            raise ConnectorError(f"File '{split_id}' of table path '{self.options.get('path')}' disappeared.")
        try:
            if self.partition_keys:
                return self._partitioned_reader(split_id)
            reader = self.format.open_reader(split_id, self.schema, self.projection, self.options, self.ctx)
        except OSError as e:
            raise file_access_error(e, "read source file", split_id) from None
        return FileSplitReader(reader, split_id)

    def _partitioned_reader(self, split_id: str) -> SplitReader:
        """The file holds the non-partition columns; the partition columns are constants
        from the file's `k=v` directories (NULL when absent or the default name)."""
        data_idx, part_idx = split_schema(self.schema, self.partition_keys)
        file_schema = tuple(self.schema[i] for i in data_idx)
        wanted = list(range(len(self.schema))) if self.projection is None else list(self.projection)
        file_proj: list[int] = []
        layout: list[tuple[str, int]] = []
        for i in wanted:
            if i in part_idx:
                layout.append(("part", i))
            else:
                layout.append(("file", len(file_proj)))
                file_proj.append(data_idx.index(i))
        # Only partition columns wanted: read the first file column for the row count.
        inner = self.format.open_reader(split_id, file_schema, file_proj or [0], self.options, self.ctx)
        return PartitionedSplitReader(
            FileSplitReader(inner, split_id),
            layout,
            {i: self.schema[i] for i in part_idx},
            partition_values(self.root, split_id),
            self.default_partition,
            [f.name for f in self.produced_schema],
        )

    def total_rows(self) -> int | None:
        if self.format.name != "parquet" or not self.bounded:
            return None
        import pyarrow.parquet as pq

        try:
            return sum(pq.ParquetFile(f).metadata.num_rows for f in self._scan())
        except OSError as e:
            raise file_access_error(e, "read source file") from None


def _create_sink(options: dict[str, str], schema: tuple[Field, ...], ctx: SourceContext) -> Sink:
    """The sink lives in runtime/connectors/filesystem_sink.py."""
    return FilesystemSink(options, schema, ctx)


class FilesystemLookup(LookupSource):
    """Reads the whole file (or directory) through the filesystem connector and keeps it
    until a file changes (modification time or size), so every lookup sees the current
    content: with `lookup.cache` = NONE a changed file is seen at the next lookup."""

    def __init__(self, options: dict[str, str], schema: tuple[Field, ...], config: dict[str, str]) -> None:
        self.options = options
        self.schema = schema
        self.config = config
        self._table: pa.Table | None = None
        self._signature: Any = None

    def _current_signature(self) -> Any:
        path = os.path.abspath(os.path.expanduser(self.options.get("path", "")))
        if not os.path.exists(path):
            raise ConnectorError(f"Lookup table path '{path}' does not exist")
        return tuple((f, os.stat(f).st_mtime_ns, os.stat(f).st_size) for f in list_files(path))

    def _load(self) -> pa.Table:
        sig = self._current_signature()
        if self._table is not None and sig == self._signature:
            return self._table
        source = FilesystemSource(self.options, self.schema, None, SourceContext(mode="BATCH", config=self.config))
        batches = []
        for split in source.splits():
            reader = source.create_reader(split)
            while (b := reader.read(65536)) is not None:
                if b.num_rows:
                    batches.append(
                        pa.RecordBatch.from_arrays(b.columns[: len(self.schema)], names=[f.name for f in self.schema])
                    )
            reader.close()
        arrow_schema = pa.schema([pa.field(f.name, f.type.to_arrow()) for f in self.schema])
        self._table = pa.Table.from_batches(batches, schema=arrow_schema) if batches else arrow_schema.empty_table()
        self._signature = sig
        return self._table

    def lookup(self, key_columns: list[int], keys: pa.Table) -> pa.Table:
        return semi_join(self._load(), key_columns, keys)


FACTORY = register_connector(
    ConnectorFactory(
        name="filesystem",
        description=(
            "Reads and writes files in a local directory (csv, json, parquet, orc, and the changelog formats "
            "debezium-json, canal-json, maxwell-json and ogg-json, one change event per line).\n\n"
            "With a changelog format the sink writes an updating query's changes as that format's events, as "
            "Flink does: -U and -D as deletions, +I and +U as insertions (canal-json `DELETE` / `INSERT`, "
            "debezium-json op `d` / `c`); reading the files back with the same format replays them. With csv, "
            "json, parquet or orc the sink takes inserts only.\n\n"
            "A `PARTITIONED BY (dt, hr)` table is laid out as Flink lays it out: "
            "`<path>/dt=<v>/hr=<v>/part-<uuid>-<subtask>-<n>.<ext>`. The partition columns are not written "
            "into the files (every format); values are escaped as Hive path names (`/` → `%2F`, ...), a NULL "
            "or blank value goes to `partition.default-name`. The source reads the partition columns back "
            "from the directory names (cast to the declared types; the default name reads as NULL). With "
            "checkpoints the sink is exactly-once per partition: part files stay hidden until the checkpoint "
            "(or savepoint) completes. Partition commit: the `success-file` policy with the `process-time` or "
            "`partition-time` trigger; the `metastore` and `custom` policies and custom time extractors are "
            "refused."
        ),
        # lookup.*: an opt-in lookup source for temporal joins (runtime/connectors/lookup.py).
        options=(*OPTIONS, SINK_PARALLELISM, *LOOKUP_OPTIONS, *all_format_options(FORMATS)),
        create_source=FilesystemSource,
        create_sink=_create_sink,
        create_lookup=FilesystemLookup,
        lookup_when=lambda options: any(k.startswith("lookup.") for k in options),
        is_bounded=is_bounded,
        changelog_mode=changelog_mode,
        sink_changelog_mode=sink_changelog_mode,
        sink_update_hint="With csv, json, parquet or orc the filesystem sink only appends rows: write an insert-only "
        "query into it, use a changelog format ('format' = 'canal-json' or 'debezium-json') to write the changes, or "
        "write the updating result to an upsert sink (jdbc or duckdb with a PRIMARY KEY, upsert-kafka).",
        formats=FORMATS,
        prepare_overwrite=prepare_overwrite,
        list_partitions=list_partitions,
    )
)
