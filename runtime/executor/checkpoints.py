"""Checkpoint coordination of the local executor (one task, one process).

Between two source polls nothing is in flight, so a barrier passes through the task in
topological order (aligned by construction, for EXACTLY_ONCE and AT_LEAST_ONCE alike):
every operator flushes (`prepare_snapshot_pre_barrier`) and snapshots, sources with their
offsets; the upload runs on the coordinator's background thread; once it completed,
operators get `notify_checkpoint_complete` (two-phase-commit sinks publish). A bounded
job takes a final checkpoint after its input ended so that everything is committed.

Requests (`trigger_checkpoint`, `trigger_savepoint`) come from other threads (the REST
API, STOP WITH SAVEPOINT) and are served at the next batch boundary (`work`). A stop
with savepoint is synchronous, as Flink's: the task processes nothing after its barrier
(no source poll, no timer) until the savepoint completed, then the job ends, so no row
after the barrier reaches a sink or the caller and a run restored from the savepoint
continues exactly where the collected results stopped. Should the savepoint fail, the
job runs on (with drain it fails: its windows were fired by MAX_WATERMARK). The parallel
executor's counterpart is runtime/executor/parallel/checkpoints.py.
"""

from __future__ import annotations

import json
import os
import queue
import time
from concurrent.futures import Future
from typing import Any

from runtime.checkpoint import format as state_format
from runtime.checkpoint.config import CheckpointConfig
from runtime.checkpoint.coordinator import (
    DRAIN_FAILED,
    CheckpointCoordinator,
    CheckpointError,
    PendingSnapshot,
    SnapshotRequest,
)
from runtime.checkpoint.faults import fault_point
from runtime.checkpoint.incremental import IncrementalCheckpoints, UploadPlan
from runtime.checkpoint.metadata import CheckpointMetadata, OperatorState
from runtime.checkpoint.uid import fingerprint
from runtime.config.core import MAX_PARALLELISM
from runtime.executor.task import TaskRunner
from runtime.executor.task_state import state_names
from runtime.graph import BATCH
from runtime.operators.sink import SinkOperator
from runtime.state.options import backend_kind
from runtime.state.slot_values import NativeSnapshot


