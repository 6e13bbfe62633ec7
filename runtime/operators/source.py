"""TableSourceScan: reads a table through its connector's Source, split by split."""

from __future__ import annotations

import zlib
from collections import deque
from collections.abc import Sequence
from dataclasses import field
from typing import Any

import numpy as np
import pyarrow as pa

from runtime.batch import ROW_KIND, ROW_SPLIT
from runtime.checkpoint.rescale import OldStates, load_state
from runtime.connectors.base import Source, SourceContext, SplitGroupReader, SplitReader, get_connector
from runtime.errors import ConnectorError
from runtime.frozen import frozen_dataclass
from runtime.graph import Node
from runtime.operators._common import make_batch
from runtime.operators.base import Operator, OperatorContext, Output
from runtime.operators.spec import OperatorParams, OperatorSpec, PlanView, SparkCapability, UpsertKeys, register_spec
from runtime.types import Field

# Config key a parallel subtask passes to its Source: how many splits to list (a source
# that can split its sequence, datagen and nexmark, lists that many; others ignore it).
SOURCE_PARALLELISM = "$internal.source.parallelism"


@frozen_dataclass
class TableSourceScanParams(OperatorParams):
    """Read table `table` through `connector` with its `options` (a PARTITIONED BY table's
    carry `$internal.partition-keys`); `physical_schema` is every physical column,
    `projection` the ones to produce (indexes into it; None: all); `bounded` as the
    connector says for these options."""

    table: str
    connector: str
    options: dict[str, str] = field(hash=False)
    physical_schema: tuple[Field, ...]
    projection: tuple[int, ...] | None = None
    bounded: bool = True
    # Tag rows with their split (`__split`) for per-split watermarks: set by the planner
    # below a WatermarkAssigner when the connector declares `split_watermarks` (Kafka).
    split_watermarks: bool = False


