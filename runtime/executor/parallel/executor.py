"""ParallelExecutor: `parallelism.default` = N > 1 runs a JobGraph in N worker processes.

The parent process coordinates: it forks N workers (multiprocessing "fork": the graph,
operator classes and interactive Python UDFs are already in memory), connects every
pair of workers and every worker to itself with a socket pair, and then only reads:
the query's result batches (yielded from `run()` exactly as LocalExecutor yields them),
the input of sinks that must run in one process (print, memory, duckdb; see
runtime.executor.parallel.plan), periodic metrics, and DONE / ERROR. A result batch's
credit goes back to its worker when the caller asks for the next batch, so a slow
consumer of `run()` slows the whole job down rather than buffering without bound.

Checkpoints, savepoints, restore and restarts: the parent is the checkpoint coordinator
(runtime/executor/parallel/checkpoints.py); `run()` retries a failed attempt from the
latest complete checkpoint as `restart-strategy.type` allows, like LocalExecutor.run.

Teardown is unconditional (job end, worker error, stop_event, Ctrl-C, generator
close): EXIT to every worker, a short join, then terminate/kill; workers also leave
when the parent's socket closes, so no process outlives the job.
"""

from __future__ import annotations

import multiprocessing
import pickle
import selectors
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any

import pyarrow as pa

from runtime.batch import MIN_WATERMARK
from runtime.checkpoint.coordinator import SnapshotRequest
from runtime.checkpoint.restart import run_with_restarts
from runtime.checkpoint.restore import LoadedSnapshot
from runtime.config.core import job_parallelism as configured_parallelism
from runtime.executor.parallel import channels as ch
from runtime.executor.parallel.checkpoints import ParentCheckpoints
from runtime.executor.parallel.options import NETWORK_CREDITS
from runtime.executor.parallel.plan import RESULT_EDGE, ParallelPlan, plan_parallel
from runtime.executor.parallel.worker import worker_main
from runtime.executor.task import TaskRunner, Transport
from runtime.executor.task_state import restore_task
from runtime.graph import JobGraph
from runtime.operators.base import Metrics, Operator
from runtime.operators.sink import ORIGIN_SUBTASK
from runtime.state.options import backend_kind
from runtime.state.rocksdb import RocksDBForkError
from runtime.state.rocksdb import threads_started_here as rocksdb_threads_started_here

JOIN_SECONDS = 5.0


class WorkerFailedError(RuntimeError):
    """A worker process ended without reporting (killed, crashed)."""


def refuse_fork_after_rocksdb(graph: JobGraph) -> None:
    """Fail before forking workers for a rocksdb job in a process that already opened a
    RocksDB database: the workers would inherit RocksDB's thread-pool bookkeeping without
    its threads and hang at their first flush (runtime/state/rocksdb.py). The job process
    itself opens none (its sinks' backends open their database on first use)."""
    if backend_kind(graph.config) == "rocksdb" and rocksdb_threads_started_here():
        raise RocksDBForkError(
            "cannot start parallel workers for a job with 'state.backend.type' = 'rocksdb' in a "
            "process that already used RocksDB (its background threads do not survive fork): "
            "run the job in a new process (e.g. its own `streamsql -f`), or at parallelism 1"
        )


def job_parallelism(graph: JobGraph) -> int:
    """The job's parallelism (`table.exec.resource.default-parallelism`, else
    `parallelism.default`; a bad value fails naming the key)."""
    return configured_parallelism(graph.config)


