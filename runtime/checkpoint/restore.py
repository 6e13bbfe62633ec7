"""Finding, verifying and loading a checkpoint or savepoint, and matching its operators
to a job.

`execution.savepoint.path` (or `streamsql --restore`) names a snapshot directory (one
holding `_metadata`), or `latest`: the newest checkpoint under the job's checkpoint
directory (`<dir>/<job-id>/chk-<n>/`) that *verifies*, as Flink takes the latest completed
checkpoint. Verifying means: `_metadata` parses and matches its own checksum, and every
state file it lists (and every RocksDB file those name) is there with the SHA-256 that
`_metadata` recorded. All of it is checked before any operator sees any state, so a
corrupt file is never partly applied.

`latest` says on stderr which checkpoint it took and which newer ones it skipped and why.
A directory without `_metadata` is a checkpoint that never completed (metadata is written
last); if every checkpoint directory is like that the job starts fresh (it never
completed one). If some completed checkpoint exists but none verifies, the restore fails
naming each one: it never silently starts over, which would duplicate output.
"""

from __future__ import annotations

import sys
from dataclasses import field
from typing import Any

from runtime.checkpoint import format as state_format
from runtime.checkpoint.incremental import download, resolve_path
from runtime.checkpoint.metadata import CheckpointMetadata
from runtime.checkpoint.storage import METADATA, CheckpointStorage, SnapshotCorruptError
from runtime.errors import JobError, file_access_error
from runtime.frozen import mutable_dataclass
from runtime.state.slot_values import NativeSnapshot


class RestoreError(JobError):
    """The snapshot cannot be used for this job (missing, corrupt, or state that no longer maps)."""


@mutable_dataclass
class LoadedSnapshot:
    """A snapshot chosen for a restore, verified, with the operators' state read on demand."""

    storage: CheckpointStorage
    rel: str  # the snapshot directory relative to storage.root
    metadata: CheckpointMetadata
    # `latest`: the newer checkpoints passed over, with the reason (reported on stderr)
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def state(self, uid: str) -> Any:
        """The operator's snapshot as its `snapshot_state` returned it (None: no state)."""
        op = self.metadata.operator(uid)
        if op is None or op.file is None:
            return None
        return self._load(op.file, op.checksum)

    def _read(self, file: str, checksum: str) -> memoryview:
        """A state file's bytes, after checking them against the checksum in `_metadata`
        (in a buffer of their own: decoding takes its arrays over without copying)."""
        path = f"{self.rel}/{file}" if self.rel else file
        try:
            data = self.storage.read_writable(path)
        except OSError as e:
            raise SnapshotCorruptError(f"state file {file} cannot be read ({e})") from None
        if not checksum:
            raise SnapshotCorruptError(f"state file {file} has no checksum in {METADATA}")
        if state_format.digest(data) != checksum:
            raise SnapshotCorruptError(f"state file {file} does not match its checksum in {METADATA}")
        return data

    def _decode(self, file: str, checksum: str) -> Any:
        try:
            return state_format.decode(self._read(file, checksum), f"state file {file}")
        except state_format.StateFormatError as e:
            raise SnapshotCorruptError(str(e)) from None

    def _load(self, file: str, checksum: str) -> Any:
        """Decode a verified state file; an incremental RocksDB handle also gets its files
        downloaded, each checked against its checksum (runtime/checkpoint/incremental.py)."""
        try:
            data = self._decode(file, checksum)
            if isinstance(data, NativeSnapshot):
                download(self.storage, self.rel, data)
        except SnapshotCorruptError as e:
            raise RestoreError(f"Cannot restore from '{self.location}': {e}.") from None
        return data

    def files(self) -> list[tuple[str, str]]:
        """Every (state file, checksum) `_metadata` lists."""
        out = []
        for o in self.metadata.operators:
            if o.file is not None:
                out.append((o.file, o.checksum))
            out += [(st.file, st.checksum) for st in o.subtasks if st.file is not None]
        return out

    def verify(self) -> None:
        """Check every file of the snapshot against `_metadata` (SnapshotCorruptError if one
        fails), decoding state files only to reach the RocksDB files they name."""
        native = self.metadata.state_backend == "rocksdb"
        for file, checksum in self.files():
            if not native:
                self._read(file, checksum)
                continue
            data = self._decode(file, checksum)
            if isinstance(data, NativeSnapshot):
                verify_native(self.storage, self.rel, data)

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
            data = None if st.file is None else self._load(st.file, st.checksum)
            out.append(((int(st.key_group_range[0]), int(st.key_group_range[1])), data))
        return out

    @property
    def location(self) -> str:
        return self.storage.display(self.rel)


