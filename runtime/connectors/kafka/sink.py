"""The sinks of the `kafka` and `upsert-kafka` connectors (confluent-kafka / librdkafka,
imported when a sink opens, never at start-up).

Records are encoded a batch at a time: the key and value formats turn the batch's columns
into one payload per row with Arrow kernels (`MessageEncoder`), metadata columns give the
records' timestamps and headers, and the partitioner their partitions; only the hand-over
to the client (`Producer.produce`) is per record.

`kafka` writes an insert-only result (or, with a changelog value format such as
`debezium-json`, every change as a change event); `upsert-kafka` writes an updating
result keyed by the PRIMARY KEY: +I/+U as the row's value, -D as a tombstone (a NULL
value), a -U dropped when a +I/+U of its key follows in the batch and else a tombstone (the
row left the result under that key), which is what Flink's upsert sink ends with. With 'sink.buffer-flush.*' the upsert sink keeps only
the last record per key between flushes.

Delivery guarantees ('sink.delivery-guarantee', Flink's names):

- `none`: records are handed to the client as they come; nothing waits for them.
- `at-least-once` (the default): as `none`, and every checkpoint waits until all records
  handed over so far are acknowledged by the broker.
- `exactly-once` (needs 'sink.transactional-id-prefix'): a two-phase-commit sink
  (runtime.checkpoint.twophase). The records written between two barriers are encoded and
  kept; the barrier hands them to the checkpoint as its committable (so nothing is lost if
  the process dies before the commit), and when the checkpoint completes they are written
  in ONE Kafka transaction of this subtask's transactional id
  `<prefix>-<subtask index>`. The transaction also commits, through
  `send_offsets_to_transaction`, a *commit marker*: the offset `<base + checkpoint id>` of
  the consumer group `<prefix>-<subtask index>` on partition 0 of the topic, which becomes
  visible atomically with the records. A commit replayed after a restore (the process
  died between the checkpoint's completion and the commit) reads the marker and skips a
  transaction already committed: exactly once. `init_transactions` at open fences a
  zombie producer of the same transactional id and aborts its open transaction, so a
  restored job re-uses and fences its ids. (librdkafka cannot resume a transaction another
  process opened, as Flink's Java producer does by reflection; keeping the records in the
  checkpoint until the commit is what makes a commit after a crash possible.)

  Every record of such a transaction carries the header `streamsql-txn` =
  `<transactional id>:<checkpoint id>:<attempt>` (attempt: a nanosecond clock reading
  taken when the transaction begins), so a reader can tell which transaction wrote it; the
  last attempt of a (transactional id, checkpoint id) is the one that committed.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.batch import DELETE, INSERT, ROW_KIND, UPDATE_AFTER, UPDATE_BEFORE, row_kinds
from runtime.checkpoint.faults import fault_point
from runtime.connectors.base import (
    PRIMARY_KEY,
    SINK_PARALLELISM,
    SUBTASK_INDEX,
    ConfigOption,
    Sink,
    SourceContext,
    TableDescription,
    metadata_columns,
)
from runtime.connectors.formats import MessageEncoder, format_changelog_mode, format_options_view, get_format
from runtime.connectors.kafka import options as o
from runtime.errors import ConnectorError
from runtime.map_values import map_keys, map_values
from runtime.types import Field

# The header naming the transaction of an exactly-once sink's record.
TXN_HEADER = "streamsql-txn"

# ---------------------------------------------------------------------- docs
SINK_DESCRIPTION = (
    "Sink: a batch's rows are encoded at once by the key and value formats (Arrow string kernels), then handed "
    "to one producer per sink subtask. The producers are idempotent, as Flink's are (the Kafka client's default), "
    "so a retried request cannot reorder a partition's records; 'properties.enable.idempotence' = 'false' "
    "turns that off. 'sink.delivery-guarantee' = 'exactly-once' keeps the rows of each "
    "checkpoint in the checkpoint and writes them in one Kafka transaction (transactional id "
    "'<sink.transactional-id-prefix>-<subtask>') when the checkpoint completes, together with a commit marker "
    "(an offset of the consumer group of the same name, committed in the same transaction) so that a commit "
    "replayed after a restore happens once; a restored job fences its previous producers. Each record of such a "
    f"transaction carries the header '{TXN_HEADER}' = '<transactional id>:<checkpoint id>:<attempt>'."
)
UPSERT_SINK_DESCRIPTION = (
    "Sink: +I/+U rows are written as the key's value, -D rows as tombstones (NULL value), a -U row is dropped "
    "when a +I/+U of its key follows in the batch and else written as a tombstone (the row left the result "
    "under that key, as in Flink); "
    "records are keyed by the PRIMARY KEY (Kafka's murmur2 partitioner keeps a key's records in order on one "
    "partition). With 'sink.buffer-flush.*' only the last record per key is sent. Delivery guarantees as the "
    "'kafka' sink."
)

# ---------------------------------------------------------------------- options
PARTITIONERS = ("default", "fixed", "round-robin")
DELIVERY_GUARANTEES = ("none", "at-least-once", "exactly-once")

SINK_PARTITIONER: ConfigOption[str] = ConfigOption(
    "sink.partitioner",
    default="default",
    description="How records are spread over the topic's partitions: 'default' (Kafka's partitioner: by the "
    "murmur2 hash of the key, records without a key spread at random), 'fixed' (each sink subtask writes to one "
    "partition, subtask index modulo the partition count) or 'round-robin' (each sink subtask cycles through "
    "the partitions; only without 'key.fields'). Flink's custom partitioner classes cannot be loaded here.",
)
SINK_DELIVERY_GUARANTEE: ConfigOption[str] = ConfigOption(
    "sink.delivery-guarantee",
    type="enum",
    default="at-least-once",
    values=DELIVERY_GUARANTEES,
    description="'none': records are sent as they come; 'at-least-once': every checkpoint waits until the "
    "broker acknowledged all records sent so far; 'exactly-once': the records between two checkpoints are "
    "written in one Kafka transaction, committed when the checkpoint completes (readers must use "
    "'isolation.level' = 'read_committed'), with a commit marker (consumer group '<prefix>-<subtask>') that "
    "makes a commit replayed after a restore happen once. Needs 'sink.transactional-id-prefix'.",
)
SINK_TRANSACTIONAL_ID_PREFIX: ConfigOption[str] = ConfigOption(
    "sink.transactional-id-prefix",
    description="Prefix of the Kafka transactional ids of an 'exactly-once' sink: subtask i uses '<prefix>-<i>' "
    "(and the consumer group of the same name for its commit markers). Must be unique per sink among the "
    "jobs writing to the cluster; a restored job re-uses and fences its ids.",
)
SINK_TRANSACTION_NAMING_STRATEGY: ConfigOption[str] = ConfigOption(
    "sink.transaction-naming-strategy",
    type="enum",
    default="DEFAULT",
    values=("DEFAULT", "INCREMENTING", "POOLING"),
    description="Accepted for Flink compatibility (Flink's Kafka connector 4.x/5.x: how an 'exactly-once' sink "
    "names its transactions). The streamsql sink always uses one transactional id per subtask, "
    "'<prefix>-<subtask>', reused for every checkpoint's transaction (as 'POOLING' keeps the broker's set of ids "
    "small), whatever the value.",
)
SINK_BUFFER_FLUSH_MAX_ROWS: ConfigOption[int] = ConfigOption(
    "sink.buffer-flush.max-rows",
    type="int",
    default="0",
    description="Buffer up to this many records before sending them, keeping only the last record per key (fewer "
    "records and tombstones for often-updated keys). '0' disables buffering; set together with "
    "'sink.buffer-flush.interval'. The buffer is also sent at every checkpoint and at the end of input.",
)
SINK_BUFFER_FLUSH_INTERVAL: ConfigOption[int] = ConfigOption(
    "sink.buffer-flush.interval",
    type="duration",
    default="0",
    description="Send the buffered records when this long has passed since the last send: checked when records "
    "arrive and by the job's idle timer while no input arrives, so a quiet stream's last records go out too. '0' "
    "disables buffering; set together with 'sink.buffer-flush.max-rows'.",
)

SINK_OPTIONS: tuple[ConfigOption[Any], ...] = (
    SINK_PARTITIONER,
    SINK_DELIVERY_GUARANTEE,
    SINK_TRANSACTIONAL_ID_PREFIX,
    SINK_TRANSACTION_NAMING_STRATEGY,
    SINK_PARALLELISM,
)
# Flink's UpsertKafkaDynamicTableFactory takes the delivery guarantee options too.
UPSERT_SINK_OPTIONS: tuple[ConfigOption[Any], ...] = (
    SINK_DELIVERY_GUARANTEE,
    SINK_TRANSACTIONAL_ID_PREFIX,
    SINK_TRANSACTION_NAMING_STRATEGY,
    SINK_PARALLELISM,
    SINK_BUFFER_FLUSH_MAX_ROWS,
    SINK_BUFFER_FLUSH_INTERVAL,
)

# Consumer-only client properties Flink users set on tables that are read and written; the
# producer leaves them out (librdkafka would warn about each).
_CONSUMER_ONLY = frozenset(
    {
        "group.id",
        "auto.offset.reset",
        "enable.auto.commit",
        "auto.commit.interval.ms",
        "isolation.level",
        "session.timeout.ms",
        "max.poll.interval.ms",
        "partition.assignment.strategy",
        "client.rack",
        "max.poll.records",
        "fetch.max.wait.ms",
        "fetch.min.bytes",
        "fetch.max.bytes",
        "max.partition.fetch.bytes",
        "heartbeat.interval.ms",
        "group.instance.id",
        "check.crcs",
    }
)
_TIMEOUT_S = 60.0


def validate_sink(t: TableDescription, upsert: bool) -> None:
    """The sink option combinations Flink refuses, with Flink's messages (planning time)."""
    opts = t.options
    if SINK_DELIVERY_GUARANTEE.get(opts) == "exactly-once" and not SINK_TRANSACTIONAL_ID_PREFIX.is_set(opts):
        raise ConnectorError(
            "sink.transactional-id-prefix must be specified when using DeliveryGuarantee.EXACTLY_ONCE."
        )
    if not upsert:
        partitioner = (opts.get(SINK_PARTITIONER.key) or "default").strip()
        if partitioner == "round-robin" and o.KEY_FIELDS.is_set(opts):
            raise ConnectorError(
                "Currently 'round-robin' partitioner only works when option 'key.fields' is not specified."
            )
        if partitioner not in PARTITIONERS:
            raise ConnectorError(
                f"Could not find and instantiate partitioner class '{partitioner}': 'sink.partitioner' takes one of "
                f"{', '.join(PARTITIONERS)} here (custom Java partitioner classes cannot be loaded)."
            )
    else:
        rows = SINK_BUFFER_FLUSH_MAX_ROWS.get(opts) or 0
        interval = SINK_BUFFER_FLUSH_INTERVAL.get(opts) or 0
        if (rows > 0) != (interval > 0):
            raise ConnectorError(
                "'sink.buffer-flush.max-rows' and 'sink.buffer-flush.interval' must be set to be greater than zero "
                "together to enable sink buffer flushing."
            )
    for key in (o.FORMAT.key, o.VALUE_FORMAT.key, o.KEY_FORMAT.key):
        name = opts.get(key)
        if name and name in o.FORMATS and get_format(name).open_encoder is None:
            raise ConnectorError(
                f"The format '{name}' cannot be written by the '{'upsert-kafka' if upsert else 'kafka'}' sink."
            )


