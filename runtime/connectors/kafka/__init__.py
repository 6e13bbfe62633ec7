"""The `kafka` and `upsert-kafka` connectors: declarations (options, formats, metadata,
changelog mode, planning-time checks). The source is runtime/connectors/kafka/source.py,
the sink runtime/connectors/kafka/sink.py; they import confluent_kafka (librdkafka) only
when a table is read or written, so start-up does not pay for it.
"""

from __future__ import annotations

from collections.abc import Mapping

from runtime.connectors.base import (
    UPSERT_SINK,
    ConnectorFactory,
    MetadataColumn,
    Sink,
    Source,
    SourceContext,
    TableDescription,
    register_connector,
)
from runtime.connectors.formats import get_format
from runtime.connectors.kafka import options as o
from runtime.connectors.kafka.offsets import parse_specific_offsets
from runtime.connectors.kafka.options import value_format
from runtime.connectors.kafka.sink import (
    SINK_DESCRIPTION,
    SINK_OPTIONS,
    UPSERT_SINK_DESCRIPTION,
    UPSERT_SINK_OPTIONS,
    create_sink,
    create_upsert_sink,
    sink_changelog_mode,
    validate_sink,
)
from runtime.connectors.kafka.source import KafkaSource
from runtime.errors import ConnectorError
from runtime.types import Field


def is_bounded(options: dict[str, str]) -> bool:
    return (o.SCAN_BOUNDED_MODE.get(options) or "unbounded") != "unbounded"


def changelog_mode(options: dict[str, str]) -> str:
    name, _ = value_format(options)
    return "I,UB,UA,D" if name in o.FORMATS and get_format(name).changelog else "I"


def format_metadata(options: Mapping[str, str]) -> tuple[MetadataColumn, ...]:
    """The value format's metadata, offered read-only as 'value.<key>' (Flink's Kafka
    source forwards its value format's readable metadata with that prefix)."""
    name, _ = value_format(options)
    if name not in o.FORMATS:
        return ()
    return tuple(
        MetadataColumn(o.VALUE_METADATA_PREFIX + m.key, m.type, writable=False, description=m.description)
        for m in get_format(name).metadata
    )


def _upsert_changelog_mode(options: dict[str, str]) -> str:
    return "I,UA,D"


def _check_common(t: TableDescription, upsert: bool) -> None:
    opts = t.options
    name = "upsert-kafka" if upsert else "kafka"
    if o.TOPIC.is_set(opts) and o.TOPIC_PATTERN.is_set(opts):
        raise ConnectorError("Option 'topic' and 'topic-pattern' shouldn't be set together.")
    if not o.TOPIC.is_set(opts) and not o.TOPIC_PATTERN.is_set(opts):
        raise ConnectorError("Either 'topic' or 'topic-pattern' must be set.")
    if t.sink and o.TOPIC_PATTERN.is_set(opts):
        raise ConnectorError(f"The '{name}' sink does not support 'topic-pattern': set 'topic'.")
    if not upsert:
        if opts.get("format") and opts.get("value.format"):
            raise ConnectorError("Option 'format' and 'value.format' shouldn't be set together.")
        if not value_format(opts)[0]:
            raise ConnectorError("Could not find required scan format 'value.format'.")
    key_fields = list(o.KEY_FIELDS.get(opts) or ())
    if key_fields and not opts.get("key.format"):
        raise ConnectorError("'key.fields' requires 'key.format' to be set: the key columns are read with it.")
    if opts.get("key.format") and not key_fields and not upsert:
        raise ConnectorError(
            "A key format 'key.format' requires the declaration of one or more of key fields using 'key.fields'."
        )
    prefix = opts.get("key.fields-prefix") or ""
    if prefix and o.VALUE_FIELDS_INCLUDE.get(opts) != "EXCEPT_KEY":
        raise ConnectorError(
            "A key prefix is not allowed when option 'value.fields-include' is set to 'ALL'. "
            "Set it to 'EXCEPT_KEY' instead to avoid field overlaps."
        )
    physical = [f.name for f in t.schema if f.name not in t.metadata]
    for k in key_fields:
        if k not in physical:
            raise ConnectorError(
                f"Could not find the field '{k}' in the table schema for usage in the key format. "
                f"A key field must be a regular, physical column. The following columns can be selected in the "
                f"'key.fields' option:\n[{', '.join(physical)}]"
            )
        if prefix and not k.startswith(prefix):
            raise ConnectorError(
                f"All fields in 'key.fields' must be prefixed with '{prefix}' when option 'key.fields-prefix' is "
                f"set but field '{k}' is not prefixed."
            )
    for key, _ in o.FORMAT_KEYS:
        fmt = opts.get(key)
        if upsert and fmt in o.FORMATS and get_format(fmt).changelog:
            which = "key" if key == "key.format" else "value"
            raise ConnectorError(
                f"'upsert-kafka' connector doesn't support '{fmt}' as {which} format, "
                f"because '{fmt}' is not in insert-only mode."
            )
    if not t.sink and not upsert:
        _check_modes(opts)
    p = o.PROPERTIES_PREFIX
    o.librdkafka_properties({k[len(p) :]: v for k, v in opts.items() if k.startswith(p)})  # Java-only settings fail
    if not t.sink:  # last: Flink's KafkaSourceBuilder checks after the table factory's checks
        _check_group(opts, upsert)


