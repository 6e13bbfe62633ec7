"""The operator contract (Arroyo-style): one required method, optional hooks.

An operator is built from its JobGraph node by a factory registered under the node's
`operator` name (`register_operator`). The executor calls `open` once, then
`process_batch` for every input batch, `on_watermark` when the combined input
watermark advances, `end_input` when a bounded input is exhausted, and `close`.
Everything it produces goes to `out`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from runtime.graph import BATCH, Node


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
    # Keyed state backend (runtime.state); in-memory until the state issue lands.
    state: Any = None

    @property
    def is_batch(self) -> bool:
        return self.mode == BATCH


class Operator:
    """Base class. Subclasses must implement `process_batch`."""

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
        return None

    def restore_state(self, handles: Any) -> None:
        """Restore from what snapshot_state returned."""

    def close(self) -> None:
        """Release resources."""


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


_loaded = False


def _ensure_loaded() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    import importlib
    import pkgutil

    import runtime.operators as pkg

    for mod in pkgutil.iter_modules(pkg.__path__):
        if mod.name not in ("base",) and not mod.name.startswith("_"):
            importlib.import_module(f"runtime.operators.{mod.name}")
