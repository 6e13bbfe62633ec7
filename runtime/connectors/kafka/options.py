"""The `WITH` options of the `kafka` and `upsert-kafka` connectors, declared once with
Flink's names, types and defaults (KafkaConnectorOptions). The source reads them here;
the sink's own options (`sink.*`) are declared in runtime/connectors/kafka/sink.py.

`properties.*` keys go to the Kafka client (librdkafka through confluent-kafka) with the
prefix removed, except the few Flink reads itself (`FLINK_PROPERTIES`), which are not
client settings and would make librdkafka refuse the configuration.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from runtime.connectors.base import SCAN_PARALLELISM, ConfigOption, MetadataColumn
from runtime.errors import ConnectorError

PROPERTIES_PREFIX = "properties."

# ---------------------------------------------------------------------- topics, client
TOPIC: ConfigOption[tuple[str, ...]] = ConfigOption(
    "topic",
    type="list",
    description="Topic(s) to read from, separated by semicolons ('topic-1;topic-2'); the topic a sink writes to. "
    "A source takes either 'topic' or 'topic-pattern'.",
)
TOPIC_PATTERN: ConfigOption[str] = ConfigOption(
    "topic-pattern",
    description="A regular expression: the source reads every topic whose whole name matches it (also topics "
    "created later, found by partition discovery). A source takes either 'topic' or 'topic-pattern'.",
)
BOOTSTRAP_SERVERS: ConfigOption[str] = ConfigOption(
    "properties.bootstrap.servers",
    required=True,
    description="Comma-separated host:port list of the Kafka brokers.",
)
GROUP_ID: ConfigOption[str] = ConfigOption(
    "properties.group.id",
    description="Consumer group of the source: its committed offsets are where 'group-offsets' starts (the "
    "default startup mode) or stops, and where checkpoints commit. Without it, as in Flink, 'group-offsets' "
    "fails at planning ('Property group.id is required when using committed offset for offsets initializer'), "
    "so does an explicit 'properties.commit.offsets.on.checkpoint' or 'properties.enable.auto.commit' = 'true' "
    "('... when offset commit is enabled'), and otherwise nothing is committed (the client reads under a "
    "generated group 'KafkaSource-<random>' it never joins).",
)
COMMIT_OFFSETS_ON_CHECKPOINT: ConfigOption[bool] = ConfigOption(
    "properties.commit.offsets.on.checkpoint",
    type="boolean",
    default="true",
    description="When a checkpoint completes, commit the offsets it recorded to the consumer group (for lag "
    "monitoring; restore uses the checkpoint's offsets, not the committed ones). Off without "
    "'properties.group.id' (set to 'true' without one, the table is refused, as in Flink).",
)
# `properties.*` keys Flink's Kafka source reads itself: never handed to the client.
FLINK_PROPERTIES = (
    "commit.offsets.on.checkpoint",
    "partition.discovery.interval.ms",
    "client.id.prefix",
    "register.consumer.metrics",
)

# ---------------------------------------------------------------------- formats, key
FORMAT: ConfigOption[str] = ConfigOption(
    "format",
    description="Format of the record value (same as 'value.format'); its options are '<format>.*'.",
)
VALUE_FORMAT: ConfigOption[str] = ConfigOption(
    "value.format",
    description="Format of the record value; its options are 'value.<format>.*'. One of 'format' / "
    "'value.format' is required.",
)
KEY_FORMAT: ConfigOption[str] = ConfigOption(
    "key.format",
    description="Format of the record key (needed with 'key.fields'); its options are 'key.<format>.*'.",
)
UPSERT_KEY_FORMAT: ConfigOption[str] = ConfigOption(
    "key.format",
    required=True,
    description="Format of the record key, which holds the PRIMARY KEY columns; its options are 'key.<format>.*'.",
)
UPSERT_VALUE_FORMAT: ConfigOption[str] = ConfigOption(
    "value.format",
    required=True,
    description="Format of the record value (insert-only formats only); its options are 'value.<format>.*'.",
)
KEY_FIELDS: ConfigOption[tuple[str, ...]] = ConfigOption(
    "key.fields",
    type="list",
    description="Physical columns (semicolon-separated) read from / written to the record key with "
    "'key.format'. Unset: the key is not used.",
)
KEY_FIELDS_PREFIX: ConfigOption[str] = ConfigOption(
    "key.fields-prefix",
    description="Prefix of the key columns' names in the table schema (and in 'key.fields'), removed to get "
    "their names inside the key format. Requires 'value.fields-include' = 'EXCEPT_KEY'.",
)
VALUE_FIELDS_INCLUDE: ConfigOption[str] = ConfigOption(
    "value.fields-include",
    type="enum",
    default="ALL",
    values=("ALL", "EXCEPT_KEY"),
    description="Which physical columns the value format holds: 'ALL' (key columns too) or 'EXCEPT_KEY'.",
)

# ---------------------------------------------------------------------- scan
STARTUP_MODES = ("earliest-offset", "latest-offset", "group-offsets", "timestamp", "specific-offsets")
BOUNDED_MODES = ("unbounded", "latest-offset", "group-offsets", "timestamp", "specific-offsets")

SCAN_STARTUP_MODE: ConfigOption[str] = ConfigOption(
    "scan.startup.mode",
    type="enum",
    default="group-offsets",
    values=STARTUP_MODES,
    description="Where the source starts reading each partition: the earliest or latest offset, the consumer "
    "group's committed offset ('group-offsets'; 'properties.auto.offset.reset' decides when there is none, "
    "default latest), the first record at or after 'scan.startup.timestamp-millis', or "
    "'scan.startup.specific-offsets'.",
)
SCAN_STARTUP_SPECIFIC_OFFSETS: ConfigOption[str] = ConfigOption(
    "scan.startup.specific-offsets",
    description="Offsets of the 'specific-offsets' startup mode: 'partition:0,offset:42;partition:1,offset:300'. "
    "A partition not listed starts at its committed group offset (or 'auto.offset.reset').",
)
SCAN_STARTUP_TIMESTAMP_MILLIS: ConfigOption[int] = ConfigOption(
    "scan.startup.timestamp-millis",
    type="int",
    description="Epoch milliseconds of the 'timestamp' startup mode.",
)
SCAN_BOUNDED_MODE: ConfigOption[str] = ConfigOption(
    "scan.bounded.mode",
    type="enum",
    default="unbounded",
    values=BOUNDED_MODES,
    description="Where the source stops: never ('unbounded'), at the partitions' end offsets when the job "
    "starts ('latest-offset'), at the group's committed offsets, at the first record at or after "
    "'scan.bounded.timestamp-millis', or at 'scan.bounded.specific-offsets' (exclusive). BATCH mode needs a "
    "bounded mode.",
)
SCAN_BOUNDED_SPECIFIC_OFFSETS: ConfigOption[str] = ConfigOption(
    "scan.bounded.specific-offsets",
    description="Stop offsets (exclusive) of the 'specific-offsets' bounded mode: "
    "'partition:0,offset:42;partition:1,offset:300'.",
)
SCAN_BOUNDED_TIMESTAMP_MILLIS: ConfigOption[int] = ConfigOption(
    "scan.bounded.timestamp-millis",
    type="int",
    description="Epoch milliseconds of the 'timestamp' bounded mode (records from then on are not read).",
)
SCAN_PARTITION_DISCOVERY: ConfigOption[int] = ConfigOption(
    "scan.topic-partition-discovery.interval",
    type="duration",
    default="5 min",
    description="How often an unbounded source looks for new partitions (and, with 'topic-pattern', new "
    "topics); '0' disables discovery.",
)

SOURCE_OPTIONS: tuple[ConfigOption[Any], ...] = (
    TOPIC,
    TOPIC_PATTERN,
    BOOTSTRAP_SERVERS,
    GROUP_ID,
    COMMIT_OFFSETS_ON_CHECKPOINT,
    FORMAT,
    VALUE_FORMAT,
    KEY_FORMAT,
    KEY_FIELDS,
    KEY_FIELDS_PREFIX,
    VALUE_FIELDS_INCLUDE,
    SCAN_STARTUP_MODE,
    SCAN_STARTUP_SPECIFIC_OFFSETS,
    SCAN_STARTUP_TIMESTAMP_MILLIS,
    SCAN_BOUNDED_MODE,
    SCAN_BOUNDED_SPECIFIC_OFFSETS,
    SCAN_BOUNDED_TIMESTAMP_MILLIS,
    SCAN_PARTITION_DISCOVERY,
    SCAN_PARALLELISM,
)

UPSERT_SOURCE_OPTIONS: tuple[ConfigOption[Any], ...] = (
    TOPIC,
    TOPIC_PATTERN,
    BOOTSTRAP_SERVERS,
    GROUP_ID,
    COMMIT_OFFSETS_ON_CHECKPOINT,
    UPSERT_KEY_FORMAT,
    UPSERT_VALUE_FORMAT,
    KEY_FIELDS_PREFIX,
    VALUE_FIELDS_INCLUDE,
    SCAN_BOUNDED_MODE,
    SCAN_BOUNDED_SPECIFIC_OFFSETS,
    SCAN_BOUNDED_TIMESTAMP_MILLIS,
    SCAN_PARALLELISM,
)

# Formats either connector reads and writes (key and value).
FORMATS = ("json", "csv", "raw", "avro", "debezium-json", "canal-json", "maxwell-json", "ogg-json")
# (option naming a format, prefix of that format's options)
FORMAT_KEYS = (("format", ""), ("value.format", "value."), ("key.format", "key."))

# ---------------------------------------------------------------------- metadata
# The value format's own metadata ('value.source.table' of 'debezium-json') carries this prefix.
VALUE_METADATA_PREFIX = "value."
METADATA: tuple[MetadataColumn, ...] = (
    MetadataColumn("topic", "STRING NOT NULL", writable=False, description="Topic of the record."),
    MetadataColumn("partition", "INT NOT NULL", writable=False, description="Partition of the record."),
    MetadataColumn(
        "headers",
        "MAP<STRING, BYTES> NOT NULL",
        writable=True,
        description="Headers of the record as a map of raw bytes.",
    ),
    MetadataColumn("leader-epoch", "INT", writable=False, description="Leader epoch of the record, if available."),
    MetadataColumn("offset", "BIGINT NOT NULL", writable=False, description="Offset of the record in its partition."),
    MetadataColumn(
        "timestamp",
        "TIMESTAMP_LTZ(3) NOT NULL",
        writable=True,
        description="Timestamp of the record (written as its CreateTime).",
    ),
    MetadataColumn(
        "timestamp-type",
        "STRING NOT NULL",
        writable=False,
        description="'NoTimestampType', 'CreateTime' or 'LogAppendTime'.",
    ),
)


def value_format(options: Mapping[str, str]) -> tuple[str, str]:
    """(format name, its options' prefix) of the record value: 'value.format' or 'format'."""
    if options.get("value.format"):
        return options["value.format"], "value."
    return options.get("format") or "", ""


# ---------------------------------------------------------------------- Java client settings
# The JAAS login modules whose user name and password librdkafka takes as sasl.username /
# sasl.password (Flink's SQL client JAR relocates them under 'org.apache.flink.kafka.shaded.').
_JAAS_LOGIN = re.compile(
    r"^\s*(?:org\.apache\.flink\.kafka\.shaded\.)?org\.apache\.kafka\.common\.security\."
    r"(?:plain\.PlainLoginModule|scram\.ScramLoginModule)\s+required\b(?P<args>.*?);?\s*$",
    re.DOTALL,
)
_JAAS_ARG = re.compile(r'(?P<k>[A-Za-z_.]+)\s*=\s*(?:\\?"(?P<q>(?:[^"\\]|\\.)*?)\\?"|(?P<v>[^\s;]+))')
# Java keystores librdkafka cannot read: what to set instead.
_JAVA_ONLY = {
    "ssl.truststore.location": "'properties.ssl.ca.location' (the CA certificates as a PEM file)",
    "ssl.truststore.password": "'properties.ssl.ca.location' (a PEM file needs no password)",
    "ssl.truststore.type": "'properties.ssl.ca.location' (a PEM file)",
    "ssl.keystore.type": "'properties.ssl.keystore.location' with a PKCS#12 file, or 'properties.ssl.certificate.location' "
    "and 'properties.ssl.key.location' (PEM files)",
}


# Java client settings librdkafka names otherwise: (librdkafka's name, value conversion).
_RENAMED: dict[str, tuple[str, Any]] = {
    "fetch.max.wait.ms": ("fetch.wait.max.ms", str),
    "receive.buffer.bytes": ("socket.receive.buffer.bytes", str),
    "send.buffer.bytes": ("socket.send.buffer.bytes", str),
    "max.request.size": ("message.max.bytes", str),
    "buffer.memory": ("queue.buffering.max.kbytes", lambda v: str(max(1, int(v) // 1024))),
}
# Java client settings with no librdkafka counterpart that change nothing a query sees:
# dropped (Flink sets the (de)serializers itself; the rest are client tuning and metrics).
_IGNORED = frozenset(
    {
        "key.deserializer",
        "value.deserializer",
        "key.serializer",
        "value.serializer",
        "default.api.timeout.ms",
        "exclude.internal.topics",
        "max.block.ms",
        "metric.reporters",
        "ssl.protocol",
        "ssl.enabled.protocols",
    }
)
# Java classes plugged into the client: nothing here can load them.
_CLASSES = (
    "interceptor.classes",
    "partitioner.class",
    "sasl.login.callback.handler.class",
    "sasl.client.callback.handler.class",
    "sasl.login.class",
)


def librdkafka_properties(props: Mapping[str, str]) -> dict[str, str]:
    """Client settings (the `properties.*` options without the prefix) in librdkafka's
    terms. A Flink table configures Java's Kafka client: its 'sasl.jaas.config' for the
    PLAIN and SCRAM mechanisms becomes librdkafka's 'sasl.username' / 'sasl.password'; a
    setting librdkafka names otherwise is renamed ('fetch.max.wait.ms'); one it has no
    counterpart for is dropped when it changes no result (the (de)serializer classes Flink
    overrides too, client metrics), or fails naming it and what to set instead."""
    out = dict(props)
    for key in _CLASSES:
        if key in out:
            raise ConnectorError(
                f"Option 'properties.{key}' names Java classes for Java's Kafka client, which streamsql does not "
                "use (it uses librdkafka)" + (": use 'sink.partitioner'." if key == "partitioner.class" else ".")
            )
    for key in _IGNORED & out.keys():
        del out[key]
    for key, (native, convert) in _RENAMED.items():
        if key in out:
            value = out.pop(key)
            try:
                out.setdefault(native, convert(value))
            except ValueError:
                raise ConnectorError(f"Invalid value '{value}' for option 'properties.{key}'.") from None
    for key, instead in _JAVA_ONLY.items():
        if key in out:
            raise ConnectorError(
                f"Option 'properties.{key}' configures Java's Kafka client, which streamsql does not use "
                f"(it uses librdkafka): set {instead} instead."
            )
    jaas = out.pop("sasl.jaas.config", None)
    if jaas is not None:
        m = _JAAS_LOGIN.match(jaas)
        if m is None:
            raise ConnectorError(
                "Option 'properties.sasl.jaas.config' is supported for the PLAIN and SCRAM login modules "
                "(PlainLoginModule / ScramLoginModule with username and password) only: streamsql's Kafka client "
                "(librdkafka) has no JAAS. Set 'properties.sasl.username' / 'properties.sasl.password', or "
                "librdkafka's 'properties.sasl.kerberos.*' / 'properties.sasl.oauthbearer.*' settings."
            )
        args = {a["k"]: a["q"] if a["q"] is not None else a["v"] for a in _JAAS_ARG.finditer(m["args"])}
        for java, native in (("username", "sasl.username"), ("password", "sasl.password")):
            if java in args:
                out.setdefault(native, args[java].replace('\\"', '"'))
    return out