def _check_group(opts: Mapping[str, str], upsert: bool) -> None:
    """What Flink's KafkaSourceBuilder refuses without 'properties.group.id' (its messages,
    in its order): an offset commit asked for explicitly ('properties.enable.auto.commit' or
    'properties.commit.offsets.on.checkpoint' = 'true'), then a committed-offsets start or
    stop ('group-offsets'; upsert-kafka always starts at the earliest offset). Without a
    group id and without those, the source reads under a generated group and commits
    nothing (runtime.connectors.kafka.source)."""
    if o.GROUP_ID.is_set(opts):
        return
    p = o.PROPERTIES_PREFIX
    asked = (f"{p}enable.auto.commit", o.COMMIT_OFFSETS_ON_CHECKPOINT.key)
    if any(str(opts.get(k, "")).strip().lower() == "true" for k in asked):
        raise ConnectorError("Property group.id is required when offset commit is enabled")
    modes = () if upsert else (o.SCAN_STARTUP_MODE.get(opts), o.SCAN_BOUNDED_MODE.get(opts))
    if "group-offsets" in modes:
        raise ConnectorError(
            "Property group.id is required when using committed offset for offsets initializer "
            "('scan.startup.mode' and 'scan.bounded.mode' 'group-offsets' read the consumer group's committed "
            "offsets: set 'properties.group.id', or another mode such as 'earliest-offset')"
        )


def _check_modes(opts: Mapping[str, str]) -> None:
    """The startup / bounded mode options that go together (Flink's messages)."""
    for kind, mode_opt, offsets_opt, ts_opt in (
        ("startup", o.SCAN_STARTUP_MODE, o.SCAN_STARTUP_SPECIFIC_OFFSETS, o.SCAN_STARTUP_TIMESTAMP_MILLIS),
        ("bounded", o.SCAN_BOUNDED_MODE, o.SCAN_BOUNDED_SPECIFIC_OFFSETS, o.SCAN_BOUNDED_TIMESTAMP_MILLIS),
    ):
        mode = mode_opt.get(opts)
        if mode == "timestamp" and not ts_opt.is_set(opts):
            raise ConnectorError(f"'{ts_opt.key}' is required in 'timestamp' {kind} mode but missing.")
        if mode == "specific-offsets":
            if not offsets_opt.is_set(opts):
                raise ConnectorError(f"'{offsets_opt.key}' is required in 'specific-offsets' {kind} mode but missing.")
            parse_specific_offsets(opts[offsets_opt.key], offsets_opt.key)
    if o.SCAN_STARTUP_MODE.get(opts) == "specific-offsets" and o.TOPIC_PATTERN.is_set(opts):
        raise ConnectorError("'specific-offsets' startup mode needs a single 'topic', not 'topic-pattern'.")
    topics = o.TOPIC.get(opts) or ()
    if len(topics) > 1 and "specific-offsets" in (o.SCAN_STARTUP_MODE.get(opts), o.SCAN_BOUNDED_MODE.get(opts)):
        raise ConnectorError(
            "Currently Kafka source only supports specific offset for single topic: 'specific-offsets' needs one "
            "'topic'."
        )


def _validate(t: TableDescription) -> None:
    _check_common(t, upsert=False)
    if t.sink:
        validate_sink(t, upsert=False)


def _validate_upsert(t: TableDescription) -> None:
    if not t.primary_key:
        raise ConnectorError(
            "'upsert-kafka' tables require to define a PRIMARY KEY constraint. "
            "The PRIMARY KEY specifies which columns should be read from or write to the Kafka message key. "
            "The PRIMARY KEY also defines records in the 'upsert-kafka' table should update or delete on which keys."
        )
    _check_common(t, upsert=True)
    if t.sink:
        validate_sink(t, upsert=True)


def _create_source(
    options: dict[str, str], schema: tuple[Field, ...], projection: list[int] | None, ctx: SourceContext
) -> Source:
    return KafkaSource(options, schema, projection, ctx, upsert=False)


def _create_upsert_source(
    options: dict[str, str], schema: tuple[Field, ...], projection: list[int] | None, ctx: SourceContext
) -> Source:
    return KafkaSource(options, schema, projection, ctx, upsert=True)


def _sink(options: dict[str, str], schema: tuple[Field, ...], ctx: SourceContext) -> Sink:
    return create_sink(options, schema, ctx)


