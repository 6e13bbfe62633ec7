"""The socket transport of a parallel worker's task: routed edges over Arrow IPC channels.

The edges the planner's Exchanges route (runtime.executor.parallel.plan) leave the task:
a batch on a routed edge is partitioned by key group (`runtime.state.keygroups`, the
function the state backends use) and each part goes to its owner; the local part is
consumed at once, the others wait in an outgoing buffer per (edge, target) until the
target grants a credit. Every other edge stays inside the task (runtime/executor/task.py).

Receiving: a routed input's watermark is the minimum over its N channels' last
watermarks (an ended channel counts as MAX_WATERMARK); end of input when every channel
ended. BATCH mode has no watermarks.

Back-pressure and deadlock freedom. A sender has at most `credits` unacknowledged
batches per (edge, target); the receiver's reader thread always drains its sockets (so
`sendall` never blocks on a busy peer) and returns a credit once the operator consumed
the batch. The main loop never blocks on a send: it *gates* work instead. It does not
poll a source, nor consume a received batch at node X, while an outgoing buffer of an
edge reachable from X without crossing another routed edge (`plan.downstream[X]`) holds
`credits` batches or more. Watermarks and end-of-input messages are never gated.
Deadlock freedom by induction over the stages in reverse topological order: a batch
whose node reaches no routed edge (the last stage) is always consumed, so credits on the
last edges always come back and their buffers drain; a buffer of an earlier edge drains
as soon as the consumers behind it, whose own gating only depends on later edges'
buffers, consume - the "waits for" relation follows the DAG, so it has no cycle. The
result (and the inputs of parent-run sinks) drain into the parent, which always reads.

Checkpoints (runtime/executor/parallel/barriers.py): a barrier travels in its channel's
order like a watermark; a channel held back by alignment keeps its messages queued, and
a message of this worker to itself (`_local`) then queues behind them too (counted as
that channel's buffer for gating, so alignment back-pressures like a slow consumer).
"""

from __future__ import annotations

import pickle
import socket
from collections import deque
from typing import Any

import numpy as np
import pyarrow as pa

from runtime.batch import MAX_WATERMARK, MIN_WATERMARK
from runtime.config.core import MAX_PARALLELISM
from runtime.executor.parallel import channels as ch
from runtime.executor.parallel.barriers import BarrierHandler
from runtime.executor.parallel.plan import RESULT_EDGE, Edge, ParallelPlan
from runtime.executor.results import result_batch
from runtime.executor.task import TaskRunner, Transport
from runtime.graph import BATCH, JobGraph
from runtime.operators.union import HASH, REBALANCE, rebalance_slices
from runtime.state.keygroups import key_groups_of_rows, subtask_of_key_groups


def partition(
    batch: pa.RecordBatch, edge: Edge, n: int, max_parallelism: int, turn: int = 0
) -> list[tuple[int, pa.RecordBatch]]:
    """(target subtask, rows) for every subtask that gets rows of `batch` on `edge`:
    "single" sends everything to subtask 0; "hash" by the key group of the key columns;
    "rebalance" dealt in near-equal slices starting at subtask `turn` (`rebalance_slices`).
    Only the first `edge.targets(n)` subtasks get rows."""
    n = edge.targets(n)
    if edge.dist == REBALANCE:
        return [(t, batch.slice(off, length)) for t, off, length in rebalance_slices(batch.num_rows, n, turn)]
    if edge.dist != HASH or n == 1:
        return [(0, batch)]
    cols = [batch.column(k) for k in edge.keys]
    groups = key_groups_of_rows(cols, batch.num_rows, max_parallelism)
    targets = subtask_of_key_groups(groups, n, max_parallelism)
    counts = np.bincount(targets, minlength=n)
    nonzero = np.flatnonzero(counts)
    if len(nonzero) == 1:
        return [(int(nonzero[0]), batch)]
    ordered = batch.take(pa.array(np.argsort(targets, kind="stable")))
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    return [(int(t), ordered.slice(int(starts[t]), int(counts[t]))) for t in nonzero]  # loop over subtasks


