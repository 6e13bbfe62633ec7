"""The local executor: runs a JobGraph in this process, push-based through the DAG.

Source operators (nodes without inputs: TableSourceScan, Values) are polled round-robin;
every batch they return is pushed depth-first through its consumers, so a result row
reaches the caller as soon as it is produced (`run()` is a generator: a CLI prints the
rows of an unbounded job as they come).

Watermarks: an operator's watermark is the minimum over its inputs; when it advances the
executor calls `on_watermark`. Batches an operator emitted in one call are delivered
before the watermarks it emitted in that call (a WatermarkAssigner emits the batch, then
the batch-end watermark; a window operator the fired windows, then the watermark).
End of a bounded source: STREAMING sends MAX_WATERMARK down its edges, then `end_input`;
BATCH only `end_input`. An operator whose inputs have all ended ends its own output.

Checkpoints (runtime.checkpoint, docs/checkpointing.md): between two source polls nothing
is in flight, so a barrier passes through the DAG in topological order (aligned by
construction, for EXACTLY_ONCE and AT_LEAST_ONCE alike): every operator flushes
(`prepare_snapshot_pre_barrier`) and snapshots, sources with their offsets; the upload
runs on a background thread; when it completed, operators get
`notify_checkpoint_complete` (two-phase-commit sinks publish). A bounded job takes a
final checkpoint after its input ended so that everything is committed. A failure is
retried from the latest complete checkpoint as `restart-strategy.type` allows.
"""

from __future__ import annotations

import json
import os
import pickle
import queue
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any

import numpy as np
import pyarrow as pa

from runtime.batch import MAX_WATERMARK, MIN_WATERMARK, ROW_KIND, data_width
from runtime.checkpoint.config import CheckpointConfig
from runtime.checkpoint.coordinator import CheckpointCoordinator, PendingSnapshot
from runtime.checkpoint.faults import fault_point
from runtime.checkpoint.incremental import IncrementalCheckpoints, UploadPlan
from runtime.checkpoint.metadata import CheckpointMetadata, OperatorState
from runtime.checkpoint.rescale import merge_executor_state, rescale_operator_states
from runtime.checkpoint.restart import run_with_restarts
from runtime.checkpoint.restore import LoadedSnapshot, RestoreError, match_report
from runtime.checkpoint.uid import fingerprint, operator_uids
from runtime.graph import BATCH, JobGraph, Node
from runtime.operators.base import (
    CheckpointingNotSupportedError,
    Metrics,
    Operator,
    OperatorContext,
    Output,
    checkpointing_mode,
    create_operator,
    not_supported_message,
)
from runtime.state import create_backend
from runtime.state.keygroups import key_group_range
from runtime.state.slot_values import NativeSnapshot

