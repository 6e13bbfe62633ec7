"""Checkpoint barriers inside one worker: stages, alignment, snapshot and acknowledgement.

A *stage* is a set of nodes of one worker connected by forward edges (no routed edge
between them): within a stage the local executor's depth-first push leaves nothing in
flight between two messages, so a stage snapshots all its nodes at once, like the local
executor does for the whole DAG. A stage's inputs are its source nodes (one pseudo input,
`SOURCES`, delivered when the parent's TRIGGER arrives: the next poll boundary) and the N
channels (edge, sender) of every routed edge into it.

Alignment (Flink's aligned checkpoints): when a channel delivers barrier n, EXACTLY_ONCE
stops consuming that channel (its later messages stay queued: `blocked`) and stops polling
the stage's sources once TRIGGER arrived, until every input that has not ended delivered
barrier n; AT_LEAST_ONCE keeps consuming (records after a barrier may then be in the
snapshot and be replayed after a restore: duplicates, never losses). Then every node of
the stage flushes (`prepare_snapshot_pre_barrier`) and snapshots, the barrier is sent on
the stage's outgoing routed edges behind the data before it, the state files are written
to the checkpoint storage (`op-<uid>-<subtask>.state`) and the inputs are released. When
every stage of the worker snapshot, the worker acknowledges the parent with one entry per
node (file, size, keys, state names, the executor's watermark bookkeeping).

An ended channel counts as having delivered every barrier (it can send nothing more), so
a job whose inputs ended still completes its final checkpoint. One checkpoint is aligned
at a time (the parent triggers the next one only after this one was acknowledged).

The stage holding the query's result node also sends the barrier to the parent on the
result channel, behind the result batches before it. STOP WITH SAVEPOINT (`stop` in the
trigger) is synchronous, as in Flink: a stage that snapshot is *frozen* (its sources are
not polled, its input channels not consumed, its timers and idle checks do not fire), so
nothing after the barrier reaches a sink, another stage or the caller; the parent ends
the job once the savepoint completed and every worker's result barrier arrived (so the
caller has every row before it), or sends ABORT when it failed (the stages run on).
`drain` (Flink's `--drain`): on TRIGGER the worker's sources first send MAX_WATERMARK,
so every window fires before the barrier.

An operator whose state cannot be snapshotted right now (a BATCH operator that spilled:
runtime.spill.SpilledStateError) declines: its entry in the acknowledgement carries the
reason, alignment goes on as usual, and the parent fails the snapshot (not the job). A
savepoint whose files cannot be written (the target directory refused) is declined the
same way.
"""

from __future__ import annotations

import pickle
import socket
from collections.abc import Callable
from dataclasses import field
from typing import Any

from runtime.checkpoint import format as state_format
from runtime.checkpoint.faults import fault_point
from runtime.checkpoint.storage import CheckpointStorage
from runtime.errors import file_access_error, is_file_error
from runtime.executor.parallel import channels as ch
from runtime.executor.parallel.plan import RESULT_EDGE, Edge, ParallelPlan
from runtime.executor.task import TaskRunner
from runtime.executor.task_state import state_names
from runtime.frozen import mutable_dataclass
from runtime.graph import JobGraph
from runtime.operators.sink import SinkOperator
from runtime.spill import SpilledStateError

SOURCES = (-1, -1)  # the pseudo input of a stage's source nodes


@mutable_dataclass
class Stage:
    """Nodes of one worker joined by forward edges; `inputs`: routed edges into it;
    `outputs`: routed edges out of it (to workers or the parent)."""

    id: int
    nodes: list[int] = field(default_factory=list)
    inputs: list[int] = field(default_factory=list)
    outputs: list[int] = field(default_factory=list)
    has_sources: bool = False


