"""Checkpoints and savepoints for the local executor (docs/checkpointing.md).

Asynchronous barrier snapshotting in one process: between two source polls nothing is
in flight, so the executor forwards the barrier through the DAG in topological order
(aligned by construction), every operator snapshots, sources record their offsets; the
snapshot is uploaded to `execution.checkpointing.dir` through `pyarrow.fs` off the
processing thread, metadata last and atomically; once complete, two-phase-commit sinks
publish what they pre-committed.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

# Names re-exported lazily: the planner imports `runtime.checkpoint.config` (durations) on
# every start-up, and executing this package eagerly would pull in hashlib, the storage
# and restore machinery for a job that never checkpoints.
_EXPORTS = {
    "CheckpointConfig": "runtime.checkpoint.config",
    "CheckpointCoordinator": "runtime.checkpoint.coordinator",
    "CheckpointMetadata": "runtime.checkpoint.metadata",
    "CheckpointStorage": "runtime.checkpoint.storage",
    "OperatorState": "runtime.checkpoint.metadata",
    "RestoreError": "runtime.checkpoint.restore",
    "find_latest": "runtime.checkpoint.restore",
    "load_checkpoint": "runtime.checkpoint.restore",
    "operator_uids": "runtime.checkpoint.uid",
    "resolve_restore_path": "runtime.checkpoint.restore",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'runtime.checkpoint' has no attribute {name!r}")
