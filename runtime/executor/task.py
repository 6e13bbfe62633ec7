"""The task runner: one subtask's chain of operators, pushed depth-first.

Both executors run their operators through a `TaskRunner`: the local executor runs every
node of the JobGraph in one task; a parallel worker runs subtask `i` of every node it
hosts, and the parent process of a parallel job runs the sinks that must write from one
process. What differs is the `Transport`, how output leaves the task:

- `runtime.executor.results.ResultCollector` (in-process): every edge is inside the task;
  result batches are kept for the caller of `run()`;
- `runtime.executor.parallel.worker.ChannelTransport`: the edges the JobGraph's Exchanges
  route (runtime.executor.parallel.plan) carry batches, watermarks, end-of-input and
  barriers as Arrow IPC frames over sockets to other workers or the parent, with
  credit-based back-pressure.

The runner owns the per-node bookkeeping every transport shares: operators and their
metrics, consumers, input and node watermarks, ended inputs, and the result watermark.

Watermarks: an operator's watermark is the minimum over its inputs (inputs that went
idle excluded); when it advances the runner calls `on_watermark`. Batches an operator
emitted in one call are delivered before the watermarks it emitted in that call (a
WatermarkAssigner emits the batch, then the batch-end watermark; a window operator the
fired windows, then the watermark). End of a bounded source: STREAMING sends
MAX_WATERMARK down its edges, then `end_input`; BATCH only `end_input`. An operator whose
inputs have all ended ends its own output.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow as pa

from runtime import udf_registry
from runtime.batch import MAX_WATERMARK, MIN_WATERMARK
from runtime.checkpoint.faults import fault_point
from runtime.config.core import session_time_zone
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


class Transport:
    """How the output of a task leaves it. The default keeps every edge inside the task
    (subclasses route some edges elsewhere and decide what happens to result batches)."""

    def edge(self, src: int, dst: int, idx: int) -> Any | None:
        """The transport's handle of edge `src -> dst` (input `idx`) when the edge leaves
        the task, else None (the runner pushes into the consumer directly)."""
        return None

    def send(self, edge: Any, batches: list[pa.RecordBatch], watermarks: list[int]) -> None:
        """Hand these batches, then these watermarks, to the task at the other end."""
        raise NotImplementedError

    def end(self, edge: Any) -> None:
        """The producer of `edge` ended: the other end's input ends once all its
        producers ended."""
        raise NotImplementedError

    def result(self, batch: pa.RecordBatch) -> None:
        """A batch of the query's result (data columns plus `__op`, runtime.executor.results)."""
        raise NotImplementedError

    def receives(self, nid: int) -> bool:
        """Whether node `nid` has input from other tasks (its idleness cannot be seen
        here: such an input is never treated as idle, the watermark waits)."""
        return False

    def ends_input_here(self, nid: int) -> bool:
        """Whether this task's subtask of `nid` runs `end_input` (a node all of whose
        input goes to subtask 0 emits its end-of-input results there only)."""
        return True


