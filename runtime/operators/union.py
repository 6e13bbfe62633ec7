"""Union (ALL) and Exchange: pass-through operators in the local executor (a Union also
carries its combined watermark into its rows' `__wm`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.batch import MIN_WATERMARK, ROW_KIND, ROW_WATERMARK, data_width
from runtime.frozen import frozen_dataclass
from runtime.operators._common import make_batch, system_column
from runtime.operators.base import Operator, Output
from runtime.operators.spec import (
    ANY,
    OperatorParams,
    OperatorSpec,
    PlanView,
    SparkCapability,
    register_spec,
)

# Exchange distributions: rows hashed on `keys` to key groups, all rows to one subtask,
# each subtask keeps its own rows, or batches dealt round-robin to the subtasks (Flink's
# rebalance, in front of a sink whose 'sink.parallelism' differs from its input's).
HASH = "hash"
SINGLE_DISTRIBUTION = "single"
FORWARD = "forward"
REBALANCE = "rebalance"


def rebalance_slices(num_rows: int, targets: int, turn: int) -> list[tuple[int, int, int]]:
    """Flink's rebalance over `targets` subtasks, a batch at a time: (target, offset, length)
    of contiguous, near-equal slices of a `num_rows` batch, the first going to target `turn`
    modulo `targets` (callers advance `turn` per batch, so one-row batches rotate too)."""
    k = max(1, min(targets, num_rows))
    bounds = [num_rows * i // k for i in range(k + 1)]
    return [((turn + i) % targets, bounds[i], bounds[i + 1] - bounds[i]) for i in range(k)]


@frozen_dataclass
class UnionParams(OperatorParams):
    """UNION ALL of the inputs (same schema); no parameters."""


@frozen_dataclass
class ExchangeParams(OperatorParams):
    """How rows are distributed to the consumer's subtasks: `distribution` is "hash" (on
    the input columns `keys`), "single", "forward" or "rebalance". `parallelism`: the
    consumer's own parallelism when it has one (a sink's 'sink.parallelism'), else None
    (the job's)."""

    distribution: str
    keys: tuple[int, ...] = ()
    parallelism: int | None = None

    @staticmethod
    def on(keys: Sequence[int]) -> ExchangeParams:
        """Hash on `keys`, or everything to one subtask when there are none."""
        return ExchangeParams(HASH if keys else SINGLE_DISTRIBUTION, tuple(keys))


class _PassThrough(Operator):
    """Stateless. Forwards every batch, renamed to the node's schema, system columns kept. The
    executor combines the inputs' watermarks (minimum) before `on_watermark`."""

    checkpointing = "stateless"

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        n = data_width(batch)
        out.emit(
            make_batch(
                self.node, batch.columns[:n], system_column(batch, ROW_KIND), system_column(batch, ROW_WATERMARK)
            )
        )


class UnionOperator(_PassThrough):
    """UNION ALL of n inputs with the same schema.

    Its watermark is the minimum of its inputs' (the runner combines them before
    `on_watermark`, as Flink's multi-input gate does). A row's `__wm` is the watermark in
    effect where the row is: passing the union, it becomes the union's watermark then,
    the smaller of the row's own (its input's) and the union's current one, so a row of an
    input that is ahead of the others is not late downstream only because its own input
    moved on (a row without `__wm`, from an input without watermarks, gets the union's)."""

    def open(self) -> None:
        self.watermark = MIN_WATERMARK

    def on_watermark(self, watermark: int, out: Output) -> None:
        self.watermark = watermark
        out.emit_watermark(watermark)

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        n = data_width(batch)
        wms = system_column(batch, ROW_WATERMARK)
        if wms is not None:
            wms = pc.min_element_wise(wms, pa.scalar(self.watermark, pa.int64()))
        elif self.watermark > MIN_WATERMARK:
            wms = pa.array(np.full(batch.num_rows, self.watermark, dtype=np.int64))
        out.emit(make_batch(self.node, batch.columns[:n], system_column(batch, ROW_KIND), wms))


class ExchangeOperator(_PassThrough):
    """Hash / single / forward distribution: one subtask here, so a pass-through."""


class UnionSpec(OperatorSpec[UnionParams]):
    """Emits every row kind any input emits."""

    name = "Union"
    forwards_update_before = True
    params_type = UnionParams
    operator_class = UnionOperator
    parallel = True
    rescalable = True
    spark = SparkCapability(True, True, "UNION ALL (`unionByName`).")

    def changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str:
        kinds: set[str] = set()
        for i in inputs:
            kinds |= set(i.changelog_mode.split(","))
        return ",".join(k for k in ("I", "UB", "UA", "D") if k in kinds)

    def explain(self, node: PlanView) -> list[str]:
        return ["all=[true]", f"union=[{', '.join(f.name for f in node.fields)}]"]


class ExchangeSpec(OperatorSpec[ExchangeParams]):
    """The only place data distribution is decided: the planner puts one in front of every
    operator whose `input_distribution` is not ANY."""

    name = "Exchange"
    params_type = ExchangeParams
    operator_class = ExchangeOperator
    forwards_changelog = True
    input_distribution = ANY
    parallel = True
    rescalable = True
    spark = SparkCapability(True, True, "Spark plans its own shuffles: pass-through.")

    def explain(self, node: PlanView) -> list[str]:
        p = self.params(node)
        in_names = [f.name for f in node.inputs[0].fields]
        dist = f"hash[{', '.join(in_names[k] for k in p.keys)}]" if p.distribution == HASH else p.distribution
        return [f"distribution=[{dist}]"] + ([] if p.parallelism is None else [f"parallelism=[{p.parallelism}]"])


UNION = register_spec(UnionSpec())
EXCHANGE = register_spec(ExchangeSpec())