def _upsert_sink(options: dict[str, str], schema: tuple[Field, ...], ctx: SourceContext) -> Sink:
    return create_upsert_sink(options, schema, ctx)


KAFKA = register_connector(
    ConnectorFactory(
        name="kafka",
        description=(
            "Reads and writes Apache Kafka topics through confluent-kafka (librdkafka), with Flink's option names "
            "and semantics.\n\n"
            "Source: one split per partition (partitions spread over the subtasks at parallelism > 1); a poll's "
            "records are decoded into one Arrow batch. The partitions' offsets are part of every checkpoint and a "
            "restore resumes from them; when a checkpoint completes they are committed to the consumer group "
            "of 'properties.group.id' ('properties.commit.offsets.on.checkpoint'; without a group id nothing is "
            "committed, and the default startup mode 'group-offsets' is refused, as in Flink). With a WATERMARK "
            "the watermark is generated per partition and the source's is their minimum, a partition idle for "
            "'scan.watermark.idle-timeout' (or 'table.exec.source.idle-timeout') excluded. A payload that does not parse fails the job naming "
            "its topic, partition and offset, or is skipped and counted with '<format>.ignore-parse-errors'.\n\n"
            "Key and value: 'value.format' (or 'format') decodes the value; 'key.format' with 'key.fields' the "
            "key columns; 'value.fields-include' = 'EXCEPT_KEY' leaves them out of the value. Formats: "
            + ", ".join(f"`{f}`" for f in o.FORMATS)
            + " (their options carry the 'key.' / 'value.' prefix when given by 'key.format' / 'value.format'); "
            "the value format's metadata is read as 'value.<key>' (docs/connectors/formats.md).\n\n"
            "Client settings: 'properties.*' go to librdkafka. The Java client settings a Flink table carries are "
            "translated: 'sasl.jaas.config' of the PLAIN and SCRAM login modules becomes 'sasl.username' / "
            "'sasl.password', keys librdkafka names otherwise are renamed ('fetch.max.wait.ms', "
            "'receive.buffer.bytes', 'send.buffer.bytes', 'max.request.size', 'buffer.memory'), the (de)serializer "
            "classes and client metrics settings are dropped, and Java keystores ('ssl.truststore.*') or Java "
            "classes ('interceptor.classes') fail when the query is planned, naming what to set instead.\n\n"
            + SINK_DESCRIPTION
        ),
        options=o.SOURCE_OPTIONS + SINK_OPTIONS,
        create_source=_create_source,
        create_sink=_sink,
        is_bounded=is_bounded,
        formats=o.FORMATS,
        prefixes=(o.PROPERTIES_PREFIX,),
        format_keys=o.FORMAT_KEYS,
        metadata=o.METADATA,
        format_metadata=format_metadata,
        changelog_mode=changelog_mode,
        sink_changelog_mode=sink_changelog_mode,
        sink_update_hint="The 'kafka' sink appends records: use the 'upsert-kafka' connector with a PRIMARY KEY for an "
        "updating result, or a changelog value format ('debezium-json', 'canal-json', 'maxwell-json', 'ogg-json').",
        split_watermarks=True,
        validate=_validate,
    )
)

UPSERT_KAFKA = register_connector(
    ConnectorFactory(
        name="upsert-kafka",
        description=(
            "Reads a (compacted) topic as an upsert changelog and writes an updating result as upserts keyed by "
            "the table's PRIMARY KEY, as Flink's upsert-kafka.\n\n"
            "Source: the PRIMARY KEY columns come from the record key ('key.format'), the others from the value "
            "('value.format'); a record with a value is an upsert of its key, a tombstone (null value) a delete. "
            "In STREAMING mode the planner reads the topic through a ChangelogNormalize keyed by the PRIMARY KEY "
            "(as Flink plans it): it keeps the last row per key in state and emits +I for a new key, +U for an "
            "update, preceded by -U when a consumer needs them (nothing when the row did not change), -D with the whole last row for a tombstone of a known "
            "key and nothing for a tombstone of an unknown one. It reads every partition from the earliest "
            "offset. BATCH mode refuses the table, as Flink refuses a source that is not insert-only.\n\n"
            + UPSERT_SINK_DESCRIPTION
        ),
        options=o.UPSERT_SOURCE_OPTIONS + UPSERT_SINK_OPTIONS,
        create_source=_create_upsert_source,
        create_sink=_upsert_sink,
        is_bounded=is_bounded,
        formats=o.FORMATS,
        prefixes=(o.PROPERTIES_PREFIX,),
        format_keys=o.FORMAT_KEYS,
        metadata=o.METADATA,
        format_metadata=format_metadata,
        changelog_mode=_upsert_changelog_mode,
        sink_changelog_mode=lambda options, primary_key: UPSERT_SINK,
        split_watermarks=True,
        validate=_validate_upsert,
    )
)
