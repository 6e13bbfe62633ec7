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
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from runtime.batch import ROW_KIND, data_width
from runtime.checkpoint.rescale import OldStates, load_state
from runtime.checkpoint.twophase import is_two_phase
from runtime.connectors.base import SUBTASK_INDEX, Sink, SourceContext, get_connector
from runtime.errors import ConnectorError, file_access_error, is_file_error
from runtime.graph import Node
from runtime.operators._common import system_column
from runtime.operators.base import Operator, OperatorContext, Output
from runtime.operators.spec import (
    OperatorParams,
    OperatorSpec,
    PlanRefusedError,
    PlanView,
    SparkCapability,
    register_spec,
)
from runtime.types import Field

# Connectors whose sink only appends (an update stream into one is refused, as in Flink).
APPEND_ONLY_SINKS = ("filesystem",)
# Sinks every subtask may write on its own (part files per subtask, a Kafka producer per
# subtask, or nothing); the others (print: one stdout; memory: rows for this process;
# duckdb: one writer) run once.
PARALLEL_SINKS = ("filesystem", "blackhole", "kafka", "upsert-kafka")


@dataclass(frozen=True)
class SinkParams(OperatorParams):
    """Write to table `table` through `connector` with its `options`; `schema` is the sink
    table's columns, `primary_key` its declared PRIMARY KEY (upsert sinks key on it)."""

    table: str
    connector: str
    options: dict[str, str] = field(hash=False)
    schema: tuple[Field, ...]
    primary_key: tuple[str, ...] = ()


class SinkOperator(Operator):
    """Creates the connector sink at open, writes data columns (named as the sink table's
    columns) plus `__op` when the input carries it, flushes at end of input and closes at
    close (also when the job is stopped or fails)."""

    checkpointing = "custom"

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        self.sink: Sink | None = None
        self.fields = SinkParams.of(node).schema or node.schema
        self.pending: dict[int, Any] = {}  # checkpoint id -> committable, not yet committed
        self.two_phase = False

    def open(self) -> None:
        p = SinkParams.of(self.node)
        factory = get_connector(p.connector)
        if factory.create_sink is None:
            raise ConnectorError(f"Connector '{p.connector}' can only be used as a source")
        config = dict(self.ctx.config)
        config["$internal.sink-id"] = config.get("$internal.operator-uid", "") or str(self.node.id)
        config[SUBTASK_INDEX] = str(self.ctx.subtask_index)
        sctx = SourceContext(mode=self.ctx.mode, time_zone=self.ctx.time_zone, config=config)
        options = dict(p.options)
        if p.primary_key:  # the table's PRIMARY KEY, when the planner passes it on
            options.setdefault("$internal.primary-key", ",".join(p.primary_key))
        sink = factory.create_sink(options, self.fields, sctx)
        self.sink = sink
        self.two_phase = is_two_phase(sink)
        if self.two_phase:
            sink.deferred_commit = self.ctx.checkpointing  # type: ignore[attr-defined]
        with _sink_files():
            sink.open()

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        assert self.sink is not None
        n = data_width(batch)
        cols = list(batch.columns[:n])
        names = [f.name for f in self.fields][:n] + [f"f{i}" for i in range(len(self.fields), n)]
        kinds = system_column(batch, ROW_KIND)
        if kinds is not None:
            cols.append(kinds)
            names.append(ROW_KIND)
        with _sink_files():
            self.sink.write(pa.RecordBatch.from_arrays(cols, names=names))
        self.ctx.metrics.rows_out += batch.num_rows

    def on_timer(self, out: Output) -> None:
        """The executor's idle timer: a time-bound sink buffer is sent when due."""
        if self.sink is not None:
            self.sink.on_timer()

    def end_input(self, input_index: int, out: Output) -> None:
        if self.sink is None:
            return
        if self.two_phase and self.ctx.checkpointing:
            return  # the final checkpoint commits
        with _sink_files():
            self.sink.flush()

    # ------------------------------------------------------------------ checkpoints
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
                for cid, committable in sorted((st or {}).get("pending", {}).items()):
                    pending[(int(cid), i)] = committable
        own = states[index] if index < len(states) and states[index] is not None else None
        return {"pending": pending, "sink": None if own is None else own.get("sink")}

    def snapshot_state(self, checkpoint_id: int) -> Any:
        assert self.sink is not None
        with _sink_files():
            if self.two_phase:
                self.pending[checkpoint_id] = self.sink.prepare_commit(checkpoint_id)  # type: ignore[attr-defined]
                return {"pending": dict(self.pending), "sink": self.sink.snapshot_state()}  # type: ignore[attr-defined]
            self.sink.flush()  # at-least-once: what was written is out before the checkpoint
        return None

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        ready = sorted(k for k in self.pending if k <= checkpoint_id)
        if ready and self.sink is not None:
            with _sink_files():
                self.sink.commit([self.pending[k] for k in ready])  # type: ignore[attr-defined]
            for k in ready:
                del self.pending[k]

    def restore_state(self, handles: Any) -> None:
        if handles is None or self.sink is None or not self.two_phase:
            return
        pending = handles.get("pending") or {}
        with _sink_files():
            self.sink.restore_state(handles.get("sink"), [pending[k] for k in sorted(pending)])  # type: ignore[attr-defined]
        self.pending = {}

    def close(self) -> None:
        if self.sink is not None:
            sink, self.sink = self.sink, None
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
        "`filesystem` (csv / json / parquet; streaming: exactly-once file sink in append mode with the "
        "checkpoint location from `execution.checkpointing.dir`; a job killed and restarted with the same "
        "directory commits the output of an uninterrupted run), `print` (every row kind), `blackhole` "
        "(Spark's `noop`).",
    )

    def changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str:
        p = self.params(node)
        append_only = p.connector in APPEND_ONLY_SINKS or sink_changelog_mode(p.connector, p.options) == "I"
        if append_only and inputs[0].changelog_mode != "I":
            raise PlanRefusedError(
                f"Table sink '{p.table}' doesn't support consuming update changes which is produced "
                f"by node {inputs[0].operator}"
            )
        return inputs[0].changelog_mode

    def explain(self, node: PlanView) -> list[str]:
        in_names = [f.name for f in node.inputs[0].fields]
        return [f"table=[{self.params(node).table}]", f"fields=[{', '.join(in_names)}]"]

    def explain_changelog(self, node: PlanView) -> str:
        return "NONE"

    def runs_in_parent(self, params: SinkParams) -> bool:
        return params.connector.lower() not in PARALLEL_SINKS


def sink_changelog_mode(connector: str, options: dict[str, str]) -> str | None:
    """The changes a sink's connector can write given these options (None: any)."""
    try:
        factory = get_connector(connector)
    except ConnectorError:
        return None
    return None if factory.sink_changelog_mode is None else factory.sink_changelog_mode(options)


SINK = register_spec(SinkSpec())