def sink_changelog_mode(options: Mapping[str, str], primary_key: tuple[str, ...] = ()) -> str:
    """The changes a `kafka` sink can write: every kind with a changelog value format
    (debezium-json, ...), inserts only otherwise (Flink refuses an updating result then)."""
    name = options.get("value.format") or options.get("format") or ""
    return format_changelog_mode(name) if name in o.FORMATS else "I"


# ---------------------------------------------------------------------- encoding
_RECORD_SCHEMA = pa.schema(
    [
        pa.field("key", pa.binary()),
        pa.field("value", pa.binary()),
        pa.field("partition", pa.int32()),
        pa.field("timestamp", pa.int64()),
        pa.field("headers", pa.list_(pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())]))),
    ]
)


class RecordEncoder:
    """Turns a batch of the sink table's columns into Kafka records (an Arrow table of
    key, value, partition, timestamp, headers), column-wise: which columns go to the key
    and the value follows 'key.fields' (upsert: the PRIMARY KEY), 'key.fields-prefix' and
    'value.fields-include'; writable metadata columns ('timestamp', 'headers') fill the
    records' timestamp and headers."""

    def __init__(self, options: dict[str, str], schema: tuple[Field, ...], ctx: SourceContext, upsert: bool) -> None:
        self.upsert = upsert
        meta = metadata_columns(options)
        self.meta_index = {key: i for i, f in enumerate(schema) for n, key in meta.items() if f.name == n}
        physical = [i for i, f in enumerate(schema) if f.name not in meta]
        names = [f.name for f in schema]
        if upsert:
            pk = options.get(PRIMARY_KEY) or ""
            key_names = [k.strip() for k in pk.split(",") if k.strip()]
            if not key_names:
                raise ConnectorError("'upsert-kafka' tables require to define a PRIMARY KEY constraint.")
        else:
            key_names = list(o.KEY_FIELDS.get(options) or ())
        for k in key_names:
            if k not in names:
                raise ConnectorError(f"Key column '{k}' is not a column of the sink table ({', '.join(names)}).")
        self.key_index = [names.index(k) for k in key_names]
        if o.VALUE_FIELDS_INCLUDE.get(options) == "EXCEPT_KEY":
            self.value_index = [i for i in physical if i not in self.key_index]
        else:
            self.value_index = physical
        prefix = o.KEY_FIELDS_PREFIX.get(options) or ""
        key_fields = tuple(
            Field(schema[i].name[len(prefix) :] if prefix else schema[i].name, schema[i].type) for i in self.key_index
        )
        self.key_encoder: MessageEncoder | None = None
        if self.key_index:
            kf = options.get("key.format") or ""
            self.key_encoder = _encoder(kf, key_fields, format_options_view(options, "key."), ctx)
        vf, vprefix = (
            (options["value.format"], "value.") if options.get("value.format") else (options.get("format") or "", "")
        )
        self.value_changelog = get_format(vf).changelog
        self.value_encoder = _encoder(
            vf, tuple(schema[i] for i in self.value_index), format_options_view(options, vprefix), ctx
        )

    @staticmethod
    def _upsert_rows(kinds: np.ndarray, keys: pa.Array) -> np.ndarray:
        """The rows an upsert sink writes: every row but a -U whose key gets a +I/+U later
        in the batch (the new value overwrites it: Flink's planner sends no -U there). A -U
        without one (the row left the result under this key: its key columns changed, or a
        filter dropped the new row) is written as a tombstone, as Flink's upsert
        serialization writes -U and -D."""
        before = kinds == UPDATE_BEFORE
        if not before.any():
            return np.ones(len(kinds), dtype=bool)
        codes = pc.dictionary_encode(keys).indices.to_numpy(zero_copy_only=False)
        acc = (kinds == INSERT) | (kinds == UPDATE_AFTER)
        last_acc = np.full(int(codes.max()) + 1, -1, dtype=np.int64)
        np.maximum.at(last_acc, codes[acc], np.flatnonzero(acc))
        return ~(before & (last_acc[codes] > np.arange(len(kinds))))

    def encode(self, batch: pa.RecordBatch) -> pa.Table:
        """The records of `batch` (upsert: see `_upsert_rows`)."""
        kinds = row_kinds(batch) if batch.schema.get_field_index(ROW_KIND) >= 0 else None
        if kinds is not None and self.upsert and self.key_encoder is not None:
            keep = self._upsert_rows(kinds, self.key_encoder.encode(_select(batch, self.key_index)))
            if not keep.all():
                batch = batch.filter(pa.array(keep))
                kinds = kinds[keep]
        elif kinds is not None and not self.value_changelog:
            if (kinds != INSERT).any():  # (+U alone is an update too: -U may have been left out)
                raise ConnectorError(
                    "The 'kafka' sink with an insert-only value format got update/delete changes: use "
                    "'upsert-kafka' (with a PRIMARY KEY) or a changelog format such as 'debezium-json'."
                )
        n = batch.num_rows
        keys: pa.Array = pa.nulls(n, pa.binary())
        if self.key_encoder is not None:
            keys = self.key_encoder.encode(_select(batch, self.key_index))
        vbatch = _select(batch, self.value_index)
        if self.value_changelog and kinds is not None:
            vbatch = pa.RecordBatch.from_arrays(
                [*vbatch.columns, pa.array(kinds, pa.int8())], names=[*vbatch.schema.names, ROW_KIND]
            )
        values = self.value_encoder.encode(vbatch)
        if self.upsert and kinds is not None:
            gone = (kinds == DELETE) | (kinds == UPDATE_BEFORE)
            values = pc.if_else(pa.array(gone), pa.scalar(None, pa.binary()), values)
        ts: pa.Array = pa.nulls(n, pa.int64())
        if "timestamp" in self.meta_index:
            col = batch.column(self.meta_index["timestamp"])
            ts = pc.cast(col.cast(pa.timestamp("ms")) if pa.types.is_timestamp(col.type) else col, pa.int64())
        headers: pa.Array = pa.nulls(n, _RECORD_SCHEMA.field("headers").type)
        if "headers" in self.meta_index:
            headers = _headers(batch.column(self.meta_index["headers"]))
        return pa.Table.from_arrays(
            [keys.cast(pa.binary()), values.cast(pa.binary()), pa.nulls(n, pa.int32()), ts, headers],
            schema=_RECORD_SCHEMA,
        )


