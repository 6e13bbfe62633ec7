"""The Kafka source: one split per partition ('topic:partition'), all of a subtask's
partitions read together by one consumer (`KafkaGroupReader`).

A poll (`Consumer.consume(num_messages=...)`) is decoded at once: the payloads of every
record of the poll go through the value format's decoder as one binary array (JSON: one
Arrow parse of the concatenated payloads), the keys through the key format's, and the
metadata columns are built from the records' attributes. The rows are then handed out one
partition at a time (the source operator tags them with their split for per-partition
watermarks); a partition's position advances only when its rows are handed out, so the
offsets a checkpoint records are exact.

Start and stop offsets are resolved to numbers when a partition is first read (Flink's
OffsetsInitializers) and are part of the split state, so a restored job continues from
where the checkpoint was and stops where the original run would have stopped.
"""

from __future__ import annotations

import re
import time
import uuid
from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.batch import DELETE, INSERT, ROW_KIND
from runtime.connectors.base import (
    PRIMARY_KEY,
    Source,
    SourceContext,
    SplitGroupReader,
    SplitReader,
    metadata_columns,
)
from runtime.connectors.formats import MessageDecoder, format_options_view, get_format
from runtime.connectors.kafka import options as o
from runtime.connectors.kafka.offsets import parse_specific_offsets
from runtime.connectors.kafka.options import value_format
from runtime.errors import ConnectorError
from runtime.frozen import frozen_dataclass
from runtime.map_values import map_arrow_type
from runtime.types import Field

# How long one consume() waits for records when none are buffered (seconds): short, so an
# idle source returns to the executor (timers, idleness, checkpoints) quickly.
POLL_TIMEOUT_S = 0.05
# Formats that find a field by name: the value decoder is given only the columns a query reads.
_BY_NAME = ("json", "debezium-json", "canal-json", "maxwell-json", "ogg-json")
_TIMESTAMP_TYPES = ("NoTimestampType", "CreateTime", "LogAppendTime")


def client_config(options: dict[str, str]) -> dict[str, Any]:
    """librdkafka settings from the table's `properties.*` (prefix removed), without the
    keys Flink's source reads itself (`FLINK_PROPERTIES`)."""
    p = o.PROPERTIES_PREFIX
    props = {k[len(p) :]: v for k, v in options.items() if k.startswith(p) and k[len(p) :] not in o.FLINK_PROPERTIES}
    return dict(o.librdkafka_properties(props))


def split_id(topic: str, partition: int) -> str:
    return f"{topic}:{partition}"


def parse_split(split: str) -> tuple[str, int]:
    topic, _, partition = split.rpartition(":")
    return topic, int(partition)


@frozen_dataclass
class Layout:
    """Where each produced column comes from: ('value', i) / ('key', i) into the decoded
    batches, or ('meta', key)."""

    columns: tuple[tuple[str, Any], ...]
    value_fields: tuple[Field, ...]
    key_fields: tuple[Field, ...]  # named as inside the key format (prefix removed)


def plan_layout(
    schema: tuple[Field, ...], projection: list[int] | None, options: dict[str, str], upsert: bool
) -> Layout:
    meta = metadata_columns(options)
    physical = [f for f in schema if f.name not in meta]
    if upsert:
        key_names = [k for k in (options.get(PRIMARY_KEY) or "").split(",") if k]
    else:
        key_names = list(o.KEY_FIELDS.get(options) or ())
    prefix = options.get("key.fields-prefix") or ""
    except_key = o.VALUE_FIELDS_INCLUDE.get(options) == "EXCEPT_KEY"
    value_all = [f for f in physical if not (except_key and f.name in key_names)]
    key_all = [next(f for f in physical if f.name == k) for k in key_names]
    wanted = [schema[i] for i in (range(len(schema)) if projection is None else projection)]
    fmt, _ = value_format(options)
    by_name = fmt in _BY_NAME
    value_used = [f for f in value_all if not by_name or any(w.name == f.name for w in wanted)]
    if not value_used and value_all:
        value_used = value_all[:1]  # the row count still comes from the value
    cols: list[tuple[str, Any]] = []
    for f in wanted:
        if f.name in meta:
            cols.append(("meta", meta[f.name]))
        elif f.name in key_names and (upsert or not any(v.name == f.name for v in value_used)):
            # upsert: from the key even when the value holds it too (a tombstone has no value)
            cols.append(("key", key_names.index(f.name)))
        else:
            cols.append(("value", next(i for i, v in enumerate(value_used) if v.name == f.name)))
    key_fields = tuple(Field(f.name[len(prefix) :], f.type) for f in key_all)
    return Layout(tuple(cols), tuple(value_used), key_fields)


