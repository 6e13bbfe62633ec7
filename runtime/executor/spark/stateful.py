"""streamsql's own runtime operators inside Spark Structured Streaming (docs/spark.md).

STREAMING mode on Spark runs every operator that is not a plain projection, union or
exchange through this module, so the Spark runner computes exactly what the local runner
computes (retractions, timers, Top-N, joins over updates, MATCH_RECOGNIZE ...):

- **Packed edges.** The rows entering an operator are packed per Arrow batch (`Packer`,
  `mapInArrow`): each row's key group is computed with the parallel executor's hash
  (`runtime.state.keygroups.key_groups_of_rows` on the keys of the Exchange in front, over
  `pipeline.max-parallelism` groups), and the rows of one key group become one Spark row
  `(bucket, seq, input, payload)` whose payload is an Arrow IPC stream in the runtime's own
  layout (data columns + `__op`). So no value goes through pandas, and `seq` (the task's
  partition and the batch's position) keeps the order the rows had upstream.
- **Stateful operators** (`StreamsqlProcessor`): `groupBy(bucket).transformWithStateInPandas`
  with one processor call per key group and micro-batch. The call restores the operator for
  its key group (from a worker-local cache when Spark's state says it is current, else from
  Spark's state store), feeds it the payloads in `seq` order (`process_batch`, input 0/1 of
  a two-input operator from the `input` column), calls `on_watermark` when Spark's event
  time watermark advanced (timers at watermark + 1 re-arm every key group that holds
  state), emits each output batch as one payload, and saves the state incrementally
  (slot_store.py): one MapState entry per key the call changed for operators whose keyed
  state is per-slot values; the rest (or a "custom" operator's whole snapshot), in the state
  format, cut into fixed-size chunks of which only those whose bytes changed are written
  (plus one ValueState with the version, watermark and chunk count). Ties the local runner
  breaks by arrival order fail the job (ties.py).
- **Stateless operators** (`StatelessRunner`: Expand, Correlate, WindowTableFunction, local
  pre-aggregation ...): `mapInArrow` running the runtime operator over each Arrow batch.
- The end-of-input row (year 9999, translate.py) moves Spark's watermark past every timer;
  the processor then sends MAX_WATERMARK and `end_input`, as the local runner does at the
  end of a bounded input.

PySpark is imported lazily; the functions shipped to Spark's Python workers are plain
picklable objects holding the JobGraph node and configuration.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from runtime.batch import (
    MAX_WATERMARK,
    MIN_WATERMARK,
    ROW_KIND,
    ROW_WATERMARK,
    data_width,
    row_kinds,
)
from runtime.errors import JobError

if TYPE_CHECKING:
    from runtime.graph import Node
    from runtime.types import Field

# One Spark row per key group and Arrow batch on a packed edge.
BUCKET, SEQ, INPUT, PAYLOAD, EVENT_TIME = "__bucket", "__seq", "__input", "__payload", "__et"
# On a packed row: the ordered upstream its rows come from (`origin`), NULL when the rows'
# order is not the one the local runner sees (they passed through another processor).
ORIGIN = "__src"
# On the rows a processor emits (and the edges they flow through to the next processor): the
# processor's event-time watermark before it emitted them. Spark gives every stateful operator
# of a micro-batch the same watermark W, and an upstream processor's rows fired by W (a window
# closing) reach the downstream processor in that same micro-batch; Flink forwards W only after
# those rows, so the downstream processor applies the rows stamped below W before it advances
# to W, and the others after. Not part of a payload: operators never see it.
BEFORE_WM = "__bw"
# Snapshot bytes per MapState entry: a batch rewrites only the chunks whose bytes changed.
CHUNK_BYTES = 1 << 16
# Watermarks at or past this instant (ms) come from the end-of-input row: the input ended.
END_WATERMARK_MS = 253402214400000  # 9999-12-31 00:00:00 UTC
# The end-of-input row's rowtime (Spark microseconds: 9999-12-31 23:59:59 UTC, translate.py).
END_TS_MICROS = 253402300799_000000
# Spark's rows for one processor call carry their partition in the top bits of `seq`.
_SEQ_SHIFT = 40
# An origin is (micro-batch << _ORIGIN_SHIFT) | partition: one task of one micro-batch.
_ORIGIN_SHIFT = 24
# A key group's recorded origin once its rows came from more than one (or an unknown) one.
MIXED = -1


# ---------------------------------------------------------------------- Arrow layouts
def encode(batch: pa.RecordBatch) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as w:
        w.write_batch(batch)
    return bytes(sink.getvalue().to_pybytes())


def decode(payload: bytes) -> pa.RecordBatch:
    with pa.ipc.open_stream(pa.py_buffer(payload)) as r:
        batches = list(r)
    if len(batches) == 1:
        return batches[0]
    return pa.Table.from_batches(batches).combine_chunks().to_batches()[0]


def layout_batch(batch: pa.RecordBatch, fields: Sequence[Field]) -> pa.RecordBatch:
    """Spark's Arrow columns `c0..`, `__op` (and `__wm`) as a runtime batch of `fields`
    with the same system columns (a NULL `__wm`: a row of an input without a watermark)."""
    from runtime.executor.spark.types import to_layout

    n = len(fields)
    table = pa.Table.from_batches([batch.select(list(range(n)))]) if n else pa.table({})
    cols = to_layout(table, tuple(fields)) if n else []
    idx = batch.schema.get_field_index(ROW_KIND)
    kinds = batch.column(idx).cast(pa.int8()).fill_null(0) if idx >= 0 else pa.array(np.zeros(batch.num_rows, np.int8))
    names = [f.name for f in fields] + [ROW_KIND]
    arrays = [*cols, kinds]
    w = batch.schema.get_field_index(ROW_WATERMARK)
    if w >= 0:
        arrays.append(batch.column(w).cast(pa.int64()).fill_null(MIN_WATERMARK))
        names.append(ROW_WATERMARK)
    return pa.RecordBatch.from_arrays(arrays, names=names)


def spark_arrow_types(fields: Sequence[Field]) -> list[pa.DataType]:
    """The Arrow types Spark expects for the Spark types of `fields`."""
    from pyspark.sql.pandas.types import to_arrow_type

    from runtime.executor.spark.types import spark_type

    return [to_arrow_type(spark_type(f.type), timezone="UTC") for f in fields]


def to_spark_column(col: pa.Array, target: pa.DataType) -> pa.Array:
    """A runtime column in Spark's Arrow type (timestamps as UTC microseconds; a MAP as
    Spark's Arrow map, which cannot hold a NULL key: runtime/map_values.py)."""
    if col.type == target:
        return col
    if pa.types.is_map(target) and not pa.types.is_map(col.type):
        from runtime.map_values import as_arrow_map

        col = as_arrow_map(col, "the Spark runner")
    if pa.types.is_timestamp(col.type) and pa.types.is_timestamp(target):
        factor = {"s": 1_000_000, "ms": 1_000, "us": 1, "ns": 1}[col.type.unit]
        raw = col.cast(pa.int64())
        if col.type.unit == "ns":
            raw = pa.compute.divide(raw, 1000)
        elif factor != 1:
            raw = pa.compute.multiply(raw, factor)
        return raw.cast(pa.timestamp("us", tz=target.tz))
    if pa.types.is_null(col.type):
        return pa.nulls(len(col), target)
    return col.cast(target, safe=False)