def verify_native(storage: CheckpointStorage, rel: str, snap: NativeSnapshot) -> None:
    """Check the RocksDB files of an incremental handle against the digests it recorded."""
    for name, path in snap.files.items():
        want = snap.digests.get(name, "")
        h = state_format.Digest()
        try:
            with storage.fs.open_input_stream(resolve_path(storage, rel, path)) as f:
                while chunk := f.read(1 << 20):
                    h.update(chunk)
        except OSError as e:
            raise SnapshotCorruptError(f"RocksDB file {path} cannot be read ({e})") from None
        if not want or h.text() != want:
            raise SnapshotCorruptError(f"RocksDB file {path} does not match its checksum")


def _exists(storage: CheckpointStorage, rel: str) -> bool:
    """Whether `rel` exists; a file the OS will not even stat (permission denied) is a
    SnapshotCorruptError naming it (it cannot be restored)."""
    try:
        return storage.exists(rel)
    except OSError as e:
        raise SnapshotCorruptError(str(file_access_error(e, "read", storage.display(rel))).rstrip(".")) from None


def _read_metadata(storage: CheckpointStorage, rel: str) -> CheckpointMetadata:
    """The parsed, self-checked `_metadata` of the snapshot at `rel` (SnapshotCorruptError)."""
    try:
        data = storage.read(f"{rel}/{METADATA}" if rel else METADATA)
    except OSError as e:
        raise SnapshotCorruptError(f"{METADATA} cannot be read ({e})") from None
    try:
        return CheckpointMetadata.from_json(data)
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise SnapshotCorruptError(str(e) if isinstance(e, ValueError) else f"{METADATA} is malformed ({e})") from None


def find_latest(directory: str, job_id: str, config: dict[str, str] | None = None) -> LoadedSnapshot | None:
    """The newest checkpoint of `job_id` under `directory` that verifies; None when the job
    never completed one (no checkpoint directory holds a `_metadata`). RestoreError when
    completed checkpoints exist but none verifies."""
    storage = CheckpointStorage(directory, config)
    try:
        names = storage.list_dirs(job_id)
    except OSError as e:
        raise RestoreError(
            f"Cannot restore job '{job_id}' from '--restore latest': {file_access_error(e, 'list')}"
        ) from None
    chks = sorted((int(name[4:]) for name in names if name.startswith("chk-") and name[4:].isdigit()), reverse=True)
    skipped: list[tuple[str, str]] = []
    completed = False
    for n in chks:
        rel = f"{job_id}/chk-{n}"
        try:
            if not _exists(storage, f"{rel}/{METADATA}"):
                skipped.append((f"chk-{n}", f"incomplete (no {METADATA}: the checkpoint never completed)"))
                continue
        except SnapshotCorruptError as e:
            skipped.append((f"chk-{n}", str(e)))
            completed = True
            continue
        completed = True
        try:
            snap = LoadedSnapshot(storage, rel, _read_metadata(storage, rel))
            snap.verify()
        except SnapshotCorruptError as e:
            skipped.append((f"chk-{n}", str(e)))
            continue
        snap.skipped = skipped
        _say(f"Restoring job '{job_id}' from checkpoint {n} ({snap.location}).", skipped)
        return snap
    if completed:
        lines = [
            f"Cannot restore job '{job_id}' from '--restore latest': no checkpoint under '{storage.display(job_id)}' verifies."
        ]
        lines += [f"  - {name}: {why}" for name, why in skipped]
        lines.append("Restore a savepoint or an older copy explicitly, or start the job without '--restore'.")
        raise RestoreError("\n".join(lines))
    if skipped:
        _say(f"No completed checkpoint of job '{job_id}' under '{storage.display(job_id)}': starting fresh.", skipped)
    return None


def _say(headline: str, skipped: list[tuple[str, str]]) -> None:
    """Tell the user (stderr) which snapshot a `latest` restore took and what it skipped."""
    lines = [headline]
    if skipped:
        lines.append("Skipped newer checkpoints:")
        lines += [f"  - {name}: {why}" for name, why in skipped]
    print("\n".join(lines), file=sys.stderr, flush=True)


def load_checkpoint(path: str, config: dict[str, str] | None = None, verify: bool = True) -> LoadedSnapshot:
    """The snapshot at `path` (its directory, or its `_metadata` file), verified (a worker
    process loading what its parent verified passes `verify=False`; each file is still
    checked against its checksum when it is read)."""
    path = path.rstrip("/")
    if path.endswith("/" + METADATA):
        path = path[: -len(METADATA) - 1]
    storage = CheckpointStorage(path, config)
    try:
        if not _exists(storage, METADATA):
            raise SnapshotCorruptError(f"no {METADATA} there (not a complete checkpoint or savepoint)")
        snap = LoadedSnapshot(storage, "", _read_metadata(storage, ""))
        if verify:
            snap.verify()
    except SnapshotCorruptError as e:
        raise RestoreError(f"Cannot restore from '{path}': {e}.") from None
    return snap


def resolve_restore_path(
    restore: str | None, directory: str | None, job_id: str, config: dict[str, str] | None = None
) -> LoadedSnapshot | None:
    """What `execution.savepoint.path` means for this job: None to start fresh (no
    `--restore`, or `latest` for a job that never completed a checkpoint)."""
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