def _encoder(name: str, fields: tuple[Field, ...], options: dict[str, str], ctx: SourceContext) -> MessageEncoder:
    fmt = get_format(name)
    if fmt.open_encoder is None:
        raise ConnectorError(f"The format '{name}' cannot be written to Kafka records.")
    return fmt.open_encoder(fields, options, ctx)


def _select(batch: pa.RecordBatch, index: list[int]) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([batch.column(i) for i in index], names=[batch.schema.names[i] for i in index])


def _headers(col: pa.Array) -> pa.Array:
    """A MAP<STRING, BYTES> column as the records' header lists."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    items = pa.StructArray.from_arrays(
        [map_keys(col).cast(pa.string()), map_values(col).cast(pa.binary())], names=["key", "value"]
    )
    return pa.ListArray.from_arrays(col.offsets, items, mask=col.is_null())


def reduce_by_key(records: pa.Table) -> pa.Table:
    """The last record per key, in the order of those last records (upsert buffering)."""
    if records.num_rows < 2:
        return records
    pos = pa.array(np.arange(records.num_rows, dtype=np.int64))
    keyed = pa.table({"key": records.column("key"), "pos": pos})
    last = keyed.group_by("key", use_threads=False).aggregate([("pos", "max")])
    return records.take(pa.array(np.sort(last.column("pos_max").to_numpy())))


# ---------------------------------------------------------------------- client helpers
def client_config(options: Mapping[str, str]) -> dict[str, str]:
    """The `properties.*` options as librdkafka settings (prefix removed), without the keys
    Flink reads itself and the consumer-only ones."""
    out = {}
    for k, v in options.items():
        if k.startswith(o.PROPERTIES_PREFIX):
            name = k[len(o.PROPERTIES_PREFIX) :]
            if name not in o.FLINK_PROPERTIES and name not in _CONSUMER_ONLY:
                out[name] = v
    return o.librdkafka_properties(out)


def _client_error(e: Exception, what: str) -> ConnectorError:
    return ConnectorError(f"Kafka sink: {what} failed: {e}")


def _retry(poll: Any, produce: Any, *args: Any, **kwargs: Any) -> None:
    """Produce once the client's full queue has room (polling lets it send)."""
    while True:
        poll(0.05)
        try:
            produce(*args, **kwargs)
            return
        except BufferError:
            continue


