"""RocksDB checkpoints, full and incremental (`execution.checkpointing.incremental`).

With the `rocksdb` backend a generic operator answers a checkpoint with a
`NativeSnapshot` (runtime/operators/slot_state.py): a RocksDB checkpoint of its working
database in a local directory (SST files hard-linked, so creating it is cheap) and a small
residual (runtime/checkpoint/format.py). This module decides what to upload, as Flink's
`RocksIncrementalSnapshotStrategy` does:

- SST files are immutable, so one already uploaded by a *completed* checkpoint is only
  referenced again; new SST files go to `<dir>/<job-id>/shared/<uid>/<uuid>-<name>`
  (a random prefix: file numbers restart in every working database);
- the other files (MANIFEST, CURRENT, OPTIONS, WAL) are small and go into the checkpoint
  directory itself (`chk-<n>/native-<uid>/`);
- `_metadata` lists every shared file each operator needs (`OperatorState.shared_files`),
  so retention can delete a shared file once no retained (or in-flight) checkpoint lists
  it (`collect_garbage`): a file a retained checkpoint needs is never deleted.

Full (not incremental): every file of the RocksDB checkpoint is uploaded into the
checkpoint directory, nothing is shared. Savepoints never take this path (canonical and self-contained, as in Flink). Restore
downloads the files of a handle into a local directory (`download`) and the operator
reads keys and values back from it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from dataclasses import field

from runtime.checkpoint.format import Digest
from runtime.checkpoint.metadata import CheckpointMetadata
from runtime.checkpoint.options import INCREMENTAL
from runtime.checkpoint.storage import METADATA, CheckpointStorage, SnapshotCorruptError
from runtime.frozen import mutable_dataclass
from runtime.state.options import ROCKSDB_LOCAL_DIR, backend_kind
from runtime.state.slot_values import NativeSnapshot

SHARED = "shared"
PARENT = "../"  # a file path relative to the job directory, not the checkpoint's


def native_checkpoints(config: dict[str, str]) -> bool:
    """Checkpoints of generic operators are RocksDB checkpoints (the backend is rocksdb)."""
    return backend_kind(config) == "rocksdb"


def incremental_enabled(config: dict[str, str]) -> bool:
    """Incremental checkpoints apply: asked for and the backend is rocksdb (hashmap ignores it)."""
    return INCREMENTAL.get(config) and native_checkpoints(config)


@mutable_dataclass
class UploadPlan:
    """What one operator's incremental checkpoint uploads."""

    files: list[tuple[str, str]] = field(default_factory=list)  # (local path, path under the storage root)
    shared: list[str] = field(default_factory=list)  # shared files it needs, relative to the job dir
    new_bytes: int = 0  # bytes uploaded by this checkpoint (shared files reused are not counted)
    total_bytes: int = 0  # bytes of the whole RocksDB checkpoint