class TableSourceScanOperator(Operator):
    """A source operator: the executor calls `poll(max_rows)` until it returns None.

    Splits are read one after the other in the order the source lists them (like one
    Flink source subtask), so the output order is deterministic. An unbounded source
    returns empty batches when it has nothing right now and is asked for new splits
    (`discover_splits`) on every poll that finds all known splits drained.

    Checkpoints record the position: the splits not started yet, the split being read
    and its reader's `offset()` (or, for a reader without offsets, the rows read from it,
    skipped again on restore), whether the source finished, and the splits a monitoring
    source already knows. Restoring seeks the reader, so no row is read twice or lost.

    A source that reads its splits together (`Source.reads_splits_together`: Kafka's
    partitions) gets one `SplitGroupReader` over the subtask's share of the splits; its
    checkpoint state is `{"group": {split: offset}}`, re-split by split on rescale, and
    the reader is told when a checkpoint completes (Kafka commits the offsets to the
    consumer group). With `split_watermarks` (set by the planner when the table has a
    WATERMARK) its batches carry `__split` for the per-split watermarks.
    """

    checkpointing = "custom"
    splits_input = True  # subtask i of N reads the splits k with k mod N = i

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        self.source: Source | None = None
        self._pending: deque[str] = deque()
        self._reader: SplitReader | None = None
        self._split: str | None = None
        self._split_rows = 0
        self.finished = False
        self.bounded = True
        self._discovers = True
        # Splits other subtasks were reading, taken over at a restore with another
        # parallelism (`rescale_snapshots`): resumed before `_pending`.
        self._resume: deque[dict[str, Any]] = deque()
        self._skipped_done = 0  # rows skipped by readers already closed
        self._offsets: dict[int, Any] = {}  # checkpoint id -> the reader's offset in it
        # reads_splits_together: the one reader over the subtask's splits, and the offsets
        # each checkpoint recorded (committed when it completes)
        self._group: SplitGroupReader | None = None
        self._group_snapshots: dict[int, dict[str, Any]] = {}

    def open(self) -> None:
        p = TableSourceScanParams.of(self.node)
        factory = get_connector(p.connector)
        if factory.create_source is None:
            raise ConnectorError(f"Connector '{p.connector}' can only be used as a sink")
        config = dict(self.ctx.config)
        n, me = self.ctx.parallelism, self.ctx.subtask_index
        if n > 1:  # sources that can split their sequence list `n` splits (datagen, nexmark)
            config[SOURCE_PARALLELISM] = str(n)
        sctx = SourceContext(mode=self.ctx.mode, time_zone=self.ctx.time_zone, config=config)
        source = factory.create_source(
            dict(p.options), p.physical_schema, list(p.projection) if p.projection is not None else None, sctx
        )
        self.source = source
        self.bounded = bool(source.bounded)
        if self.ctx.is_batch and not self.bounded:  # e.g. Kafka without 'scan.bounded.mode'
            raise ConnectorError(
                f"Querying an unbounded table '{p.table}' in batch mode is not allowed. The table source is unbounded."
            )
        splits = source.splits()
        # Parallel subtask `me` of `n` reads splits k with k % n == me (the order stays the
        # source's). A subtask without splits ends at once (MAX_WATERMARK in streaming, as an
        # ended source), except subtask 0 of an unbounded source: it alone discovers new splits.
        self._pending.extend(s for k, s in enumerate(splits) if k % n == me)
        if n > 1 and me != 0:
            self._discovers = False
            if not self._pending:
                self.bounded = True
        if source.reads_splits_together:
            self._group = source.create_group_reader(list(self._pending))
            self._pending.clear()

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        raise AssertionError("TableSourceScan has no input")

    def poll(self, max_rows: int) -> pa.RecordBatch | None:
        assert self.source is not None
        if self._group is not None:
            return self._poll_group(max_rows)
        while True:
            if self._reader is None and self._resume:
                r = self._resume.popleft()
                self._open_split(r["split"], r.get("offset"), int(r.get("split_rows") or 0))
                continue
            if self._reader is None:
                if not self._pending and not self.bounded and self._discovers:
                    self._pending.extend(self.source.discover_splits())
                if not self._pending:
                    if self.bounded:
                        self.finished = True
                        return None
                    return self._empty()
                self._split = self._pending.popleft()
                self._split_rows = 0
                self._reader = self.source.create_reader(self._split)
            batch = self._reader.read(max_rows)
            self._count_skipped()
            if batch is None:
                self._skipped_done += int(getattr(self._reader, "skipped_rows", 0) or 0)
                self._reader.close()
                self._reader = None
                self._split = None
                continue
            self._split_rows += batch.num_rows
            if batch.num_rows == 0 and not self.bounded:
                return self._empty()
            if batch.num_rows == 0:
                continue
            # A changelog format (e.g. debezium-json) adds the `__op` row kinds: keep them.
            kind_idx = batch.schema.get_field_index(ROW_KIND)
            kinds = batch.column(kind_idx) if kind_idx >= 0 else None
            return make_batch(self.node, list(batch.columns[: len(self.node.schema)]), kinds=kinds)

    def _poll_group(self, max_rows: int) -> pa.RecordBatch | None:
        assert self.source is not None and self._group is not None
        if self.finished:
            return None
        if self.bounded and not self._group.splits():
            self.finished = True  # a parallel subtask without partitions
            return None
        if not self.bounded and self._discovers:
            new = self.source.discover_splits()
            if new:
                self._group.add_splits(new)
        batch = self._group.read(max_rows)
        if self._group.skipped_rows:
            self.ctx.metrics.extra["skipped_rows"] = self._group.skipped_rows
        if batch is None:
            self.finished = True
            return None
        if batch.num_rows == 0:
            return self._empty()
        kind_idx = batch.schema.get_field_index(ROW_KIND)
        kinds = batch.column(kind_idx) if kind_idx >= 0 else None
        out = make_batch(self.node, list(batch.columns[: len(self.node.schema)]), kinds=kinds)
        if TableSourceScanParams.of(self.node).split_watermarks and not self.ctx.is_batch:
            out = out.append_column(pa.field(ROW_SPLIT, _SPLIT_TYPE, False), self._split_column(out.num_rows))
        return out

    def _split_column(self, rows: int) -> pa.DictionaryArray:
        """`__split` of a batch of the group reader's current split: indices into the
        dictionary of every split it reads (runtime/batch.py)."""
        assert self._group is not None
        names = self._group.splits()
        index = names.index(self._group.current_split) if self._group.current_split in names else 0
        return pa.DictionaryArray.from_arrays(
            pa.array(np.full(rows, index, dtype=np.int32)), pa.array(names, pa.string())
        )

    # ------------------------------------------------------------------ checkpoints
    def rescale_snapshots(self, old: OldStates, new_range: tuple[int, int], index: int, parallelism: int) -> Any:
        """Split states are reassigned: new subtask `index` takes the splits whose position in
        the source's split list modulo `parallelism` is `index` (a split discovered later, not
        in that list, by a stable hash of its name): splits not started, and the splits old
        subtasks were reading with their offsets, resumed first. Nothing is asked of the
        connector."""
        states = [load_state(s) for _, s in old if s is not None]
        # the source's whole split list (a parallel subtask's `_pending` holds only its share)
        position = {s: i for i, s in enumerate(self.source.splits() if self.source is not None else [])}

        def mine(split: str) -> bool:
            pos = position.get(split)
            if pos is None:
                pos = zlib.crc32(str(split).encode("utf-8"))
            return pos % parallelism == index

        in_progress: list[dict[str, Any]] = []
        pending: list[str] = []
        known: set[str] | None = None
        group: dict[str, Any] = {}
        for st in states:
            group.update({s: o for s, o in (st.get("group") or {}).items() if mine(s)})
            resumes = list(st.get("resume") or [])
            if st.get("split") is not None:
                resumes.insert(
                    0, {"split": st["split"], "offset": st.get("offset"), "split_rows": st.get("split_rows")}
                )
            in_progress += [r for r in resumes if mine(r["split"])]
            pending += [s for s in st.get("pending") or [] if mine(s)]
            if st.get("known") is not None:
                known = (known or set()) | set(st["known"])
        # each old subtask's own order of its splits is kept; only ownership changes
        first = in_progress[0] if in_progress else None
        return {
            "pending": pending,
            "split": None if first is None else first["split"],
            "offset": None if first is None else first.get("offset"),
            "split_rows": 0 if first is None else int(first.get("split_rows") or 0),
            "resume": in_progress[1:],
            "finished": bool(states) and all(st.get("finished") for st in states) and not (pending or in_progress),
            "known": sorted(known) if known is not None else None,
            **({"group": group} if any("group" in st for st in states) else {}),
        }

    def snapshot_state(self, checkpoint_id: int) -> Any:
        if self._group is not None:
            offsets = self._group.offset()
            self._group_snapshots[checkpoint_id] = offsets
            known = getattr(self.source, "_known", None)
            return {
                "group": offsets,
                "pending": [],
                "split": None,
                "finished": self.finished,
                "known": sorted(known) if isinstance(known, set) else None,
                "resume": [],
            }
        offset = self._reader.offset() if self._reader is not None else None
        if self._reader is not None and offset is not None:
            self._offsets[checkpoint_id] = offset
        known = getattr(self.source, "_known", None)
        return {
            "pending": list(self._pending),
            "split": self._split,
            "offset": offset,
            "split_rows": self._split_rows,
            "finished": self.finished,
            "known": sorted(known) if isinstance(known, set) else None,
            "resume": list(self._resume),
        }

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """The reader confirms the offset of the newest completed checkpoint (CDC slots);
        a group reader commits the offsets that checkpoint recorded (Kafka: to the
        consumer group), older pending snapshots are dropped."""
        if self._group is not None:
            offsets = self._group_snapshots.pop(checkpoint_id, None)
            for cid in [c for c in self._group_snapshots if c < checkpoint_id]:
                del self._group_snapshots[cid]
            if offsets is not None:
                self._group.commit(offsets)
            return
        done = [k for k in self._offsets if k <= checkpoint_id]
        if done and self._reader is not None:
            self._reader.commit_offset(self._offsets[max(done)])
        for k in done:
            del self._offsets[k]

    def restore_state(self, handles: Any) -> None:
        """Called after `open`: replace the split queue and resume the split in progress."""
        assert self.source is not None
        if self._group is not None:
            self._restore_group(handles)
            return
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        self._pending = deque(handles["pending"])
        self.finished = bool(handles.get("finished"))
        known = handles.get("known")
        if known is not None and isinstance(getattr(self.source, "_known", None), set):
            self.source._known = set(known) | set(self._pending)  # type: ignore[attr-defined]
        self._resume = deque(handles.get("resume") or [])
        self._split = None
        if handles.get("split") is not None:
            self._open_split(handles["split"], handles.get("offset"), int(handles.get("split_rows") or 0))

    def _restore_group(self, handles: Any) -> None:
        """The group reader reads the splits the snapshot recorded, from their offsets."""
        assert self.source is not None and self._group is not None
        self._group.close()
        offsets = dict(handles.get("group") or {})
        self._group = self.source.create_group_reader(sorted(offsets, key=_split_order(self.source)))
        self._group.seek(offsets)
        self.finished = bool(handles.get("finished"))
        known = handles.get("known")
        if known is not None and isinstance(getattr(self.source, "_known", None), set):
            self.source._known = set(known) | set(offsets)  # type: ignore[attr-defined]

    def _open_split(self, split: str, offset: Any, split_rows: int) -> None:
        """Resume reading `split` where a snapshot left it."""
        assert self.source is not None
        self._split = split
        self._split_rows = split_rows
        self._reader = self.source.create_reader(split)
        if offset is not None:
            self._reader.seek(offset)
            return
        skip = self._split_rows  # no offsets: re-read and drop what was already emitted
        while skip > 0:
            b = self._reader.read(min(skip, 65536))
            if b is None:
                break
            skip -= b.num_rows
            if b.num_rows == 0 and not self.bounded:
                raise ConnectorError(
                    f"cannot rewind split {self._split!r} of table {TableSourceScanParams.of(self.node).table}"
                )

    def _count_skipped(self) -> None:
        """Rows the format dropped ('*.ignore-parse-errors'), for --stats, the REST API and
        the end-of-job summary (`Metrics.extra["skipped_rows"]`)."""
        current = int(getattr(self._reader, "skipped_rows", 0) or 0)
        total = self._skipped_done + current
        if total:
            self.ctx.metrics.extra["skipped_rows"] = total

    def _empty(self) -> pa.RecordBatch:
        return make_batch(self.node, [pa.array([], type=f.type.to_arrow()) for f in self.node.schema])

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        if self._group is not None:
            self._group.close()
            self._group = None


