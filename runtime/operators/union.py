"""Union (ALL) and Exchange: pass-through operators in the local executor."""

from __future__ import annotations

import pyarrow as pa

from runtime.batch import ROW_KIND, ROW_WATERMARK, data_width
from runtime.operators._common import make_batch, system_column
from runtime.operators.base import Operator, Output, register_operator


class _PassThrough(Operator):
    """Forwards every batch, renamed to the node's schema, system columns kept. The
    executor combines the inputs' watermarks (minimum) before `on_watermark`."""

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        n = data_width(batch)
        out.emit(
            make_batch(
                self.node, batch.columns[:n], system_column(batch, ROW_KIND), system_column(batch, ROW_WATERMARK)
            )
        )


@register_operator("Union")
class UnionOperator(_PassThrough):
    """UNION ALL of n inputs with the same schema."""


@register_operator("Exchange")
class ExchangeOperator(_PassThrough):
    """Hash / single / forward distribution: one subtask here, so a pass-through."""
