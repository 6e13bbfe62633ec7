"""WatermarkAssigner: per-row watermarks from the table's WATERMARK expression."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.batch import MAX_WATERMARK, MIN_WATERMARK, ROW_KIND, ROW_SPLIT, data_columns
from runtime.config.core import AUTO_WATERMARK_INTERVAL, SOURCE_IDLE_TIMEOUT
from runtime.expr.evaluator import evaluate
from runtime.expr.ir import Expr
from runtime.frozen import frozen_dataclass
from runtime.graph import Node
from runtime.operators._common import eval_context, make_batch, system_column
from runtime.operators.base import Operator, OperatorContext, Output
from runtime.operators.spec import OperatorParams, OperatorSpec, PlanView, SparkCapability, register_spec
from runtime.plan_text import format_expr


@frozen_dataclass
class WatermarkAssignerParams(OperatorParams):
    """The rowtime column `rowtime_index`, the WATERMARK expression over the input row, and
    the source idle timeout (ms; None: `table.exec.source.idle-timeout`)."""

    rowtime_index: int
    watermark: Expr
    idle_timeout_ms: int | None = None


def epoch_ms(array: pa.Array) -> np.ndarray:
    """Timestamps (any unit, with or without zone) or integers as int64 epoch milliseconds
    (floored), MIN_WATERMARK for NULL: the integer form the assigner works in (a NULL
    candidate never advances a running maximum)."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    ints = array.view(pa.int64()) if pa.types.is_timestamp(array.type) else array.cast(pa.int64())
    vals = (ints.fill_null(0) if array.null_count else ints).to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    unit = array.type.unit if pa.types.is_timestamp(array.type) else "ms"
    if unit == "s":
        vals = vals * 1000
    elif unit != "ms":
        vals = np.floor_divide(vals, 1000 if unit == "us" else 1_000_000)
    if array.null_count:
        vals = np.where(pc.is_valid(array).to_numpy(zero_copy_only=False), vals, MIN_WATERMARK)
    return vals


# Emissions `emitted_before` follows one by one (a binary search each) before it switches to
# pointer doubling over every row (about the cost of a few thousand searches): a batch of
# ordered input emits a few dozen at most.
_CHAIN_STEPS = 1024


def emitted_before(after: np.ndarray, last: Any, interval: int) -> tuple[np.ndarray, Any]:
    """Flink's eager watermark emission over one batch, in input order.

    `after[i]` is the candidate watermark after row i (a running maximum: non-decreasing;
    -inf / MIN_WATERMARK while there is none) and `last` the watermark emitted before the
    batch. Flink's WatermarkAssigner forwards a row, then emits its current watermark when
    it exceeds the last emitted one by more than `interval` (ms; 0: whenever it advanced).
    Returns the watermark each row sees (the last one emitted before it, in `after`'s
    dtype) and the last one emitted after the batch. The emissions form a chain (each is
    the first row whose candidate exceeds the previous emission + interval): its first
    links are found by a binary search each, a long chain by pointer doubling over all
    rows, so the cost is O(n) plus O(n log n) only for a batch with many emissions."""
    n = len(after)
    if n == 0:
        return after[:0].copy(), last
    if interval <= 0:
        before = np.empty_like(after)
        before[0] = last
        np.maximum(after[:-1], last, out=before[1:])
        return before, max(last, after[-1].item())
    chain: list[int] = []
    nxt_row = int(np.searchsorted(after, last + interval, side="right"))
    while nxt_row < n and len(chain) < _CHAIN_STEPS:
        chain.append(nxt_row)
        nxt_row = int(np.searchsorted(after, after[nxt_row].item() + interval, side="right"))
    emits = np.array(chain, dtype=np.int64)
    if nxt_row < n:  # a long chain: the rest by pointer doubling from `nxt_row`
        emitted = np.zeros(n + 1, dtype=bool)
        # nxt[j]: the next emission after one at row j (n: none); n maps to itself
        nxt = np.append(np.searchsorted(after, after + interval, side="right"), n)
        members = np.array([nxt_row])
        emitted[nxt_row] = True
        while True:  # members holds the chain's first 2^k emissions; jump = nxt^(2^k)
            ahead = nxt[members]
            ahead = ahead[ahead < n]
            if len(ahead) == 0:
                break
            emitted[ahead] = True
            members = np.concatenate([members, ahead])
            nxt = nxt[nxt]
        emits = np.concatenate([emits, np.flatnonzero(emitted[:n])])
    if len(emits) == 0:
        return np.full(n, last, dtype=after.dtype), last
    # row i sees `last` up to the first emission's row, then each emission up to the next's
    values = np.concatenate([np.array([last], dtype=after.dtype), after[emits]])
    counts = np.diff(np.concatenate([[0], emits + 1, [n]]))
    return np.repeat(values, counts), values[-1].item()


