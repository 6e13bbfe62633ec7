"""A set of aggregate calls evaluated together over keyed slots, plus a row counter.

Used by GroupAggregate (incremental, keyed by the grouping keys) and WindowAggregate
(keyed by window + grouping keys). The row counter (rows in minus rows retracted) tells
whether a key still exists, as Flink's GroupAggFunction record counter does.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.aggregates.accumulators import Accumulator
from runtime.checkpoint.format import register_state_type
from runtime.plan_params import AggCallParams


@register_state_type
class AggregateSet:
    """Accumulators for `calls` (aggregate calls) over the columns of input batches."""

    def __init__(self, calls: Sequence[AggCallParams], input_types: list[pa.DataType], retract: bool) -> None:
        # Start-up: the statistical aggregates and Python UDAFs load with the first aggregate.
        from runtime.aggregates.factory import create_accumulator

        self.calls = list(calls)
        self.accs: list[Accumulator] = [
            create_accumulator(c, [input_types[i] for i in c.args], retract) for c in self.calls
        ]
        self.row_count = np.zeros(0, dtype=np.int64)

    def grow(self, n: int) -> None:
        if len(self.row_count) < n:
            size = max(n, 2 * len(self.row_count), 16)
            rc = np.zeros(size, dtype=np.int64)
            rc[: len(self.row_count)] = self.row_count
            self.row_count = rc
        for a in self.accs:
            a.grow(n)

    def fold(self, slots: np.ndarray, signs: np.ndarray, batch: pa.RecordBatch) -> None:
        """Add (sign +1) or retract (-1) every row of `batch` into its slot."""
        if not len(slots):
            return
        self.grow(int(slots.max()) + 1)
        np.add.at(self.row_count, slots, signs)
        for call, acc in zip(self.calls, self.accs, strict=True):
            args = [batch.column(i) for i in call.args]
            s, g = slots, signs
            f = call.filter
            if f is not None:
                mask = pc.fill_null(batch.column(f), False)
                m = mask.to_numpy(zero_copy_only=False).astype(bool)
                s, g = slots[m], signs[m]
                args = [a.filter(mask) for a in args]
            acc.update(s, g, args)

    def results(self, slots: np.ndarray) -> list[pa.Array]:
        return [acc.results(slots) for acc in self.accs]

    def reset(self, slots: np.ndarray) -> None:
        if len(slots):
            self.row_count[slots] = 0
            for acc in self.accs:
                acc.reset(slots)

    def empty_results(self) -> list[pa.Array]:
        return empty_results(self.calls)


def empty_results(calls: Sequence[AggCallParams]) -> list[pa.Array]:
    """The values of every aggregate over no rows (batch global aggregate on empty input:
    COUNT and SUM0 0, everything else NULL)."""
    out = []
    for call in calls:
        t = call.type.to_arrow()
        if call.name.lower() in ("count", "sum0"):
            out.append(pa.array([0], type=t))
        else:
            out.append(pa.nulls(1, type=t))
    return out
