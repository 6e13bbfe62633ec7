"""Live observation of running jobs for the REST API: rates, busy / back-pressured time and
checkpoint history, gathered without touching the executor's hot path.

Why sampling: the local executor pushes every batch depth-first through the DAG on one
thread, so it keeps only counters (`Metrics`). Busy and back-pressured time are measured
the way Flink's web UI first did it, by sampling the job thread's stack (20 times a
second): the innermost frame that belongs to an operator is the *busy* operator; every
node whose output is being delivered further down the stack (the task runner's
`deliver(nid)`, runtime/executor/task.py) is waiting
for its consumers, i.e. *back-pressured*. Rates come from successive counter snapshots.

Checkpoint history: the coordinator keeps only the latest location and counters, so the
monitor wraps the executor's `coordinator.submit` (an instance attribute, nothing global)
to record each checkpoint's trigger time, size, kind, duration and outcome.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import deque
from dataclasses import field
from typing import Any

from runtime.frozen import mutable_dataclass

SAMPLE_INTERVAL_S = 0.05
RATE_WINDOW_S = 2.0
HISTORY_SIZE = 50


@mutable_dataclass
class CheckpointRecord:
    """One checkpoint or savepoint as Flink's `/jobs/:id/checkpoints` history lists it."""

    id: int
    is_savepoint: bool
    trigger_timestamp: int
    state_size: int
    status: str = "IN_PROGRESS"
    latest_ack_timestamp: int | None = None
    end_to_end_duration: int | None = None
    external_path: str | None = None
    failure_message: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "status": self.status,
            "is_savepoint": self.is_savepoint,
            "checkpoint_type": "SAVEPOINT" if self.is_savepoint else "CHECKPOINT",
            # Every snapshot of the local executor holds the full state (no incremental ones).
            "is_incremental": False,
            "trigger_timestamp": self.trigger_timestamp,
            "latest_ack_timestamp": self.latest_ack_timestamp,
            "state_size": self.state_size,
            "checkpointed_size": self.state_size,
            "end_to_end_duration": self.end_to_end_duration,
            "external_path": self.external_path,
            "failure_message": self.failure_message,
            "num_subtasks": 1,
            "num_acknowledged_subtasks": 1 if self.status == "COMPLETED" else 0,
        }


@mutable_dataclass
class NodeStats:
    """Sampled statistics of one node (operator) of a job."""

    samples: int = 0
    busy: int = 0
    backpressured: int = 0
    counters: deque[tuple[float, int, int, int]] = field(default_factory=lambda: deque(maxlen=200))

    def ratio(self, n: int) -> float:
        return n / self.samples if self.samples else 0.0

    def rates(self) -> tuple[float, float, float]:
        """Rows in / out per second and measured busy ms per second (the executor's
        `busy_ns` counter) over the last RATE_WINDOW_S seconds."""
        if len(self.counters) < 2:
            return 0.0, 0.0, 0.0
        t1, in1, out1, busy1 = self.counters[-1]
        first = self.counters[0]
        for c in self.counters:
            if t1 - c[0] <= RATE_WINDOW_S:
                first = c
                break
        dt = t1 - first[0]
        if dt <= 0:
            return 0.0, 0.0, 0.0
        return (in1 - first[1]) / dt, (out1 - first[2]) / dt, min(1000.0, (busy1 - first[3]) / 1e6 / dt)