def spark_batch(
    batch: pa.RecordBatch, targets: Sequence[pa.DataType], names: Sequence[str], watermark: bool = False
) -> pa.RecordBatch:
    """A runtime batch (data columns + optional `__op` / `__wm`) as Spark's `c0..`, `__op`
    (and, with `watermark`, `__wm`: NULL where the operator made new rows) columns."""
    n = data_width(batch)
    cols = [to_spark_column(batch.column(i), t) for i, t in zip(range(n), targets, strict=True)]
    cols.append(pa.array(row_kinds(batch), type=pa.int8()))
    out_names = [*names, ROW_KIND]
    if watermark:
        w = batch.schema.get_field_index(ROW_WATERMARK)
        cols.append(batch.column(w).cast(pa.int64()) if w >= 0 else pa.nulls(batch.num_rows, pa.int64()))
        out_names.append(ROW_WATERMARK)
    return pa.RecordBatch.from_arrays(cols, names=out_names)


def _partition() -> int:
    from pyspark import TaskContext

    ctx = TaskContext.get()
    return int(ctx.partitionId()) if ctx is not None else 0


def origin() -> int | None:
    """The task this code runs in, as an origin: its micro-batch and partition (None outside
    a streaming task). One file source partition is read by one task in file order, the order
    the local runner reads it in, and a file is read in one micro-batch."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    batch = ctx.getLocalProperty("streaming.sql.batchId") if ctx is not None else None
    if ctx is None or batch is None:
        return None
    return (int(batch) << _ORIGIN_SHIFT) | int(ctx.partitionId())


# ---------------------------------------------------------------------- packing
def _before_watermarks(rb: pa.RecordBatch) -> np.ndarray | None:
    """The `__bw` stamps of Spark's Arrow batch `rb` (None: no stamps; a NULL is MAX: after)."""
    idx = rb.schema.get_field_index(BEFORE_WM)
    if idx < 0:
        return None
    col = rb.column(idx)
    if col.null_count == len(col):
        return None
    return np.asarray(col.cast(pa.int64()).fill_null(MAX_WATERMARK).to_numpy(zero_copy_only=False), dtype=np.int64)


