"""The two-phase-commit sink protocol (duck-typed on connector Sinks).

A connector sink takes part in exactly-once delivery by implementing:

- `prepare_commit(checkpoint_id) -> committable`: at the barrier, make everything written
  since the last call durable but invisible, and describe it (picklable);
- `commit(committables)`: make them visible; idempotent (it is called again with the same
  committables after a restore, when the process died between the checkpoint's
  completion and the commit);
- `snapshot_state()` / `restore_state(state, committables)`: the sink's own bookkeeping;
  the restore commits `committables` and aborts every other uncommitted piece of work
  (files of later, incomplete checkpoints, in-progress files);
- `abort()`: the job stops without a final checkpoint: drop the open transaction.

The sink also gets `deferred_commit = True` before `open()` when checkpointing is on;
without checkpoints it publishes at end of input / close as a plain sink does.
"""

from __future__ import annotations

from typing import Any

_METHODS = ("prepare_commit", "commit", "snapshot_state", "restore_state", "abort")


def is_two_phase(sink: Any) -> bool:
    return all(callable(getattr(sink, m, None)) for m in _METHODS)
