"""The parent's side of checkpoints of a parallel job: the checkpoint coordinator.

The parent triggers a checkpoint by sending TRIGGER to every worker (periodically as
`execution.checkpointing.interval` / `min-pause` / `timeout` say, through the same
CheckpointCoordinator as the local executor, or on request: `trigger_checkpoint`,
`trigger_savepoint`). Workers align, snapshot and write their state files themselves
(runtime/executor/parallel/barriers.py) and acknowledge with one entry per node. The
sinks the parent runs (print, memory, duckdb) are one more participant: their input
channels (edge, worker) are aligned here (EXACTLY_ONCE: frames after a worker's barrier
are held until every live channel delivered it), then they snapshot into
`op-<uid>.state` as a single subtask (as a parallelism-1 job writes them, so
runtime/checkpoint/rescale.py restores them unchanged at any parallelism). With every
acknowledgement in, `_metadata` (parallelism N, per-subtask entries with their key-group
ranges, the executor's bookkeeping per subtask) is written by the coordinator's upload
thread, last and atomically. Once it is durable the parent sends COMPLETE (workers'
two-phase-commit sinks publish and answer COMMITTED) and commits its own sinks; a
savepoint's future resolves when every worker committed (so STOP WITH SAVEPOINT leaves
nothing uncommitted).

STOP WITH SAVEPOINT is synchronous (runtime/executor/parallel/barriers.py): the workers'
stages freeze at its barrier; the job stops once it is committed and every worker's
barrier on the result channel arrived (the caller then has every result row before the
barrier, none after). When it fails the parent sends ABORT and the stages run on, except
after drain (MAX_WATERMARK fired every window): then the job fails.

One checkpoint is aligned at a time: the next trigger waits until the previous one was
acknowledged by everyone (uploads may still overlap, in id order).
"""

from __future__ import annotations

import json
import pickle
import queue
import socket
import time
from collections import deque
from concurrent.futures import Future
from dataclasses import field
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
from runtime.checkpoint.metadata import CheckpointMetadata, OperatorState, SubtaskState
from runtime.checkpoint.restore import LoadedSnapshot
from runtime.checkpoint.storage import CheckpointStorage
from runtime.checkpoint.uid import fingerprint, operator_uids
from runtime.config.core import MAX_PARALLELISM
from runtime.executor.parallel import channels as ch
from runtime.executor.parallel.plan import ParallelPlan
from runtime.executor.task_state import check_claims, state_names
from runtime.frozen import mutable_dataclass
from runtime.graph import BATCH, JobGraph
from runtime.operators.base import Operator, Output
from runtime.state.keygroups import key_group_range
from runtime.state.options import backend_kind

Frame = tuple[int, int, int, bytes]  # (worker, kind, edge, payload)


@mutable_dataclass
class InFlight:
    """A checkpoint triggered and not yet acknowledged by every participant."""

    cid: int
    kind: str
    storage: CheckpointStorage
    rel: str
    stop: bool
    future: Future[str] | None
    drain: bool = False
    got: set[tuple[int, int]] = field(default_factory=set)  # parent channels that delivered the barrier
    acks: dict[int, dict[int, dict[str, Any]]] = field(default_factory=dict)
    parent_done: bool = False
    blobs: dict[str, bytes] = field(default_factory=dict)
    parent_entries: dict[int, dict[str, Any]] = field(default_factory=dict)