def _with_before(batch: pa.RecordBatch, before: pa.Array) -> pa.RecordBatch:
    """Spark's Arrow batch `batch` with the `__bw` column `before` (replaced or appended)."""
    idx = batch.schema.get_field_index(BEFORE_WM)
    if idx >= 0:
        return batch.set_column(idx, BEFORE_WM, before)
    return batch.append_column(BEFORE_WM, before)


class Packer:
    """mapInArrow function: rows of input `input_index` → one packed row per key group.

    With `ordered` (streaming.ordered_input: the rows come straight from sources, each task
    reading in the local runner's order), each packed row names its task (`origin`): the
    processor skips the arrival-order tie checks for key groups whose rows all came from one."""

    def __init__(
        self,
        fields: Sequence[Field],
        keys: Sequence[int],
        input_index: int,
        max_parallelism: int,
        ordered: bool = False,
    ) -> None:
        self.fields = tuple(fields)
        self.keys = tuple(keys)
        self.input_index = input_index
        self.max_parallelism = max_parallelism
        self.ordered = ordered

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from runtime.state.keygroups import key_groups_of_rows

        base = _partition() << _SEQ_SHIFT
        source = origin() if self.ordered else None
        count = 0
        for rb in batches:
            if not rb.num_rows:
                continue
            batch = layout_batch(rb, self.fields)
            n = batch.num_rows
            if self.keys:
                groups = key_groups_of_rows([batch.column(i) for i in self.keys], n, self.max_parallelism)
            else:
                groups = np.zeros(n, dtype=np.int32)
            before = _before_watermarks(rb)
            # Rows of one key group emitted before and after an upstream watermark go apart.
            order = np.lexsort((before, groups)) if before is not None else np.argsort(groups, kind="stable")
            sorted_groups = groups[order]
            cut = sorted_groups[1:] != sorted_groups[:-1]
            if before is not None:
                cut |= before[order][1:] != before[order][:-1]
            starts = np.flatnonzero(np.r_[True, cut])
            ends = np.r_[starts[1:], n]
            buckets, seqs, payloads = [], [], []
            for s, e in zip(starts, ends, strict=True):  # one iteration per key group in the batch
                buckets.append(int(sorted_groups[s]))
                seqs.append(base + count)
                count += 1
                payloads.append(encode(batch.take(pa.array(order[s:e]))))
            befores = pa.nulls(len(buckets), pa.int64()) if before is None else pa.array(before[order][starts])
            yield pa.RecordBatch.from_arrays(
                [
                    pa.array(buckets, pa.int32()),
                    pa.array(seqs, pa.int64()),
                    pa.array([self.input_index] * len(buckets), pa.int8()),
                    pa.array(payloads, pa.binary()),
                    befores,
                    pa.array([source] * len(buckets), pa.int64()),
                ],
                names=[BUCKET, SEQ, INPUT, PAYLOAD, BEFORE_WM, ORIGIN],
            )


