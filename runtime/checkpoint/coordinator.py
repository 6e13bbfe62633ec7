"""The checkpoint coordinator of the local executor: when to trigger, where to write,
the asynchronous upload, completion and retention.

The executor takes the synchronous part itself (barrier through the DAG, every
operator's `snapshot_state`, encoded into bytes: a copy that later processing cannot
change); the coordinator uploads those bytes on a background thread, state files first
and `_metadata` last (atomically), so processing continues while storage is slow. Uploads
run one after the other (FIFO), so checkpoints complete in id order. The executor polls
`completed()` between source batches and then lets the sinks commit, on its own thread.
"""

from __future__ import annotations

import os
import shutil
import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import field

from runtime.checkpoint.config import CheckpointConfig
from runtime.checkpoint.faults import fault_point
from runtime.checkpoint.incremental import collect_garbage
from runtime.checkpoint.metadata import CheckpointMetadata
from runtime.checkpoint.storage import METADATA, CheckpointStorage
from runtime.errors import JobError, file_access_error, is_file_error
from runtime.frozen import frozen_dataclass, mutable_dataclass


class CheckpointError(JobError):
    """Checkpoints failed more often than `execution.checkpointing.tolerable-failed-checkpoints`."""


# Why a job fails when its STOP ... WITH DRAIN savepoint failed (both executors).
DRAIN_FAILED = (
    "the savepoint of STOP ... WITH DRAIN failed after the sources sent MAX_WATERMARK (every window fired), "
    "so the job cannot run on"
)


@frozen_dataclass
class SnapshotRequest:
    """A snapshot asked for from another thread (the REST API, STOP JOB, a job client),
    served by the executor at its next batch boundary. `stop`: STOP WITH SAVEPOINT (the
    job ends once it completed, and nothing after its barrier reaches a sink or the
    caller); `drain`: with `stop`, the sources send MAX_WATERMARK before the barrier so
    every window fires first (Flink's `--drain`)."""

    kind: str
    directory: str | None
    stop: bool
    drain: bool
    future: Future[str]


@mutable_dataclass
class PendingSnapshot:
    """A snapshot whose state is being written: it completes once its upload has."""

    checkpoint_id: int
    kind: str
    storage: CheckpointStorage
    rel: str
    started: float
    upload: Future[None]
    result: Future[str] = field(default_factory=Future)  # resolves to the location when complete
    stop_after: bool = False
    timed_out: bool = False
    shared: set[str] = field(default_factory=set)  # incremental: shared files it needs (job-relative)

    @property
    def location(self) -> str:
        return self.storage.display(self.rel)


