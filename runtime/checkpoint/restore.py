"""Finding and loading a checkpoint or savepoint, and matching its operators to a job.

`execution.savepoint.path` (or `streamsql --restore`) names a snapshot directory (one
holding `_metadata`), or `latest`: the newest *complete* checkpoint under the job's
checkpoint directory (`<dir>/<job-id>/chk-<n>/_metadata`; a checkpoint whose metadata is
missing or unreadable was interrupted and is skipped).
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from typing import Any

from runtime.checkpoint.incremental import download
from runtime.checkpoint.metadata import CheckpointMetadata
from runtime.checkpoint.storage import METADATA, CheckpointStorage
from runtime.errors import JobError
from runtime.state.slot_values import NativeSnapshot


class RestoreError(JobError):
    """The snapshot cannot be used for this job (missing, corrupt, or state that no longer maps)."""


@dataclass
class LoadedSnapshot:
    storage: CheckpointStorage
    rel: str  # the snapshot directory relative to storage.root
    metadata: CheckpointMetadata

    def state(self, uid: str) -> Any:
        """The operator's snapshot as its `snapshot_state` returned it (None: no state)."""
        op = self.metadata.operator(uid)
        if op is None or op.file is None:
            return None
        return self._load(op.file)

    def _load(self, file: str) -> Any:
        """Unpickle a state file; an incremental RocksDB handle also gets its files
        downloaded (runtime/checkpoint/incremental.py)."""
        data = pickle.loads(self.storage.read(f"{self.rel}/{file}"))
        if isinstance(data, NativeSnapshot):
            download(self.storage, self.rel, data)
        return data

    def subtask_states(self, uid: str) -> list[tuple[tuple[int, int], Any]]:
        """Every subtask's snapshot of the operator with its key-group range, in subtask
        order (one entry covering all key groups for a single-subtask snapshot; empty
        when the operator is not in the snapshot)."""
        op = self.metadata.operator(uid)
        if op is None:
            return []
        if not op.subtasks:
            return [((0, self.metadata.max_parallelism - 1), self.state(uid))]
        out = []
        for st in sorted(op.subtasks, key=lambda s: s.index):
            data = None if st.file is None else self._load(st.file)
            out.append(((int(st.key_group_range[0]), int(st.key_group_range[1])), data))
        return out

    @property
    def location(self) -> str:
        return self.storage.display(self.rel)


def _read_metadata(storage: CheckpointStorage, rel: str) -> CheckpointMetadata | None:
    try:
        return CheckpointMetadata.from_json(storage.read(f"{rel}/{METADATA}" if rel else METADATA))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def find_latest(directory: str, job_id: str, config: dict[str, str] | None = None) -> LoadedSnapshot | None:
    """The newest complete checkpoint of `job_id` under `directory`, or None."""
    storage = CheckpointStorage(directory, config)
    chks = []
    for name in storage.list_dirs(job_id):
        if name.startswith("chk-") and name[4:].isdigit():
            chks.append(int(name[4:]))
    for n in sorted(chks, reverse=True):
        rel = f"{job_id}/chk-{n}"
        meta = _read_metadata(storage, rel)
        if meta is not None:
            return LoadedSnapshot(storage, rel, meta)
    return None


def load_checkpoint(path: str, config: dict[str, str] | None = None) -> LoadedSnapshot:
    """The snapshot at `path` (its directory, or its `_metadata` file)."""
    path = path.rstrip("/")
    if path.endswith("/" + METADATA):
        path = path[: -len(METADATA) - 1]
    storage = CheckpointStorage(path, config)
    meta = _read_metadata(storage, "")
    if meta is None:
        raise RestoreError(
            f"Cannot restore from '{path}': no readable {METADATA} there (not a complete checkpoint or savepoint)."
        )
    return LoadedSnapshot(storage, "", meta)


def resolve_restore_path(
    restore: str | None, directory: str | None, job_id: str, config: dict[str, str] | None = None
) -> LoadedSnapshot | None:
    """What `execution.savepoint.path` means for this job: None to start fresh. `latest`
    with no complete checkpoint yet also starts fresh (the job had not checkpointed)."""
    if not restore:
        return None
    if restore.strip().lower() == "latest":
        if not directory:
            raise RestoreError(
                "'--restore latest' needs the job's checkpoint directory: set 'execution.checkpointing.dir'."
            )
        return find_latest(directory, job_id, config)
    return load_checkpoint(restore, config)


def match_report(unclaimed: list[str], mismatched: list[str], location: str) -> str:
    lines = [f"Cannot restore the job from '{location}': the snapshot holds state that the changed job cannot take."]
    if unclaimed:
        lines.append("State of operators that no longer exist in the job (unclaimed):")
        lines += [f"  - {u}" for u in unclaimed]
    if mismatched:
        lines.append("Operators whose input or output schema changed (their state no longer fits):")
        lines += [f"  - {m}" for m in mismatched]
    lines.append(
        "Set 'execution.savepoint.ignore-unclaimed-state' = 'true' to drop that state and start those operators empty."
    )
    return "\n".join(lines)