class ChannelTransport(Transport):
    """Routed edges of subtask `index` of `n` over `peers` / `parent` sockets (module
    docstring). `task` and `barriers` are attached once the runner and the barrier
    handler exist (they need the transport first)."""

    task: TaskRunner
    barriers: BarrierHandler

    def __init__(
        self,
        graph: JobGraph,
        plan: ParallelPlan,
        index: int,
        n: int,
        peers: dict[int, socket.socket],
        parent: socket.socket,
        credits: int,
    ) -> None:
        self.graph, self.plan = graph, plan
        self.index, self.n = index, n
        self.peers, self.parent = peers, parent
        self.credits = max(1, credits)
        self.max_parallelism = MAX_PARALLELISM.get(graph.config)
        self.edges = {e.id: e for e in plan.edges}
        self._inbound = {e.dst for e in plan.edges}
        self.out: dict[tuple[int, int], deque[tuple[int, Any]]] = {}
        self.waiting: dict[tuple[int, int], int] = {}  # batches in `out` not sent yet
        self.credit: dict[tuple[int, int], int] = {}
        self.max_in_flight: dict[tuple[int, int], int] = {}
        self.inq: dict[tuple[int, int], deque[tuple[int, Any]]] = {}
        self.max_queued: dict[tuple[int, int], int] = {}
        self.chan_wm: dict[int, list[int]] = {e.id: [MIN_WATERMARK] * n for e in plan.edges if not e.to_parent}
        self.chan_end: dict[int, set[int]] = {e.id: set() for e in plan.edges if not e.to_parent}
        self.gated: set[int] = set()
        self.turns: dict[int, int] = {}  # rebalance edges: batches sent so far (round-robin)

    # ------------------------------------------------------------------ Transport
    def edge(self, src: int, dst: int, idx: int) -> Edge | None:
        return self.plan.routed(src, dst, idx)

    def send(self, edge: Any, batches: list[pa.RecordBatch], watermarks: list[int]) -> None:
        e: Edge = edge
        if e.to_parent:
            for b in batches:
                self._enqueue(e.id, ch.PARENT, ch.BATCH, ch.batch_to_bytes(b))
            return
        for b in batches:
            turn = self.turns[e.id] = self.turns.get(e.id, self.index) + 1
            for target, part in partition(b, e, self.n, self.max_parallelism, turn):
                if target == self.index:
                    self._local(e, ch.BATCH, part)
                else:
                    self._enqueue(e.id, target, ch.BATCH, ch.batch_to_bytes(part))
        for wm in watermarks:
            for target in range(self.n):
                if target == self.index:
                    self._local(e, ch.WATERMARK, wm)
                else:
                    self._enqueue(e.id, target, ch.WATERMARK, ch.int_payload(wm))

    def end(self, edge: Any) -> None:
        e: Edge = edge
        if e.to_parent:
            self._enqueue(e.id, ch.PARENT, ch.END, b"")
            return
        for target in range(self.n):
            if target == self.index:
                self._local(e, ch.END, None)
            else:
                self._enqueue(e.id, target, ch.END, b"")

    def result(self, batch: pa.RecordBatch) -> None:
        self._enqueue(RESULT_EDGE, ch.PARENT, ch.BATCH, ch.batch_to_bytes(result_batch(self.graph, batch)))

    def receives(self, nid: int) -> bool:
        return nid in self._inbound

    def ends_input_here(self, nid: int) -> bool:
        return self.index == 0 or nid not in self.plan.single_nodes  # see ParallelPlan.single_nodes

    # ------------------------------------------------------------------ receiving
    def on_data(self, peer: int, kind: int, edge: int, payload: bytes) -> None:
        """A CREDIT, or a BATCH / WATERMARK / END / BARRIER message of channel (edge, peer)."""
        key = (edge, peer)
        if kind == ch.CREDIT:
            self.credit[key] = self.credit.get(key, self.credits) + ch.int_of(payload)
            self._flush(key)
            return
        dq = self.inq.setdefault(key, deque())
        dq.append((kind, payload))
        if kind == ch.BATCH:
            queued = sum(1 for k, _ in dq if k == ch.BATCH)
            self.max_queued[key] = max(self.max_queued.get(key, 0), queued)

    def consume_inputs(self) -> bool:
        """Consume queued channel messages in order, per channel; a batch waits while its
        node is gated (its credit is returned once consumed)."""
        progressed = False
        for (eid, src), dq in list(self.inq.items()):
            e = self.edges[eid]
            while dq:
                kind, _ = dq[0]
                if self.barriers.channel_blocked(eid, src) or (kind == ch.BATCH and self.is_gated(e.dst)):
                    break
                _, payload = dq.popleft()
                progressed = True
                self._channel_message(e, src, kind, payload)
                if kind == ch.BATCH and src != self.index:
                    ch.send(self.peers[src], ch.CREDIT, eid, ch.int_payload(1))
        return progressed

    def all_ended(self) -> bool:
        """Every inbound channel ended and nothing is left queued."""
        return all(len(self.chan_end[e]) == self.n for e in self.chan_end) and not any(self.inq.values())

    def _channel_message(self, e: Edge, src: int, kind: int, payload: Any) -> None:
        """One message of channel (e, src), in channel order. Messages of this worker to
        itself carry objects (a RecordBatch, a watermark int, the barrier's dict)."""
        if kind == ch.BATCH:
            batch = payload if isinstance(payload, pa.RecordBatch) else ch.batch_from_bytes(payload)
            self.task.push(e.dst, e.idx, [batch], [])
        elif kind == ch.WATERMARK:
            self._channel_watermark(e, src, payload if isinstance(payload, int) else ch.int_of(payload))
        elif kind == ch.END:
            self._channel_end(e, src)
        else:
            self.barriers.on_barrier(e, src, payload if isinstance(payload, dict) else pickle.loads(payload))

    def _local(self, e: Edge, kind: int, payload: Any) -> None:
        """A message of this worker to itself on a routed edge: handled at once, unless
        the channel is held back by barrier alignment or already has messages queued
        (then it queues behind them, keeping the channel's order)."""
        key = (e.id, self.index)
        dq = self.inq.get(key)
        if dq or self.barriers.channel_blocked(*key):
            self.inq.setdefault(key, deque()).append((kind, payload))
        else:
            self._channel_message(e, self.index, kind, payload)

    def _channel_watermark(self, e: Edge, src: int, wm: int) -> None:
        wms = self.chan_wm[e.id]
        if wm <= wms[src]:
            return
        wms[src] = wm
        combined = min(wms)
        if combined > self.task.input_wm[e.dst][e.idx]:
            self.task.push(e.dst, e.idx, [], [combined])

    def _channel_end(self, e: Edge, src: int) -> None:
        ended = self.chan_end[e.id]
        ended.add(src)
        if self.graph.mode != BATCH:
            self._channel_watermark(e, src, MAX_WATERMARK)
        if len(ended) == self.n:
            self.task.end_input(e.dst, e.idx)
        self.barriers.on_channel_end(e)

    # ------------------------------------------------------------------ sending
    def send_barrier(self, eid: int, info: dict[str, Any]) -> None:
        """Forward a checkpoint barrier on routed edge `eid`, or on the result channel
        (RESULT_EDGE), behind the data before it."""
        if eid == RESULT_EDGE:
            self._enqueue(eid, ch.PARENT, ch.BARRIER, pickle.dumps(info))
            return
        e = self.edges[eid]
        if e.to_parent:
            self._enqueue(eid, ch.PARENT, ch.BARRIER, pickle.dumps(info))
            return
        payload = pickle.dumps(info)
        for target in range(self.n):
            if target == self.index:
                self._local(e, ch.BARRIER, info)
            else:
                self._enqueue(eid, target, ch.BARRIER, payload)

    def is_gated(self, nid: int) -> bool:
        """Whether work at `nid` must wait: a buffer it would feed is full."""
        limit = self.credits
        for eid in self.plan.downstream.get(nid, ()):
            for t in self._targets(eid):
                if t == self.index:  # held back by alignment: counts as this channel's buffer
                    local = self.inq.get((eid, t))
                    waiting = sum(1 for k, _ in local if k == ch.BATCH) if local else 0
                else:
                    waiting = self.waiting.get((eid, t), 0)
                if waiting >= limit:
                    self.gated.add(nid)
                    return True
        return False

    def pending_output(self) -> bool:
        """Whether anything still waits in an outgoing buffer."""
        return any(self.out.values())

    def _targets(self, eid: int) -> range | tuple[int]:
        if eid == RESULT_EDGE or self.edges[eid].to_parent:
            return (ch.PARENT,)
        return range(self.n)

    def _enqueue(self, eid: int, target: int, kind: int, payload: Any) -> None:
        key = (eid, target)
        self.out.setdefault(key, deque()).append((kind, payload))
        if kind == ch.BATCH:
            self.waiting[key] = self.waiting.get(key, 0) + 1
        self._flush(key)

    def _flush(self, key: tuple[int, int]) -> None:
        """Send what the credits of (edge, target) allow, in order."""
        dq = self.out.get(key)
        if not dq:
            return
        sock = self.parent if key[1] == ch.PARENT else self.peers[key[1]]
        while dq:
            kind, payload = dq[0]
            if kind == ch.BATCH:
                credit = self.credit.get(key, self.credits)
                if credit <= 0:
                    return
                self.credit[key] = credit - 1
                self.waiting[key] -= 1
                in_flight = self.credits - credit + 1
                self.max_in_flight[key] = max(self.max_in_flight.get(key, 0), in_flight)
            dq.popleft()
            ch.send(sock, kind, key[0], payload)
