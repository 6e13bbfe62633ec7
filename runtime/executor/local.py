"""The local executor: runs a JobGraph in this process as one task.

The pieces (one responsibility each):

- runtime/executor/task.py, `TaskRunner`: the operators of the task, pushed depth-first
  (batches, watermarks, idleness, timers, end of input, barrier flushes);
- runtime/executor/results.py, `ResultCollector`: the in-process transport; result
  batches wait there until `run()` yields them;
- runtime/executor/checkpoints.py, `LocalCheckpoints`: periodic checkpoints, requested
  savepoints, their upload and completion;
- runtime/executor/task_state.py: restoring the task from a snapshot of any parallelism;
- runtime/checkpoint/restart.py: restarts after a failure (`restart-strategy.type`).

This class is the loop that ties them together: source operators (nodes without inputs:
TableSourceScan, Values) are polled round-robin; every batch they return is pushed
through its consumers at once, so a result row reaches the caller as soon as it is
produced (`run()` is a generator: a CLI prints the rows of an unbounded job as they
come). Between two polls nothing is in flight, which is where checkpoints are taken.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future

import pyarrow as pa

from runtime.batch import MIN_WATERMARK
from runtime.checkpoint.config import CheckpointConfig
from runtime.checkpoint.coordinator import CheckpointCoordinator
from runtime.checkpoint.restart import run_with_restarts
from runtime.checkpoint.restore import LoadedSnapshot
from runtime.checkpoint.uid import operator_uids
from runtime.config.core import source_batch_rows
from runtime.executor.checkpoints import LocalCheckpoints
from runtime.executor.results import ResultCollector
from runtime.executor.task import TaskRunner
from runtime.executor.task_state import restore_task
from runtime.graph import BATCH, JobGraph
from runtime.operators.base import Metrics, Operator

IDLE_POLL_SECONDS = 0.05


class LocalExecutor:
    """`LocalExecutor(graph, stop_event=None).run()` yields the batches reaching
    `graph.result_node` (data columns named as its schema, plus an int8 `__op` column;
    `__wm` stripped). After (or during) the run, `metrics[node_id]` holds each node's
    rows in/out and late rows dropped. Operator errors propagate unchanged; operators
    (and so sinks) are closed whether the job ends, fails or is stopped."""

    def __init__(
        self, graph: JobGraph, stop_event: threading.Event | None = None, batch_rows: int | None = None
    ) -> None:
        self.graph = graph
        self.stop_event = stop_event
        cfg = graph.config or {}
        self.batch_rows = int(batch_rows or source_batch_rows(cfg, graph.mode == BATCH))
        self.uids = operator_uids(graph)
        self.checkpoint_config = CheckpointConfig.from_config(cfg)
        self.results = ResultCollector(graph)
        self.task = TaskRunner(graph, self.results, self.uids, checkpointing=self.checkpoint_config.enabled)
        self.checkpoints = LocalCheckpoints(self.task, self.checkpoint_config)
        self.coordinator: CheckpointCoordinator = self.checkpoints.coordinator
        self.restored_from: str | None = None
        self.restarts = 0

    @property
    def operators(self) -> dict[int, Operator]:
        """The running operators by node id (rebuilt on every attempt)."""
        return self.task.operators

    @property
    def metrics(self) -> dict[int, Metrics]:
        """Every node's counters (rows in/out, late rows, busy time, ...)."""
        return self.task.metrics

    @property
    def current_watermark(self) -> int | None:
        """The latest watermark the result node emitted (epoch ms; MAX_WATERMARK once its
        input ended), or None before the first one: the shell's live table view shows it."""
        wm = self.task.result_wm
        return None if wm == MIN_WATERMARK else wm

    # ------------------------------------------------------------------ run
    def run(self) -> Iterator[pa.RecordBatch]:
        """Run the job (restored from `execution.savepoint.path` when set), restarting
        after a failure as `restart-strategy.type` allows."""
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
            self.checkpoints.close()

    def _count_restart(self) -> None:
        self.restarts += 1

    def _build(self) -> None:
        """A fresh task (first attempt or restart)."""
        self.results.clear()
        self.task.build()

    def _run_attempt(self, restore: LoadedSnapshot | None) -> Iterator[pa.RecordBatch]:
        task = self.task
        self._build()
        if self.checkpoint_config.enabled or restore is not None:
            task.check_checkpointable()
        failed = False
        try:
            task.open()
            if restore is not None:
                self._restore(restore)
            active = [s for s in task.sources() if not task.operators[s].finished]
            # BATCH: an operator's final output is pulled a batch at a time, each yielded
            # before the next is made (TaskRunner.step_deferred), so it never piles up here
            task.defer_output = self.graph.mode == BATCH
            while active or task.deferred:
                if self._stopped():
                    return
                if task.step_deferred():
                    yield from self.results.take()
                    continue
                progressed = False
                for sid in list(active):
                    progressed |= task.poll_source(sid, active, self.batch_rows)
                    yield from self.results.take()
                    self._checkpoint_work()
                    if self._stopped():  # what came before the barrier (flushed, drained) still goes out
                        yield from self.results.take()
                        return
                if not progressed and active:
                    task.check_idle()
                    task.fire_timers()
                    yield from self.results.take()
                    if self.stop_event is not None:
                        self.stop_event.wait(IDLE_POLL_SECONDS)
                    else:
                        time.sleep(IDLE_POLL_SECONDS)
            yield from self.results.take()
            self.checkpoints.finish(self._stopped())
        except BaseException:
            failed = True
            raise
        finally:
            self.checkpoints.fail_requests()
            task.close(failed)

    def _checkpoint_work(self) -> None:
        """Between two source batches (tests override it to snapshot at a given point)."""
        self.checkpoints.work()

    def _restore(self, snap: LoadedSnapshot) -> None:
        """Match the snapshot's operators to this job by uid and restore them (after
        `open`: sources seek, sinks commit what was pre-committed and abort the rest)."""
        restore_task(self.task, snap, 0, 1, self.checkpoint_config.ignore_unclaimed_state)
        self.coordinator.next_id = max(self.coordinator.next_id, snap.metadata.checkpoint_id + 1)
        self.restored_from = snap.location

    def _stopped(self) -> bool:
        return self.checkpoints.stop_requested or (self.stop_event is not None and self.stop_event.is_set())

    # ------------------------------------------------------------------ snapshots on request
    def trigger_checkpoint(self) -> Future[str]:
        """Take a checkpoint at the next batch boundary (thread-safe); the future resolves
        to its location once complete."""
        return self.checkpoints.request("checkpoint")

    def trigger_savepoint(self, directory: str | None = None, stop: bool = False, drain: bool = False) -> Future[str]:
        """Take a savepoint into `directory` (default `execution.checkpointing.savepoint-dir`)
        at the next batch boundary; with `stop`, the job then ends (STOP JOB ... WITH
        SAVEPOINT): nothing after the savepoint's barrier is processed, so the caller has
        exactly the rows before it. `drain` (with `stop`): MAX_WATERMARK first, so every
        window fires before the savepoint. Thread-safe; the future resolves to the
        savepoint's path."""
        return self.checkpoints.request("savepoint", directory, stop, drain and stop)


def run_to_table(graph: JobGraph, stop_event: threading.Event | None = None) -> pa.Table | None:
    """Convenience: run a job and collect the result batches into one table."""
    batches = list(LocalExecutor(graph, stop_event).run())
    if not batches:
        return None
    return pa.Table.from_batches(batches)