class ParentCheckpoints:
    """Checkpoint coordination of a ParallelExecutor (module docstring)."""

    def __init__(self, graph: JobGraph, plan: ParallelPlan, n: int) -> None:
        self.graph, self.plan, self.n = graph, plan, n
        cfg = dict(graph.config or {})
        self.config = CheckpointConfig.from_config(cfg)
        self.coordinator = CheckpointCoordinator(self.config, cfg)
        self.uids = operator_uids(graph)
        self.max_parallelism = MAX_PARALLELISM.get(cfg)
        self.exactly_once = self.config.mode == "EXACTLY_ONCE"
        self.parent_edges = [e for e in plan.edges if e.to_parent]
        self.requests: queue.Queue[SnapshotRequest] = queue.Queue()
        # The query's result leaves the workers (not a parent-run sink): a stop waits for
        # every worker's barrier on the result channel.
        self.result_barriers_needed = graph.result_node is not None and graph.result_node not in plan.parent_nodes
        self.stop_requested = False
        self.final_cid: int | None = None
        self.final_committed = False
        self._graph_doc: dict[str, Any] | None = None
        self._reset([], {}, {})

    def _reset(self, socks: list[socket.socket], ops: dict[int, Operator], ends: dict[int, set[int]]) -> None:
        self.socks, self.operators, self.ends = socks, ops, ends
        self.inflight: InFlight | None = None
        self.blocked: set[tuple[int, int]] = set()
        self.held: dict[tuple[int, int], deque[Frame]] = {}
        self.committing: dict[int, tuple[PendingSnapshot, set[int]]] = {}
        self.final_cid, self.final_committed = None, False
        self.result_barriers: dict[int, set[int]] = {}  # checkpoint id -> workers whose result barrier came
        self.stopping: tuple[PendingSnapshot, bool] | None = None  # a stop-with-savepoint (and drain) in flight
        self.stop_committed: int | None = None

    def start_attempt(self, socks: list[socket.socket], ops: dict[int, Operator], ends: dict[int, set[int]]) -> None:
        """A new run of the workers (first start or restart): forget in-flight work."""
        self._reset(socks, ops, ends)

    # ------------------------------------------------------------------ restore
    def check_restore(self, snap: LoadedSnapshot) -> None:
        """Fail before forking when the snapshot's operators do not fit the job."""
        mine = {self.uids[n.id]: n for n in self.graph.nodes}
        check_claims(snap, mine, self.graph, self.config.ignore_unclaimed_state)
        self.coordinator.next_id = max(self.coordinator.next_id, snap.metadata.checkpoint_id + 1)

    # ------------------------------------------------------------------ triggering
    def work(self, all_done: bool) -> None:
        """Between two rounds of reading: serve requests, trigger periodic checkpoints
        (not once the workers are done: the final checkpoint follows) and complete the
        checkpoints whose upload finished."""
        if self.inflight is None and self.stopping is None and self.stop_committed is None:
            if not self.requests.empty():
                r = self.requests.get_nowait()
                try:
                    self.trigger(r.kind, r.directory, r.stop, r.future, r.drain)
                except Exception as e:  # noqa: BLE001 - reported to the requester
                    r.future.set_exception(e)
            elif not all_done and self.coordinator.due():
                self.trigger("checkpoint")
        self._complete(self.coordinator.completed())
        if self.stopping is not None and self.stopping[0].result.done() and self.stopping[0].result.exception():
            self._stop_failed(self.stopping[0].checkpoint_id, self.stopping[1], self.stopping[0].result.exception())

    def _stop_failed(self, cid: int, drain: bool, err: BaseException | None) -> None:
        """A stop-with-savepoint failed: the workers' frozen stages run on (after drain
        the job cannot: it fails)."""
        self.stopping = None
        if drain:
            raise CheckpointError(f"{DRAIN_FAILED}: {err}")
        for s in self.socks:
            ch.send(s, ch.ABORT, cid)

    def trigger(
        self,
        kind: str,
        directory: str | None = None,
        stop: bool = False,
        fut: Future[str] | None = None,
        drain: bool = False,
    ) -> int:
        cid = self.coordinator.new_id()
        storage, rel = self.coordinator.target(cid, kind, directory)
        drain = drain and stop and self.graph.mode != BATCH
        self.inflight = InFlight(cid, kind, storage, rel, stop, fut, drain)
        info = {"id": cid, "kind": kind, "uri": storage.uri, "rel": rel, "stop": stop, "drain": drain}
        payload = pickle.dumps(info)
        for s in self.socks:
            ch.send(s, ch.TRIGGER, 0, payload)
        self.try_parent()  # no live parent channel (none, or all ended): snapshot now
        return cid

    def trigger_final(self) -> None:
        """End of a bounded job: one more checkpoint so every sink commits."""
        self.final_cid = self.trigger("checkpoint")

    # ------------------------------------------------------------------ the parent's sinks
    def hold(self, frame: Frame) -> bool:
        """Whether a data frame of a parent-sink channel must wait for alignment (kept)."""
        key = (frame[2], frame[0])
        if key in self.blocked or self.held.get(key):
            self.held.setdefault(key, deque()).append(frame)
            return True
        return False

    def on_barrier(self, w: int, eid: int) -> list[Frame]:
        """A worker's barrier on a parent-sink edge; returns frames released by it."""
        if self.inflight is None or w in self.ends.get(eid, set()):
            return []
        self.inflight.got.add((eid, w))
        if self.exactly_once:
            self.blocked.add((eid, w))
        return self.try_parent()

    def try_parent(self) -> list[Frame]:
        """Snapshot the parent's sinks once every live channel delivered the barrier."""
        f = self.inflight
        if f is None or f.parent_done:
            return []
        need = {(e.id, w) for e in self.parent_edges for w in range(self.n) if w not in self.ends.get(e.id, set())}
        if not need <= f.got:
            return []
        f.parent_done = True
        for nid, op in sorted(self.operators.items()):
            op.prepare_snapshot_pre_barrier(f.cid, Output())
            snap = op.snapshot_state(f.cid)
            entry: dict[str, Any] = {"file": None, "bytes": 0, "keys": op.state_size().get("keys")}
            entry["state_names"] = state_names(op, snap)
            if snap is not None:
                data = state_format.encode(snap)
                entry["file"], entry["bytes"] = f"op-{self.uids[nid]}.state", len(data)
                entry["checksum"] = state_format.digest(data)
                f.blobs[entry["file"]] = data
            f.parent_entries[nid] = entry
        self.blocked.clear()
        released = [fr for dq in self.held.values() for fr in dq]
        self.held.clear()
        self._maybe_submit()
        return released

    # ------------------------------------------------------------------ acknowledgements
    def on_ack(self, w: int, payload: bytes) -> None:
        cid, entries = pickle.loads(payload)
        if self.inflight is not None and cid == self.inflight.cid:
            self.inflight.acks[w] = entries
            self._maybe_submit()

    def _maybe_submit(self) -> None:
        f = self.inflight
        if f is None or not f.parent_done or len(f.acks) < self.n:
            return
        self.inflight = None
        declined = [e["declined"] for w in sorted(f.acks) for e in f.acks[w].values() if "declined" in e]
        if declined:
            self._declined(f, declined[0])
            return
        p = self.coordinator.submit(self._metadata(f), f.blobs, f.storage, f.rel, stop_after=f.stop)
        if f.future is not None:
            p.result = f.future
        if f.stop:
            self.stopping = (p, f.drain)

    def _declined(self, f: InFlight, reason: str) -> None:
        """An operator declined the snapshot (runtime/executor/parallel/barriers.py): a
        requested one fails (a stop's frozen stages run on), a periodic one fails the job
        (operators keep what they snapshot in memory when checkpointing is configured)."""
        err = CheckpointError(f"{f.kind} {f.cid} failed: {reason}")
        f.storage.delete_dir(f.rel)  # the state files the workers wrote
        if f.future is not None and not f.future.done():
            f.future.set_exception(err)
        if f.stop:
            self._stop_failed(f.cid, f.drain, err)
        elif f.future is None:
            raise err

    def _metadata(self, f: InFlight) -> CheckpointMetadata:
        ops: list[OperatorState] = []
        for node in sorted(self.graph.nodes, key=lambda x: x.id):
            uid = self.uids[node.id]
            o = OperatorState(
                uid=uid,
                node_id=node.id,
                operator=node.operator,
                label=node.label or node.operator,
                file=None,
                fingerprint=fingerprint(self.graph, node),
            )
            if node.id in f.parent_entries:  # one subtask, as a parallelism-1 job writes it
                e = f.parent_entries[node.id]
                o.file, o.bytes, o.keys, o.state_names = e["file"], e["bytes"], e["keys"], e["state_names"]
                o.checksum = e.get("checksum", "")
            else:
                parts = [f.acks[w][node.id] for w in range(self.n)]
                o.subtasks = [
                    SubtaskState(
                        w,
                        list(key_group_range(w, self.n, self.max_parallelism)),
                        p["file"],
                        p["bytes"],
                        p["keys"],
                        p.get("checksum", ""),
                    )
                    for w, p in enumerate(parts)
                ]
                o.bytes = sum(int(p["bytes"]) for p in parts)
                keys = [int(p["keys"]) for p in parts if p["keys"] is not None]
                o.keys = sum(keys) if keys else None
                o.state_names = parts[0]["state_names"]
                o.executor = {"subtasks": [p["executor"] for p in parts]}
            ops.append(o)
        cfg = self.graph.config or {}
        return CheckpointMetadata(
            checkpoint_id=f.cid,
            kind=f.kind,
            job_id=self.config.job_id,
            timestamp_ms=int(time.time() * 1000),
            state_backend=backend_kind(cfg),
            max_parallelism=self.max_parallelism,
            parallelism=self.n,
            operators=ops,
            graph=self._graph_json(),
        )

    def _graph_json(self) -> dict[str, Any]:
        if self._graph_doc is None:
            self._graph_doc = json.loads(self.graph.to_json())
        return self._graph_doc

    # ------------------------------------------------------------------ completion
    def _complete(self, done: list[PendingSnapshot]) -> None:
        for p in done:
            fault_point("metadata")
            for s in self.socks:
                ch.send(s, ch.COMPLETE, p.checkpoint_id)
            for _nid, op in sorted(self.operators.items()):
                op.notify_checkpoint_complete(p.checkpoint_id)
                fault_point("commit")
            self.committing[p.checkpoint_id] = (p, set())

    def on_committed(self, w: int, cid: int) -> None:
        """Worker `w` committed checkpoint `cid`: once all did, the snapshot's future
        resolves (and a stop-with-savepoint stops the job)."""
        entry = self.committing.get(cid)
        if entry is None:
            return
        p, got = entry
        got.add(w)
        if len(got) < self.n:
            return
        del self.committing[cid]
        if not p.result.done():
            p.result.set_result(p.location)
        if p.stop_after:
            self.stopping = None
            self.stop_committed = cid
            self._maybe_stop()
        if cid == self.final_cid:
            self.final_committed = True

    def on_result_barrier(self, w: int, payload: bytes) -> None:
        """Worker `w`'s barrier on the result channel: every result row of `w` before the
        checkpoint was read (and handed to the caller)."""
        cid = int(pickle.loads(payload)["id"])
        self.result_barriers.setdefault(cid, set()).add(w)
        for old in [c for c in self.result_barriers if c < cid]:
            del self.result_barriers[old]
        self._maybe_stop()

    def _maybe_stop(self) -> None:
        """The stop-with-savepoint is committed and the caller has every row before it."""
        cid = self.stop_committed
        if cid is None:
            return
        if not self.result_barriers_needed or len(self.result_barriers.get(cid, ())) == self.n:
            self.stop_requested = True

    def fail_requests(self) -> None:
        while not self.requests.empty():
            fut = self.requests.get_nowait().future
            if not fut.done():
                fut.set_exception(RuntimeError("the job ended before the snapshot could be taken"))
        f = self.inflight
        if f is not None and f.future is not None and not f.future.done():
            f.future.set_exception(RuntimeError("the job ended before the snapshot completed"))
        for p, _ in self.committing.values():
            if not p.result.done():
                p.result.set_exception(RuntimeError("the job ended before the snapshot was committed"))

    def close(self) -> None:
        self.coordinator.close()
