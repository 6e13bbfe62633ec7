"""The operator contract (Arroyo-style): one required method, optional hooks.

An operator is built from its JobGraph node by a factory registered under the node's
`operator` name (`register_operator`). The executor calls `open` once, then
`process_batch` for every input batch, `on_watermark` when the combined input
watermark advances, `end_input` when a bounded input is exhausted, and `close`.
Everything it produces goes to `out`.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pyarrow as pa

from runtime.graph import BATCH, Node
from runtime.plugins import import_submodules


class Output:
    """Collects what an operator emits: batches (data columns first, then optional
    system columns, see runtime.batch) and watermarks."""

    def __init__(self) -> None:
        self.batches: list[pa.RecordBatch] = []
        self.watermarks: list[int] = []

    def emit(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows:
            self.batches.append(batch)

    def emit_watermark(self, watermark: int) -> None:
        self.watermarks.append(watermark)

    def drain(self) -> tuple[list[pa.RecordBatch], list[int]]:
        b, w = self.batches, self.watermarks
        self.batches, self.watermarks = [], []
        return b, w


@dataclass
class Metrics:
    """Counters an operator keeps; the executor reads them for --stats and the REST API."""

    rows_in: int = 0
    rows_out: int = 0
    batches_in: int = 0
    late_rows_dropped: int = 0
    extra: dict[str, int] = field(default_factory=dict)


@dataclass
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

    @property
    def is_batch(self) -> bool:
        return self.mode == BATCH


class CheckpointingNotSupportedError(Exception):
    """A job with checkpointing enabled contains an operator that cannot snapshot its state
    yet (the job is refused rather than silently losing that state on recovery)."""


# Operators defined in modules outside the state package's reach that hold no state
# between batches (a snapshot of them is empty).
STATELESS_OPERATORS: set[str] = {"Calc", "Union", "Exchange", "WindowTableFunction"}


class Operator:
    """Base class. Subclasses must implement `process_batch`.

    Checkpointing contract (docs/checkpointing.md): a subclass declares how it takes part
    with the class attribute `checkpointing`:

    - "stateless": nothing to snapshot (`snapshot_state` returns None);
    - "generic": the base class snapshots the keyed backend `self.state` (key index laid
      out with each key's key group) plus the attributes named in `state_attributes`
      (value arrays indexed by slot, timers, buffers...), pickled; `restore_state` puts
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

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        self.node = node
        self.ctx = ctx

    def open(self) -> None:
        """Called once before the first batch."""

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        raise NotImplementedError

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
        keyed = getattr(self, "state", None)
        attrs = {a: getattr(self, a) for a in self.state_attributes}
        if hasattr(keyed, "write_values"):  # rocksdb: values of written slots into RocksDB
            from runtime.operators.slot_state import native_snapshot

            native = native_snapshot(self, keyed, attrs)
            if native is not None:
                return native
        snap = {
            "keyed": keyed.snapshot() if keyed is not None and hasattr(keyed, "snapshot") else None,
            "attrs": attrs,
        }
        return pickle.dumps(snap, protocol=pickle.HIGHEST_PROTOCOL)

    def restore_state(self, handles: Any) -> None:
        """Restore from what snapshot_state returned."""
        if handles is None:
            return
        if checkpointing_mode(self) != "generic":
            raise CheckpointingNotSupportedError(not_supported_message(self))
        if not isinstance(handles, (bytes, dict)):  # an incremental RocksDB checkpoint
            from runtime.operators.slot_state import restore_native

            restore_native(self, handles)
            self.after_restore()
            return
        snap = pickle.loads(handles) if isinstance(handles, bytes) else handles
        keyed = getattr(self, "state", None)
        if snap.get("keyed") is not None and keyed is not None:
            keyed.restore(snap["keyed"])
        for name, value in snap["attrs"].items():
            setattr(self, name, value)
        self.after_restore()

    def after_restore(self) -> None:
        """Re-link restored attributes to this operator (the generic restore calls it)."""

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """Checkpoint `checkpoint_id` is complete (durable): two-phase-commit sinks publish
        what they pre-committed up to it. Called in the processing thread."""

    def state_size(self) -> dict[str, int]:
        """Metrics for `savepoint inspect` / job metrics: number of keys in keyed state."""
        keyed = getattr(self, "state", None)
        if keyed is not None and hasattr(keyed, "live_slots"):
            return {"keys": len(keyed.live_slots())}
        return {}

    def close(self) -> None:
        """Release resources."""


def checkpointing_mode(op: Operator) -> str | None:
    """How `op` takes part in checkpoints: "stateless", "generic", "custom" or None."""
    mode = type(op).checkpointing
    if mode is None and op.node.operator in STATELESS_OPERATORS:
        return "stateless"
    return mode


def not_supported_message(op: Operator) -> str:
    label = op.node.label or op.node.operator
    return (
        f"Checkpointing is not supported yet by operator {op.node.operator} (node {op.node.id}, {label}): "
        "its state cannot be snapshotted, so the job cannot run with 'execution.checkpointing.interval' "
        "or from a savepoint. Remove the operator from the job or disable checkpointing."
    )


OperatorFactory = Callable[[Node, OperatorContext], Operator]
_OPERATORS: dict[str, OperatorFactory] = {}


def register_operator(name: str) -> Callable[[OperatorFactory], OperatorFactory]:
    def deco(factory: OperatorFactory) -> OperatorFactory:
        _OPERATORS[name] = factory
        return factory

    return deco


def create_operator(node: Node, ctx: OperatorContext) -> Operator:
    _ensure_loaded()
    try:
        factory = _OPERATORS[node.operator]
    except KeyError:
        raise ValueError(f"the runtime has no operator named {node.operator!r}") from None
    return factory(node, ctx)


def _ensure_loaded() -> None:
    """Import the operator modules (they register themselves on import)."""
    import_submodules("runtime.operators", skip=("base",))