class TableSourceScanSpec(OperatorSpec[TableSourceScanParams]):
    """A source: insert-only, or the changelog a CDC format / upsert connector carries
    (also in BATCH, where a GroupAggregate applies it). Every subtask reads its splits."""

    name = "TableSourceScan"
    params_type = TableSourceScanParams
    operator_class = TableSourceScanOperator
    parallel = True
    rescalable = True
    spark = SparkCapability(
        True,
        True,
        "`filesystem` connector, csv / json / parquet, read by Spark (`spark.read` / `readStream`); "
        "debezium-json in STREAMING (lines read by Spark, decoded by streamsql's format). "
        "CSV follows Flink's rules: `csv.null-literal` is the only NULL, an empty numeric field fails the job. "
        "`jdbc`: a Python data source (streaming: one micro-batch), one Spark partition per `scan.partition.*` "
        "split, read with psycopg in Spark's Python workers (no JDBC jar; docs/connectors/jdbc.md). `postgres-cdc` "
        "and Kafka are refused.",
    )

    def upsert_keys(self, node: PlanView, inputs: Sequence[UpsertKeys]) -> UpsertKeys:
        """The table's PRIMARY KEY, when the scan reads all its columns (the planner leaves
        the key's names in `info`)."""
        names = [f.name for f in node.fields]
        pk = node.info.get("primary_key") or ()
        if not pk or not all(k in names for k in pk):
            return None
        return frozenset({frozenset(names.index(k) for k in pk)})

    def changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str:
        p = self.params(node)
        return scan_changelog_mode(p.connector, p.options)

    def batch_changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str | None:
        return self.changelog_mode(node, inputs)

    def explain(self, node: PlanView) -> list[str]:
        p = self.params(node)
        path = list(node.info.get("path", (p.table,)))
        if p.projection is not None:
            path.append(f"project=[{', '.join(f.name for f in node.fields)}]")
        return [f"table=[[{', '.join(path)}]]", f"fields=[{', '.join(f.name for f in node.fields)}]"]


def scan_changelog_mode(connector: str, options: dict[str, str]) -> str:
    """A scan's changelog mode as its connector declares it for these options ('I' for a
    connector not registered: the runtime reports it when it runs)."""
    try:
        factory = get_connector(connector)
    except ConnectorError:
        return "I"
    return factory.changelog_mode(options)


TABLE_SOURCE_SCAN = register_spec(TableSourceScanSpec())


_SPLIT_TYPE = pa.dictionary(pa.int32(), pa.string())


def _split_order(source: Source) -> Any:
    """Sort key of split ids in the source's listing order (unknown ones last, by name)."""
    position = {s: i for i, s in enumerate(source.splits())}
    return lambda s: (position.get(s, len(position)), s)