class WatermarkAssignerOperator(Operator):
    """Adds `__wm` = the watermark before each row (the last watermark emitted before it,
    from the running maximum of the watermark expression, NULL rowtimes ignored) and emits
    the batch's last watermark when it advanced.

    Emission follows Flink's WatermarkAssignerOperator with
    `pipeline.auto-watermark-interval` = I: after forwarding a row, the current watermark
    is emitted when it exceeds the last emitted one by more than I (I = 0: a watermark after
    every record), computed for the whole batch by `emitted_before`. Flink also emits the
    current watermark every I ms of wall clock; here that periodic emission happens only
    while the inputs are idle (`on_timer`), so a bounded input gives the same result
    whatever the batch size or machine speed (it is the run of Flink whose periodic timer
    did not fire while records were flowing), and an unbounded one still makes progress.

    Upstream watermarks are ignored except MAX_WATERMARK (end of input), like Flink's
    WatermarkAssignerOperator. `idle_timeout_ms`: when no row arrived for that long (wall
    clock; default `table.exec.source.idle-timeout`), `is_idle()` says so and the local
    executor stops letting this input hold back the minimum of a multi-input operator.
    In BATCH mode rows get no `__wm` and no watermark is emitted.

    Per-split watermarks (Flink's per-partition watermarks of the Kafka source): when the
    batches carry `__split` (runtime/batch.py), one watermark is kept per split and the
    emitted one is their minimum; a split that produced nothing for `idle_timeout_ms` is
    left out of the minimum until it produces again, and a split that has produced nothing
    yet holds it back at MIN (unless idle). A row's `__wm` is that minimum before it. Only
    the combined watermark is checkpointed (a restored split starts again from MIN; the
    emitted watermark never goes back).
    """

    checkpointing = "generic"
    state_attributes = ("current", "pending")
    watermark_attributes = ("current", "pending")
    # restore with another parallelism: the lowest watermark
    state_merge = {"current": "min", "pending": "min"}

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        params = WatermarkAssignerParams.of(node)
        self.expr = params.watermark
        self.idle_timeout_ms = params.idle_timeout_ms or SOURCE_IDLE_TIMEOUT.get(ctx.config) or None
        self.interval_ms = int(AUTO_WATERMARK_INTERVAL.get(ctx.config) or 0)
        self.current = MIN_WATERMARK  # the last watermark emitted
        self.pending = MIN_WATERMARK  # the largest candidate seen (> current: not emitted yet)
        self.last_periodic = time.monotonic()
        self.last_row_time = time.monotonic()
        self.idle = False
        # per-split watermarks: split -> its watermark (ms, MIN before any row) / last row time
        self.split_wm: dict[str, int] = {}
        self.split_seen: dict[str, float] = {}

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        data = data_columns(batch)
        kinds = system_column(batch, ROW_KIND)
        if self.ctx.is_batch:
            out.emit(make_batch(self.node, data.columns, kinds))
            return
        self.last_row_time = time.monotonic()
        self.idle = False
        ms = epoch_ms(evaluate(self.expr, data, eval_context(self.ctx, data.num_rows)))
        split = system_column(batch, ROW_SPLIT)
        if split is not None:
            cand = np.where(ms == MIN_WATERMARK, -np.inf, ms.astype(np.float64))
            self._per_split(data, kinds, split, cand, out)
            return
        after = np.maximum(ms, self.pending)
        if len(after) > 1 and not (after[1:] >= after[:-1]).all():  # ordered input needs no scan
            np.maximum.accumulate(after, out=after)
        self.pending = max(self.pending, int(after[-1]))
        wms, last = emitted_before(after, self.current, self.interval_ms)
        out.emit(make_batch(self.node, data.columns, kinds, wms))
        if int(last) > self.current:
            self.current = int(last)
            out.emit_watermark(self.current)

    def _per_split(
        self, data: pa.RecordBatch, kinds: pa.Array | None, split: pa.Array, cand: np.ndarray, out: Output
    ) -> None:
        """`cand` are the rows' watermark candidates; all rows are of one split."""
        assert isinstance(split, pa.DictionaryArray)
        names = split.dictionary.to_pylist()
        now = self.last_row_time
        self._register(names, now)
        if data.num_rows == 0:
            self._advance(out)
            return
        name = names[split.indices[0].as_py()]
        self.split_seen[name] = now
        running = np.maximum.accumulate(np.concatenate([[float(self.split_wm[name])], cand]))
        others = self._combined(exclude=name, now=now)
        before = np.minimum(running[:-1], float(others))
        wms = np.maximum(np.where(np.isinf(before), MIN_WATERMARK, before), float(self.current)).astype(np.int64)
        if not np.isinf(running[-1]):
            self.split_wm[name] = max(self.split_wm[name], int(running[-1]))
        out.emit(make_batch(self.node, data.columns, kinds, wms))
        self._advance(out)

    def _register(self, names: list[str], now: float) -> None:
        """The splits the source reads now: new ones start at MIN, finished ones are dropped."""
        if len(names) != len(self.split_wm) or any(n not in self.split_wm for n in names):
            known = set(names)
            for n in [n for n in self.split_wm if n not in known]:
                del self.split_wm[n], self.split_seen[n]
            for n in names:
                if n not in self.split_wm:
                    self.split_wm[n] = MIN_WATERMARK
                    self.split_seen[n] = now

    def _combined(self, exclude: str | None, now: float) -> int | float:
        """Minimum watermark of the active (not idle) splits other than `exclude`; +inf if none.

        When every split is idle (`exclude` None), the answer is what Flink's combined
        watermark last became: the minimum of the splits that went idle last, since each
        split going idle updated it over the splits still active (a split that produced
        rows counts as active after one that was only assigned at the same moment)."""
        timeout = self.idle_timeout_ms
        active = [
            w
            for n, w in self.split_wm.items()
            if n != exclude and not (timeout and (now - self.split_seen[n]) * 1000 >= int(timeout))
        ]
        if active:
            return min(active)
        if exclude is not None or not self.split_wm:
            return float("inf")
        last = max(self._activity(n) for n in self.split_wm)
        return min(w for n, w in self.split_wm.items() if self._activity(n) == last)

    def _activity(self, name: str) -> tuple[float, bool]:
        return self.split_seen[name], self.split_wm[name] != MIN_WATERMARK

    def _advance(self, out: Output) -> None:
        """Emit the minimum over the active splits when it advanced."""
        combined = self._combined(None, time.monotonic())
        if combined != float("inf") and int(combined) > self.current:
            self.current = int(combined)
            out.emit_watermark(self.current)

    def on_timer(self, out: Output) -> None:
        """While the sources have nothing to read: a split that went idle no longer holds
        the watermark back, and the periodic emission (every `pipeline.auto-watermark-interval`
        of wall clock) releases a watermark the eager rule held back."""
        if self.ctx.is_batch or self.current >= MAX_WATERMARK:
            return
        if self.split_wm:
            self._advance(out)
            return
        now = time.monotonic()
        if self.pending > self.current and (now - self.last_periodic) * 1000 >= self.interval_ms:
            self.last_periodic = now
            self.current = self.pending
            out.emit_watermark(self.current)

    def on_watermark(self, watermark: int, out: Output) -> None:
        if watermark == MAX_WATERMARK and self.current < MAX_WATERMARK:
            self.current = self.pending = MAX_WATERMARK
            out.emit_watermark(MAX_WATERMARK)

    def is_idle(self) -> bool:
        """Whether this input has been idle longer than `idle_timeout_ms` (never after it
        ended: MAX_WATERMARK already released every window)."""
        if not self.idle_timeout_ms or self.current == MAX_WATERMARK:
            return False
        return (time.monotonic() - self.last_row_time) * 1000 >= int(self.idle_timeout_ms)


