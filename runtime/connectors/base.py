"""Connector contract: sources split into partitions that each know how to resume
(bytewax-style), sinks that take batches, and factories that declare their options so
the docs are generated from the code.

Other packages add connectors by registering a `ConnectorFactory` (or a zero-argument
callable returning one) under the `streamsql.connectors` entry point group, e.g. in their
pyproject.toml::

    [project.entry-points."streamsql.connectors"]
    my-connector = "my_package.connector:FACTORY"

They are read when a table names a connector that is not built in (README.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import field
from typing import Any

import pyarrow as pa

from runtime.config import parsers
from runtime.config.options import ConfigOption as ConfigOption  # connectors declare WITH options with it
from runtime.errors import ConnectorError
from runtime.frozen import frozen_dataclass, mutable_dataclass
from runtime.plugins import import_submodules, register_plugins
from runtime.types import Field


@mutable_dataclass
class SourceContext:
    """What a connector learns of the job: runtime mode, session time zone, job configuration."""

    mode: str  # runtime.graph.STREAMING | BATCH
    time_zone: str = "UTC"
    config: dict[str, str] = field(default_factory=dict)


class SplitReader:
    """Reads one split. `read` returns the next batch (data columns of the scan's
    produced schema), an empty batch when an unbounded split has nothing right now, or
    None when the split is finished."""

    def read(self, max_rows: int) -> pa.RecordBatch | None:
        raise NotImplementedError

    def offset(self) -> Any:
        """A JSON-able position from which `seek` resumes exactly after the last row read."""
        return None

    def seek(self, offset: Any) -> None:
        """Resume from an `offset()` value."""

    def commit_offset(self, offset: Any) -> None:
        """A checkpoint holding `offset` (an `offset()` value) completed: a source that
        keeps its position in the external system (a replication slot) may confirm it now."""

    def close(self) -> None:
        pass


class SplitGroupReader:
    """Reads several splits at once (a source whose splits are all unbounded, such as
    Kafka's partitions, cannot read them one after the other). `read` returns rows of ONE
    split, named by `current_split` (the source operator tags the batch with it, for
    per-split watermarks), an empty batch when nothing is there right now, or None when
    every split is finished (bounded)."""

    current_split: str | None = None
    skipped_rows: int = 0

    def read(self, max_rows: int) -> pa.RecordBatch | None:
        raise NotImplementedError

    def splits(self) -> list[str]:
        """The splits this reader reads, in a stable order."""
        raise NotImplementedError

    def add_splits(self, split_ids: list[str]) -> None:
        """Start reading these splits too (found by discovery)."""
        raise NotImplementedError

    def offset(self) -> dict[str, Any]:
        """{split: JSON-able position} from which `seek` resumes exactly after the rows read."""
        raise NotImplementedError

    def seek(self, offsets: dict[str, Any]) -> None:
        """Resume every split of `offsets` from its `offset()` value (called before reading)."""

    def commit(self, offsets: dict[str, Any]) -> None:
        """A checkpoint that recorded `offsets` completed (Kafka: commit them to the group)."""

    def close(self) -> None:
        pass


class Source:
    """A table's scan. `produced_schema` is the schema of the batches its readers return
    (the scan's projected physical columns)."""

    produced_schema: tuple[Field, ...]
    # The splits are read together by one `create_group_reader` (Kafka's partitions), not
    # one after the other by `create_reader`.
    reads_splits_together: bool = False

    def create_group_reader(self, split_ids: list[str]) -> SplitGroupReader:
        raise NotImplementedError

    @property
    def bounded(self) -> bool:
        return True

    def splits(self) -> list[str]:
        """Split ids known now (e.g. files). Unbounded sources may find more later."""
        raise NotImplementedError

    def discover_splits(self) -> list[str]:
        """New split ids that appeared since the last call (monitoring); [] by default."""
        return []

    def create_reader(self, split_id: str) -> SplitReader:
        raise NotImplementedError

    def total_rows(self) -> int | None:
        """Rows this source will produce, when known (progress bars)."""
        return None


class Sink:
    """Takes batches (data columns, plus `__op` when the input is a changelog)."""

    def open(self) -> None:
        pass

    def write(self, batch: pa.RecordBatch) -> None:
        raise NotImplementedError

    def write_for(self, batch: pa.RecordBatch, subtask: int) -> None:
        """Write `batch` on behalf of writer subtask `subtask`: one instance writes for every
        subtask of the job when its sink runs once (in the parallel executor's parent
        process), and a sink whose output names its subtask (the print sink's `id:N>`)
        tells them apart here. Default: `write`."""
        self.write(batch)

    def flush(self) -> None:
        pass

    def on_timer(self) -> None:
        """Processing time passed without input (the executor's idle timer, through the
        Sink operator's `on_timer`): a sink that buffers for a time bound (upsert-kafka's
        'sink.buffer-flush.interval') sends what is due, so a quiet stream is not held back."""

    def on_watermark(self, watermark: int) -> None:
        """The sink's input watermark advanced to `watermark` (epoch ms): a sink that acts on
        event time (the filesystem sink's 'partition-time' commit trigger) may act now."""

    def close(self) -> None:
        pass


@frozen_dataclass
class MetadataColumn:
    """A metadata key a connector offers (`col TYPE METADATA FROM 'key'`): its Flink data
    type (SQL text), whether a sink can write it (else the column must be VIRTUAL in a
    table that is written to), and what it holds (the docs list it)."""

    key: str
    type: str
    writable: bool = False
    description: str = ""


# Internal option naming a scan's or sink's metadata columns (set by the planner): a JSON
# object {column name: metadata key}; the columns are among the schema given to the
# connector (in declared order, among the physical ones).
METADATA_COLUMNS = "$internal.metadata-columns"


# Internal config key of a sink's context: the index of its subtask (per-subtask producers,
# transactional ids and partitions).
SUBTASK_INDEX = "$internal.subtask-index"
# Internal option: the table's PRIMARY KEY columns, comma-separated (set by the planner).
PRIMARY_KEY = "$internal.primary-key"


# Flink's `sink.parallelism`, declared here once; a connector whose sink may run at its own
# parallelism lists it among its options. The planner gives the Sink node that many writer
# subtasks (runtime/operators/sink.py) and places the Exchange Flink's CommonExecSink places
# in front (planner/optimizer/sink_keyed_shuffle.py).
SINK_PARALLELISM: ConfigOption[int] = ConfigOption(
    "sink.parallelism",
    type="int",
    description="The sink's parallelism: this many writer subtasks (each its own connection, producer, part "
    "files or transaction), whatever the parallelism of its input. Unset: the input's parallelism. Rows reach "
    "the writers round-robin, or hashed on the PRIMARY KEY (one key always reaches the same writer) when the "
    "table has one and the parallelism differs from the input's; an update stream into a sink without a PRIMARY "
    "KEY at another parallelism is refused, as in Flink.",
)


# Flink's `scan.parallelism` (FLIP-367), declared here once for the sources that list it
# (datagen, kafka).
SCAN_PARALLELISM: ConfigOption[int] = ConfigOption(
    "scan.parallelism",
    type="int",
    description="Flink: the source's own parallelism. Accepted for compatibility; the source runs at the "
    "job's parallelism (its splits spread over the subtasks), which gives the same rows.",
)


# Internal config key of a sink's context: how many writer subtasks the sink has ('sink.parallelism',
# else the job's parallelism); the print sink numbers its lines by writer above 1, as Flink's does.
SINK_SUBTASKS = "$internal.sink-subtasks"


def metadata_columns(options: Mapping[str, str]) -> dict[str, str]:
    """The `METADATA_COLUMNS` option as {column name: metadata key} ({} when none)."""
    text = options.get(METADATA_COLUMNS)
    return dict(json.loads(text)) if text else {}


@frozen_dataclass
class TableDescription:
    """What a factory's `validate` sees of a table the planner is about to read or write."""

    name: str
    options: Mapping[str, str]
    # Physical and metadata columns in declared order (what the connector gets).
    schema: tuple[Field, ...]
    primary_key: tuple[str, ...] = ()
    # {column name: metadata key} of the metadata columns.
    metadata: Mapping[str, str] = field(default_factory=dict)
    sink: bool = False


# `ConnectorFactory.sink_changelog_mode` of a sink that writes updates by key (upsert-kafka,
# jdbc, blackhole): +I/+U upsert the key's row, -D deletes it, no -U needed.
UPSERT_SINK = "I,UA,D"


@frozen_dataclass
class ConnectorFactory:
    """How `'connector' = name` builds sources and sinks.

    `create_source(options, schema, projection, ctx)`: `schema` is the table's full
    physical schema, `projection` the indices (into it) to produce, or None for all.
    `create_sink(options, schema, ctx)`.
    """

    name: str
    description: str
    options: tuple[ConfigOption, ...]
    create_source: Callable[[dict[str, str], tuple[Field, ...], list[int] | None, SourceContext], Source] | None = None
    create_sink: Callable[[dict[str, str], tuple[Field, ...], SourceContext], Sink] | None = None
    # `create_lookup(options, schema, config)`: the table as a lookup source for processing-time
    # lookup joins (a runtime.connectors.lookup.LookupSource); None: no lookup source.
    create_lookup: Callable[[dict[str, str], tuple[Field, ...], dict[str, str]], Any] | None = None
    # With `create_lookup`: whether a table with these options is a lookup source (an opt-in,
    # e.g. filesystem only with a `lookup.*` option, as Flink's filesystem table is none).
    lookup_when: Callable[[dict[str, str]], bool] = lambda options: True
    # Whether the source is bounded given these options (the planner asks before running).
    is_bounded: Callable[[dict[str, str]], bool] = lambda options: True
    # Other factories (formats) whose options also apply, e.g. 'csv.*' for filesystem.
    formats: tuple[str, ...] = ()
    # Option prefixes passed through unchecked (e.g. 'properties.' for a Kafka client).
    prefixes: tuple[str, ...] = ()
    # (option naming a format, prefix of that format's options): 'format' = 'csv' brings
    # 'csv.*'; Kafka's 'value.format' = 'json' brings 'value.json.*'.
    format_keys: tuple[tuple[str, str], ...] = (("format", ""),)
    # Metadata keys `METADATA FROM 'key'` columns may read (and write, where writable).
    metadata: tuple[MetadataColumn, ...] = ()
    # Read-only metadata of the table's format given these options, with the key the
    # connector offers it under (Kafka: the value format's, prefixed 'value.').
    format_metadata: Callable[[Mapping[str, str]], tuple[MetadataColumn, ...]] | None = None
    # The scan's changelog mode given these options: 'I' (insert-only), 'I,UB,UA,D'
    # (a CDC format) or 'I,UA,D' (upsert: the planner normalizes it by the primary key).
    changelog_mode: Callable[[dict[str, str]], str] = lambda options: "I"
    # The changes the sink can write given its options and the table's declared PRIMARY KEY
    # (Flink's DynamicTableSink getChangelogMode): 'I' (append-only) makes the planner refuse
    # an updating input when it plans the job (planner/changelog.py `check_sink_changelog`,
    # Flink's "Table sink '...' doesn't support consuming update changes ..."); UPSERT_SINK
    # ('I,UA,D') applies updates by key and does without -U rows (the planner then leaves
    # them out where the input's upsert key is the sink's PRIMARY KEY, and puts Flink's
    # SinkUpsertMaterializer in front where it is not); None: any changelog, -U rows
    # included (a retract sink, as print).
    sink_changelog_mode: Callable[[dict[str, str], tuple[str, ...]], str] | None = None
    # What to do instead, shown under the planner's refusal of an updating input into a sink
    # whose `sink_changelog_mode` does not take it (e.g. "declare a PRIMARY KEY").
    sink_update_hint: str = ""
    # The source reads its splits together and the table's watermark is generated per
    # split (Kafka: per partition); the planner then asks the scan to tag rows with their
    # split (runtime/batch.py `__split`).
    split_watermarks: bool = False
    # Checks beyond the declared options (option combinations, primary key), at planning
    # time; raises ConnectorError with Flink's message.
    validate: Callable[[TableDescription], None] | None = None
    # A resource a scan must be the only reader of in a job (a replication slot), named for
    # these options, or None: planning refuses a job with two scans of one such resource
    # (streamsql does not reuse a source for several scans, Flink's source reuse).
    exclusive_resource: Callable[[dict[str, str]], str | None] | None = None
    # Markdown appended to the generated docs page (how it works, a worked example).
    guide: str = ""
    # The module, imported by the Spark runner only, that reads and writes this connector's
    # tables on Spark: `read_frame(spark, options, fields, spark_schema) -> DataFrame` and
    # `write_rows(rows, options, fields, primary_key, txn)` (rows: the sink's columns plus
    # `__op`, applied in one transaction, only once per `txn`). "": Spark has no mapping
    # beyond the runner's own (files, print, blackhole).
    spark_module: str = ""
    # With `spark_module`: whether its scan also runs in a STREAMING Spark job.
    spark_streaming_scan: bool = False
    # INSERT OVERWRITE support (Flink's SupportsOverwrite), BATCH only: called with the sink's
    # options (partition keys included) and the static partition values before the job
    # runs; returns what to call once the job has finished successfully (it removes the
    # data the new rows replace). None: the sink cannot be overwritten.
    prepare_overwrite: Callable[[dict[str, str], dict[str, str]], Callable[[], None]] | None = None
    # SHOW PARTITIONS: the partitions the sink's storage holds, each as {column: value}
    # (given the options and the partition columns). None: the connector keeps none.
    list_partitions: Callable[[dict[str, str], tuple[str, ...]], list[dict[str, str]]] | None = None


def parse_duration_ms(text: str, key: str = "duration") -> int:
    """A duration `WITH` option ('1 s', '100ms', '2 min', plain number = ms) with the one
    duration parser (runtime/config/parsers.py); a ConnectorError names the option."""
    try:
        return parsers.parse_duration_ms(text)
    except ValueError as e:
        raise ConnectorError(f"Invalid value '{text}' for option '{key}': {e}.") from None


def parse_size(text: str, key: str) -> int:
    """A memory-size `WITH` option ('128MB', '1 gb', plain number = bytes)."""
    try:
        return parsers.parse_memory_size(text)
    except ValueError as e:
        raise ConnectorError(f"Invalid value '{text}' for option '{key}': {e}.") from None


_CONNECTORS: dict[str, ConnectorFactory] = {}


def register_connector(factory: ConnectorFactory) -> ConnectorFactory:
    _CONNECTORS[factory.name] = factory
    return factory


def get_connector(name: str) -> ConnectorFactory:
    """The factory of connector `name`. One already registered (its module is loaded: the
    Table API's `memory` connector) is found without importing every connector module
    (start-up: Kafka's, JDBC's, pyarrow's file systems and formats); a name no built-in
    connector has is looked up among the installed packages' plugins."""
    factory = _CONNECTORS.get(name)
    if factory is not None:
        return factory
    _ensure_loaded()
    if name not in _CONNECTORS:
        _load_plugins()
    try:
        return _CONNECTORS[name]
    except KeyError:
        known = ", ".join(sorted(_CONNECTORS))
        raise ConnectorError(f"Could not find any factory for identifier '{name}'. Available: {known}") from None


def connector_names() -> list[str]:
    """Every connector: the built-in ones and the installed plugins'."""
    _ensure_loaded()
    _load_plugins()
    return sorted(_CONNECTORS)


PLUGIN_GROUP = "streamsql.connectors"


class ConnectorPluginError(ConnectorError):
    """An installed package's connector entry point is unusable (not a factory, or it takes
    a built-in connector's name): reported as such, not as an unknown connector."""


def _load_plugins() -> None:
    """Register the connectors of the `streamsql.connectors` entry points, once. A plugin
    cannot take a built-in connector's name (which one a table meant would be ambiguous,
    as Flink refuses two factories with one identifier)."""
    register_plugins(PLUGIN_GROUP, ConnectorFactory, _CONNECTORS, register_connector, ConnectorPluginError, "connector")


def _ensure_loaded() -> None:
    """Import the connector modules (they register themselves on import). A connector's
    Spark module (`spark_module`, named `*_spark`) registers nothing and imports pyspark
    (~0.3 s): the Spark runner imports it, not the first query naming a connector."""
    import_submodules("runtime.connectors", skip=("base",), skip_suffix="_spark")
