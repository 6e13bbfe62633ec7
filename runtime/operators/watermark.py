"""WatermarkAssigner: per-row watermarks from the table's WATERMARK expression."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.batch import MAX_WATERMARK, MIN_WATERMARK, ROW_KIND, ROW_SPLIT, data_columns
from runtime.config.core import SOURCE_IDLE_TIMEOUT
from runtime.expr.evaluator import evaluate
from runtime.expr.ir import Expr
from runtime.graph import Node
from runtime.operators._common import eval_context, make_batch, system_column
from runtime.operators.base import Operator, OperatorContext, Output
from runtime.operators.spec import OperatorParams, OperatorSpec, PlanView, SparkCapability, register_spec
from runtime.plan_text import format_expr


@dataclass(frozen=True)
class WatermarkAssignerParams(OperatorParams):
    """The rowtime column `rowtime_index`, the WATERMARK expression over the input row, and
    the source idle timeout (ms; None: `table.exec.source.idle-timeout`)."""

    rowtime_index: int
    watermark: Expr
    idle_timeout_ms: int | None = None


def to_epoch_ms(array: pa.Array) -> np.ndarray:
    """Timestamps (any unit, with or without zone: both hold the instant / wall clock as
    epoch-based integers) as float64 epoch milliseconds, NaN for NULL."""
    if pa.types.is_timestamp(array.type):
        unit = array.type.unit
        ints = array.cast(pa.timestamp(unit)).cast(pa.int64())
        div = {"s": 1e-3, "ms": 1, "us": 1e3, "ns": 1e6}[unit]
        vals = ints.to_numpy(zero_copy_only=False).astype(np.float64)
        vals = np.floor(vals / div) if div != 1 else vals
    else:
        vals = array.cast(pa.int64()).to_numpy(zero_copy_only=False).astype(np.float64)
    if array.null_count:
        vals[~pc.is_valid(array).to_numpy(zero_copy_only=False)] = np.nan
    return vals


class WatermarkAssignerOperator(Operator):
    """Adds `__wm` = the watermark before each row (running maximum of the watermark
    expression, NULL rowtimes ignored) and emits the batch's last watermark when it
    advanced. This is Flink with `pipeline.auto-watermark-interval` = 0 (a watermark after
    every record), computed for the whole batch with one `np.maximum.accumulate`.

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
    state_attributes = ("current",)
    state_merge = {"current": "min"}  # restore with another parallelism: the lowest watermark

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        params = WatermarkAssignerParams.of(node)
        self.expr = params.watermark
        self.idle_timeout_ms = params.idle_timeout_ms or SOURCE_IDLE_TIMEOUT.get(ctx.config) or None
        self.current = MIN_WATERMARK
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
        cand = to_epoch_ms(evaluate(self.expr, data, eval_context(self.ctx, data.num_rows)))
        cand = np.where(np.isnan(cand), -np.inf, cand)
        split = system_column(batch, ROW_SPLIT)
        if split is not None:
            self._per_split(data, kinds, split, cand, out)
            return
        running = np.maximum.accumulate(np.concatenate([[float(self.current)], cand]))
        before = running[:-1]
        wms = np.where(np.isinf(before), MIN_WATERMARK, before).astype(np.int64)
        wms[0] = self.current
        if not np.isinf(running[-1]):
            last = int(running[-1])
            if last > self.current:
                self.current = last
                out.emit(make_batch(self.node, data.columns, kinds, wms))
                out.emit_watermark(last)
                return
        out.emit(make_batch(self.node, data.columns, kinds, wms))

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
        the watermark back."""
        if self.split_wm and not self.ctx.is_batch and self.current < MAX_WATERMARK:
            self._advance(out)

    def on_watermark(self, watermark: int, out: Output) -> None:
        if watermark == MAX_WATERMARK and self.current < MAX_WATERMARK:
            self.current = MAX_WATERMARK
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