class KafkaSource(Source):
    reads_splits_together = True

    def __init__(
        self,
        options: dict[str, str],
        schema: tuple[Field, ...],
        projection: list[int] | None,
        ctx: SourceContext,
        upsert: bool = False,
    ) -> None:
        self.options = options
        self.ctx = ctx
        self.upsert = upsert
        self.schema = tuple(schema)
        self.produced_schema = tuple(self.schema[i] for i in (range(len(schema)) if projection is None else projection))
        self.layout = plan_layout(self.schema, projection, options, upsert)
        self.topics = list(o.TOPIC.get(options) or ())
        pattern = o.TOPIC_PATTERN.get(options)
        self.pattern = re.compile(pattern) if pattern else None
        self._bounded = (o.SCAN_BOUNDED_MODE.get(options) or "unbounded") != "unbounded"
        self.discovery_ms = int(o.SCAN_PARTITION_DISCOVERY.get(options) or 0)
        self._known: set[str] = set()
        self._last_discovery = 0.0
        self._admin: Any = None

    @property
    def bounded(self) -> bool:
        return self._bounded

    # ------------------------------------------------------------------ partitions
    def _list(self) -> list[str]:
        from confluent_kafka.admin import AdminClient

        if self._admin is None:
            conf = client_config(self.options)
            self._admin = AdminClient({k: v for k, v in conf.items() if k in ("bootstrap.servers",) or "." in k})
        try:
            md = self._admin.list_topics(timeout=30)
        except Exception as e:  # noqa: BLE001 - KafkaException: broker unreachable
            raise ConnectorError(
                f"Cannot list the topics of Kafka at '{self.options.get(o.BOOTSTRAP_SERVERS.key)}': {e}"
            ) from None
        out: list[tuple[str, int]] = []
        if self.pattern is not None:
            names = sorted(t for t in md.topics if self.pattern.fullmatch(t))
        else:
            names = self.topics
            missing = [t for t in names if t not in md.topics or md.topics[t].error is not None]
            if missing:
                raise ConnectorError(
                    f"Topic(s) {', '.join(repr(t) for t in missing)} of table source do not exist on Kafka "
                    f"'{self.options.get(o.BOOTSTRAP_SERVERS.key)}'."
                )
        for t in names:
            out.extend((t, p) for p in sorted(md.topics[t].partitions))
        return [split_id(t, p) for t, p in out]

    def splits(self) -> list[str]:
        found = self._list()
        self._known.update(found)
        self._last_discovery = time.monotonic()
        return found

    def discover_splits(self) -> list[str]:
        if self.bounded or self.discovery_ms <= 0:
            return []
        now = time.monotonic()
        if (now - self._last_discovery) * 1000 < self.discovery_ms:
            return []
        self._last_discovery = now
        new = [s for s in self._list() if s not in self._known]
        self._known.update(new)
        return new

    def create_reader(self, split_id: str) -> SplitReader:
        raise ConnectorError("The Kafka source reads its partitions together (create_group_reader).")

    def create_group_reader(self, split_ids: list[str]) -> SplitGroupReader:
        return KafkaGroupReader(self, split_ids)


def _decoder(
    name: str, fields: tuple[Field, ...], options: dict[str, str], prefix: str, ctx: SourceContext
) -> MessageDecoder:
    fmt = get_format(name)
    if fmt.open_decoder is None:
        raise ConnectorError(f"Format '{name}' cannot decode Kafka records yet.")
    return fmt.open_decoder(fields, format_options_view(options, prefix), ctx)


