"""ReplicateRows: the last step of INTERSECT ALL / EXCEPT ALL (Flink's `$REPLICATE_ROWS$`
table function): each input row carries a multiplicity and is emitted that many times,
with its row kind, so a -U/+U of a count becomes that many -U/+U rows."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from runtime.batch import ROW_KIND, data_columns, row_kinds
from runtime.frozen import frozen_dataclass
from runtime.operators._common import make_batch, system_column
from runtime.operators.base import Operator, Output
from runtime.operators.spec import OperatorParams, OperatorSpec, PlanView, SparkCapability, register_spec


@frozen_dataclass
class ReplicateRowsParams(OperatorParams):
    """Emit input columns `columns` of each row as many times as column `count_index` says."""

    count_index: int
    columns: tuple[int, ...]


class ReplicateRowsOperator(Operator):
    """Vectorized: one `take` with the row indices repeated by their counts."""

    checkpointing = "stateless"

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        data = data_columns(batch)
        if data.num_rows == 0:
            return
        p = ReplicateRowsParams.of(self.node)
        counts = data.column(p.count_index).to_numpy(zero_copy_only=False)
        counts = np.nan_to_num(counts.astype(np.float64), nan=0.0).astype(np.int64)
        counts = np.maximum(counts, 0)
        idx = np.repeat(np.arange(data.num_rows, dtype=np.int64), counts)
        if len(idx) == 0:
            return
        take = pa.array(idx)
        cols = [data.column(i).take(take) for i in p.columns]
        kinds = row_kinds(batch)[idx] if system_column(batch, ROW_KIND) is not None else None
        out.emit(make_batch(self.node, cols, kinds))


class ReplicateRowsSpec(OperatorSpec[ReplicateRowsParams]):
    """Stateless and row-wise; keeps each row's kind (streaming: forwards the changelog)."""

    name = "ReplicateRows"
    forwards_update_before = True  # row-wise: each row keeps its kind
    params_type = ReplicateRowsParams
    operator_class = ReplicateRowsOperator
    parallel = True
    rescalable = True
    spark = SparkCapability(False, False, "Not mapped yet.")

    def explain(self, node: PlanView) -> list[str]:
        p = self.params(node)
        names = [f.name for f in node.inputs[0].fields]
        return [f"count=[{names[p.count_index]}]", f"select=[{', '.join(names[i] for i in p.columns)}]"]


REPLICATE_ROWS = register_spec(ReplicateRowsSpec())
