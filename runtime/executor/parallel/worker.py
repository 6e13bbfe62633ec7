"""One worker process of a parallel job: subtask `index` of every node (slot sharing).

The engine is the local executor's (same operators, same depth-first push, same
watermark and end-of-input rules) with routed edges (runtime.executor.parallel.plan)
replaced by channels: a batch on a routed edge is partitioned by key group
(`runtime.state.keygroups`, the function the state backends use) and each part goes to
its owner; the local part is consumed at once, the others wait in an outgoing buffer
per (edge, target) until the target grants a credit.

Watermarks: a routed input's watermark is the minimum over its N channels' last
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
Time spent waiting while gated is the gated nodes' `backpressured_ns`.

Checkpoints (runtime/executor/parallel/barriers.py): a barrier travels in its channel's
order like a watermark; a channel held back by alignment keeps its messages queued, and
a message of this worker to itself (`_local`) then queues behind them too (counted as
that channel's buffer for gating, so alignment back-pressures like a slow consumer).
"""

from __future__ import annotations

import os
import pickle
import queue
import signal
import socket
import time
import traceback
from collections import deque
from typing import Any

import numpy as np
import pyarrow as pa

from runtime.batch import MAX_WATERMARK, MIN_WATERMARK
from runtime.checkpoint.faults import kill_also
from runtime.checkpoint.restore import load_checkpoint
from runtime.executor.local import LocalExecutor, _add_busy
from runtime.executor.parallel import channels as ch
from runtime.executor.parallel.barriers import BarrierHandler
from runtime.executor.parallel.plan import RESULT_EDGE, Edge, ParallelPlan
from runtime.graph import BATCH, JobGraph, Node
from runtime.operators.base import Output
from runtime.state.keygroups import key_groups_of_rows, subtask_of_key_groups

METRICS_INTERVAL_S = 0.25
WAIT_S = 0.05


def partition(batch: pa.RecordBatch, edge: Edge, n: int, max_parallelism: int) -> list[tuple[int, pa.RecordBatch]]:
    """(target subtask, rows) for every subtask that gets rows of `batch` on `edge`:
    "single" sends everything to subtask 0; "hash" by the key group of the key columns."""
    if edge.dist != "hash" or n == 1:
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