class JobMonitor:
    """Statistics of one job (a `JobHandle`), fed by `Sampler.tick`."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle
        self.nodes: dict[int, NodeStats] = {}
        self.checkpoints: deque[CheckpointRecord] = deque(maxlen=HISTORY_SIZE)
        self.counts = {"total": 0, "completed": 0, "failed": 0, "in_progress": 0}
        self._hooked: Any = None
        self._lock = threading.Lock()
        # Busy/back-pressure ratios decay: only the last ~10 s of samples count.
        self._window = int(10 / SAMPLE_INTERVAL_S)

    @property
    def executor(self) -> Any:
        """The job's executor once it started (None before, or for another runner)."""
        get = getattr(self.handle, "_executor", None)
        ex = get() if callable(get) else None
        return ex if ex is not None and hasattr(ex, "metrics") else None

    def node_stats(self, nid: int) -> NodeStats:
        return self.nodes.setdefault(nid, NodeStats())

    # ------------------------------------------------------------------ sampling
    def tick(self, frames: dict[int, Any], now: float) -> None:
        ex = self.executor
        if ex is None:
            return
        self._hook_checkpoints(ex)
        for nid, m in list(ex.metrics.items()):
            busy_ns = int(m.extra.get("busy_ns", 0))
            self.node_stats(nid).counters.append((now, m.rows_in, m.rows_out, busy_ns))
        thread = getattr(self.handle, "_thread", None)
        if thread is None or not thread.is_alive():
            return
        busy, pressured = _stack_sample(frames.get(thread.ident or -1), ex)
        for nid in ex.metrics:
            st = self.node_stats(nid)
            if st.samples >= self._window:  # exponential-ish decay: halve the counts
                st.samples //= 2
                st.busy //= 2
                st.backpressured //= 2
            st.samples += 1
            if nid == busy:
                st.busy += 1
            elif nid in pressured:
                st.backpressured += 1

    # ------------------------------------------------------------------ checkpoints
    def _hook_checkpoints(self, ex: Any) -> None:
        """Wrap this executor's `coordinator.submit` to record every snapshot."""
        coord = getattr(ex, "coordinator", None)
        if coord is None or self._hooked is coord:
            return
        self._hooked = coord
        original = coord.submit

        def submit(meta: Any, blobs: dict[str, bytes], *args: Any, **kwargs: Any) -> Any:
            rec = CheckpointRecord(
                id=int(meta.checkpoint_id),
                is_savepoint=meta.kind == "savepoint",
                trigger_timestamp=int(meta.timestamp_ms),
                state_size=sum(len(b) for b in blobs.values()),
            )
            with self._lock:
                self.checkpoints.appendleft(rec)
                self.counts["total"] += 1
                self.counts["in_progress"] += 1
            pending = original(meta, blobs, *args, **kwargs)

            def done(fut: Any) -> None:
                err = fut.exception()
                with self._lock:
                    self.counts["in_progress"] -= 1
                    rec.latest_ack_timestamp = int(time.time() * 1000)
                    rec.end_to_end_duration = max(0, rec.latest_ack_timestamp - rec.trigger_timestamp)
                    if err is None:
                        rec.status = "COMPLETED"
                        rec.external_path = pending.location
                        self.counts["completed"] += 1
                    else:
                        rec.status = "FAILED"
                        rec.failure_message = f"{type(err).__name__}: {err}"
                        self.counts["failed"] += 1

            pending.upload.add_done_callback(done)
            return pending

        coord.submit = submit

    def checkpoint_history(self) -> list[dict[str, Any]]:
        with self._lock:
            return [c.to_json() for c in self.checkpoints]


def _stack_sample(frame: Any, ex: Any) -> tuple[int | None, set[int]]:
    """(busy node, back-pressured nodes) from one stack of the job thread."""
    if frame is None:
        return None, set()
    by_id = {id(op): nid for nid, op in ex.operators.items()}
    runner = getattr(ex, "task", None)  # the local executor's task runner (None: other executors)
    busy: int | None = None
    pressured: set[int] = set()
    f = frame
    while f is not None:
        code = f.f_code
        if code.co_name in ("deliver", "drain") or busy is None:
            try:
                local_vars = f.f_locals
            except Exception:  # noqa: BLE001 - a frame that vanished under us
                break
            owner = local_vars.get("self")
            if busy is None and owner is not None and id(owner) in by_id:
                busy = by_id[id(owner)]
            elif runner is not None and owner is runner and code.co_name == "deliver":
                nid = local_vars.get("nid")
                if isinstance(nid, int):
                    pressured.add(nid)
        f = f.f_back
    if busy is not None:
        pressured.discard(busy)
    return busy, pressured


class Sampler:
    """One daemon thread sampling every registered job's thread."""

    def __init__(self) -> None:
        self.monitors: dict[str, JobMonitor] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def monitor(self, handle: Any) -> JobMonitor:
        with self._lock:
            mon = self.monitors.get(handle.job_id)
            if mon is None or mon.handle is not handle:
                mon = self.monitors[handle.job_id] = JobMonitor(handle)
            return mon

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="rest-sampler", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_INTERVAL_S):
            self.tick()

    def tick(self) -> None:
        with self._lock:
            monitors = list(self.monitors.values())
        if not monitors:
            return
        frames = sys._current_frames()
        now = time.monotonic()
        for mon in monitors:
            try:
                mon.tick(frames, now)
            except Exception:  # noqa: BLE001 - observation must never break the server
                continue