class Unpacker:
    """mapInArrow function: a processor's payload rows → rows `c0..`, `__op` in Spark's types."""

    def __init__(self, fields: Sequence[Field], event_time: bool = False) -> None:
        self.fields = tuple(fields)
        self.event_time = event_time  # the rows carry `__bw` (BEFORE_WM)

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        targets = spark_arrow_types(self.fields)
        names = [f"c{i}" for i in range(len(self.fields))]
        for rb in batches:
            befores = rb.column(BEFORE_WM).to_pylist() if self.event_time else None
            for i, payload in enumerate(rb.column(PAYLOAD).to_pylist()):  # one per emitted batch
                out = spark_batch(decode(payload), targets, names)
                if befores is not None:
                    out = _with_before(out, pa.array([befores[i]] * out.num_rows, pa.int64()))
                yield out


# ---------------------------------------------------------------------- operators
def _operator(node: Node, config: dict[str, str], input_modes: Sequence[str]) -> Any:
    from runtime.config.core import session_time_zone
    from runtime.operators.base import Metrics, OperatorContext, create_operator
    from runtime.state import create_backend
    from runtime.state.options import STATE_BACKEND

    cfg = {**config, STATE_BACKEND.key: "hashmap"}
    ctx = OperatorContext(
        mode="streaming",
        config=cfg,
        time_zone=session_time_zone(cfg),
        metrics=Metrics(),
        state=create_backend(cfg),
        checkpointing=True,
    )
    op = create_operator(node, ctx)
    op.input_changelog_modes = list(input_modes)
    op.open()
    return op


def _without_end_row(rb: pa.RecordBatch, rowtime: int) -> pa.RecordBatch:
    """`rb` without the end-of-input row (its rowtime column at END_TS_MICROS)."""
    t = rb.column(rowtime)
    if not rb.num_rows or t.null_count == len(t):
        return rb
    keep = pa.compute.not_equal(t.cast(pa.int64()), pa.scalar(END_TS_MICROS, pa.int64()))
    return rb.filter(pa.compute.fill_null(keep, True))