class WorkerEngine(LocalExecutor):
    """Runs subtask `index` of `n` of every worker-side node and exchanges data with the
    other workers and the parent through `peers` / `parent` sockets."""

    def __init__(
        self,
        graph: JobGraph,
        plan: ParallelPlan,
        index: int,
        n: int,
        peers: dict[int, socket.socket],
        parent: socket.socket,
        credits: int,
        restore: str | None = None,
    ) -> None:
        super().__init__(graph)
        self.restore_location = restore
        self.plan = plan
        self.index, self.n = index, n
        self.subtask_index, self.subtask_count = index, n
        self.peers, self.parent = peers, parent
        self.credits = max(1, credits)
        self.max_parallelism = int((graph.config or {}).get("pipeline.max-parallelism") or 128)
        self.edges = {e.id: e for e in plan.edges}
        self.out: dict[tuple[int, int], deque[tuple[int, Any]]] = {}
        self.waiting: dict[tuple[int, int], int] = {}  # batches in `out` not sent yet
        self.credit: dict[tuple[int, int], int] = {}
        self.max_in_flight: dict[tuple[int, int], int] = {}
        self.inq: dict[tuple[int, int], deque[tuple[int, Any]]] = {}
        self.max_queued: dict[tuple[int, int], int] = {}
        self.chan_wm: dict[int, list[int]] = {}
        self.chan_end: dict[int, set[int]] = {}
        self.exit = False
        self.reader = ch.Reader({**peers, ch.PARENT: parent})
        self._gated: set[int] = set()
        self._output_ended: set[int] = set()
        self.barriers: BarrierHandler | None = None

    # ------------------------------------------------------------------ setup
    def _runs_here(self, node: Node) -> bool:
        return node.id not in self.plan.parent_nodes  # the parent runs those sinks

    def _operator_config(self, node: Node, cfg: dict[str, str]) -> dict[str, str]:
        return {**super()._operator_config(node, cfg), "subtask.index": str(self.index)}

    def _build(self) -> None:
        """As the local executor's, for the nodes this worker runs, each with its subtask
        index and the job's parallelism; then the channels' watermark bookkeeping."""
        super()._build()
        for e in self.plan.edges:
            if not e.to_parent:
                self.chan_wm[e.id] = [MIN_WATERMARK] * self.n
                self.chan_end[e.id] = set()

    # ------------------------------------------------------------------ main loop
    def serve(self) -> None:
        """Run until every node ended and everything was sent, report DONE, then wait for
        the parent's EXIT (peers may still return credits until all are done)."""
        self._build()
        self.barriers = BarrierHandler(self)
        self.reader.start()
        opened = []
        try:
            for node in self._order:
                self.operators[node.id].open()
                opened.append(self.operators[node.id])
            if self.checkpoint_config.enabled or self.restore_location:
                self._check_checkpointable()
            if self.restore_location:
                self._restore_subtask(
                    load_checkpoint(self.restore_location, dict(self.graph.config or {})), self.index, self.n
                )
            active = [n.id for n in self._order if not n.inputs]
            for sid in list(active):
                if self.graph.node(sid).operator != "TableSourceScan" and self.index != 0:
                    active.remove(sid)  # Values & co: subtask 0 alone emits the rows
                    self._end_output(sid, is_source=True)
            done_sent = False
            last_metrics = 0.0
            while not self.exit:
                self._gated = set()
                progressed = self._pump(0.0)
                progressed |= self._consume_inputs()
                for sid in list(active):
                    if self._is_gated(sid) or self.barriers.source_blocked(sid):
                        continue
                    progressed |= self._poll_source(sid, active)
                now = time.monotonic()
                if not done_sent and not active and self._all_ended() and not any(self.out.values()):
                    self._send_metrics()
                    ch.send(self.parent, ch.DONE, self.index)
                    done_sent = True
                elif now - last_metrics > METRICS_INTERVAL_S:
                    self._send_metrics()
                    last_metrics = now
                if not progressed:
                    self._check_idle()
                    self._fire_timers()
                    gated = set(self._gated)
                    t0 = time.perf_counter_ns()
                    self._pump(WAIT_S)
                    waited = time.perf_counter_ns() - t0
                    for nid in gated:
                        x = self.metrics[nid].extra
                        x["backpressured_ns"] = x.get("backpressured_ns", 0) + waited
        finally:
            for op in reversed(opened):
                try:
                    op.close()
                finally:
                    if op.ctx.state is not None:
                        op.ctx.state.dispose()
            self.reader.stop()

    def _all_ended(self) -> bool:
        return all(len(self.chan_end[e]) == self.n for e in self.chan_end) and not any(self.inq.values())

    def _send_metrics(self) -> None:
        snap = {
            "metrics": {
                nid: (m.rows_in, m.rows_out, m.batches_in, m.late_rows_dropped, dict(m.extra))
                for nid, m in self.metrics.items()
            },
            "watermark": self._result_wm,
            "max_in_flight": dict(self.max_in_flight),
            "max_queued": dict(self.max_queued),
        }
        ch.send(self.parent, ch.METRICS, self.index, pickle.dumps(snap))

    # ------------------------------------------------------------------ receiving
    def _pump(self, timeout: float) -> bool:
        """Move what the reader thread received into the per-channel queues; wait up to
        `timeout` seconds for the first message. True when something arrived."""
        q = self.reader.queue
        got = False
        try:
            msg = q.get(timeout=timeout) if timeout > 0 else q.get_nowait()
            while True:
                self._on_message(*msg)
                got = True
                msg = q.get_nowait()
        except queue.Empty:
            return got

    def _on_message(self, peer: int, kind: int, edge: int, payload: bytes) -> None:
        if kind == ch.CREDIT:
            key = (edge, peer)
            self.credit[key] = self.credit.get(key, self.credits) + ch.int_of(payload)
            self._flush(key)
        elif kind in (ch.BATCH, ch.WATERMARK, ch.END, ch.BARRIER):
            key = (edge, peer)
            dq = self.inq.setdefault(key, deque())
            dq.append((kind, payload))
            if kind == ch.BATCH:
                queued = sum(1 for k, _ in dq if k == ch.BATCH)
                self.max_queued[key] = max(self.max_queued.get(key, 0), queued)
        elif kind == ch.TRIGGER:
            assert self.barriers is not None
            self.barriers.on_trigger(pickle.loads(payload))
        elif kind == ch.COMPLETE:
            assert self.barriers is not None
            self.barriers.on_complete(edge)
        elif kind == ch.EXIT or (kind == ch.CLOSED and peer == ch.PARENT):
            self.exit = True  # the parent is done with us (or died: never outlive it)

    def _consume_inputs(self) -> bool:
        """Consume queued channel messages in order, per channel; a batch waits while its
        node is gated (its credit is returned once consumed)."""
        progressed = False
        assert self.barriers is not None
        for (eid, src), dq in list(self.inq.items()):
            e = self.edges[eid]
            while dq:
                kind, payload = dq[0]
                if self.barriers.channel_blocked(eid, src) or (kind == ch.BATCH and self._is_gated(e.dst)):
                    break
                dq.popleft()
                progressed = True
                self._channel_message(e, src, kind, payload)
                if kind == ch.BATCH and src != self.index:
                    ch.send(self.peers[src], ch.CREDIT, eid, ch.int_payload(1))
        return progressed

    def _channel_message(self, e: Edge, src: int, kind: int, payload: Any) -> None:
        """One message of channel (e, src), in channel order. Messages of this worker to
        itself carry objects (a RecordBatch, a watermark int, the barrier's dict)."""
        if kind == ch.BATCH:
            self._consume(e, payload if isinstance(payload, pa.RecordBatch) else ch.batch_from_bytes(payload))
        elif kind == ch.WATERMARK:
            self._channel_watermark(e, src, payload if isinstance(payload, int) else ch.int_of(payload))
        elif kind == ch.END:
            self._channel_end(e, src)
        else:
            assert self.barriers is not None
            self.barriers.on_barrier(e, src, payload if isinstance(payload, dict) else pickle.loads(payload))

    def _local(self, e: Edge, kind: int, payload: Any) -> None:
        """A message of this worker to itself on a routed edge: handled at once, unless
        the channel is held back by barrier alignment or already has messages queued
        (then it queues behind them, keeping the channel's order)."""
        key = (e.id, self.index)
        dq = self.inq.get(key)
        assert self.barriers is not None
        if dq or self.barriers.channel_blocked(*key):
            self.inq.setdefault(key, deque()).append((kind, payload))
        else:
            self._channel_message(e, self.index, kind, payload)

    def send_barrier(self, eid: int, info: dict[str, Any]) -> None:
        """Forward a checkpoint barrier on routed edge `eid` (behind the data before it)."""
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

    def _consume(self, e: Edge, batch: pa.RecordBatch) -> None:
        op = self.operators[e.dst]
        cm = self.metrics[e.dst]
        cm.rows_in += batch.num_rows
        cm.batches_in += 1
        out = Output()
        t0 = time.perf_counter_ns()
        op.process_batch(batch, e.idx, out)
        _add_busy(cm, t0)
        self._drain(e.dst, out)

    def _channel_watermark(self, e: Edge, src: int, wm: int) -> None:
        wms = self.chan_wm[e.id]
        if wm <= wms[src]:
            return
        wms[src] = wm
        combined = min(wms)
        if combined > self._input_wm[e.dst][e.idx]:
            self._input_wm[e.dst][e.idx] = combined
            self._advance(e.dst)

    def _channel_end(self, e: Edge, src: int) -> None:
        ended = self.chan_end[e.id]
        ended.add(src)
        if self.graph.mode != BATCH:
            self._channel_watermark(e, src, MAX_WATERMARK)
        if len(ended) == self.n:
            self._end_input(e.dst, e.idx)
        if self.barriers is not None:
            self.barriers.on_channel_end(e)

    # ------------------------------------------------------------------ sending
    def _is_gated(self, nid: int) -> bool:
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
                    self._gated.add(nid)
                    return True
        return False

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

    def _deliver(self, nid: int, batches: list[pa.RecordBatch], watermarks: list[int]) -> None:
        """As the local executor's, with routed edges sent through channels."""
        m = self.metrics[nid]
        is_result = nid == self.graph.result_node
        if watermarks and is_result:
            self._result_wm = max(self._result_wm, *watermarks)
        for b in batches:
            m.rows_out += b.num_rows
            if is_result:
                self._enqueue(RESULT_EDGE, ch.PARENT, ch.BATCH, ch.batch_to_bytes(self._result_batch(b)))
        for cid, idx in self._consumers.get(nid, []) + self._parent_consumers(nid):
            e = self.plan.routed(nid, cid, idx)
            if e is not None:
                self._route(e, batches, watermarks)
                continue
            self._push(cid, idx, batches, watermarks)

    def _parent_consumers(self, nid: int) -> list[tuple[int, int]]:
        return [(e.dst, e.idx) for e in self.plan.edges if e.to_parent and e.src == nid]

    def _route(self, e: Edge, batches: list[pa.RecordBatch], watermarks: list[int]) -> None:
        if e.to_parent:
            for b in batches:
                self._enqueue(e.id, ch.PARENT, ch.BATCH, ch.batch_to_bytes(b))
            return
        for b in batches:
            for target, part in partition(b, e, self.n, self.max_parallelism):
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

    def _end_output(self, nid: int, is_source: bool = False) -> None:
        """Node `nid` ended: MAX_WATERMARK (streaming sources), then end of input on
        every consumer, through the channels for routed edges."""
        if nid in self._output_ended:  # restored as ended: its consumers know already
            return
        self._output_ended.add(nid)
        if is_source and self.graph.mode != BATCH:
            self._deliver(nid, [], [MAX_WATERMARK])
        for cid, idx in self._consumers.get(nid, []) + self._parent_consumers(nid):
            e = self.plan.routed(nid, cid, idx)
            if e is None:
                self._end_input(cid, idx)
            elif e.to_parent:
                self._enqueue(e.id, ch.PARENT, ch.END, b"")
            else:
                for target in range(self.n):
                    if target == self.index:
                        self._local(e, ch.END, None)
                    else:
                        self._enqueue(e.id, target, ch.END, b"")

    def _end_input(self, cid: int, idx: int) -> None:
        if idx in self._ended[cid]:  # restored as ended (the snapshot was taken after it)
            if len(self._ended[cid]) == len(self.graph.node(cid).inputs):
                self._end_output(cid)
            return
        if self.index == 0 or cid not in self.plan.single_nodes:  # see ParallelPlan.single_nodes
            out = Output()
            t0 = time.perf_counter_ns()
            self.operators[cid].end_input(idx, out)
            _add_busy(self.metrics[cid], t0)
            self._drain(cid, out)
        self._ended[cid].add(idx)
        if len(self._ended[cid]) == len(self.graph.node(cid).inputs):
            self._end_output(cid)

    def _is_idle(self, nid: int) -> bool:
        """An Exchange's input comes from every worker: never treated as idle here (an
        idle source split elsewhere cannot be seen; conservative: the watermark waits)."""
        if self.plan.inbound(nid):
            return False
        return super()._is_idle(nid)


def worker_main(
    graph: JobGraph,
    plan: ParallelPlan,
    index: int,
    n: int,
    peers: dict[int, socket.socket],
    parent: socket.socket,
    credits: int,
    foreign: list[socket.socket],
    restore: str | None = None,
) -> None:
    """Entry point of a forked worker: close the sockets of other processes, serve, and
    report an exception to the parent (pickled when possible, else its text)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and tears down
    kill_also(os.getppid())  # an injected fault kills the whole job (runtime/checkpoint/faults.py)
    for s in foreign:
        s.close()
    try:
        WorkerEngine(graph, plan, index, n, peers, parent, credits, restore).serve()
    except BaseException as e:  # noqa: BLE001 - every failure goes to the parent
        text = f"{type(e).__name__}: {e}"
        tb = traceback.format_exc()
        try:
            exc: Any = pickle.loads(pickle.dumps(e))
        except Exception:  # noqa: BLE001 - unpicklable exceptions travel as text
            exc = None
        try:
            ch.send(parent, ch.ERROR, index, pickle.dumps((exc, text, tb)))
        except Exception:  # noqa: BLE001, S110 - the parent is gone
            pass
        os._exit(1)