class KafkaSink(Sink):
    """The `none` / `at-least-once` sink: records are produced as batches arrive (after
    the upsert buffer, when enabled); `flush` waits for the broker's acknowledgements."""

    def __init__(self, options: dict[str, str], schema: tuple[Field, ...], ctx: SourceContext, upsert: bool) -> None:
        self.options = options
        self.ctx = ctx
        self.upsert = upsert
        topics = o.TOPIC.get(options) or ()
        if len(topics) != 1:
            raise ConnectorError(f"The Kafka sink writes to one 'topic', but got {len(topics)}: {';'.join(topics)}.")
        self.topic = topics[0]
        self.encoder = RecordEncoder(options, schema, ctx, upsert)
        self.subtask = int(ctx.config.get(SUBTASK_INDEX) or 0)
        self.partitioner = "default" if upsert else (options.get(SINK_PARTITIONER.key) or "default").strip()
        self.buffer_rows = (SINK_BUFFER_FLUSH_MAX_ROWS.get(options) or 0) if upsert else 0
        self.buffer_ms = (SINK_BUFFER_FLUSH_INTERVAL.get(options) or 0) if upsert else 0
        self._buffer: list[pa.Table] = []
        self._buffered = 0
        self._last_send = time.monotonic()
        self._rr = self.subtask  # round-robin position
        self._partitions = 0
        self._errors: list[str] = []
        self.producer: Any = None

    # ------------------------------------------------------------------ client
    def _config(self) -> dict[str, Any]:
        # idempotent, as Flink's producer is (the Kafka client's default since 3.0): a retried
        # request cannot land after a later one, so a key's tombstone and its next value stay
        # in order (an upsert topic's compacted view would otherwise lose the key)
        conf: dict[str, Any] = {
            "partitioner": "murmur2_random",
            "delivery.report.only.error": True,
            "enable.idempotence": True,
        }
        conf.update(client_config(self.options))
        return conf

    def _new_producer(self, extra: dict[str, Any] | None = None) -> Any:
        from confluent_kafka import KafkaException, Producer

        conf = {**self._config(), **(extra or {})}
        try:
            return Producer({**conf, "on_delivery": self._on_delivery})
        except KafkaException as e:
            raise ConnectorError(f"Invalid Kafka client 'properties.*' of the sink: {e}") from None

    def _on_delivery(self, err: Any, msg: Any) -> None:
        if err is not None:
            self._errors.append(f"{err} (topic '{msg.topic()}', partition {msg.partition()})")

    def _check_errors(self) -> None:
        if self._errors:
            first, n = self._errors[0], len(self._errors)
            self._errors = []
            raise ConnectorError(f"Kafka sink: {n} record(s) could not be written to topic '{self.topic}': {first}")

    def open(self) -> None:
        self.producer = self._new_producer()
        if self.partitioner in ("fixed", "round-robin"):
            self._partitions = self._partition_count()

    def _partition_count(self) -> int:
        try:
            md = self.producer.list_topics(self.topic, timeout=_TIMEOUT_S)
        except Exception as e:  # noqa: BLE001 - librdkafka's KafkaException, reported with the topic
            raise _client_error(e, f"reading the partitions of topic '{self.topic}'") from None
        t = md.topics.get(self.topic)
        if t is None or t.error is not None or not t.partitions:
            raise ConnectorError(f"Kafka sink: topic '{self.topic}' does not exist or has no partitions.")
        return len(t.partitions)

    # ------------------------------------------------------------------ records
    def _assign_partitions(self, records: pa.Table) -> pa.Table:
        n = records.num_rows
        if self.partitioner == "fixed":
            parts = pa.array(np.full(n, self.subtask % self._partitions, dtype=np.int32))
        elif self.partitioner == "round-robin":
            parts = pa.array(((self._rr + np.arange(n)) % self._partitions).astype(np.int32))
            self._rr = (self._rr + n) % self._partitions
        else:
            return records
        return records.set_column(2, "partition", parts)

    def _produce(self, records: pa.Table, txn_header: tuple[str, bytes] | None = None) -> None:
        """Hand `records` to the client (the one per-record step)."""
        if records.num_rows == 0:
            return
        records = self._assign_partitions(records)
        keys = records.column("key").to_pylist()
        values = records.column("value").to_pylist()
        produce, poll, topic = self.producer.produce, self.producer.poll, self.topic
        n = records.num_rows
        plain = all(records.column(c).null_count == n for c in ("partition", "timestamp", "headers"))
        if plain and txn_header is None:  # the common case: key and value only
            for k, v in zip(keys, values, strict=True):
                try:
                    produce(topic, v, k)
                except BufferError:  # the client's queue is full: let it send, then retry
                    _retry(poll, produce, topic, v, k)
        elif plain:  # an exactly-once transaction: one header list for all records
            same = [txn_header]
            for k, v in zip(keys, values, strict=True):
                try:
                    produce(topic, v, k, headers=same)
                except BufferError:
                    _retry(poll, produce, topic, v, k, headers=same)
        else:
            parts = records.column("partition").to_pylist()
            stamps = records.column("timestamp").to_pylist()
            heads = records.column("headers").to_pylist()
            for k, v, p, ts, h in zip(keys, values, parts, stamps, heads, strict=True):
                headers = [(x["key"], x["value"]) for x in h] if h else None
                if txn_header is not None:
                    headers = [*(headers or ()), txn_header]
                kwargs: dict[str, Any] = {}
                if p is not None:
                    kwargs["partition"] = p
                if ts is not None:
                    kwargs["timestamp"] = ts
                if headers:
                    kwargs["headers"] = headers
                try:
                    produce(topic, v, k, **kwargs)
                except BufferError:
                    _retry(poll, produce, topic, v, k, **kwargs)
        poll(0)
        self._check_errors()

    def write(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows == 0:
            return
        records = self.encoder.encode(batch)
        if not self.buffer_rows:
            self._produce(records)
            return
        self._buffer.append(records)
        self._buffered += records.num_rows
        if self._buffered >= self.buffer_rows or self._due():
            self._send_buffer()

    def _due(self) -> bool:
        return (time.monotonic() - self._last_send) * 1000 >= self.buffer_ms

    def on_timer(self) -> None:
        """'sink.buffer-flush.interval' elapsed while no record arrived: send the buffer."""
        if self.producer is not None and self.buffer_rows and self._buffered and self._due():
            self._send_buffer()
            self.producer.poll(0)
            self._check_errors()

    def _take_buffer(self) -> pa.Table:
        records = pa.concat_tables(self._buffer) if self._buffer else _RECORD_SCHEMA.empty_table()
        self._buffer, self._buffered = [], 0
        self._last_send = time.monotonic()
        return reduce_by_key(records) if self.buffer_rows else records

    def _send_buffer(self) -> None:
        self._produce(self._take_buffer())

    def flush(self) -> None:
        if self.producer is None:
            return
        self._send_buffer()
        remaining = self.producer.flush(_TIMEOUT_S)
        if remaining:
            raise ConnectorError(
                f"Kafka sink: {remaining} record(s) were not acknowledged by the broker within {_TIMEOUT_S:.0f} s."
            )
        self._check_errors()

    def close(self) -> None:
        if self.producer is not None:
            try:
                self.flush()
            finally:
                self.producer = None


class TransactionalKafkaSink(KafkaSink):
    """The `exactly-once` sink (see the module docstring): records are kept per checkpoint
    and written with a commit marker in one transaction when the checkpoint completes."""

    def __init__(self, options: dict[str, str], schema: tuple[Field, ...], ctx: SourceContext, upsert: bool) -> None:
        super().__init__(options, schema, ctx, upsert)
        prefix = SINK_TRANSACTIONAL_ID_PREFIX.get(options)
        if not prefix:
            raise ConnectorError(
                "sink.transactional-id-prefix must be specified when using DeliveryGuarantee.EXACTLY_ONCE."
            )
        self.prefix = prefix
        self.tid = f"{prefix}-{self.subtask}"
        self.deferred_commit = False
        self.base = 0  # commit marker of checkpoint n: base + n (snapshotted)
        self.floor = -1  # the marker when this run started: new markers must exceed it
        self._markers: dict[str, Any] = {}  # group -> consumer (group metadata, committed marker)

    def open(self) -> None:
        self.producer = self._transactional_producer(self.tid)
        if self.partitioner in ("fixed", "round-robin"):
            self._partitions = self._partition_count()
        self.floor = self._marker(self.tid)

    def _transactional_producer(self, tid: str) -> Any:
        """A producer of transactional id `tid`, initialized: a zombie of the same id is
        fenced and its open transaction aborted."""
        producer = self._new_producer({"transactional.id": tid})
        try:
            producer.init_transactions(_TIMEOUT_S)
        except Exception as e:  # noqa: BLE001 - librdkafka's KafkaException, reported with the id
            raise _client_error(e, f"initializing transactional id '{tid}'") from None
        return producer

    def _consumer(self, group: str) -> Any:
        c = self._markers.get(group)
        if c is None:
            from confluent_kafka import Consumer

            conf = {
                k: v
                for k, v in client_config(self.options).items()
                if k in ("bootstrap.servers",) or k.startswith(("security.", "sasl.", "ssl."))
            }
            c = self._markers[group] = Consumer({**conf, "group.id": group, "enable.auto.commit": False})
        return c

    def _marker(self, group: str) -> int:
        """The commit marker of `group`: the last committed transaction's number (-1: none)."""
        from confluent_kafka import TopicPartition

        try:
            (tp,) = self._consumer(group).committed([TopicPartition(self.topic, 0)], timeout=_TIMEOUT_S)
        except Exception as e:  # noqa: BLE001 - librdkafka's KafkaException, reported with the group
            raise _client_error(e, f"reading the commit marker of group '{group}'") from None
        return int(tp.offset) if tp.offset is not None and tp.offset >= 0 else -1

    # ------------------------------------------------------------------ writing
    def write(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows:
            self._buffer.append(self.encoder.encode(batch))

    def on_timer(self) -> None:
        """Nothing is sent between checkpoints: the records wait for their transaction."""

    def flush(self) -> None:
        """Without checkpoints: what was written so far, in one transaction (no marker)."""
        if self.producer is not None and self._buffer:
            self._transaction(self._take_buffer(), None)

    def close(self) -> None:
        try:
            if self.producer is not None and not self.deferred_commit:
                self.flush()
        finally:
            self._release()

    def abort(self) -> None:
        self._buffer, self._buffered = [], 0
        self._release()

    def _release(self) -> None:
        for c in self._markers.values():
            c.close()
        self._markers = {}
        self.producer = None  # an open transaction is aborted by the next init_transactions

    # ------------------------------------------------------------------ two-phase commit
    def prepare_commit(self, checkpoint_id: int) -> dict[str, Any]:
        if self.base + checkpoint_id <= self.floor:  # a fresh job, or restored from an older checkpoint
            self.base = self.floor + 1 - checkpoint_id
        return {"group": self.tid, "marker": self.base + checkpoint_id, "txn": f"{self.tid}:{checkpoint_id}",
                "records": self._take_buffer()}  # fmt: skip

    def commit(self, committables: list[dict[str, Any]]) -> None:
        for c in committables:
            if self._marker(c["group"]) >= c["marker"]:
                continue  # committed before the restore
            self._transaction(c["records"], c)

    def _transaction(self, records: pa.Table, committable: dict[str, Any] | None) -> None:
        from confluent_kafka import TopicPartition

        p = self.producer
        txn = committable["txn"] if committable else f"{self.tid}:-"
        try:
            p.begin_transaction()
            self._produce(records, (TXN_HEADER, f"{txn}:{time.time_ns()}".encode()))
            fault_point("transaction")
            if committable is not None:
                group = committable["group"]
                marker = [TopicPartition(self.topic, 0, committable["marker"])]
                p.send_offsets_to_transaction(marker, self._consumer(group).consumer_group_metadata(), _TIMEOUT_S)
            p.commit_transaction(_TIMEOUT_S)
        except ConnectorError:
            raise
        except Exception as e:  # noqa: BLE001 - librdkafka's KafkaException, reported with the transaction
            raise _client_error(e, f"the transaction '{txn}' of transactional id '{self.tid}'") from None
        self._check_errors()

    def snapshot_state(self) -> dict[str, Any]:
        return {"tid": self.tid, "base": self.base}

    def restore_state(self, state: dict[str, Any] | None, committables: list[dict[str, Any]]) -> None:
        if state and state.get("tid") == self.tid:
            self.base = int(state["base"])
        # After a rescale, pending work of subtasks that no longer exist comes here: fence
        # their transactional ids so no transaction of theirs stays open.
        for tid in sorted({c["group"] for c in committables} - {self.tid}):
            self._transactional_producer(tid)
        self.commit(committables)
        self.floor = self._marker(self.tid)


def create_sink(options: dict[str, str], schema: tuple[Field, ...], ctx: SourceContext) -> Sink:
    return _create(options, schema, ctx, upsert=False)


def create_upsert_sink(options: dict[str, str], schema: tuple[Field, ...], ctx: SourceContext) -> Sink:
    return _create(options, schema, ctx, upsert=True)


def _create(options: dict[str, str], schema: tuple[Field, ...], ctx: SourceContext, upsert: bool) -> Sink:
    if SINK_DELIVERY_GUARANTEE.get(options) == "exactly-once":
        return TransactionalKafkaSink(options, schema, ctx, upsert)
    return KafkaSink(options, schema, ctx, upsert)