class StatelessRunner:
    """mapInArrow function running a stateless runtime operator over each Arrow batch."""

    def __init__(
        self,
        node: Node,
        in_fields: Sequence[Field],
        config: dict[str, str],
        input_mode: str,
        keep_watermark: bool = False,
        drop_end: int | None = None,
        keep_before: bool = False,
    ) -> None:
        self.node = node
        self.in_fields = tuple(in_fields)
        self.config = dict(config)
        self.input_mode = input_mode
        self.keep_watermark = keep_watermark
        # The rowtime column whose end-of-input row (translate.py) is dropped before the operator.
        self.drop_end = drop_end
        # The input carries `__bw` (BEFORE_WM), and so does the output.
        self.keep_before = keep_before

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from runtime.operators.base import Output

        op = _operator(self.node, self.config, [self.input_mode])
        targets = spark_arrow_types(self.node.schema)
        names = [f"c{i}" for i in range(len(self.node.schema))]
        out = Output()
        try:
            for rb in batches:
                if self.drop_end is not None:
                    rb = _without_end_row(rb, self.drop_end)
                if not rb.num_rows:
                    continue
                before = _before_watermarks(rb) if self.keep_before else None
                if before is None:
                    op.process_batch(layout_batch(rb, self.in_fields), 0, out)
                    for b in out.drain()[0]:
                        yield self._out(spark_batch(b, targets, names, self.keep_watermark))
                    continue
                # Runs of rows with one `__bw` stamp keep it (a buffering operator flushes first).
                starts = np.flatnonzero(np.r_[True, before[1:] != before[:-1]])
                for s, e in zip(starts, np.r_[starts[1:], rb.num_rows], strict=True):
                    op.process_batch(layout_batch(rb.slice(s, e - s), self.in_fields), 0, out)
                    op.prepare_snapshot_pre_barrier(0, out)
                    stamp = pa.scalar(int(before[s]), pa.int64())
                    for b in out.drain()[0]:
                        sb = spark_batch(b, targets, names, self.keep_watermark)
                        yield _with_before(sb, pa.array([stamp.as_py()] * sb.num_rows, pa.int64()))
            op.prepare_snapshot_pre_barrier(0, out)  # what a buffering operator still holds
            for b in out.drain()[0]:
                yield self._out(spark_batch(b, targets, names, self.keep_watermark))
        finally:
            op.close()

    def _out(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """`batch` with an unknown `__bw` (NULL: after the watermark) when the output has one."""
        return _with_before(batch, pa.nulls(batch.num_rows, pa.int64())) if self.keep_before else batch


class LineDecoder:
    """mapInArrow function: lines of a file (Spark's text source, column `value`) → rows of
    the scan (`c0..`, `__op` in Spark's types), decoded by streamsql's own format (a changelog
    format such as debezium-json, which Spark does not read)."""

    def __init__(
        self, fmt: str, fields: Sequence[Field], options: dict[str, str], projection: Sequence[int] | None, path: str
    ) -> None:
        self.fmt = fmt
        self.fields = tuple(fields)
        self.options = dict(options)
        self.projection = None if projection is None else tuple(projection)
        self.path = path

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from runtime.connectors.base import SourceContext
        from runtime.connectors.formats import get_format

        factory = get_format(self.fmt).open_decoder
        assert factory is not None  # capabilities accept only formats with a decoder
        decoder = factory(self.fields, self.options, SourceContext(mode="streaming"))
        chosen = list(range(len(self.fields))) if self.projection is None else list(self.projection)
        out_fields = [self.fields[i] for i in chosen]
        targets = spark_arrow_types(out_fields)
        names = [f"c{i}" for i in range(len(out_fields))]
        for rb in batches:
            if not rb.num_rows:
                continue
            decoded, _ = decoder.decode(rb.column(0).cast(pa.binary()), lambda i: f"file {self.path}")
            if not decoded.num_rows:
                continue
            kinds = decoded.column(decoded.schema.get_field_index(ROW_KIND))
            rows = pa.RecordBatch.from_arrays(
                [*(decoded.column(i) for i in chosen), kinds], names=[*(f.name for f in out_fields), ROW_KIND]
            )
            yield spark_batch(rows, targets, names)


class Held:
    """A key group's operator as a Python worker keeps it between calls: the digests of the
    state chunks Spark holds, and for per-key state (slot_store.py) the tracker of the slots
    touched since the last save and the slot layout last saved; and the origin of the key
    group's rows (`origin`: None before any, MIXED once from several) as last saved."""

    def __init__(self, op: Any, digests: list[bytes], tracker: Any, layout: list[str] | None) -> None:
        self.op = op
        self.digests = digests
        self.tracker = tracker
        self.layout = layout
        self.origin: int | None = None
        self.saved_origin: int | None = None

    def note_origin(self, source: int | None) -> bool:
        """Record rows from `source` (None: unknown); whether the key group's rows now come
        from more than one origin, so ties among them need not be in the local runner's order."""
        if source is None or (self.origin is not None and self.origin != source):
            self.origin = MIXED
        elif self.origin is None:
            self.origin = source
        return self.origin == MIXED


# Operators kept between calls in a Python worker: (processor uid, bucket) → (version, held).
# Used only when Spark's state holds the same version (see `_load`).
_CACHE: dict[tuple[str, int], tuple[int, Held]] = {}


# Nodes decoded from a processor's JSON, per worker process.
_NODES: dict[str, Node] = {}


def _digest(chunk: bytes) -> bytes:
    return hashlib.blake2b(chunk, digest_size=16).digest()


def processor_class() -> type:
    """The StatefulProcessor subclass (defined on first use: PySpark is imported lazily).

    It is reachable as this module's `StreamsqlProcessor` (module `__getattr__`), so PySpark's
    cloudpickle ships it by reference. A class it cannot import by name goes by value, with
    the module globals its methods read, `_CACHE` included: a process that ran processors
    itself (tests do) then shipped every cached operator with each job, past 1 MiB."""
    global _PROCESSOR
    if _PROCESSOR is None:
        _PROCESSOR = _define_processor()
        _PROCESSOR.__qualname__ = _PROCESSOR.__name__
    return _PROCESSOR


def __getattr__(name: str) -> Any:
    if name == "StreamsqlProcessor":
        return processor_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_PROCESSOR: type | None = None


def _define_processor() -> type:
    from pyspark.sql.streaming import StatefulProcessor

    from runtime.pandas_interop import import_pandas

    pd = import_pandas()  # the processor's frames are pandas (streamsql's pandas guard allows this)

    class StreamsqlProcessor(StatefulProcessor):  # type: ignore[misc]
        """One streamsql operator per key group (see the module doc)."""

        def __init__(
            self, uid: str, node: Node, config: dict[str, str], input_modes: Sequence[str], event_time: bool
        ) -> None:
            from runtime.graph import JobGraph

            # The node travels as JSON, decoded on first use: Spark's driver-side Python
            # worker only calls `init` and need not import the operators.
            self.node_json = JobGraph((node,)).to_json()
            # The worker cache's key: a restarted job whose operator changed details its
            # state does not depend on (the same uid) never takes an operator built before.
            self.uid = f"{uid}/{hashlib.blake2b(self.node_json.encode(), digest_size=8).hexdigest()}"
            self.config = dict(config)
            self.input_modes = list(input_modes)
            self.event_time = event_time

        @property
        def node(self) -> Node:
            node = _NODES.get(self.node_json)
            if node is None:
                from runtime.graph import JobGraph

                node = _NODES[self.node_json] = JobGraph.from_json(self.node_json).nodes[0]
            return node

        def init(self, handle: Any) -> None:
            self.handle = handle
            self.meta = handle.getValueState("meta", "version LONG, wm LONG, ended BOOLEAN, chunks INT")
            self.chunks = handle.getMapState("chunks", "idx INT", "data BINARY")
            # Per-key entries of "generic" operators (slot_store.py).
            self.slots = handle.getMapState("slots", "slot LONG", "grp INT, k BINARY, v BINARY")
            # The origin of the key group's rows (Held.origin), for the tie checks (ties.py).
            self.origin = handle.getValueState("origin", "src LONG")

        # -------------------------------------------------------------- state
        def _fresh(self) -> Held:
            from runtime.executor.spark import slot_store

            op = _operator(self.node, self.config, self.input_modes)
            tracker = slot_store.SlotTracker(op.state) if slot_store.per_key(op) else None
            return Held(op, [], tracker, None)

        def _load(self, bucket: int) -> tuple[Held, int, int, bool]:
            from runtime.checkpoint import format as state_format
            from runtime.executor.spark import slot_store

            meta = self.meta.get() if self.meta.exists() else None
            if meta is None:
                _CACHE.pop((self.uid, bucket), None)
                return self._fresh(), 0, -(2**63), False
            version, wm, ended, count = int(meta[0]), int(meta[1]), bool(meta[2]), int(meta[3])
            # Taken out until `_save` puts it back: a call that fails leaves no half-applied operator.
            cached = _CACHE.pop((self.uid, bucket), None)
            if cached is not None and cached[0] == version:
                return cached[1], version, wm, ended
            parts = []
            for i in range(count):
                v = self.chunks.getValue((i,))
                parts.append(bytes(v[0]))
            held = self._fresh()
            held.digests = [_digest(p) for p in parts]
            if self.origin.exists():
                held.origin = held.saved_origin = int(self.origin.get()[0])
            if parts:
                rest = state_format.decode(b"".join(parts), "Spark state of a streamsql operator")
                if held.tracker is not None:
                    held.layout = slot_store.restore(held.op, rest, self.slots.iterator())
                    held.tracker.take()  # the restore's own look-ups changed nothing
                else:
                    held.op.restore_state(rest["snapshot"])
            return held, version, wm, ended

        def _save(self, bucket: int, held: Held, version: int, wm: int, ended: bool) -> None:
            from runtime.checkpoint import format as state_format
            from runtime.executor.spark import slot_store

            if held.tracker is not None:
                data, writes, held.layout = slot_store.save(held.op, held.tracker, held.layout)
                for slot, entry in writes.items():  # the keys this call changed
                    if entry is None:
                        self.slots.removeKey((slot,))
                    else:
                        self.slots.updateValue((slot,), entry)
            else:
                data = state_format.encode({"snapshot": held.op.snapshot_state(version + 1)})
            chunks = [data[i : i + CHUNK_BYTES] for i in range(0, len(data), CHUNK_BYTES)]
            new = [_digest(c) for c in chunks]
            for i, (c, d) in enumerate(zip(chunks, new, strict=True)):
                if i >= len(held.digests) or held.digests[i] != d:
                    self.chunks.updateValue((i,), (c,))
            for i in range(len(chunks), len(held.digests)):
                self.chunks.removeKey((i,))
            self.meta.update((version + 1, wm, ended, len(chunks)))
            if held.origin is not None and held.origin != held.saved_origin:
                self.origin.update((held.origin,))
                held.saved_origin = held.origin
            held.digests = new
            _CACHE[(self.uid, bucket)] = (version + 1, held)

        # -------------------------------------------------------------- time
        def _advance(self, held: Held, wm: int, last: int, ended: bool, out: Any) -> tuple[int, bool]:
            if not self.event_time or ended or wm <= max(last, 0):
                return last, ended
            from runtime.executor.spark.ties import fire_tie

            op = held.op
            reason = fire_tie(op, MAX_WATERMARK if wm >= END_WATERMARK_MS else wm) if held.origin == MIXED else None
            if reason:
                raise JobError(reason)
            if wm >= END_WATERMARK_MS:
                op.on_watermark(MAX_WATERMARK, out)
                for i in range(len(self.input_modes)):
                    op.end_input(i, out)
                return wm, True
            op.on_watermark(wm, out)
            return wm, False

        def _arm(self, wm: int, ended: bool) -> None:
            if not self.event_time:
                return
            target = max(wm, 0) + 1
            for t in list(self.handle.listTimers()):
                if t != target or ended:
                    self.handle.deleteTimer(t)
            if not ended:
                self.handle.registerTimer(target)

        def _emit(self, out: Any, wm: int, before: int) -> Iterator[Any]:
            """The batches `out` holds as payload rows (event time past `wm`), stamped as
            emitted while the processor's watermark was `before` (BEFORE_WM)."""
            batches = out.drain()[0]
            if not batches:
                return
            frame: dict[str, Any] = {PAYLOAD: [encode(b) for b in batches]}
            if self.event_time:
                et = pd.Timestamp(min(max(wm, 0) + 1, END_WATERMARK_MS - 1), unit="ms")
                frame[EVENT_TIME] = [et.to_pydatetime()] * len(batches)
                frame[BEFORE_WM] = [before] * len(batches)
                return_frame = pd.DataFrame(frame)
                return_frame[EVENT_TIME] = return_frame[EVENT_TIME].astype(object)
                yield return_frame
                return
            yield pd.DataFrame(frame)

        def _apply(self, held: Held, batch: pa.RecordBatch, input_index: int, source: int | None, out: Any) -> None:
            from runtime.executor.spark.ties import batch_tie

            op = held.op
            reason = batch_tie(op, batch) if held.note_origin(source) else None
            if reason:
                raise JobError(reason)
            op.process_batch(batch, input_index, out)

        # -------------------------------------------------------------- Spark's calls
        def handleInputRows(self, key: Any, rows: Any, timerValues: Any) -> Iterator[Any]:  # noqa: N802, N803
            from runtime.operators.base import Output

            bucket = int(key[0])
            frames = [f for f in rows if len(f)]
            held, version, last, ended = self._load(bucket)
            out = Output()
            wm = int(timerValues.getCurrentWatermarkInMs()) if self.event_time else last
            early: list[tuple[bytes, int, int | None]] = []
            late: list[tuple[bytes, int, int | None]] = []
            if frames:
                # Columns by position (Spark names them _0.._5): bucket, seq, input, payload,
                # before, origin (NULL, or absent: unknown).
                data = pd.concat(frames, ignore_index=True)
                data = data.iloc[np.argsort(data.iloc[:, 1].to_numpy(), kind="stable")]
                before = data.iloc[:, 4].fillna(MAX_WATERMARK).to_numpy(dtype=np.int64)
                sources = (
                    [None if pd.isna(s) else int(s) for s in data.iloc[:, 5]]
                    if data.shape[1] > 5
                    else [None] * len(data)
                )
                for payload, idx, b, src in zip(data.iloc[:, 3], data.iloc[:, 2], before, sources, strict=True):
                    (early if self.event_time and b < wm else late).append((bytes(payload), int(idx), src))
            before_wm = last
            for payload, idx, src in early:  # upstream rows emitted before the watermark `wm`
                self._apply(held, decode(payload), idx, src, out)
            last, ended = self._advance(held, wm, last, ended, out)
            yield from self._emit(out, last, before_wm)
            for payload, idx, src in late:
                self._apply(held, decode(payload), idx, src, out)
            yield from self._emit(out, last, last)
            self._save(bucket, held, version, last, ended)
            self._arm(last, ended)

        def handleExpiredTimer(self, key: Any, timerValues: Any, expiredTimerInfo: Any) -> Iterator[Any]:  # noqa: N802, N803
            from runtime.operators.base import Output

            bucket = int(key[0])
            held, version, last, ended = self._load(bucket)
            out = Output()
            wm = int(timerValues.getCurrentWatermarkInMs())
            new_last, ended2 = self._advance(held, wm, last, ended, out)
            if (new_last, ended2) == (last, ended):  # nothing changed: the operator stays cached
                _CACHE[(self.uid, bucket)] = (version, held)
                self._arm(last, ended)
                return
            yield from self._emit(out, new_last, last)
            self._save(bucket, held, version, new_last, ended2)
            self._arm(new_last, ended2)

        def close(self) -> None:
            pass

    return StreamsqlProcessor


def wire_schema() -> Any:
    from pyspark.sql import types as st

    return st.StructType(
        [
            st.StructField(BUCKET, st.IntegerType(), False),
            st.StructField(SEQ, st.LongType(), False),
            st.StructField(INPUT, st.ByteType(), False),
            st.StructField(PAYLOAD, st.BinaryType(), False),
            st.StructField(BEFORE_WM, st.LongType(), True),
            st.StructField(ORIGIN, st.LongType(), True),
        ]
    )


def output_schema(event_time: bool) -> Any:
    from pyspark.sql import types as st

    fields = [st.StructField(PAYLOAD, st.BinaryType(), True)]
    if event_time:
        fields.append(st.StructField(EVENT_TIME, st.TimestampType(), True))
        fields.append(st.StructField(BEFORE_WM, st.LongType(), True))
    return st.StructType(fields)
