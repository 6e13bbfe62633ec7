"""Checkpoints and savepoints for the local executor (docs/checkpointing.md).

Asynchronous barrier snapshotting in one process: between two source polls nothing is
in flight, so the executor forwards the barrier through the DAG in topological order
(aligned by construction), every operator snapshots, sources record their offsets; the
snapshot is uploaded to `execution.checkpointing.dir` through `pyarrow.fs` off the
processing thread, metadata last and atomically; once complete, two-phase-commit sinks
publish what they pre-committed.
"""

from runtime.checkpoint.config import CheckpointConfig
from runtime.checkpoint.coordinator import CheckpointCoordinator
from runtime.checkpoint.metadata import CheckpointMetadata, OperatorState
from runtime.checkpoint.restore import RestoreError, find_latest, load_checkpoint, resolve_restore_path
from runtime.checkpoint.storage import CheckpointStorage
from runtime.checkpoint.uid import operator_uids

__all__ = [
    "CheckpointConfig",
    "CheckpointCoordinator",
    "CheckpointMetadata",
    "CheckpointStorage",
    "OperatorState",
    "RestoreError",
    "find_latest",
    "load_checkpoint",
    "operator_uids",
    "resolve_restore_path",
]
