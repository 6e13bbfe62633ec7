"""The operator contract (Arroyo-style): one required method, optional hooks.

An operator is built from its JobGraph node by its kind's spec (`OperatorSpec.create`,
runtime/operators/spec.py), found by the node's `operator` name. The executor calls `open` once, then
`process_batch` for every input batch, `on_watermark` when the combined input
watermark advances, `end_input` when a bounded input is exhausted, and `close`.
Everything it produces goes to `out`.

Every hook an executor (runtime/executor/task.py) calls is declared on `Operator` with a
default, so an executor never asks whether an operator has a hook: sources implement
`poll`, a WatermarkAssigner `is_idle`, a MiniBatchAssigner `on_timer`, operators with
custom state `snapshot_state` / `restore_state` / `rescale_snapshots`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import field
from typing import TYPE_CHECKING, Any, ClassVar

import pyarrow as pa

from runtime.batch import MAX_WATERMARK, MIN_WATERMARK
from runtime.checkpoint import format as state_format
from runtime.frozen import mutable_dataclass
from runtime.graph import BATCH, Node
from runtime.operators.slot_state import native_snapshot, restore_native
from runtime.operators.spec import spec_for
from runtime.state import KeyedStateBackend

if TYPE_CHECKING:
    from runtime.checkpoint.rescale import OldStates


class Output:
    """Collects what an operator emits: batches (data columns first, then optional
    system columns, see runtime.batch) and watermarks.

    `emit_later(batches)`: output produced on demand, for an operator whose final output
    follows its input's size rather than its state (BATCH window groups at `end_input`).
    An executor that takes it (`later_ok`, the task runner) pulls one batch at a time and
    hands it downstream (the local executor yields it to the caller) before producing the
    next, so those batches never exist all at once; elsewhere they are emitted at once."""

    def __init__(self, later_ok: bool = False) -> None:
        self.batches: list[pa.RecordBatch] = []
        self.watermarks: list[int] = []
        self.later_ok = later_ok
        self.later: list[Iterator[pa.RecordBatch]] = []

    def emit(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows:
            self.batches.append(batch)

    def emit_later(self, batches: Iterator[pa.RecordBatch]) -> None:
        """Batches to emit after everything emitted so far in this call (see the class)."""
        if self.later_ok:
            self.later.append(batches)
            return
        for b in batches:
            self.emit(b)

    def emit_watermark(self, watermark: int) -> None:
        self.watermarks.append(watermark)

    def drain(self) -> tuple[list[pa.RecordBatch], list[int]]:
        b, w = self.batches, self.watermarks
        self.batches, self.watermarks = [], []
        return b, w


@mutable_dataclass
class Metrics:
    """Counters an operator keeps; the executor reads them for --stats and the REST API."""

    rows_in: int = 0
    rows_out: int = 0
    batches_in: int = 0
    late_rows_dropped: int = 0
    extra: dict[str, int] = field(default_factory=dict)


@mutable_dataclass
class OperatorContext:
    """What an operator gets at open time."""

    mode: str
    config: dict[str, str]
    time_zone: str = "UTC"
    subtask_index: int = 0
    parallelism: int = 1
    metrics: Metrics = field(default_factory=Metrics)
    # Keyed state backend (runtime.state), chosen by `state.backend.type`.
    state: Any = None
    # Checkpoints are taken (sinks then defer publishing to checkpoint completion).
    checkpointing: bool = False
    # Set by the executor for an incremental checkpoint: where a generic operator with a
    # rocksdb backend creates its RocksDB checkpoint (runtime/state/slot_values.py).
    snapshot_dir: str | None = None
    # What a non-deterministic function keeps from one batch to the next, per call site
    # (EvalContext.state): a seeded RAND's generator, which Flink keeps per operator
    # instance, so its sequence runs on across batches instead of restarting.
    function_state: dict[int, Any] = field(default_factory=dict)

    @property
    def is_batch(self) -> bool:
        return self.mode == BATCH


class CheckpointingNotSupportedError(Exception):
    """A job with checkpointing enabled contains an operator that cannot snapshot its state
    yet (the job is refused rather than silently losing that state on recovery)."""


class Operator:
    """Base class. Subclasses must implement `process_batch`.

    Checkpointing contract (docs/checkpointing.md): a subclass declares how it takes part
    with the class attribute `checkpointing`:

    - "stateless": nothing to snapshot (`snapshot_state` returns None);
    - "generic": the base class snapshots the keyed backend `self.state` (key index laid
      out with each key's key group) plus the attributes named in `state_attributes`
      (value arrays indexed by slot, timers, buffers...), encoded (runtime/checkpoint/format.py); `restore_state` puts
      them back. Most operators need nothing more;
    - "custom": the operator overrides `snapshot_state` / `restore_state` itself;
    - None (the default): not declared. A job with checkpointing enabled that contains
      such an operator is refused at start with a message naming it
      (`CheckpointingNotSupportedError`), so no state is silently lost.
    """

    checkpointing: ClassVar[str | None] = None
    state_attributes: ClassVar[tuple[str, ...]] = ()
    # Top-level state attributes that are 1-D arrays indexed by slot: with the rocksdb
    # backend their values are written into RocksDB (runtime/state/slot_values.py).
    slot_attributes: ClassVar[tuple[str, ...]] = ()
    # How each of `state_attributes` merges when a "generic" operator is restored with
    # another parallelism ({attribute: kind}, kinds in runtime.checkpoint.rescale.GENERIC_KINDS).
    state_merge: ClassVar[dict[str, str]] = {}
    # The attributes holding the last watermark the operator saw, which its snapshot keeps
    # (`forget_drained_watermark` resets them after a restore).
    watermark_attributes: ClassVar[tuple[str, ...]] = ()

    # The keyed state backend a stateful operator keeps its keys in (the generic snapshot
    # and `state_size` read it); None for operators without keyed state.
    state: KeyedStateBackend | None = None
    # Set by the executor before `open`: the changelog mode of every input edge ("I",
    # "I,UB,UA,D", ...); None when unknown (then an operator must assume retractions).
    input_changelog_modes: list[str] | None = None
    # A source restored from a snapshot taken after it had read everything: the executor
    # does not poll it again.
    finished: bool = False
    # A source that divides its input among the subtasks itself (a table scan reads its
    # share of the splits). Any other source (VALUES) is read by subtask 0 alone: the
    # others end their output at once.
    splits_input: ClassVar[bool] = False

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        self.node = node
        self.ctx = ctx

    def open(self) -> None:
        """Called once before the first batch."""

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        raise NotImplementedError

    def poll(self, max_rows: int) -> pa.RecordBatch | None:
        """Sources (nodes without inputs): the next batch of at most `max_rows` rows (an
        empty batch when nothing is available now), or None once the input is exhausted."""
        raise NotImplementedError(f"operator {self.node.operator} has no input to poll: it is not a source")

    def is_idle(self) -> bool | None:
        """Whether this operator's output is idle (its watermark must not hold back a
        multi-input consumer). None, the default: idle exactly when all its inputs are (a
        source without idleness detection is never idle). A WatermarkAssigner answers
        from its idle timeout."""
        return None

    def on_timer(self, out: Output) -> None:
        """Processing time passed while the sources had nothing to read: an operator with
        a latency bound (the MiniBatchAssigner) may flush what it buffers."""

    def on_watermark(self, watermark: int, out: Output) -> None:
        """The combined input watermark advanced to `watermark` (ms). Fire timers/windows,
        then forward it (the default forwards it unchanged)."""
        out.emit_watermark(watermark)

    def end_input(self, input_index: int, out: Output) -> None:
        """Bounded input `input_index` is exhausted (batch mode: emit final results)."""

    def prepare_snapshot_pre_barrier(self, checkpoint_id: int, out: Output) -> None:
        """Flush buffers before a checkpoint barrier is forwarded."""

    def snapshot_state(self, checkpoint_id: int) -> Any:
        """A picklable snapshot of everything this operator keeps between batches (taken
        when the checkpoint barrier reaches it; the default implements "generic")."""
        mode = checkpointing_mode(self)
        if mode == "stateless":
            return None
        if mode != "generic":
            raise CheckpointingNotSupportedError(not_supported_message(self))
        keyed = self.state
        attrs = {a: getattr(self, a) for a in self.state_attributes}
        if keyed is not None and keyed.stores_values:  # rocksdb: values of written slots into RocksDB
            native = native_snapshot(self, keyed, attrs)
            if native is not None:
                return native
        snap = {"keyed": keyed.snapshot() if keyed is not None else None, "attrs": attrs}
        return state_format.pack(snap)

    def restore_state(self, handles: Any) -> None:
        """Restore from what snapshot_state returned."""
        if handles is None:
            return
        if checkpointing_mode(self) != "generic":
            raise CheckpointingNotSupportedError(not_supported_message(self))
        if not isinstance(handles, (bytes, dict)):  # an incremental RocksDB checkpoint
            restore_native(self, handles)
            self.after_restore()
            return
        snap = state_format.unpack(handles) if isinstance(handles, bytes) else handles
        keyed = self.state
        if snap.get("keyed") is not None and keyed is not None:
            keyed.restore(snap["keyed"])
        for name, value in snap["attrs"].items():
            setattr(self, name, value)
        self.after_restore()

    def rescale_snapshots(
        self, old: OldStates, new_range: tuple[int, int], subtask_index: int, parallelism: int
    ) -> Any:
        """The state subtask `subtask_index` of `parallelism` restores from, built from the
        old subtasks' `((first, last), state)` entries (a snapshot taken with another
        parallelism): keep exactly the keys whose key group is in `new_range`. The default
        handles "stateless" (None) and "generic" operators (`state_merge`); an operator
        with custom state overrides it next to its `snapshot_state`. Called through
        runtime.checkpoint.rescale.rescale_operator_states, which handles the same-layout
        case first."""
        from runtime.checkpoint.rescale import cannot_rescale_message, merge_generic  # start-up: restores
        from runtime.checkpoint.restore import RestoreError  # start-up: restores

        mode = checkpointing_mode(self)
        if mode == "stateless":
            return None
        if mode == "generic":
            return merge_generic(self, old, new_range, subtask_index)
        raise RestoreError(cannot_rescale_message(self))

    def after_restore(self) -> None:
        """Re-link restored attributes to this operator (the generic restore calls it)."""

    def forget_drained_watermark(self) -> None:
        """Called after a restore: a `watermark_attributes` value restored as MAX_WATERMARK
        (a savepoint taken after STOP ... WITH DRAIN sent the end of event time) goes back
        to MIN_WATERMARK, so the restored run's watermarks, derived again from its sources,
        count and its rows are not all late. Flink's window operator skips a restored
        MAX_WATERMARK the same way (WindowAggOperator.initializeState); its other operators
        keep no watermark in their state."""
        for name in self.watermark_attributes:
            if getattr(self, name) == MAX_WATERMARK:
                setattr(self, name, MIN_WATERMARK)

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """Checkpoint `checkpoint_id` is complete (durable): two-phase-commit sinks publish
        what they pre-committed up to it. Called in the processing thread."""

    def state_size(self) -> dict[str, int]:
        """Metrics for `savepoint inspect` / job metrics: number of keys in keyed state."""
        keyed = self.state
        if keyed is not None:
            return {"keys": len(keyed.live_slots())}
        return {}

    def close(self) -> None:
        """Release resources."""


def checkpointing_mode(op: Operator) -> str | None:
    """How `op` takes part in checkpoints: "stateless", "generic", "custom" or None."""
    return type(op).checkpointing


def not_supported_message(op: Operator) -> str:
    label = op.node.label or op.node.operator
    return (
        f"Checkpointing is not supported yet by operator {op.node.operator} (node {op.node.id}, {label}): "
        "its state cannot be snapshotted, so the job cannot run with 'execution.checkpointing.interval' "
        "or from a savepoint. Remove the operator from the job or disable checkpointing."
    )


def create_operator(node: Node, ctx: OperatorContext) -> Operator:
    """The runtime operator for `node`, built by its kind's spec (runtime/operators/spec.py;
    `spec_for` loads the operator modules when the kind's is not loaded yet)."""
    spec = spec_for(node.operator)
    if spec is None:
        raise ValueError(f"the runtime has no operator named {node.operator!r}")
    return spec.create(node, ctx)