class WatermarkAssignerSpec(OperatorSpec[WatermarkAssignerParams]):
    """Per split, as in Flink: runs on every subtask; forwards the changelog."""

    name = "WatermarkAssigner"
    params_type = WatermarkAssignerParams
    operator_class = WatermarkAssignerOperator
    forwards_changelog = True
    parallel = True
    rescalable = True
    spark = SparkCapability(
        True,
        True,
        "Streaming: this operator stamps each row with the watermark before it (Flink's per-record lateness, in "
        "the order one Spark task reads the input), then `withWatermark` (WATERMARK `ts - INTERVAL ...` only) "
        "drives the timers; the end of a bounded input fires every open window as Flink does. An input Spark "
        "splits into several partitions with rows Flink drops as late is refused at start. Ignored in batch.",
    )

    def explain(self, node: PlanView) -> list[str]:
        p = self.params(node)
        in_names = [f.name for f in node.inputs[0].fields]
        parts = [f"rowtime=[{in_names[p.rowtime_index]}]", f"watermark=[{format_expr(p.watermark, in_names)}]"]
        if p.idle_timeout_ms:
            parts.append(f"idleTimeout=[{p.idle_timeout_ms} ms]")
        return parts


WATERMARK_ASSIGNER = register_spec(WatermarkAssignerSpec())
