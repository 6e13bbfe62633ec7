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
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa

from runtime.batch import MAX_WATERMARK, MIN_WATERMARK, ROW_KIND, data_width
from runtime.graph import BATCH, JobGraph, Node
from runtime.operators.base import Metrics, Operator, OperatorContext, Output, create_operator
from runtime.state import create_backend

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

    def _build(self) -> None:
        cfg = dict(self.graph.config or {})
        self._order = self._topological()
        for node in self._order:
            ctx = OperatorContext(
                mode=self.graph.mode,
                config=cfg,
                time_zone=self.time_zone,
                parallelism=1,
                metrics=Metrics(),
                state=create_backend(cfg),
            )
            op = create_operator(node, ctx)
            if hasattr(op, "input_changelog_modes"):
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
        self._build()
        opened: list[Operator] = []
        failed = False
        try:
            for node in self._order:
                op = self.operators[node.id]
                op.open()
                opened.append(op)
            sources = [n.id for n in self._order if not n.inputs]
            active = list(sources)
            while active:
                if self._stopped():
                    return
                progressed = False
                for sid in list(active):
                    batch = self.operators[sid].poll(self.batch_rows)  # type: ignore[attr-defined]
                    if batch is None:
                        active.remove(sid)
                        self._end_output(sid, is_source=True)
                        progressed = True
                    elif batch.num_rows:
                        self._deliver(sid, [batch], [])
                        progressed = True
                    yield from self._take_results()
                    if self._stopped():
                        return
                if not progressed and active:
                    self._check_idle()
                    yield from self._take_results()
                    if self.stop_event is not None:
                        self.stop_event.wait(IDLE_POLL_SECONDS)
                    else:
                        time.sleep(IDLE_POLL_SECONDS)
            yield from self._take_results()
        except BaseException:
            failed = True
            raise
        finally:
            for op in reversed(opened):
                try:
                    op.close()
                except Exception:
                    if not failed:
                        raise

    @property
    def current_watermark(self) -> int | None:
        """The latest watermark the result node emitted (epoch ms; MAX_WATERMARK once its
        input ended), or None before the first one: the shell's live table view shows it."""
        return None if self._result_wm == MIN_WATERMARK else self._result_wm

    def _stopped(self) -> bool:
        return self.stop_event is not None and self.stop_event.is_set()

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
            op = self.operators[cid]
            cm = self.metrics[cid]
            for b in batches:
                cm.rows_in += b.num_rows
                cm.batches_in += 1
                out = Output()
                op.process_batch(b, idx, out)
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
            self.operators[nid].on_watermark(combined, out)
            self._drain(nid, out)

    def _is_idle(self, nid: int) -> bool:
        """Whether node `nid`'s output is idle: a WatermarkAssigner past its idle timeout,
        or a node all of whose inputs are idle (ended inputs are never idle: they sent
        MAX_WATERMARK)."""
        op = self.operators[nid]
        check = getattr(op, "is_idle", None)
        if check is not None:
            return bool(check())
        inputs = self.graph.node(nid).inputs
        return bool(inputs) and all(self._is_idle(i) for i in inputs)

    def _check_idle(self) -> None:
        """While sources have nothing to read: let multi-input operators advance past
        inputs that went idle (`idle_timeout_ms` / `table.exec.source.idle-timeout`)."""
        for node in self._order:
            if len(node.inputs) > 1:
                self._advance(node.id)

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
            self.operators[cid].end_input(idx, out)
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


def run_to_table(graph: JobGraph, stop_event: threading.Event | None = None) -> pa.Table | None:
    """Convenience: run a job and collect the result batches into one table."""
    batches = list(LocalExecutor(graph, stop_event).run())
    if not batches:
        return None
    return pa.Table.from_batches(batches)
