"""Sink: writes its input to a connector's Sink (INSERT INTO).

Exactly-once with checkpoints: a connector sink that implements the two-phase-commit
protocol (runtime.checkpoint.twophase: `prepare_commit`, `commit`, `snapshot_state`,
`restore_state`, `abort`) pre-commits at the barrier, keeps the committables in this
operator's state and commits them when the checkpoint completes; on restore it commits
the restored committables again (idempotent) and aborts everything else. Other sinks
(`print`, `blackhole`) are flushed at the barrier: at-least-once.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import field
from typing import Any

import pyarrow as pa

from runtime.batch import ROW_KIND, data_width
from runtime.checkpoint.rescale import OldStates, load_state
from runtime.checkpoint.twophase import is_two_phase
from runtime.config.core import MAX_PARALLELISM, job_parallelism
from runtime.config.options import key
from runtime.connectors.base import SINK_SUBTASKS, SUBTASK_INDEX, Sink, SourceContext, get_connector
from runtime.errors import ConnectorError, file_access_error, is_file_error
from runtime.frozen import frozen_dataclass
from runtime.graph import Node
from runtime.operators._common import system_column
from runtime.operators.base import Operator, OperatorContext, Output
from runtime.operators.spec import (
    OperatorParams,
    OperatorSpec,
    PlanView,
    SparkCapability,
    register_spec,
)
from runtime.operators.union import rebalance_slices
from runtime.state.keygroups import key_groups_of_rows
from runtime.types import Field

# Sinks every subtask may write on its own (part files per subtask, a Kafka producer per
# subtask, or nothing); the others (print: one stdout; memory: rows for this process;
# duckdb: one writer) run once.
PARALLEL_SINKS = ("filesystem", "blackhole", "kafka", "upsert-kafka")
# Schema metadata key the parallel executor's parent process puts on a batch it received
# from a worker for a sink that runs once there: the worker's subtask index, so that the
# sink writes it on behalf of that subtask (`Sink.write_for`: the print sink's `id:N>`).
ORIGIN_SUBTASK = b"streamsql.origin-subtask"


@frozen_dataclass
class SinkParams(OperatorParams):
    """Write to table `table` through `connector` with its `options`; `schema` is the sink
    table's columns, `primary_key` its declared PRIMARY KEY (upsert sinks key on it),
    `parallelism` its 'sink.parallelism' (None: one writer per subtask of the job).
    `upsert_materialize`: a SinkMaterializer keyed on the PRIMARY KEY runs in front of the
    writer (runtime/operators/sink_materializer.py; planned as Flink plans it,
    `SINK_UPSERT_MATERIALIZE`), comparing rows by `upsert_key` (input columns of the
    input's smallest upsert key; empty: the whole row)."""

    table: str
    connector: str
    options: dict[str, str] = field(hash=False)
    schema: tuple[Field, ...]
    primary_key: tuple[str, ...] = ()
    parallelism: int | None = None
    upsert_materialize: bool = False
    upsert_key: tuple[int, ...] = ()


SINK_UPSERT_MATERIALIZE = (
    key("table.exec.sink.upsert-materialize")
    .enum_type("NONE", "AUTO", "FORCE")
    .default_value("AUTO")
    .with_description(
        "Flink's SinkUpsertMaterializer in front of a sink with a PRIMARY KEY (STREAMING). It keeps, per key, "
        "the input rows that back the sink's row, so that a -U/-D of one of them does not delete a row another "
        "one still backs (a join or a projection whose updates are keyed otherwise than the sink). `AUTO`: when "
        "the input is an update stream and none of its upsert keys lies within the PRIMARY KEY, as Flink decides; "
        "`FORCE`: for every update stream into a sink with a PRIMARY KEY; `NONE`: never (each change is applied "
        "by key as it comes). EXPLAIN shows `upsertMaterialize=[true]` on the Sink."
    )
)


def writer_subtasks(parallelism: int | None, subtask_index: int, subtask_count: int) -> list[int]:
    """The sink subtasks (writers) that subtask `subtask_index` of `subtask_count` of a Sink
    node hosts. Without 'sink.parallelism' each hosts its own. With `parallelism` p the
    Exchange in front sends rows to the first min(p, count) subtasks only
    (runtime/executor/parallel/transport.py), and writer j lives in subtask j % min(p, count):
    one writer each when p <= count (the others host none), several when p > count. The
    parent process's single instance (a sink that runs there) hosts all p."""
    if parallelism is None:
        return [subtask_index]
    m = min(parallelism, subtask_count)
    return [j for j in range(parallelism) if j % m == subtask_index]


class SinkOperator(Operator):
    """Creates the connector sink of each writer subtask it hosts at open (one, except with
    'sink.parallelism': `writer_subtasks`), writes data columns (named as the sink table's
    columns) plus `__op` when the input carries it, flushes at end of input and closes at
    close (also when the job is stopped or fails). With several writers a batch is split
    on the PRIMARY KEY's key groups (one key always reaches the same writer), or dealt
    round-robin without a key."""

    checkpointing = "custom"

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        self.writers: list[tuple[int, Sink]] = []
        self.fields = SinkParams.of(node).schema or node.schema
        # checkpoint id -> {writer subtask: committable}, not yet committed
        self.pending: dict[int, dict[int, Any]] = {}
        self.two_phase = False
        self._next = 0  # round-robin position among the writers

    @property
    def sink(self) -> Sink | None:
        """The first writer's connector sink (tests and single-writer callers)."""
        return self.writers[0][1] if self.writers else None

    def open(self) -> None:
        p = SinkParams.of(self.node)
        factory = get_connector(p.connector)
        if factory.create_sink is None:
            raise ConnectorError(f"Connector '{p.connector}' can only be used as a source")
        options = dict(p.options)
        if p.primary_key:  # the table's PRIMARY KEY, when the planner passes it on
            options.setdefault("$internal.primary-key", ",".join(p.primary_key))
        names = [f.name for f in self.fields]
        self.key_columns = [names.index(k) for k in p.primary_key if k in names]
        self.max_parallelism = MAX_PARALLELISM.get(self.ctx.config)
        for j in writer_subtasks(p.parallelism, self.ctx.subtask_index, self.ctx.parallelism):
            config = dict(self.ctx.config)
            config["$internal.sink-id"] = config.get("$internal.operator-uid", "") or str(self.node.id)
            config[SUBTASK_INDEX] = str(j)
            # Without 'sink.parallelism' the sink has the job's parallelism, also when it
            # runs once in the parent process of a parallel run (ctx.parallelism 1 there).
            subtasks = p.parallelism or max(self.ctx.parallelism, job_parallelism(self.ctx.config))
            config[SINK_SUBTASKS] = str(subtasks)
            config["subtask.index"] = str(j)  # what the filesystem sink names its part files by
            sctx = SourceContext(mode=self.ctx.mode, time_zone=self.ctx.time_zone, config=config)
            sink = factory.create_sink(options, self.fields, sctx)
            self.writers.append((j, sink))
            self.two_phase = is_two_phase(sink)
            if self.two_phase:
                sink.deferred_commit = self.ctx.checkpointing  # type: ignore[attr-defined]
            with _sink_files():
                sink.open()

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        n = data_width(batch)
        cols = list(batch.columns[:n])
        names = [f.name for f in self.fields][:n] + [f"f{i}" for i in range(len(self.fields), n)]
        kinds = system_column(batch, ROW_KIND)
        if kinds is not None:
            cols.append(kinds)
            names.append(ROW_KIND)
        rows = pa.RecordBatch.from_arrays(cols, names=names)
        origin = (batch.schema.metadata or {}).get(ORIGIN_SUBTASK)
        with _sink_files():
            if origin is not None and len(self.writers) == 1:
                self.writers[0][1].write_for(rows, int(origin))
            else:
                for sink, part in self._route(rows):
                    sink.write(part)
        self.ctx.metrics.rows_out += batch.num_rows

    def _route(self, rows: pa.RecordBatch) -> list[tuple[Sink, pa.RecordBatch]]:
        """(writer, rows) pairs: everything to a single writer; with several, by the key
        group of the PRIMARY KEY, or dealt round-robin (`rebalance_slices`)."""
        if len(self.writers) == 1:
            return [(self.writers[0][1], rows)]
        if not self.writers:
            raise ConnectorError(
                f"Sink '{SinkParams.of(self.node).table}': subtask {self.ctx.subtask_index} hosts no writer "
                "but received rows (the Exchange in front of a sink with 'sink.parallelism' is missing)"
            )
        k = len(self.writers)
        if not self.key_columns:
            self._next += 1
            return [
                (self.writers[t][1], rows.slice(off, length))
                for t, off, length in rebalance_slices(rows.num_rows, k, self._next)
            ]
        groups = key_groups_of_rows([rows.column(c) for c in self.key_columns], rows.num_rows, self.max_parallelism)
        which = groups % k
        return [  # a loop over the writers, not the rows
            (self.writers[w][1], rows.filter(pa.array(which == w))) for w in range(k) if (which == w).any()
        ]

    def on_timer(self, out: Output) -> None:
        """The executor's idle timer: a time-bound sink buffer is sent when due."""
        for _, sink in self.writers:
            sink.on_timer()

    def on_watermark(self, watermark: int, out: Output) -> None:
        """The writers see the watermark (event-time partition commit), then it goes on."""
        for _, sink in self.writers:
            sink.on_watermark(watermark)
        out.emit_watermark(watermark)

    def end_input(self, input_index: int, out: Output) -> None:
        if self.two_phase and self.ctx.checkpointing:
            return  # the final checkpoint commits
        with _sink_files():
            for _, sink in self.writers:
                sink.flush()

    # ------------------------------------------------------------------ checkpoints
    # State: {"pending": {checkpoint id: committable}, "sink": the writer's state} with one
    # writer (the format since the first version); with several writers
    # {"pending": {checkpoint id: {writer: committable}}, "sinks": {writer: state}}.
    def rescale_snapshots(self, old: OldStates, new_range: tuple[int, int], index: int, parallelism: int) -> Any:
        """Two-phase-commit sinks: new subtask 0 takes over every old subtask's pre-committed
        transactions (so each is committed exactly once, idempotently); new subtask `i` keeps
        old subtask `i`'s own bookkeeping (part-file uuid and counter, transaction prefix), so
        it cleans up that subtask's uncommitted files. Hidden uncommitted files of old subtasks
        beyond the new parallelism are left in place (never published)."""
        states = [load_state(s) for _, s in old]
        pending: dict[Any, Any] = {}
        if index == 0:
            for i, st in enumerate(states):
                several = "sinks" in (st or {})
                for cid, committable in sorted((st or {}).get("pending", {}).items()):
                    if several:
                        for j, c in sorted(committable.items(), key=lambda jc: int(jc[0])):
                            pending[(int(cid), i, int(j))] = c
                    else:
                        pending[(int(cid), i, 0)] = committable
        own = states[index] if index < len(states) and states[index] is not None else None
        if own is None:
            return {"pending": pending, "sink": None}
        return {"pending": pending, "sink": own.get("sink"), "writer_states": own.get("sinks")}

    def snapshot_state(self, checkpoint_id: int) -> Any:
        with _sink_files():
            if self.two_phase:
                self.pending[checkpoint_id] = {
                    j: sink.prepare_commit(checkpoint_id)  # type: ignore[attr-defined]
                    for j, sink in self.writers
                }
                if len(self.writers) == 1:
                    j, sink = self.writers[0]
                    return {
                        "pending": {cid: c[j] for cid, c in self.pending.items()},
                        "sink": sink.snapshot_state(),  # type: ignore[attr-defined]
                    }
                return {
                    "pending": dict(self.pending),
                    "sinks": {j: sink.snapshot_state() for j, sink in self.writers},  # type: ignore[attr-defined]
                }
            for _, sink in self.writers:
                sink.flush()  # at-least-once: what was written is out before the checkpoint
        return None

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        ready = sorted(k for k in self.pending if k <= checkpoint_id)
        if not ready:
            return
        with _sink_files():
            for j, sink in self.writers:
                sink.commit([self.pending[k][j] for k in ready])  # type: ignore[attr-defined]
        for k in ready:
            del self.pending[k]

    def restore_state(self, handles: Any) -> None:
        if handles is None or not self.writers or not self.two_phase:
            return
        pending = handles.get("pending") or {}
        several = "sinks" in handles
        committables = []
        for k in sorted(pending):
            committables += [pending[k][j] for j in sorted(pending[k], key=int)] if several else [pending[k]]
        states = {int(j): st for j, st in (handles.get("sinks") or handles.get("writer_states") or {}).items()}
        with _sink_files():
            for i, (j, sink) in enumerate(self.writers):
                state = states.get(j, handles.get("sink") if i == 0 else None)
                # the first writer commits every restored committable again (idempotent)
                sink.restore_state(state, committables if i == 0 else [])  # type: ignore[attr-defined]
        self.pending = {}

    def close(self) -> None:
        writers, self.writers = self.writers, []
        for _, sink in writers:
            if self.two_phase and self.ctx.checkpointing:
                sink.abort()  # type: ignore[attr-defined]  # uncommitted work waits for a restore
            else:
                sink.close()


@contextmanager
def _sink_files() -> Iterator[None]:
    """An OS error on a sink's file (permission denied, disk full, ...) as a FileAccessError
    naming the file, for any connector that writes files."""
    try:
        yield
    except OSError as e:
        if not is_file_error(e):
            raise
        raise file_access_error(e, "write sink file") from None


class SinkSpec(OperatorSpec[SinkParams]):
    """Writes its input's changelog; an append-only connector refuses updates."""

    name = "Sink"
    params_type = SinkParams
    operator_class = SinkOperator
    parallel = True
    rescalable = True
    spark = SparkCapability(
        True,
        True,
        "`filesystem` (csv / json / parquet, timestamps in csv / json written as the local runner writes them; csv quoted by Spark's writer, only values holding the delimiter, a quote or a line break, where the local runner follows Flink's (Jackson's) rule and also quotes values with a space or longer than 24 characters; streaming: exactly-once file sink in append mode with the "
        "checkpoint location from `execution.checkpointing.dir`; a job killed and restarted with the same "
        "directory commits the output of an uninterrupted run), `print` (every row kind), `blackhole` "
        "(Spark's `noop`), `jdbc` (append or upsert with psycopg, one transaction per job or per micro-batch "
        "through `foreachBatch`, a replayed micro-batch skipped; docs/connectors/jdbc.md). `sink.parallelism`: "
        "the sink's rows are repartitioned into that many Spark partitions (on the PRIMARY KEY when there is one), "
        "so a file sink writes that many part files.",
    )

    def changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str:
        """The input's: whether the connector takes it is the planner's check
        (planner/changelog.py `check_sink_changelog`, from `sink_changelog_mode`)."""
        return inputs[0].changelog_mode

    def explain(self, node: PlanView) -> list[str]:
        in_names = [f.name for f in node.inputs[0].fields]
        out = [f"table=[{self.params(node).table}]", f"fields=[{', '.join(in_names)}]"]
        if self.params(node).upsert_materialize:
            out.append("upsertMaterialize=[true]")  # Flink's StreamPhysicalSink
        return out

    def explain_changelog(self, node: PlanView) -> str:
        return "NONE"

    def runs_in_parent(self, params: SinkParams) -> bool:
        return params.connector.lower() not in PARALLEL_SINKS


def sink_changelog_mode(params: SinkParams) -> str | None:
    """The changes a sink's connector can write given its options and PRIMARY KEY (None: any)."""
    try:
        factory = get_connector(params.connector)
    except ConnectorError:
        return None
    if factory.sink_changelog_mode is None:
        return None
    return factory.sink_changelog_mode(dict(params.options), tuple(params.primary_key))


def sink_update_hint(params: SinkParams) -> str:
    """The connector's advice for an updating input it cannot take ("" when none)."""
    try:
        return get_connector(params.connector).sink_update_hint
    except ConnectorError:
        return ""


SINK = register_spec(SinkSpec())