class KafkaGroupReader(SplitGroupReader):
    """One consumer over a subtask's partitions. Split state: {"offset": next offset to
    read, "stop": offset to stop before (None: unbounded)}."""

    def __init__(self, source: KafkaSource, split_ids: list[str]) -> None:
        from confluent_kafka import Consumer

        self.source = source
        opts = source.options
        self.opts = opts
        conf: dict[str, Any] = {
            # Without 'properties.group.id' Flink's consumer has no group and commits nothing
            # (KafkaSourceBuilder), naming its client 'KafkaSource-<random long>'; librdkafka
            # needs a group id, so that name is the group's: it is never joined (partitions
            # are assigned) and never committed to.
            "group.id": f"KafkaSource-{uuid.uuid4().int >> 65}",
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "enable.partition.eof": True,
            "isolation.level": "read_uncommitted",  # Kafka's (and so Flink's) default
            "auto.offset.reset": "earliest",
        }
        conf.update(client_config(opts))
        self.group_id = str(conf["group.id"])
        self.has_group = o.GROUP_ID.is_set(opts)
        self.commit_on_checkpoint = bool(o.COMMIT_OFFSETS_ON_CHECKPOINT.get(opts)) and self.has_group
        self.consumer = Consumer(conf)
        self._splits: list[str] = []
        self.start: dict[str, int] = {}
        self.stop: dict[str, int | None] = {}
        # 'timestamp' modes, applied to the records themselves (a broker's time look-up may
        # answer an earlier offset: tansu answers 0): records before `skip_ts` at the start
        # of a partition are skipped; the first record at or after `stop_ts` stops it.
        self.skip_ts: dict[str, int] = {}
        self.stop_ts: dict[str, int] = {}
        self.done: set[str] = set()
        self._unresolved: list[str] = []
        self._assigned: set[str] = set()
        self._ready: deque[tuple[str, pa.RecordBatch, int]] = deque()
        self.skipped_rows = 0
        self.current_split = None
        layout = source.layout
        vname, vprefix = value_format(opts)
        if source.upsert:
            vname, vprefix = opts.get("value.format") or "", "value."
        self.value_decoder = _decoder(vname, layout.value_fields, opts, vprefix, source.ctx)
        self.key_decoder = (
            _decoder(opts.get("key.format") or "", layout.key_fields, opts, "key.", source.ctx)
            if any(c[0] == "key" for c in layout.columns) or (source.upsert and layout.key_fields)
            else None
        )
        self.changelog = get_format(vname).changelog
        self._add(split_ids)
        self._discovered: set[str] = set()

    # ------------------------------------------------------------------ splits
    def splits(self) -> list[str]:
        """The partitions not finished, or finished but with rows still to hand out (or
        just handed out: the batch being tagged with its split)."""
        pending = {r[0] for r in self._ready} | {self.current_split}
        return [s for s in self._splits if s not in self.done or s in pending]

    def _live(self) -> list[str]:
        return [s for s in self._splits if s not in self.done]

    def add_splits(self, split_ids: list[str]) -> None:
        """Partitions found by discovery: read from their earliest offset (as Flink's
        enumerator does for partitions that appear while the job runs)."""
        self._discovered.update(split_ids)
        self._add(split_ids)

    def _add(self, split_ids: list[str]) -> None:
        for s in split_ids:
            if s not in self._splits:
                self._splits.append(s)
                self._unresolved.append(s)

    def seek(self, offsets: dict[str, Any]) -> None:
        """Resume from checkpointed split states. A state without a stop offset (recorded by
        an unbounded run) restored into a bounded source gets the stop of the current
        'scan.bounded.mode', resolved now."""
        unbounded_states = [s for s, st in offsets.items() if st.get("stop") is None and st.get("stop_ts") is None]
        for s, st in offsets.items():
            if s not in self._splits:
                self._splits.append(s)
            if s in self._unresolved:
                self._unresolved.remove(s)
            self.start[s] = int(st["offset"])
            self.stop[s] = None if st.get("stop") is None else int(st["stop"])
            for attr in ("skip_ts", "stop_ts"):
                table = getattr(self, attr)
                table.pop(s, None)
                if st.get(attr) is not None:
                    table[s] = int(st[attr])
            self._check_done(s)
        if self.source.bounded and unbounded_states:
            self._resolve_stops(unbounded_states)

    def offset(self) -> dict[str, Any]:
        self._resolve()
        out: dict[str, Any] = {}
        for s in self._splits:
            st: dict[str, Any] = {"offset": self.start[s], "stop": self.stop.get(s)}
            for attr in ("skip_ts", "stop_ts"):
                if s in getattr(self, attr):
                    st[attr] = getattr(self, attr)[s]
            out[s] = st
        return out

    def _check_done(self, s: str) -> None:
        stop = self.stop.get(s)
        if stop is not None and self.start[s] >= stop:
            self.done.add(s)

    # ------------------------------------------------------------------ offsets
    def _tps(self, splits: list[str], offsets: dict[str, int] | None = None) -> list[Any]:
        from confluent_kafka import TopicPartition

        out = []
        for s in splits:
            t, p = parse_split(s)
            out.append(TopicPartition(t, p, offsets[s]) if offsets is not None else TopicPartition(t, p))
        return out

    def _watermarks(self, s: str) -> tuple[int, int]:
        from confluent_kafka import TopicPartition

        t, p = parse_split(s)
        try:
            low, high = self.consumer.get_watermark_offsets(TopicPartition(t, p), timeout=30, cached=False)
        except Exception as e:  # noqa: BLE001 - KafkaException
            raise ConnectorError(f"Cannot read the offsets of partition {p} of topic '{t}': {e}") from None
        return int(low), int(high)

    def _ends(self, splits: list[str]) -> dict[str, int]:
        """The end offset (high watermark) of each partition, as a fetch reports it.

        The broker's ListOffsets answer is the first guess; a short-lived consumer then
        fetches from just before it until each partition reports its end (EOF): tansu
        (the test broker) answers ListOffsets with the last record *batch*'s base offset + 1,
        while a fetch's high watermark is exact (with Kafka both agree)."""
        from confluent_kafka import Consumer, KafkaError

        if not splits:
            return {}
        marks = {s: self._watermarks(s) for s in splits}
        conf = {k: v for k, v in client_config(self.opts).items() if k not in ("group.id",)}
        conf.update({"group.id": f"streamsql-probe-{uuid.uuid4().hex[:8]}", "enable.auto.commit": False})
        conf.update({"enable.partition.eof": True, "isolation.level": "read_uncommitted"})
        probe = Consumer(conf)
        try:
            start = {s: max(lo, hi - 1) for s, (lo, hi) in marks.items()}
            ends = {s: hi for s, (lo, hi) in marks.items() if hi <= lo}
            todo = [s for s in splits if s not in ends]
            if todo:
                probe.assign(self._tps(todo, start))
            deadline = time.monotonic() + 30
            while len(ends) < len(splits) and time.monotonic() < deadline:
                polled: list[Any] = probe.consume(num_messages=10000, timeout=0.2)
                for m in polled:
                    err = m.error()
                    if err is not None and err.code() == KafkaError._PARTITION_EOF:
                        s = split_id(m.topic(), m.partition())
                        ends[s] = max(int(m.offset()), marks[s][1])
            for s in splits:
                ends.setdefault(s, marks[s][1])
            return ends
        finally:
            probe.close()

    def _committed(self, splits: list[str]) -> dict[str, int | None]:
        if not self.has_group:
            raise ConnectorError("The 'group-offsets' mode needs the consumer group: set 'properties.group.id'.")
        got = self.consumer.committed(self._tps(splits), timeout=30)
        return {split_id(tp.topic, tp.partition): (tp.offset if tp.offset >= 0 else None) for tp in got}

    def _for_time(self, splits: list[str], ts: int) -> dict[str, int]:
        """The first offset at or after `ts` per partition (the end offset when none)."""
        from confluent_kafka import TopicPartition

        query = [TopicPartition(*parse_split(s), ts) for s in splits]
        got = self.consumer.offsets_for_times(query, timeout=30)
        out: dict[str, int] = {}
        past = []
        for tp in got:
            s = split_id(tp.topic, tp.partition)
            if tp.offset >= 0:
                out[s] = tp.offset
            else:
                past.append(s)
        out.update(self._ends(past))
        return out

    def _resolve(self) -> None:
        """Start and stop offsets of partitions read for the first time (not restored)."""
        if not self._unresolved:
            return
        todo, self._unresolved = self._unresolved, []
        found = [s for s in todo if s in self._discovered]
        if found:
            self.start.update({s: self._watermarks(s)[0] for s in found})
            self._resolve_stops(found)
            todo = [s for s in todo if s not in self._discovered]
            if not todo:
                return
        opts = self.opts
        mode = "earliest-offset" if self.source.upsert else o.SCAN_STARTUP_MODE.get(opts)
        reset = str(client_config(opts).get("auto.offset.reset", "none")).lower()
        starts: dict[str, int | None] = {}
        if mode == "earliest-offset":
            starts = {s: self._watermarks(s)[0] for s in todo}
        elif mode == "latest-offset":
            starts = dict(self._ends(todo))
        elif mode == "timestamp":
            ts = int(o.SCAN_STARTUP_TIMESTAMP_MILLIS.get(opts))
            starts = dict(self._for_time(todo, ts))
            self.skip_ts.update({s: ts for s in todo})
        elif mode == "specific-offsets":
            given = parse_specific_offsets(
                opts[o.SCAN_STARTUP_SPECIFIC_OFFSETS.key], o.SCAN_STARTUP_SPECIFIC_OFFSETS.key
            )
            starts = {s: given.get(parse_split(s)[1]) for s in todo}
            rest = [s for s in todo if starts[s] is None]
            if rest:  # not listed: the group's committed offset, else the reset strategy
                starts.update(self._committed(rest) if self.has_group else {s: None for s in rest})
        else:  # group-offsets
            starts = dict(self._committed(todo))
        for s in todo:
            if starts.get(s) is None:
                if mode == "group-offsets" and reset not in (
                    "earliest",
                    "smallest",
                    "beginning",
                    "latest",
                    "largest",
                    "end",
                ):
                    t, p = parse_split(s)
                    raise ConnectorError(
                        f"Undefined offset with no reset policy for partition {t}-{p}: the consumer group "
                        f"'{opts.get(o.GROUP_ID.key)}' has no committed offset. Set "
                        "'properties.auto.offset.reset' = 'earliest' or 'latest', or another 'scan.startup.mode'."
                    )
                latest = reset in ("latest", "largest", "end")
                starts[s] = self._ends([s])[s] if latest else self._watermarks(s)[0]
            self.start[s] = int(starts[s])  # type: ignore[arg-type]
        self._resolve_stops(todo)
        for s in todo:
            self._check_done(s)

    def _resolve_stops(self, todo: list[str]) -> None:
        opts = self.opts
        mode = o.SCAN_BOUNDED_MODE.get(opts)
        if mode == "unbounded":
            self.stop.update({s: None for s in todo})
        elif mode == "latest-offset":
            self.stop.update(self._ends(todo))
        elif mode == "timestamp":  # the first record at or after it, else the end offset now
            ts = int(o.SCAN_BOUNDED_TIMESTAMP_MILLIS.get(opts))
            self.stop.update(self._ends(todo))
            self.stop_ts.update({s: ts for s in todo})
        elif mode == "specific-offsets":
            given = parse_specific_offsets(
                opts[o.SCAN_BOUNDED_SPECIFIC_OFFSETS.key], o.SCAN_BOUNDED_SPECIFIC_OFFSETS.key
            )
            for s in todo:
                p = parse_split(s)[1]
                self.stop[s] = given[p] if p in given else self._watermarks(s)[0]
        else:  # group-offsets
            committed = self._committed(todo)
            ends = self._ends([s for s in todo if committed.get(s) is None])
            for s in todo:
                c = committed.get(s)
                self.stop[s] = c if c is not None else ends[s]

    def _assign(self) -> None:
        """Keep the consumer's assignment = the partitions not finished, at their positions."""
        want = [s for s in self._splits if s not in self.done]
        gone = [s for s in self._assigned if s not in want]
        if gone:
            self.consumer.incremental_unassign(self._tps(gone))
            self._assigned -= set(gone)
        new = [s for s in want if s not in self._assigned]
        if new:
            self.consumer.incremental_assign(self._tps(new, self.start))
            self._assigned |= set(new)

    # ------------------------------------------------------------------ reading
    def read(self, max_rows: int) -> pa.RecordBatch | None:
        self._resolve()
        if self.current_split is not None:  # finished once its last rows were handed out
            self._check_done(self.current_split)
        while True:
            if self._ready:
                return self._hand_out()
            if not self._live():
                if self.source.bounded:
                    return None
                # an unbounded reader without partitions (yet): nothing to read now
                self.current_split = None
                return pa.RecordBatch.from_arrays([], names=[])
            self._assign()
            msgs = self.consumer.consume(num_messages=max(1, max_rows), timeout=POLL_TIMEOUT_S)
            self._take(msgs)
            if not self._ready:
                if self.source.bounded:
                    self._check_positions()
                    if not self._live():
                        return None
                    continue
                self.current_split = None
                return pa.RecordBatch.from_arrays([], names=[])

    def _hand_out(self) -> pa.RecordBatch:
        s, batch, next_offset = self._ready.popleft()
        self.start[s] = next_offset
        self.current_split = s
        return batch

    def _check_positions(self) -> None:
        """A bounded partition whose consumer position passed its stop offset (the last
        records before it were transaction markers, which are never delivered) is done."""
        live = [s for s in self._live() if s in self._assigned and self.stop.get(s) is not None]
        if not live:
            return
        for tp in self.consumer.position(self._tps(live)):
            s = split_id(tp.topic, tp.partition)
            if tp.offset >= 0 and tp.offset >= (self.stop[s] or 0):
                self.start[s] = max(self.start[s], tp.offset)
                self.done.add(s)

    def _take(self, msgs: list[Any]) -> None:
        """Decode one poll's records into per-partition batches (`_ready`)."""
        from confluent_kafka import KafkaError

        records = []
        for m in msgs:
            err = m.error()
            if err is None:
                records.append(m)
            elif err.code() == KafkaError._PARTITION_EOF:
                s = split_id(m.topic(), m.partition())
                stop = self.stop.get(s)
                if stop is not None and m.offset() >= stop:
                    self.start[s] = max(self.start[s], m.offset())
                    self.done.add(s)
            else:
                raise ConnectorError(f"Kafka consumer error: {err.str()}")
        if not records:
            return
        splits = [split_id(m.topic(), m.partition()) for m in records]
        offsets = np.fromiter((m.offset() for m in records), dtype=np.int64, count=len(records))
        names = sorted(set(splits), key=self._splits.index)
        code = (
            np.fromiter((names.index(s) for s in splits), dtype=np.int32, count=len(records))
            if len(names) > 1
            else np.zeros(len(records), np.int32)
        )
        drop = self._time_limits(records, names, code, offsets)
        # records at or past a bounded partition's stop offset are not read
        stops = np.array(
            [self.stop.get(s) if self.stop.get(s) is not None else np.iinfo(np.int64).max for s in names],
            dtype=np.int64,
        )
        past = offsets >= stops[code]
        keep = ~past & ~drop
        if past.any():
            for i in np.unique(code[past]):
                s = names[int(i)]
                self.done.add(s)
                self.start[s] = max(self.start[s], int(stops[i]))
        order = np.argsort(code, kind="stable")
        order = order[keep[order]]
        if len(order) == 0:
            return
        recs = [records[i] for i in order]
        code, offsets = code[order], offsets[order]
        batch, src = self._decode(recs, names, code, offsets)
        # rows of one partition are contiguous (records sorted by partition; decoders keep order)
        row_code = code[src] if len(src) else np.zeros(0, np.int32)
        for i, s in enumerate(names):
            idx = np.flatnonzero(code == i)
            if len(idx) == 0:
                continue
            next_offset = int(offsets[idx[-1]]) + 1
            rows = np.flatnonzero(row_code == i)
            part = batch.slice(int(rows[0]), len(rows)) if len(rows) else batch.slice(0, 0)
            self._ready.append((s, part, next_offset))

    def _time_limits(self, records: list[Any], names: list[str], code: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Apply `skip_ts` / `stop_ts` to a poll's records; the records to drop."""
        drop = np.zeros(len(records), bool)
        if not any(s in self.skip_ts or s in self.stop_ts for s in names):
            return drop
        stamps = np.fromiter((m.timestamp()[1] for m in records), dtype=np.int64, count=len(records))
        for i, s in enumerate(names):
            sel = np.flatnonzero(code == i)  # this partition's records, in offset order
            skip = self.skip_ts.get(s)
            if skip is not None:
                hit = sel[stamps[sel] >= skip]
                if len(hit):
                    drop[sel[sel < hit[0]]] = True
                    del self.skip_ts[s]
                else:
                    drop[sel] = True
            stop = self.stop_ts.get(s)
            if stop is not None:
                hit = sel[(stamps[sel] >= stop) & ~drop[sel]]
                if len(hit):
                    current = self.stop.get(s)
                    at = int(offsets[hit[0]])
                    self.stop[s] = at if current is None else min(current, at)
                    del self.stop_ts[s]
        return drop

    def _decode(
        self, recs: list[Any], names: list[str], code: np.ndarray, offsets: np.ndarray
    ) -> tuple[pa.RecordBatch, np.ndarray]:
        """The rows of these records (partition order) and, per row, its record's index."""

        def locate(i: int) -> str:
            t, p = parse_split(names[int(code[i])])
            return f"topic '{t}', partition {p}, offset {int(offsets[i])}"

        values = pa.array([m.value() for m in recs], pa.binary())
        kinds: np.ndarray | None = None
        if self.source.upsert:
            tomb = np.asarray(values.is_null().to_numpy(zero_copy_only=False), bool)
            live = np.flatnonzero(~tomb)
            vbatch, vsrc = self.value_decoder.decode(values.take(pa.array(live)), locate_of(locate, live))
            vsrc = live[vsrc]
            # tombstones: a row of NULL values, kind DELETE; merged back in record order
            src = np.concatenate([vsrc, np.flatnonzero(tomb)])
            order = np.argsort(src, kind="stable")
            src = src[order]
            cols = [
                pa.concat_arrays([c, pa.nulls(int(tomb.sum()), c.type)]).take(pa.array(order)) for c in vbatch.columns
            ]
            vbatch = pa.RecordBatch.from_arrays(cols, schema=vbatch.schema)
            kinds = np.where(tomb[src], DELETE, INSERT).astype(np.int8)
        else:
            vbatch, src = self.value_decoder.decode(values, locate)
            if self.changelog:
                k = vbatch.schema.get_field_index(ROW_KIND)
                kinds = vbatch.column(k).to_numpy(zero_copy_only=False).astype(np.int8)
        self.skipped_rows = self.value_decoder.skipped_rows + (self.key_decoder.skipped_rows if self.key_decoder else 0)
        kbatch = None
        if self.key_decoder is not None:
            keys = pa.array([m.key() for m in recs], pa.binary())
            sel = np.unique(src)
            kb, ksrc = self.key_decoder.decode(keys.take(pa.array(sel)), locate_of(locate, sel))
            # key rows per record (one each): spread to the value rows
            at = np.full(len(recs), -1, np.int64)
            at[sel[ksrc]] = np.arange(len(ksrc))
            rows = at[src]
            if (rows < 0).any():  # a key skipped as unparsable: drop its rows too
                ok = rows >= 0
                vbatch, src, rows = vbatch.filter(pa.array(ok)), src[ok], rows[ok]
                if kinds is not None:
                    kinds = kinds[ok]
            kbatch = kb.take(pa.array(rows))
        arrays = []
        fmeta = self._format_metadata(values, src)
        for kind, ref in self.source.layout.columns:
            if kind == "value":
                arrays.append(vbatch.column(ref))
            elif kind == "key":
                assert kbatch is not None
                arrays.append(kbatch.column(ref))
            elif ref in fmeta:
                arrays.append(fmeta[ref])
            else:
                arrays.append(_metadata(ref, recs, src, names, code, offsets))
        fields = [pa.field(f.name, f.type.to_arrow()) for f in self.source.produced_schema]
        zone = self.source.ctx.time_zone
        arrays = [_conform(a, f.type, zone) for a, f in zip(arrays, fields, strict=True)]
        if kinds is not None:
            arrays.append(pa.array(kinds, pa.int8()))
            fields.append(pa.field(ROW_KIND, pa.int8(), False))
        return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields)), src

    def _format_metadata(self, values: pa.Array, src: np.ndarray) -> dict[str, pa.Array]:
        """The value format's metadata columns ('value.<key>') of the rows, read from the
        records' payloads (a tombstone's are NULL)."""
        p = o.VALUE_METADATA_PREFIX
        keys = [ref for kind, ref in self.source.layout.columns if kind == "meta" and ref.startswith(p)]
        if not keys:
            return {}
        per_record = self.value_decoder.event_metadata(values, [k[len(p) :] for k in keys])
        take = pa.array(src, pa.int64())
        return {k: a.take(take) for k, a in zip(keys, per_record, strict=True)}

    def commit(self, offsets: dict[str, Any]) -> None:
        if not self.commit_on_checkpoint or not offsets:
            return
        from confluent_kafka import KafkaException, TopicPartition

        tps = [TopicPartition(*parse_split(s), int(st["offset"])) for s, st in offsets.items()]
        try:
            self.consumer.commit(offsets=tps, asynchronous=False)
        except KafkaException:
            pass  # Flink logs and goes on: a failed commit only delays the group's lag report

    def close(self) -> None:
        try:
            self.consumer.close()
        except RuntimeError:
            pass