class CheckpointCoordinator:
    def __init__(self, cfg: CheckpointConfig, config: dict[str, str]) -> None:
        self.cfg = cfg
        self.config = config
        self.storage = CheckpointStorage(cfg.directory, config) if cfg.directory else None
        self.next_id = 1
        self.pending: list[PendingSnapshot] = []
        self.completed_ids: list[int] = []
        self.latest_location: str | None = None
        self.failures = 0
        self.last_duration_ms = 0
        self.last_size = 0
        self._pool: ThreadPoolExecutor | None = None
        self._last_trigger = time.monotonic()
        self._last_complete = 0.0
        self._uses_shared = False  # an incremental checkpoint was taken: retention collects shared files

    # ------------------------------------------------------------------ triggering
    def due(self) -> bool:
        """A periodic checkpoint should start now (interval passed since the last trigger,
        min-pause since the last completion, fewer than max-concurrent in flight)."""
        if not self.cfg.enabled:
            return False
        now = time.monotonic()
        if (now - self._last_trigger) * 1000 < (self.cfg.interval_ms or 0):
            return False
        if self.cfg.min_pause_ms and (now - self._last_complete) * 1000 < self.cfg.min_pause_ms:
            return False
        return len(self.pending) < self.cfg.max_concurrent

    def new_id(self) -> int:
        cid = self.next_id
        self.next_id += 1
        self._last_trigger = time.monotonic()
        return cid

    def target(self, cid: int, kind: str, savepoint_dir: str | None = None) -> tuple[CheckpointStorage, str]:
        if kind == "savepoint":
            directory = savepoint_dir or self.cfg.savepoint_dir
            if not directory:
                raise CheckpointError(
                    "No savepoint directory: give one, or set 'execution.checkpointing.savepoint-dir'."
                )
            return CheckpointStorage(
                directory, self.config
            ), f"savepoint-{self.cfg.job_id[-6:]}-{uuid.uuid4().hex[:12]}"
        if self.storage is None:
            raise CheckpointError("No checkpoint directory: set 'execution.checkpointing.dir'.")
        return self.storage, f"{self.cfg.job_id}/chk-{cid}"

    # ------------------------------------------------------------------ upload
    def submit(
        self,
        meta: CheckpointMetadata,
        blobs: dict[str, bytes],
        storage: CheckpointStorage,
        rel: str,
        stop_after: bool = False,
        files: list[tuple[str, str]] | None = None,
        cleanup: list[str] | None = None,
    ) -> PendingSnapshot:
        """Upload `blobs` (file name -> bytes), local `files` (path, path under the storage
        root: incremental RocksDB checkpoints) and then `meta`, off the processing thread;
        the local `cleanup` directories are deleted afterwards."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="checkpoint-upload")
        started = time.monotonic()
        files = files or []
        size = sum(len(b) for b in blobs.values()) + sum(os.path.getsize(f) for f, _ in files)

        def upload() -> None:
            try:
                for local, target in files:
                    storage.upload_file(local, target)
                for name, data in blobs.items():
                    storage.write(f"{rel}/{name}", data)
            finally:
                for d in cleanup or []:
                    shutil.rmtree(d, ignore_errors=True)
            fault_point("upload")
            meta.duration_ms = int((time.monotonic() - started) * 1000)
            storage.write_atomic(f"{rel}/{METADATA}", meta.to_json())

        p = PendingSnapshot(meta.checkpoint_id, meta.kind, storage, rel, started, self._pool.submit(upload))
        p.stop_after = stop_after
        p.shared = {f for o in meta.operators for f in o.shared_files}
        self._uses_shared = self._uses_shared or bool(p.shared)
        self.last_size = size
        self.pending.append(p)
        return p

    def completed(self, wait: bool = False) -> list[PendingSnapshot]:
        """Snapshots whose upload finished since the last call, in id order. A failed or
        timed-out one counts against the tolerable failures (then the job fails)."""
        done: list[PendingSnapshot] = []
        while self.pending:
            p = self.pending[0]
            if wait:
                try:
                    p.upload.result(timeout=self.cfg.timeout_ms / 1000)
                except Exception:  # noqa: BLE001 - reported below
                    pass
            if not p.upload.done():
                if (time.monotonic() - p.started) * 1000 > self.cfg.timeout_ms and not p.timed_out:
                    p.timed_out = True
                    self._failed(p, TimeoutError(f"checkpoint {p.checkpoint_id} expired before completing"))
                return done
            self.pending.pop(0)
            err = p.upload.exception()
            if p.timed_out:
                continue
            if err is not None:
                self._failed(p, err)
                continue
            self._last_complete = time.monotonic()
            self.last_duration_ms = int((self._last_complete - p.started) * 1000)
            if p.kind == "checkpoint":
                self.completed_ids.append(p.checkpoint_id)
                self.latest_location = p.location
                self._retain(p)
            done.append(p)
        return done

    def _failed(self, p: PendingSnapshot, err: BaseException) -> None:
        if is_file_error(err):  # the OS refused a checkpoint file: name it, in the OS's words
            err = file_access_error(err, "write checkpoint file")  # type: ignore[arg-type]
        p.result.set_exception(CheckpointError(f"{p.kind} {p.checkpoint_id} failed: {err}"))
        if p.kind != "checkpoint":
            return
        self.failures += 1
        if self.failures > self.cfg.tolerable_failures:
            raise CheckpointError(
                f"Checkpoint {p.checkpoint_id} failed ({type(err).__name__}: {err}) and the job tolerates "
                f"{self.cfg.tolerable_failures} failed checkpoints ('execution.checkpointing.tolerable-failed-checkpoints')."
            ) from err

    def _retain(self, p: PendingSnapshot) -> None:
        """Keep the newest `state.checkpoints.num-retained` complete checkpoints."""
        keep = set(self.completed_ids[-self.cfg.num_retained :])
        in_flight = {q.checkpoint_id for q in self.pending}
        for name in p.storage.list_dirs(self.cfg.job_id):
            if name.startswith("chk-") and name[4:].isdigit():
                n = int(name[4:])
                if n < p.checkpoint_id and n not in keep and n not in in_flight:
                    p.storage.delete_dir(f"{self.cfg.job_id}/{name}")
        if self._uses_shared:
            collect_garbage(p.storage, self.cfg.job_id, {f for q in self.pending for f in q.shared})

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
