"""One worker process of a parallel job: subtask `index` of every node (slot sharing).

The worker is a task runner (runtime/executor/task.py: the same operators, depth-first
push, watermark and end-of-input rules as the local executor) whose transport is
`ChannelTransport` (runtime/executor/parallel/transport.py): the edges the planner's
Exchanges route go through Arrow IPC channels to the other workers or the parent, with
credit-based back-pressure. Checkpoint barriers are aligned per stage by
runtime/executor/parallel/barriers.py. This module is the worker's main loop: read the
sockets, consume channel input, poll sources unless gated, report metrics and DONE.
"""

from __future__ import annotations

import os
import pickle
import queue
import signal
import socket
import time
import traceback
from typing import Any

from runtime.checkpoint.config import CheckpointConfig
from runtime.checkpoint.faults import kill_also
from runtime.checkpoint.restore import load_checkpoint
from runtime.checkpoint.uid import operator_uids
from runtime.config.core import source_batch_rows
from runtime.executor.parallel import channels as ch
from runtime.executor.parallel.barriers import BarrierHandler
from runtime.executor.parallel.plan import ParallelPlan
from runtime.executor.parallel.transport import ChannelTransport
from runtime.executor.task import TaskRunner
from runtime.executor.task_state import restore_task
from runtime.graph import BATCH, JobGraph

METRICS_INTERVAL_S = 0.25
WAIT_S = 0.05


class WorkerEngine:
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
        self.graph, self.plan = graph, plan
        self.index, self.n = index, n
        self.parent = parent
        self.restore_location = restore
        cfg = graph.config or {}
        self.batch_rows = source_batch_rows(cfg, graph.mode == BATCH)
        self.checkpoint_config = CheckpointConfig.from_config(cfg)
        self.transport = ChannelTransport(graph, plan, index, n, peers, parent, credits)
        self.task = TaskRunner(
            graph,
            self.transport,
            operator_uids(graph),
            checkpointing=self.checkpoint_config.enabled,
            subtask_index=index,
            subtask_count=n,
            runs_here=[x.id for x in graph.nodes if x.id not in plan.parent_nodes],  # the parent runs those sinks
            subtask_in_config=True,
        )
        self.transport.task = self.task
        self.exit = False
        self.reader = ch.Reader({**peers, ch.PARENT: parent})

    # ------------------------------------------------------------------ main loop
    def serve(self) -> None:
        """Run until every node ended and everything was sent, report DONE, then wait for
        the parent's EXIT (peers may still return credits until all are done)."""
        task, transport = self.task, self.transport
        task.build()
        barriers = BarrierHandler(
            task,
            self.plan,
            self.index,
            self.n,
            self.parent,
            self.checkpoint_config.mode == "EXACTLY_ONCE",
            transport.chan_end,
            transport.send_barrier,
        )
        transport.barriers = barriers
        self.reader.start()
        failed = False
        try:
            task.open()
            if self.checkpoint_config.enabled or self.restore_location:
                task.check_checkpointable()
            if self.restore_location:
                snap = load_checkpoint(self.restore_location, dict(self.graph.config or {}), verify=False)
                restore_task(task, snap, self.index, self.n, self.checkpoint_config.ignore_unclaimed_state)
            active = task.sources()
            for sid in list(active):
                if not task.operators[sid].splits_input and self.index != 0:
                    active.remove(sid)  # Values & co: subtask 0 alone emits the rows
                    task.end_output(sid, is_source=True)
            done_sent = False
            last_metrics = 0.0
            while not self.exit:
                transport.gated = set()
                progressed = self._pump(0.0)
                progressed |= transport.consume_inputs()
                for sid in list(active):
                    if transport.is_gated(sid) or barriers.source_blocked(sid):
                        continue
                    progressed |= task.poll_source(sid, active, self.batch_rows)
                now = time.monotonic()
                if not done_sent and not active and transport.all_ended() and not transport.pending_output():
                    self._send_metrics()
                    ch.send(self.parent, ch.DONE, self.index)
                    done_sent = True
                elif now - last_metrics > METRICS_INTERVAL_S:
                    self._send_metrics()
                    last_metrics = now
                if not progressed:
                    task.check_idle()
                    task.fire_timers()
                    gated = set(transport.gated)
                    t0 = time.perf_counter_ns()
                    self._pump(WAIT_S)
                    waited = time.perf_counter_ns() - t0
                    for nid in gated:
                        x = task.metrics[nid].extra
                        x["backpressured_ns"] = x.get("backpressured_ns", 0) + waited
        except BaseException:
            failed = True
            raise
        finally:
            try:
                task.close(failed)
            finally:
                self.reader.stop()

    def _send_metrics(self) -> None:
        snap = {
            "metrics": {
                nid: (m.rows_in, m.rows_out, m.batches_in, m.late_rows_dropped, dict(m.extra))
                for nid, m in self.task.metrics.items()
            },
            "watermark": self.task.result_wm,
            "max_in_flight": dict(self.transport.max_in_flight),
            "max_queued": dict(self.transport.max_queued),
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
        if kind in (ch.CREDIT, ch.BATCH, ch.WATERMARK, ch.END, ch.BARRIER):
            self.transport.on_data(peer, kind, edge, payload)
        elif kind == ch.TRIGGER:
            self.transport.barriers.on_trigger(pickle.loads(payload))
        elif kind == ch.COMPLETE:
            self.transport.barriers.on_complete(edge)
        elif kind == ch.ABORT:
            self.transport.barriers.on_abort(edge)
        elif kind == ch.EXIT or (kind == ch.CLOSED and peer == ch.PARENT):
            self.exit = True  # the parent is done with us (or died: never outlive it)


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