def locate_of(locate: Callable[[int], str], index: np.ndarray) -> Callable[[int], str]:
    """`locate` for a decoder given a subset of the records (its i is `index[i]`)."""
    return lambda i: locate(int(index[i]))


def _conform(a: pa.Array, target: pa.DataType, time_zone: str = "UTC") -> pa.Array:
    """A metadata value as its column's type. A TIMESTAMP_LTZ metadata value (the record's
    'timestamp', a format's 'ingestion-timestamp') read into a TIMESTAMP column is its wall
    clock in the session time zone, as Flink casts it."""
    if a.type == target:
        return a
    if pa.types.is_timestamp(a.type) and a.type.tz and pa.types.is_timestamp(target) and not target.tz:
        return pc.local_timestamp(a.cast(pa.timestamp(a.type.unit, tz=time_zone))).cast(target)
    try:
        return a.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return a


def _metadata(
    key: str, recs: list[Any], src: np.ndarray, names: list[str], code: np.ndarray, offsets: np.ndarray
) -> pa.Array:
    """Metadata column `key` of the rows (`src`: each row's record index)."""
    take = pa.array(src, pa.int64())
    if key == "topic":
        topics = pa.array([parse_split(s)[0] for s in names], pa.string())
        return topics.take(pa.array(code[src]))
    if key == "partition":
        parts = pa.array([parse_split(s)[1] for s in names], pa.int32())
        return parts.take(pa.array(code[src]))
    if key == "offset":
        return pa.array(offsets[src], pa.int64())
    if key in ("timestamp", "timestamp-type"):
        stamps = [m.timestamp() for m in recs]
        if key == "timestamp-type":
            return pa.array([_TIMESTAMP_TYPES[t] for t, _ in stamps], pa.string()).take(take)
        ms = pa.array([v if t else None for t, v in stamps], pa.int64())
        return ms.take(take).cast(pa.timestamp("ms", tz="UTC"))  # TIMESTAMP_LTZ(3)
    if key == "headers":
        heads = [[(k, v) for k, v in (m.headers() or [])] for m in recs]
        return pa.array(heads, map_arrow_type(pa.string(), pa.binary())).take(take)
    if key == "leader-epoch":
        epochs = [getattr(m, "leader_epoch", lambda: None)() for m in recs]
        return pa.array(epochs, pa.int32()).take(take)
    raise ConnectorError(f"Unknown Kafka metadata key '{key}'.")