class ParallelExecutor:
    """`ParallelExecutor(graph, stop_event).run()`: the LocalExecutor contract (yields the
    result node's batches, data columns plus `__op`; `metrics[node_id]` summed over the
    subtasks, refreshed while running; `current_watermark`) over N worker processes."""

    def __init__(
        self, graph: JobGraph, stop_event: threading.Event | None = None, parallelism: int | None = None
    ) -> None:
        self.graph = graph
        self.stop_event = stop_event
        self.parallelism = parallelism or job_parallelism(graph)
        cfg = graph.config or {}
        self.credits = NETWORK_CREDITS.get(cfg)
        self.plan: ParallelPlan = plan_parallel(graph)
        self.metrics: dict[int, Metrics] = {n.id: Metrics() for n in graph.nodes}
        self.operators: dict[int, Operator] = {}
        self.restored_from: str | None = None
        self.restarts = 0
        # Largest number of unacknowledged batches seen per (worker, edge, target) and of
        # queued received batches per (worker, edge, source): both bounded by the credits.
        self.max_in_flight: dict[tuple[int, int, int], int] = {}
        self.max_queued: dict[tuple[int, int, int], int] = {}
        self._worker_metrics: dict[int, dict[int, tuple[int, int, int, int, dict[str, int]]]] = {}
        self._worker_wm: dict[int, int] = {}
        self.cp = ParentCheckpoints(graph, self.plan, self.parallelism)
        self.checkpoint_config = self.cp.config
        self.coordinator = self.cp.coordinator
        self.uids = self.cp.uids
        self.parent_task = TaskRunner(
            graph,
            Transport(),
            self.uids,
            checkpointing=self.checkpoint_config.enabled,
            runs_here=self.plan.parent_nodes,
        )
        self._ends: dict[int, set[int]] = {}

    @property
    def current_watermark(self) -> int | None:
        """The result's watermark: the minimum over the workers (None before the first)."""
        if len(self._worker_wm) < self.parallelism:
            return None
        wm = min(self._worker_wm.values())
        return None if wm == MIN_WATERMARK else wm

    def trigger_checkpoint(self) -> Future[str]:
        """Take a checkpoint (thread-safe); the future resolves to its location once it is
        complete and every worker committed."""
        f: Future[str] = Future()
        self.cp.requests.put(SnapshotRequest("checkpoint", None, False, False, f))
        return f

    def trigger_savepoint(self, directory: str | None = None, stop: bool = False, drain: bool = False) -> Future[str]:
        """Take a savepoint into `directory` (default `execution.checkpointing.savepoint-dir`);
        with `stop` the job then ends (STOP JOB ... WITH SAVEPOINT): nothing after the
        savepoint's barrier is processed, so the caller has exactly the rows before it;
        `drain` (with `stop`): MAX_WATERMARK first, every window fires before it. Thread-safe."""
        f: Future[str] = Future()
        self.cp.requests.put(SnapshotRequest("savepoint", directory, stop, drain and stop, f))
        return f

    def _stopped(self) -> bool:
        return self.cp.stop_requested or (self.stop_event is not None and self.stop_event.is_set())

    # ------------------------------------------------------------------ run
    def _count_restart(self) -> None:
        self.restarts += 1

    def run(self) -> Iterator[pa.RecordBatch]:
        """Run the job (restored from `execution.savepoint.path` when set), restarting all
        workers from the latest complete checkpoint after a failure as
        `restart-strategy.type` allows (as LocalExecutor.run)."""
        try:
            yield from run_with_restarts(
                self._run_attempt,
                self.checkpoint_config,
                dict(self.graph.config or {}),
                self._stopped,
                lambda: self.coordinator.latest_location,
                self._count_restart,
            )
        finally:
            self.cp.close()

    def _run_attempt(self, restore: LoadedSnapshot | None) -> Iterator[pa.RecordBatch]:
        n = self.parallelism
        location = None
        if restore is not None:
            self.cp.check_restore(restore)
            location = restore.location
            self.restored_from = location
        refuse_fork_after_rocksdb(self.graph)
        mp = multiprocessing.get_context("fork")
        pairs = {(i, j): socket.socketpair() for i in range(n) for j in range(i + 1, n)}
        ups = [socket.socketpair() for _ in range(n)]  # (parent end, worker end)
        every = [s for p in pairs.values() for s in p] + [s for p in ups for s in p]
        procs: list[Any] = []
        finished = False
        sel = selectors.DefaultSelector()
        self._ends = {}
        self.cp.start_attempt([u[0] for u in ups], self.operators, self._ends)
        try:
            self._open_parent_sinks()
            if restore is not None:  # as the single subtask of their nodes
                restore_task(self.parent_task, restore, 0, 1, self.checkpoint_config.ignore_unclaimed_state)
            for i in range(n):
                peers = {j: pairs[(min(i, j), max(i, j))][0 if i < j else 1] for j in range(n) if j != i}
                mine = {id(s) for s in peers.values()} | {id(ups[i][1])}
                foreign = [s for s in every if id(s) not in mine]
                args = (self.graph, self.plan, i, n, peers, ups[i][1], self.credits, foreign, location)
                proc = mp.Process(target=worker_main, args=args, name=f"streamsql-worker-{i}", daemon=True)
                proc.start()
                procs.append(proc)
            for s in every:
                if all(s is not u[0] for u in ups):
                    s.close()
            for i, (parent_end, _) in enumerate(ups):
                sel.register(parent_end, selectors.EVENT_READ, i)
            yield from self._serve(sel, [u[0] for u in ups], procs)
            finished = True
        finally:
            self.cp.fail_requests()
            self._teardown(procs, [u[0] for u in ups], sel, JOIN_SECONDS if finished else 0.5)
            self.parent_task.close(failed=True)  # a sink's close error must not mask the job's

    def _open_parent_sinks(self) -> None:
        """The sinks that write from one process run here, as a task of their own whose
        input arrives from every worker (`_frame`)."""
        task = self.parent_task
        task.build()
        self.operators.clear()
        self.operators.update(task.operators)
        self.metrics.update(task.metrics)
        task.open()

    def _serve(
        self, sel: selectors.BaseSelector, socks: list[socket.socket], procs: list[Any]
    ) -> Iterator[pa.RecordBatch]:
        """Read every worker until all are done (and the final checkpoint, if any, is
        committed), handling checkpoints in between (runtime/executor/parallel/checkpoints.py)."""
        n = self.parallelism
        parsers = [ch.FrameParser() for _ in range(n)]
        done: set[int] = set()
        while True:
            if self._stopped():
                return
            all_done = len(done) == n
            self.cp.work(all_done)
            if all_done and self.cp.inflight is None and not self.cp.held:
                if not self.checkpoint_config.enabled or self.cp.final_committed:
                    return
                if self.cp.final_cid is None:
                    self.cp.trigger_final()
            results: list[tuple[int, pa.RecordBatch]] = []
            for key, _ in sel.select(timeout=0.1):
                w = key.data
                data = key.fileobj.recv(1 << 20)  # type: ignore[union-attr]
                if not data:
                    sel.unregister(key.fileobj)
                    if not self._finished_ok(done):
                        procs[w].join(1.0)
                        raise WorkerFailedError(
                            f"parallel worker {w} exited unexpectedly (exit code {procs[w].exitcode})"
                        )
                    continue
                for kind, edge, payload in parsers[w].feed(data):
                    self._frame((w, kind, edge, payload), socks, results, done)
            for w, batch in results:
                yield batch
                ch.send(socks[w], ch.CREDIT, RESULT_EDGE, ch.int_payload(1))
            if not results:
                for w, p in enumerate(procs):
                    if not self._finished_ok(done) and not p.is_alive() and p.exitcode not in (None, 0):
                        # give its last messages (an ERROR) a chance to arrive first
                        if not sel.select(timeout=0.2):
                            raise WorkerFailedError(f"parallel worker {w} exited unexpectedly (exit code {p.exitcode})")

    def _finished_ok(self, done: set[int]) -> bool:
        """Every worker reported DONE and nothing is left to commit: a worker may leave."""
        return len(done) == self.parallelism and (not self.checkpoint_config.enabled or self.cp.final_committed)

    def _frame(
        self,
        frame: tuple[int, int, int, bytes],
        socks: list[socket.socket],
        results: list[tuple[int, pa.RecordBatch]],
        done: set[int],
    ) -> None:
        w, kind, edge, payload = frame
        if kind in (ch.BATCH, ch.END, ch.BARRIER) and edge != RESULT_EDGE and self.cp.hold(frame):
            return  # after this channel's barrier: waits for the parent's sinks to align
        if kind == ch.BATCH and edge == RESULT_EDGE:
            results.append((w, ch.batch_from_bytes(payload)))
        elif kind == ch.BARRIER and edge == RESULT_EDGE:
            self.cp.on_result_barrier(w, payload)
        elif kind == ch.BATCH:
            e = self.plan.edges[edge]
            self._sink_batch(e.dst, e.idx, ch.batch_from_bytes(payload), w)
            ch.send(socks[w], ch.CREDIT, edge, ch.int_payload(1))
        elif kind == ch.END:
            got = self._ends.setdefault(edge, set())
            got.add(w)
            e = self.plan.edges[edge]
            if len(got) == self.parallelism:
                self._sink_end(e.dst, e.idx)
            for f in self.cp.try_parent():
                self._frame(f, socks, results, done)
        elif kind == ch.BARRIER:
            for f in self.cp.on_barrier(w, edge):
                self._frame(f, socks, results, done)
        elif kind == ch.ACK:
            self.cp.on_ack(w, payload)
        elif kind == ch.COMMITTED:
            self.cp.on_committed(w, edge)
        elif kind == ch.METRICS:
            self._on_metrics(w, pickle.loads(payload))
        elif kind == ch.DONE:
            done.add(w)
        elif kind == ch.ERROR:
            self._raise_worker_error(w, payload)

    def _sink_batch(self, nid: int, idx: int, batch: pa.RecordBatch, worker: int) -> None:
        """A sink run here writes `batch` on behalf of the subtask (worker) it came from."""
        tagged = batch.replace_schema_metadata({**(batch.schema.metadata or {}), ORIGIN_SUBTASK: str(worker).encode()})
        self.parent_task.push(nid, idx, [tagged], [])

    def _sink_end(self, nid: int, idx: int) -> None:
        self.parent_task.end_input(nid, idx)

    def _raise_worker_error(self, w: int, payload: bytes) -> None:
        try:
            exc, text, tb = pickle.loads(payload)
        except Exception:  # noqa: BLE001 - a report we cannot read still fails the job
            exc, text, tb = None, "unreadable error report", ""
        if not isinstance(exc, BaseException):
            exc = RuntimeError(text)
        exc.add_note(f"(in parallel worker {w}; its traceback:)\n{tb}")
        raise exc

    def _on_metrics(self, w: int, snap: dict[str, Any]) -> None:
        self._worker_metrics[w] = snap["metrics"]
        self._worker_wm[w] = int(snap["watermark"])
        for (e, t), v in snap["max_in_flight"].items():
            self.max_in_flight[(w, e, t)] = max(self.max_in_flight.get((w, e, t), 0), v)
        for (e, s), v in snap["max_queued"].items():
            self.max_queued[(w, e, s)] = max(self.max_queued.get((w, e, s), 0), v)
        for nid in self.metrics:
            if nid in self.plan.parent_nodes:
                continue
            parts = [wm[nid] for wm in self._worker_metrics.values() if nid in wm]
            m = self.metrics[nid]
            m.rows_in = sum(p[0] for p in parts)
            m.rows_out = sum(p[1] for p in parts)
            m.batches_in = sum(p[2] for p in parts)
            m.late_rows_dropped = sum(p[3] for p in parts)
            extra: dict[str, int] = {}
            for p in parts:
                for k, v in p[4].items():
                    extra[k] = extra.get(k, 0) + int(v)
            m.extra = extra

    def _teardown(self, procs: list[Any], socks: list[socket.socket], sel: selectors.BaseSelector, wait: float) -> None:
        """EXIT to every worker, join for `wait` seconds, then terminate / kill the rest."""
        for s in socks:
            try:
                ch.send(s, ch.EXIT, 0)
            except OSError:
                pass
        deadline = time.monotonic() + wait
        for p in procs:
            p.join(max(0.0, deadline - time.monotonic()))
        for p in procs:
            if p.is_alive():
                p.terminate()
                p.join(1.0)
            if p.is_alive():
                p.kill()
                p.join()
        sel.close()
        for s in socks:
            s.close()