def worker_stages(graph: JobGraph, plan: ParallelPlan, order: list[int]) -> tuple[dict[int, int], list[Stage]]:
    """Split the worker's nodes (`order`: topological) into stages; returns the stage of
    every node and the stages in topological order (of their first node)."""
    parent = {nid: nid for nid in order}

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for nid in order:
        for idx, src in enumerate(graph.node(nid).inputs):
            if plan.routed(src, nid, idx) is None and src in parent:
                parent[find(src)] = find(nid)
    stages: list[Stage] = []
    by_root: dict[int, Stage] = {}
    stage_of: dict[int, int] = {}
    for nid in order:
        root = find(nid)
        if root not in by_root:
            by_root[root] = Stage(len(stages))
            stages.append(by_root[root])
        st = by_root[root]
        st.nodes.append(nid)
        st.has_sources |= not graph.node(nid).inputs
        stage_of[nid] = st.id
        if nid == graph.result_node:
            st.outputs.append(RESULT_EDGE)
    for e in plan.edges:
        if e.src in stage_of:
            stages[stage_of[e.src]].outputs.append(e.id)
        if not e.to_parent and e.dst in stage_of:
            stages[stage_of[e.dst]].inputs.append(e.id)
    return stage_of, stages


class BarrierHandler:
    """The checkpoint side of a parallel worker (module docstring): subtask `index` of `n`
    running `task`; `chan_end` are the transport's ended channels per routed edge and
    `send_barrier(edge, info)` forwards a barrier on a routed edge."""

    def __init__(
        self,
        task: TaskRunner,
        plan: ParallelPlan,
        index: int,
        n: int,
        parent: socket.socket,
        exactly_once: bool,
        chan_end: dict[int, set[int]],
        send_barrier: Callable[[int, dict[str, Any]], None],
    ) -> None:
        self.task, self.plan = task, plan
        self.index, self.n, self.parent = index, n, parent
        self.chan_end = chan_end
        self.send_barrier = send_barrier
        self.stage_of, self.stages = worker_stages(task.graph, plan, [n.id for n in task.order])
        self.exactly_once = exactly_once
        self.cid: int | None = None
        self.info: dict[str, Any] = {}
        self.got: dict[int, set[tuple[int, int]]] = {}
        self.done: set[int] = set()
        self.blocked: set[tuple[int, int]] = set()  # (edge, sender) channels held back
        self.src_blocked: set[int] = set()  # stages whose sources wait for alignment
        self.entries: dict[int, dict[str, Any]] = {}
        self.frozen: set[int] = set()  # stages past a stop-with-savepoint's barrier
        self._storages: dict[str, CheckpointStorage] = {}
        self.aligned_ns = 0  # time channels spent blocked (metrics: alignment duration)

    # ------------------------------------------------------------------ queries
    def source_blocked(self, sid: int) -> bool:
        st = self.stage_of[sid]
        return st in self.src_blocked or st in self.frozen

    def channel_blocked(self, eid: int, src: int) -> bool:
        return (eid, src) in self.blocked or (
            bool(self.frozen) and self.stage_of[self.plan.edges[eid].dst] in self.frozen
        )

    # ------------------------------------------------------------------ events
    def on_trigger(self, info: dict[str, Any]) -> None:
        """The parent's TRIGGER: the barrier reaches the sources of every stage (after
        MAX_WATERMARK with drain)."""
        if info.get("drain"):
            self.task.drain_sources()
        self._begin(info)
        for s in self.stages:
            if s.has_sources:
                self.got[s.id].add(SOURCES)
                if self.exactly_once and s.id not in self.done:
                    self.src_blocked.add(s.id)
        for s in self.stages:
            self._try(s)

    def on_barrier(self, e: Edge, src: int, info: dict[str, Any]) -> None:
        """Channel (e, src) delivered a barrier (after all its earlier messages)."""
        if src in self.chan_end[e.id]:
            return  # sent after END (nothing can follow on that channel anyway)
        self._begin(info)
        s = self.stages[self.stage_of[e.dst]]
        self.got[s.id].add((e.id, src))
        if self.exactly_once and s.id not in self.done:
            self.blocked.add((e.id, src))
        self._try(s)

    def on_channel_end(self, e: Edge) -> None:
        """A channel ended: the stage may no longer wait for its barrier."""
        if self.cid is not None:
            self._try(self.stages[self.stage_of[e.dst]])

    def _begin(self, info: dict[str, Any]) -> None:
        cid = int(info["id"])
        if self.cid == cid:
            return
        if self.cid is not None:
            raise RuntimeError(f"checkpoint barrier {cid} arrived while checkpoint {self.cid} is being aligned")
        self.cid, self.info = cid, info
        self.got = {s.id: set() for s in self.stages}
        self.done, self.entries = set(), {}

    def _required(self, s: Stage) -> set[tuple[int, int]]:
        need = {SOURCES} if s.has_sources else set()
        for eid in s.inputs:
            ended = self.chan_end[eid]
            need |= {(eid, src) for src in range(self.n) if src not in ended}
        return need

    def _try(self, s: Stage) -> None:
        if self.cid is None or s.id in self.done:
            return
        if self._required(s) <= self.got[s.id]:
            self._snapshot_stage(s)

    # ------------------------------------------------------------------ the snapshot
    def _snapshot_stage(self, s: Stage) -> None:
        task, cid = self.task, self.cid
        assert cid is not None
        self.done.add(s.id)
        task.flush_before_barrier(s.nodes, cid)  # what operators buffer is sent before the barrier
        blobs: dict[str, bytes] = {}
        for nid in s.nodes:
            op = task.operators[nid]
            try:
                snap = op.snapshot_state(cid)
            except SpilledStateError as e:  # declined: the parent fails the snapshot, the job runs on
                self.entries[nid] = {"declined": str(e)}
                continue
            uid = task.uids[nid]
            entry: dict[str, Any] = {
                "file": None,
                "bytes": 0,
                "keys": op.state_size().get("keys"),
                "state_names": state_names(op, snap),
                "executor": task.executor_state(nid),
            }
            if snap is not None:
                data = state_format.encode(snap)
                entry["file"] = f"op-{uid}-{self.index}.state"
                entry["bytes"] = len(data)
                entry["checksum"] = state_format.digest(data)
                blobs[entry["file"]] = data
            self.entries[nid] = entry
        fault_point("snapshot")
        for eid in s.outputs:  # behind everything the stage emitted before it
            self.send_barrier(eid, self.info)
        try:
            storage = self._storage(str(self.info["uri"]))
            for name, data in blobs.items():
                storage.write(f"{self.info['rel']}/{name}", data)
        except OSError as e:
            if self.info.get("kind") != "savepoint":
                raise  # a checkpoint's storage failing fails the job (restart strategy)
            # a savepoint's target refused: the savepoint fails, not the job (as the local executor)
            err = file_access_error(e, "write savepoint file") if is_file_error(e) else e
            self.entries[s.nodes[0]] = {"declined": f"{type(err).__name__}: {err}"}
        self.blocked -= {k for k in self.blocked if k[0] in s.inputs}
        self.src_blocked.discard(s.id)
        if self.info.get("stop"):  # nothing after the barrier (module docstring)
            self.frozen.add(s.id)
            self.task.frozen.update(s.nodes)
        if len(self.done) == len(self.stages):
            ch.send(self.parent, ch.ACK, self.index, pickle.dumps((cid, self.entries)))
            self.cid = None

    def _storage(self, uri: str) -> CheckpointStorage:
        if uri not in self._storages:
            self._storages[uri] = CheckpointStorage(uri, dict(self.task.graph.config or {}))
        return self._storages[uri]

    def on_complete(self, cid: int) -> None:
        """Checkpoint `cid` is durable: operators commit (2PC sinks publish); tell the parent."""
        task = self.task
        for node in task.order:
            task.operators[node.id].notify_checkpoint_complete(cid)
            if isinstance(task.operators[node.id], SinkOperator):
                fault_point("commit")
        ch.send(self.parent, ch.COMMITTED, cid)

    def on_abort(self, cid: int) -> None:
        """Stop-with-savepoint `cid` failed: the frozen stages run on."""
        self.frozen.clear()
        self.task.frozen.clear()