class LocalCheckpoints:
    """Periodic checkpoints, requested snapshots and their completion for one task."""

    def __init__(self, task: TaskRunner, config: CheckpointConfig) -> None:
        self.task = task
        self.graph = task.graph
        cfg = dict(self.graph.config or {})
        self.config = config
        self.coordinator = CheckpointCoordinator(config, cfg)
        self.incremental = IncrementalCheckpoints(cfg)
        self.requests: queue.Queue[SnapshotRequest] = queue.Queue()
        # A completed stop-with-savepoint asks the job to end.
        self.stop_requested = False
        self.drained = False  # the request being served sent MAX_WATERMARK (drain)
        self._graph_doc: dict[str, Any] | None = None

    def request(self, kind: str, directory: str | None = None, stop: bool = False, drain: bool = False) -> Future[str]:
        """Queue a snapshot request (thread-safe); the future resolves to its location."""
        f: Future[str] = Future()
        self.requests.put(SnapshotRequest(kind, directory, stop, drain, f))
        return f

    def work(self) -> None:
        """Between two source batches: serve requests, trigger periodic checkpoints and
        let operators know about completed ones."""
        while not self.requests.empty() and not self.stop_requested:
            r = self.requests.get_nowait()
            self.drained = False
            try:
                self.task.check_checkpointable()
                p = self.snapshot(r.kind, r.directory, r.stop, r.drain)
            except Exception as e:  # noqa: BLE001 - reported to the requester
                r.future.set_exception(e)
                if self.drained:
                    raise CheckpointError(f"{DRAIN_FAILED}: {e}") from e
                continue
            p.result = r.future
            if r.stop:  # synchronous (module docstring): wait here, before any other work
                self.complete(self.coordinator.completed(wait=True))
                if not self.stop_requested and r.drain:
                    raise CheckpointError(f"{DRAIN_FAILED}: {p.result.exception()}")
        if self.stop_requested:
            return
        if self.coordinator.due():
            self.snapshot("checkpoint")
        self.complete(self.coordinator.completed())

    def finish(self, stopped: bool) -> None:
        """End of a bounded job: a final checkpoint commits what the sinks still hold."""
        if self.config.enabled and not stopped:
            self.snapshot("checkpoint")
        while not self.requests.empty() and not self.stop_requested:
            self.work()
        self.complete(self.coordinator.completed(wait=True))

    def fail_requests(self) -> None:
        """The attempt ended: requests not served yet fail."""
        while not self.requests.empty():
            fut = self.requests.get_nowait().future
            if not fut.done():
                fut.set_exception(RuntimeError("the job ended before the snapshot could be taken"))

    def complete(self, done: list[PendingSnapshot]) -> None:
        """These snapshots are durable: operators commit in topological order."""
        task = self.task
        for p in done:
            fault_point("metadata")
            if p.kind == "checkpoint":
                self.incremental.complete(p.checkpoint_id)
            for i, node in enumerate(task.order):
                task.operators[node.id].notify_checkpoint_complete(p.checkpoint_id)
                if i and isinstance(task.operators[node.id], SinkOperator):
                    fault_point("commit")
            if not p.result.done():
                p.result.set_result(p.location)
            if p.stop_after:
                self.stop_requested = True

    def snapshot(
        self, kind: str, directory: str | None = None, stop: bool = False, drain: bool = False
    ) -> PendingSnapshot:
        """The synchronous part: barrier through the task in topological order, then every
        operator's state as bytes; the upload is handed to the coordinator. `drain`: the
        sources first send MAX_WATERMARK (STREAMING), so every window fires before it."""
        task = self.task
        cid = self.coordinator.new_id()
        storage, rel = self.coordinator.target(cid, kind, directory)
        if drain and self.graph.mode != BATCH:
            self.drained = True
            task.drain_sources()
        task.flush_before_barrier([n.id for n in task.order], cid)
        blobs: dict[str, bytes] = {}
        ops: list[OperatorState] = []
        uploads: list[UploadPlan] = []
        native = kind == "checkpoint" and self.incremental.native  # savepoints stay canonical
        for node in task.order:
            op = task.operators[node.id]
            uid = task.uids[node.id]
            op.ctx.snapshot_dir = self.incremental.snapshot_dir(cid, uid) if native else None
            snap = op.snapshot_state(cid)
            op.ctx.snapshot_dir = None
            file = None
            size = 0
            checksum = ""
            if isinstance(snap, NativeSnapshot):  # incremental: upload new SST files only
                uploads.append(self.incremental.plan(cid, uid, snap, rel))
                snap.local_dir = None
            if snap is not None:
                data = state_format.encode(snap)
                file = f"op-{uid}.state"
                blobs[file] = data
                size = len(data)
                checksum = state_format.digest(data)
            ops.append(
                OperatorState(
                    uid=uid,
                    node_id=node.id,
                    operator=node.operator,
                    label=node.label or node.operator,
                    file=file,
                    bytes=size,
                    checksum=checksum,
                    keys=op.state_size().get("keys"),
                    state_names=state_names(op, snap),
                    fingerprint=fingerprint(self.graph, node),
                    executor=task.executor_state(node.id),
                )
            )
            if isinstance(snap, NativeSnapshot):
                ops[-1].shared_files = uploads[-1].shared
                ops[-1].bytes = size + uploads[-1].new_bytes
        cfg = self.graph.config or {}
        meta = CheckpointMetadata(
            checkpoint_id=cid,
            kind=kind,
            job_id=self.config.job_id,
            timestamp_ms=int(time.time() * 1000),
            state_backend=backend_kind(cfg),
            max_parallelism=MAX_PARALLELISM.get(cfg),
            parallelism=1,
            operators=ops,
            graph=self._graph_json(),
        )
        fault_point("snapshot")
        files = [f for u in uploads for f in u.files]
        cleanup = sorted({os.path.dirname(f[0].rstrip("/").rsplit("/", 1)[0]) for u in uploads for f in u.files})
        return self.coordinator.submit(meta, blobs, storage, rel, stop_after=stop, files=files, cleanup=cleanup)

    def _graph_json(self) -> dict[str, Any]:
        if self._graph_doc is None:
            self._graph_doc = json.loads(self.graph.to_json())
        return self._graph_doc

    def close(self) -> None:
        self.coordinator.close()