class TaskRunner:
    """Runs the nodes of `graph` that `runs_here` selects (default: all) as subtask
    `subtask_index` of `subtask_count`, with `transport` for edges leaving the task.
    `build()` (re)creates the operators: call it once per attempt, then `open()`.
    `subtask_in_config`: operators also find their subtask index in their config
    (`subtask.index`, as a parallel worker's do)."""

    def __init__(
        self,
        graph: JobGraph,
        transport: Transport,
        uids: dict[int, str],
        *,
        checkpointing: bool = False,
        subtask_index: int = 0,
        subtask_count: int = 1,
        runs_here: Iterable[int] | None = None,
        subtask_in_config: bool = False,
    ) -> None:
        self.graph = graph
        self.transport = transport
        self.uids = uids
        self.checkpointing = checkpointing
        self.subtask_index = subtask_index
        self.subtask_count = subtask_count
        self._runs_here = None if runs_here is None else set(runs_here)
        self._subtask_in_config = subtask_in_config
        cfg = graph.config or {}
        self.time_zone = session_time_zone(cfg)
        self.result_node = graph.result_node
        self.order: list[Node] = []
        self.operators: dict[int, Operator] = {}
        self.metrics: dict[int, Metrics] = {}
        self.consumers: dict[int, list[tuple[int, int, Any | None]]] = {}
        self.input_wm: dict[int, list[int]] = {}
        self.node_wm: dict[int, int] = {}
        self.ended: dict[int, set[int]] = {}
        self.output_ended: set[int] = set()
        self.result_wm = MIN_WATERMARK
        self._opened: list[Operator] = []
        self._udf_task = False  # counted in udf_registry's running tasks (open → close)
        # `end_input` output left for later (Output.emit_later): (node, input, batches).
        # With `defer_output` the executor pulls it with `step_deferred` between handing
        # results to its caller (the local executor in BATCH mode); otherwise it is
        # delivered a batch at a time before `end_input` returns.
        self.deferred: list[tuple[int, int, list[Iterator[pa.RecordBatch]]]] = []
        self.defer_output = False
        # Nodes past the barrier of a stop-with-savepoint (a parallel worker's stages): no
        # idle check or timer fires there until the savepoint completed (the job ends) or
        # failed (runtime/executor/parallel/barriers.py).
        self.frozen: set[int] = set()

    # ------------------------------------------------------------------ setup
    def build(self) -> None:
        """Create this task's operators afresh (first start or restart) and reset the
        bookkeeping; edges are classified by the transport once, here."""
        cfg = dict(self.graph.config or {})
        self.order = [n for n in topological(self.graph) if self._runs_here is None or n.id in self._runs_here]
        self.operators, self.metrics, self.consumers = {}, {}, {}
        self.input_wm, self.node_wm, self.ended = {}, {}, {}
        self.output_ended = set()
        self.result_wm = MIN_WATERMARK
        self._opened = []
        self.deferred = []
        self.frozen = set()
        here = {n.id for n in self.order}
        for node in self.order:
            op_cfg = {**cfg, "$internal.operator-uid": self.uids[node.id]}
            if self._subtask_in_config:  # a parallel worker's operators (part-file names, ...)
                op_cfg["subtask.index"] = str(self.subtask_index)
            ctx = OperatorContext(
                mode=self.graph.mode,
                config=op_cfg,
                time_zone=self.time_zone,
                subtask_index=self.subtask_index,
                parallelism=self.subtask_count,
                metrics=Metrics(),
                state=create_backend(op_cfg),
                checkpointing=self.checkpointing,
            )
            op = create_operator(node, ctx)
            op.input_changelog_modes = [self.graph.node(i).changelog_mode for i in node.inputs]
            self.operators[node.id] = op
            self.metrics[node.id] = ctx.metrics
            self.consumers.setdefault(node.id, [])
            self.input_wm[node.id] = [MIN_WATERMARK] * len(node.inputs)
            self.node_wm[node.id] = MIN_WATERMARK
            self.ended[node.id] = set()
        for node in self.graph.nodes:
            for idx, src in enumerate(node.inputs):
                if src not in here:
                    continue
                edge = self.transport.edge(src, node.id, idx)
                if edge is None and node.id not in here:
                    raise ValueError(f"edge {src} -> {node.id} leaves the task but the transport does not route it")
                self.consumers[src].append((node.id, idx, edge))

    def open(self) -> None:
        """Open every operator in topological order."""
        if not self._udf_task:
            udf_registry.task_started({k: str(v) for k, v in (self.graph.config or {}).items()})
            self._udf_task = True
        for node in self.order:
            op = self.operators[node.id]
            op.open()
            self._opened.append(op)

    def close(self, failed: bool) -> None:
        """Close the opened operators in reverse order and dispose of their state
        backends, whatever happens; a close error is raised (after all were closed)
        unless the task already failed (it must not mask the original error)."""
        error: BaseException | None = None
        for op in reversed(self._opened):
            try:
                op.close()
            except Exception as e:  # noqa: BLE001 - every operator gets closed
                error = error or e
        self._opened = []
        for op in self.operators.values():
            if op.ctx.state is not None:
                op.ctx.state.dispose()
        if self._udf_task:
            self._udf_task = False
            try:
                udf_registry.task_ended()  # Python functions' close() once no task uses them
            except Exception as e:  # noqa: BLE001 - reported like an operator's close error
                error = error or e
        if error is not None and not failed:
            raise error

    def check_checkpointable(self) -> None:
        """Refuse a job with checkpointing when an operator cannot snapshot its state."""
        for node in self.order:
            op = self.operators[node.id]
            if checkpointing_mode(op) is None:
                raise CheckpointingNotSupportedError(not_supported_message(op))

    def sources(self) -> list[int]:
        """The source nodes of the task (no inputs), topological order."""
        return [n.id for n in self.order if not n.inputs]

    # ------------------------------------------------------------------ input
    def poll_source(self, sid: int, active: list[int], batch_rows: int) -> bool:
        """Poll source `sid` once and push what it read; at its end, end its output and
        drop it from `active`. Whether anything happened."""
        t0 = time.perf_counter_ns()
        batch = self.operators[sid].poll(batch_rows)
        add_busy(self.metrics[sid], t0)
        if batch is None:
            active.remove(sid)
            self.end_output(sid, is_source=True)
            return True
        if batch.num_rows:
            self.deliver(sid, [batch], [])
            fault_point("batch")
            return True
        return False

    def push(self, cid: int, idx: int, batches: list[pa.RecordBatch], watermarks: list[int]) -> None:
        """Input `idx` of node `cid` receives these batches, then these watermarks."""
        op = self.operators[cid]
        cm = self.metrics[cid]
        for b in batches:
            cm.rows_in += b.num_rows
            cm.batches_in += 1
            out = Output()
            t0 = time.perf_counter_ns()
            op.process_batch(b, idx, out)
            add_busy(cm, t0)
            self.drain(cid, out)
        for wm in watermarks:
            wms = self.input_wm[cid]
            if wm > wms[idx]:
                wms[idx] = wm
            self.advance(cid)

    def end_input(self, cid: int, idx: int) -> None:
        """Input `idx` of node `cid` ended: `end_input` (unless it had ended before the
        snapshot this task restored, or another subtask emits the node's end-of-input
        results), then the node's output ends once all its inputs did."""
        ended = self.ended[cid]
        if idx not in ended and self.transport.ends_input_here(cid):
            out = Output(later_ok=True)
            t0 = time.perf_counter_ns()
            self.operators[cid].end_input(idx, out)
            add_busy(self.metrics[cid], t0)
            self.drain(cid, out)
            if out.later:
                self.deferred.append((cid, idx, out.later))
                if self.defer_output:  # the executor steps it (step_deferred)
                    return
                while self.step_deferred():  # now, a batch at a time
                    pass
                return
        self._input_ended(cid, idx)

    def _input_ended(self, cid: int, idx: int) -> None:
        ended = self.ended[cid]
        ended.add(idx)
        if len(ended) == len(self.graph.node(cid).inputs):
            self.end_output(cid)

    def step_deferred(self) -> bool:
        """Deliver the next batch an operator's `end_input` left for later
        (`Output.emit_later`), or, its batches all delivered, finish that end of input;
        False when nothing is deferred. The latest deferral goes first (depth-first, as
        everything else here)."""
        if not self.deferred:
            return False
        cid, idx, pending = self.deferred[-1]
        while pending:
            t0 = time.perf_counter_ns()
            batch = next(pending[0], None)
            add_busy(self.metrics[cid], t0)
            if batch is None:
                pending.pop(0)
                continue
            if batch.num_rows:
                self.deliver(cid, [batch], [])
            return True
        self.deferred.pop()
        self._input_ended(cid, idx)
        return True

    # ------------------------------------------------------------------ output
    def drain(self, nid: int, out: Output) -> None:
        batches, watermarks = out.drain()
        if batches or watermarks:
            self.deliver(nid, batches, watermarks)

    def deliver(self, nid: int, batches: list[pa.RecordBatch], watermarks: list[int]) -> None:
        """Hand what node `nid` emitted to its consumers (and the result to the transport)."""
        m = self.metrics[nid]
        is_result = nid == self.result_node
        if watermarks and is_result:
            self.result_wm = max(self.result_wm, *watermarks)
        for b in batches:
            m.rows_out += b.num_rows
            if is_result:
                self.transport.result(b)
        for cid, idx, edge in self.consumers[nid]:
            if edge is None:
                self.push(cid, idx, batches, watermarks)
            else:
                self.transport.send(edge, batches, watermarks)

    def end_output(self, nid: int, is_source: bool = False) -> None:
        """Node `nid` will produce nothing more: MAX_WATERMARK (streaming, from sources),
        then end of input on every consumer; consumers whose inputs all ended end too."""
        if nid in self.output_ended:
            return
        self.output_ended.add(nid)
        if is_source and self.graph.mode != BATCH:
            self.deliver(nid, [], [MAX_WATERMARK])
        for cid, idx, edge in self.consumers[nid]:
            if edge is None:
                self.end_input(cid, idx)
            else:
                self.transport.end(edge)

    # ------------------------------------------------------------------ time
    def advance(self, nid: int) -> None:
        """Recompute node `nid`'s watermark (min over its non-idle inputs) and fire
        `on_watermark` when it advanced."""
        wms = self.input_wm[nid]
        inputs = self.graph.node(nid).inputs
        active = [w for w, src in zip(wms, inputs, strict=True) if not self.is_idle(src)] if len(wms) > 1 else wms
        if not active:
            return
        combined = min(active)
        if combined > self.node_wm[nid]:
            self.node_wm[nid] = combined
            out = Output()
            t0 = time.perf_counter_ns()
            self.operators[nid].on_watermark(combined, out)
            add_busy(self.metrics[nid], t0)
            self.drain(nid, out)

    def is_idle(self, nid: int) -> bool:
        """Whether node `nid`'s output is idle: an operator that says so (a
        WatermarkAssigner past its idle timeout), or a node all of whose inputs are idle
        (ended inputs are never idle: they sent MAX_WATERMARK). Input from other tasks
        never counts as idle."""
        if self.transport.receives(nid):
            return False
        idle = self.operators[nid].is_idle()
        if idle is not None:
            return idle
        inputs = self.graph.node(nid).inputs
        return bool(inputs) and all(self.is_idle(i) for i in inputs)

    def check_idle(self) -> None:
        """While sources have nothing to read: let multi-input operators advance past
        inputs that went idle (`idle_timeout_ms` / `table.exec.source.idle-timeout`)."""
        for node in self.order:
            if len(node.inputs) > 1 and node.id not in self.frozen:
                self.advance(node.id)

    def fire_timers(self) -> None:
        """While sources are idle: operators may flush what they buffer (`on_timer`: the
        MiniBatchAssigner's latency bound)."""
        for node in self.order:
            if node.id in self.frozen:
                continue
            out = Output()
            self.operators[node.id].on_timer(out)
            self.drain(node.id, out)

    # ------------------------------------------------------------------ checkpoints
    def drain_sources(self) -> None:
        """STOP ... WITH SAVEPOINT WITH DRAIN (Flink's `--drain`): every source whose output
        goes on sends MAX_WATERMARK, the end of event time, so every window and timer
        fires before the savepoint's barrier."""
        for sid in self.sources():
            if sid not in self.output_ended:
                self.deliver(sid, [], [MAX_WATERMARK])

    def flush_before_barrier(self, nodes: Iterable[int], checkpoint_id: int) -> None:
        """Every node flushes what it buffers (`prepare_snapshot_pre_barrier`): it is
        delivered before the barrier."""
        for nid in nodes:
            out = Output()
            self.operators[nid].prepare_snapshot_pre_barrier(checkpoint_id, out)
            self.drain(nid, out)

    def executor_state(self, nid: int) -> dict[str, Any]:
        """The runner's bookkeeping of node `nid` a snapshot records next to its state."""
        return {"input_wm": list(self.input_wm[nid]), "node_wm": self.node_wm[nid], "ended": sorted(self.ended[nid])}

    def restore_executor_state(self, nid: int, state: dict[str, Any]) -> None:
        """Put back what `executor_state` recorded (ignored when the inputs changed)."""
        if len(state.get("input_wm", [])) == len(self.graph.node(nid).inputs):
            ended = {int(i) for i in state.get("ended", [])}
            wms = [int(w) for w in state["input_wm"]]
            # MAX_WATERMARK on an input that did not end: a drained savepoint's end of event
            # time, forgotten (Operator.forget_drained_watermark) so the restored run's own
            # watermarks advance the node again
            drained = [i for i, w in enumerate(wms) if w == MAX_WATERMARK and i not in ended]
            for i in drained:
                wms[i] = MIN_WATERMARK
            self.input_wm[nid] = wms
            node_wm = int(state.get("node_wm", MIN_WATERMARK))
            self.node_wm[nid] = MIN_WATERMARK if drained else node_wm
            self.ended[nid] = ended


def topological(graph: JobGraph) -> list[Node]:
    """The graph's nodes, inputs before consumers (a cycle is an error)."""
    nodes = {n.id: n for n in graph.nodes}
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

    for n in graph.nodes:
        visit(n.id, ())
    return order


def add_busy(m: Metrics, t0: int) -> None:
    """Busy time (ns) of an operator call, for --stats (`Metrics.extra["busy_ns"]`)."""
    m.extra["busy_ns"] = m.extra.get("busy_ns", 0) + time.perf_counter_ns() - t0