DEFAULT_BATCH_ROWS = 8192
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
        configured = cfg.get("table.exec.source.batch-rows", DEFAULT_BATCH_ROWS)
        self.batch_rows = int(batch_rows or configured)
        self.time_zone = cfg.get("table.local-time-zone", "UTC") or "UTC"
        self.metrics: dict[int, Metrics] = {}
        self.operators: dict[int, Operator] = {}
        self._order: list[Node] = []
        self._consumers: dict[int, list[tuple[int, int]]] = {}
        self._input_wm: dict[int, list[int]] = {}
        self._node_wm: dict[int, int] = {}
        self._ended: dict[int, set[int]] = {}
        self._results: list[pa.RecordBatch] = []
        self._result_wm = MIN_WATERMARK
        self.uids = operator_uids(graph)
        self.checkpoint_config = CheckpointConfig.from_config(cfg)
        self.coordinator = CheckpointCoordinator(self.checkpoint_config, dict(cfg))
        self.incremental = IncrementalCheckpoints(dict(cfg))
        self._requests: queue.Queue[tuple[str, str | None, bool, Future[str]]] = queue.Queue()
        self._stop_requested = False
        self.restored_from: str | None = None
        self.restarts = 0
        self._graph_doc: dict[str, Any] | None = None

    # ------------------------------------------------------------------ setup
    def _topological(self) -> list[Node]:
        nodes = {n.id: n for n in self.graph.nodes}
        done: set[int] = set()
        order: list[Node] = []

        def visit(nid: int, path: tuple[int, ...]) -> None:
            if nid in done:
                return
            if nid in path:
                raise ValueError(f"the job graph has a cycle through node {nid}")
            for i in nodes[nid].inputs:
                visit(i, (*path, nid))
            done.add(nid)
            order.append(nodes[nid])

        for n in self.graph.nodes:
            visit(n.id, ())
        return order

    # This executor is subtask `subtask_index` of `subtask_count` (a parallel worker
    # overrides them, `_runs_here` and `_operator_config`).
    subtask_index = 0
    subtask_count = 1

    def _runs_here(self, node: Node) -> bool:
        return True

    def _operator_config(self, node: Node, cfg: dict[str, str]) -> dict[str, str]:
        return {**cfg, "$internal.operator-uid": self.uids[node.id]}

    def _build(self) -> None:
        cfg = dict(self.graph.config or {})
        self._order = [n for n in self._topological() if self._runs_here(n)]
        self.operators, self.metrics, self._consumers = {}, {}, {}
        self._input_wm, self._node_wm, self._ended = {}, {}, {}
        self._results = []
        checkpointing = self.checkpoint_config.enabled
        for node in self._order:
            op_cfg = self._operator_config(node, cfg)
            ctx = OperatorContext(
                mode=self.graph.mode,
                config=op_cfg,
                time_zone=self.time_zone,
                subtask_index=self.subtask_index,
                parallelism=self.subtask_count,
                metrics=Metrics(),
                state=create_backend(op_cfg),
                checkpointing=checkpointing,
            )
            op = create_operator(node, ctx)
            op.input_changelog_modes = [self.graph.node(i).changelog_mode for i in node.inputs]
            self.operators[node.id] = op
            self.metrics[node.id] = ctx.metrics
            self._consumers.setdefault(node.id, [])
            self._input_wm[node.id] = [MIN_WATERMARK] * len(node.inputs)
            self._node_wm[node.id] = MIN_WATERMARK
            self._ended[node.id] = set()
            for idx, src in enumerate(node.inputs):
                self._consumers.setdefault(src, []).append((node.id, idx))

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
            self.coordinator.close()

    def _count_restart(self) -> None:
        self.restarts += 1

    def _run_attempt(self, restore: LoadedSnapshot | None) -> Iterator[pa.RecordBatch]:
        self._build()
        if self.checkpoint_config.enabled or restore is not None:
            self._check_checkpointable()
        opened: list[Operator] = []
        failed = False
        try:
            for node in self._order:
                op = self.operators[node.id]
                op.open()
                opened.append(op)
            sources = [n.id for n in self._order if not n.inputs]
            if restore is not None:
                self._restore(restore)
            active = [s for s in sources if not self.operators[s].finished]
            while active:
                if self._stopped():
                    return
                progressed = False
                for sid in list(active):
                    progressed |= self._poll_source(sid, active)
                    yield from self._take_results()
                    self._checkpoint_work()
                    if self._stopped():
                        return
                if not progressed and active:
                    self._check_idle()
                    self._fire_timers()
                    yield from self._take_results()
                    if self.stop_event is not None:
                        self.stop_event.wait(IDLE_POLL_SECONDS)
                    else:
                        time.sleep(IDLE_POLL_SECONDS)
            yield from self._take_results()
            self._finish_checkpoints()
        except BaseException:
            failed = True
            raise
        finally:
            self._fail_requests()
            for op in reversed(opened):
                try:
                    op.close()
                except Exception:
                    if not failed:
                        raise
            for op in self.operators.values():
                if op.ctx.state is not None:
                    op.ctx.state.dispose()

    # ------------------------------------------------------------------ checkpoints
    def trigger_checkpoint(self) -> Future[str]:
        """Take a checkpoint at the next batch boundary (thread-safe); the future resolves
        to its location once complete."""
        f: Future[str] = Future()
        self._requests.put(("checkpoint", None, False, f))
        return f

    def trigger_savepoint(self, directory: str | None = None, stop: bool = False) -> Future[str]:
        """Take a savepoint into `directory` (default `execution.checkpointing.savepoint-dir`)
        at the next batch boundary; with `stop`, the job then ends (STOP JOB ... WITH
        SAVEPOINT). Thread-safe; the future resolves to the savepoint's path."""
        f: Future[str] = Future()
        self._requests.put(("savepoint", directory, stop, f))
        return f

    def _check_checkpointable(self) -> None:
        for node in self._order:
            op = self.operators[node.id]
            if checkpointing_mode(op) is None:
                raise CheckpointingNotSupportedError(not_supported_message(op))

    def _checkpoint_work(self) -> None:
        """Between two source batches: serve requests, trigger periodic checkpoints and
        let operators know about completed ones."""
        while not self._requests.empty():
            kind, directory, stop, fut = self._requests.get_nowait()
            try:
                self._check_checkpointable()
                p = self._snapshot(kind, directory, stop)
            except Exception as e:  # noqa: BLE001 - reported to the requester
                fut.set_exception(e)
                continue
            p.result = fut
        if self.coordinator.due():
            self._snapshot("checkpoint")
        self._complete(self.coordinator.completed())

    def _finish_checkpoints(self) -> None:
        """End of a bounded job: a final checkpoint commits what the sinks still hold."""
        if self.checkpoint_config.enabled and not self._stopped():
            self._snapshot("checkpoint")
        while not self._requests.empty():
            self._checkpoint_work()
        self._complete(self.coordinator.completed(wait=True))

    def _fail_requests(self) -> None:
        while not self._requests.empty():
            _, _, _, fut = self._requests.get_nowait()
            if not fut.done():
                fut.set_exception(RuntimeError("the job ended before the snapshot could be taken"))

    def _complete(self, done: list[PendingSnapshot]) -> None:
        for p in done:
            fault_point("metadata")
            if p.kind == "checkpoint":
                self.incremental.complete(p.checkpoint_id)
            for i, node in enumerate(self._order):
                self.operators[node.id].notify_checkpoint_complete(p.checkpoint_id)
                if i and node.operator == "Sink":
                    fault_point("commit")
            if not p.result.done():
                p.result.set_result(p.location)
            if p.stop_after:
                self._stop_requested = True

    def _snapshot(self, kind: str, directory: str | None = None, stop: bool = False) -> PendingSnapshot:
        """The synchronous part: barrier through the DAG in topological order, then every
        operator's state as bytes; the upload is handed to the coordinator."""
        cid = self.coordinator.new_id()
        storage, rel = self.coordinator.target(cid, kind, directory)
        for node in self._order:
            out = Output()
            self.operators[node.id].prepare_snapshot_pre_barrier(cid, out)
            self._drain(node.id, out)
        blobs: dict[str, bytes] = {}
        ops: list[OperatorState] = []
        uploads: list[UploadPlan] = []
        native = kind == "checkpoint" and self.incremental.native  # savepoints stay canonical
        for node in self._order:
            op = self.operators[node.id]
            uid = self.uids[node.id]
            op.ctx.snapshot_dir = self.incremental.snapshot_dir(cid, uid) if native else None
            snap = op.snapshot_state(cid)
            op.ctx.snapshot_dir = None
            file = None
            size = 0
            if isinstance(snap, NativeSnapshot):  # incremental: upload new SST files only
                uploads.append(self.incremental.plan(cid, uid, snap, rel))
                snap.local_dir = None
            if snap is not None:
                data = pickle.dumps(snap, protocol=pickle.HIGHEST_PROTOCOL)
                file = f"op-{uid}.state"
                blobs[file] = data
                size = len(data)
            names = state_names(op, snap)
            ops.append(
                OperatorState(
                    uid=uid,
                    node_id=node.id,
                    operator=node.operator,
                    label=node.label or node.operator,
                    file=file,
                    bytes=size,
                    keys=op.state_size().get("keys"),
                    state_names=names,
                    fingerprint=fingerprint(self.graph, node),
                    executor={
                        "input_wm": list(self._input_wm[node.id]),
                        "node_wm": self._node_wm[node.id],
                        "ended": sorted(self._ended[node.id]),
                    },
                )
            )
            if isinstance(snap, NativeSnapshot):
                ops[-1].shared_files = uploads[-1].shared
                ops[-1].bytes = size + uploads[-1].new_bytes
        cfg = self.graph.config or {}
        meta = CheckpointMetadata(
            checkpoint_id=cid,
            kind=kind,
            job_id=self.checkpoint_config.job_id,
            timestamp_ms=int(time.time() * 1000),
            state_backend=(cfg.get("state.backend.type") or "hashmap").lower(),
            max_parallelism=int(cfg.get("pipeline.max-parallelism") or 128),
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

    def _restore(self, snap: LoadedSnapshot) -> None:
        """Match the snapshot's operators to this job by uid and restore them (after
        `open`: sources seek, sinks commit what was pre-committed and abort the rest)."""
        self._restore_subtask(snap, 0, 1)
        self.coordinator.next_id = max(self.coordinator.next_id, snap.metadata.checkpoint_id + 1)
        self.restored_from = snap.location

    def _restore_subtask(self, snap: LoadedSnapshot, index: int, parallelism: int) -> None:
        """Restore the operators of `self._order` as subtask `index` of `parallelism` from a
        snapshot of any parallelism (shared with the parallel workers): the uid/fingerprint
        match report first, then every operator's state re-split to the subtask's key-group
        range (runtime/checkpoint/rescale.py) and the executor's watermark bookkeeping."""
        meta = snap.metadata
        mine = {self.uids[n.id]: n for n in self.graph.nodes}  # a worker runs a part of them
        bad = check_claims(snap, mine, self.graph, self.checkpoint_config.ignore_unclaimed_state)
        groups = key_group_range(index, parallelism, meta.max_parallelism)
        for o in meta.operators:
            node = mine.get(o.uid)
            if node is None or node.id not in self.operators or o.uid in bad:
                continue
            if o.file is not None or any(st.file for st in o.subtasks):  # any parallelism: re-split
                op = self.operators[node.id]
                op.restore_state(rescale_operator_states(op, snap.subtask_states(o.uid), groups, index, parallelism))
            ex = o.executor or {}
            if isinstance(ex.get("subtasks"), list):  # per-subtask bookkeeping: the minimum
                ex = merge_executor_state(ex["subtasks"])
            if len(ex.get("input_wm", [])) == len(node.inputs):
                self._input_wm[node.id] = [int(w) for w in ex["input_wm"]]
                self._node_wm[node.id] = int(ex.get("node_wm", MIN_WATERMARK))
                self._ended[node.id] = {int(i) for i in ex.get("ended", [])}

    @property
    def current_watermark(self) -> int | None:
        """The latest watermark the result node emitted (epoch ms; MAX_WATERMARK once its
        input ended), or None before the first one: the shell's live table view shows it."""
        return None if self._result_wm == MIN_WATERMARK else self._result_wm

    def _stopped(self) -> bool:
        return self._stop_requested or (self.stop_event is not None and self.stop_event.is_set())

    def _poll_source(self, sid: int, active: list[int]) -> bool:
        """Poll source `sid` once and push what it read; at its end, end its output and
        drop it from `active`. Whether anything happened."""
        t0 = time.perf_counter_ns()
        batch = self.operators[sid].poll(self.batch_rows)
        _add_busy(self.metrics[sid], t0)
        if batch is None:
            active.remove(sid)
            self._end_output(sid, is_source=True)
            return True
        if batch.num_rows:
            self._deliver(sid, [batch], [])
            fault_point("batch")
            return True
        return False

    def _take_results(self) -> Iterator[pa.RecordBatch]:
        while self._results:
            yield self._results.pop(0)

    # ------------------------------------------------------------------ pushing
    def _deliver(self, nid: int, batches: list[pa.RecordBatch], watermarks: list[int]) -> None:
        """Hand what node `nid` emitted to its consumers (and to the caller)."""
        m = self.metrics[nid]
        if watermarks and nid == self.graph.result_node:
            self._result_wm = max(self._result_wm, *watermarks)
        for b in batches:
            m.rows_out += b.num_rows
            if nid == self.graph.result_node:
                self._results.append(self._result_batch(b))
        for cid, idx in self._consumers.get(nid, []):
            self._push(cid, idx, batches, watermarks)

    def _push(self, cid: int, idx: int, batches: list[pa.RecordBatch], watermarks: list[int]) -> None:
        """Input `idx` of node `cid` receives these batches, then these watermarks."""
        op = self.operators[cid]
        cm = self.metrics[cid]
        for b in batches:
            cm.rows_in += b.num_rows
            cm.batches_in += 1
            out = Output()
            t0 = time.perf_counter_ns()
            op.process_batch(b, idx, out)
            _add_busy(cm, t0)
            self._drain(cid, out)
        for wm in watermarks:
            wms = self._input_wm[cid]
            if wm > wms[idx]:
                wms[idx] = wm
            self._advance(cid)

    def _advance(self, nid: int) -> None:
        """Recompute node `nid`'s watermark (min over its non-idle inputs) and fire
        `on_watermark` when it advanced."""
        wms = self._input_wm[nid]
        inputs = self.graph.node(nid).inputs
        active = [w for w, src in zip(wms, inputs, strict=True) if not self._is_idle(src)] if len(wms) > 1 else wms
        if not active:
            return
        combined = min(active)
        if combined > self._node_wm[nid]:
            self._node_wm[nid] = combined
            out = Output()
            t0 = time.perf_counter_ns()
            self.operators[nid].on_watermark(combined, out)
            _add_busy(self.metrics[nid], t0)
            self._drain(nid, out)

    def _is_idle(self, nid: int) -> bool:
        """Whether node `nid`'s output is idle: a WatermarkAssigner past its idle timeout,
        or a node all of whose inputs are idle (ended inputs are never idle: they sent
        MAX_WATERMARK)."""
        idle = self.operators[nid].is_idle()
        if idle is not None:
            return idle
        inputs = self.graph.node(nid).inputs
        return bool(inputs) and all(self._is_idle(i) for i in inputs)

    def _check_idle(self) -> None:
        """While sources have nothing to read: let multi-input operators advance past
        inputs that went idle (`idle_timeout_ms` / `table.exec.source.idle-timeout`)."""
        for node in self._order:
            if len(node.inputs) > 1:
                self._advance(node.id)

    def _fire_timers(self) -> None:
        """While sources are idle: operators with an `on_timer(out)` hook (the
        MiniBatchAssigner's latency bound) may flush what they buffer."""
        for node in self._order:
            out = Output()
            self.operators[node.id].on_timer(out)
            self._drain(node.id, out)

    def _drain(self, nid: int, out: Output) -> None:
        batches, watermarks = out.drain()
        if batches or watermarks:
            self._deliver(nid, batches, watermarks)

    def _end_output(self, nid: int, is_source: bool = False) -> None:
        """Node `nid` will produce nothing more: MAX_WATERMARK (streaming, from sources),
        then `end_input` on every consumer; consumers whose inputs all ended end too."""
        if is_source and self.graph.mode != BATCH:
            self._deliver(nid, [], [MAX_WATERMARK])
        for cid, idx in self._consumers.get(nid, []):
            out = Output()
            t0 = time.perf_counter_ns()
            self.operators[cid].end_input(idx, out)
            _add_busy(self.metrics[cid], t0)
            self._drain(cid, out)
            self._ended[cid].add(idx)
            if len(self._ended[cid]) == len(self.graph.node(cid).inputs):
                self._end_output(cid)

    def _result_batch(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        node = self.graph.node(self.graph.result_node)  # type: ignore[arg-type]
        n = data_width(batch)
        cols: list[Any] = list(batch.columns[:n])
        names = [f.name for f in node.schema][:n]
        names += [f"f{i}" for i in range(len(names), n)]
        k = batch.schema.get_field_index(ROW_KIND)
        cols.append(batch.column(k) if k >= 0 else pa.array(np.zeros(batch.num_rows, dtype=np.int8)))
        names.append(ROW_KIND)
        return pa.RecordBatch.from_arrays(cols, names=names)


def state_names(op: Operator, snap: Any) -> list[str]:
    """The state names `_metadata` lists for an operator's snapshot (savepoint inspect)."""
    if isinstance(snap, dict):
        return [str(k) for k in snap]
    if checkpointing_mode(op) == "generic":
        attrs = list(type(op).state_attributes)
        return ["keyed", *attrs] if op.state is not None else attrs
    return [] if snap is None else ["state"]


def check_claims(snap: LoadedSnapshot, mine: dict[str, Node], graph: JobGraph, ignore_unclaimed: bool) -> set[str]:
    """The uids of `snap` whose state this job cannot take (its schema changed): raises
    RestoreError with the match report unless `execution.savepoint.ignore-unclaimed-state`
    (then state of removed operators is dropped and changed ones start empty). `mine`: the
    job's nodes by uid (the parallel executor checks all of them before forking)."""
    meta = snap.metadata
    has_state = {o.uid for o in meta.operators if o.file is not None or any(st.file for st in o.subtasks)}
    unclaimed = [
        f"{o.operator} (uid {o.uid}, {o.label})" for o in meta.operators if o.uid in has_state and o.uid not in mine
    ]
    mismatched = []
    for o in meta.operators:
        node = mine.get(o.uid)
        if node is None or o.uid not in has_state or node.operator in ("TableSourceScan", "Sink"):
            continue
        if o.fingerprint and o.fingerprint != fingerprint(graph, node):
            mismatched.append(f"{o.operator} (uid {o.uid}, {o.label})")
    if (unclaimed or mismatched) and not ignore_unclaimed:
        raise RestoreError(match_report(unclaimed, mismatched, snap.location))
    return {m.split(" (uid ")[1].split(",")[0] for m in mismatched}


def _add_busy(m: Metrics, t0: int) -> None:
    """Busy time (ns) of an operator call, for --stats (`Metrics.extra["busy_ns"]`)."""
    m.extra["busy_ns"] = m.extra.get("busy_ns", 0) + time.perf_counter_ns() - t0


def run_to_table(graph: JobGraph, stop_event: threading.Event | None = None) -> pa.Table | None:
    """Convenience: run a job and collect the result batches into one table."""
    batches = list(LocalExecutor(graph, stop_event).run())
    if not batches:
        return None
    return pa.Table.from_batches(batches)