class IncrementalCheckpoints:
    """Per job: where operators create RocksDB checkpoints and which SST files are
    already in shared storage (confirmed once a checkpoint that uploaded them completed)."""

    def __init__(self, config: dict[str, str]) -> None:
        self.native = native_checkpoints(config)  # rocksdb: checkpoints are RocksDB checkpoints
        self.enabled = incremental_enabled(config)  # ... sharing SST files with earlier ones
        base = ROCKSDB_LOCAL_DIR.get(config) or tempfile.gettempdir()
        self.local_base = os.path.abspath(os.path.expanduser(base))
        # (database, file name, size) -> (path of the shared copy relative to the job dir, digest)
        self._uploaded: dict[tuple[str, str, int], tuple[str, str]] = {}
        self._pending: dict[int, dict[tuple[str, str, int], tuple[str, str]]] = {}

    def snapshot_dir(self, cid: int, uid: str) -> str:
        """A fresh local path for an operator's RocksDB checkpoint (must not exist yet)."""
        parent = os.path.join(self.local_base, f"streamsql-chk-{os.getpid()}-{uuid.uuid4().hex[:8]}-{cid}")
        return os.path.join(parent, uid)  # the operator creates it only if it takes one

    def plan(self, cid: int, uid: str, snap: NativeSnapshot, chk_rel: str) -> UploadPlan:
        """Fill `snap.files` and list the uploads: only SST files not uploaded by a
        completed checkpoint of this database are new. Not incremental: every file is
        uploaded into the checkpoint directory (a self-contained full checkpoint)."""
        assert snap.local_dir is not None
        job_rel = chk_rel.rsplit("/", 1)[0]
        plan = UploadPlan()
        pending = self._pending.setdefault(cid, {})
        for name in sorted(os.listdir(snap.local_dir)):
            local = os.path.join(snap.local_dir, name)
            size = os.path.getsize(local)
            plan.total_bytes += size
            if name.endswith(".sst") and self.enabled:
                ident = (snap.db_id, name, size)
                known = self._uploaded.get(ident)
                if known is None:
                    known = (f"{SHARED}/{uid}/{uuid.uuid4().hex}-{name}", file_digest(local))
                    plan.files.append((local, f"{job_rel}/{known[0]}"))
                    plan.new_bytes += size
                    pending[ident] = known
                rel, snap.digests[name] = known
                plan.shared.append(rel)
                snap.files[name] = PARENT + rel
            else:
                rel = f"native-{uid}/{name}"
                plan.files.append((local, f"{chk_rel}/{rel}"))
                plan.new_bytes += size
                snap.files[name] = rel
                snap.digests[name] = file_digest(local)
        return plan

    def complete(self, cid: int) -> None:
        """Checkpoint `cid` completed: its uploads can be referenced from now on."""
        for c in sorted(self._pending):
            if c <= cid:
                files = self._pending.pop(c)
                if c == cid:
                    self._uploaded.update(files)


def file_digest(path: str) -> str:
    """SHA-256 of a local file, as `runtime.checkpoint.format.digest` gives for bytes."""
    h = Digest()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.text()


def resolve_path(storage: CheckpointStorage, chk_rel: str, rel: str) -> str:
    """Full filesystem path of a file of a snapshot at `chk_rel`."""
    base = storage.path(chk_rel)
    if rel.startswith(PARENT):
        return base.rsplit("/", 1)[0] + "/" + rel[len(PARENT) :]
    return f"{base}/{rel}"


def download(storage: CheckpointStorage, chk_rel: str, snap: NativeSnapshot, local_base: str | None = None) -> None:
    """Fetch the RocksDB checkpoint of `snap` into a fresh local directory (`snap.local_dir`),
    checking every file against the digest the snapshot recorded for it."""
    target = tempfile.mkdtemp(prefix="streamsql-restore-", dir=local_base)
    for name, rel in snap.files.items():
        h = Digest()
        with storage.fs.open_input_stream(resolve_path(storage, chk_rel, rel)) as src:
            with open(os.path.join(target, name), "wb") as dst:
                while chunk := src.read(1 << 20):
                    h.update(chunk)
                    dst.write(chunk)
        if h.text() != snap.digests.get(name):
            shutil.rmtree(target, ignore_errors=True)
            raise SnapshotCorruptError(f"RocksDB file {rel} does not match its checksum")
    snap.local_dir = target


def collect_garbage(storage: CheckpointStorage, job_id: str, in_flight: set[str]) -> int:
    """Delete shared files that neither a checkpoint left in storage (its `_metadata`)
    nor an in-flight one (`in_flight`, relative to the job dir) needs. Returns how many."""
    import pyarrow.fs as pafs  # imported when a checkpoint is first stored (not at start-up)

    needed = set(in_flight)
    for name in storage.list_dirs(job_id):
        if not name.startswith("chk-"):
            continue
        try:
            meta = CheckpointMetadata.from_json(storage.read(f"{job_id}/{name}/{METADATA}"))
        except (OSError, ValueError, KeyError, TypeError):
            continue  # incomplete: never restored from
        for op in meta.operators:
            needed.update(op.shared_files)
    root = storage.path(f"{job_id}/{SHARED}")
    sel = pafs.FileSelector(root, allow_not_found=True, recursive=True)
    deleted = 0
    for info in storage.fs.get_file_info(sel):
        if info.type != pafs.FileType.File:
            continue
        rel = SHARED + info.path[len(root) :]
        if rel not in needed:
            storage.fs.delete_file(info.path)
            deleted += 1
    return deleted
