"""Union (ALL) in STREAMING: its watermark is the minimum of its inputs', and a row's
`__wm` leaving it is the union's watermark when the row passed (not its own input's), so
a window, OVER, MATCH or interval join after a union decides lateness as Flink's operator
after a multi-input gate does."""

from __future__ import annotations

from types import ModuleType

import numpy as np
import pyarrow as pa

from runtime.batch import MIN_WATERMARK, ROW_WATERMARK, with_system_columns
from runtime.graph import STREAMING
from runtime.operators.base import OperatorContext, Output, create_operator
from runtime.types import BIGINT, Field


def _union(kit: ModuleType):
    node = kit.node(3, "Union", (1, 2), [Field("x", BIGINT())])
    op = create_operator(node, OperatorContext(mode=STREAMING, config={}))
    op.open()
    return op


def _batch(values: list[int], wms: list[int] | None) -> pa.RecordBatch:
    data = pa.RecordBatch.from_arrays([pa.array(values, pa.int64())], names=["x"])
    kinds = np.zeros(len(values), dtype=np.int8)
    return with_system_columns(data, kinds, None if wms is None else np.array(wms, dtype=np.int64))


def _wm(out: Output) -> list[int] | None:
    (b,) = out.batches
    i = b.schema.get_field_index(ROW_WATERMARK)
    return None if i < 0 else b.column(i).to_pylist()


def test_row_watermark_is_the_unions_not_its_inputs(kit: ModuleType) -> None:
    op = _union(kit)
    out = Output()
    # Before every input has a watermark the union's is MIN: nothing is late after it.
    op.process_batch(_batch([1, 2], [100, 200]), 0, out)
    assert _wm(out) == [MIN_WATERMARK, MIN_WATERMARK]
    op.on_watermark(50, out)  # min(input 0 at 200, input 1 at 50)
    assert out.watermarks == [50]
    out = Output()
    op.process_batch(_batch([3, 4], [40, 300]), 0, out)
    assert _wm(out) == [40, 50]  # the row's own (smaller) or the union's


def test_rows_without_watermark_get_the_unions(kit: ModuleType) -> None:
    op = _union(kit)
    out = Output()
    op.process_batch(_batch([1], None), 1, out)
    assert _wm(out) is None  # no watermark anywhere yet: left out, as before the union
    op.on_watermark(70, out)
    out = Output()
    op.process_batch(_batch([2, 3], None), 1, out)
    assert _wm(out) == [70, 70]
